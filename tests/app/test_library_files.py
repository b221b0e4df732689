"""Library model files: frozen Tetris MPS, the independent checker, solutions read back into the
reference evaluation, and .solu files (placement/app/bench/mps_check.py, model_files.py)."""

from __future__ import annotations

import math
from pathlib import Path

import highspy
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_cassini, generate_hived, generate_tetris
from placement.models import backends, cassini, export, hived, tetris

from placement.app.bench import mps_check
from placement.app.bench.model_files import family_solution, gzip_bytes, model_files, sha256
from placement.errors import InstanceError

REL = 1e-6
SOLVERS = [s for s in backends.MIP_SOLVERS if backends.available(s)]


def _close(a, b, rel=REL):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def test_tetris_export_is_the_same_bytes_whatever_the_time_limit(tmp_path):
    """The file does not depend on the in-memory solve: two limits, one file, and its optimum is the
    instance's (HiGHS on the file against the package's exact model)."""
    inst = generate_tetris(6, 10, 3, seed=4)
    a, = export.write_tetris(inst, tmp_path / "a.mps", time_limit=0.05)
    b, = export.write_tetris(inst, tmp_path / "b.mps", time_limit=30)
    assert (tmp_path / "a.mps").read_bytes() == (tmp_path / "b.mps").read_bytes()
    assert b["in_memory"]["status"] == "optimal"
    out = backends.solve_file(tmp_path / "a.mps", "highs", time_limit=30, mip_gap=1e-9)
    assert out.termination == "optimal" and _close(out.objective, b["in_memory"]["objective"])
    c, = export.write_tetris(inst, tmp_path / "c.mps", solve=False)
    assert "in_memory" not in c and (tmp_path / "c.mps").read_bytes() == (tmp_path / "a.mps").read_bytes()


def test_gzip_is_deterministic():
    data = b"NAME x\nENDATA\n"
    assert gzip_bytes(data) == gzip_bytes(data) and sha256(gzip_bytes(data)) == sha256(gzip_bytes(data))


@pytest.mark.parametrize("family", ["tetris", "hived", "cassini"])
def test_every_backend_answer_checks_and_maps_to_the_reference(tmp_path, family):
    """Each backend's answer on the file: the checker finds it feasible with the objective the solver
    claims, and the family's reference evaluation of the mapped solution gives the same value,
    equal to the package's in-memory optimum (the best candidate's for CASSINI)."""
    inst = {"tetris": generate_tetris(5, 8, 3, seed=2), "hived": generate_hived(1, 4, 2, 3, seed=1),
            "cassini": generate_cassini(4, 2, seed=1)}[family]
    memory = {"tetris": tetris, "hived": hived, "cassini": cassini}[family].solve(inst)
    best = -math.inf
    for f in model_files(family, inst, "x"):
        path = tmp_path / f["file"]
        path.write_bytes(f["data"])
        model = mps_check.read_mps(path)
        for s in SOLVERS:
            out = backends.solve_file(path, s, time_limit=20, mip_gap=1e-9)
            assert out.termination == "optimal", (s, out.message)
            values = {k: v for k, v in out.values.items() if k in model.cost}
            chk = mps_check.check_solution(model, values, out.objective)
            assert chk.ok, chk.message
            ref = family_solution(family, inst, values, f["candidate"] or None)
            assert ref["violations"] == [] and _close(ref["objective"], chk.objective, 1e-5)
            best = max(best, ref["objective"]) if family == "cassini" else ref["objective"]
    assert _close(best, memory.objective, 1e-5)


def test_checker_flags_rows_bounds_integrality_and_the_objective(tmp_path):
    inst = generate_hived(1, 4, 2, 3, seed=1)
    f, = model_files("hived", inst, "h")
    path = tmp_path / f["file"]
    path.write_bytes(f["data"])
    out = backends.solve_file(path, "highs", time_limit=20, mip_gap=0)
    model = mps_check.read_mps(path)
    values = {k: v for k, v in out.values.items() if k in model.cost}
    sol = tmp_path / "h.sol"
    mps_check.write_sol(sol, values, out.objective)
    assert mps_check.check_solution(path, sol).ok
    # every column at 1: disjointness rows break
    bad = mps_check.check_solution(model, {c: 1.0 for c in model.columns})
    assert not bad.feasible and bad.worst_row and bad.max_row_violation >= 1.0 - 1e-9
    one = model.columns[0]
    assert mps_check.check_solution(model, {**values, one: 2.0}).max_bound_violation >= 1.0 - 1e-9
    assert mps_check.check_solution(model, {**values, one: 0.5}).max_integrality_violation == 0.5
    wrong = mps_check.check_solution(model, values, claimed=out.objective + 1.0)
    assert wrong.feasible and not wrong.objective_agrees and "claimed objective" in wrong.message
    with pytest.raises(InstanceError, match="not a column"):
        mps_check.check_solution(model, {"nope": 1.0})


