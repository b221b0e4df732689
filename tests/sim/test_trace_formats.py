"""Traces people have: a plain or BOM-prefixed CSV, DataFrames and CSV text both ways, and the
trace formats of Tiresias, Gavel, Blox and Pollux read as their simulators read them."""

from __future__ import annotations

import csv
import math

import pandas as pd
import pytest
from placement.instances.traces import FORMAT_SAMPLES, trace_path

import placement
import placement.app.shipped  # noqa: F401 - names the goodput model's applications
from placement.app.cli import main
from placement.errors import InstanceError
from placement.sim.gavel_throughputs import GAVEL_V100_THROUGHPUT
from placement.sim.trace import Job, Trace, load_trace_csv, synthetic_trace
from placement.sim.trace_formats import load_trace, table1_model, trace_format


def _trace():
    t = synthetic_trace("poisson", jobs=12, seed=4, gpu_types=["A100", "V100"])
    jobs = list(t.jobs)
    jobs[0] = Job(jobs[0].id, jobs[0].submit, 2, 7.5, "t9", 1, None, None, ("a", "b"), frozenset())
    return Trace(t.name, tuple(jobs), "made, for a test")


def test_a_plain_csv_from_pandas_is_read_as_the_v1_file_is(tmp_path):
    t = _trace()
    plain, v1 = tmp_path / "plain.csv", tmp_path / "v1.csv"
    df = t.to_dataframe()
    df.assign(tables=[";".join(x) for x in df["tables"]], synthetic=[";".join(x) for x in df["synthetic"]]
              ).to_csv(plain, index=False)
    t.to_csv(v1)
    assert plain.read_text().startswith("id,submit,gpus,duration")   # no version line
    assert trace_format(plain) == "v1"
    assert load_trace_csv(plain).jobs == load_trace_csv(v1).jobs == t.jobs
    indexed = tmp_path / "indexed.csv"      # to_csv() with pandas' index as an unnamed first column
    df.assign(tables=[";".join(x) for x in df["tables"]], synthetic=[";".join(x) for x in df["synthetic"]]
              ).to_csv(indexed)
    assert indexed.read_text().startswith(",id,") and load_trace(indexed)[0].jobs == t.jobs
    assert Trace.from_dataframe(pd.read_csv(indexed), t.name).jobs == t.jobs   # 'Unnamed: 0' is the index
    minimal = tmp_path / "minimal.csv"
    minimal.write_text("id,submit,gpus,duration\na,0,1,10\nb,5,4,20\n")
    tr, fmt = load_trace(minimal)
    assert fmt == "v1" and [(j.id, j.submit, j.gpus, j.duration) for j in tr.jobs] == [("a", 0, 1, 10), ("b", 5, 4, 20)]


@pytest.mark.parametrize("with_magic", [True, False])
def test_a_byte_order_mark_is_dropped(tmp_path, with_magic):
    t = _trace()
    text = t.to_csv() if with_magic else t.to_csv().split("\n", 3)[3]
    p = tmp_path / "excel.csv"
    p.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_trace(p)[0].jobs == t.jobs


def test_dataframe_and_csv_round_trip(tmp_path):
    t = _trace()
    df = t.to_dataframe()
    assert list(df.columns) == ["id", "submit", "gpus", "duration", "tenant", "priority", "gpu_type", "model",
                                "tables", "synthetic"]
    assert len(df) == len(t) and df["tables"][0] == ["a", "b"] and df["model"][0] is None
    assert Trace.from_dataframe(df, t.name, t.provenance) == t
    t.to_csv(tmp_path / "t.csv")
    back = load_trace_csv(tmp_path / "t.csv")
    assert back == t and back.to_csv() == t.to_csv()
    with pytest.raises(InstanceError, match="path: folder .* does not exist"):
        t.to_csv(tmp_path / "no" / "t.csv")


