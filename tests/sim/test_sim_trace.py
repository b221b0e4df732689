"""Traces, clusters and the performance model: loaders validate every row, CSV v1 round-trips,
windows and samples, tiers, Dally Table 1."""

from __future__ import annotations

import csv
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement.errors import InstanceError
from placement.sim import Cluster, DallyPerf, Job, load_philly, load_trace_csv, synthetic_trace
from placement.sim.trace import trace_to_csv, write_trace_csv

PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"


def _philly_path():
    from placement.instances.traces import trace_path

    return trace_path("philly.csv")


def test_philly_loads_as_is_and_matches_a_plain_csv_read():
    path = _philly_path()
    trace = load_philly(path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(trace) == len(rows) == 82247
    assert sum(j.gpus for j in trace.jobs) == sum(int(r["num_gpus"]) for r in rows)
    assert sum(j.duration for j in trace.jobs) == pytest.approx(sum(float(r["duration"]) for r in rows))
    t = sorted(datetime.fromisoformat(r["timestamp"]).replace(tzinfo=UTC).timestamp() for r in rows)
    assert trace.jobs[-1].submit == pytest.approx(t[-1] - t[0])
    assert trace.jobs[0].submit == 0.0
    assert all(j.synthetic == {"model", "priority"} for j in trace.jobs[:100])
    # windows: jobs in the first 6 hours, re-based; sample keeps submit order
    w = load_philly(path, start=30 * 86400.0, hours=6)
    assert len(w) > 50 and len(w) == sum(1 for x in t if t[0] + 30 * 86400 <= x < t[0] + 30 * 86400 + 6 * 3600)
    assert all(0 <= j.submit < 6 * 3600 for j in w.jobs)
    s = load_philly(path, start=30 * 86400.0, hours=6, sample=50, seed=3)
    assert len(s) == 50 and {j.id for j in s.jobs} <= {j.id for j in w.jobs}
    assert load_philly(path, hours=6, sample=50, seed=3).jobs == load_philly(
        path, hours=6, sample=50, seed=3).jobs


@pytest.mark.parametrize("row, col", [
    ("2017-13-09 07:01:55,66.0,1,66.0,aa\n", "timestamp"),
    ("2017-10-09 07:01:55,-1,1,66.0,aa\n", "duration"),
    ("2017-10-09 07:01:55,nan,1,66.0,aa\n", "duration"),
    ("2017-10-09 07:01:55,66.0,0,66.0,aa\n", "num_gpus"),
    ("2017-10-09 07:01:55,66.0,1.5,66.0,aa\n", "num_gpus"),
    ("2017-10-09 07:01:55,66.0,1,66.0,\n", "cluster"),
])
def test_philly_bad_row_names_file_row_column(tmp_path, row, col):
    p = tmp_path / "p.csv"
    p.write_text(PHILLY_HEADER + "2017-10-09 07:01:55,66.0,1,66.0,aa\n" + row)
    with pytest.raises(InstanceError) as e:
        load_philly(p)
    assert str(p) in e.value.field and "row 3" in e.value.field and repr(col) in e.value.field


@pytest.mark.parametrize("text, where", [
    ("", "p.csv"),
    ("timestamp,duration\n", "row 1"),
    (PHILLY_HEADER + "2017-10-09 07:01:55,66.0,1\n", "row 2"),
    (PHILLY_HEADER, "p.csv"),
])
def test_philly_bad_file(tmp_path, text, where):
    p = tmp_path / "p.csv"
    p.write_text(text)
    with pytest.raises(InstanceError) as e:
        load_philly(p)
    assert where in e.value.field
    with pytest.raises(InstanceError, match="not found"):
        load_philly(tmp_path / "missing.csv")


jobs_st = st.lists(st.builds(
    Job, id=st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
    submit=st.floats(0, 1e7, allow_nan=False), gpus=st.integers(1, 64),
    duration=st.floats(0, 1e7, allow_nan=False), tenant=st.sampled_from(["t0", "x y", "q,1"]),
    priority=st.integers(0, 3), gpu_type=st.sampled_from([None, "V100", "A100"]),
    model=st.sampled_from([None, "ResNet50"]),
    tables=st.lists(st.sampled_from(["tbl1", "tbl2"]), unique=True, max_size=2).map(tuple),
    synthetic=st.sets(st.sampled_from(["model", "priority"])).map(frozenset)),
    max_size=20, unique_by=lambda j: j.id)


@given(jobs=jobs_st)
def test_csv_v1_round_trip(tmp_path_factory, jobs):
    from placement.sim import Trace

    trace = Trace("mine", tuple(jobs), provenance="made by\na test")
    p = tmp_path_factory.mktemp("t") / "t.csv"
    write_trace_csv(trace, p)
    back = load_trace_csv(p)
    assert back.jobs == trace.jobs and back.name == "mine"
    assert trace_to_csv(back) == p.read_text()


@pytest.mark.parametrize("body, where", [
    ("id,submit\n", "row 2"),
    ("id,submit,gpus,duration,colour\n", "'colour'"),
    ("id,submit,gpus,duration\na,1,1,1\na,2,1,1\n", "row 4 column 'id'"),
    ("id,submit,gpus,duration\na,x,1,1\n", "row 3 column 'submit'"),
    ("id,submit,gpus,duration,synthetic\na,1,1,1,colour\n", "row 3 column 'synthetic'"),
])
def test_csv_v1_bad_rows(tmp_path, body, where):
    p = tmp_path / "t.csv"
    p.write_text("# placement-trace v1\n" + body)
    with pytest.raises(InstanceError) as e:
        load_trace_csv(p)
    assert where in e.value.field
    p.write_text(body)    # the version line is optional: the same refusal without it
    with pytest.raises(InstanceError) as plain:
        load_trace_csv(p)
    assert plain.value.message == e.value.message


def test_synthetic_traces_seeded_and_shaped():
    a = synthetic_trace("poisson", jobs=500, seed=1)
    assert a.jobs == synthetic_trace("poisson", jobs=500, seed=1).jobs
    assert a.jobs != synthetic_trace("poisson", jobs=500, seed=2).jobs
    assert all(b.submit >= x.submit for x, b in zip(a.jobs, a.jobs[1:], strict=False))
    assert {j.gpus for j in a.jobs} <= {1, 2, 4, 8, 16, 32}
    assert sum(j.gpus == 1 for j in a.jobs) > 400  # Philly: 93% single-GPU
    b = synthetic_trace("batch", jobs=50, seed=1, max_gpus=4)
    assert {j.submit for j in b.jobs} == {0.0} and max(j.gpus for j in b.jobs) <= 4
    with pytest.raises(InstanceError):
        synthetic_trace("burst")


def test_cluster_tiers_and_shape():
    c = Cluster.uniform(regions=2, clusters=2, racks=2, machines=2, gpus_per_machine=4)
    assert c.n_gpus == 2 * 2 * 2 * 2 * 4 and c.n_machines == 16
    assert c.tier([0, 3]) == "machine" and c.tier([0, 4]) == "rack"
    assert c.tier([0, 8]) == "cluster" and c.tier([0, 16]) == "network"
    assert c.tier([0, 32]) == "network" and c.tier([5]) == "machine"
    assert list(c.region[[0, 31, 32]]) == [0, 0, 1]
    assert c.capacity(None) == 64 and c.capacity("V100") == 64 and c.capacity("A100") == 0
    assert Cluster.from_machines(c.machines()).machine_names == c.machine_names
    with pytest.raises(InstanceError):
        Cluster.uniform(racks=0)


def test_dally_table1_rates():
    perf = DallyPerf()
    j = Job("a", 0.0, 8, 1.0, model="MobileNetV3")
    assert perf.rate(j, "machine") == pytest.approx(1 / 1.42)
    assert perf.rate(j, "rack") == pytest.approx(1 / 10.40)
    assert perf.rate(j, "network") == pytest.approx(1 / 196.92)
    assert perf.rate(j, "cluster") == perf.rate(j, "network")
    assert perf.rate(Job("b", 0.0, 1, 1.0, model="MobileNetV3"), "network") == 1.0
    assert DallyPerf(baseline="machine").rate(j, "machine") == pytest.approx(1.0)
