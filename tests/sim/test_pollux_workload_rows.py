"""The Pollux workload loader reads a file as the trace loaders do: a byte-order mark dropped, every
bad row one InstanceError naming the file, the row and the column, the same as
``placement.sim.trace_formats.load_pollux`` names it."""

from __future__ import annotations

import pytest
from placement.instances.traces import pollux_dir

from placement.errors import InstanceError
from placement.sim.goodput import default_perf, use_applications
from placement.sim.pollux_workload import COLUMNS, load_pollux_workload
from placement.sim.trace_formats import load_pollux

HEADER = ",".join(COLUMNS)
GOOD = ["cifar10-0,0,cifar10,2,2048", "ncf-1,30.5,ncf,1,32768", "bert-2,60,bert,4,48"]


@pytest.fixture(scope="module")
def apps():
    use_applications(pollux_dir() / "traces")   # the shipped applications, as the app layer names them
    return default_perf().apps


def _write(tmp_path, lines, bom=False, name="w.csv"):
    p = tmp_path / name
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + ("\n".join(lines) + "\n").encode())
    return p


def test_a_byte_order_mark_is_dropped(tmp_path, apps):
    plain, batch = load_pollux_workload(_write(tmp_path, [HEADER, *GOOD]), apps, name="w")
    marked, batch_marked = load_pollux_workload(_write(tmp_path, [HEADER, *GOOD], bom=True, name="m.csv"), apps,
                                                name="w")
    assert marked.jobs == plain.jobs and batch_marked == batch
    assert [(j.id, j.submit, j.gpus, j.model) for j in plain.jobs] == [
        ("cifar10-0", 0.0, 2, "cifar10"), ("ncf-1", 30.5, 1, "ncf"), ("bert-2", 60.0, 4, "bert")]
    assert batch == {"cifar10-0": 2048.0, "ncf-1": 32768.0, "bert-2": 48.0}
    assert [j.duration for j in plain.jobs] == [apps[m].total for m in ("cifar10", "ncf", "bert")]
    # the trace loader reads the same jobs
    assert [(j.id, j.submit, j.gpus, j.duration, j.model) for j in load_pollux(tmp_path / "m.csv").jobs] == \
        [(j.id, j.submit, j.gpus, j.duration, j.model) for j in plain.jobs]


def test_columns_in_another_order_are_read_by_name(tmp_path, apps):
    p = _write(tmp_path, ["batch_size,num_replicas,application,time,name", "2048,2,cifar10,5,c"])
    trace, batch = load_pollux_workload(p, apps)
    assert (trace.jobs[0].id, trace.jobs[0].submit, trace.jobs[0].gpus) == ("c", 5.0, 2) and batch == {"c": 2048.0}


@pytest.mark.parametrize(("row", "column", "words"), [
    ("x,0,cifar10,2", None, "has 4 fields"),                   # short: a TypeError once
    ("x,inf,cifar10,2,2048", "time", "finite"),
    ("x,nan,cifar10,2,2048", "time", "finite"),
    ("x,-1,cifar10,2,2048", "time", ">= 0"),
    ("x,0,Cifar10,2,2048", "application", "did you mean 'cifar10'"),
    ("x,0,cifar10,65,2048", "num_replicas", "at most 64"),
    ("x,0,cifar10,1.5,2048", "num_replicas", "integer"),
    ("x,0,cifar10,2,1", "batch_size", "must be in"),
    (",0,cifar10,2,2048", "name", "non-empty"),
])
def test_a_bad_row_is_named_by_file_row_and_column(tmp_path, apps, row, column, words):
    p = _write(tmp_path, [HEADER, GOOD[0], row], bom=True)
    with pytest.raises(InstanceError) as exc:
        load_pollux_workload(p, apps)
    where = f"{p} row 3" + (f" column '{column}'" if column else "")
    assert exc.value.field == where and words in exc.value.message
    with pytest.raises(InstanceError) as same:
        load_pollux(p)
    assert same.value.field == exc.value.field


def test_a_repeated_name_an_empty_file_and_a_missing_column(tmp_path, apps):
    p = _write(tmp_path, [HEADER, GOOD[0], GOOD[0]])
    with pytest.raises(InstanceError, match="repeats the job name 'cifar10-0'") as exc:
        load_pollux_workload(p, apps)
    assert exc.value.field == f"{p} row 3 column 'name'"
    with pytest.raises(InstanceError, match="has no job rows"):
        load_pollux_workload(_write(tmp_path, [HEADER], name="e.csv"), apps)
    with pytest.raises(InstanceError, match="column 'batch_size'"):
        load_pollux_workload(_write(tmp_path, ["name,time,application,num_replicas", "x,0,ncf,1"], name="h.csv"),
                             apps)
