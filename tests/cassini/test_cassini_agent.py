"""§4.2 step 3's agent in the fluid model (a shifted job re-aligns when an iteration boundary,
hence its communication start, drifts more than 5% of the ideal iteration off its plan), its
independent recomputation in the exact-step check, and seeded timing noise."""

from __future__ import annotations

import numpy as np
import pytest

from placement.cassini.fluid import FluidJob, simulate
from placement.cassini.profiles import data_parallel
from placement.cassini.stepped import exact_step_iteration_times

P = data_parallel("p", 100, 0.5, 40)     # Down 50 ms, Up 50 ms at 40 Gbps


def _run(shifts, agents, noise=0.0, seed=0, iterations=6, cap=50.0):
    jobs = [FluidJob(data_parallel(f"j{i}", 100, 0.5, 40), ("l",), shift=s, iterations=iterations, agent=a)
            for i, (s, a) in enumerate(zip(shifts, agents, strict=True))]
    return simulate(jobs, {"l": cap}, noise=noise, seed=seed)


def test_in_phase_pair_waits_for_the_next_grid_point_each_iteration():
    # together on 50 Gbps: each Up phase gets 25 Gbps and lasts 80 ms; the first iteration ends
    # at 130 (the agent's plan starts there), the second at 260, 30 ms (> 5 ms) off the plan
    # (230): the agent waits until 330; every later iteration likewise; the pair stays in phase
    r = _run([0.0, 0.0], [True, True])
    assert [float(x) for x in r.iteration_times()[0]] == pytest.approx([130.0, 130.0] + [200.0] * 4)
    assert r.adjustments == [4, 4]          # ends 2-5 (the last one is the job's end: no wait)
    # without the agent the pair runs at 130 ms per iteration and nobody counts
    r0 = _run([0.0, 0.0], [False, False])
    assert [float(x) for x in r0.iteration_times()[0]] == pytest.approx([130.0] * 6)
    assert r0.adjustments == [0, 0]


def test_interleaved_pair_and_a_job_alone_never_adjust():
    r = _run([0.0, 50.0], [True, True])
    assert np.allclose(np.concatenate(r.iteration_times()), 100.0) and r.adjustments == [0, 0]


def test_noise_is_seeded_off_by_default_and_the_agent_keeps_the_shift():
    a = _run([0.0, 50.0], [True, True], noise=0.05, seed=4, iterations=200)
    b = _run([0.0, 50.0], [True, True], noise=0.05, seed=4, iterations=200)
    assert [list(x) for x in a.ends] == [list(x) for x in b.ends] and a.adjustments == b.adjustments
    assert _run([0.0, 50.0], [True, True], noise=0.05, seed=5, iterations=200).adjustments != a.adjustments \
        or sum(a.adjustments) == 0
    # with the agent every boundary is within 5 ms (5%) of the plan before its last iteration's
    # noise (sd 2.5 ms): the pair keeps its shift; without it the phases random-walk into contention
    free = _run([0.0, 50.0], [False, False], noise=0.05, seed=4, iterations=200)
    for r, bound in ((a, 5.0 + 4 * 0.05 * 50), (free, None)):
        dev = []
        for ends, shift in zip(r.ends, (0.0, 50.0), strict=True):
            off = (ends - shift) % 100.0
            dev.append(float(np.minimum(off, 100.0 - off).max()))
        if bound is None:
            assert max(dev) > 25.0 and free.adjustments == [0, 0]
        else:
            assert max(dev) <= bound and min(a.adjustments) > 0
    with pytest.raises(ValueError, match="noise"):
        _run([0.0], [True], noise=-0.1)


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_step_check_recomputes_the_agent(seed):
    rng = np.random.default_rng(seed)
    profs = [data_parallel(f"j{i}", int(rng.choice([60, 100, 120])), float(rng.choice([0.3, 0.5])),
                           float(rng.choice([20, 40, 45]))) for i in range(3)]
    shifts = [float(rng.uniform(0, p.iteration_time)) for p in profs]
    agents = [bool(rng.integers(2)) for _ in profs]
    # odd seeds: the agents plan on a stretched rhythm (links.py plans on the set's own)
    plans = [p.iteration_time * float(rng.uniform(1.0, 1.3)) for p in profs] if seed % 2 else None
    horizon = 2000.0
    jobs = [FluidJob(p, ("l",), shift=s, iterations=10**9, agent=a, plan=None if plans is None else plans[i])
            for i, (p, s, a) in enumerate(zip(profs, shifts, agents, strict=True))]
    r = simulate(jobs, {"l": 50.0}, horizon=horizon, shared_goodput=0.88)
    ex = exact_step_iteration_times([(p, ("l",), s) for p, s in zip(profs, shifts, strict=True)], {"l": 50.0},
                                    r.horizon, shared_goodput=0.88, agents=agents, plans=plans)
    for a, b in zip(r.ends, ex, strict=True):
        a = a[a < r.horizon - 1e-9]
        assert len(a) == len(b) and np.allclose(a, b, rtol=0, atol=1e-6)