MPS = """NAME t
OBJSENSE
    MAX
ROWS
 N obj
 L c1
 G c2
 E c3
 E c4
COLUMNS
    MARKER 'MARKER' 'INTORG'
    x obj 2 c1 1
    x c3 1
    MARKER 'MARKER' 'INTEND'
    y obj -1 c1 1
    y c2 1 c4 1
    w obj 0.5 c3 1
    v obj 1 c4 1
RHS
    RHS obj -3 c1 4.5
    RHS c2 -2 c3 1
    RHS c4 0
RANGES
    RNG c1 2 c3 -1.5
    RNG c4 2
BOUNDS
 UP BND y -1
 LO BND y -4
 UI BND x 3
 FR BND w
 UP BND v 5
ENDATA
"""


@settings(max_examples=25)
@given(st.lists(st.floats(-6, 6, allow_nan=False), min_size=4, max_size=4))
def test_checker_reads_mps_as_highs_does(tmp_path_factory, point):
    """Ranges, free / negative / integer bounds and the objective's constant: the checker's rows,
    bounds and objective at a random point equal those of the model HiGHS reads from the same file."""
    path = tmp_path_factory.mktemp("m") / "t.mps"
    path.write_text(MPS)
    model = mps_check.read_mps(path)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    lp = h.getLp()
    names = list(lp.col_names_)
    assert model.sense == "max" and names == model.columns
    x = np.array(point)
    for j, c in enumerate(names):
        assert (model.lower[c], model.upper[c]) == (max(lp.col_lower_[j], -math.inf), min(lp.col_upper_[j], math.inf))
    assert (lp.integrality_[0] == highspy.HighsVarType.kInteger) and model.integer == {"x"}
    a = lp.a_matrix_
    act = np.zeros(lp.num_row_)
    for j in range(lp.num_col_):
        for p in range(a.start_[j], a.start_[j + 1]):
            act[a.index_[p]] += a.value_[p] * x[j]
    for i, r in enumerate(lp.row_names_):
        assert (model.row_lower[r], model.row_upper[r]) == (lp.row_lower_[i], lp.row_upper_[i])
    chk = mps_check.check_solution(model, dict(zip(names, point, strict=True)))
    assert _close(chk.objective, float(np.dot(lp.col_cost_, x) + lp.offset_), 1e-12)
    rows_ok = bool(np.all(act >= np.asarray(lp.row_lower_) - 1e-9) and np.all(act <= np.asarray(lp.row_upper_) + 1e-9))
    if rows_ok:
        assert chk.max_row_violation <= 1e-9
    else:
        assert chk.max_row_violation > 0


def test_solu_round_trip_and_bad_rows(tmp_path):
    rows = [("a", "optimal", 3.5, 3.5), ("b", "best-known", 10.0, 7.25), ("c", "infeasible", None, None),
            ("d", "open", None, 2.0)]
    text = mps_check.write_solu(rows)
    assert text.splitlines() == ["=opt= a 3.5", "=best= b 10.0", "=bestdual= b 7.25", "=inf= c", "=unkn= d"]
    p = tmp_path / "x.solu"
    p.write_text(text)
    got = mps_check.read_solu(p)
    assert got["a"] == {"status": "optimal", "objective": 3.5, "bound": 3.5}
    assert got["b"] == {"status": "best-known", "objective": 10.0, "bound": 7.25}
    assert got["c"]["status"] == "infeasible" and got["d"]["status"] == "open"
    with pytest.raises(InstanceError, match="objective"):
        mps_check.write_solu([("e", "optimal", None, None)])
    p.write_text("=opt= a\n")
    with pytest.raises(InstanceError, match="solu file"):
        mps_check.read_solu(p)


