"""The face checks what a Python caller builds in memory as the command line checks files.

A trace built from ``Job`` objects, a ``SimInstance``, a document or a DataFrame goes through the
checks a CSV row goes through, before any work: one ``InstanceError`` naming the job and the
field. A hypothesis test gives arbitrary ``Job`` values to ``placement.simulate``: each ends in a
run or an ``InstanceError`` (a hang would trip the alarm, any other exception fails). The face's
own parameters are refused with the command line's messages under their Python names, and names
that are nearly right get a suggestion.
"""

from __future__ import annotations

import math
import signal

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placement
from placement.app.cli import main
from placement.errors import InstanceError
from placement.sim.cluster import Cluster
from placement.sim.instance import SimInstance
from placement.sim.trace import (
    Job,
    Trace,
    load_trace_csv,
    synthetic_trace,
    trace_to_csv,
    write_trace_csv,
)

CLUSTER = "1x1x1x2x4"


def _trace(bad: Job) -> Trace:
    return Trace("t", (Job("a", 0.0, 1, 100.0), bad))


@pytest.mark.parametrize(("bad", "field"), [
    (Job("e", math.nan, 1, 10.0), "submit"),
    (Job("e", 0.0, 0, 10.0), "gpus"),
    (Job("e", 0.0, 1, -50.0), "duration"),
    (Job("e", 0.0, 1, math.inf), "duration"),
    (Job("e", 0.0, 1, 10.0, priority=-1), "priority"),
    (Job("e", 0.0, 2.5, 10.0), "gpus"),
    (Job("e", 0.0, 1, 10.0, tenant=""), "tenant"),
    (Job("e", 0.0, 1, 10.0, synthetic=frozenset({"colour"})), "synthetic"),
])
def test_an_impossible_job_in_memory_is_refused_naming_job_and_field(bad, field):
    with pytest.raises(InstanceError) as exc:
        placement.simulate(_trace(bad), cluster=CLUSTER)
    assert exc.value.field == f"trace 't' job 'e' {field}"
    # the same trace inside a SimInstance: the same check
    with pytest.raises(InstanceError, match=f"job 'e' {field}"):
        placement.simulate(SimInstance(_trace(bad), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4), "ideal"))


def test_a_value_no_file_could_hold_is_named_when_the_trace_is_built():
    with pytest.raises(InstanceError, match="job 'e' submit: must be a finite number >= 0, got 'x'"):
        _trace(Job("e", "x", 1, 10.0))


def test_the_nan_row_in_a_file_and_in_memory_are_the_same_refusal(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# placement-trace v1\nid,submit,gpus,duration\na,0,1,100\ne,nan,1,10\n")
    with pytest.raises(InstanceError, match="column 'submit': must be a finite number >= 0"):
        placement.simulate(str(path))
    with pytest.raises(InstanceError, match="job 'e' submit: must be a finite number >= 0"):
        placement.simulate(_trace(Job("e", math.nan, 1, 10.0)))


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 10**12),
                    st.sampled_from([None, "1", True]))
JOBS = st.builds(
    Job, id=st.one_of(st.text(max_size=4), st.integers(0, 3)), submit=NUMBERS,
    gpus=st.one_of(st.integers(-1, 12), st.floats(allow_nan=True), st.sampled_from(["2", None])),
    duration=NUMBERS, tenant=st.sampled_from(["default", "t1", "", None]),
    priority=st.one_of(st.integers(-1, 3), st.just(1.5)),
    gpu_type=st.sampled_from([None, "V100", "", 3]), model=st.sampled_from([None, "ResNet50", "x"]),
    tables=st.sampled_from([(), ("t0",), ("",), [1]]),
    synthetic=st.sampled_from([frozenset(), frozenset({"model"}), frozenset({"colour"}), "model"]))


