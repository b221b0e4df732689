"""``placement bench --library``: every solver on the library's model files, failures scored as MIPLIB does.

Two kinds of solver, two tables (never pooled):

exact solvers (``highs``, ``scip``, ``cbc``)
    Each solves the same model file (:mod:`placement.app.bench.model_files`: the library's
    stored ``.mps.gz`` or the same bytes written now) with the same settings: one thread, the
    same relative gap, the same time limit, the solvers' default tolerances, no start for
    anyone, a seed per run (``seeds``: HiGHS ``random_seed``, SCIP
    ``randomization/randomseedshift``, CBC ``-randomCbcSeed``). Their time is the solver's own
    (reading the file and solving, :func:`placement.models.backends.solve_file`); the harness's
    work (writing the file, checking, evaluating) is reported apart. Every answer is checked by
    the independent checker (:mod:`placement.app.bench.mps_check`) and, on library files, mapped
    back to the family's solution and judged by its reference evaluation.
package solvers (``model``: the family's exact pipeline in memory; the heuristics by name)
    Judged by the reference evaluation; in their own table.

Failures (MIPLIB 2017's rules; each is counted, listed in the report, and the run is neither
"solved" nor "reached"):

* ``wrong optimal``: an ``optimal`` claim whose value is not the known optimum, or is worse than
  a known solution (a best-known value);
* ``bound crossing``: a dual bound beyond a known solution's value (it claims that value cannot
  be reached);
* ``false infeasible``: ``infeasible`` for an instance with a known solution;
* ``infeasible answer``: the checker finds a broken row, bound or integrality, or the reference
  evaluation finds a broken hard constraint, or the claimed objective is not the recomputed one;
* ``over time``: solver time beyond the limit by more than :data:`TIME_SLACK_REL` and
  :data:`TIME_SLACK_S` (a solver that does not stop is not compared at the limit);
* ``abort``: an error.

Values are compared at :data:`FAIL_REL` relative (ten times the gap the library's values are
proven to). Known values: the library's files record (``files.csv``, ``library.solu``), else the
instance's manifest row for a file that is the instance's whole model (Tetris, HiveD); in a
user's folder, the ``.solu`` files found there.

Measures per family and solver: solved (proven optimal, no failure), reached (the best known
value or better, no failure), failures, the shifted geometric mean of the solver time at shifts
1 s and 10 s (the time limit where not solved), the mean primal gap to the best known value
(Berthold's definition, 1 without a value) and the primal integral (from each backend's
incumbent trace: ``stats["incumbents"]`` of :func:`placement.models.backends.solve_file`). The performance profile
(Dolan-More) is drawn per family, exact solvers only.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from ...errors import InstanceError
from ...io import check_output_folder, commit, write_bytes, write_text
from ...registry import call_solver, get_problem
from ...result import SolveResult, Status
from ..report import markdown_table, save_figure
from .environment import commit_id, environment, today
from .library import (
    DEFAULT_SOLVERS,
    HEURISTICS,
    LIBRARY,
    MIP_LABELS,
    QUICK,
    _by_name,
    _cell,
    build_library,
    entry_instance,
    library_dir,
    load_manifest,
    primal_gap,
    primal_integral,
    shifted_geometric_mean,
)
from .mps_check import check_solution, read_mps, read_solu

__all__ = ["run_library_bench", "failures", "summarize", "summary_markdown", "RESULT_COLUMNS", "SUMMARY_COLUMNS",
           "OUTPUT_FILES", "FAIL_REL", "PACKAGE_LABELS"]

FAIL_REL = 1e-5
TIME_SLACK_REL = 0.01
TIME_SLACK_S = 1.0
PACKAGE_LABELS = ("model",) + tuple(h for hs in HEURISTICS.values() for h in hs)
OUTPUT_FILES = ("library_results.csv", "library_results.parquet", "library_summary.csv", "library_report.md",
                "performance_profile.png", "library_failures.csv")
RESULT_COLUMNS = ["instance", "file", "family", "rows", "columns", "nonzeros", "integers", "solver", "kind", "seed",
                  "status", "objective", "bound",
                  "solver_time_s", "harness_time_s", "known_status", "known_objective", "known_bound",
                  "checked", "reference_objective", "solved", "reached", "failure", "primal_gap",
                  "primal_integral_s", "message"]
SUMMARY_COLUMNS = ["family", "kind", "solver", "runs", "solved", "reached", "failures", "sgm_time_1s",
                   "sgm_time_10s", "mean_primal_gap", "primal_integral_s", "time_spread_s"]
SEED_OPTIONS = {"highs": lambda s: {"random_seed": int(s)},
                "scip": lambda s: {"randomization/randomseedshift": int(s)},
                "cbc": lambda s: {"randomCbcSeed": int(s) + 1}}


def _tol(v: float) -> float:
    return FAIL_REL * max(1.0, abs(v))


def failures(status: str, objective: float | None, bound: float | None, known: dict | None, sense: str,
             solver_time_s: float, time_limit: float, infeasible_answer: str = "") -> list[str]:
    """The failures of one run (module docstring) against ``known`` (``status``, ``objective``,
    ``bound`` of the instance, or ``None``)."""
    out = []
    if status == "error":
        out.append("abort")
    if infeasible_answer:
        out.append(f"infeasible answer ({infeasible_answer})")
    kv = None if not known or known.get("status") not in ("optimal", "best-known") else known.get("objective")
    if kv is not None:
        worse = (lambda a, b: a > b + _tol(b)) if sense == "min" else (lambda a, b: a < b - _tol(b))
        if status == "optimal" and objective is not None:
            if (known["status"] == "optimal" and abs(objective - kv) > _tol(kv)) or worse(objective, kv):
                out.append(f"wrong optimal ({objective!r}, known {kv!r})")
        if bound is not None and math.isfinite(bound):
            crossed = bound > kv + _tol(kv) if sense == "min" else bound < kv - _tol(kv)
            if crossed:
                out.append(f"bound crossing ({bound!r} beyond the known {kv!r})")
        if status == "infeasible":
            out.append(f"false infeasible (known solution {kv!r})")
    if known and known.get("status") == "infeasible" and objective is not None and not infeasible_answer:
        out.append("solution for an instance known infeasible")
    if solver_time_s > time_limit * (1 + TIME_SLACK_REL) + TIME_SLACK_S:
        out.append(f"over time ({solver_time_s:.1f} s at a {time_limit:g} s limit)")
    return out


def _reached(value: float | None, target: float | None, sense: str) -> bool:
    if value is None or target is None:
        return False
    tol = 1e-6 * max(1.0, abs(target))
    return value <= target + tol if sense == "min" else value >= target - tol


# ---- the instances and files of one run -----------------------------------------------------------

def _known_files() -> dict[str, dict]:
    """The library's file records (``files.csv``): ``{file stem: row}``; empty when absent."""
    path = library_dir() / "files.csv"
    if not path.exists():
        return {}
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in ("objective", "bound"):
                r[k] = float(r[k]) if r.get(k) not in (None, "") else None
            out[r["file"].removesuffix(".gz").removesuffix(".mps")] = r
    return out


