"""HiveD's reproduction: the two quota views, the load read both ways, and the examined anomalies.

Quota views
    ``table1``: HiveD Table 1's production shares, node-level cells, on the trace's tenants as
    identified once over the whole shipped Philly trace by Table 1's absolute job counts per size
    (:func:`philly_mapping`, :func:`placement.hived.table1.identify_tenants`): the same mapping and
    the same quotas on every seed and window. A job larger
    than its tenant's quota runs only as a low-priority job in the shared schemes and is left out
    of its private cluster and of every tenant comparison (:func:`comparable`). ``fitted``: VCs
    fitted to the demand of the jobs that run, every tenant holding its largest job
    (:func:`placement.solvers.online.tenants.fit_assignment`), the earlier view.
Load, both readings (§5.2: "around 90% of the GPUs are used by high-priority jobs")
    ``high_share``: time-average share of GPUs running high-priority (within-quota / guaranteed)
    work; ``busy_share``: time-average share of GPUs running any job. Both over the window only.
Examined anomalies
    For a HiveD run, a tenant whose mean delay exceeds its private cluster's (the anomaly rule of
    :func:`placement.app.reproduce.hived._anomalies`) is examined from the log: its compared
    jobs, how many ran opportunistic (started beyond the VC) or were preempted, and its excess
    delay split into time waiting (not running) and work lost by preempted opportunistic runs.
    The sharing-safety check (:func:`placement.solvers.online.hived.sharing_safety_check`, run on
    every HiveD log) proves that no job waited while its VC had a free cell for it, and the
    guarantee check (:func:`placement.sim.replay.guarantee_check`) that no guaranteed job was
    preempted: an anomaly that passes both happened outside the VC's guarantee (the tenant's
    demand beyond its cells, or its opportunistic runs), and one that fails either is a bug.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__ = ["VIEWS", "philly_trace", "philly_mapping", "assignment", "comparable", "busy_share", "examine", "job_classes", "anomalies",
           "free_nodes"]

VIEWS = ("table1", "fitted")
VIEW_TEXT = {"table1": "Table 1 quotas", "fitted": "fitted quotas"}


def anomalies(shared: dict[str, float], private: dict[str, float]) -> list[str]:
    """Tenants whose mean delay in the shared scheme exceeds their private cluster's by more than
    5% and by more than 10 minutes (the paper's sharing anomaly, made a count)."""
    return sorted(t for t, d in shared.items() if t in private and d > 1.05 * private[t] and d - private[t] > 600.0)


@functools.cache
def philly_trace():
    """The shipped Philly trace, parsed once per process (about 2 s)."""
    from placement.instances.traces import trace_path
    from placement.sim.trace import load_philly

    return load_philly(trace_path("philly.csv"))


@functools.cache
def philly_mapping() -> tuple[dict[str, str], tuple[dict, ...]]:
    """The shipped Philly trace's tenants identified with Table 1's rows over the whole trace
    (:func:`placement.hived.table1.identify_tenants`): the mapping and its fit per row."""
    from placement.hived.table1 import identify_tenants

    mapping, fit = identify_tenants(philly_trace().jobs)
    return mapping, tuple(fit)


def assignment(view: str, jobs, n: int, levels: str = "node"):
    """The VC assignment of ``view`` on ``n`` nodes (``levels``: "node" or "multi"; Table 1's
    view has node-level cells only, on :func:`philly_mapping`'s tenants)."""
    from placement.errors import InstanceError
    from placement.solvers.online.tenants import fit_assignment, table1_assignment

    if view == "fitted":
        return fit_assignment(jobs, n, levels, name="the window")
    if view == "table1":
        if levels != "node":
            raise InstanceError("levels", "Table 1's quota view has node-level cells only")
        return table1_assignment(jobs, n, philly_mapping()[0])[0]
    raise InstanceError("view", f"must be one of {', '.join(VIEWS)}, not {view!r}")


def comparable(window, a) -> list:
    """The window's jobs a private cluster can run: those not larger than their tenant's quota."""
    from placement.solvers.online.tenants import oversize_jobs

    big = oversize_jobs(window, a)
    return [j for j in window if j.id not in big]


def busy_share(log, n_gpus: int, start: float, end: float) -> float:
    """Time-average share of GPUs running any job over [start, end] (the second reading of §5.2's load)."""
    times, deltas = [], []
    for r in log.rows:
        if r.event in ("start", "preempt", "finish"):
            times.append(r.time)
            deltas.append(len(r.gpus) if r.event == "start" else -len(r.gpus))
    if not times or end <= start:
        return 0.0
    order = np.argsort(np.array(times), kind="stable")
    t = np.array(times)[order]
    level = np.cumsum(np.array(deltas)[order])
    edges = np.clip(np.concatenate([t, [end]]), start, end)
    return float((level * np.diff(edges)).sum() / ((end - start) * n_gpus))


def free_nodes(frag_series, n_nodes: int, need: tuple[int, ...] = (1, 2, 4)) -> dict[str, Any]:
    """Nodes free of high-priority work over a run's hourly samples (``frag_series``: the share of
    nodes holding high-priority GPUs, :func:`placement.app.bench.hived_trace.fragmentation`).

    YARN-CS gives a within-quota job affinity by preempting low-priority work (§5.1), so a
    within-quota job of ``8 k`` GPUs waits for affinity only while fewer than ``k`` nodes are free
    of high-priority work: Figure 7's anomaly needs such hours. Returns ``median`` and ``min``
    free nodes and, per ``k`` in ``need``, ``below_k``: the share of samples with fewer than ``k``."""
    free = np.rint((1.0 - np.asarray(frag_series, dtype=float)) * n_nodes).astype(int)
    out: dict[str, Any] = {"samples": int(free.size),
                           "median": float(np.median(free)) if free.size else None,
                           "min": int(free.min()) if free.size else None}
    for k in need:
        out[f"below_{k}"] = float((free < k).mean()) if free.size else None
    return out


def job_classes(log) -> dict[str, dict[str, Any]]:
    """Per job from a HiveD log: ``opportunistic`` (started beyond its VC at least once),
    ``preempted`` (times), ``lost`` (run time minus work gained over its preempted runs: work lost
    since the last checkpoint, at the start row's rate)."""
    from placement.sim.log import extra_value

    out: dict[str, dict[str, Any]] = {}
    cur: dict[str, tuple[float, float, float]] = {}
    for r in log.rows:
        if r.event == "start":
            d = out.setdefault(r.job, {"opportunistic": False, "preempted": 0, "lost": 0.0})
            if "class=opportunistic" in r.extra:
                d["opportunistic"] = True
            cur[r.job] = (r.time, r.work_done, extra_value(r.extra, "rate") or 1.0)
        elif r.event == "preempt" and r.job in cur:
            t0, w0, rate = cur.pop(r.job)
            d = out[r.job]
            d["preempted"] += 1
            d["lost"] += max(0.0, (r.time - t0) * rate - (r.work_done - w0)) / rate
        elif r.event == "finish":
            cur.pop(r.job, None)
    return out


def examine(run_name: str, view: str, nodes: int, shared: dict[str, Any], private: dict[str, Any], jobs,
            broken: list[str]) -> list[dict[str, Any]]:
    """One row per HiveD anomaly of a run (module doc): tenant, jobs compared, opportunistic and
    preempted jobs among them, the excess delay split into waiting and lost work, the three jobs
    that lost the most against the private cluster, and the verdict: ``outside the guarantee``
    when the run's sharing-safety and guarantee checks pass, else ``bug``."""
    per_s, per_p = shared["job_delays"], private["job_delays"]
    cls = job_classes(shared["log"]) if shared.get("log") is not None else {}
    out = []
    bugs = [m for m in broken if m.startswith(("sharing-safety", "guarantee"))]
    for t in anomalies(shared["delays"], private["delays"]):
        mine = [j for j in jobs if j.tenant == t and j.id in per_s and j.id in per_p]
        if not mine:
            continue
        opp = [j for j in mine if cls.get(j.id, {}).get("opportunistic")]
        pre = [j for j in mine if cls.get(j.id, {}).get("preempted", 0) > 0]
        lost = sum(cls.get(j.id, {}).get("lost", 0.0) for j in mine)
        excess = sum(per_s[j.id] - per_p[j.id] for j in mine)
        worst = sorted(mine, key=lambda j: (-(per_s[j.id] - per_p[j.id]), j.id))[:3]
        guaranteed_only = [j for j in mine if j not in opp]
        g_excess = sum(per_s[j.id] - per_p[j.id] for j in guaranteed_only)
        out.append({
            "run": run_name, "view": view, "nodes": nodes, "tenant": t, "jobs": len(mine),
            "opportunistic_jobs": len(opp), "preempted_jobs": len(pre),
            "delay_h": shared["delays"][t] / 3600.0, "private_h": private["delays"][t] / 3600.0,
            "excess_h": excess / len(mine) / 3600.0, "lost_work_h": lost / len(mine) / 3600.0,
            "guaranteed_only_excess_h": g_excess / max(1, len(guaranteed_only)) / 3600.0,
            "worst_jobs": "; ".join(f"{j.id} ({j.gpus} GPUs, {'opportunistic' if j in opp else 'guaranteed'}"
                                    f"{', preempted' if j in pre else ''}: {per_s[j.id] / 3600:.1f} h vs "
                                    f"{per_p[j.id] / 3600:.1f} h private)" for j in worst),
            "verdict": "bug: " + bugs[0] if bugs else "outside the guarantee",
        })
    return out


def cause_text(r: dict[str, Any]) -> str:
    """One sentence on an examined anomaly."""
    if r["verdict"] != "outside the guarantee":
        return r["verdict"]
    parts = []
    if r["opportunistic_jobs"]:
        parts.append(f"{r['opportunistic_jobs']} of its {r['jobs']} jobs ran opportunistic (beyond its VC)"
                     + (f", {r['preempted_jobs']} preempted, losing {r['lost_work_h']:.2f} h of work per job"
                        if r["preempted_jobs"] else ""))
    parts.append("outside the guarantee: no job waited while its VC had a free cell for it (sharing-safety "
                 "check) and no guaranteed job was preempted (guarantee check), so every extra hour was spent "
                 "while its VC's cells were all held by its own guaranteed jobs, i.e. demand beyond its quota; "
                 "the VC's schedule differs from the private cluster's because a private job of up to 8 GPUs may "
                 "take any GPUs of one machine while a guaranteed job takes an aligned buddy cell, and because "
                 "jobs that ran opportunistic (and were preempted) return to the VC's FIFO queue")
    return "; ".join(parts)
