"""Tetris benchmark sections (app layer): hill-climbing speed and the paper's measures.

Called by ``placement bench`` through ``SPEC.bench_extra``. Sections:

* **Hill climbing on a generated instance** (default 10,000 tables, 20,000 jobs,
  16 regions; ``--quick`` 2,000 tables, 4,000 jobs, 8 regions; ``--scale`` adds
  100,000 tables, 200,000 jobs, 20 regions; always 4 GPU types, 7 priorities): wall time, moves evaluated per second, and the cost of one move
  evaluated incrementally against one full reference evaluation per move, both
  measured in the same run on the same sample of moves (and the two deltas
  compared).
* **MAST V0 vs hill climbing**: the high-priority GPU demand-to-supply ratio per
  region (PNG) and the paper's measures side by side (highest ratio and its
  standard deviation across regions -- the paper: 2.63 -> 0.98 and 0.76 -> 0.30 --,
  training-at-home rate, bytes moved against the quota).
* **Hill-climbing variants vs the exact optimum** on the stored instances: one
  pass (MAST's daily run), passes to convergence (the default), job moves --
  gap per instance, median and max, measured in the same run (the ILS extension
  runs as the solver ``hill-climb-ils`` in the main table).
* **Exact model, two exact products** for (7)x(8) (disaggregated vs McCormick),
  time side by side on the smallest stored instances (all with ``--scale``).
* **Heuristics vs the exact optimum on a generated suite**: 6 small instances
  by default and with ``--quick``; with ``--scale`` 24 up to 60x120x6 (the
  exact solves that made most of the default run's time).
* With ``--scale``: the largest generated instance the exact model proves
  optimal within 60 s (a growing size sweep).
* With ``--scale``: **certified gaps at scale** -- hill climbing, hill climbing
  with compound job moves and LNS at equal time on 1,000 x 2,000 x 10,
  10,000 x 20,000 x 16 and 100,000 x 200,000 x 20 (3 fresh seeds per size, 38511-38533), each
  against a certified lower bound (hot-table closed form, branching on hot tables' homes
  over the LP up to 5,000 tables and the LP relaxation alone up to 12,000 -- both run by
  branch and round, whose placement is a column too -- the forest decomposition beyond,
  600 / 1,800 / 600 s), with the bound's time and memory; up to 5,000 tables also the MIP
  of the relaxation (its placement, and HiGHS's bound in a column of its own).
* **Replicas** (§3.5) on the hill-climbing placement: collocation rate before and
  after, storage overhead, DR coverage.
* **Joint homes + replicas vs sequential**: the joint MIP (``models/tetris_joint.py``)
  against home MIP or LNS followed by §3.5's replicas or by optimal replicas, same
  replica budget, on generated instances with tight storage (2 small ones by
  default, 12 up to 30x60x5 with ``--scale``): runnable ML jobs and GPU-hours, home
  objective, storage, solve times and gaps.

Only this module (and the CLI / harness) imports ``solvers/``, through the registry
names of the Tetris spec.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ...registry import BenchSection, get_problem, resolve
from ...tetris.evaluation import evaluate
from ..report import markdown_table as _table
from ..report import save_figure

__all__ = ["bench_sections"]

DEFAULT_SIZE = dict(n_tables=10_000, n_jobs=20_000, n_regions=16)
QUICK_SIZE = dict(n_tables=2_000, n_jobs=4_000, n_regions=8)
SCALE_SIZE = dict(n_tables=100_000, n_jobs=200_000, n_regions=20)
SAMPLE_TABLES = {"default": 20, "quick": 40, "scale": 4}


def _hp_ratio(inst, ev) -> np.ndarray:
    """High-priority GPU demand / GPU supply per region (NaN where no supply)."""
    a = inst.arrays
    hp = ev.demand[:, :, list(inst.high_priorities)].sum(axis=(1, 2)) if inst.high_priorities \
        else np.zeros(inst.n_regions)
    sup = a.supply.sum(axis=1).astype(float)
    return np.where(sup > 0, hp / np.where(sup > 0, sup, 1.0), np.nan)


def _plot_ratio(inst, before: np.ndarray, after: np.ndarray, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    R = inst.n_regions
    x = np.arange(R)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * R + 2), 3.8))
    ax.bar(x - 0.2, np.nan_to_num(before), 0.4, label="V0 (start)", color="tab:red")
    ax.bar(x + 0.2, np.nan_to_num(after), 0.4, label="hill climbing", color="tab:green")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(x, inst.region_names, rotation=90 if R > 12 else 0, fontsize=7)
    ax.set_ylabel("high-priority GPU demand / supply")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path.parent, path.name)


def _move_cost(inst, home: np.ndarray, n_tables: int, seed: int) -> dict[str, float]:
    """Per-move cost, incremental vs full re-evaluation, on the same sampled moves."""
    from placement.solvers.hill_climb import HillClimbState, full_move_delta

    rng = np.random.default_rng(seed)
    tabs = np.sort(rng.choice(inst.n_tables, size=min(n_tables, inst.n_tables), replace=False))
    state = HillClimbState(inst, home)
    R = inst.n_regions
    t0 = time.perf_counter()
    deltas = [state.evaluate_tables([t]).delta[0] for t in tabs]
    inc = (time.perf_counter() - t0) / (len(tabs) * (R - 1))
    base = evaluate(inst, home).objective
    worst = 0.0
    n_full = 0
    t0 = time.perf_counter()
    for t, d in zip(tabs, deltas, strict=True):
        for c in range(R):
            if c == home[t]:
                continue
            full = full_move_delta(inst, home, int(t), c, base=base)
            worst = max(worst, abs(full - d[c]) / max(1.0, abs(base)))
            n_full += 1
    full_s = (time.perf_counter() - t0) / n_full
    return {"incremental_s_per_move": inc, "full_s_per_move": full_s, "ratio": full_s / inc,
            "sampled_moves": n_full, "max_rel_delta_diff": worst}


def _run(label: str, sizes: dict, seed: int, out_dir: Path, progress, task,
         time_limit: float | None) -> tuple[list[BenchSection], list[str]]:
    from placement.instances import generate_tetris

    spec = get_problem("tetris")
    hill_climb = resolve(spec.solvers["hill-climb"])
    replicas = resolve(spec.solvers["replicas"])

    progress.update(task, description=f"tetris {label}: generating {sizes['n_tables']} tables")
    t0 = time.perf_counter()
    inst = generate_tetris(**sizes, seed=seed, n_gpu_types=4, n_priorities=7)
    _ = inst.arrays
    gen_s = time.perf_counter() - t0
    progress.advance(task)

    progress.update(task, description=f"tetris {label}: hill climbing")
    res = hill_climb(inst, seed=seed, time_limit=time_limit)
    progress.advance(task)
    lns_res = None
    if label == "scale":  # LNS against hill climbing, 60 s each, same run
        progress.update(task, description=f"tetris {label}: LNS (60 s)")
        lns_res = resolve(spec.solvers["lns"])(inst, seed=seed, time_limit=time_limit)
    progress.update(task, description=f"tetris {label}: incremental vs full re-evaluation")
    home = res.solution.home if res.solution is not None else inst.arrays.home0
    cost = _move_cost(inst, inst.arrays.home0, SAMPLE_TABLES[label], seed)
    progress.advance(task)
    progress.update(task, description=f"tetris {label}: replicas")
    rep = replicas(inst, seed=seed, home=home)
    progress.advance(task)
    title = "scale" if label == "scale" else "default instance"

    size_txt = f"{inst.n_tables:,} tables, {inst.n_jobs:,} jobs, {inst.n_regions} regions, 4 GPU types, 7 priorities"
    hc_section, _ = _hill_climb_section(res, cost, size_txt, seed, gen_s, title)
    meas_section, meas = _measures_section(inst, home, label, out_dir, title)
    rep_section, rs = _replicas_section(rep, title)
    sections = [hc_section, meas_section, rep_section]
    if lns_res is not None:
        lns_section, summary_lns = _lns_section(res, lns_res, size_txt, time_limit)
        sections.append(lns_section)
    st = res.stats
    m0, m1 = meas[0], meas[1]
    summary = [
        f"tetris hill climbing ({size_txt}): {res.status} in {res.wall_time_s:.1f} s, "
        f"{st['moves_per_s']:,.0f} moves/s; one incremental move costs {cost['ratio']:,.0f}x less than a "
        f"full re-evaluation (same sample, deltas agree to {cost['max_rel_delta_diff']:.0e})",
        f"tetris V0 -> hill climbing: highest high-priority demand/supply {m0['hp_ratio_max']:.2f} -> "
        f"{m1['hp_ratio_max']:.2f}, std {m0['hp_ratio_std']:.2f} -> {m1['hp_ratio_std']:.2f} "
        f"(paper 2.63 -> 0.98, 0.76 -> 0.30), home rate {100 * m0['home_rate']:.1f}% -> "
        f"{100 * m1['home_rate']:.1f}%, {m1['bytes_moved']:,} of {inst.move_quota:,} quota bytes moved",
    ]
    if rep.status == "feasible":
        summary.append(
            f"tetris replicas: ML jobs runnable {100 * rs['collocation_jobs_before']:.1f}% -> "
            f"{100 * rs['collocation_jobs_after']:.1f}% (high-priority GPU-hours "
            f"{100 * rs['collocation_high_gpu_hours_before']:.1f}% -> "
            f"{100 * rs['collocation_high_gpu_hours_after']:.1f}%), storage overhead "
            f"{100 * rs['storage_overhead']:.0f}%, DR coverage {100 * rs['dr_coverage']:.0f}% within capacity")
    if lns_res is not None:
        summary.append(summary_lns)
    if label == "scale":
        summary.append(f"tetris scale: generating the instance took {gen_s:.0f} s (not part of the run)")
    return sections, summary


def _hill_climb_section(res, cost: dict, size_txt: str, seed: int, gen_s: float, title: str):
    """Hill climbing's own statistics and the incremental-vs-full cost per move (MAST §3.4)."""
    st = res.stats
    hc_row = {"instance": size_txt, "status": str(res.status), "wall_time_s": res.wall_time_s,
              "generate_s": gen_s, "passes": st["passes"], "moves_evaluated": st["moves_evaluated"],
              "moves_per_s": st["moves_per_s"], "moves_accepted": st["moves_accepted"],
              "time_init_s": st["time_init_s"], "time_search_s": st["time_search_s"],
              "initial_objective": st["initial_objective"], "final_objective": st["final_objective"],
              **{f"sample_{k}": v for k, v in cost.items()}}
    in_run_ratio = cost["full_s_per_move"] * st["moves_per_s"] if st["moves_per_s"] else None
    hc_row["ratio_in_run"] = in_run_ratio
    md = [f"Instance: {size_txt} (seed {seed}, generated in {gen_s:.1f} s).", "",
          _table([hc_row], ["status", "wall_time_s", "passes", "moves_evaluated", "moves_per_s",
                            "moves_accepted", "time_init_s", "time_search_s"]), "",
          f"Cost per move on {cost['sampled_moves']} sampled moves from the start placement: incremental "
          f"{1e6 * cost['incremental_s_per_move']:.1f} µs (one table, all regions) vs full re-evaluation "
          f"{1e3 * cost['full_s_per_move']:.2f} ms, ratio {cost['ratio']:.0f}x; against the whole run's "
          f"average ({st['moves_per_s']:.0f} moves/s, batched) {in_run_ratio:.0f}x. Largest relative "
          f"difference between the two deltas: {cost['max_rel_delta_diff']:.1e}."]
    return BenchSection(title=f"Tetris hill climbing, {title}", markdown="\n".join(md), rows=[hc_row]), hc_row