def _library_jobs(names: list[str]) -> list[dict[str, Any]]:
    """One job per library instance: its instance, its model files (stored bytes when stored) and
    what is known about each file."""
    from .model_files import model_files

    manifest = {r["name"]: r for r in load_manifest()}
    records = _known_files()
    jobs = []
    for e in _by_name(names):
        inst = entry_instance(e)
        row = manifest.get(e.name, {})
        files = []
        for f in model_files(e.family, inst, e.name):
            stem = f["file"].removesuffix(".mps")
            stored = library_dir() / "mps" / (f["file"] + ".gz")
            if stored.exists():  # the library's own file (the same bytes; tests/app/test_library_files.py)
                f["data"] = gzip.decompress(stored.read_bytes())
            rec = records.get(stem)
            if rec is not None:
                known = {"status": rec["status"], "objective": rec["objective"], "bound": rec["bound"]}
            elif e.family in ("tetris", "hived") and row:  # the file is the instance's whole model
                known = {"status": row.get("status"), "objective": row.get("objective"), "bound": row.get("bound")}
            else:
                known = None
            files.append({**f, "stem": stem, "known": known})
        jobs.append({"entry": e, "instance": inst, "family": e.family, "sense": get_problem(e.family).sense,
                     "known": {"status": row.get("status"), "objective": row.get("objective"),
                               "bound": row.get("bound")} if row else None, "files": files})
    return jobs


