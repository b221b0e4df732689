"""The bounds' shares of the proven optimum (placement/app/bench/bound_shares.py): every bound at or
below the library's proven optimum, and the page's table from the rows."""

from __future__ import annotations

from placement.app.bench.bound_shares import fragment, main, shares


def test_bounds_on_proven_rows_stay_at_or_below_the_optimum():
    rows = shares(min_tables=60, methods=(("lagrange", 1.0), ("hot", 1.0)))
    assert len(rows) == 5 and all(r["tables"] == 60 for r in rows)
    for r in rows:
        for m in ("lagrange", "hot"):
            assert r[m] is not None and 0.0 <= r[m] <= r["optimum"] * (1 + 1e-7)


def test_the_fragment_gives_each_share_and_the_medians():
    rows = [{"instance": "tetris-a", "tables": 40, "optimum": 200.0, "forest": 100.0, "lp": 150.0},
            {"instance": "tetris-b", "tables": 60, "optimum": 100.0, "forest": 80.0, "lp": None}]
    text = fragment(rows, methods=(("forest", 10.0), ("lp", 60.0)))
    assert "| a | 200.0 | 50.0% | 75.0% |" in text and "| b | 100.0 | 80.0% | -- |" in text
    assert "forest 65.0% (50.0 to 80.0); lp 75.0% (75.0 to 75.0)" in text and "40-60 tables" in text


def test_no_instance_that_large_is_one_error_line(capsys, tmp_path):
    assert main(["100000", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: min_tables:")
