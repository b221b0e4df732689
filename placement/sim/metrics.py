"""Metrics of a simulation, from its event log (and the trace's job attributes) only.

Nothing here reads the engine or the policy: the same numbers come out of a log written to disk
and read back. Definitions (per job, times in s):

- queueing delay = first start - submit; JCT = finish - submit;
- run time = sum of the attempts' lengths (start to preempt/finish); slowdown = run time / ideal
  duration (>= 1; communication overhead per Dally Table 1 plus work lost to preemption);
  communication overhead = run time - ideal duration. Both need a duration in seconds: a goodput
  job's (perf ``goodput``, Pollux §3) is its total progress in samples, so for such a job (its
  ``start`` rows carry the goodput model's ``epoch=`` and ``atomic=``) both are None;
- makespan = last finish - first submit;
- SLO: a job violates its priority's scheduling-latency limit when its queueing delay (or its
  wait so far, if it never started) exceeds ``slo[priority]``. MAST does not define SLOs;
  :data:`DEFAULT_SLO` is our choice (10 min / 1 h / 4 h for priorities 0 / 1 / 2+);
- allocation rate (MAST §5.2, Fig. 5): "the total hardware hours allocated to workloads divided by
  the total available hardware hours", GPU-seconds held by started jobs over all the cluster's
  GPU-seconds, inside the measured window: from the first to the last submission (never over the
  drain after arrivals stop, which the longest jobs decide); None when all jobs arrive at once;
  the mean GPU utilization is the same number (``mean_utilization``);
- over time (bins of ``bin_s``): GPU utilization and queue length are time averages of the step
  functions the log defines; the SLO violation rate of a bin is over the jobs submitted in it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from typing import Any

import numpy as np

from .log import EventLog, LogRow, extra_value
from .trace import Trace

__all__ = ["per_job", "summary", "time_series", "DEFAULT_SLO", "slo_limit", "step_average", "dally_measures",
           "utilization_between", "allocation_rate", "METRICS", "glossary", "goodput_start"]

DEFAULT_SLO = {0: 600.0, 1: 3600.0, 2: 4 * 3600.0}

# The glossary of summary()'s keys (and the network runs' iteration_summary): unit, definition.
# placement.list_metrics() and the simulator page (placement/sim/README.md) print it.
METRICS: dict[str, tuple[str, str]] = {
    "jobs": ("jobs", "jobs in the trace window"),
    "finished": ("jobs", "jobs that finished before the run ended"),
    "unschedulable": ("jobs", "jobs the policy refused as never placeable on this cluster"),
    "unfinished": ("jobs", "jobs still pending or running at the end (the run stops when no event is left)"),
    "mean_jct_s": ("s", "mean job completion time (finish - submit) over finished jobs"),
    "median_jct_s": ("s", "median JCT over finished jobs"),
    "p95_jct_s": ("s", "95th percentile of JCT over finished jobs"),
    "p99_jct_s": ("s", "99th percentile of JCT over finished jobs (Dally Tables 2-3)"),
    "mean_queueing_delay_s": ("s", "mean of first start - submit over started jobs: the first wait only"),
    "p95_queueing_delay_s": ("s", "95th percentile of the first wait"),
    "p99_queueing_delay_s": ("s", "99th percentile of the first wait"),
    "mean_waiting_s": ("s", "mean of JCT - run time over finished jobs: every wait, also after a preemption or "
                       "migration (Dally §5.1.4's queueing delay); >= mean_queueing_delay_s when jobs are preempted"),
    "p95_waiting_s": ("s", "95th percentile of waiting"),
    "p99_waiting_s": ("s", "99th percentile of waiting"),
    "makespan_s": ("s", "last finish - first submit"),
    "time_to_95pct_finished_s": ("s", "first submit until 95% of all jobs have finished (None if fewer finish)"),
    "time_to_99pct_finished_s": ("s", "first submit until 99% of all jobs have finished (None if fewer finish)"),
    "preemptions": ("count", "preemptions (and migrations) over all jobs"),
    "mean_slowdown": ("ratio", "mean of run time / ideal duration over finished jobs (>= 1: placement slowdown "
                      "and lost work); None under perf 'goodput', where a job's duration is its total progress "
                      "in samples, not an ideal run time"),
    "mean_comm_overhead_s": ("s", "mean of run time - ideal duration over finished jobs: exposed communication "
                             "(Dally §5.1.4); 0 under perf 'ideal'; None under perf 'goodput' (a duration in "
                             "samples, not seconds)"),
    "gpu_seconds_busy": ("GPU-s", "GPU-seconds held by running jobs"),
    "mean_utilization": ("fraction", "GPU-seconds held / available inside the measured window, first to last "
                         "submit (the drain after it, which one long job can stretch, left out): allocation_rate; "
                         "None when every job arrives at once (no window)"),
    "allocation_rate": ("fraction", "GPU-seconds held / available inside the measured window, first to last "
                        "submit (MAST §5.2): the utilization while work arrives"),
    "allocation_window_h": ("h", "length of the measured window (first to last submit)"),
    "slo_violation_rate_p<N>": ("fraction", "share of priority-N jobs whose wait exceeded the scheduling-latency "
                                "limit (DEFAULT_SLO: 10 min, 1 h, 4 h for priorities 0, 1, 2+; our choice)"),
    "iteration_ms_mean": ("ms", "mean iteration time over all iterations of catalogue jobs (network runs)"),
    "iteration_ms_p99": ("ms", "99th percentile iteration time (network runs)"),
    "iteration_ideal_ms_mean": ("ms", "the same jobs' mean iteration time alone on the network"),
    "iteration_slowdown_mean": ("ratio", "iteration_ms_mean / iteration_ideal_ms_mean"),
    "replay_check_s": ("s", "wall time replay_check took (varies run to run)"),
}


def glossary(key: str) -> tuple[str, str] | None:
    """(unit, definition) of a summary key (``slo_violation_rate_p1`` reads the ``<N>`` entry)."""
    if key.startswith("slo_violation_rate_p"):
        key = "slo_violation_rate_p<N>"
    return METRICS.get(key)
MAX_BINS = 100_000


def slo_limit(priority: int, slo: dict[int, float] | None = None) -> float:
    """The scheduling-latency limit of a priority (the lowest listed applies to lower ones)."""
    slo = DEFAULT_SLO if slo is None else slo
    if priority in slo:
        return slo[priority]
    return slo[max(k for k in slo if k <= priority)] if any(k <= priority for k in slo) else math.inf


def goodput_start(extra: str) -> bool:
    """Whether a ``start`` row's extra text is a goodput job's: the goodput model writes the
    segment it starts on (``rate= epoch= bsz= atomic= accum= placement=``,
    :meth:`placement.sim.goodput.Segment.extra`)."""
    words = {w.split("=", 1)[0] for w in extra.split() if "=" in w}
    return {"epoch", "atomic", "accum"} <= words


def per_job(log: EventLog | Iterable[LogRow], trace: Trace, slo: dict[int, float] | None = None
            ) -> list[dict[str, Any]]:
    """One row per job of the trace, in submit order. A goodput job's ``slowdown`` is None (its
    duration is progress in samples, not an ideal run time: module docstring). Under time sharing
    (start and rate rows saying ``share=h``) ``run_time`` counts ``1/h`` of each second a job holds
    its GPUs: the slices it runs; the rest it is suspended, and waits (Gandiva §3.1)."""
    info: dict[str, dict[str, Any]] = {}
    end = 0.0
    for r in log:
        end = max(end, r.time)
        d = info.setdefault(r.job, {"submit": None, "first_start": None, "finish": None,
                                    "attempts": 0, "preemptions": 0, "run_time": 0.0,
                                    "tiers": [], "unschedulable": False, "_t": None, "goodput": False,
                                    "_k": 1.0})
        if r.event == "submit":
            d["submit"] = r.time
        elif r.event == "start":
            d["attempts"] += 1
            d["_t"] = r.time
            d["_k"] = _share(r.extra)
            if d["first_start"] is None:
                d["first_start"] = r.time
            tier = next((x[5:] for x in r.extra.split() if x.startswith("tier=")), "")
            d["tiers"].append(tier)
            d["goodput"] = d["goodput"] or goodput_start(r.extra)
        elif r.event == "rate" and d["_t"] is not None and "share=" in r.extra:
            d["run_time"] += (r.time - d["_t"]) / d["_k"]
            d["_t"], d["_k"] = r.time, _share(r.extra)
        elif r.event in ("preempt", "finish"):
            if d["_t"] is not None:
                d["run_time"] += (r.time - d["_t"]) / d["_k"]
            d["_t"] = None
            if r.event == "preempt":
                d["preemptions"] += 1
            else:
                d["finish"] = r.time
        elif r.event == "unschedulable":
            d["unschedulable"] = True
    rows = []
    for j in trace.jobs:
        d = info.get(j.id, {})
        sub = d.get("submit", j.submit)
        sub = j.submit if sub is None else sub
        fs, fin = d.get("first_start"), d.get("finish")
        state = ("unschedulable" if d.get("unschedulable") else "finished" if fin is not None
                 else "running" if d.get("_t") is not None else "pending")
        wait = (fs - sub) if fs is not None else (end - sub)
        rows.append({
            "job": j.id, "submit": sub, "gpus": j.gpus, "duration": j.duration,
            "priority": j.priority, "tenant": j.tenant, "gpu_type": j.gpu_type or "",
            "model": j.model or "", "state": state, "first_start": fs, "finish": fin,
            "queueing_delay": fs - sub if fs is not None else None,
            "jct": fin - sub if fin is not None else None,
            "attempts": d.get("attempts", 0), "preemptions": d.get("preemptions", 0),
            "run_time": d.get("run_time", 0.0),
            "slowdown": (d["run_time"] / j.duration if fin is not None and j.duration > 0 and not d["goodput"]
                         else None),
            "tiers": " ".join(d.get("tiers", [])),
            "slo_violated": state != "unschedulable" and wait > slo_limit(j.priority, slo),
        })
    return rows


def _share(extra: str) -> float:
    """The ``share=h`` of a time-shared start or rate row (1 without one)."""
    h = extra_value(extra, "share")
    return 1.0 if h is None else h


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summary(rows: list[dict[str, Any]], log: EventLog | Iterable[LogRow], n_gpus: int) -> dict[str, Any]:
    """Headline numbers from :func:`per_job` rows and the log (glossary: :data:`METRICS`).

    ``mean_utilization`` and ``allocation_rate`` are one number: the GPU-seconds held inside the
    measured window, first to last submission, over the cluster's (None without a window)."""
    fin = [r for r in rows if r["state"] == "finished"]
    jct = [r["jct"] for r in fin]
    qd = [r["queueing_delay"] for r in rows if r["queueing_delay"] is not None]
    sd = [r["slowdown"] for r in fin if r["slowdown"] is not None]
    subs = [r["submit"] for r in rows]
    out: dict[str, Any] = {
        "jobs": len(rows), "finished": len(fin),
        "unschedulable": sum(r["state"] == "unschedulable" for r in rows),
        "unfinished": sum(r["state"] in ("pending", "running") for r in rows),
        "mean_jct_s": _mean(jct), "median_jct_s": _pct(jct, 50), "p95_jct_s": _pct(jct, 95),
        "mean_queueing_delay_s": _mean(qd), "p95_queueing_delay_s": _pct(qd, 95),
        "makespan_s": (max(r["finish"] for r in fin) - min(subs)) if fin else None,
        "preemptions": sum(r["preemptions"] for r in rows),
        "mean_slowdown": _mean(sd),
        "gpu_seconds_busy": float(sum(r["run_time"] * r["gpus"] for r in rows)),
    }
    t0, t1 = (min(subs), max(subs)) if subs else (0.0, 0.0)
    out["mean_utilization"] = out["allocation_rate"] = allocation_rate(log, n_gpus, t0, t1)
    out["allocation_window_h"] = (t1 - t0) / 3600.0
    progress = {r.job for r in log if r.event == "start" and goodput_start(r.extra)}
    out.update(dally_measures(rows, progress_jobs=progress))
    by_p: dict[int, list[bool]] = {}
    for r in rows:
        if r["state"] != "unschedulable":
            by_p.setdefault(r["priority"], []).append(r["slo_violated"])
    for p in sorted(by_p):
        out[f"slo_violation_rate_p{p}"] = sum(by_p[p]) / len(by_p[p])
    return out