def _measures_section(inst, home, label: str, out_dir: Path, title: str):
    """The paper's measures (MAST §5.7) at the start placement V0 and after hill climbing."""
    ev0 = evaluate(inst, inst.initial_solution())
    ev1 = evaluate(inst, home)
    r0, r1 = _hp_ratio(inst, ev0), _hp_ratio(inst, ev1)
    fig = f"tetris_{label}_hp_ratio.png"
    _plot_ratio(inst, r0, r1, out_dir / fig,
                f"High-priority GPU demand/supply per region: V0 vs hill climbing ({inst.n_tables:,} tables)")
    meas = []
    for name, ev in (("V0 (start)", ev0), ("hill climbing", ev1)):
        m = ev.measures
        meas.append({"placement": name, "objective": ev.objective, "hp_ratio_max": m["hp_ratio_max"],
                     "hp_ratio_std": m["hp_ratio_std"], "home_rate": m["home_rate"],
                     "home_rate_high": m["home_rate_high"], "null_ml_jobs": m["null_jobs"],
                     "bytes_moved": ev.bytes_moved, "move_quota": inst.move_quota})
    md_meas = ["Paper (MAST §5.7): highest ratio 2.63 -> 0.98, std 0.76 -> 0.30, home rate 90.82% -> 93.02%.",
               "", _table(meas, list(meas[0])), ""]
    return BenchSection(title=f"Tetris V0 vs hill climbing ({title}): paper measures",
                        markdown="\n".join(md_meas), rows=meas, figures=[fig]), meas