def test_bad_mps_and_sol_are_one_line_errors(tmp_path):
    p = tmp_path / "bad.mps"
    p.write_text("NAME x\nROWS\n N obj\nCOLUMNS\n    x c9 1\nENDATA\n")
    with pytest.raises(InstanceError, match="line 5") as exc:
        mps_check.read_mps(p)
    assert "\n" not in str(exc.value)
    s = tmp_path / "bad.sol"
    s.write_text("x abc\n")
    with pytest.raises(InstanceError, match="not a number"):
        mps_check.read_sol(s)


# ---- the library's stored files -----------------------------------------------------------------

def test_every_library_file_matches_its_checksum():
    """Every stored instance file and every stored .mps.gz has the sha256 its manifest row states,
    and every stored .mps.gz is listed."""
    from placement.app.bench import library as L
    from placement.app.bench.library_files import load_files

    for r in L.load_manifest():
        e, = L._by_name([r["name"]])
        if not (e.stored or e.source):
            continue  # regenerated by its command (entry_sha256 hashes what the command writes)
        path = L.library_dir() / e.family / f"{e.name}.json" if e.stored else L._instances_dir() / e.source
        assert sha256(path.read_bytes()) == r["sha256"], r["name"]
    rows = load_files()
    stored = {p.name for p in (L.library_dir() / "mps").glob("*.mps.gz")}
    assert stored == {r["file"] for r in rows if r["stored"]} and len(stored) >= 40
    for r in rows:
        if r["stored"]:
            assert sha256((L.library_dir() / "mps" / r["file"]).read_bytes()) == r["sha256"], r["file"]


def test_library_files_are_what_the_writer_writes_today():
    """The quick instances' files, written now, are the stored bytes (so the checksums of the files
    regenerated rather than stored are a property of the instance)."""
    from placement.app.bench import library as L
    from placement.app.bench.library_files import load_files

    rows = {r["file"]: r for r in load_files()}
    for e in L._by_name(list(L.QUICK)):
        files = model_files(e.family, L.entry_instance(e), e.name)
        assert files
        for f in files:
            gz = gzip_bytes(f["data"])
            row = rows[f["file"] + ".gz"]
            assert sha256(gz) == row["sha256"]
            assert (L.library_dir() / "mps" / row["file"]).read_bytes() == gz


SOL_TEST_MAX_BYTES = 250_000


