"""The face driven with arbitrary traces (objects, DataFrames, files in every format), clusters,
performance models, policies and options: a run or one InstanceError, never a traceback, and never
a silent default (a job whose model the performance model does not know is refused, a multi-GPU
job without one is warned about)."""

from __future__ import annotations

import signal
import warnings

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import placement
import placement.app.shipped  # noqa: F401 - names the goodput model's applications
from placement.errors import InstanceError
from placement.sim.table1 import DALLY_MODELS
from placement.sim.trace import Job, Trace, trace_to_csv

MODELS = [None, "ResNet50", "AlexNet", "resnet50", "cifar10", "bert", "x", "ResNet50", "cifar10"]
JOB = st.builds(Job, id=st.sampled_from(["a", "b", "c", "d"]), submit=st.sampled_from([0.0, 1.5, 30.0]),
                gpus=st.sampled_from([1, 2, 4, 9]), duration=st.sampled_from([0.0, 2.0, 40.0]),
                priority=st.integers(0, 2), model=st.sampled_from(MODELS))
JOBS = st.lists(JOB, min_size=0, max_size=3, unique_by=lambda j: j.id)
# mostly good values, some bad ones (a bad value is refused before anything else is looked at)
CLUSTERS = st.sampled_from([None, "1x1x1x2x4", "1x1x2x2x8", "1x1x1x4x4"] * 4
                           + ["1x1x1x1x2", "0x1x1x1x1", "a", "1x1x1x1x2000", 3])
PERFS = st.sampled_from([None, "ideal", "dally", "dally-machine", "goodput"] * 4 + ["Dally", ""])
POLICIES = st.sampled_from(["fifo", "tiresias", "dally"] * 4 + ["pollux", "fifoo"])
OPTIONS = st.one_of(st.just({}), st.just({}), st.dictionaries(st.sampled_from(["levels", "colour", "seed", "delay"]),
                                                 st.sampled_from([1, -1, 2.5, "x", None, [1]]), max_size=2))


def _as(kind: str, jobs: list[Job], tmp_path):
    trace = Trace("f", tuple(jobs))
    if kind == "trace":
        return trace
    if kind == "dataframe":
        df = trace.to_dataframe()
        return df.drop(columns=["model"]) if jobs and jobs[0].model is None else df
    p = tmp_path / f"t-{len(jobs)}-{abs(hash(tuple(jobs))) % 10**6}.csv"
    if kind == "plain":
        p.write_text(trace_to_csv(trace).split("\n", 3)[3])
    elif kind == "tiresias":
        p.write_text("job_id,num_gpu,submit_time,duration,model_name\n" + "".join(
            f"{j.id},{j.gpus},{j.submit},{j.duration},{j.model or ''}\n" for j in jobs))
    else:   # blox
        p.write_text("".join(f"{i},{j.model or 'res18'},{j.submit},{j.duration},{j.gpus}\n"
                             for i, j in enumerate(jobs)))
    return str(p)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(jobs=JOBS, kind=st.sampled_from(["trace", "dataframe", "plain", "tiresias", "blox"]), cluster=CLUSTERS,
       perf=PERFS, policy=POLICIES, options=OPTIONS)
def test_the_face_gives_a_run_or_one_instance_error(tmp_path, jobs, kind, cluster, perf, policy, options):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)   # a hang detector, not a timing assertion
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                trace = _as(kind, jobs, tmp_path)
                run = placement.simulate(trace, cluster=cluster, perf=perf, policy=policy, options=options,
                                         progress=False)
            except InstanceError as exc:
                assert "\n" not in str(exc) and exc.field
                event(f"refused: {exc.field.split()[0]}")
                return
    except _Hang:
        pytest.fail("simulate did not end within 60 s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    inst = run.instance
    event(f"ran: perf {inst.perf}")
    assert len(inst.trace) >= 1 and not run.violations
    assert run.metrics["jobs"] == len(inst.trace)
    if inst.perf in ("dally", "dally-machine"):    # never a silent default
        assert all(j.model is None or j.model in DALLY_MODELS for j in inst.trace.jobs)
        if any(j.model is None and j.gpus > 1 for j in inst.trace.jobs):
            assert any("name no model" in str(w.message) for w in caught)
    if inst.perf == "goodput":
        assert all(j.model in ("cifar10", "bert") for j in inst.trace.jobs)
        assert max(inst.cluster.machine_gpus) <= 4


def test_a_dataframe_without_a_model_column_under_dally_warns():
    df = pd.DataFrame({"id": ["a"], "submit": [0.0], "gpus": [4], "duration": [5.0]})
    with pytest.warns(UserWarning, match="name no model"):
        placement.simulate(df, perf="dally", progress=False)