def _replicas_section(rep, title: str):
    """Extra replicas (MAST §3.5): runnable jobs before and after, storage, DR coverage."""
    rs = rep.stats
    rep_row = {"status": str(rep.status), "wall_time_s": rep.wall_time_s,
               "collocation_jobs_before": rs.get("collocation_jobs_before"),
               "collocation_jobs_after": rs.get("collocation_jobs_after"),
               "collocation_high_gpu_hours_before": rs.get("collocation_high_gpu_hours_before"),
               "collocation_high_gpu_hours_after": rs.get("collocation_high_gpu_hours_after"),
               "storage_overhead": rs.get("storage_overhead"), "dr_coverage": rs.get("dr_coverage"),
               "replicas_per_table_mean": rs.get("replicas_per_table_mean"),
               "storage_used_share": rs.get("storage_used_share")}
    md_rep = ["Replicas count against storage capacity (4); phases: collocation, hot tables "
              "(quota 10% of table bytes, split by GPU supply), DR copies with the storage left.", "",
              _table([rep_row], list(rep_row)), ""]
    return BenchSection(title=f"Tetris replicas ({title})", markdown="\n".join(md_rep), rows=[rep_row]), rs


def _lns_section(res, lns_res, size_txt: str, time_limit: float):
    """LNS against hill climbing at scale, same time each, same run; its summary line."""
    ls = lns_res.stats
    cmp_rows = [{"solver": "hill-climb", "status": str(res.status), "objective": res.objective,
                 "minus_hill_climb": 0.0, "wall_time_s": res.wall_time_s},
                {"solver": "lns", "status": str(lns_res.status), "objective": lns_res.objective,
                 "minus_hill_climb": lns_res.objective - res.objective, "wall_time_s": lns_res.wall_time_s,
                 "hill_climb_s": ls.get("hill_climb_s"),
                 "neighbourhoods": ls.get("rounds"), "improved": sum(ls.get("improved", {}).values()),
                 "sub_s_median": ls.get("sub_s_median")}]
    better = lns_res.objective is not None and res.objective is not None and lns_res.objective < res.objective
    section = BenchSection(
        title="Tetris LNS vs hill climbing at scale", rows=cmp_rows,
        markdown="\n".join([f"{size_txt}, {time_limit:.0f} s each (LNS includes its hill-climbing start), "
                            "same run. Goal: LNS better than hill climbing within 60 s.", "",
                            _table(cmp_rows, list(cmp_rows[1]))]))
    diff = res.objective - lns_res.objective
    summary_lns = (f"tetris LNS vs hill climbing at scale ({time_limit:.0f} s each): objective "
                   f"{res.objective:.10g} -> {lns_res.objective:.10g} (lower by {diff:.4g}, "
                   f"{diff / max(abs(res.objective), 1e-9):.1e} relative; {ls.get('rounds')} neighbourhoods in "
                   f"{lns_res.wall_time_s - ls.get('hill_climb_s', 0.0):.0f} s after its hill climbing; "
                   + ("goal met" if better else "goal NOT met") + ")")
    return section, summary_lns


VARIANTS = {
    "§3.4, one pass": {"max_passes": 1},
    "§3.4, passes to convergence (default)": {},
    "+ job moves": {"job_moves": True},
}  # the 50-kick ILS extension is a solver of its own in the main table (hill-climb-ils)


def _variants(quick: bool, seed: int, progress, task,
              main_rows: list[dict[str, Any]] | None = None) -> tuple[BenchSection, list[str]]:
    """Hill-climbing variants against the exact optimum on the stored instances.

    The exact reference comes from the main table's rows of the same run when
    given (no second exact solve), else it is solved here.
    """
    from ...result import relative_gap

    spec = get_problem("tetris")
    exact = resolve(spec.solvers[spec.exact_solver])
    hill_climb = resolve(spec.solvers["hill-climb"])
    known = {r["instance"]: r for r in (main_rows or []) if r["solver"] == spec.exact_solver}
    rows = []
    gaps: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for name, inst in spec.bench_instances(quick):
        if name in known:
            status = known[name]["status"]
            ref = known[name]["objective"] if status == "optimal" else known[name]["bound"]
        else:
            progress.update(task, description=f"tetris variants: {name} / exact")
            ex = exact(inst, **spec.bench_options.get(spec.exact_solver, {}))
            status, ref = str(ex.status), (ex.objective if ex.status == "optimal" else ex.bound)
        row: dict[str, Any] = {"instance": name, "exact_status": status, "reference": ref}
        for label, kw in VARIANTS.items():
            res = hill_climb(inst, seed=seed, **kw)
            gap = relative_gap(res.objective, ref)
            row[label] = None if gap is None else f"{100 * gap:.2f}% ({res.wall_time_s:.2f} s)"
            if gap is not None:
                gaps[label].append(gap)
        rows.append(row)
        progress.advance(task)
    med = {k: float(np.median(v)) for k, v in gaps.items() if v}
    worst = {k: float(np.max(v)) for k, v in gaps.items() if v}
    md = ["Gap of each hill-climbing variant to the exact optimum (or bound when not proven), same run; "
          "job moves are an extension beyond §3.4 (see solvers/hill_climb.py).", "",
          _table(rows, ["instance", "exact_status", *VARIANTS]), "",
          _table([{"variant": k, "median_gap_%": 100 * med[k], "max_gap_%": 100 * worst[k]} for k in med],
                 ["variant", "median_gap_%", "max_gap_%"])]
    summary = ["tetris hill-climbing variants vs exact (median / max gap): " + "; ".join(
        f"{k} {100 * med[k]:.2f}% / {100 * worst[k]:.2f}%" for k in med)] if med else []
    return BenchSection(title="Tetris hill-climbing variants vs the exact optimum", markdown="\n".join(md),
                        rows=rows, summary=summary), summary