def dally_measures(rows: list[dict[str, Any]], progress_jobs: Collection[str] = ()) -> dict[str, Any]:
    """The measures of Dally §5.1.4 and §5.2 beyond the headline ones, from :func:`per_job` rows.

    - ``*_waiting_s``: queueing delay as Dally defines it, "time spent by a job in the wait
      queue": JCT - run time of a finished job, so waits after a preemption (and Gandiva's
      migration pauses) count, not only the first wait (``*_queueing_delay_s``); mean, P95, P99
      (Fig. 6b prints ">P95" and ">P99").
    - ``p99_jct_s``, ``p99_queueing_delay_s``: the 99th percentiles (Tables 2-3).
    - ``time_to_95pct_finished_s`` / ``time_to_99pct_finished_s``: from the first submission
      until 95% / 99% of all the trace's jobs have finished (None when fewer ever finish): the
      makespan without its last few jobs, which a single job cannot decide.
    - ``mean_comm_overhead_s``: "exposed communication time of a job" (§5.1.4) as the
      simulator has it, run time - ideal duration of a finished job (the slowdown of its
      placements, plus work lost to restarts when checkpoints are on); mean over finished jobs
      but those in ``progress_jobs`` (goodput jobs, whose duration is progress, not seconds; None
      when no job is left).
    """
    fin = [r for r in rows if r["state"] == "finished"]
    wait = [r["jct"] - r["run_time"] for r in fin]
    qd = [r["queueing_delay"] for r in rows if r["queueing_delay"] is not None]
    out: dict[str, Any] = {"mean_waiting_s": _mean(wait), "p95_waiting_s": _pct(wait, 95),
                           "p99_waiting_s": _pct(wait, 99), "p99_jct_s": _pct([r["jct"] for r in fin], 99),
                           "p99_queueing_delay_s": _pct(qd, 99)}
    first = min((r["submit"] for r in rows), default=0.0)
    done = sorted(r["finish"] for r in fin)
    for q in (95, 99):
        k = int(np.ceil(q / 100 * len(rows)))   # jobs that must have finished
        out[f"time_to_{q}pct_finished_s"] = (done[k - 1] - first) if 0 < k <= len(done) else None
    out["mean_comm_overhead_s"] = _mean([r["run_time"] - r["duration"] for r in fin
                                         if r["job"] not in progress_jobs])
    return out


