"""YARN-CS (idle GPUs first, best fit, preempt only for affinity) against quota sharing with HiveD's
fewest-low-priority-GPUs rule: hand scenes where the two rules differ (HiveD §5.1)."""

from __future__ import annotations

from placement.models import hived_vc as hv
from placement.solvers.online.quota import QuotaSharing
from placement.solvers.online.yarn_cs import YarnCS

from placement.sim import Cluster, replay_check, simulate
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy
from tests.support import sim_trace

PERF = IdealPerf()
ASSIGN = hv.VCAssignment(2, {"A": (0, 0, 0, 1), "B": (0, 0, 0, 1)})  # C has no quota


def _run(policy, rows, nodes=2):
    trace, cluster = sim_trace(rows), Cluster.uniform(1, 1, 1, nodes, 8)
    res = simulate(trace, cluster, policy, perf=PERF)
    assert replay_check(trace, cluster, res.log, perf=PERF) == []
    starts = {}
    for r in res.log.rows:
        if r.event == "start":
            starts.setdefault(r.job, (r.time, tuple(r.gpus)))
    return starts, [(r.time, r.job) for r in res.log.rows if r.event == "preempt"], policy


def test_idle_first_packs_next_to_low_priority_work_and_spares_a_clean_node():
    # t=0: C's 1-GPU low-priority job on node 0. t=1: A's 1-GPU job within quota: YARN-CS packs it
    # on node 0's idle GPUs (best fit); the fewest-low rule takes clean node 1. t=2: B's 8-GPU job
    # within quota: YARN-CS finds node 1 idle; the fewest-low rule must preempt C on node 0.
    rows = [(0, 1, 100, "C"), (1, 1, 100, "A"), (2, 8, 10, "B")]
    ys, ypre, y = _run(YarnCS(assignment=ASSIGN), rows)
    qs, qpre, q = _run(QuotaSharing(assignment=ASSIGN), rows)
    assert ys["j001"][1][0] // 8 == 0 and qs["j001"][1][0] // 8 == 1
    assert ys["j002"] == (2, tuple(range(8, 16))) and ypre == []
    assert qs["j002"] == (2, tuple(range(8))) and qpre == [(2, "j000")]
    assert y.n["preempted_gpus"] == 0 and q.n["preempted_gpus"] == 1


def test_yarn_cs_preempts_only_for_affinity_and_takes_the_fewest_low_priority_gpus():
    # C fills node 0 with one 8-GPU job and node 1 with two 4-GPU jobs; then A asks for 4 GPUs
    # within quota while no GPU is idle: YARN-CS preempts the fewest GPUs that give it affinity
    # (one 4-GPU job on node 1); the fewest-low rule counts low-priority GPUs per node (8 on
    # each), takes node 0 and preempts the 8-GPU job.
    rows = [(0, 8, 100, "C"), (0, 4, 100, "C"), (0, 4, 100, "C"), (1, 4, 10, "A")]
    ys, ypre, y = _run(YarnCS(assignment=ASSIGN), rows)
    assert ys["j003"][0] == 1 and len(ypre) == 1
    victim = ypre[0][1]
    assert set(ys["j003"][1]) == set(ys[victim][1]) and len(ys[victim][1]) == 4
    qs, qpre, q = _run(QuotaSharing(assignment=ASSIGN), rows)
    assert qpre == [(1, "j000")] and q.n["preempted_gpus"] == 8 and y.n["preempted_gpus"] == 4


def test_registered_with_its_rule():
    pol = make_policy("yarn-cs", assignment=ASSIGN)
    assert pol.rule == "idle-first" and make_policy("quota", assignment=ASSIGN).rule == "fewest-low"