def _formulations(quick: bool, scale: bool, progress, task) -> BenchSection:
    """The exact model's two exact products for (7) x (8), side by side on the stored instances.

    Both are exact; the disaggregated split has the tighter LP relaxation. By
    default the smallest stored instances (the textbook McCormick form needs
    tens of seconds beyond them); ``--scale`` runs all, 60 s each.
    """
    spec = get_problem("tetris")
    exact = resolve(spec.solvers[spec.exact_solver])
    cases = spec.bench_instances(quick)
    if not scale:
        cases = cases[: 2 if quick else 3]
    limit = 60.0 if scale else 20.0
    rows, ratios = [], []
    for name, inst in cases:
        row: dict[str, Any] = {"instance": name}
        times = {}
        for product in ("disaggregated", "mccormick"):
            progress.update(task, description=f"tetris formulations: {name} / {product}")
            res = exact(inst, time_limit=limit, product=product)
            times[product] = res.wall_time_s
            row[f"{product}_status"] = str(res.status)
            row[f"{product}_s"] = res.wall_time_s
            row[f"{product}_objective"] = res.objective
        ratio = times["mccormick"] / max(times["disaggregated"], 1e-9)
        row["mccormick / disaggregated time"] = ratio
        ratios.append(ratio)
        rows.append(row)
    cols = ["instance", "disaggregated_status", "disaggregated_s", "mccormick_status", "mccormick_s",
            "mccormick / disaggregated time"]
    md = [f"Exact model, two exact linearizations of the product (7)x(8), same run, time limit {limit:.0f} s "
          "(models/tetris.py `product=`).", "", _table(rows, cols)]
    summary = [f"tetris exact model: the disaggregated product solves {np.median(ratios):.1f}x faster (median) "
               f"than the textbook McCormick product on {len(rows)} stored instances"] if ratios else []
    return BenchSection(title="Tetris exact model: disaggregated vs McCormick product", markdown="\n".join(md),
                        rows=rows, summary=summary)


# Generated gap suite: sizes (tables, jobs, regions) x seeds, solved exactly in the same run. The full
# suite (up to 60x120x6, its exact solves most of the bench's time) runs with ``--scale``; the default
# and ``--quick`` runs keep a small one (6 instances) that still reports every solver's gaps.
SUITE_SIZES = {"quick": [(8, 12, 3), (10, 15, 3), (12, 20, 3)],
               "default": [(10, 15, 3), (15, 25, 4), (20, 40, 4)],
               "scale": [(10, 15, 3), (15, 25, 4), (20, 40, 4), (30, 60, 5), (40, 80, 5), (60, 120, 6)]}
SUITE_SEEDS = {"quick": 2, "default": 2, "scale": 4}
SUITE_EXACT_LIMIT = {"quick": 10.0, "default": 30.0, "scale": 120.0}
SUITE_LNS_LIMIT = {"quick": 3.0, "default": 5.0, "scale": 10.0}
SUITE_SEED_BASE = 100  # instance seeds 100 + 1000 * --seed + i: not the seeds LNS's defaults were tuned on (11-14)
SUITE_HEURISTICS = ("hill-climb", "hill-climb-ils", "lns")


def _percentile(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v, dtype=float), q)) if v else float("nan")


