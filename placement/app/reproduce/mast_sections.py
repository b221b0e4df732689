"""The report sections and figures of ``placement reproduce mast`` (:mod:`.mast`): the busy-hours
workload, §5.6's condition per seed, who is judged, the hourly SLO windows with their intervals,
Fig. 11b's counterpart and the region-imbalance sweep's figure."""

from __future__ import annotations

import numpy as np

from .context import Context, fmt_spread
from .mast_setup import POLICIES, RUNS, VIEWS, Config, H, per_seed, points, wilson

__all__ = ["sweep_figure", "latency_figure", "workload_section", "condition_section", "window_section",
           "class_section"]


def sweep_figure(ctx: Context, cfg: Config, sweep) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = list(cfg.sweep_backlog)
    for pol, style in zip(POLICIES, ("-", "--"), strict=True):
        for p in cfg.sweep_protected:
            med = [100 * float(np.median([sweep[(b, p, s, pol)]["rate"] or 0.0 for s in ctx.seeds])) for b in xs]
            ax.plot(xs, med, style, marker="o", label=f"{pol}, B {p:.0%} protected")
    ax.set_xlabel("low-priority backlog waiting for region A (x a region's GPUs)")
    ax.set_ylabel("within-quota level-0 violations (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.figure(fig, "fig_imbalance_sweep", "Region-imbalance sweep: within-quota level-0 violation rate, median "
               "over seeds, MAST vs federated.")


def latency_figure(ctx: Context, cfg: Config, per) -> None:
    """Fig. 11's counterpart: the mean and P95 latency (§5.5's: queueing plus the preemption
    charge) of within-quota high-priority events per hourly window, MAST and federated, V1 view,
    median over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for pol, style in zip(POLICIES, ("-", "--"), strict=True):
        by_hour: dict[float, list[float]] = {}
        for s in ctx.seeds:
            for w in per[("view", VIEWS[0], s, pol)]["windows"]["high"]:
                if w["p95_latency_s"] is not None:
                    by_hour.setdefault(w["lo"] / H, []).append(w["p95_latency_s"] / 60)
        hours = sorted(by_hour)
        ax.plot(hours, [float(np.median(by_hour[h])) for h in hours], style, marker="o", label=f"{pol}, P95")
    ax.set_xlabel("hour of the busy-hours trace")
    ax.set_ylabel("latency (min)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.figure(fig, "fig11_latency", "Fig. 11b's counterpart: P95 latency (queueing and preemption charge) of "
               "within-quota high-priority events per hourly window, V1 view, median over seeds.")


def workload_section(ctx: Context, cfg: Config, per) -> None:
    S = [8 * m for m in cfg.region_machines]
    lines = ["High-priority (levels 0-1) demand/supply per region over the window as Tetris measures it (GPU-hours "
             "homed in the region inside the window over its GPU-hours; median over seeds), its standard deviation "
             "across regions (each seed's Tetris run sets the worst region and the spread), and the share of high-priority events "
             "within quota (federated's run; MAST's in brackets).", "",
             "| setting | demand/supply per region (" + " / ".join(map(str, S)) + " GPUs) | std | within quota |",
             "|---|---|---|---|"]
    for kind, v in points(cfg):
        rs = np.array(per_seed(per, kind, v, ctx.seeds, "mast", "ratio"))
        wf = fmt_spread(per_seed(per, kind, v, ctx.seeds, "federated", "high_within_share"), "%", 100)
        wm = fmt_spread(per_seed(per, kind, v, ctx.seeds, "mast", "high_within_share"), "%", 100)
        lines.append(f"| {kind} {v if isinstance(v, str) else f'{v:g}'} | " + " / ".join(f"{x:.2f}" for x in np.median(rs, axis=0))
                     + f" | {float(np.median(rs.std(axis=1))):.2f} | {wf} ({wm}) |")
    lines += ["", "Quotas (`busy_quotas`): each high-priority holder gets the most GPUs it asks for at once in any "
              "hour (capacity planned for high priority), levels 2 to 6 share the rest of the cluster by demand, "
              "unprioritised tenants none."]
    ctx.section("The busy-hours workload", "\n".join(lines))


def condition_section(ctx: Context, cfg: Config, per) -> None:
    """§5.6's condition per seed at each Tetris view (:mod:`.mast_busy`), and a note with the count."""
    lines = ["In the busiest hour (the most high-priority GPUs submitted), per region: high-priority demand/supply "
             "(Tetris's measure), all-priority demand/supply (the backlog included) and the GPUs a waiting level-1 "
             "workload could use (free or held by levels 2-6; time average over the hour in the federated run's "
             "log). The condition (the SLO claims' precondition) holds when the region with the lowest "
             "all-priority demand/supply, where federation dispatches (§5.6), is not the region with the most usable "
             "GPUs; the second reading takes the lowest high-priority demand/supply instead.", "",
             "| Tetris view | seed | hour | high-priority d/s | all-priority d/s | usable GPUs | lowest high / lowest "
             "all / most usable | holds (all / high) |", "|---|---|---|---|---|---|---|---|"]
    for v in VIEWS:
        n_hold = 0
        for s in ctx.seeds:
            c = per[("view", v, s, "mast")]["condition"]
            n_hold += bool(c["holds_all"])
            lines.append(f"| {v} | {s} | {c['hour']} | " + " / ".join(f"{x:.2f}" for x in c["hp_ratio"]) + " | "
                         + " / ".join(f"{x:.2f}" for x in c["all_ratio"]) + " | "
                         + " / ".join(f"{x:.0f}" for x in c["usable"])
                         + f" | {c['lowest_hp']} / {c['lowest_all']} / {c['most_usable']} | "
                         + ("yes" if c["holds_all"] else "no") + " / " + ("yes" if c["holds"] else "no") + " |")
        ctx.note(f"§5.6's condition (busiest hour: the region with the lowest demand/supply, where federation "
                 f"dispatches, is not the one with the most GPUs a waiting high-priority workload could use) holds on "
                 f"{n_hold} of "
                 f"{len(ctx.seeds)} seeds in the {v} view.")
    ctx.section("§5.6's condition in the busiest hour", "\n".join(lines))


