"""Themis and Th+CASSINI on the §5.1 testbed, with links shared over time (CASSINI §4.2, §5).

This is its own event-driven simulation, not a policy of ``placement simulate`` (whose engine
shares links the same way, :mod:`placement.sim.links`, with CASSINI as a plug-in,
:mod:`solvers.online.cassini`; it does not count drift adjustments). Here the scheduler's
decisions happen at *scheduling events* (arrivals, departures, lease expiries) and between two
events the placement is fixed; that interval (an *epoch*) is run in the fluid link model of
:mod:`placement.cassini.fluid` for a measurement window, which gives each running job its iteration time in the
epoch, hence its progress and its finish time.

Set-up (§5.1, our reading)
--------------------------
topology
    :func:`placement.cassini.topology.testbed_topology`: 24 single-GPU servers, 50 Gbps, 12 ToRs of 2 servers
    under one core switch, 2:1 oversubscription. A rack is a ToR.
models
    :data:`CATALOGUE`: the 13 models of §5.1 as **synthetic** profiles (:mod:`placement.cassini.profiles`;
    the paper's measured profiles are not public): kind, iteration time (120-240 ms, so
    periods are commensurate as on the paper's testbed), Up fraction and bandwidth.
jobs
    Each asks 1-12 workers (uniform, §5.1) and keeps that count (gang, not elastic: Themis's
    tuning of the worker count is not modelled); its work is a number of iterations.
Themis (§5.1 "Themis", §4.2)
    Leases of 10 minutes; at every event the GPUs that are free or whose lease expired are
    auctioned: bidders (waiting jobs and jobs whose lease expired) are served in decreasing
    finish-time fairness ``rho = T_shared / T_ideal`` with ``T_shared`` = time since arrival +
    remaining iterations x estimated iteration time, ``T_ideal`` = the job's work alone x
    ``max(1, N * w / G)`` (its 1/N share of the cluster); a bidder wins if its gang fits the
    GPUs left. Placement (``packing="racks"``, default) minimises the racks a job spans (the
    effect of Themis's slowdown penalty for crossing racks; the penalty's value is not used, as
    the estimate of a running job's iteration time is what the fluid window measured). It returns up to ``N`` candidate
    placements with the same winners, worker counts and rack counts (§4.2 step 1), built from
    seeded rack orders; plain Themis takes the first. ``packing="anywhere"`` (a sensitivity)
    gives winners any free servers (seeded random subsets), as a network-agnostic placement would. Themis is network-agnostic: its jobs'
    iteration phases are unsynchronised (a seeded random offset per job and epoch).
Th+CASSINI (§4.2, Fig. 9)
    The same auction and candidates, ranked by Algorithm 2 (:func:`solvers.affinity.rank_candidates`
    on an instance of every running job; the package's per-link search and Affinity-graph BFS,
    5 degree precision); the top candidate's Algorithm 1 shifts are applied at the start of the
    epoch. Drift (§4.2 step 3, §5.6): in the fluid window an agent counts an *adjustment* each
    time a job's iteration boundary drifts by more than 5% of its ideal iteration from where the
    last adjustment put it; reported per minute (the fluid model re-applies no shift).
iteration-time samples
    One per job and epoch: the mean iteration time in the epoch's window after ``warmup``
    iterations, weighted by the iterations the job runs in the epoch (so mean and p99 are over
    iterations, as Fig. 11(b) plots every iteration's data point).
replay check
    :func:`replay_check` re-reads the log and recomputes every epoch's iteration times from the
    link model with an independent time-stepped integration (:func:`stepped_iteration_times`),
    and re-derives every job's progress and finish time from the log's epochs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from placement.cassini.catalogue import CATALOGUE, profile_of
from placement.cassini.instance import Candidate, build_instance
from placement.cassini.stepped import stepped_iteration_times, stepped_mean_iteration_times
from placement.cassini.topology import Topology, testbed_topology
from placement.sim.link_metrics import weighted_quantile
from placement.sim.network import fluid_window, mean_iterations
from solvers.affinity import rank_candidates

__all__ = ["CATALOGUE", "profile_of", "TraceJob", "poisson_trace", "sim_trace", "stress_trace", "Config", "run",
           "replay_check", "stepped_iteration_times", "weighted_quantile", "summary"]

DATA_PARALLEL = [m for m, (k, _, _) in CATALOGUE.items() if k == "data_parallel"]
LEASE_MS = 10 * 60_000.0


@dataclass(frozen=True)
class TraceJob:
    name: str
    model: str
    arrival: float        # ms
    workers: int
    iterations: int


def poisson_trace(seed: int, hours: float = 2.0, load: float = 0.9, gpus: int = 24,
                  mean_minutes: float = 20.0, models: list[str] | None = None) -> list[TraceJob]:
    """§5.1 Poisson trace: arrival rate set so that ``load`` of the GPUs serve jobs on average
    (``rate = load * G / (E[workers] * E[duration])``), workers uniform 1-12, durations
    exponential (mean ``mean_minutes`` alone, clipped to 2-90 min)."""
    rng = np.random.default_rng(seed)
    models = models or DATA_PARALLEL
    rate = load * gpus / (6.5 * mean_minutes)  # jobs per minute
    t, out = 0.0, []
    while True:
        t += rng.exponential(1.0 / rate)
        if t >= hours * 60:
            break
        m = str(rng.choice(models))
        dur = float(np.clip(rng.exponential(mean_minutes), 2, 90)) * 60_000.0
        out.append(TraceJob(f"j{len(out)}-{m}", m, t * 60_000.0, int(rng.integers(1, 13)),
                            max(1, int(dur / CATALOGUE[m][1]))))
    return out


def sim_trace(seed: int, gpus: int = 24, **kw):
    """:func:`poisson_trace` as a trace of the simulator (:mod:`placement.sim.trace`): submit and
    duration in seconds (iterations x the model's ideal iteration), GPUs = workers, the catalogue
    model named (so :mod:`placement.sim.links` gives each its profile)."""
    from placement.sim.trace import Job, Trace

    jobs = tuple(Job(j.name, j.arrival / 1000.0, min(j.workers, gpus), j.iterations * CATALOGUE[j.model][1] / 1000.0,
                     model=j.model, synthetic=frozenset({"submit", "gpus", "duration", "model"}))
                 for j in poisson_trace(seed, gpus=gpus, **kw))
    return Trace(f"cassini-poisson-{seed}", jobs, "CASSINI §5.1 Poisson trace (synthetic), solvers.cassini_testbed")


def stress_trace(seed: int, minutes: float = 30.0) -> list[TraceJob]:
    """Fig. 13's dynamic trace: the cluster busy with other data-parallel jobs (18 GPUs), then
    DLRM and ResNet50 arrive (3 workers each) one minute in."""
    rng = np.random.default_rng(seed)
    others = [m for m in DATA_PARALLEL if m != "ResNet50"]
    out, used = [], 0
    while used < 18:
        w = int(min(rng.integers(2, 5), 18 - used))
        m = str(rng.choice(others))
        out.append(TraceJob(f"b{len(out)}-{m}", m, 0.0, w, int(minutes * 60_000 / CATALOGUE[m][1]) * 4))
        used += w
    for m in ("DLRM", "ResNet50"):
        out.append(TraceJob(f"s-{m}", m, 60_000.0, 3, int(minutes * 60_000 / CATALOGUE[m][1]) * 4))
    return out


@dataclass
class Config:
    policy: str = "themis"               # "themis" | "themis+cassini"
    candidates: int = 10                 # N of §4.2 step 1 (§5.1: up to 10)
    window_iterations: int = 16          # fluid window per epoch, in the slowest ideal iteration
    warmup: int = 3                      # iterations skipped per job in each window
    loss: float = 0.0                    # congestion-loss factor of the fluid model (labelled)
    packing: str = "racks"               # "racks": fewest racks per job; "anywhere": any free servers
    until: float | None = None           # stop (ms); default: when every job finished
    topology: Topology = field(default_factory=testbed_topology)


def _racks(topo: Topology) -> dict[str, list[str]]:
    racks: dict[str, list[str]] = {}
    for lk in topo.links:
        a, b = lk.ends
        if a in topo.server_gpus:
            racks.setdefault(b, []).append(a)
    return racks


def _place(winners: list[tuple[str, int]], free: list[str], rack_of: dict[str, str], order: list[str]) -> dict:
    """Fewest racks per job: each job takes whole free racks in ``order`` preferring the rack
    set that fits it best (largest free racks first, then the given order)."""
    pool: dict[str, list[str]] = {}
    for s in free:
        pool.setdefault(rack_of[s], []).append(s)
    out = {}
    for job, w in winners:
        chosen: list[str] = []
        # a single rack that fits, else the fullest racks first
        fits = [r for r in order if len(pool.get(r, ())) >= w]
        if fits:
            r = min(fits, key=lambda r: (len(pool[r]), order.index(r)))
            chosen, pool[r] = pool[r][:w], pool[r][w:]
        else:
            for r in sorted((r for r in order if pool.get(r)), key=lambda r: (-len(pool[r]), order.index(r))):
                take = min(w - len(chosen), len(pool[r]))
                chosen += pool[r][:take]
                pool[r] = pool[r][take:]
                if len(chosen) == w:
                    break
        out[job] = tuple(chosen)
    return out


def _drift_adjustments(begin: float, ends: np.ndarray, ideal: float) -> int:
    """Adjustments an agent makes (§5.6): the boundary moved > 5% of the ideal iteration from
    where the last adjustment put it."""
    ref = begin
    k0 = 0
    n = 0
    for k, e in enumerate(ends, start=1):
        if abs(e - (ref + (k - k0) * ideal)) > 0.05 * ideal:
            n += 1
            ref, k0 = e, k
    return n


def _epoch_fluid(jobs: dict[str, TraceJob], placement: dict[str, tuple[str, ...]], shifts: dict[str, float],
                 cfg: Config) -> tuple[dict[str, float], int, dict[str, float]]:
    """One epoch in the fluid model (:func:`placement.sim.network.fluid_window`): iteration times,
    drift adjustments, link utilisation."""
    spec = {n: (profile_of(jobs[n].model, n), placement[n], float(shifts.get(n, 0.0))) for n in placement}
    names, r = fluid_window(cfg.topology, spec, window_iterations=cfg.window_iterations, loss=cfg.loss)
    adj = sum(_drift_adjustments(b, e, spec[n][0].iteration_time) for n, b, e in zip(names, r.begin, r.ends, strict=True))
    return mean_iterations(names, r, spec, cfg.warmup), adj, r.link_utilisation(cfg.topology.capacity)


def run(trace: list[TraceJob], cfg: Config, seed: int = 0) -> dict:
    """Run Themis or Th+CASSINI on a trace; returns the log (epochs, jobs, samples)."""
    if cfg.packing not in ("racks", "anywhere"):
        raise ValueError(f"packing: must be 'racks' or 'anywhere', got {cfg.packing!r}")
    if cfg.policy not in ("themis", "themis+cassini"):
        raise ValueError(f"policy: must be 'themis' or 'themis+cassini', got {cfg.policy!r}")
    topo = cfg.topology
    rng = np.random.default_rng(seed)
    racks = _racks(topo)
    rack_of = {s: r for r, ss in racks.items() for s in ss}
    servers = [s for s, _ in topo.servers]
    G = len(servers)
    jobs = {j.name: j for j in trace}
    for j in trace:
        if not 1 <= j.workers <= G:
            raise ValueError(f"workers: job {j.name} asks {j.workers}, the cluster has {G}")
    pending = sorted(trace, key=lambda j: (j.arrival, j.name))
    remaining = {j.name: float(j.iterations) for j in trace}
    est_iter = {j.name: float(CATALOGUE[j.model][1]) for j in trace}
    place: dict[str, tuple[str, ...]] = {}
    lease: dict[str, float] = {}
    waiting: list[str] = []
    finished: dict[str, float] = {}
    started: dict[str, float] = {}
    epochs: list[dict] = []
    t = 0.0
    iter_now: dict[str, float] = {}
    until = cfg.until if cfg.until is not None else math.inf
    while (pending or waiting or place) and t < until:
        while pending and pending[0].arrival <= t + 1e-9:
            waiting.append(pending.pop(0).name)
        # auction: free GPUs and expired leases
        expired = [n for n, e in lease.items() if e <= t + 1e-9]
        bidders = waiting + expired
        used = {s for n, ss in place.items() if n not in expired for s in ss}
        free = [s for s in servers if s not in used]
        n_active = max(1, len(place) + len(waiting))

        def rho(n: str, t: float = t, n_active: int = n_active) -> float:
            j = jobs[n]
            alone = j.iterations * CATALOGUE[j.model][1]
            t_sh = (t - j.arrival) + remaining[n] * est_iter[n]
            return t_sh / (alone * max(1.0, n_active * j.workers / G))

        bidders.sort(key=lambda n: (-rho(n), jobs[n].arrival, n))
        left = len(free)
        winners = []
        for n in bidders:
            if jobs[n].workers <= left:
                winners.append((n, jobs[n].workers))
                left -= jobs[n].workers
        win = {n for n, _ in winners}
        for n in expired:
            if n not in win:
                del place[n]
                del lease[n]
                waiting.append(n)
            else:
                del place[n]
        waiting = [n for n in waiting if n not in win]
        rack_order = list(racks)
        cands = []
        seen = set()
        for k in range(max(1, cfg.candidates) * 3):
            if cfg.packing == "anywhere":
                perm = list(rng.permutation(free))
                p, i0 = {}, 0
                for n, w in winners:
                    p[n], i0 = tuple(sorted(perm[i0:i0 + w])), i0 + w
            else:
                order = rack_order if k == 0 else list(rng.permutation(rack_order))
                p = _place(winners, free, rack_of, order)
            key = tuple(sorted(p.items()))
            if key in seen:
                continue
            if cands and cfg.packing != "anywhere":
                base = cands[0]
                if any(len({rack_of[s] for s in p[n]}) != len({rack_of[s] for s in base[n]}) for n in p):
                    continue
            seen.add(key)
            cands.append(p)
            if len(cands) >= cfg.candidates:
                break
        chosen = cands[0]
        shifts: dict[str, float] = {}
        score = None
        if cfg.policy == "themis+cassini" and winners and len(cands) > 1:
            running = {n: ss for n, ss in place.items() if n not in win}
            names = sorted(set(running) | win)
            profs = [profile_of(jobs[n].model, n) for n in names]
            cs = [Candidate(f"c{i}", tuple((n, {**running, **c}[n]) for n in names)) for i, c in enumerate(cands)]
            inst = build_instance(topo, profs, cs, precision_deg=5.0)
            rows = rank_candidates(inst, seed=seed)
            top = rows[0]
            chosen = cands[int(top["candidate"][1:])]
            shifts = {n: float(v) for n, v in (top["shifts"] or {}).items()}
            score = top["score"]
        for n, ss in chosen.items():
            place[n] = ss
            lease[n] = t + LEASE_MS
            started.setdefault(n, t)
        if cfg.policy == "themis+cassini" and winners and len(cands) == 1 and place:
            # one candidate: CASSINI still computes its shifts (Algorithm 1 on that placement)
            names = sorted(place)
            inst = build_instance(topo, [profile_of(jobs[n].model, n) for n in names],
                                  [Candidate("c0", tuple((n, place[n]) for n in names))], precision_deg=5.0)
            top = rank_candidates(inst, seed=seed)[0]
            shifts = {n: float(v) for n, v in (top["shifts"] or {}).items()}
            score = top["score"]
        if cfg.policy == "themis":
            shifts = {n: float(rng.uniform(0, CATALOGUE[jobs[n].model][1])) for n in place}
        elif not winners and epochs:
            shifts = dict(epochs[-1]["shifts"])
        # iteration times in this epoch
        if place:
            iter_now, adj, util = _epoch_fluid(jobs, place, shifts, cfg)
        else:
            iter_now, adj, util = {}, 0, {}
        for n, v in iter_now.items():
            est_iter[n] = v  # Themis re-estimates from what it measures
        # next event
        nxt = min([pending[0].arrival] if pending else [math.inf])
        nxt = min(nxt, min(lease.values(), default=math.inf))
        fin = {n: t + remaining[n] * iter_now[n] for n in place}
        nxt = min(nxt, min(fin.values(), default=math.inf), until)
        if not math.isfinite(nxt):
            if waiting:
                raise RuntimeError(f"workers: jobs {waiting[:3]} can never start")
            break
        dt = nxt - t
        epochs.append({"t": t, "end": nxt, "placement": {n: list(ss) for n, ss in place.items()},
                       "shifts": shifts, "iteration": dict(iter_now), "adjustments": adj,
                       "score": score, "candidates": len(cands), "winners": sorted(win),
                       "utilisation": util})
        for n in list(place):
            remaining[n] -= dt / iter_now[n]
            if remaining[n] <= 1e-6:
                remaining[n] = 0.0
                finished[n] = nxt
                del place[n]
                del lease[n]
        t = nxt
    samples = []
    for e in epochs:
        for n, v in e["iteration"].items():
            samples.append((n, jobs[n].model, v, (e["end"] - e["t"]) / v, float(CATALOGUE[jobs[n].model][1])))
    return {"policy": cfg.policy, "seed": seed, "loss": cfg.loss, "epochs": epochs,
            "jobs": [j.__dict__ for j in trace], "finished": finished, "started": started,
            "samples": samples, "window_iterations": cfg.window_iterations, "warmup": cfg.warmup}


def summary(log: dict) -> dict:
    """Iteration time mean and p99 over iterations, the Ideal (alone) ones, JCT, adjustments/min."""
    s = log["samples"]
    v = np.array([x[2] for x in s])
    w = np.array([x[3] for x in s])
    ideal = np.array([x[4] for x in s])
    jct = [log["finished"][j["name"]] - j["arrival"] for j in log["jobs"] if j["name"] in log["finished"]]
    span = sum(e["end"] - e["t"] for e in log["epochs"]) / 60_000.0
    return {"iter_mean": float(np.average(v, weights=w)) if len(v) else math.nan,
            "iter_p99": weighted_quantile(v, w, 0.99),
            "ideal_mean": float(np.average(ideal, weights=w)) if len(v) else math.nan,
            "ideal_p99": weighted_quantile(ideal, w, 0.99),
            "slowdown_mean": float(np.average(v / ideal, weights=w)) if len(v) else math.nan,
            "jct_mean_min": float(np.mean(jct)) / 60_000.0 if jct else math.nan,
            "finished": len(jct), "epochs": len(log["epochs"]),
            "adjustments_per_min": sum(e["adjustments"] for e in log["epochs"]) / max(span, 1e-9)}


def replay_check(log: dict, cfg: Config, epochs: list[int] | None = None, tol: float = 0.02,
                 dt: float = 0.5) -> list[str]:
    """Problems found re-reading a log: each checked epoch's iteration times recomputed by the
    time-stepped integration (relative tolerance ``tol``), progress and finish times re-derived,
    no GPU given twice, every gang of its asked size."""
    errs: list[str] = []
    jobs = {j["name"]: j for j in log["jobs"]}
    topo = cfg.topology
    done = {n: 0.0 for n in jobs}
    for k, e in enumerate(log["epochs"]):
        owned = [s for ss in e["placement"].values() for s in ss]
        if len(owned) != len(set(owned)):
            errs.append(f"epoch {k}: a server given twice")
        for n, ss in e["placement"].items():
            if len(ss) != jobs[n]["workers"]:
                errs.append(f"epoch {k}: {n} has {len(ss)} workers, asked {jobs[n]['workers']}")
            done[n] += (e["end"] - e["t"]) / e["iteration"][n]
        if epochs is not None and k not in epochs or not e["placement"]:
            continue
        names = sorted(e["placement"])
        specs = [(profile_of(jobs[n]["model"], n), topo.job_links(tuple(e["placement"][n])),
                  float(e["shifts"].get(n, 0.0))) for n in names]
        window = log["window_iterations"] * max(p.iteration_time for p, _, _ in specs)
        wants = stepped_mean_iteration_times(specs, topo.capacity,
                                             window + max(s for _, _, s in specs),
                                             log["warmup"], loss=log["loss"], dt=dt)
        for n, want in zip(names, wants, strict=True):
            if abs(want - e["iteration"][n]) > tol * want:
                errs.append(f"epoch {k}: {n} iteration {e['iteration'][n]:.2f} ms, recomputed {want:.2f} ms")
    for n, j in jobs.items():
        if n in log["finished"] and abs(done[n] - j["iterations"]) > 1e-6 * j["iterations"]:
            errs.append(f"{n}: finished after {done[n]:.3f} of {j['iterations']} iterations")
    return errs