def allocation_rate(log: EventLog | Iterable[LogRow], n_gpus: int, t0: float, t1: float) -> float | None:
    """MAST's allocation rate (§5.2) over ``[t0, t1]``: the GPU-seconds of every attempt (a
    ``start`` to its job's next ``preempt`` or ``finish``, or on past the log's end) that fall inside
    the window, over ``n_gpus * (t1 - t0)``. None for an empty window."""
    if not (t1 > t0) or n_gpus <= 0:
        return None
    # the held GPUs are the step function utilization_between integrates
    return utilization_between(log, n_gpus, t0, t1)


def utilization_between(log: EventLog | Iterable[LogRow], n_gpus: int, t0: float, t1: float) -> float | None:
    """Mean GPU utilization over ``[t0, t1)`` from the log's starts, preemptions and finishes
    (None for an empty window): e.g. over the submission window, where the drain after the last
    submission, which one long job can stretch, does not dilute it. A time-shared job (``share=h``)
    holds ``1/h`` of each of its GPUs."""
    rows_log = list(log)
    if t1 <= t0 or not n_gpus:
        return None
    times = np.array([r.time for r in rows_log], dtype=float)
    held: dict[str, float] = {}
    busy = np.zeros(len(rows_log))
    for i, r in enumerate(rows_log):
        if r.event == "start":
            held[r.job] = len(r.gpus) / _share(r.extra)
            busy[i] = held[r.job]
        elif r.event in ("preempt", "finish"):
            busy[i] = -held.pop(r.job, len(r.gpus))
        elif r.event == "rate" and "share=" in r.extra and r.job in held:
            new = len(r.gpus) / _share(r.extra)
            busy[i], held[r.job] = new - held[r.job], new
    return float(step_average(times, busy, np.array([t0, t1], dtype=float))[0] / n_gpus)


