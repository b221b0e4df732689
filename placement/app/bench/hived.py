"""HiveD benchmark sections (app layer): allocator speed at scale, feasibility, fragmentation.

Sections
--------
Buddy allocation at scale (§5.3)
    The paper's cluster: racks of 1,024 8-GPU nodes (levels GPU, PCIe switch,
    socket, node, rack); guaranteed requests at uniformly random levels 1-4
    from 8 VCs whose reservations are exactly those requests (all legal), then
    every cell released in random order. Per-request median and p99, from 1 to
    8 racks (10,000 requests at 65,536 GPUs, scaled with the cluster) to show
    the cost stays flat, and a run at 8 racks with a low-priority request
    before every 10th guaranteed one; ``--scale`` adds 16 and 32 racks.
Feasibility
    Closed form (Eq. 1) vs the exact model over a sweep of generated
    assignments (feasible and infeasible): agreement and time.
Fragmentation (Figure 11 trend)
    One job trace (Poisson arrivals, exponential durations, tenant-specific
    job-size mixes over 1/2/4/8 GPUs) replayed under three schemes with the
    same GPUs per tenant: multi-level cells (each tenant's reservation follows
    its size mix), node-level cells only, and the quota baseline. Tenants pack
    jobs into their own bound cells (a job binds a new cell, of the smallest
    reserved level that fits, only when none of its bound cells has an aligned
    free block; a cell is unbound when its last job ends). Fragmentation = the
    share of 8-GPU nodes that are partly busy (0 < busy GPUs < 8): they cannot
    host a guaranteed 8-GPU job. A job that cannot run guaranteed (over quota,
    no legal cell) runs as a preemptible low-priority job if idle GPUs allow,
    else it is dropped and counted. A guaranteed job within quota that still
    finds no cell of its affinity is a sharing anomaly (quota baseline only:
    with cells a legal request never fails). Offered loads 0.75 and 1.2.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ...hived.feasibility import is_feasible
from ...registry import BenchSection, resolve
from ..report import markdown_table as _md
from ..report import save_figure as _save

__all__ = ["bench_sections", "scale_run", "feasibility_sweep", "fragmentation_run", "job_trace"]

SIZES = (1, 2, 4, 8)


# ----------------------------------------------------------------------------- scale

def scale_run(racks: int, n_requests: int, seed: int = 0, low_every: int = 0) -> dict:
    """Time guaranteed allocations and releases on the §5.3 cluster (see the module docstring)."""
    from placement.instances import paper_cluster

    buddy = resolve("placement.solvers.buddy:BuddyAllocator")
    rng = np.random.default_rng(seed)
    levels = rng.integers(1, 5, size=n_requests)
    vcs = rng.integers(0, 8, size=n_requests)
    res: dict[str, dict[int, int]] = {f"vc{t}": {} for t in range(8)}
    for t, k in zip(vcs, levels, strict=True):
        res[f"vc{t}"][int(k)] = res[f"vc{t}"].get(int(k), 0) + 1
    inst = paper_cluster(racks=racks, reservations=res)
    alloc = buddy(inst)
    pc = time.perf_counter_ns
    t_alloc = np.empty(n_requests)
    t_low: list[int] = []
    cells = []
    preempted = 0
    for j in range(n_requests):
        if low_every and j % low_every == 0:
            a = pc()
            alloc.allocate_low(("low", j), 0, int(rng.integers(1, 5)))
            t_low.append(pc() - a)
        a = pc()
        got = alloc.allocate(int(vcs[j]), 0, int(levels[j]))
        t_alloc[j] = pc() - a
        if got is None:
            raise AssertionError("a legal request failed under a feasible assignment")
        preempted += len(got.preempted)
        cells.append(got.cell)
    t_rel = np.empty(n_requests)
    for j in rng.permutation(n_requests):
        a = pc()
        alloc.release(cells[j])
        t_rel[j] = pc() - a
    out = {"racks": racks, "gpus": inst.chains[0].total_gpus, "requests": n_requests,
           "alloc_median_us": float(np.median(t_alloc)) / 1e3, "alloc_p99_us": float(np.percentile(t_alloc, 99)) / 1e3,
           "alloc_mean_us": float(t_alloc.mean()) / 1e3,
           "release_median_us": float(np.median(t_rel)) / 1e3, "release_p99_us": float(np.percentile(t_rel, 99)) / 1e3}
    if low_every:
        out.update(low_requests=len(t_low), low_median_us=float(np.median(t_low)) / 1e3,
                   low_p99_us=float(np.percentile(t_low, 99)) / 1e3, preempted=preempted)
    return out


# ----------------------------------------------------------------------------- feasibility

def feasibility_sweep(n: int, seed: int = 0, big: bool = False) -> list[dict]:
    """Closed form vs exact model on ``n`` generated assignments."""
    from placement.instances import generate_hived

    exact = resolve("placement.models.hived:solve")
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(n):
        chains, levels = int(rng.integers(1, 4)), int(rng.integers(3, 6))
        top = int(rng.integers(4, 17)) if big else int(rng.integers(2, 7))
        inst = generate_hived(chains, levels, top, int(rng.integers(3, 9)), seed=seed * 1000 + j,
                              overload=int(rng.integers(0, 3)), n_pinned=int(rng.integers(0, 3)))
        t0 = time.perf_counter()
        closed = is_feasible(inst)
        t_closed = time.perf_counter() - t0
        ex = exact(inst, time_limit=30.0)
        rows.append({"instance": inst.name, "gpus": sum(c.total_gpus for c in inst.chains),
                     "reserved_cells": inst.n_reserved, "closed_form": closed,
                     "exact": ex.objective == inst.n_reserved if ex.status == "optimal" else None,
                     "exact_status": str(ex.status), "exact_honoured": ex.objective,
                     "closed_s": t_closed, "exact_s": ex.wall_time_s, "binaries": ex.stats.get("binaries")})
    return rows


# ----------------------------------------------------------------------------- fragmentation

def job_trace(n_tenants: int, n_jobs: int, capacity: int, load: float, seed: int) -> tuple[list, np.ndarray]:
    """Jobs ``(arrival, duration, tenant, gpus)`` sorted by arrival, and each tenant's size mix."""
    rng = np.random.default_rng(seed)
    mix = rng.dirichlet(np.array([2.0, 1.2, 0.8, 0.8]), size=n_tenants)
    weight = rng.dirichlet(np.full(n_tenants, 3.0))
    tenant = rng.choice(n_tenants, size=n_jobs, p=weight)
    gpus = np.array([rng.choice(SIZES, p=mix[t]) for t in tenant])
    mean_dur = 10.0
    rate = load * capacity / (mean_dur * gpus.mean())
    arrival = np.cumsum(rng.exponential(1.0 / rate, size=n_jobs))
    dur = rng.exponential(mean_dur, size=n_jobs)
    return [(float(arrival[j]), float(dur[j]), int(tenant[j]), int(gpus[j])) for j in range(n_jobs)], mix


