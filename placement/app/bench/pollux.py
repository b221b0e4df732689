"""Benchmark section: Pollux against its authors' simulator on their workloads (Pollux §5.3, Figure 8a).

For each of the authors' eight workloads at job load 1.0 (``instances/data/pollux/workloads/``,
160 jobs each on 16 nodes x 4 GPUs), our ``pollux`` (adaptive batch sizes and GPU counts) and
our ``tiresias`` (the workload's tuned GPUs and batch sizes, one demotion threshold of 16
GPU-hours as their ``tiresias.py``) run on the goodput performance model
(:mod:`placement.sim.goodput`), each log judged by ``replay_check`` plus ``goodput_check``.
Compared with the authors' stored results (``results/{pollux,tiresias}-1.0.json``: their
per-job JCTs from their simulator): mean JCT per workload and quartiles of the per-job JCTs
side by side, and our wall time per run (theirs: "up to 30 minutes" per Pollux run, their
README; their simulator needs numpy < 1.24, pandas < 2 and pymoo 0.4, so the bench does not run
it: the side-by-side timing is on ``placement/sim/POLLUX.md``). Default: workload 6 (the authors' testbed workload);
``--scale``: all eight; ``--quick``: none (a Pollux run of 160 jobs takes minutes on 2 cores).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...io import write_text
from ...registry import BenchSection
from ..report import markdown_table

__all__ = ["bench_sections", "peer_run", "peer_fragment", "THEIR_TIRESIAS"]

# The authors' Tiresias: two queues, demotion at 16 GPU-hours of attained service (tiresias.py
# ``_queue_threshold = 3600 * 16``, with executed time x GPUs), its queues plain lists (a job keeps its
# place), re-planned in the 60 s steps of their simulator.py (``Cluster.step(seconds=60)`` calls
# ``optimize`` once per step).
THEIR_TIRESIAS = {"queue_limits": (16 * 3600.0,), "round_interval": 60.0, "queue_order": "lists"}
POLICIES = {"pollux": ("pollux", {}, False), "tiresias": ("tiresias", THEIR_TIRESIAS, True)}


def peer_run(workload: int, policy: str, seed: int = 0) -> dict[str, Any]:
    """One run of ``policy`` (``pollux`` or ``tiresias``) on the authors' workload ``workload`` at
    load 1.0 with its replay verdict, per-job JCTs and theirs."""
    from placement.instances.traces import pollux_dir, pollux_workload_path

    from ...sim.engine import simulate
    from ...sim.goodput import GoodputPerf, goodput_check, load_applications
    from ...sim.policies import make_policy
    from ...sim.pollux_workload import load_pollux_workload, pollux_cluster
    from ...sim.replay import replay_check

    name, opts, fixed = POLICIES[policy]
    apps = load_applications(pollux_dir() / "traces")
    trace, batch = load_pollux_workload(pollux_workload_path(f"pollux-workload-{workload}"), apps)
    cluster = pollux_cluster()
    perf = GoodputPerf(apps, batch=batch if fixed else None)
    t0 = time.perf_counter()
    res = simulate(trace, cluster, make_policy(name, **opts), perf=perf, seed=seed)
    wall = time.perf_counter() - t0
    broken = replay_check(trace, cluster, res.log, perf=perf, checks=[goodput_check(perf, cluster)])
    fin = {r.job: r.time for r in res.log if r.event == "finish"}
    ours = {j.id: fin[j.id] - j.submit for j in trace.jobs if j.id in fin}
    theirs = json.loads((pollux_dir() / "results" / f"{policy}-1.0.json").read_text())["jcts"][f"workload-{workload}"]
    restarts = sum(1 for r in res.log if r.event == "start") - len(fin)
    return {"workload": workload, "policy": policy, "ours": ours, "theirs": theirs, "wall_s": wall,
            "violations": broken, "unfinished": len(res.unfinished), "restarts": restarts}


def _row(run: dict[str, Any]) -> dict[str, Any]:
    o, t = np.array(list(run["ours"].values())), np.array(list(run["theirs"].values()))
    q = [25, 50, 75, 90]
    row = {"workload": run["workload"], "policy": run["policy"], "jobs": len(o),
           "mean_jct_ours_s": round(float(o.mean())), "mean_jct_theirs_s": round(float(t.mean())),
           "error_%": round(100 * (o.mean() / t.mean() - 1), 1)}
    for p, a, b in zip(q, np.percentile(o, q), np.percentile(t, q), strict=True):
        row[f"p{p}_ours/theirs"] = f"{a:.0f}/{b:.0f}"
    row.update({"restarts": run["restarts"], "replay_violations": len(run["violations"]),
                "unfinished": run["unfinished"], "wall_s": round(run["wall_s"], 1)})
    return row


def peer_fragment(rows: list[dict[str, Any]]) -> str:
    """The Pollux page's generated peer-check section (``measured/pollux-peer.md``) from the bench
    rows of :func:`_row`: per workload, both policies' mean JCT ours / theirs and the error, Pollux's
    p50 / p90 and restarts, the wall times; the mean of the workloads; the replay verdicts."""
    by = {(r["workload"], r["policy"]): r for r in rows}
    ws = sorted({r["workload"] for r in rows})
    head = ("| workload | Pollux ours (s) | Pollux theirs (s) | error | Tiresias ours (s) | Tiresias theirs (s) | "
            "error | Pollux p50 / p90 ours/theirs (s) | Pollux restarts | wall ours Pollux / Tiresias (s) |")
    lines = ["One run of `placement.app.bench.pollux.peer_run` per workload and policy (`placement bench --problem "
             "trace --scale`, written by the run), a 2-core machine shared with other work.", "", head,
             "| --- " * 10 + "|"]
    for w in ws:
        p, t = by[(w, "pollux")], by[(w, "tiresias")]
        lines.append(f"| {w} | {p['mean_jct_ours_s']:,} | {p['mean_jct_theirs_s']:,} | {p['error_%']:+.1f}% | "
                     f"{t['mean_jct_ours_s']:,} | {t['mean_jct_theirs_s']:,} | {t['error_%']:+.1f}% | "
                     f"{p['p50_ours/theirs']} / {p['p90_ours/theirs']} | {p['restarts']} | "
                     f"{p['wall_s']:.0f} / {t['wall_s']:.0f} |")
    means = {}
    for pol in POLICIES:
        o = float(np.mean([by[(w, pol)]["mean_jct_ours_s"] for w in ws]))
        t = float(np.mean([by[(w, pol)]["mean_jct_theirs_s"] for w in ws]))
        means[pol] = (o, t, 100 * (o / t - 1))
    (po, pt, pe), (to, tt, te) = means["pollux"], means["tiresias"]
    lines.append(f"| mean of {len(ws)} | {po:,.0f} | {pt:,.0f} | {pe:+.1f}% | {to:,.0f} | {tt:,.0f} | {te:+.1f}% | | | |")
    errs = {pol: [by[(w, pol)]["error_%"] for w in ws] for pol in POLICIES}
    bad = sum(r["replay_violations"] for r in rows)
    lines += ["", f"Mean JCT (s); p50 / p90: per-job JCT percentiles, ours/theirs (every job: `pollux/jcts.csv` of the "
              f"bench). Pollux: {min(errs['pollux']):+.1f}% to {max(errs['pollux']):+.1f}% per workload, {pe:+.1f}% "
              f"on the mean; Tiresias (their rules: one demotion at 16 GPU-hours, plain queue lists, 60 s rounds): "
              f"{min(errs['tiresias']):+.1f}% to {max(errs['tiresias']):+.1f}%, {te:+.1f}% on the mean. Our Pollux "
              f"beats our Tiresias by {100 * (1 - po / to):.0f}% on the mean (theirs by {100 * (1 - pt / tt):.0f}%). "
              f"Replay violations (`replay_check` + `goodput_check`): {bad} in {len(rows)} runs."]
    return "\n".join(lines) + "\n"


def bench_sections(out_dir, quick: bool, scale: bool, seed: int, progress) -> list[BenchSection]:
    if quick and not scale:   # a Pollux run of 160 jobs takes minutes on 2 cores
        return []
    workloads = list(range(1, 9)) if scale else [6]
    task = progress.add_task("pollux: authors' workloads", total=2 * len(workloads)) if progress else None
    rows, jct_lines = [], ["workload,policy,job,jct_ours_s,jct_theirs_s"]
    for w in workloads:
        for pol in POLICIES:
            run = peer_run(w, pol, seed)
            rows.append(_row(run))
            jct_lines += [f"{w},{pol},{j},{run['ours'].get(j, '')},{v}" for j, v in sorted(run["theirs"].items())]
            if task is not None:
                progress.advance(task)
    write_text(Path(out_dir) / "pollux" / "jcts.csv", "\n".join(jct_lines) + "\n")
    if len(workloads) == 8:   # the page's generated section (python -m placement.app.pages --from OUT)
        write_text(Path(out_dir) / "measured" / "pollux-peer.md", peer_fragment(rows))
    summary = []
    for pol in POLICIES:
        rs = [r for r in rows if r["policy"] == pol]
        mo = np.mean([r["mean_jct_ours_s"] for r in rs])
        mt = np.mean([r["mean_jct_theirs_s"] for r in rs])
        summary.append(f"pollux peer check ({pol}, workloads {','.join(str(r['workload']) for r in rs)}): mean JCT "
                       f"{mo:.0f} s vs the authors' {mt:.0f} s ({100 * (mo / mt - 1):+.1f}%), per workload "
                       + ", ".join(f"{r['error_%']:+.1f}%" for r in rs)
                       + f"; wall {np.mean([r['wall_s'] for r in rs]):.0f} s per run; replay violations "
                       + str(sum(r["replay_violations"] for r in rs)))
    text = ("Pollux and Tiresias on the Pollux authors' workloads (load 1.0, 16 x 4 GPUs) against the "
            "per-job JCTs their simulator stored; `p25..p90` are per-job JCT quartiles, ours/theirs. "
            "Per-job JCTs: `pollux/jcts.csv`.\n\n" + markdown_table(rows, list(rows[0])))
    return [BenchSection("Pollux peer check", text, rows, [], summary)]
