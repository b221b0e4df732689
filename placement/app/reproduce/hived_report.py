"""HiveD's reproduction: the report's sections and figures from the runs of :mod:`.hived` (per-scheme
tables, Table 1's quota view, where Figure 7's anomaly can occur, Figure 7 along prod-a's spare
quota, Figure 8's reshaping and Figure 9's soft affinity, the examined anomalies; Figures 6-7 and 10-11's
views)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import Context
from .hived_quotas import VIEW_TEXT, cause_text, free_nodes
from .hived_quotas import anomalies as _anomalies
from .hived_setup import (
    FREE_VIEW,
    LOW_SCHEMES,
    VIEW_SCHEMES,
    Config,
    H,
    _h,
    _row_of,
    tenant_comparison,
)

__all__ = ["sections", "figures", "by_size"]


def _scheme_table(rows: list[tuple[str, list[dict[str, Any]], list[dict[str, float]] | None]]) -> list[str]:
    from .context import fmt_spread

    lines = ["| scheme | mean delay over tenants | fragmentation (paper's) | nodes with 1-7 high-priority GPUs | "
             "GPUs running high-priority work | GPUs busy | preempted GPUs | low-priority starts beside guaranteed "
             "work | tenants with an anomaly |", "|---|---|---|---|---|---|---|---|---|"]
    for label, rs, priv in rows:
        lines.append(
            f"| {label} | {fmt_spread([r['mean_delay'] for r in rs], ' h', 1 / H)} | "
            f"{fmt_spread([r['fragmentation'] for r in rs], '%', 100)} | "
            f"{fmt_spread([r['partial_fragmentation'] for r in rs], '%', 100)} | "
            f"{fmt_spread([r['high_share'] for r in rs], '%', 100)} | "
            f"{fmt_spread([r['busy_share'] for r in rs], '%', 100)} | "
            f"{fmt_spread([r['preempted_gpus'] for r in rs])} | "
            f"{fmt_spread([r['low_in_bound'] for r in rs]) if rs[0]['low_in_bound'] is not None else '-'} | "
            + ("-" if priv is None else
               fmt_spread([len(_anomalies(r["delays"], pv)) for r, pv in zip(rs, priv, strict=True)])) + " |")
    return lines


def _quota_table(p: dict[str, Any]) -> list[str]:
    """Table 1's quota view on one seed: each tenant's row, share, nodes, demand and oversize jobs,
    beside its fitted quota."""
    v = p["views"]["table1"]
    fitted = p["views"].get("fitted")
    lines = [f"Seed {p['seed']}, {v['nodes']} nodes: each tenant's Table 1 row (identified over the whole trace), its share, "
             "its quota in node-level cells, its mean demand (GPU-time of its jobs over their span), its largest job "
             "and the jobs larger than its quota (low-priority only in the shared schemes, left out of the private "
             "cluster and the comparisons)"
             + (f"; the fitted quota at the fitted view's {fitted['nodes']} nodes beside it" if fitted else "") + ":",
             "", "| tenant | Table 1 row | share | nodes | GPUs | mean demand (GPUs) | largest job (GPUs) | jobs above "
             "quota | fitted GPUs |", "|---|---|---|---|---|---|---|---|---|"]
    for r in v["t1rows"]:
        fg = fitted["assign"].gpus(r["tenant"]) if fitted and r["tenant"] in fitted["assign"].cells else "-"
        lines.append(f"| {r['tenant']} | {r['row']} | {100 * r['share']:.2f}% | {r['nodes']} | {r['gpus']} | "
                     f"{r['demand_gpus']:.1f} | {r['largest']} | {r['oversize']} | {fg} |")
    return lines


def sections(ctx: Context, per_seed: list[dict[str, Any]], cfg: Config) -> None:
    main = cfg.views[0]
    views = [v for v in cfg.views if all(v in p["views"] for p in per_seed)]
    lines = []
    for view in views:
        priv = [p["views"][view]["runs"]["private"]["delays"] for p in per_seed]
        rows = [(s, [p["views"][view]["runs"][s] for p in per_seed], None if s == "private" else priv)
                for s in VIEW_SCHEMES[view]]
        lines += [f"{VIEW_TEXT[view]} at the busy size (" + ", ".join(str(p["views"][view]["nodes"]) for p in per_seed)
                  + " nodes per seed):", ""] + _scheme_table(rows) + [""]
    lines = ["Median (min to max) over seeds; checkpointed preemption. Tenants in the window: "
             + ", ".join(str(p["tenants"]) for p in per_seed) + " (per seed). 'Low-priority starts beside guaranteed "
             "work': low-priority jobs started on a node where a guaranteed job runs, counted from the log.", ""] + lines
    priv = [p["free"]["private"]["delays"] for p in per_seed]
    privl = [p["low"]["private"]["delays"] for p in per_seed]
    lines += [f"Free preemption (second view) and the lower-load size ({VIEW_TEXT[main]}; Figure 10 at "
              + ", ".join(str(p["nodes_low"]) for p in per_seed) + " nodes):", ""]
    lines += _scheme_table([(f"{s}, free preemption", [p["free"][s] for p in per_seed], priv) for s in FREE_VIEW
                            if cfg.free_view]
                           + [(f"{s}, lower load", [p["low"][s] for p in per_seed], None if s == "private" else privl)
                              for s in LOW_SCHEMES])
    lines += ["", "Seeds: " + "; ".join(f"seed {p['seed']}: {p['trace']}, {p['jobs']} jobs of {p['tenants']} tenants, "
                                       f"{p['nodes']} nodes" for p in per_seed), ""]
    p0 = per_seed[0]
    for view in views:
        runs = p0["views"][view]["runs"]
        pv = runs["private"]["delays"]
        shared = [s for s in VIEW_SCHEMES[view] if s != "private"]
        lines += [f"Per tenant on seed {p0['seed']}, {VIEW_TEXT[view]}: mean queueing delay in the private cluster "
                  "(hours) and each shared scheme's divided by it (- when the private delay is under a minute):", "",
                  "| tenant | private (h) | " + " | ".join(shared) + " |", "|---|---|" + "---|" * len(shared)]
        for t in sorted(pv):
            cells = []
            for s in shared:
                d = runs[s]["delays"].get(t)
                cells.append(f"{d / pv[t]:.2f}" if d is not None and pv[t] > 60 else "-")
            lines.append(f"| {t} | {pv[t] / H:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    ctx.section("Schemes", "\n".join(lines))
    if "table1" in cfg.views:
        q = []
        for p in per_seed:
            q += _quota_table(p) + [""]
        ctx.section("Table 1 quota view", "\n".join(q))
    if "table1" in cfg.views:
        _where_section(ctx, per_seed)
    _spare_section(ctx, per_seed)
    _fig8_section(ctx, per_seed, cfg)
    _fig9_section(ctx, per_seed, cfg)
    _fig5_section(ctx, per_seed)
    _examined_section(ctx, per_seed)


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _seeds_note(per_seed: list[dict[str, Any]], key: str, cfg: Config) -> str:
    ran = [str(p["seed"]) for p in per_seed if p.get(key) is not None]
    return (f"Seeds run: {', '.join(ran) or 'none'}" + (f" (the first {cfg.fig89_seeds} only, for time)"
                                                        if cfg.fig89_seeds is not None else "") + ".")


def _fig8_section(ctx: Context, per_seed: list[dict[str, Any]], cfg: Config) -> None:
    """Figure 8 per seed and step: the 8-GPU group, the workload fragmentation, res-f's delays
    (private, YARN-CS, HiveD) and its ratios over the private cluster."""
    from .hived_setup import anomaly_tenant
    from .hived_shapes import fig8_values

    if not any(p.get("fig8") for p in per_seed):
        return
    rf = anomaly_tenant("res-f")
    lines = [f"§5.2's reshaping (Figure 8): every tenant's jobs become 8-GPU jobs (the 8-GPU group) or 1-GPU jobs (the "
             "rest), the tenant's total GPUs kept, N = GPUs / size jobs with submit times and durations drawn from "
             "its own jobs (seeded per seed and tenant); Table 1's quotas of the original trace; res-f = "
             f"{rf}. Workload fragmentation = the window's jobs / their GPUs (the paper: 0.91 with res-f alone). "
             "Paper (YARN-CS / private for res-f): 132x, 4.3x, 1.9x, 0.9x; HiveD shorter at every step. "
             + _seeds_note(per_seed, "fig8", cfg), "",
             "| seed | step | 8-GPU group | window jobs | workload fragmentation | res-f private | res-f YARN-CS | "
             "res-f HiveD | YARN-CS / private | HiveD / private | paper |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    paper = ("132x", "4.3x", "1.9x", "0.9x")
    for p in per_seed:
        f8 = p.get("fig8")
        if f8 is None:
            continue
        priv = f8["private"]["delays"].get(rf)
        for i, st in enumerate(f8["steps"]):
            y, h = st["yarn-cs"]["delays"].get(rf), st["hived"]["delays"].get(rf)
            ok = priv is not None and priv > 60
            lines.append(f"| {p['seed']} | {i} | {' + '.join(st['rows'])} | {st['jobs']} | "
                         + ("-" if st["frag"] is None else f"{st['frag']:.3f}") + f" | {_h(priv)} | {_h(y)} | {_h(h)} | "
                         f"{_x(y / priv if ok and y is not None else None)} | "
                         f"{_x(h / priv if ok and h is not None else None)} | {paper[i]} |")
    v = fig8_values(per_seed)
    lines += ["", "Per seed, over the four steps: HiveD's largest ratio over private "
              + ", ".join(_x(x) for x in v["hived_safe"]) + "; HiveD's largest change against YARN-CS "
              + ", ".join("-" if x is None else f"{100 * x:+.0f}%" for x in v["hived_shorter"])
              + ". A ratio needs a private delay above a minute."]
    ctx.section("Figure 8: reshaping (GPU affinity vs sharing safety)", "\n".join(lines))


def _fig9_section(ctx: Context, per_seed: list[dict[str, Any]], cfg: Config) -> None:
    """Figure 9 per seed and fraction: prod-a's delays (private, YARN-CS, HiveD) with that share
    of the multi-GPU jobs soft, the relaxed starts, and the ratios."""
    from .hived_setup import anomaly_tenant

    if not any(p.get("fig9") for p in per_seed):
        return
    pa = anomaly_tenant()
    lines = ["§5.2's soft affinity (Figure 9): a share of the trace's multi-GPU jobs (every tenant's, drawn per seed, "
             "nested) relaxes its affinity when it cannot be satisfied, at the same speed; the private clusters, "
             "YARN-CS and HiveD run the same soft jobs. Relaxed starts: soft jobs started without affinity (YARN-CS / "
             f"HiveD). prod-a = {pa}. 0% is the main run. Paper: YARN-CS / private 1.3x at 50% (no obvious anomaly "
             "in the average at 25% and 75%); HiveD eliminates every anomaly and is always the shortest. "
             + _seeds_note(per_seed, "fig9", cfg), "",
             "| seed | soft | soft jobs / multi-GPU jobs | relaxed starts | prod-a private | prod-a YARN-CS | "
             "prod-a HiveD | YARN-CS / private | HiveD / private |", "|---|---|---|---|---|---|---|---|---|"]
    for p in per_seed:
        f9 = p.get("fig9")
        if f9 is None:
            continue
        base = {"private": p["runs"]["private"], "yarn-cs": p["runs"]["yarn-cs"], "hived": p["runs"]["hived"]}
        for f, r in [(0.0, base)] + sorted(f9.items()):
            pv, y, h = (r[s]["delays"].get(pa) for s in ("private", "yarn-cs", "hived"))
            ok = pv is not None and pv > 60
            soft = "-" if f == 0.0 else f"{r['soft']} / {r['multi']}"
            rel = "-" if f == 0.0 else f"{r['yarn-cs'].get('relaxed_starts')} / {r['hived'].get('relaxed_starts')}"
            lines.append(f"| {p['seed']} | {100 * f:.0f}% | {soft} | {rel} | {_h(pv)} | {_h(y)} | {_h(h)} | "
                         f"{_x(y / pv if ok and y is not None else None)} | "
                         f"{_x(h / pv if ok and h is not None else None)} |")
    ctx.section("Figure 9: soft affinity", "\n".join(lines))


def _fig5_section(ctx: Context, per_seed: list[dict[str, Any]]) -> None:
    """Figure 5 per seed and intra-VC scheduler (:mod:`.hived_fig5`): prod-a's peak 12-hour excess
    over its private cluster without and with HiveD, and HiveD's mean JCT change."""
    from .hived_fig5 import fig5_values
    from .hived_setup import anomaly_tenant

    if not any(p.get("fig5") for p in per_seed):
        return
    f5 = fig5_values(per_seed)
    lines = ["§5.1's cluster runs (Figure 5) on this set-up (each seed's Table 1 quotas, busy size and calibrated "
             "arrival rate): each scheduler runs the private clusters, the shared cluster under quotas (YARN-CS's "
             "placement) and HiveD's VCs. YARN-CS is the main runs (FIFO inside each VC); Tiresias the same with each "
             "VC's queue in least attained GPU-service first; Gandiva is not run. Excess: prod-a's ("
             f"{anomaly_tenant()}) largest 12-hour moving-window mean of its jobs' delay over the private cluster's, "
             "in minutes. Paper: 1,000 (YARN-CS), up to 400 (Gandiva), over 330 (Tiresias) minutes without HiveD, "
             "none with it; HiveD's mean JCT at most 3% worse (YARN-CS) and 12% better (Gandiva).", "",
             "| seed | scheduler | excess without HiveD (min) | excess with HiveD (min) | mean JCT, HiveD vs without |",
             "|---|---|---|---|---|"]

    def m(x):
        return "-" if x is None else f"{x:.0f}"

    for i, p in enumerate(per_seed):
        for sched, v in f5.items():
            if sched in p.get("fig5", {}):
                j = v["jct"][i]
                lines.append(f"| {p['seed']} | {sched} | {m(v['quota'][i])} | {m(v['hived'][i])} | "
                             + ("-" if j is None else f"{100 * j:+.1f}%") + " |")
    ctx.section("Figure 5: the schedulers inside HiveD's VCs", "\n".join(lines))


