"""The instance library (instances/library/) and ``placement bench --library``.

The manifest is checked against its definition (``LIBRARY``), its values against a fresh
solve of the quick instances, and every stored file against what its ``placement generate``
command writes today. The measures (shifted geometric mean, primal gap and integral,
Dolan-More ratios) are checked on hand cases.
"""

from __future__ import annotations

import csv
import math

import pytest
from placement.models import backends

from placement.app.bench import library as L
from placement.app.bench.environment import environment
from placement.app.cli import main
from placement.registry import get_problem

REL = 1e-6


def test_manifest_lists_at_least_40_instances_of_every_family():
    rows = L.load_manifest()
    assert [r["name"] for r in rows] == [e.name for e in L.LIBRARY]
    assert len(rows) >= 40
    fams = {r["family"] for r in rows}
    assert fams == {"tetris", "cassini", "hived"}
    sizes = {r["sizes"] for r in rows if r["family"] == "tetris"}
    assert {"10x20x3", "1000x2000x10"} <= sizes
    for r in rows:
        assert r["status"] in ("optimal", "best-known", "open") and r["command"], r
        sense = get_problem(r["family"]).sense
        if r["status"] == "open":
            continue
        assert r["objective"] is not None and r["solver"] and r["time_limit_s"] > 0
        if r["bound"] is not None:  # a bound is never on the wrong side of a value
            tol = REL * max(1.0, abs(r["objective"]))
            assert (r["bound"] <= r["objective"] + tol) if sense == "min" else (r["bound"] >= r["objective"] - tol), r
        if r["status"] == "optimal":
            assert r["bound"] is not None and abs(r["objective"] - r["bound"]) <= REL * max(1.0, abs(r["objective"]))


def test_stored_files_are_what_the_generator_writes_today():
    stored = [e for e in L.LIBRARY if e.stored]
    assert len(stored) >= 30
    for e in stored:
        path = L.library_dir() / e.family / f"{e.name}.json"
        assert path.read_text() == L.entry_text(e), e.name
    big = [e for e in L.LIBRARY if e.family == "tetris" and not e.stored]
    assert big and not any((L.library_dir() / "tetris" / f"{e.name}.json").exists() for e in big)


def test_the_manifest_command_is_the_cli_command(tmp_path):
    e = L.LIBRARY[0]
    assert e.command.startswith("placement generate ")
    out = tmp_path / "x.json"
    assert main(e.command.split()[1:] + ["-o", str(out)]) == 0
    assert out.read_text() == (L.library_dir() / e.family / f"{e.name}.json").read_text()


def test_bench_library_quick_writes_profile_and_summary(tmp_path, capsys):
    """Every exact solver solves the quick instances' files (same file, same settings): each answer is
    checked, mapped back to the reference evaluation and equals the library's value; no failure."""
    out = tmp_path / "b"
    out.mkdir()
    assert main(["bench", "--library", "--quick", "--out", str(out), "--time-limit", "30"]) == 0
    for f in ("performance_profile.png", "library_summary.csv", "library_results.csv", "library_report.md",
              "library_results.parquet", "library_failures.csv"):
        assert (out / f).stat().st_size > 0, f
    summary = list(csv.DictReader(open(out / "library_summary.csv")))
    mips = [s for s in ("highs", "scip", "cbc") if backends.available(s)]
    for r in summary:
        assert r["failures"] == "0", r
        if r["kind"] == "exact":  # every quick file is proven optimal in the library: each backend proves it too
            assert r["solver"] in mips and r["solved"] == r["runs"] == r["reached"]
    assert {(r["family"], r["solver"]) for r in summary if r["kind"] == "package"} == {
        ("tetris", "hill-climb"), ("cassini", "affinity"), ("hived", "buddy")}
    rows = list(csv.DictReader(open(out / "library_results.csv")))
    for r in rows:
        if r["kind"] == "exact":
            known = float(r["known_objective"])
            assert r["checked"] == "True" and abs(float(r["reference_objective"]) - known) <= 1e-5 * max(1.0, abs(known))
    report = (out / "library_report.md").read_text()
    env = environment()
    assert f"highs {env['highs']}" in report and f"cpus {env['cpus']}" in report and "threads 1" in report
    assert "| family | kind | solver |" in capsys.readouterr().out


