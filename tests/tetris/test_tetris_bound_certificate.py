"""The Tetris bound's numpy certificate: its rounding margin against exact rational arithmetic, and
the polish of the choice rows' multipliers (models/tetris_bound/relaxation.py: dual_bound, polish_duals)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models import tetris_bound
from placement.models.tetris_bound.relaxation import _choice_rows

from tests.support import brute_force, lp_value_and_duals, tiny_tetris


def _exact(m, y) -> Fraction:
    """The Lagrangian value at ``y`` in exact rational arithmetic (every float is a rational)."""
    lo, hi = np.concatenate(m.rows.lo), np.concatenate(m.rows.hi)
    y = y.copy()
    y[(y > 0) & ~np.isfinite(lo)] = 0.0
    y[(y < 0) & ~np.isfinite(hi)] = 0.0
    aty = [Fraction(0)] * m.n_cols
    for i, j, v in zip(np.concatenate(m.rows.i), np.concatenate(m.rows.j), np.concatenate(m.rows.v), strict=True):
        if y[i]:
            aty[j] += Fraction(float(v)) * Fraction(float(y[i]))
    total = Fraction(float(m.offset))
    for i, yi in enumerate(y.tolist()):
        if yi:
            total += Fraction(yi) * Fraction(float(lo[i] if yi > 0 else hi[i]))
    for j in range(m.n_cols):
        r = Fraction(float(m.cost[j])) - aty[j]
        total += min(r * Fraction(float(m.col_lo[j])), r * Fraction(float(m.col_hi[j])))
    return total


@pytest.mark.parametrize("scale", [0.0, 1e6, 1e11])
def test_rounding_margin_covers_the_exact_value_and_stays_small(scale):
    # an interior point leaves free multipliers of 1e11 on the home rows (Tetris page); the value in
    # floating point, less its margin, must stay below the exact value, and the margin must not eat the bound
    inst = generate_tetris(6, 10, 3, seed=3815)
    m = tetris_bound.build(inst)
    value, y = lp_value_and_duals(m)
    rng = np.random.default_rng(11)
    y = y.copy()
    y[: inst.n_tables] += scale * rng.random(inst.n_tables)
    y += rng.normal(0.0, 1e-3, len(y))
    got, _ = tetris_bound.dual_bound(m, y, polish=False)
    exact = _exact(m, y)
    assert Fraction(got) <= exact
    assert float(exact) - got <= 1e-9 * max(1.0, abs(float(exact))) + 1e-12 * scale * inst.n_tables * inst.n_regions


def test_polish_recovers_the_lp_value_from_wrecked_choice_row_multipliers():
    # the LP's optimal multipliers maximize the Lagrangian; spoil only the choice rows' entries and
    # the exact per-row maximization gives the LP's value back (the other rows held at their optimum)
    inst = generate_tetris(12, 24, 4, seed=3816)
    m = tetris_bound.build(inst)
    value, y = lp_value_and_duals(m)
    ri, rj, rv = np.concatenate(m.rows.i), np.concatenate(m.rows.j), np.concatenate(m.rows.v)
    lo, hi = np.concatenate(m.rows.lo), np.concatenate(m.rows.hi)
    ci, _ = _choice_rows(m, ri, rj, rv, lo, hi, m.col_lo, m.col_hi)
    rows = np.unique(ci)
    assert len(rows) >= inst.n_tables        # one home per table at least
    bad = y.copy()
    bad[rows] += np.random.default_rng(5).normal(0.0, 1e4, len(rows))
    spoiled, _ = tetris_bound.dual_bound(m, bad, polish=False)
    polished, stats = tetris_bound.dual_bound(m, bad)
    assert spoiled < value - 1.0
    assert stats["polished_rows"] == len(rows)
    assert polished == pytest.approx(value, rel=1e-7, abs=1e-6)


@settings(max_examples=6, deadline=None)
@given(tiny_tetris, st.integers(0, 2**31 - 1))
def test_polish_never_lowers_the_certificate_and_stays_below_the_optimum(inst, seed):
    best, _ = brute_force(inst)
    m = tetris_bound.build(inst)
    _, y = lp_value_and_duals(m)
    rng = np.random.default_rng(seed)
    for y2 in (y + rng.normal(0, 1 + np.abs(y)), rng.normal(0, 10, len(y))):
        plain, _ = tetris_bound.dual_bound(m, y2, polish=False)
        polished, _ = tetris_bound.dual_bound(m, y2)
        assert plain <= polished <= best + 1e-7 * max(1.0, best)
