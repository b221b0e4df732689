"""Brute-force oracle and shared strategies for tiny Tetris instances.

Independent of the exact model and the heuristics: it only calls the reference
evaluation, once per placement (R**T placements; keep T*log(R) small).
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
from hypothesis import strategies as st

from instances import tetris_document
from placement.tetris import evaluate, load_instance, violations


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


def _with_small_sizes(doc, sizes):
    """Sizes in {0, 1, 2}: zero-size tables and argmax ties everywhere; capacities kept valid."""
    doc = copy.deepcopy(doc)
    for t, size in zip(doc["tables"], sizes, strict=False):
        t["size"] = size
    total = sum(t["size"] for t in doc["tables"])
    for r in doc["regions"]:
        r["storage_capacity"] = max(r["storage_capacity"], total)
    doc["move_quota"] = None
    return load_instance(doc)


tie_heavy = st.builds(
    lambda T, J, R, seed, sizes: _with_small_sizes(tetris_document(T, J, R, seed=seed, ml_share=0.4), sizes),
    T=st.integers(2, 6), J=st.integers(1, 8), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(0, 2), min_size=6, max_size=6),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)