def _folder_jobs(folder: Path) -> list[dict[str, Any]]:
    """One job per ``*.mps`` / ``*.mps.gz`` file of a user's folder, with the values of its ``.solu``
    files."""
    if not folder.is_dir():
        raise InstanceError("--library", f"must be a folder of MPS files, got {str(folder)!r}")
    paths = sorted([*folder.glob("*.mps"), *folder.glob("*.mps.gz")])
    if not paths:
        raise InstanceError("--library", f"folder {str(folder)!r} holds no .mps or .mps.gz file")
    known: dict[str, dict] = {}
    for solu in sorted(folder.glob("*.solu")):
        known.update(read_solu(solu))
    jobs = []
    for p in paths:
        stem = p.name.removesuffix(".gz").removesuffix(".mps")
        jobs.append({"entry": None, "instance": None, "family": "user", "sense": None, "known": known.get(stem),
                     "files": [{"file": p.name, "path": p, "stem": stem, "candidate": "", "known": known.get(stem)}]})
    return jobs


# ---- running -------------------------------------------------------------------------------------

def _file_run(job, f, label: str, seed: int, time_limit: float, mip_gap: float, tmp: Path) -> dict[str, Any]:
    from placement.models.backends import solve_file

    from .model_files import family_solution

    h0 = time.perf_counter()
    if "path" in f:  # a user's file, solved as it is
        path = f["path"]
        if path.suffix == ".gz":
            import gzip

            plain = tmp / path.name.removesuffix(".gz")
            if not plain.exists():
                plain.write_bytes(gzip.decompress(path.read_bytes()))
            path = plain
    else:
        path = tmp / f["file"]
        if not path.exists():
            path.write_bytes(f["data"])
    model = f.get("model") or read_mps(path)
    f["model"] = model
    sense = model.sense
    harness = time.perf_counter() - h0
    out = solve_file(path, label, time_limit=time_limit, mip_gap=mip_gap, options=SEED_OPTIONS[label](seed))
    h1 = time.perf_counter()
    bad, ref_obj, checked = "", None, False
    if out.values is not None:
        values = {k: v for k, v in out.values.items() if k in model.cost}  # CBC also prints rows
        chk = check_solution(model, values, out.objective)
        checked = True
        bad = chk.message
        if job["instance"] is not None:
            ref = family_solution(job["family"], job["instance"], values, f["candidate"] or None)
            ref_obj = ref["objective"]
            if ref["violations"]:
                bad = "; ".join(filter(None, [bad, f"reference evaluation: {ref['violations'][0]}"]))
            elif abs(ref_obj - chk.objective) > _tol(ref_obj):
                bad = "; ".join(filter(None, [bad, f"file objective {chk.objective!r} is not the reference "
                                                   f"evaluation {ref_obj!r}"]))
    harness += time.perf_counter() - h1
    known = f["known"]
    fails = failures(out.termination, out.objective, out.bound, known, sense, out.wall_time_s, time_limit, bad)
    kv = known.get("objective") if known else None
    solved = out.termination == "optimal" and not fails
    # the backend's incumbent trace (time from its start), then its final answer
    pts = list(out.stats.get("incumbents") or []) + ([(out.wall_time_s, out.objective)] if out.objective is not None
                                                     else [])
    return {"instance": job["entry"].name if job["entry"] else f["stem"], "file": f["file"], "family": job["family"],
            **model.stats(), "solver": label, "kind": "exact", "seed": seed, "status": out.termination, "objective": out.objective,
            "bound": out.bound, "solver_time_s": out.wall_time_s, "harness_time_s": harness,
            "known_status": known.get("status") if known else None, "known_objective": kv,
            "known_bound": known.get("bound") if known else None, "checked": checked,
            "reference_objective": ref_obj, "solved": solved,
            "reached": not fails and (solved or _reached(out.objective, kv, sense)),
            "failure": "; ".join(fails), "primal_gap": primal_gap(out.objective, kv),
            "primal_integral_s": primal_integral(pts, kv, time_limit) if kv is not None else None,
            "message": out.message[:200], "_sense": sense}