def _generated_suite(label: str, seed: int, progress, task) -> BenchSection:
    """Heuristic gaps on freshly generated instances (6 by default and with ``--quick``, 24 with ``--scale``).

    Every instance is made by today's generator (2 GPU types, 3 priorities, the
    ``placement generate tetris`` defaults) with seeds the heuristics were not
    tuned on, solved by the exact model (time limit per label) and by hill
    climbing, ``hill-climb-ils`` and ``lns`` (its own time limit) in the same run.
    The reference of an instance is its proven optimum when the exact model
    proves one, else the best valid lower bound known (the exact model's, or the
    bound of LNS's whole-model phase); gaps are ``(objective - reference) /
    reference`` -- to the bound, so they overstate the true gap where nothing is
    proven.
    """
    from placement.instances import generate_tetris

    from ...result import relative_gap

    spec = get_problem("tetris")
    exact = resolve(spec.solvers[spec.exact_solver])
    solvers = {name: resolve(spec.solvers[name]) for name in SUITE_HEURISTICS}
    exact_limit, lns_limit = SUITE_EXACT_LIMIT[label], SUITE_LNS_LIMIT[label]
    rows: list[dict[str, Any]] = []
    gaps: dict[str, list[float]] = {n: [] for n in SUITE_HEURISTICS}
    proven_gaps: dict[str, list[float]] = {n: [] for n in SUITE_HEURISTICS}
    lns_times: list[float] = []
    base = SUITE_SEED_BASE + 1000 * seed
    for T, J, R in SUITE_SIZES[label]:
        for i in range(SUITE_SEEDS[label]):
            s = base + i
            inst = generate_tetris(T, J, R, seed=s)
            progress.update(task, description=f"tetris generated suite: {T}x{J}x{R} seed {s} / exact")
            ex = exact(inst, time_limit=exact_limit)
            row: dict[str, Any] = {"size": f"{T}x{J}x{R}", "seed": s, "exact_status": str(ex.status),
                                   "exact_s": ex.wall_time_s}
            results = {}
            for name, fn in solvers.items():
                progress.update(task, description=f"tetris generated suite: {T}x{J}x{R} seed {s} / {name}")
                kw = {"time_limit": lns_limit} if name == "lns" else {}
                results[name] = fn(inst, seed=seed, **kw)
            bounds = [b for b in (ex.bound, results["lns"].bound) if b is not None and np.isfinite(b)]
            objs = [r.objective for r in (ex, *results.values()) if r.objective is not None]
            best = min(objs) if objs else None
            proven = ex.status == "optimal"
            ref = ex.objective if proven else (max(bounds) if bounds else None)
            if ref is not None and best is not None:
                ref = min(ref, best)  # a bound never exceeds a verified value
            row.update(reference=ref, proven=proven)
            for name, res in results.items():
                gap = relative_gap(res.objective, ref)
                row[f"{name}_gap_%"] = None if gap is None else 100 * gap
                if gap is not None:
                    gaps[name].append(gap)
                    if proven:
                        proven_gaps[name].append(gap)
            row["lns_s"] = results["lns"].wall_time_s
            # None where the whole-model phase proved the optimum before any neighbourhood.
            row["lns_neighbourhoods_per_s"] = (results["lns"].stats.get("neighbourhoods_per_s")
                                               if results["lns"].stats.get("rounds") else None)
            row["lns_proved_optimal"] = bool(results["lns"].stats.get("proof"))
            lns_times.append(results["lns"].wall_time_s)
            rows.append(row)
        progress.advance(task)
    n_proven = sum(r["proven"] for r in rows)
    agg = []
    for name in SUITE_HEURISTICS:
        g, pg = gaps[name], proven_gaps[name]
        agg.append({"solver": name, "instances": len(g), "median_gap_%": 100 * _percentile(g, 50),
                    "p90_gap_%": 100 * _percentile(g, 90), "max_gap_%": 100 * max(g, default=float("nan")),
                    "median_gap_proven_%": 100 * _percentile(pg, 50),
                    "max_gap_proven_%": 100 * max(pg, default=float("nan"))})
    rates = [r["lns_neighbourhoods_per_s"] for r in rows if r.get("lns_neighbourhoods_per_s")]
    sizes = SUITE_SIZES[label]
    what = (f"{len(rows)} instances generated in this run, {sizes[0][0]}x{sizes[0][1]}x{sizes[0][2]} to "
            f"{sizes[-1][0]}x{sizes[-1][1]}x{sizes[-1][2]} (tables x jobs x regions, 2 GPU types, 3 priorities), "
            f"seeds {base}..{base + SUITE_SEEDS[label] - 1}")
    md = [f"{what}; exact model {exact_limit:.0f} s each (proven optimal on {n_proven} of {len(rows)}), LNS "
          f"{lns_limit:.0f} s each. Reference: the proven optimum, else the best valid lower bound (gaps to a "
          "bound overstate the true gap). LNS goal: median <= 0.5%, max <= 3% within 10 s. LNS neighbourhoods "
          f"per second (phase C, one persistent model per instance): median {_percentile(rates, 50):.1f}, "
          f"range {min(rates, default=float('nan')):.1f}-{max(rates, default=float('nan')):.1f}."
          + ("" if label == "scale" else " The full suite (up to 60x120x6, 4 seeds per size, exact model 120 s "
             "each) runs with `--scale`."), "",
          _table(agg, list(agg[0])), "",
          _table(rows, ["size", "seed", "exact_status", "exact_s", "reference", *[f"{n}_gap_%" for n in SUITE_HEURISTICS],
                        "lns_s", "lns_neighbourhoods_per_s", "lns_proved_optimal"])]
    lns_row = agg[-1]
    summary = [f"tetris generated suite ({len(rows)} instances up to {sizes[-1][0]}x{sizes[-1][1]}x{sizes[-1][2]}, "
               f"{n_proven} proven optimal): gap median / p90 / max " + "; ".join(
                   f"{a['solver']} {a['median_gap_%']:.2f}% / {a['p90_gap_%']:.2f}% / {a['max_gap_%']:.2f}%" for a in agg)
               + f" (LNS {lns_limit:.0f} s budget, {max(lns_times, default=0):.1f} s at most, "
               f"{_percentile(rates, 50):.1f} neighbourhoods/s median; goal 0.5% / 3%: "
               + ("met" if lns_row["median_gap_%"] <= 0.5 and lns_row["max_gap_%"] <= 3.0 else "NOT met") + ")"]
    return BenchSection(title="Tetris heuristics vs the exact optimum on a generated suite", markdown="\n".join(md),
                        rows=rows, summary=summary)


EXACT_SWEEP = [(10, 15, 3), (15, 25, 4), (20, 40, 4), (30, 60, 5), (40, 80, 5), (60, 120, 6), (80, 160, 6),
               (120, 240, 8)]


def _exact_sweep(seed: int, progress, task, limit: float = 60.0) -> BenchSection:
    """The largest generated instance the exact model proves optimal within ``limit`` seconds.

    Sizes grow along ``EXACT_SWEEP`` (tables, jobs, regions; 2 GPU types, 3
    priorities) with two seeds each; the sweep stops after the first size where
    neither seed is proven.
    """
    from placement.instances import generate_tetris

    spec = get_problem("tetris")
    exact = resolve(spec.solvers[spec.exact_solver])
    rows, largest = [], None
    for T, J, R in EXACT_SWEEP:
        proven = 0
        for s in (seed, seed + 1):
            progress.update(task, description=f"tetris exact sweep: {T}x{J}x{R} seed {s}")
            res = exact(generate_tetris(T, J, R, seed=s), time_limit=limit)
            proven += res.status == "optimal"
            rows.append({"tables": T, "jobs": J, "regions": R, "seed": s, "status": str(res.status),
                         "wall_time_s": res.wall_time_s, "gap": res.gap, "binaries": res.stats.get("binaries")})
        if proven == 2:
            largest = (T, J, R)
        if proven == 0:
            break
    what = "none" if largest is None else f"{largest[0]} tables x {largest[1]} jobs x {largest[2]} regions"
    md = [f"Exact model on generated instances of growing size, {limit:.0f} s each, two seeds per size; "
          f"largest size proven optimal for both seeds: **{what}**.", "",
          _table(rows, ["tables", "jobs", "regions", "seed", "status", "wall_time_s", "gap", "binaries"])]
    return BenchSection(title="Tetris exact model: largest instance proven optimal within 60 s",
                        markdown="\n".join(md), rows=rows,
                        summary=[f"tetris exact model: largest generated size proven optimal within {limit:.0f} s "
                                 f"(both seeds): {what}"])


# Joint homes + replicas (models/tetris_joint.py) against the sequential pipeline. Tight storage
# (storage_room 1.3: the generator's default 2.2 leaves room for every copy, where the order cannot
# matter) and seeds 300 + 1000 * --seed + i, which no test or default was tuned on.
JOINT_SIZES = {"quick": [(10, 15, 3)], "default": [(10, 15, 3), (15, 25, 4)],
               "scale": [(10, 15, 3), (15, 25, 4), (20, 40, 4), (30, 60, 5)]}
JOINT_SEEDS = {"quick": 1, "default": 1, "scale": 3}
JOINT_LIMIT = {"quick": 20.0, "default": 30.0, "scale": 120.0}
JOINT_LNS_LIMIT = {"quick": 1.0, "default": 2.0, "scale": 5.0}
JOINT_BUDGET_SHARE = 0.10  # replica bytes allowed, as a share of all table bytes
JOINT_STORAGE_ROOM = 1.3
JOINT_SEED_BASE = 300