def _spare_section(ctx: Context, per_seed: list[dict[str, Any]]) -> None:
    """Figure 7's two preconditions and prod-a's ratio along the spare quota given to prod-a (the
    regime map's runs): where the paper's regime lies on this trace."""
    rows = [(p["seed"], x) for p in per_seed for x in p.get("spare", [])]
    if not rows:
        return
    lines = ["Figure 7's regime needs YARN-CS's fragmentation near 100% and prod-a's quota covering its demand. "
             "Along the spare quota given to prod-a (its Table 1 nodes times 1 + x added to the cluster, the others "
             "unchanged; the seed's arrival rate):", "",
             "| seed | spare x | nodes | prod-a's GPUs | demand / quota | YARN-CS fragmentation (median) | GPUs running "
             "high-priority work | prod-a under YARN-CS / private |", "|---|---|---|---|---|---|---|---|"]
    for seed, x in rows:
        lines.append(f"| {seed} | {x['spare']:g} | {x['nodes']} | {x['quota']} | "
                     + ("-" if x["cover"] is None else f"{x['cover']:.2f}") + " | "
                     + ("-" if x["frag"] is None else f"{100 * x['frag']:.0f}%") + f" | {100 * x['high']:.1f}% | "
                     + ("-" if x["ratio"] is None else f"{x['ratio']:.2f}x") + f" ({_h(x['shared_s'])} vs "
                     f"{_h(x['private_s'])}) |")
    ctx.section("Figure 7 along prod-a's spare quota", "\n".join(lines))


