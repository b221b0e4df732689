"""The exact Tetris model's parts: its build steps, the named cause of an infeasibility, the gap formula."""

import numpy as np
import pytest
from placement.models.tetris import build, solve

from placement.result import relative_gap
from placement.tetris import load_instance


def _doc(tables, jobs, *, capacity=100, supply=None, threshold=0, quota=None):
    """A two-region document; ``tables`` maps name -> (size, home region index)."""
    supply = supply or [{"A100": 10}, {"A100": 10}]
    return {
        "problem": "tetris", "version": 1,
        "regions": [{"name": n, "storage_capacity": capacity, "gpu_supply": s}
                    for n, s in zip(("east", "west"), supply, strict=True)],
        "apps": [],
        "tables": [{"name": n, "size": size, "home": ("east", "west")[h]} for n, (size, h) in tables.items()],
        "jobs": jobs,
        "priority_weights": [1], "high_priorities": [0],
        "weights": {"w1": 1.0, "w2": 1.0, "w3": 1.0},
        "home_threshold": threshold, "move_quota": quota,
    }


def _ml(name, tables, gpu_hours, gpu_type="A100"):
    return {"name": name, "kind": "ml", "tables": tables, "gpu_type": gpu_type, "gpu_hours": gpu_hours,
            "cpu_hours": 0, "priority": 0}


# Two high-priority jobs read table s; each GPU type is only in one region, so only one runs at home.
_SPLIT_SUPPLY = [{"A100": 10, "H100": 0}, {"A100": 0, "H100": 10}]
_SPLIT_JOBS = [_ml("ja", ["s"], 20, "A100"), _ml("jb", ["s"], 20, "H100")]


def test_home_threshold_beyond_every_placement_is_named_directly():
    doc = _doc({"t1": (5, 0), "t2": (5, 1)}, [_ml("j1", ["t1"], 20), _ml("j2", ["t2"], 20)], threshold=300)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible" and res.solution is None
    assert res.message == ("infeasible: constraint (6) home threshold: at most 40 high-priority GPU-hours "
                           "can run in their home region, the threshold is 300")
    assert res.stats["infeasibility"]["dropped"] == []  # a direct argument: no re-solve


def test_home_threshold_against_conflicting_jobs_is_found_by_relaxation():
    doc = _doc({"s": (5, 0)}, _SPLIT_JOBS, supply=_SPLIT_SUPPLY, threshold=40)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == ("infeasible: constraint (6) home threshold: without it every other hard "
                           "constraint can be met")
    assert {"families": ["home"], "outcome": "feasible"} in res.stats["infeasibility"]["dropped"]


def test_storage_total_beyond_capacity_is_named_directly():
    doc = _doc({"a": (7, 0), "b": (7, 0), "c": (7, 1)}, [_ml("j", ["a"], 5)], capacity=10)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == ("infeasible: constraint (4) storage: the tables to place hold 21 bytes, the regions "
                           "they may take have 20 bytes free")


def test_storage_that_no_packing_meets_is_found_by_relaxation():
    # 21 bytes fit in 2 x 11 in total, but no region holds two tables of 7.
    doc = _doc({"a": (7, 0), "b": (7, 0), "c": (7, 1)}, [_ml("j", ["a"], 5)], capacity=11)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == "infeasible: constraint (4) storage: without it every other hard constraint can be met"
    dropped = res.stats["infeasibility"]["dropped"]
    assert dropped[0] == {"families": ["storage"], "outcome": "feasible"}


def test_either_of_two_families_alone_is_named():
    # The job needs both tables in one region (6); no region holds both (4).
    doc = _doc({"a": (7, 0), "b": (7, 1)}, [_ml("j", ["a", "b"], 20)], capacity=10, threshold=20)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == ("infeasible: constraint (4) storage or constraint (6) home threshold: without any "
                           "one of them every other hard constraint can be met")