def step_average(times: np.ndarray, deltas: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time average over each [edges[i], edges[i+1]) of the step function that starts at 0 and
    jumps by ``deltas`` at ``times`` (sorted)."""
    if len(edges) < 2:
        return np.zeros(0)
    values = np.cumsum(deltas)
    # integral of the step function at each change point, then linear between them
    t = np.concatenate([[min(edges[0], times[0] if len(times) else edges[0])], times])
    v = np.concatenate([[0.0], values])
    area = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])
    last_t, last_v, last_a = t[-1], v[-1], area[-1]

    def integral(x):
        inside = np.interp(x, t, area)
        return np.where(x > last_t, last_a + last_v * (x - last_t), inside)

    a = integral(edges)
    return np.diff(a) / np.diff(edges)


def time_series(rows: list[dict[str, Any]], log: EventLog | Iterable[LogRow], n_gpus: int,
                bin_s: float | None = None, max_bins: int = 400,
                extra: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None
                ) -> list[dict[str, Any]]:
    """Per time bin: mean GPU utilization, mean queue length, running jobs, and the SLO violation
    rate per priority of the jobs submitted in the bin (None when none was)."""
    rows_log = list(log)
    if not rows_log:
        return []
    t0, t1 = rows_log[0].time, max(r.time for r in rows_log)
    if bin_s is None:
        bin_s = max(60.0, (t1 - t0) / max_bins) if t1 > t0 else 60.0
    nb = max(1, int(math.ceil((t1 - t0) / bin_s)))
    if nb > MAX_BINS:
        from ..errors import InstanceError

        raise InstanceError("--bin", f"gives {nb} time bins; at most {MAX_BINS} (use a wider bin)")
    edges = t0 + bin_s * np.arange(nb + 1)
    times = np.array([r.time for r in rows_log])
    busy = np.array([len(r.gpus) if r.event == "start" else -len(r.gpus)
                     if r.event in ("preempt", "finish") else 0 for r in rows_log], dtype=float)
    queue = np.array([{"submit": 1, "start": -1, "preempt": 1, "unschedulable": -1}.get(r.event, 0)
                      for r in rows_log], dtype=float)
    run = np.array([{"start": 1, "preempt": -1, "finish": -1}.get(r.event, 0) for r in rows_log],
                   dtype=float)
    util = step_average(times, busy, edges) / n_gpus
    ql = step_average(times, queue, edges)
    rj = step_average(times, run, edges)
    prios = sorted({r["priority"] for r in rows})
    sub = np.array([r["submit"] for r in rows])
    viol = np.array([r["slo_violated"] for r in rows], dtype=bool)
    pr = np.array([r["priority"] for r in rows])
    ok = np.array([r["state"] != "unschedulable" for r in rows], dtype=bool)
    b = np.clip(((sub - t0) // bin_s).astype(np.int64), 0, nb - 1) if len(rows) else np.zeros(0, int)
    out = []
    for i in range(nb):
        row = {"t_start": float(edges[i]), "t_end": float(edges[i + 1]), "utilization": float(util[i]),
               "queue_length": float(ql[i]), "running_jobs": float(rj[i])}
        for p in prios:
            m = (b == i) & (pr == p) & ok
            row[f"slo_violation_rate_p{p}"] = float(viol[m].mean()) if m.any() else None
        out.append(row)
    return out