def _where_section(ctx: Context, per_seed: list[dict[str, Any]]) -> None:
    """Where YARN-CS's anomaly can occur under Table 1's quotas: Figure 7's 7x needs a tenant whose
    quota covers its demand (its private cluster hardly queues) and whose jobs need affinity; a
    tenant whose quota is below its demand queues longer alone than shared."""
    lines = ["Two conditions make Figure 7's anomaly. (1) The tenant's private cluster hardly queues: its quota "
             "covers its demand (below it, the private cluster queues longer than the shared one). (2) Its "
             "within-quota jobs wait for affinity in the shared cluster: YARN-CS preempts low-priority work to give a "
             "within-quota job of 8k GPUs its nodes, so such a job waits only while fewer than k nodes are free of "
             "other tenants' high-priority work (the paper's 90% high-priority load makes those hours common).", "",
             "Per seed at the busy size: (1) each tenant's Table 1 quota over its mean demand, and its mean delay "
             "under YARN-CS over its private cluster's (tenants with a private delay of a minute or more); (2) under "
             "YARN-CS, the nodes free of high-priority work at the hourly samples (median, min) and the share of "
             "hours with fewer than 1, 2 and 4 such nodes (an 8-, 16- or 32-GPU within-quota job could then wait for "
             "affinity).", "",
             "| seed | nodes | tenant (Table 1 row): quota / demand, YARN-CS / private | nodes free of high-priority "
             "work (median, min) | hours with < 1 / < 2 / < 4 free |", "|---|---|---|---|---|"]
    for p in per_seed:
        v = p["views"]["table1"]
        priv, yarn = v["runs"]["private"]["delays"], v["runs"]["yarn-cs"]["delays"]
        cells = []
        for r in sorted(v["t1rows"], key=lambda r: -r["gpus"] / max(r["demand_gpus"], 1e-9)):
            t = r["tenant"]
            if priv.get(t, 0) >= 60 and t in yarn:
                cells.append(f"{t} ({r['row']}): {r['gpus'] / max(r['demand_gpus'], 1e-9):.2f}, "
                             f"{yarn[t] / priv[t]:.2f}x")
        f = free_nodes(v["runs"]["yarn-cs"]["frag_series"], v["nodes"])
        hours = " / ".join("-" if f[f"below_{k}"] is None else f"{100 * f[f'below_{k}']:.0f}%" for k in (1, 2, 4))
        lines.append(f"| {p['seed']} | {v['nodes']} | " + "; ".join(cells)
                     + (f" | {f['median']:g}, {f['min']} | {hours} |" if f["samples"] else " | - | - |"))
    for p in per_seed:
        v = p["views"]["table1"]
        c = tenant_comparison(v["runs"])
        if c["worst_quota_ratio"] is None or c["worst_quota_ratio"] < 2.0:
            continue
        t = c["worst_quota_tenant"]
        sizes = by_size(v["cmp"], t, v["runs"]["yarn-cs"]["job_delays"], v["runs"]["private"]["job_delays"])
        excess = sum(n * (y - pr) for _g, n, y, pr in sizes)
        one = sum(n * (y - pr) for g, n, y, pr in sizes if g == 1)
        why = (f"1-GPU jobs carry {100 * one / excess:.0f}% of the excess; a 1-GPU job needs no affinity, so this "
               "is not Figure 7's mechanism: the order inside the tenant changes (sizes whose delay is below the "
               "private one are served sooner; its small jobs wait longer, more of them beyond its quota, for idle "
               "GPUs of a busy cluster)"
               if excess > 0 and one > 0.5 * excess else
               "most of the excess is in jobs of 2 GPUs or more (affinity can be the cause)")
        parts = [f"{g} GPUs: {n} jobs, {y / H:.1f} h vs {pr / H:.1f} h" for g, n, y, pr in sizes]
        lines += ["", f"Seed {p['seed']}'s {c['worst_quota_ratio']:.2f}x ({t}, {_row_of(p, t)}), by job size (mean delay "
                  "under YARN-CS vs private): " + "; ".join(parts) + f"; {why}."]
    ctx.section("Where the anomaly can occur (Table 1 quotas)", "\n".join(lines))