def _package_run(job, label: str, seed: int, time_limit: float) -> dict[str, Any]:
    e, fam = job["entry"], job["family"]
    spec = get_problem(fam)
    t0 = time.perf_counter()
    try:
        if label == "model":
            res = call_solver(spec, spec.exact_solver, job["instance"], time_limit=time_limit)
        else:
            res = call_solver(spec, label, job["instance"], time_limit=time_limit, seed=seed)
    except InstanceError:
        raise
    except Exception as exc:  # a failing solver is a row with status error, not a crashed run
        res = SolveResult(Status.ERROR, label, message=f"{type(exc).__name__}: {exc}", sense=spec.sense)
    wall = res.wall_time_s or (time.perf_counter() - t0)
    known = job["known"]
    kv = known.get("objective") if known else None
    fails = failures(str(res.status), res.objective, res.bound if label == "model" else None, known, spec.sense,
                     wall, time_limit)
    solved = res.status == Status.OPTIMAL and not fails
    return {"instance": e.name, "file": "", "family": fam, "solver": label, "kind": "package", "seed": seed,
            "status": str(res.status), "objective": res.objective, "bound": res.bound, "solver_time_s": wall,
            "harness_time_s": 0.0, "known_status": known.get("status") if known else None, "known_objective": kv,
            "known_bound": known.get("bound") if known else None, "checked": False,
            "reference_objective": res.objective, "solved": solved,
            "reached": not fails and (solved or _reached(res.objective, kv, spec.sense)),
            "failure": "; ".join(fails), "primal_gap": primal_gap(res.objective, kv),
            "primal_integral_s": primal_integral(_incumbents(res), kv, time_limit) if kv is not None else None,
            "message": res.message[:200], "_sense": spec.sense}


def _incumbents(res: SolveResult) -> list[tuple[float, float | None]]:
    """Incumbent (time, value) pairs a result reports: the Tetris cut rounds' best reference values."""
    pts: list[tuple[float, float | None]] = []
    stats = res.stats if isinstance(res.stats, dict) else {}
    if stats.get("start_objective") is not None:
        pts.append((0.0, stats["start_objective"]))
    for r in stats.get("round_log") or []:
        if r.get("best_reference") is not None:
            pts.append((float(r["s"]), float(r["best_reference"])))
    if res.objective is not None:
        pts.append((res.wall_time_s, res.objective))
    return pts


def _parse_solvers(solvers, folder: bool) -> list[str]:
    from placement.models.backends import available

    solvers = list(solvers or (MIP_LABELS if folder else DEFAULT_SOLVERS))
    known = set(MIP_LABELS) | set(PACKAGE_LABELS)
    bad = [s for s in solvers if s not in known]
    if bad:
        raise InstanceError("--solvers", f"must be among {', '.join(sorted(known))}, got {bad[0]!r}")
    if folder and any(s not in MIP_LABELS for s in solvers):
        raise InstanceError("--solvers", f"a folder of MPS files takes only {', '.join(MIP_LABELS)}")
    return [s for s in solvers if s not in MIP_LABELS or available(s)]