def _reservations(mix: np.ndarray, share: np.ndarray, capacity: int, node_only: bool) -> dict[str, dict[int, int]]:
    """Same GPUs per tenant (multiples of 8); multi-level cells follow the tenant's GPU-demand mix."""
    out = {}
    for t in range(len(mix)):
        gpus = int(share[t] * capacity) // 8 * 8
        if node_only:
            out[f"t{t}"] = {4: gpus // 8}
            continue
        demand = mix[t] * np.array(SIZES)
        demand /= demand.sum()
        cells = {k + 1: int(gpus * demand[k]) // SIZES[k] for k in range(4)}
        cells[1] += gpus - sum(n * SIZES[k - 1] for k, n in cells.items())
        out[f"t{t}"] = cells
    return out


def fragmentation_run(scheme: str, jobs: list, mix: np.ndarray, racks: int = 2, nodes_per_rack: int = 32,
                      warmup: float = 0.2, opportunistic: bool = True) -> dict:
    """Replay ``jobs`` under ``scheme`` in {"multi-level", "node-level", "quota"}; see the module docstring.

    With ``opportunistic`` a job that cannot run guaranteed (over quota, or no
    legal cell) runs as a preemptible low-priority job when idle GPUs allow it;
    a guaranteed job preempts such jobs (they are killed and counted).
    """
    import heapq

    from placement.instances import paper_cluster

    capacity = racks * nodes_per_rack * 8
    n_t = len(mix)
    weight = np.bincount([j[2] for j in jobs], weights=[j[3] * j[1] for j in jobs], minlength=n_t)
    share = 0.95 * weight / weight.sum()
    inst = paper_cluster(racks, nodes_per_rack, _reservations(mix, share, capacity, scheme == "node-level"))
    if not is_feasible(inst):
        raise AssertionError("the generated reservation must be feasible")
    busy = np.zeros(capacity, dtype=np.int8)
    events: list[tuple[float, int, int]] = [(a, 1, j) for j, (a, _d, _t, _g) in enumerate(jobs)]
    heapq.heapify(events)
    placed: dict[int, tuple] = {}  # job -> ("g" | "l", where)
    dropped = anomalies = preempted = low_run = 0
    t_end = jobs[-1][0]
    samples, series = [], []
    if scheme == "quota":
        q = resolve("placement.solvers.quota:QuotaAllocator")(inst)
        over_quota = resolve("placement.solvers.quota:OverQuota")
    else:
        alloc = resolve("placement.solvers.buddy:BuddyAllocator")(inst)
        ch = inst.chains[0]
        bound: list[dict[tuple[int, int, int], np.ndarray]] = [{} for _ in range(n_t)]

    def kill(victims) -> None:
        nonlocal preempted
        for v in victims:
            kind, where = placed.pop(v)
            preempted += 1
            if scheme == "quota":
                busy[where] = 0
            else:
                lv = ch.leaves(where[1], where[2])
                busy[lv.start:lv.stop] = 0

    while events:
        now, kind, j = heapq.heappop(events)
        _a, dur, t, g = jobs[j]
        if kind == 0:  # a job ends (unless it was preempted)
            if j not in placed:
                continue
            mode, where = placed.pop(j)
            if scheme == "quota":
                q.release(j)
                busy[where] = 0
            elif mode == "l":
                alloc.release_low(j)
                lv = ch.leaves(where[1], where[2])
                busy[lv.start:lv.stop] = 0
            else:
                cell, pos = where
                occ = bound[t][cell]
                occ[pos:pos + g] = False
                base = cell[2] * ch.gpus[cell[1]] + pos
                busy[base:base + g] = 0
                if not occ.any():
                    del bound[t][cell]
                    alloc.release(cell)
        elif scheme == "quota":
            try:
                got, within = q.allocate(t, g, j), True
            except over_quota:
                got, within = None, False
            if got is not None:
                kill(got[1])
                placed[j] = ("g", got[0])
            else:
                anomalies += within  # within quota, yet no cell of the needed affinity
                got = q.allocate(t, g, j, low=True) if opportunistic else None
                if got is not None:
                    placed[j] = ("l", got[0])
                    low_run += 1
            if j in placed:
                busy[placed[j][1]] = 1
        else:
            spot, best = None, None
            for cell, occ in bound[t].items():  # best fit among the tenant's bound cells
                for pos in range(0, len(occ), g):
                    if not occ[pos:pos + g].any() and (best is None or occ.sum() > best):
                        spot, best = (cell, pos), occ.sum()
                        break
            if spot is None:
                for k in range(ch.level_for_gpus(g), ch.top + 1):
                    if alloc.a[t].get((0, k), 0) < alloc.r[t].get((0, k), 0):
                        got = alloc.allocate(t, 0, k)
                        if got is None:
                            raise AssertionError("a legal request failed (Theorem 1)")
                        kill(got.preempted)
                        bound[t][got.cell] = np.zeros(ch.gpus[k], dtype=bool)
                        spot = (got.cell, 0)
                        break
            if spot is not None:
                cell, pos = spot
                bound[t][cell][pos:pos + g] = True
                base = cell[2] * ch.gpus[cell[1]] + pos
                busy[base:base + g] = 1
                placed[j] = ("g", spot)
            elif opportunistic:
                cell = alloc.allocate_low(j, 0, ch.level_for_gpus(g))
                if cell is not None:
                    lv = ch.leaves(cell[1], cell[2])
                    busy[lv.start:lv.start + g] = 1
                    placed[j] = ("l", cell)
                    low_run += 1
        if kind == 1:
            if j in placed:
                heapq.heappush(events, (now + dur, 0, j))
            else:
                dropped += 1
        if warmup * t_end <= now <= t_end:
            per_node = busy.reshape(-1, 8).sum(axis=1)
            frag = float(((per_node > 0) & (per_node < 8)).mean())
            samples.append(frag)
            series.append((now, frag, float(busy.mean())))
    return {"scheme": scheme, "gpus": capacity, "jobs": len(jobs), "dropped": dropped,
            "admitted_share": 1 - dropped / len(jobs), "low_priority_runs": low_run, "preempted": preempted,
            "anomalies": anomalies, "fragmentation_mean": float(np.mean(samples)),
            "fragmentation_p90": float(np.percentile(samples, 90)), "series": series}


# ----------------------------------------------------------------------------- sections

def bench_sections(out_dir: Path, quick: bool = False, scale: bool = False, seed: int = 0,
                   progress=None) -> list[BenchSection]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    sections = []
    task = progress.add_task("hived: extra sections", total=3) if progress is not None else None

    # 1. allocator speed
    racks_list = [1, 2, 4, 8] if not quick else [1, 8]
    if scale:
        racks_list += [16, 32]
    rows = [scale_run(r, 1250 * r, seed=seed) for r in racks_list]
    mixed = scale_run(8, 10_000, seed=seed, low_every=10) if not quick else None
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot([r["gpus"] for r in rows], [r["alloc_median_us"] for r in rows], "o-", label="allocate, median")
    ax.plot([r["gpus"] for r in rows], [r["alloc_p99_us"] for r in rows], "s--", label="allocate, p99")
    ax.plot([r["gpus"] for r in rows], [r["release_median_us"] for r in rows], "^-", label="release, median")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("GPUs in the cluster")
    ax.set_ylabel("µs per request")
    ax.set_title("buddy cell allocation: cost per request vs cluster size")
    ax.legend()
    fig.tight_layout()
    fig_speed = _save(fig, out_dir, "hived_alloc_scale.png")
    plt.close(fig)
    big = next(r for r in rows if r["racks"] == 8)
    flat = max(r["alloc_median_us"] for r in rows) / min(r["alloc_median_us"] for r in rows)
    md = _md(rows, ["racks", "gpus", "requests", "alloc_median_us", "alloc_p99_us", "alloc_mean_us",
                    "release_median_us", "release_p99_us"])
    summary = [f"hived: buddy allocation at 65,536 GPUs: median {big['alloc_median_us']:.1f} µs, "
               f"p99 {big['alloc_p99_us']:.1f} µs per guaranteed request (paper's Go: 2.18 ms mean); "
               f"largest/smallest median over {len(rows)} cluster sizes = {flat:.2f}"]
    if mixed is not None:
        md += ("\n\nWith a low-priority request before every 10th guaranteed one (8 racks): guaranteed median "
               f"{mixed['alloc_median_us']:.1f} µs, p99 {mixed['alloc_p99_us']:.1f} µs; low-priority median "
               f"{mixed['low_median_us']:.1f} µs, p99 {mixed['low_p99_us']:.1f} µs (the paper's Go spent 88% of its "
               f"2.18 ms ordering cells by low-priority use); {mixed['preempted']} preemption(s).")
        summary.append(f"hived: with low-priority work interleaved, guaranteed median {mixed['alloc_median_us']:.1f} µs,"
                       f" low-priority median {mixed['low_median_us']:.1f} µs")
    sections.append(BenchSection("HiveD: buddy cell allocation at scale (§5.3)", md, rows, [fig_speed], summary))
    if task is not None:
        progress.advance(task)

    # 2. feasibility: closed form vs exact
    frows = feasibility_sweep(8 if quick else 30, seed=seed)
    if scale:
        frows += feasibility_sweep(20, seed=seed + 1, big=True)
    agree = sum(r["closed_form"] == r["exact"] for r in frows)
    ratio = statistics.median(r["exact_s"] / max(r["closed_s"], 1e-9) for r in frows)
    n_inf = sum(not r["closed_form"] for r in frows)
    md = _md(frows, ["instance", "gpus", "reserved_cells", "closed_form", "exact", "exact_honoured", "binaries",
                     "closed_s", "exact_s"])
    sections.append(BenchSection(
        "HiveD: feasibility, closed form (Eq. 1) vs exact model", md, frows, [],
        [f"hived: closed form and exact model agree on {agree}/{len(frows)} assignments ({n_inf} infeasible); "
         f"exact model median {ratio:.0f}x slower"]))
    if task is not None:
        progress.advance(task)

    # 3. fragmentation (and the sharing anomaly under overload)
    racks, npr, n_jobs = (2, 32, 1500) if quick else (2, 32, 4000)
    if scale:
        racks, npr, n_jobs = 4, 64, 20000
    table, runs = [], {}
    for load in (0.75, 1.2):
        jobs, mix = job_trace(6, n_jobs, racks * npr * 8, load=load, seed=seed)
        for scheme in ("multi-level", "node-level", "quota"):
            r = fragmentation_run(scheme, jobs, mix, racks, npr)
            runs[(load, scheme)] = r
            table.append({"offered_load": load, **{k: v for k, v in r.items() if k != "series"}})
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for scheme in ("multi-level", "node-level", "quota"):
        r = runs[(0.75, scheme)]
        ts = np.array([s[0] for s in r["series"]])
        fr = np.array([s[1] for s in r["series"]])
        step = max(1, len(ts) // 400)
        ax.plot(ts[::step], 100 * fr[::step], label=scheme, lw=1)
    ax.set_xlabel("time")
    ax.set_ylabel("partly busy nodes (%)")
    ax.set_title("fragmentation of GPU affinity, offered load 0.75 (Figure 11 trend)")
    ax.legend()
    fig.tight_layout()
    fig_frag = _save(fig, out_dir, "hived_fragmentation.png")
    plt.close(fig)
    md = _md(table, ["offered_load", "scheme", "gpus", "jobs", "admitted_share", "dropped", "low_priority_runs",
                     "preempted", "anomalies", "fragmentation_mean", "fragmentation_p90"])
    m, n, q = (runs[(0.75, s)]["fragmentation_mean"] for s in ("multi-level", "node-level", "quota"))
    sections.append(BenchSection(
        "HiveD: fragmentation, multi-level vs node-level cells vs quota", md, table, [fig_frag],
        [f"hived: partly busy nodes at load 0.75: {100 * m:.1f}% multi-level cells vs {100 * n:.1f}% node-level "
         f"only vs {100 * q:.1f}% quota; sharing anomalies (guaranteed job within quota left without its "
         f"affinity) at load 1.2: quota {runs[(1.2, 'quota')]['anomalies']}, cells 0 (Theorem 1)"]))
    if task is not None:
        progress.advance(task)
    return sections
