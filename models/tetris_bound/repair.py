"""Repair of an imprecise dual: exact coordinate ascent on the relaxation's Lagrangian, in batches.

The relaxation's bound (:func:`placement.models.tetris_bound.relaxation.dual_bound`) is the
Lagrangian value ``L(y) = sum_i (y_i^+ lo_i - y_i^- hi_i) + sum_j min(r_j l_j, r_j u_j)``,
``r = c - A'y``, at any row multipliers ``y``: valid for every ``y``, so an interior point that
ends "imprecise" still certifies, but loses value (MAST Figure 4's LP at 10,000 tables: 15,099 of
HiGHS's 1.33e6 on one seed, the Tetris page). ``L`` is concave and, in one multiplier ``t = y_i``
with the others held, piecewise linear: each column ``j`` of row ``i`` (coefficient ``a``, box
``[l_j, u_j]``, reduced cost without the row ``c'_j = r_j + a y_i``) contributes
``min(l_j (c'_j - a t), u_j (c'_j - a t))``, whose slope in ``t`` falls by ``|a| (u_j - l_j)`` at
``t = c'_j / a``; the row's own term has slope ``hi_i`` below 0 and ``lo_i`` above (an infinite
side forbids that sign). The exact maximizer over ``t`` is the breakpoint where the slope turns
non-positive. Rows that share no column are independent, so a *batch* of column-disjoint rows
(Luby's rule: a row whose random priority is the smallest on every one of its columns) is set
at once, exactly, and ``L`` cannot fall; batches repeat until a time budget or a sweep's gain
is spent. :func:`repair_duals` returns the new multipliers; the caller evaluates them with the
certificate's own rounding margin (the bound is the larger of the two values), so the repair
decides how good the bound is, never whether it is valid.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["repair_duals"]


def _csr(ri: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(ri, kind="stable")
    ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(ri, minlength=n_rows), out=ptr[1:])
    return order, ptr


def _entries(rows: np.ndarray, order: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """The entry indices (into the COO arrays) of ``rows``, row by row."""
    lens = ptr[rows + 1] - ptr[rows]
    starts = np.repeat(ptr[rows] - np.r_[0, np.cumsum(lens)[:-1]], lens)
    return order[starts + np.arange(int(lens.sum()))]


def _batch(rows: np.ndarray, order, ptr, rj, n_cols: int, rng) -> np.ndarray:
    """Column-disjoint rows among ``rows`` (Luby's rule, one round)."""
    e = _entries(rows, order, ptr)
    owner = np.repeat(np.arange(len(rows)), ptr[rows + 1] - ptr[rows])
    p = rng.random(len(rows))
    low = np.full(n_cols, np.inf)
    np.minimum.at(low, rj[e], p[owner])
    wins = np.bincount(owner, weights=(low[rj[e]] == p[owner]), minlength=len(rows))
    lens = ptr[rows + 1] - ptr[rows]
    return rows[wins == lens]


def _best(rows, y, r, order, ptr, ri, rj, rv, lo, hi, lo_c, hi_c) -> np.ndarray:
    """Each row's exact maximizer of ``L`` along its multiplier (the others held); rows of one batch."""
    e = _entries(rows, order, ptr)
    a, j = rv[e], rj[e]
    k = np.searchsorted(rows, ri[e])                  # position of the entry's row in ``rows``
    cp = r[j] + a * y[ri[e]]
    bp = cp / a
    drop = np.abs(a) * (hi_c[j] - lo_c[j])
    # slope from the columns far left (t -> -inf): a > 0 sits at l, a < 0 at u
    s0 = -np.bincount(k, weights=np.where(a > 0, a * lo_c[j], a * hi_c[j]), minlength=len(rows))
    # candidates: every breakpoint, and 0 (the row's own kink), sorted per row
    ck = np.r_[k, np.arange(len(rows))]
    ct = np.r_[bp, np.zeros(len(rows))]
    cd = np.r_[drop, np.zeros(len(rows))]
    o = np.lexsort((ct, ck))
    ck, ct, cd = ck[o], ct[o], cd[o]
    start = np.r_[0, np.flatnonzero(np.diff(ck)) + 1]
    cum = np.cumsum(cd)
    base = np.repeat(cum[start] - cd[start], np.diff(np.r_[start, len(ck)]))
    upto = cum - base                                  # column drops at or left of the candidate
    row_lo, row_hi = lo[rows][ck], hi[rows][ck]
    with np.errstate(invalid="ignore"):
        right = s0[ck] - upto + np.where(ct >= 0, row_lo, row_hi)
        left = s0[ck] - (upto - cd) + np.where(ct <= 0, row_hi, row_lo)
    ok = (right <= 0) & (left >= 0)
    first = np.flatnonzero(ok)
    out = y[rows].copy()
    if len(first):
        keep = np.r_[True, ck[first][1:] != ck[first][:-1]]
        first = first[keep]
        t = ct[first]
        fine = np.isfinite(t)
        out[ck[first][fine]] = t[fine]
    return out


def repair_duals(m, row_dual: np.ndarray, col_lo: np.ndarray | None = None, col_hi: np.ndarray | None = None,
                 seconds: float = 30.0, sweeps: int = 3, seed: int = 0) -> tuple[np.ndarray, dict]:
    """Multipliers at least as good as ``row_dual`` for :func:`.relaxation.dual_bound` (module docstring).

    Batches of column-disjoint rows are set to their exact maximizers, in ``sweeps`` passes over
    all rows at most, within ``seconds``. Rows with an entry on an unboxed column are left alone.
    Returns the multipliers and statistics (batches, rows set, seconds)."""
    t0 = time.perf_counter()
    rows_ = m.rows
    ri, rj, rv = np.concatenate(rows_.i), np.concatenate(rows_.j), np.concatenate(rows_.v)
    lo, hi = np.concatenate(rows_.lo), np.concatenate(rows_.hi)
    lo_c = m.col_lo if col_lo is None else col_lo
    hi_c = m.col_hi if col_hi is None else col_hi
    n_rows, n_cols = len(lo), m.n_cols
    y = np.asarray(row_dual, dtype=float).copy()
    y[~np.isfinite(y)] = 0.0
    y[((y > 0) & ~np.isfinite(lo)) | ((y < 0) & ~np.isfinite(hi))] = 0.0
    r = m.cost - np.bincount(rj, weights=rv * y[ri], minlength=n_cols)
    order, ptr = _csr(ri, n_rows)
    boxed = np.isfinite(lo_c) & np.isfinite(hi_c)
    bad_row = np.bincount(ri, weights=~boxed[rj] | (rv == 0), minlength=n_rows) > 0
    movable = np.flatnonzero(~bad_row & (np.diff(ptr) > 0))
    rng = np.random.default_rng(seed)
    stats = {"batches": 0, "rows_set": 0, "sweeps": 0}
    for _ in range(sweeps):
        left = movable
        while len(left) and time.perf_counter() - t0 < seconds:
            batch = _batch(left, order, ptr, rj, n_cols, rng)
            new = _best(batch, y, r, order, ptr, ri, rj, rv, lo, hi, lo_c, hi_c)
            delta = new - y[batch]
            moved = delta != 0
            if moved.any():
                e = _entries(batch[moved], order, ptr)
                r -= np.bincount(rj[e], weights=rv[e] * np.repeat(delta[moved], ptr[batch[moved] + 1]
                                                                  - ptr[batch[moved]]), minlength=n_cols)
                y[batch[moved]] = new[moved]
                stats["rows_set"] += int(moved.sum())
            stats["batches"] += 1
            left = np.setdiff1d(left, batch, assume_unique=True)
        stats["sweeps"] += 1
        if time.perf_counter() - t0 >= seconds:
            break
    stats["seconds"] = time.perf_counter() - t0
    return y, stats