def test_bad_solver_label_is_one_line(tmp_path, capsys):
    assert main(["bench", "--library", "--quick", "--solvers", "highs,gurobi", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --solvers") and "\n" not in err


def test_shifted_geometric_mean():
    assert L.shifted_geometric_mean([0.0, 0.0]) == pytest.approx(0.0)
    assert L.shifted_geometric_mean([5.0]) == pytest.approx(5.0)
    assert L.shifted_geometric_mean([1.0, 100.0]) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert L.shifted_geometric_mean([]) is None


def test_primal_gap_and_integral():
    assert L.primal_gap(10.0, 10.0) == 0.0
    assert L.primal_gap(None, 10.0) == 1.0 and L.primal_gap(-1.0, 2.0) == 1.0
    assert L.primal_gap(12.0, 10.0) == pytest.approx(2 / 12)
    # no incumbent for 2 s, then 12 (gap 1/6) until 5 s, then the optimum: 2 + 3/6 = 2.5
    assert L.primal_integral([(2.0, 12.0), (5.0, 10.0)], 10.0, 60.0) == pytest.approx(2.5)
    assert L.primal_integral([], 10.0, 60.0) == pytest.approx(60.0)


def test_performance_profile_ratios():
    r = L.performance_profile({"a": [1.0, None, 4.0], "b": [2.0, 3.0, None]})
    assert r["a"] == [1.0, math.inf, 1.0] and r["b"] == [2.0, 1.0, math.inf]
    # millisecond times keep their ratio (0.3 ms against 0.6 ms is 2, not 1)
    assert L.performance_profile({"a": [0.0003], "b": [0.0006]}) == {"a": [1.0], "b": [pytest.approx(2.0)]}


def test_library_page_table_is_the_manifest():
    page = (L.library_dir() / "README.md").read_text()
    assert L.readme_table(L.load_manifest()) in page


def test_optimal_rows_are_confirmed_by_two_solvers_on_the_files():
    """An 'optimal' manifest row has its model file proven by two solvers with the manifest's value;
    for CASSINI, the best candidate's file so proven (or a candidate without a file: score 1) and
    no candidate's bound above that value."""
    from placement.app.bench.library_files import load_files

    files: dict[str, list] = {}
    for f in load_files():
        files.setdefault(f["instance"], []).append(f)
    optimal = [r for r in L.load_manifest() if r["status"] == "optimal"]
    assert len(optimal) >= 30
    for r in optimal:
        mine = files[r["name"]]
        tol = 1e-5 * max(1.0, abs(r["objective"]))
        proven = [f["objective"] for f in mine if f["status"] == "optimal" and f["solvers"].count("=optimal") >= 2]
        if r["family"] != "cassini":
            assert len(mine) == 1 and proven, r["name"]
        else:
            e, = L._by_name([r["name"]])
            if len(mine) < len(L.entry_instance(e).candidates):
                proven.append(1.0)
            assert all((f["objective"] if f["status"] == "optimal" else f["bound"]) <= r["objective"] + tol
                       for f in mine), r["name"]
        assert abs(max(proven) - r["objective"]) <= tol, r["name"]


def test_library_page_measured_table_is_the_summary_csv():
    """The page's measured table is what summary_markdown makes of the shipped library_summary.csv."""
    from placement.app.bench.library_run import SUMMARY_COLUMNS, summary_markdown

    rows = list(csv.DictReader(open(L.library_dir() / "library_summary.csv")))
    assert rows and list(rows[0]) == SUMMARY_COLUMNS
    assert {r["kind"] for r in rows} == {"exact", "package"}
    assert summary_markdown(rows) in (L.library_dir() / "README.md").read_text()