def test_the_link_model_with_the_agent_and_its_replay_check():
    from placement.cassini.catalogue import CATALOGUE, profile_of
    from placement.sim.cluster import Cluster
    from placement.sim.engine import simulate as run
    from placement.sim.link_check import link_factor_check
    from placement.sim.links import LinkSharing
    from placement.sim.perf import IdealPerf
    from placement.sim.policies import make_policy
    from placement.sim.replay import replay_check
    from placement.sim.trace import Job, Trace

    net = {"racks": 2, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50, "oversubscription": 2}
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=1).with_network(net)
    # two VGG16 on (s0, s2) and (s1, s3) started together: both cross both rack uplinks in phase
    trace = Trace("t", (Job("a", 0.0, 2, 60.0, model="VGG16"), Job("b", 0.0, 2, 60.0, model="VGG16")))
    ideal = CATALOGUE["VGG16"][1]
    up, bw = profile_of("VGG16", "x").phases[1]
    stretched = ideal - up + up * bw / 25          # > 1.05 ideal: on the ideal grid the agent would wait
    assert stretched > 1.05 * ideal
    on, off = LinkSharing(cluster, agent="all"), LinkSharing(cluster)
    running = {"a": (trace.jobs[0], (0, 2), 0.0), "b": (trace.jobs[1], (1, 3), 0.0)}
    # the agent plans on the pair's own stretched rhythm: locked in phase, they are on plan
    assert off.factors(running) == pytest.approx({"a": ideal / stretched, "b": ideal / stretched})
    assert on.factors(running) == pytest.approx(off.factors(running))
    assert on.adjustment_rates(running)["a"] == (0.0, 0.0)
    interleaved = {"a": running["a"], "b": running["b"][:2] + (ideal - up,)}
    assert on.factors(interleaved) == {"a": 1.0, "b": 1.0} and on.adjustment_rates(interleaved)["a"][0] == 0.0
    # a VGG16 and a BERT started together drift against any common rhythm: the agent re-aligns them
    mixed = {"a": running["a"], "b": (Job("b", 0.0, 2, 60.0, model="BERT"), (1, 3), 0.0)}
    assert on.adjustment_rates(mixed)["a"][0] > 0
    assert all(on.factors(mixed)[j] < off.factors(mixed)[j] for j in "ab")     # its waits cost time here
    # an engine run with the agent's link model passes the replay with the agent's check, not without:
    # two 3-GPU jobs on 3 racks of 2 started together share a rack uplink
    net3 = {**net, "racks": 3}
    c3 = Cluster.uniform(racks=3, machines=2, gpus_per_machine=1).with_network(net3)
    t3 = Trace("t", (Job("a", 0.0, 3, 60.0, model="VGG16"), Job("b", 0.0, 3, 60.0, model="BERT")))
    on3, off3 = LinkSharing(c3, agent="all"), LinkSharing(c3)
    res = run(t3, c3, make_policy("fifo"), perf=IdealPerf(), links=on3)
    plain = run(t3, c3, make_policy("fifo"), perf=IdealPerf(), links=off3)
    assert min(r.time for r in res.log if r.event == "finish") > min(r.time for r in plain.log if r.event == "finish")
    assert replay_check(t3, c3, res.log, perf=IdealPerf(), checks=[link_factor_check(on3)]) == []
    assert replay_check(t3, c3, res.log, perf=IdealPerf(), checks=[link_factor_check(off3)]) != []