# jobs a file could hold, extremes included (tiny and huge finite times, more GPUs than the cluster)
FINITE = st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False)
VALID = st.builds(Job, id=st.text(min_size=1, max_size=4), submit=FINITE, gpus=st.integers(1, 12), duration=FINITE,
                  priority=st.integers(0, 3), gpu_type=st.none(), model=st.sampled_from([None, "ResNet50", "x"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.lists(st.one_of(JOBS, VALID), min_size=1, max_size=4),
       policy=st.sampled_from(["fifo", "tiresias", "gandiva", "dally"]))
def test_arbitrary_jobs_give_a_run_or_one_instance_error(jobs, policy):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)   # a hang detector, not a timing assertion: a 4-job run takes milliseconds
    try:
        try:
            run = placement.simulate(Trace("h", tuple(jobs)), cluster=CLUSTER, policy=policy, perf="dally",
                                     progress=False)
        except InstanceError as exc:
            assert "\n" not in str(exc) and exc.field
            return
    except _Hang:
        pytest.fail(f"simulate did not end within 60 s on {jobs!r}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # what ran is a trace a file could hold: the run is whole and its log judged valid
    assert run.violations == []
    assert run.metrics["jobs"] == len(jobs)
    assert all(0 < j.gpus and math.isfinite(j.duration) for j in run.instance.trace.jobs)


def test_a_dataframe_runs_as_its_csv_does(tmp_path):
    df = pd.DataFrame({"id": ["a", "b", "c", "d"], "submit": [0.0, 30.0, 30.0, 600.0], "gpus": [4, 2, 8, 1],
                       "duration": [1000.0, 50.0, 300.0, 20.0], "priority": [0, 1, 2, 0],
                       "tables": [[], "x;y", ["z"], None]})
    trace = Trace.from_dataframe(df, name="frame")
    assert trace.jobs[1].tables == ("x", "y") and trace.jobs[2].tables == ("z",) and trace.jobs[3].tables == ()
    path = tmp_path / "frame.csv"
    path.write_text(trace_to_csv(trace))
    assert load_trace_csv(path) == trace
    a = placement.simulate(df, cluster=CLUSTER, policy="tiresias", progress=False)
    b = placement.simulate(str(path), cluster=CLUSTER, policy="tiresias", progress=False)
    assert list(a.result.log) == list(b.result.log)
    assert {k: v for k, v in a.metrics.items() if k != "replay_check_s"} == \
        {k: v for k, v in b.metrics.items() if k != "replay_check_s"}
    bad = df.assign(submit=[0.0, math.nan, 1.0, 2.0])
    with pytest.raises(InstanceError, match=r"df row 1 column 'submit': must be a finite number >= 0"):
        placement.simulate(bad)
    # a table read by pandas: empty cells of the optional columns are NaN, read as a CSV's empty cells
    import io

    read = pd.read_csv(io.StringIO("id,submit,gpus,duration,tenant,priority,gpu_type,tables\n1,0,1,10,,,,\n"
                                   "2,5,2,20,t,1,V100,a;b\n"))
    assert Trace.from_dataframe(read).jobs == (Job("1", 0.0, 1, 10.0), Job("2", 5.0, 2, 20.0, "t", 1, "V100",
                                                                        tables=("a", "b")))
    with pytest.raises(InstanceError, match="must have a column 'gpus'"):
        Trace.from_dataframe(df.drop(columns="gpus"))
    with pytest.raises(InstanceError, match="df column 'colour': is not a column"):
        Trace.from_dataframe(df.assign(colour=1))


@pytest.mark.parametrize(("call", "field"), [
    (lambda inst: placement.solve(inst, time_limit=-1), "time_limit"),
    (lambda inst: placement.solve(inst, time_limit="abc"), "time_limit"),
    (lambda inst: placement.solve(inst, solver="hill-climb", seed=-1), "seed"),
    (lambda inst: placement.reproduce("dally", quick="yes"), "quick"),
    (lambda inst: placement.reproduce("dally", seeds="3"), "seeds"),
    (lambda inst: placement.simulate("philly", hours=-1), "hours"),
    (lambda inst: placement.simulate(synthetic_trace(jobs=5), policy="gandiva", options={"migration_cost": "x"}),
     "options['migration_cost']"),
])
def test_the_face_names_python_parameters(call, field):
    from placement.instances import generate_tetris

    with pytest.raises(InstanceError) as exc:
        call(generate_tetris(4, 5, 2, seed=1))
    assert exc.value.field == field
    assert "--" not in str(exc.value)


def test_generate_tetris_names_the_size():
    from placement.instances import generate_tetris

    with pytest.raises(InstanceError, match="^n_tables: must be an integer >= 1, got 0$"):
        generate_tetris(0, 5, 2)


@pytest.mark.parametrize(("call", "meant"), [
    (lambda: placement.simulate("phily"), "'philly'"),
    (lambda: placement.simulate("philly", policy="tiresis"), "'tiresias'"),
    (lambda: placement.reproduce("daly"), "'dally'"),
    (lambda: placement.list_options("hil-climb", "tetris"), "'hill-climb'"),
    (lambda: placement.list_solvers("tetriss"), "'tetris'"),
])
def test_a_near_miss_is_answered_with_the_name_meant(call, meant):
    with pytest.raises(InstanceError, match=f"did you mean {meant}"):
        call()


def test_the_command_line_keeps_its_flags_and_refuses_an_empty_policy(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    write_trace_csv(synthetic_trace(jobs=5), trace)
    assert main(["simulate", str(trace), "--hours", "-1", "-o", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == "error: --hours: must be a positive finite number"
    assert main(["simulate", str(trace), "--policy", "", "-o", str(tmp_path / "o")]) == 2
    assert "error: --policy: must be one of " in capsys.readouterr().err
    assert main(["simulate", str(trace), "--policy", "gandiva", "--option", "migration_cost=1e308",
                 "-o", str(tmp_path / "o")]) == 2
    assert "magnitude at most 1e300, got 1e+308" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