def _joint_row(size: str, s: int, method: str, budget, res, seconds: float) -> dict[str, Any]:
    st = res.stats if res.solution is not None else {}
    return {"size": size, "seed": s, "method": method, "budget": budget, "status": str(res.status),
            "J": res.objective if res.solution is not None else None,
            "home_objective": st.get("home_objective"),
            "runnable_jobs": f"{st.get('runnable_ml_jobs')}/{st.get('ml_jobs')}",
            "runnable_gpu_hours": st.get("runnable_gpu_hours"), "ml_gpu_hours": st.get("ml_gpu_hours"),
            "dr_tables": st.get("dr_tables"), "replica_bytes": st.get("replica_bytes"),
            "storage_used": st.get("storage_used"), "wall_time_s": seconds, "gap": res.gap}


def _gain(joint: dict, joint_value: float, seq: dict, seq_value: float) -> dict[str, float]:
    """The joint answer against a sequential one: runnable GPU-hours gained, home objective cost, J."""
    return {"gpu_hours": joint["runnable_gpu_hours"] - seq["runnable_gpu_hours"], "ml_gpu_hours": seq["ml_gpu_hours"],
            "home_rel": (joint["home_objective"] - seq["home_objective"]) / max(abs(seq["home_objective"]), 1e-9),
            "J": seq_value - joint_value}


def _joint_vs_sequential(label: str, seed: int, progress, task) -> BenchSection:
    """Homes and replicas by one MIP against homes first, replicas after (MAST §3.5; §6's future work).

    Per instance, with the joint objective ``J = w1(1) + w2(2) + w3(3) - lambda G_run - mu N_dr``
    (default weights, ``placement/tetris/replica_eval.py``): the sequential pipeline
    (home MIP, or LNS, then the §3.5 phases of ``solvers/replicas.py``, uncapped -- the joint
    model then gets the replica bytes they used -- and capped at the 10% budget), the exact second
    stage (those homes fixed, optimal replicas within a budget of 10% of the table
    bytes) and the joint MIP within the same budget. Every point is judged by the
    reference evaluation of ``J``.
    """
    from placement.instances import generate_tetris

    from ...result import SolveResult
    from ...tetris.replica_eval import evaluate_joint

    spec = get_problem("tetris")
    exact = resolve(spec.solvers[spec.exact_solver])
    lns = resolve(spec.solvers["lns"])
    replicas = resolve(spec.solvers["replicas"])
    joint = resolve(spec.solvers["joint"])
    limit, lns_limit = JOINT_LIMIT[label], JOINT_LNS_LIMIT[label]
    rows: list[dict[str, Any]] = []
    gains: dict[str, list[dict[str, float]]] = {"§3.5": [], "§3.5 at the budget": [], "exact second stage": []}
    base = JOINT_SEED_BASE + 1000 * seed
    for T, J, R in JOINT_SIZES[label]:
        for i in range(JOINT_SEEDS[label]):
            s = base + i
            size = f"{T}x{J}x{R}"
            inst = generate_tetris(T, J, R, seed=s, storage_room=JOINT_STORAGE_ROOM)
            budget = int(JOINT_BUDGET_SHARE * inst.arrays.total_size)
            progress.update(task, description=f"tetris joint vs sequential: {size} seed {s}")
            homes = {"home MIP": exact(inst, time_limit=limit), "LNS": lns(inst, seed=seed, time_limit=lns_limit)}
            seq_budget, seq35, seq_exact, seq35_budget = None, None, None, None
            for name, h in homes.items():
                if h.solution is None:
                    continue
                rep = replicas(inst, home=h.solution.home)
                ev = evaluate_joint(inst, rep.solution)
                point = SolveResult(rep.status, "replicas", solution=rep.solution, objective=ev.objective,
                                    stats=ev.measures)
                rows.append(_joint_row(size, s, f"{name} + §3.5", "(its own)", point, h.wall_time_s + rep.wall_time_s))
                if name == "home MIP":
                    seq_budget, seq35 = ev.replica_bytes, ev
                    capped = replicas(inst, home=h.solution.home, replica_budget=budget)
                    seq35_budget = evaluate_joint(inst, capped.solution)
                    rows.append(_joint_row(size, s, f"{name} + §3.5", budget,
                                           SolveResult(capped.status, "replicas", solution=capped.solution,
                                                       objective=seq35_budget.objective,
                                                       stats=seq35_budget.measures),
                                           h.wall_time_s + capped.wall_time_s))
                second = joint(inst, replica_budget=budget, fix_home=h.solution.home, time_limit=limit)
                rows.append(_joint_row(size, s, f"{name} + exact replicas", budget, second,
                                       h.wall_time_s + second.wall_time_s))
                if name == "home MIP":
                    seq_exact = second
            both = joint(inst, replica_budget=budget, time_limit=limit)
            rows.append(_joint_row(size, s, "joint MIP", budget, both, both.wall_time_s))
            if both.solution is not None and seq35_budget is not None:
                gains["§3.5 at the budget"].append(_gain(both.stats, both.objective, seq35_budget.measures,
                                                         seq35_budget.objective))
            if both.solution is not None and seq_exact is not None and seq_exact.solution is not None:
                gains["exact second stage"].append(_gain(both.stats, both.objective, seq_exact.stats,
                                                         seq_exact.objective))
            if seq_budget is not None:
                same = joint(inst, replica_budget=seq_budget, time_limit=limit)
                rows.append(_joint_row(size, s, "joint MIP", seq_budget, same, same.wall_time_s))
                if same.solution is not None:
                    gains["§3.5"].append(_gain(same.stats, same.objective, seq35.measures, seq35.objective))
        progress.advance(task)
    sizes = JOINT_SIZES[label]
    n = len({(r["size"], r["seed"]) for r in rows})

    def say(key: str) -> str:
        g = gains[key]
        if not g:
            return f"vs home MIP + {key}: no comparison"
        dg = [x["gpu_hours"] for x in g]
        share = 100 * sum(dg) / max(1, sum(x["ml_gpu_hours"] for x in g))
        return (f"vs home MIP + {key}: more runnable GPU-hours on {sum(d > 0 for d in dg)} of {len(g)} "
                f"(+{min(dg)}..+{max(dg)}, +{share:.1f}% of all ML GPU-hours in total), home objective "
                f"{100 * min(x['home_rel'] for x in g):+.2f}%..{100 * max(x['home_rel'] for x in g):+.2f}%, "
                f"J lower by {min(x['J'] for x in g):.3g}..{max(x['J'] for x in g):.3g}")

    span = "x".join(map(str, sizes[0])) + ("" if len(sizes) == 1 else " to " + "x".join(map(str, sizes[-1])))
    md = [f"{n} generated instance{'s' * (n != 1)} ({span}, tables x jobs x regions; storage_room "
          f"{JOINT_STORAGE_ROOM}, seeds {base}..{base + JOINT_SEEDS[label] - 1}), MIPs {limit:.0f} s each, LNS "
          f"{lns_limit:.0f} s. Budget: {100 * JOINT_BUDGET_SHARE:.0f}% of the table bytes, or the replica bytes "
          "§3.5 used after the home MIP uncapped. J (lower is better) is the joint "
          "objective w1(1)+w2(2)+w3(3) - lambda G_run - mu N_dr with the default weights; home_objective is "
          "Figure 4's (1)-(3) alone; gap is each MIP's own (objective - bound) / bound; a sequential row's "
          "time includes its homes' solve."
          + ("" if label == "scale" else " More sizes and seeds with `--scale`."), "",
          _table(rows, ["size", "seed", "method", "budget", "status", "J", "home_objective", "runnable_jobs",
                        "runnable_gpu_hours", "ml_gpu_hours", "dr_tables", "replica_bytes", "storage_used",
                        "wall_time_s", "gap"])]
    summary = [f"tetris joint homes+replicas MIP on {n} generated instance{'s' * (n != 1)} (same budget): "
               + "; ".join(say(k) for k in gains)]
    return BenchSection(title="Tetris homes and replicas: joint MIP vs sequential", markdown="\n".join(md),
                        rows=rows, summary=summary)