def run_library_bench(out_dir: str | Path = "bench-results", solvers: list[str] | None = None,
                      time_limit: float = 60.0, quick: bool = False, seed: int = 0, only: list[str] | None = None,
                      progress=print, folder: str | Path | None = None, seeds: int = 1,
                      mip_gap: float = 1e-6) -> dict[str, Any]:
    """Run ``solvers`` on the library (or on ``folder``'s MPS files) and write the outputs (module
    docstring). ``seeds`` runs per exact solver and file (seeds ``seed .. seed + seeds - 1``: the
    spread of their times is the variability). Returns the rows, the summary and the figure name."""
    if not (isinstance(seeds, int) and 1 <= seeds <= 100):
        raise InstanceError("seeds", f"must be an integer from 1 to 100, got {seeds!r}")
    if not (time_limit > 0 and math.isfinite(time_limit)):
        raise InstanceError("--time-limit", f"must be a positive number of seconds, got {time_limit!r}")
    out = check_output_folder(out_dir, "--out", files=OUTPUT_FILES)  # before any solve
    chosen = _parse_solvers(solvers, folder is not None)
    if folder is not None:
        jobs = _folder_jobs(Path(folder))
    else:
        names = list(only) if only else (list(QUICK) if quick else [e.name for e in LIBRARY])
        jobs = _library_jobs(names)
    rows: list[dict[str, Any]] = []
    t_run = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="placement-lib-") as tmp:
        for job in jobs:
            for f in job["files"]:
                for label in [s for s in chosen if s in MIP_LABELS]:
                    for s in range(seed, seed + seeds):
                        r = _file_run(job, f, label, s, time_limit, mip_gap, Path(tmp))
                        rows.append(r)
                        progress(f"{f['file']} / {label} (seed {s}): {r['status']} {r['objective']} "
                                 f"({r['solver_time_s']:.2f} s){' FAILURE ' + r['failure'] if r['failure'] else ''}")
            if job["entry"] is None:
                continue
            labels = [s for s in chosen if s == "model" or s in HEURISTICS.get(job["family"], ())]
            for label in labels:
                r = _package_run(job, label, seed, time_limit)
                rows.append(r)
                progress(f"{job['entry'].name} / {label}: {r['status']} {r['objective']} ({r['solver_time_s']:.2f} s)"
                         f"{' FAILURE ' + r['failure'] if r['failure'] else ''}")
    summary = summarize(rows, time_limit)
    from ..report import agg_backend

    with agg_backend():
        fig = _plot_profiles(rows, out)
    settings = {"time_limit_s": time_limit, "mip_gap": mip_gap, "threads": 1, "seeds": list(range(seed, seed + seeds)),
                "warm_start": "none", "tolerances": "each solver's defaults", "fail_rel": FAIL_REL}
    _write(out, rows, summary, fig, settings, folder, quick, time.perf_counter() - t_run)
    return {"rows": rows, "summary": summary, "figure": fig, "settings": settings}


# ---- measures and outputs ------------------------------------------------------------------------

