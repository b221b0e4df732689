"""replay_check finds each kind of violation in hand-broken logs (one test per kind)."""

from __future__ import annotations

import pytest

from placement.sim import Cluster, IdealPerf, Job, LogRow, Trace, replay_check
from placement.sim.cluster import MachineSpec

CLUSTER = Cluster.from_machines([MachineSpec("m0", "k0", "c0", "r0", 2, "A"),
                                 MachineSpec("m1", "k0", "c0", "r0", 2, "A"),
                                 MachineSpec("m2", "k1", "c0", "r0", 2, "B")])
TRACE = Trace("t", (Job("a", 0.0, 2, 10.0, gpu_type="A"), Job("b", 1.0, 2, 5.0),
                    Job("c", 2.0, 9, 1.0)))
PERF = IdealPerf()


def good():
    return [LogRow(0.0, "submit", "a"), LogRow(0.0, "start", "a", (0, 1), 0.0),
            LogRow(1.0, "submit", "b"), LogRow(1.0, "start", "b", (2, 3), 0.0),
            LogRow(2.0, "submit", "c"), LogRow(2.0, "unschedulable", "c"),
            LogRow(4.0, "preempt", "a", (0, 1), 4.0), LogRow(5.0, "start", "a", (1, 0), 4.0),
            LogRow(6.0, "finish", "b", (2, 3), 5.0), LogRow(11.0, "finish", "a", (0, 1), 10.0)]


def check(rows):
    return replay_check(TRACE, CLUSTER, rows, perf=PERF)


def test_good_log_is_clean():
    assert check(good()) == []


def broken(edit):
    rows = good()
    edit(rows)
    return check(rows)


def kinds(msgs):
    return {m.split(":")[0] for m in msgs}


@pytest.mark.parametrize("kind, edit", [
    ("order", lambda r: r.insert(3, LogRow(0.5, "submit", "zz"))),
    ("unknown", lambda r: r.insert(2, LogRow(1.0, "submit", "zz"))),
    ("submit", lambda r: r.__setitem__(2, LogRow(1.5, "submit", "b"))),
    ("before-submit", lambda r: (r.remove(r[3]), r.insert(1, LogRow(0.0, "start", "b", (2, 3), 0.0)))),
    ("gpu-twice", lambda r: r.__setitem__(3, LogRow(1.0, "start", "b", (1, 2), 0.0))),
    ("gpu-range", lambda r: r.__setitem__(3, LogRow(1.0, "start", "b", (2, 30), 0.0))),
    ("gpu-count", lambda r: r.__setitem__(3, LogRow(1.0, "start", "b", (2, 2), 0.0))),
    ("gpu-type", lambda r: r.__setitem__(1, LogRow(0.0, "start", "a", (0, 4), 0.0))),
    ("early", lambda r: r.__setitem__(9, LogRow(10.5, "finish", "a", (0, 1), 10.0))),
    ("late", lambda r: r.__setitem__(9, LogRow(12.0, "finish", "a", (0, 1), 10.0))),
    ("work", lambda r: r.__setitem__(6, LogRow(4.0, "preempt", "a", (0, 1), 4.5))),
    ("work", lambda r: r.__setitem__(7, LogRow(5.0, "start", "a", (0, 1), 3.0))),
    ("state", lambda r: r.insert(4, LogRow(1.0, "start", "a", (4, 5), 0.0))),
    ("state", lambda r: r.insert(9, LogRow(6.0, "finish", "b", (2, 3), 5.0))),
    ("state", lambda r: r.__setitem__(8, LogRow(6.0, "finish", "b", (2, 5), 5.0))),
    ("unschedulable", lambda r: r.insert(3, LogRow(1.0, "unschedulable", "b"))),
    ("unschedulable", lambda r: r.remove(r[5])),
    ("unfinished", lambda r: r.remove(r[9])),
])
def test_each_violation_kind_is_found(kind, edit):
    msgs = broken(edit)
    assert kind in kinds(msgs), msgs


def test_finish_early_at_slower_rate_is_found():
    """With Dally's rates a 2-GPU ResNet50 across racks runs at 1/1.38: finishing at the
    consolidated speed is early."""
    from placement.sim import DallyPerf

    cl = Cluster.uniform(racks=2, machines=1, gpus_per_machine=1)
    tr = Trace("t", (Job("a", 0.0, 2, 100.0, model="ResNet50"),))
    rows = [LogRow(0.0, "submit", "a"), LogRow(0.0, "start", "a", (0, 1), 0.0),
            LogRow(112.0, "finish", "a", (0, 1), 100.0)]
    msgs = replay_check(tr, cl, rows, perf=DallyPerf())
    assert kinds(msgs) == {"early"}
    rows[2] = LogRow(100.0 * 1.38, "finish", "a", (0, 1), 100.0)
    assert replay_check(tr, cl, rows, perf=DallyPerf()) == []


def test_extra_checks_are_appended():
    def no_b(trace, cluster, log):
        return [f"quota: job {r.job} ran" for r in log if r.event == "start" and r.job == "b"]

    assert replay_check(TRACE, CLUSTER, good(), perf=PERF, checks=[no_b]) == ["quota: job b ran"]