# Certified gaps at MAST's scale: tables x jobs x regions, the bound's time limit.
# The limits are the Tetris bounds page's: 600 s for the branching at 1,000 tables, 1,800 s for the LP
# rounded by branch and round at 10,000 (a certified bound within 30 minutes on one thread) and 600 s for
# the forest at 100,000.
CERTIFIED_SIZES = [(1_000, 2_000, 10, 600.0), (10_000, 20_000, 16, 1_800.0), (100_000, 200_000, 20, 600.0)]
CERTIFIED_SEED = 38_000  # fresh seeds per size i (1, 2, 3) and j = 1..CERTIFIED_SEEDS:
CERTIFIED_SEEDS = 3      # CERTIFIED_SEED + 1000 * --seed + 500 + 10 * i + j (38511-38513, 38521-38523, 38531-38533)
JOB_MOVES_LIMIT = 300.0  # the compound-move climb is stopped here (its placement so far is kept)
LNS_MIN_S = 10.0  # LNS gets the longer climb's time, at least this
BRANCH_MAX_TABLES = 5_000  # up to here the bound branches on hot tables' homes; beyond, the LP, then the forest
LP_MAX_TABLES = None  # up to here the LP relaxation alone (None: tetris_bound's AUTO_LP_MAX_TABLES); beyond, the forest