def summarize(rows: list[dict[str, Any]], time_limit: float) -> list[dict[str, Any]]:
    """One row per (family, kind, solver): the measures of the module docstring. A run's time is its
    solver time when solved (an exact solver) or reached (a package solver: heuristics prove
    nothing, so their time is time to target), else the time limit; ``time_spread_s`` is the
    largest spread (max - min) of one file's solver times over the seeds."""
    out = []
    keys = sorted({(r["family"], r["kind"], r["solver"]) for r in rows},
                  key=lambda k: (k[0], k[1] != "exact", k[2]))
    for fam, kind, s in keys:
        mine = [r for r in rows if (r["family"], r["kind"], r["solver"]) == (fam, kind, s)]
        done = "solved" if kind == "exact" else "reached"
        times = [r["solver_time_s"] if r[done] else time_limit for r in mine]
        ints = [r["primal_integral_s"] for r in mine if r["primal_integral_s"] is not None]
        spread = 0.0
        by_file: dict[str, list[float]] = {}
        for r in mine:
            by_file.setdefault(r["file"] or r["instance"], []).append(r["solver_time_s"])
        for ts in by_file.values():
            spread = max(spread, max(ts) - min(ts))
        out.append({"family": fam, "kind": kind, "solver": s, "runs": len(mine),
                    "solved": sum(bool(r["solved"]) for r in mine), "reached": sum(bool(r["reached"]) for r in mine),
                    "failures": sum(bool(r["failure"]) for r in mine),
                    "sgm_time_1s": shifted_geometric_mean(times, 1.0), "sgm_time_10s": shifted_geometric_mean(times, 10.0),
                    "mean_primal_gap": sum(r["primal_gap"] for r in mine) / len(mine),
                    "primal_integral_s": sum(ints) / len(ints) if ints else None, "time_spread_s": spread})
    return out