def test_the_agent_acts_only_on_compatible_sets_and_the_check_follows():
    """The paper's premise (``agent=True``, :data:`placement.sim.links.AGENT_MIN_SCORE`): a set no
    shift makes compatible (score < 0.99) runs without the agent (no adjustment, the plain link
    model's factor); a score-1 set keeps its shifts with the agent on; the link check recomputes the
    same gate (a log of the every-link agent fails it)."""
    from placement.cassini.catalogue import CATALOGUE, profile_of
    from placement.sim.cluster import Cluster
    from placement.sim.engine import simulate as run
    from placement.sim.link_check import link_factor_check
    from placement.sim.links import AGENT_MIN_SCORE, LinkSharing, set_score
    from placement.sim.perf import IdealPerf
    from placement.sim.policies import make_policy
    from placement.sim.replay import replay_check
    from placement.sim.trace import Job, Trace

    net = {"racks": 2, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50, "oversubscription": 2}
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=1).with_network(net)
    trace = Trace("t", (Job("a", 0.0, 2, 60.0, model="VGG16"), Job("b", 0.0, 2, 60.0, model="VGG16")))
    ideal = CATALOGUE["VGG16"][1]
    p = profile_of("VGG16", "x")
    up, bw = p.phases[1]
    premise, every, off = LinkSharing(cluster, agent=True), LinkSharing(cluster, agent="all"), LinkSharing(cluster)
    inphase = {"a": (trace.jobs[0], (0, 2), 0.0), "b": (trace.jobs[1], (1, 3), 0.0)}
    links = premise.links((0, 2))
    # Table 1's score in phase: the Up phases overlap for `up` ms at 2 x bw on each uplink
    assert set_score([(p, links, 0.0), (p, links, 0.0)], premise.topology.capacity) == pytest.approx(
        1 - up * (2 * bw - 50) / (ideal * 50))
    assert set_score([(p, links, 0.0), (p, links, 0.0)], premise.topology.capacity) < AGENT_MIN_SCORE
    assert premise.factors(inphase) == pytest.approx(off.factors(inphase))          # no agent on it
    assert premise.adjustment_rates(inphase)["a"] == (0.0, 0.0)
    mixed = {"a": inphase["a"], "b": (Job("b", 0.0, 2, 60.0, model="BERT"), (1, 3), 0.0)}
    assert every.factors(mixed)["a"] < off.factors(mixed)["a"]                      # the agent's waits
    assert premise.factors(mixed) == pytest.approx(off.factors(mixed))              # gated off: score < 0.99
    assert premise.stats["agent_off"] == 2 and premise.stats["agent_on"] == 0
    # a Down phase apart (phases need not be whole ms): score 1, the agent keeps the shifts
    shifted = {"a": inphase["a"], "b": inphase["b"][:2] + (ideal - up - 7.25,)}
    assert set_score([(p, links, 0.0), (p, links, ideal - up - 7.25)], premise.topology.capacity) == 1.0
    assert premise.factors(shifted) == {"a": 1.0, "b": 1.0} and premise.stats["agent_on"] == 1
    assert premise.adjustment_rates(shifted)["a"] == (0.0, 0.0)
    # the link check follows the gate: an engine run under each rule passes its own check only
    net3 = {**net, "racks": 3}
    c3 = Cluster.uniform(racks=3, machines=2, gpus_per_machine=1).with_network(net3)
    t3 = Trace("t", (Job("a", 0.0, 3, 60.0, model="VGG16"), Job("b", 0.0, 3, 60.0, model="BERT")))
    logs = {}
    for name in (True, "all"):
        links3 = LinkSharing(c3, agent=name)
        logs[name] = run(t3, c3, make_policy("fifo"), perf=IdealPerf(), links=links3).log
    for name, log in logs.items():
        for other in (True, "all"):
            broken = replay_check(t3, c3, log, perf=IdealPerf(), checks=[link_factor_check(LinkSharing(c3, agent=other))])
            assert (broken == []) == (name == other)
    with pytest.raises(ValueError, match="agent"):
        LinkSharing(cluster, agent="some")