def _certified(seed: int, progress, task, sizes=None, seeds: int = CERTIFIED_SEEDS) -> BenchSection:
    """Hill climbing, hill climbing with compound job moves, LNS at equal time and branch and round,
    each with its gap to a certified lower bound; the bound's time and peak memory (``--scale``).

    The bound is the larger of two valid bounds: the closed-form hot-table bound
    (:mod:`placement.models.tetris_bound.hot`, seconds) and, up to ``BRANCH_MAX_TABLES`` tables, the
    best-first branching on hot tables' homes over the LP relaxation, run by
    :mod:`placement.solvers.branch_round` (which also rounds each expanded node's LP into a placement
    and climbs from it: one run gives the ``branch_round`` heuristic and the bound), beyond it up to
    ``LP_MAX_TABLES`` the LP relaxation alone, rounded by the same
    solver (``root="lp"``: its interior point takes 17-30 minutes at 10,000 tables, so that size gets
    1,800 s; ``bound_wall_s`` is then branch and round's whole run, the roundings' climbs and the polish
    included), and beyond that the Lagrangian decomposition with multi-table ML jobs kept whole along a
    spanning forest (:mod:`placement.models.tetris_bound.forest`, no ``branch_round``: the LP does not
    finish at 100,000 tables), each certified in numpy (an LP by its dual, the Lagrangian
    at its multipliers). LNS gets the longer of the two climbs' times (at least 10 s); the
    compound-move climb stops at ``JOB_MOVES_LIMIT`` s. The gap is ``(objective - bound) /
    bound``, at least the true gap. Each size runs on ``seeds`` fresh seeds (``CERTIFIED_SEEDS``, 3: the
    spread the page reports), with the bound's time limit of ``CERTIFIED_SIZES``.
    """
    from placement.instances import generate_tetris
    from placement.models.tetris_bound import AUTO_LP_MAX_TABLES
    from placement.models.tetris_bound import solve as relaxation
    from placement.models.tetris_bound.hot import solve as hot_bound
    from placement.models.tetris_bound.mip import solve as mip_bound
    from placement.solvers import branch_round, hill_climb, lns

    from ...result import relative_gap

    lp_max = AUTO_LP_MAX_TABLES if LP_MAX_TABLES is None else LP_MAX_TABLES
    rows = []
    runs = [(i, j, size) for i, size in enumerate(sizes or CERTIFIED_SIZES, start=1) for j in range(1, seeds + 1)]
    for i, j, (T, J, R, limit) in runs:
        s = CERTIFIED_SEED + 1000 * seed + 500 + 10 * i + j
        progress.update(task, description=f"tetris certified gaps: {T}x{J}x{R} seed {s}")
        inst = generate_tetris(T, J, R, seed=s, n_gpu_types=4, n_priorities=7)
        t = time.perf_counter()
        hc = hill_climb.solve(inst)
        hc_s = time.perf_counter() - t
        t = time.perf_counter()
        hcj = hill_climb.solve(inst, job_moves=True, time_limit=JOB_MOVES_LIMIT)
        hcj_s = time.perf_counter() - t
        budget = max(LNS_MIN_S, hc_s, hcj_s)
        ln = lns.solve(inst, time_limit=budget, seed=3)
        c0 = time.process_time()
        hot = hot_bound(inst)
        hot_cpu = time.process_time() - c0
        method = "branch" if T <= BRANCH_MAX_TABLES else "lp" if T <= lp_max else "forest"
        c0 = time.process_time()
        if method in ("branch", "lp"):
            b = branch_round.solve(inst, time_limit=limit, seed=0, root=method)
            bst = {k.removeprefix(f"{method}_"): v for k, v in b.stats.items()}   # "{method}_status" -> "status"
        else:
            b = relaxation(inst, time_limit=limit, method=method)
            bst = dict(b.stats, status=str(b.status))
        cpu = time.process_time() - c0
        mip = mip_bound(inst, time_limit=limit) if method == "branch" else None
        lp_value = b.bound if b.bound is not None else 0.0
        row = {"size": f"{T}x{J}x{R}", "seed": s, "bound": max(lp_value, hot.bound),
               "bound_method": method, "bound_status": bst["status"], "lp_bound": lp_value,
               "lp_root": bst.get("root_bound") if method == "branch" else None,
               "nodes": bst.get("nodes"), "lp_rounds": bst.get("rounds"), "lp_last_status": bst.get("last_round_status"),
               "hot_bound": hot.bound, "hot_cpu_s": hot_cpu,
               "bound_wall_s": b.wall_time_s, "bound_cpu_s": cpu, "lp_solver": b.stats.get("lp_solver"),
               "columns": bst.get("columns"), "rows": bst.get("rows"),
               "peak_rss_mb": bst.get("peak_rss_mb"),   # the process's peak, read at the bound's end
               "hill_climb": hc.objective, "hill_climb_s": hc_s, "job_moves": hcj.objective, "job_moves_s": hcj_s,
               "job_moves_status": str(hcj.status),
               "lns": ln.objective, "lns_s": ln.wall_time_s,
               "branch_round": b.objective if method in ("branch", "lp") else None,
               "mip": None if mip is None else mip.objective, "mip_bound": None if mip is None else mip.bound,
               "mip_status": None if mip is None else str(mip.status),
               "mip_wall_s": None if mip is None else mip.wall_time_s}
        for k in ("hill_climb", "job_moves", "lns", "branch_round", "mip"):
            row[f"{k}_gap"] = (relative_gap(row[k], row["bound"])
                               if row["bound"] > 0 and row[k] is not None else None)
        placed = [row[k] for k in ("hill_climb", "job_moves", "lns", "branch_round", "mip") if row[k] is not None]
        row["best"] = min(placed)
        row["best_gap_mip"] = (relative_gap(row["best"], row["mip_bound"])
                               if row["mip_bound"] and row["mip_bound"] > 0 else None)
        rows.append(row)
    cols = ["size", "seed", "hill_climb", "hill_climb_gap", "job_moves", "job_moves_gap", "job_moves_status", "lns",
            "lns_gap", "branch_round", "branch_round_gap", "mip", "mip_gap", "bound", "bound_method", "lp_root",
            "lp_bound", "nodes", "lp_rounds", "lp_last_status", "hot_bound", "bound_status",
            "bound_wall_s", "bound_cpu_s", "peak_rss_mb", "columns", "rows", "mip_bound", "mip_status", "mip_wall_s",
            "best", "best_gap_mip"]
    md = ["Certified gaps at scale: each heuristic's objective against the larger of two valid lower "
          "bounds -- the closed-form hot-table bound (`models/tetris_bound/hot.py`) and, up to "
          f"{BRANCH_MAX_TABLES:,} tables, best-first branching on hot tables' homes over the LP relaxation "
          "(`models/tetris_bound/branch.py`; `lp_root` is the LP alone), then the LP relaxation alone "
          f"up to {lp_max:,} tables (rounded by branch and round from its solution), beyond it the Lagrangian "
          "decomposition with ML jobs kept whole along a spanning forest (`models/tetris_bound/forest.py`); every LP value certified in numpy from its duals, "
          "also when stopped by the time limit, the Lagrangian's at its multipliers. LNS at the longer climb's time (at least 10 s). Peak memory is the bench "
          "process's (it includes the instance and the heuristics).", "", _table(rows, cols)]
    summary = [f"tetris certified gaps {r['size']} seed {r['seed']}: hill climbing {_pct(r['hill_climb_gap'])}, job moves "
               f"{_pct(r['job_moves_gap'])}, LNS {_pct(r['lns_gap'])}, branch and round "
               f"{_pct(r['branch_round_gap'])}, mip {_pct(r['mip_gap'])}; best vs HiGHS's MIP bound "
               f"{_pct(r['best_gap_mip'])}; bound ({r['bound_method']}) "
               f"{r['bound_status']} in {r['bound_wall_s']:.0f} s" for r in rows]
    return BenchSection(title="Tetris certified gaps at scale (lower bound vs heuristics)",
                        markdown="\n".join(md), rows=rows, summary=summary)


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def bench_sections(out_dir: Path, quick: bool = False, scale: bool = False, seed: int = 0,
                   progress=None, rows: list[dict[str, Any]] | None = None) -> list[BenchSection]:
    """Tetris sections of ``placement bench`` (see the module docstring)."""
    from rich.progress import Progress

    out_dir = Path(out_dir)
    own = progress is None
    if own:
        progress = Progress(transient=True)
        progress.start()
    try:
        runs = [("quick", QUICK_SIZE, None)] if quick else [("default", DEFAULT_SIZE, None)]
        if scale:
            runs.append(("scale", SCALE_SIZE, 60.0))
        n_stored = len(get_problem("tetris").bench_instances(quick))
        suite_label = "quick" if quick else "scale" if scale else "default"
        task = progress.add_task("tetris extra", total=4 * len(runs) + n_stored + len(SUITE_SIZES[suite_label])
                                 + len(JOINT_SIZES[suite_label]))
        variants, _ = _variants(quick, seed, progress, task, rows)
        suite = _generated_suite(suite_label, seed, progress, task)
        formulations = _formulations(quick, scale, progress, task)
        sections: list[BenchSection] = [suite, variants, formulations]
        sections.append(_joint_vs_sequential(suite_label, seed, progress, task))
        if scale:
            sections.append(_exact_sweep(seed, progress, task))
            sections.append(_certified(seed, progress, task))
        for label, sizes, limit in runs:
            secs, summary = _run(label, sizes, seed, out_dir, progress, task, limit)
            secs[0].summary = summary
            sections += secs
        return sections
    finally:
        if own:
            progress.stop()
