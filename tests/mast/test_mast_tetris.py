"""Tetris V0 and V1 inside ``placement reproduce mast`` (placement/app/reproduce/mast_tetris.py):
the instance's supply and priorities as documented, and the views recomputed by the reference
evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from placement.app.reproduce.mast_tetris import tetris_instance, tetris_views
from placement.tetris.evaluation import evaluate, paper_measures, runnable_at_home
from placement.tetris.instance import instance_to_json

S = (256, 192, 128, 64)


def test_instance_supply_follows_the_regions_and_the_high_priority_load():
    inst = tetris_instance(S, seed=2, n_tables=60, n_jobs=120, hp_load=0.8)
    a = inst.arrays
    supply = a.supply.sum(axis=1)
    high = a.job_gh[a.job_ml & a.job_high].sum()
    # proportional to the regions' GPUs, floored: high-priority demand / supply = 0.8 to within the flooring
    assert np.allclose(supply / supply.sum(), np.array(S) / sum(S), atol=len(S) / supply.sum())
    assert high / supply.sum() == pytest.approx(0.8, rel=len(S) / supply.sum() + 1e-9)
    assert list(inst.high_priorities) == [0, 1]
    assert {j.priority for j in inst.jobs if j.kind == "ml"} <= set(range(7))
    again = tetris_instance(S, seed=2, n_tables=60, n_jobs=120, hp_load=0.8)
    assert instance_to_json(again) == instance_to_json(inst)


def test_views_are_the_reference_evaluation_of_v0_and_v1():
    """V0 is the starting homes; V1 a placement whose measures the reference evaluation repeats;
    same seed, same views."""
    from placement.solvers import hill_climb

    v = tetris_views(S, seed=1, n_tables=60, n_jobs=120)
    inst = tetris_instance(S, seed=1, n_tables=60, n_jobs=120)
    a = inst.arrays
    ev0 = evaluate(inst, a.home0.copy())
    assert v["v0"] == paper_measures(inst, ev0, runnable_at_home(a, ev0.job_region))
    res = hill_climb.solve(inst, seed=1, time_limit=60.0)
    ev1 = evaluate(inst, res.solution.home)
    assert v["v1"] == paper_measures(inst, ev1, runnable_at_home(a, ev1.job_region))
    assert v["objective"][1] <= v["objective"][0]          # hill climbing never worsens the objective
    assert tetris_views(S, seed=1, n_tables=60, n_jobs=120) == v
