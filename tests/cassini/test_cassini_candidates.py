"""CASSINI's step 1 (§4.2): candidates from the Themis auction's reassignment, beside the earlier
rule (only the jobs starting now move, onto the GPUs free now)."""

import pytest
from placement.solvers.online.cassini import CassiniPlugin, ThemisCassini

from placement.sim.cassini_workload import poisson_trace
from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.link_check import link_factor_check
from placement.sim.links import LinkSharing
from placement.sim.perf import IdealPerf
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace

NET = {"racks": 3, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50, "oversubscription": 2}


def _cluster(net=NET):
    return Cluster.uniform(racks=net["racks"], machines=net["servers_per_rack"], gpus_per_machine=1).with_network(net)


def _run(policy, trace, cluster, monkeypatch=None, seed=1):
    """The run (its log checked by replay and the link-factor check) and, with ``monkeypatch``,
    every ranking's ``(time, candidates, chosen)``."""
    got = []
    if monkeypatch is not None:
        rank = CassiniPlugin._rank

        def spy(self, view, running, cands):
            out = rank(self, view, running, cands)
            got.append((view.now, [dict(c) for c in cands], out[0]))
            return out

        monkeypatch.setattr(CassiniPlugin, "_rank", spy)
    res = simulate(trace, cluster, policy, perf=IdealPerf(), seed=seed)
    assert replay_check(trace, cluster, res.log, perf=IdealPerf(), checks=[link_factor_check(LinkSharing(cluster))]) == []
    return res, got


# a, b (2 GPUs, 1000 s) and z (2 GPUs, 60 s) fill the 3 racks at 0 (a rack 0, b rack 1, z rack 2);
# z ends at 60; n (2 GPUs) arrives at 100, when a's and b's 100 s leases expire. Themis renews
# both on their GPUs (nothing spans fewer racks) and starts n on rack 2, the only free GPUs.
SCENE = Trace("t", (Job("a", 0.0, 2, 1000.0, model="VGG16"), Job("b", 0.0, 2, 1000.0, model="VGG16"),
                    Job("z", 0.0, 2, 60.0, model="VGG16"), Job("n", 100.0, 2, 50.0, model="VGG16")))


def test_the_reassignment_offers_a_starting_job_the_gpus_of_winners_whose_lease_expired(monkeypatch):
    cluster = _cluster()
    _res, old = _run(ThemisCassini(lease=100.0, candidate_rule="starting"), SCENE, cluster, monkeypatch)
    at = {t: c for t, c, _ in old}
    assert at[100.0] == [{"n": (4, 5)}]            # the old rule: one candidate, n on the free GPUs
    _res, new = _run(ThemisCassini(lease=100.0), SCENE, cluster, monkeypatch)
    cands = {t: c for t, c, _ in new}[100.0]
    assert cands[0] == {"n": (4, 5), "a": (0, 1), "b": (2, 3)}   # the base's outcome first
    assert 1 < len(cands) <= 10
    # every candidate: the same winners, each with its worker count, on disjoint GPUs of the pool
    for c in cands:
        assert set(c) == {"n", "a", "b"} and all(len(g) == 2 for g in c.values())
        assert sorted(x for g in c.values() for x in g) == [0, 1, 2, 3, 4, 5]
    # candidates the old rule cannot make: n on a renewed winner's rack, that winner moved
    assert {c["n"] for c in cands} == {(0, 1), (2, 3), (4, 5)}
    assert len({tuple(sorted(c.items())) for c in cands}) == len(cands) == 6


def test_a_chosen_candidate_that_moves_a_renewed_winner_restarts_it_there(monkeypatch):
    # the plug-in's decisions when the top candidate moves a winner whose lease was renewed:
    # it is preempted and started at once on its new GPUs, keeping its work (the log replays)
    cluster = _cluster()
    rank = CassiniPlugin._rank

    def prefer_moves(self, view, running, cands):
        chosen, shifts, score = rank(self, view, running, cands)
        moving = [c for c in cands if "a" in c and c["a"] != tuple(view.running["a"].gpus)] if "a" in view.running else []
        return (moving[0] if moving else chosen), {}, score

    monkeypatch.setattr(CassiniPlugin, "_rank", prefer_moves)
    pol = ThemisCassini(lease=100.0)
    res = simulate(SCENE, cluster, pol, perf=IdealPerf(), seed=1)
    assert replay_check(SCENE, cluster, res.log, perf=IdealPerf(), checks=[link_factor_check(LinkSharing(cluster))]) == []
    at100 = [(r.event, r.job) for r in res.log if r.time == 100.0 and r.event in ("preempt", "start")]
    assert ("preempt", "a") in at100 and ("start", "a") in at100
    assert pol.stats()["cassini"]["renewed_moved"] >= 1
    fin = {r.job: r.time for r in res.log if r.event == "finish"}
    assert fin["a"] == pytest.approx(1000.0)       # moved, not slowed: in-rack, no shared link


@pytest.mark.parametrize("n", [3, 10])
def test_candidates_are_capped_valid_and_seeded_on_the_poisson_trace(monkeypatch, n):
    # short leases, so winners' leases expire at the auctions; every log passes both checks
    cluster = _cluster({"racks": 12, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50,
                        "oversubscription": 2})
    trace = poisson_trace(2, hours=0.15)
    res, got = _run(ThemisCassini(lease=60.0, elastic=True, candidates=n), trace, cluster, monkeypatch, seed=4)
    assert got and all(1 <= len(c) <= n for _, c, _ in got)
    st = res.policy_stats["cassini"]
    assert st["candidate_rule"] == "reassignment" and st["renewed"] > 0
    assert st["rankings"] == len(got) and st["candidates"] == sum(len(c) for _, c, _ in got)
    assert 1.0 <= st["mean_link_sets"] <= n and 0.0 <= st["share_one_link_set"] <= 1.0
    for _, cands, _ in got:
        base = cands[0]
        for c in cands:
            assert set(c) == set(base) and all(len(c[j]) == len(base[j]) for j in base)
            gpus = [x for g in c.values() for x in g]
            assert len(gpus) == len(set(gpus))
    again, got2 = _run(ThemisCassini(lease=60.0, elastic=True, candidates=n), trace, cluster, monkeypatch, seed=4)
    assert list(again.log) == list(res.log) and again.policy_stats == res.policy_stats
    other, _ = _run(ThemisCassini(lease=60.0, elastic=True, candidates=n), trace, cluster, seed=5)
    assert other.policy_stats["cassini"]["rankings"] > 0


def test_the_reassignment_widens_the_choice_over_the_old_rule_when_leases_expire():
    cluster = _cluster({"racks": 12, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50,
                        "oversubscription": 2})
    trace = poisson_trace(2, hours=0.15)
    new, _ = _run(ThemisCassini(lease=60.0, elastic=True), trace, cluster)
    old, _ = _run(ThemisCassini(lease=60.0, elastic=True, candidate_rule="starting"), trace, cluster)
    a, b = new.policy_stats["cassini"], old.policy_stats["cassini"]
    assert b["renewed"] == 0 and a["renewed"] > 0
    assert a["link_sets"] > b["link_sets"]


def test_candidate_rule_is_an_option():
    from placement.app.policy_data import check_policy_options
    from placement.errors import InstanceError

    assert check_policy_options("themis+cassini", {"candidate_rule": "starting"}) == {"candidate_rule": "starting"}
    with pytest.raises(InstanceError, match="candidate_rule"):
        check_policy_options("themis+cassini", {"candidate_rule": "free"})
    with pytest.raises(ValueError, match="candidate_rule"):
        ThemisCassini(candidate_rule="free")