def _highs_numpy_check(path: Path, values: dict[str, float]) -> tuple[bool, float]:
    """A second reading of a model file (HiGHS's MPS reader, no solve) and of a point on it: every
    row, bound and integrality at 1e-6 in numpy, and the objective."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = h.getLp()
    x = np.array([values.get(n, 0.0) for n in lp.col_names_])
    a = lp.a_matrix_
    start, index, value = np.asarray(a.start_), np.asarray(a.index_), np.asarray(a.value_)
    act = np.zeros(lp.num_row_)
    np.add.at(act, index, value * np.repeat(x, np.diff(start)))
    lo, hi = np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)
    ok = bool(np.all(act >= lo - 1e-6 * np.maximum(1, np.abs(lo))) and np.all(act <= hi + 1e-6 * np.maximum(1, np.abs(hi))))
    ok &= bool(np.all(x >= np.asarray(lp.col_lower_) - 1e-6) and np.all(x <= np.asarray(lp.col_upper_) + 1e-6))
    ints = np.array([t != highspy.HighsVarType.kContinuous for t in lp.integrality_], dtype=bool)
    if ints.any():
        ok &= bool(np.abs(x[ints] - np.round(x[ints])).max() <= 1e-6)
    return ok, float(np.dot(lp.col_cost_, x) + lp.offset_)


def test_every_stored_sol_checks_and_optimal_means_two_solvers(tmp_path):
    """Every stored .sol is a feasible point of its stored file with the value of its files.csv row
    (read by HiGHS's reader and checked in numpy, and by the pure-Python checker) for the files up
    to SOL_TEST_MAX_BYTES (the larger ones: verify_stored_solutions); an 'optimal' row lists two solvers proving it;
    library.solu states files.csv."""
    import gzip

    from placement.app.bench import library as L
    from placement.app.bench.library_files import difficulty, highs_proof_s, load_files

    rows = load_files()
    sols = sorted((L.library_dir() / "mps").glob("*.sol"))
    assert len(sols) >= 30
    by_stem = {r["file"].removesuffix(".mps.gz"): r for r in rows}
    checked = 0
    for p in sols:
        row = by_stem[p.name.removesuffix(".sol")]
        data = gzip.decompress((p.parent / row["file"]).read_bytes())
        if len(data) > SOL_TEST_MAX_BYTES:
            continue  # verify_stored_solutions() checks these too (minutes of pure Python)
        checked += 1
        plain = tmp_path / (p.name.removesuffix(".sol") + ".mps")
        plain.write_bytes(data)
        values, claimed = mps_check.read_sol(p)
        ok, value = _highs_numpy_check(plain, values)
        assert ok and _close(value, claimed, 1e-9) and _close(value, row["objective"], 1e-5), p.name
        chk = mps_check.check_solution(plain, p)
        assert chk.ok and _close(chk.objective, value, 1e-9), (p.name, chk.message)
    assert checked >= 35
    for r in rows:
        if r["status"] == "optimal":
            assert r["solvers"].count("=optimal") >= 2, r
        assert r["difficulty"] == difficulty(r["status"], r["solvers"], r["objective"]), r["file"]
        if r["difficulty"] == "easy":
            assert r["status"] == "optimal"
        if r["difficulty"] in ("medium", "hard"):  # HiGHS proved the row's value on the file
            assert r["status"] in ("optimal", "best-known") and highs_proof_s(r["solvers"], r["objective"]) >= 60
    solu = mps_check.read_solu(L.library_dir() / "library.solu")
    assert set(solu) == set(by_stem)
    for stem, r in by_stem.items():
        assert solu[stem]["status"] == r["status"]
        if r["objective"] is not None:
            assert solu[stem]["objective"] == r["objective"]


def test_difficulty_labels_by_highs_time_on_the_file():
    """easy: two solvers prove it, HiGHS under 60 s; medium: HiGHS proves the row's value in
    60-3,600 s (with SCIP agreeing, or alone: best-known); open: no proof."""
    from placement.app.bench.library_files import difficulty, highs_proof_s

    two = "highs=optimal 5.0 (bound 5.0, {t} s); scip=optimal 5.0 (bound 5.0, 9.0 s)"
    assert difficulty("optimal", two.format(t=12.5), 5.0) == "easy"
    assert difficulty("optimal", two.format(t=75.1), 5.0) == "medium"
    assert difficulty("optimal", two.format(t=4000.0), 5.0) == "hard"
    alone = "highs=optimal 5.0 (bound 5.0, 300.0 s); scip=time_limit 5.0 (bound 4.0, 1800.0 s)"
    assert difficulty("best-known", alone, 5.0) == "medium" and highs_proof_s(alone) == 300.0
    assert difficulty("best-known", alone, 4.5) == "open"  # HiGHS's "optimal" is not the row's value
    slow = "highs=time_limit 6.0 (bound 4.0, 60.1 s); scip=optimal 5.0 (bound 5.0, 41.6 s)"
    assert difficulty("best-known", slow, 5.0) == "open" and highs_proof_s(slow) is None
    assert difficulty("best-known", "manifest (exact/highs, in memory; not run on this file)", 5.0) == "open"


def test_a_row_proven_on_its_file_becomes_optimal():
    """confirm_manifest's promotion: a best-known Tetris row whose file two solvers prove takes the
    file's value; not where the row knows a better placement or a higher bound."""
    from placement.app.bench.library_files import _promote

    f = {"status": "optimal", "objective": 10.0, "bound": 9.99999999,
         "solvers": "highs=optimal 10.0 (bound 10.0, 80.0 s); scip=optimal 10.0 (bound 10.0, 120.5 s)",
         "time_limit_s": 1800.0, "date": "d", "commit": "c", "environment": "e"}
    row = {"family": "tetris", "status": "best-known", "objective": 11.0, "bound": 8.0, "solver": "exact/highs",
           "time_s": 60.0}
    assert _promote(row, [f]) and row["status"] == "optimal" and row["objective"] == 10.0
    assert row["time_s"] == 120.5 and row["time_limit_s"] == 1800.0 and row["solver"] == "files: two solvers agree"
    assert not _promote({**row, "status": "best-known", "objective": 9.0}, [f])  # a better placement known
    assert not _promote({**row, "status": "best-known", "bound": 10.5}, [f])  # a bound above the "optimum"
    assert not _promote({**row, "status": "best-known"}, [{**f, "status": "best-known"}])
    assert not _promote({**row, "status": "best-known", "family": "cassini"}, [f])
