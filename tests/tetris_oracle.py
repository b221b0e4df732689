"""Brute-force oracle for tiny Tetris instances: enumerate every home placement.

Independent of the exact model and the heuristics: it only calls the reference
evaluation, once per placement (R**T placements; keep T*log(R) small).
"""

from __future__ import annotations

import itertools

import numpy as np

from placement.tetris import evaluate, violations


def brute_force(inst):
    """Return ``(best_objective, best_home)`` over feasible placements, or ``(None, None)``."""
    best, best_home = None, None
    for combo in itertools.product(range(inst.n_regions), repeat=inst.n_tables):
        home = np.asarray(combo, dtype=np.int64)
        ev = evaluate(inst, home)
        if violations(inst, home, ev):
            continue
        if best is None or ev.objective < best - 1e-12:
            best, best_home = ev.objective, home
    return best, best_home