def test_a_trace_without_jobs_is_not_simulated(tmp_path, capsys):
    # Before: an empty trace "succeeded" with 0 jobs.
    p = tmp_path / "empty.csv"
    p.write_text("id,submit,gpus,duration\n")
    assert len(load_trace(p)[0]) == 0          # read as data, an empty trace is a trace
    with pytest.raises(InstanceError, match="trace: 'empty' has no jobs: a simulation needs at least one"):
        placement.simulate(p, progress=False)
    with pytest.raises(InstanceError, match="has no jobs"):
        placement.simulate(pd.DataFrame({"id": [], "submit": [], "gpus": [], "duration": []}), progress=False)
    with pytest.raises(InstanceError, match="has no jobs"):
        placement.simulate(Trace("e", ()), progress=False)
    assert main(["simulate", str(p), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: trace: 'empty' has no jobs") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    t = tmp_path / "t.blox"
    t.write_text("\n")
    with pytest.raises(InstanceError):
        load_trace(t)


def _rows(name, delimiter=","):
    with open(trace_path(name), newline="") as f:
        return list(csv.reader(f, delimiter=delimiter))


def test_tiresias_rows_are_read_column_by_column():
    tr, fmt = load_trace(trace_path(FORMAT_SAMPLES["tiresias"]))
    rows = _rows(FORMAT_SAMPLES["tiresias"])
    head, rows = rows[0], rows[1:]
    c = {k: i for i, k in enumerate(head)}
    assert fmt == "tiresias" and len(tr) == len(rows)
    by_id = {j.id: j for j in tr.jobs}
    for r in rows:
        j = by_id[r[c["job_id"]]]
        assert (j.gpus, j.submit, j.duration) == (int(r[c["num_gpu"]]), float(r[c["submit_time"]]),
                                                  float(r[c["duration"]]))
        assert j.model == table1_model(r[c["model_name"]])
    assert by_id["1"].model == "VGG11" and by_id["0"].model == "vgg19"   # Table 1's spelling where it has one


def test_gavel_durations_are_total_steps_over_the_measured_throughput():
    tr, fmt = load_trace(trace_path(FORMAT_SAMPLES["gavel"]))
    rows = _rows(FORMAT_SAMPLES["gavel"], "\t")
    assert fmt == "gavel" and len(tr) == len(rows) == 15
    by_id = {j.id: j for j in tr.jobs}
    for i, r in enumerate(rows):
        j = by_id[str(i)]
        assert j.gpus == int(r[6]) and j.submit == float(r[9])
        assert math.isclose(j.duration * GAVEL_V100_THROUGHPUT[(r[0], int(r[6]))], float(r[5]), rel_tol=1e-12)
    assert by_id["0"].model == "ResNet50"   # 'ResNet-50 (batch size 64)'


def test_blox_and_pollux_rows_are_read_column_by_column():
    tr, fmt = load_trace(trace_path(FORMAT_SAMPLES["blox"]))
    rows = _rows(FORMAT_SAMPLES["blox"])
    assert fmt == "blox" and len(tr) == len(rows)
    by_id = {j.id: j for j in tr.jobs}
    for r in rows:
        j = by_id[r[0]]
        assert (j.submit, j.duration, j.gpus) == (float(r[2]), float(r[3]), int(r[4]))
    assert by_id["0"].model == "ResNet18" and by_id["1"].model == "gnmt"
    tr, fmt = load_trace(trace_path(FORMAT_SAMPLES["pollux"]))
    rows = _rows(FORMAT_SAMPLES["pollux"])[1:]
    assert fmt == "pollux" and [(j.id, j.submit, j.gpus, j.model) for j in tr.jobs] == [
        (r[0], float(r[1]), int(r[3]), r[2]) for r in rows]


@pytest.mark.parametrize("fmt", sorted(FORMAT_SAMPLES))
def test_every_format_round_trips_through_our_csv(tmp_path, fmt):
    tr, _ = load_trace(trace_path(FORMAT_SAMPLES[fmt]))
    tr.to_csv(tmp_path / "t.csv")
    assert load_trace_csv(tmp_path / "t.csv") == tr
    assert Trace.from_dataframe(tr.to_dataframe(), tr.name, tr.provenance) == tr


@pytest.mark.parametrize("fmt", ["tiresias", "gavel", "blox"])
def test_the_samples_simulate_from_python(fmt):
    path = str(trace_path(FORMAT_SAMPLES[fmt]))
    run = placement.simulate(path, policy="tiresias", progress=False)
    assert run.metrics["finished"] == len(load_trace(path)[0]) == len(run.instance.trace) and not run.violations


def test_a_sample_simulates_from_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # the table and files, not the plots
    path = str(trace_path(FORMAT_SAMPLES["gavel"]))
    assert main(["simulate", path, "--policy", "fifo", "-o", str(tmp_path / "o")]) == 0
    assert '"jobs": 15' in (tmp_path / "o" / "summary.json").read_text()


def test_a_pollux_file_runs_on_the_goodput_model():
    run = placement.simulate(str(trace_path(FORMAT_SAMPLES["pollux"])), policy="tiresias", sample=2, progress=False)
    assert run.instance.perf == "goodput" and run.metrics["finished"] == 2 and not run.violations


@pytest.mark.parametrize("text,expect", [
    ("ResNet-18 (batch size 33)\tc\tw\t-n\t1\t100\t1\t1\t-1\t0\n", "row 1 column 'job_type': 'ResNet-18 (batch size 33)' "
     "is not a job type Gavel measured; did you mean"),
    ("A3C\tc\tw\t-n\t1\t100\t2\t1\t-1\t0\n", "row 1 column 'scale_factor': 'A3C' was measured at scale factors [1]"),
    ("A3C\tc\tw\t-n\t1\tx\t1\t1\t-1\t0\n", "row 1 column 'total_steps'"),
    ("A3C\tc\tw\t-n\t1\t100\t1\t1\t-1\t0\nA3C\tc\n", "row 2: has 2 tab-separated fields"),
])
def test_a_bad_gavel_row_is_one_line(tmp_path, text, expect):
    p = tmp_path / "g.trace"
    p.write_text(text)
    if "x\t1" in text:    # a non-number is no longer recognisable as Gavel's
        with pytest.raises(InstanceError, match="is not a known trace header"):
            load_trace(p)
        return
    with pytest.raises(InstanceError) as e:
        load_trace(p)
    assert expect in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("text,expect", [
    ("0,res18,0,100,1\n1,res18,5,100,0\n", "row 2 column 'gpu_demand'"),
    ("0,res18,0,100,1\n0,res50,5,100,2\n", "job '0': repeats a job id"),
    ("0,res18,0,100,1\n1,res18,5\n", "row 2: has 3 fields"),
])
def test_a_bad_blox_row_is_one_line(tmp_path, text, expect):
    p = tmp_path / "b.csv"
    p.write_text(text)
    with pytest.raises(InstanceError) as e:
        load_trace(p)
    assert expect in str(e.value)


def test_a_bad_tiresias_row_is_one_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,-2,0,10\n")
    with pytest.raises(InstanceError, match="row 3 column 'num_gpu'"):
        load_trace(p)
    df = pd.read_csv(trace_path(FORMAT_SAMPLES["tiresias"]))
    assert len(load_trace(trace_path(FORMAT_SAMPLES["tiresias"]))[0]) == len(df)