def _num(v, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def summary_markdown(summary: list[dict[str, Any]]) -> str:
    """The library page's measured table, from ``library_summary.csv`` rows (strings or numbers)."""
    lines = ["| family | kind | solver | runs | solved | reached | failures | sgm 1 s | sgm 10 s | mean primal gap "
             "| primal integral (s) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    def g(r, k):
        v = r.get(k)
        if v in ("", "None", None):
            return None
        return float(v)

    for r in summary:
        lines.append(f"| {r['family']} | {r['kind']} | {r['solver']} | {int(float(r['runs']))} | "
                     f"{int(float(r['solved']))} | {int(float(r['reached']))} | {int(float(r['failures']))} | "
                     f"{_num(g(r, 'sgm_time_1s'))} | {_num(g(r, 'sgm_time_10s'))} | {_num(g(r, 'mean_primal_gap'))} | "
                     f"{_num(g(r, 'primal_integral_s'))} |")
    return "\n".join(lines)


def _plot_profiles(rows, out: Path) -> str:
    """Dolan-More profiles per family, exact solvers only (time to a proven optimum without failure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .library import performance_profile

    exact = [r for r in rows if r["kind"] == "exact"]
    fams = sorted({r["family"] for r in exact}) or ["(no exact runs)"]
    fig, axes = plt.subplots(1, len(fams), figsize=(5.0 * len(fams), 3.8), squeeze=False)
    for ax, fam in zip(axes[0], fams, strict=True):
        mine = [r for r in exact if r["family"] == fam]
        solvers = sorted({r["solver"] for r in mine})
        problems = sorted({(r["file"], r["seed"]) for r in mine})
        index = {(r["file"], r["seed"], r["solver"]): r for r in mine}
        times = {s: [index[(p[0], p[1], s)]["solver_time_s"] if (p[0], p[1], s) in index
                     and index[(p[0], p[1], s)]["solved"] else None for p in problems] for s in solvers}
        ratios = performance_profile(times) if solvers else {}
        n = max(len(problems), 1)
        finite = [x for v in ratios.values() for x in v if math.isfinite(x)]
        top = max(finite + [2.0]) * 1.5
        for s, rs in ratios.items():
            xs = sorted(x for x in rs if math.isfinite(x))
            ax.step([1.0] + xs + [top], [0.0] + [(i + 1) / n for i in range(len(xs))] + [len(xs) / n],
                    where="post", label=s)
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, top)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("tau (time / fastest exact solver's)")
        ax.set_ylabel("share solved within tau")
        ax.set_title(f"{fam}: {len(problems)} runs")
        if ratios:
            ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out, "performance_profile.png")


def _csv(rows, columns) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return buf.getvalue()


def _write(out: Path, rows, summary, fig: str, settings: dict, folder, quick: bool, elapsed: float) -> None:
    parquet = None
    try:
        import pandas as pd

        buf = io.BytesIO()
        pd.DataFrame(rows, columns=RESULT_COLUMNS).to_parquet(buf, index=False)
        parquet = buf.getvalue()
    except ImportError:  # pyarrow absent: CSV only
        parquet = None
    env = environment()
    fails = [r for r in rows if r["failure"]]
    what = f"the MPS files of {folder}" if folder is not None else ("the quick library subset" if quick else "the library")
    exact = [r for r in summary if r["kind"] == "exact"]
    package = [r for r in summary if r["kind"] == "package"]
    cols = [c for c in SUMMARY_COLUMNS if c != "kind"]
    report = [
        "# Library benchmark", "",
        f"{what}: {len({r['instance'] for r in rows})} instances, {len({r['file'] for r in rows if r['file']})} "
        f"model files, {elapsed:.0f} s in all ({today()}, commit {commit_id()}).", "",
        "Settings, the same for every exact solver: " + ", ".join(f"{k} {v}" for k, v in settings.items()) + ".",
        "Solver time is the solver's own (reading and solving the file); harness time (writing, checking, "
        "evaluating) is apart, in `library_results.csv`.", "",
        "Machine and versions: " + ", ".join(f"{k} {v}" for k, v in env.items()) + ".", "",
        "## Exact solvers (same file, same settings)", "", markdown_table(exact, cols) if exact else "(none)", "",
        "## Package solvers (the exact pipeline in memory and the heuristics)", "",
        markdown_table(package, cols) if package else "(none)", "",
        f"## Failures ({len(fails)})", "",
        markdown_table(fails, ["instance", "file", "solver", "seed", "status", "objective", "bound", "failure"])
        if fails else "None.", "",
        "solved: proven optimal without failure; reached: the best known value or better without failure; "
        "sgm_time: shifted geometric mean of the solver time (exact solvers: to a proof; package solvers: to "
        "the best known value; the time limit where not done) at shifts 1 s "
        "and 10 s; mean_primal_gap: Berthold's primal gap to the best known value; time_spread_s: the largest "
        "spread of one file's time over the seeds.", "",
        f"![performance profiles]({fig})", "",
        "## Runs", "", markdown_table(rows, [c for c in RESULT_COLUMNS if c != "message"]), ""]
    with commit():
        write_text(out / "library_results.csv", _csv(rows, RESULT_COLUMNS))
        write_text(out / "library_summary.csv", _csv(summary, SUMMARY_COLUMNS))
        write_text(out / "library_failures.csv", _csv(fails, RESULT_COLUMNS))
        write_text(out / "library_report.md", "\n".join(report))
        if parquet is not None:
            write_bytes(out / "library_results.parquet", parquet)


def cmd_library(args: argparse.Namespace) -> int:
    """``placement bench --library [DIR]`` (and ``--rebuild``): the command-line entry.

    ``args.library`` is ``True`` for the package's library or a folder of the user's MPS files.
    """
    solvers = None
    if args.solvers:
        solvers = [s.strip() for part in args.solvers for s in part.split(",") if s.strip()]
    time_limit = args.time_limit
    folder = args.library if isinstance(args.library, str) else None
    if args.rebuild:
        if folder is not None:
            raise InstanceError("--rebuild", "rebuilds the package's library; it takes no folder")
        build_library(time_limit=time_limit or 120.0, only=args.only)
        print(f"wrote {library_dir() / 'manifest.csv'}")
        return 0
    res = run_library_bench(args.out, solvers, time_limit or (10.0 if args.quick else 60.0), args.quick,
                            args.seed, args.only, folder=folder, seeds=getattr(args, "seeds", 1) or 1)
    print(summary_markdown(res["summary"]))
    fails = sum(bool(r["failure"]) for r in res["rows"])
    print(f"{fails} failure(s); wrote {Path(args.out) / 'library_summary.csv'}, library_results.csv, "
          f"library_failures.csv, library_report.md, {res['figure']}")
    return 0