def window_section(ctx: Context, cfg: Config, per) -> None:
    lines = [f"Each hourly window of the {cfg.hours:g}-hour trace (an hour without events joins the next): hours, "
             "violations of the guaranteed levels' within-quota events (§5.5's latency, default limits) and the "
             "95% interval of the rate.", "",
             "| Tetris view | seed | mast | federated |", "|---|---|---|---|"]
    for v in VIEWS:
        for s in ctx.seeds:
            cells = []
            for pol in POLICIES:
                ws = per[("view", v, s, pol)]["windows"]["guaranteed"]
                cells.append("; ".join(f"{w['lo'] / H:g}-{w['hi'] / H:g} h: {w['violations']} of {w['events']} "
                                       + "[{:.1f}, {:.1f}]%".format(*(100 * x for x in wilson(w["violations"],
                                                                                              w["events"])))
                                       for w in ws))
            lines.append(f"| {v} | {s} | {cells[0]} | {cells[1]} |")
    ctx.section("SLO windows", "\n".join(lines))


def class_section(ctx: Context, cfg: Config, per) -> None:
    lines = ["Scheduling events in the window and their violations, summed over seeds (rate in brackets), by who "
             "they belong to. Only the guaranteed levels' within-quota events are judged against 1.3%; the lowest "
             "level, unprioritised and over-quota work run opportunistically (§2, §4.2) and are shown apart.", "",
             "| Tetris view | class | " + " | ".join(RUNS) + " |", "|---|---|" + "---|" * len(RUNS)]
    for v in VIEWS:
        classes = list(per[("view", v, ctx.seeds[0], "mast")]["classes"])
        for c in classes:
            cells = []
            for pol in RUNS:
                if ("view", v, ctx.seeds[0], pol) not in per:
                    cells.append("-")
                    continue
                n = sum(per[("view", v, s, pol)]["classes"][c][0] for s in ctx.seeds)
                x = sum(per[("view", v, s, pol)]["classes"][c][1] for s in ctx.seeds)
                cells.append(f"{x} of {n}" + (f" ({x / n:.1%})" if n else ""))
            lines.append(f"| {v} | {c} | " + " | ".join(cells) + " |")
    ctx.section("Who is judged", "\n".join(lines))