def test_two_independent_causes_are_named_together():
    tables = {"s": (1, 0), "a": (7, 0), "b": (7, 0), "c": (7, 1)}
    doc = _doc(tables, _SPLIT_JOBS, supply=_SPLIT_SUPPLY, capacity=11, threshold=40)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == ("infeasible: constraint (4) storage and constraint (6) home threshold: no single "
                           "family is the cause; without these together every other hard constraint can be met")
    outcomes = {tuple(d["families"]): d["outcome"] for d in res.stats["infeasibility"]["dropped"]}
    assert outcomes == {("storage",): "infeasible", ("home",): "infeasible", ("storage", "home"): "feasible"}


def test_storage_against_move_quota_names_both():
    # Storage forces one table away from its home, the quota moves nothing.
    doc = _doc({"a": (7, 0), "b": (7, 0)}, [_ml("j", ["a"], 5)], capacity=10, quota=0)
    res = solve(load_instance(doc), time_limit=30)
    assert res.status == "infeasible"
    assert res.message == ("infeasible: constraint (4) storage or the move quota: without any one of them every "
                           "other hard constraint can be met")


def test_move_quota_of_a_sub_problem_is_named_directly():
    # Table a may only go to west, away from its home; b may stay.
    doc = _doc({"a": (7, 0), "b": (7, 1)}, [_ml("j", ["a"], 5)], quota=5)
    res = solve(load_instance(doc), time_limit=30, fixed=np.array([-1, -1]), regions=[1])
    assert res.status == "infeasible"
    assert res.message == "infeasible: the move quota: at least 7 bytes must move, the quota is 5"


def test_given_placement_names_what_it_breaks():
    doc = _doc({"s": (5, 0)}, _SPLIT_JOBS, supply=_SPLIT_SUPPLY, threshold=40)
    res = solve(load_instance(doc), time_limit=30, fix_home=np.array([0]))
    assert res.status == "infeasible"
    assert res.message == ("infeasible: the given placement breaks (6) high-priority GPU-hours at home: "
                           "20 < 40")


def test_objective_cutoff_is_not_blamed_on_a_constraint():
    doc = _doc({"s": (5, 0)}, _SPLIT_JOBS, supply=_SPLIT_SUPPLY, threshold=40)
    res = solve(load_instance(doc), time_limit=30, highs_options={"objective_bound": 1e9})
    assert res.status == "infeasible"
    assert res.message.startswith("infeasible: proven under the objective cutoff")
    assert res.stats["infeasibility"]["dropped"] == []


def test_build_steps_declare_figure_4_in_order():
    doc = _doc({"t1": (5, 0), "t2": (5, 1)}, [_ml("j1", ["t1", "t2"], 20), _ml("j2", ["t2"], 20)],
               threshold=10, quota=100)
    m = build(load_instance(doc))
    names = [c.local_name for c in m.component_objects(descend_into=False)]
    assert names == ["x", "one_home", "a", "a_le", "a_ge", "b", "m", "b_one", "m_le", "argmax", "cross_bytes",
                     "storage", "quota", "cpu", "home", "z", "y", "W", "level_one", "level", "split", "split_ub",
                     "gpu_balance", "zs", "storage_balance", "cuts", "obj"]
    assert sorted(m._families) == ["cpu", "home", "quota", "storage"]
    assert m._home_reach == 40


def test_relative_gap_is_relative_to_the_reference_or_the_value():
    assert relative_gap(110.0, 100.0) == pytest.approx(0.1)
    assert relative_gap(110.0, 100.0, relative_to="value") == pytest.approx(10 / 110)
    assert relative_gap(90.0, 100.0, "max", relative_to="value") == pytest.approx(10 / 90)
    assert relative_gap(None, 1.0) is None and relative_gap(1.0, float("inf"), relative_to="value") is None
    with pytest.raises(ValueError):
        relative_gap(1.0, 1.0, relative_to="bound")