def by_size(jobs, tenant: str, shared: dict[str, float], private: dict[str, float]) -> list[tuple[int, int, float, float]]:
    """``(GPUs, jobs, mean delay shared, mean delay private)`` per job size of ``tenant``'s jobs
    that finished in both runs (delays per job, as :func:`_job_delays`)."""
    per: dict[int, list[tuple[float, float]]] = {}
    for j in jobs:
        if j.tenant == tenant and j.id in shared and j.id in private:
            per.setdefault(j.gpus, []).append((shared[j.id], private[j.id]))
    return [(g, len(v), float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v])))
            for g, v in sorted(per.items())]


def _examined_section(ctx: Context, per_seed: list[dict[str, Any]]) -> None:
    """Every HiveD anomaly of every run, with its tenant, jobs and cause (:func:`.hived_quotas.examine`)."""
    rows = [e for p in per_seed for e in p["examined"]]
    runs = sum(1 for _ in rows)
    if not rows:
        ctx.section("Examined anomalies", "No HiveD run (any view, size, binding or preemption mode) has a tenant "
                    "waiting longer than in its private cluster.")
        return
    bugs = [e for e in rows if e["verdict"] != "outside the guarantee"]
    lines = [f"{runs} HiveD anomalies (a tenant's mean delay > 5% and > 10 min above its private cluster's) over all "
             f"HiveD runs; {len(bugs)} within a VC's guarantee (a bug). Each: run, tenant, jobs compared, "
             "opportunistic / preempted jobs, mean delay in HiveD and private, excess per job, of it work lost "
             "by preemption, excess of the jobs that only ran guaranteed, the three jobs that lost most, cause.", "",
             "| run | tenant | jobs | opportunistic / preempted | HiveD (h) | private (h) | excess (h/job) | lost work "
             "(h/job) | guaranteed-only excess (h/job) | worst jobs | cause |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in rows:
        lines.append(f"| {e['run']} | {e['tenant']} | {e['jobs']} | {e['opportunistic_jobs']} / {e['preempted_jobs']} | "
                     f"{e['delay_h']:.2f} | {e['private_h']:.2f} | {e['excess_h']:.2f} | {e['lost_work_h']:.2f} | "
                     f"{e['guaranteed_only_excess_h']:.2f} | {e['worst_jobs']} | {cause_text(e)} |")
    ctx.section("Examined anomalies", "\n".join(lines))


def figures(ctx: Context, per_seed: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p0 = per_seed[0]
    priv = p0["runs"]["private"]["delays"]
    tenants = sorted(t for t in priv if priv[t] > 60)
    if tenants:
        fig, ax = plt.subplots(figsize=(10, 3.6))
        xs = np.arange(len(tenants))
        shown = ("yarn-cs", "quota", "hived", "hived-static")
        for i, s in enumerate(shown):
            ys = [p0["runs"][s]["delays"].get(t, np.nan) / priv[t] for t in tenants]
            ax.bar(xs + (i - 1.5) * 0.2, ys, 0.2, label=s)
        ax.axhline(1.0, color="k", lw=0.8, label="private")
        ax.set_xticks(xs, tenants, rotation=60, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("delay / private")
        ax.set_title(f"mean queueing delay per tenant, normalised to its private cluster (seed {p0['seed']})",
                     fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        ctx.figure(fig, "fig7_tenants", "Figure 7's view (main quota view): each tenant's mean queueing delay under "
                   "YARN-CS, quota (HiveD's rule) and HiveD (dynamic and static binding, node-level cells) divided by "
                   "its private cluster's (above 1: a sharing anomaly).")
    fig, ax = plt.subplots(figsize=(10, 3.4))
    fr = p0.get("runs_fitted", {})
    for label, r in (("yarn-cs", p0["runs"]["yarn-cs"]), ("hived", p0["runs"]["hived"]),
                     ("hived-multi (fitted quotas)", fr.get("hived-multi"))):
        if r is None:
            continue
        ys = r["frag_series"]
        ax.plot(np.arange(len(ys)) / 24.0, 100 * np.array(ys), lw=1, label=label)
    ax.set_xlabel("days into the window")
    ax.set_ylabel("fragmentation (%)")
    ax.set_ylim(0, 105)
    ax.set_title("share of nodes that cannot give a high-priority job 8-GPU affinity (HiveD §5.2)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.figure(fig, "fig6_11_fragmentation", "Figures 6 and 11's view: fragmentation of GPU affinity over the "
               "window, YARN-CS vs HiveD with node-level cells vs HiveD with multi-level cells (seed 0).")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    panels = [(a1, "preempted_gpus", "low", ("hived", "hived-static-fixed", "hived-static"),
               "preempted GPUs, lower-load size (Figure 10)")]
    if all("runs_fitted" in p for p in per_seed):
        panels.append((a2, "fragmentation", "runs_fitted", ("hived-multi", "hived"), "mean fragmentation (Figure 11)"))
    for ax, key, where, schemes, title in panels:
        vals = [[p[where][s][key] or 0.0 for p in per_seed] for s in schemes]
        med = [float(np.median(v)) for v in vals]
        err = [[m - min(v) for m, v in zip(med, vals, strict=True)], [max(v) - m for m, v in zip(med, vals, strict=True)]]
        ax.bar(range(len(schemes)), med, yerr=err, capsize=3, color=["C1", "C2", "C3"][:len(schemes)])
        ax.set_xticks(range(len(schemes)), schemes)
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    ctx.figure(fig, "fig10_11_bars", "Figures 10 and 11's view: preempted GPUs with dynamic and static binding "
               "(node-level cells, main quota view, the lower-load size where the paper measured), mean fragmentation "
               "with multi-level and node-level cells (fitted quotas; median, min-max over seeds).")
