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


def large_magnitudes(doc, size_unit: int, gh_unit: int, seed: int, tight_share: float = 0.8):
    """Blow a generated document up to large integers (sizes ~ size_unit x 20, GPU-hours ~ gh_unit x 30).

    Sizes and GPU-hours get a random remainder so they are not multiples of the
    unit. Supplies are set close to a random subset sum of the jobs' GPU-hours
    (within 12), so a region's overload lands in the few GPU-hours where the
    sigmoid (8) still changes: that is where an integrality tolerance times a
    million GPU-hours used to hide real overload. Capacities, the quota and the
    threshold are scaled so the start placement stays feasible.
    """
    rng = np.random.default_rng(seed)
    doc = copy.deepcopy(doc)
    n = len(doc["tables"])
    for t in doc["tables"]:
        t["size"] = int(t["size"] * size_unit + rng.integers(0, size_unit))
    ml = [j for j in doc["jobs"] if j["kind"] == "ml"]
    for j in ml:
        j["gpu_hours"] = int(j["gpu_hours"] * gh_unit + rng.integers(0, gh_unit))
    for r in doc["regions"]:
        supply = {}
        for g, v in r["gpu_supply"].items():
            hours = [j["gpu_hours"] for j in ml if j["gpu_type"] == g]
            if v <= 0:
                supply[g] = 0
            elif hours and rng.random() < tight_share:
                pick = rng.choice(len(hours), size=int(rng.integers(1, len(hours) + 1)), replace=False)
                supply[g] = max(1, int(sum(hours[i] for i in pick) - rng.integers(0, 12)))
            else:
                supply[g] = int(v * gh_unit + rng.integers(0, gh_unit))
        r["gpu_supply"] = supply
        r["storage_capacity"] = int((r["storage_capacity"] + n) * size_unit)
    doc["home_threshold"] = int(doc["home_threshold"] * gh_unit * rng.uniform(0, 1))
    doc["move_quota"] = int(doc["move_quota"] * size_unit) if rng.random() < 0.5 else None
    total = sum(t["size"] for t in doc["tables"])
    doc["weights"] = {"w1": 1.0, "w2": float(total), "w3": float(round(0.2 * total))}
    return load_instance(doc)


def large_instance(T, J, R, seed, size_unit=300_000, gh_unit=30_000):
    """A brute-forceable instance with table sizes ~1e6-1e7 and GPU-hours ~1e5-1e6."""
    doc = tetris_document(T, J, R, seed=seed, n_gpu_types=1 + seed % 2, n_priorities=1 + seed % 3, ml_share=0.8)
    return large_magnitudes(doc, size_unit, gh_unit, seed)


large = st.builds(
    large_instance, T=st.integers(3, 6), J=st.integers(2, 10), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    size_unit=st.sampled_from([100_000, 300_000, 1_000_000]), gh_unit=st.sampled_from([10_000, 30_000, 100_000]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)
