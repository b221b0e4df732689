"""Tetris file format: round trips, the reference evaluation by hand, and bad input."""

import copy
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.instances import generate_tetris, tetris_document

from placement import InstanceError
from placement.tetris import (
    evaluate,
    instance_to_json,
    load_instance,
    load_solution,
    solution_to_json,
    violations,
)

DESIGN_EXAMPLE = {
    "problem": "tetris", "version": 1,
    "regions": [{"name": "east", "storage_capacity": 5000, "gpu_supply": {"A100": 400, "H100": 0}},
                {"name": "west", "storage_capacity": 5000, "gpu_supply": {"A100": 100, "H100": 50}}],
    "apps": [{"name": "etl", "cpu_capacity": {"east": 300}}],
    "tables": [{"name": "clicks", "size": 120, "home": "east"},
               {"name": "views", "size": 30, "home": "west"}],
    "jobs": [{"name": "rank", "kind": "ml", "tables": ["clicks"], "gpu_type": "A100",
              "gpu_hours": 40, "cpu_hours": 5, "priority": 0, "app": "etl"},
             {"name": "both", "kind": "ml", "tables": ["clicks", "views"], "gpu_type": "H100",
              "gpu_hours": 10, "cpu_hours": 1, "priority": 1, "app": "etl"},
             {"name": "report", "kind": "analytics", "tables": ["clicks", "views"],
              "cpu_hours": 9, "app": "etl"}],
    "priority_weights": [8, 4, 2, 1, 1, 1, 1],
    "high_priorities": [0, 1],
    "weights": {"w1": 1.0, "w2": 1000.0, "w3": 100.0},
    "home_threshold": 30,
    "move_quota": 5000,
}


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_design_example_evaluates_by_hand():
    inst = load_instance(DESIGN_EXAMPLE)
    ev = evaluate(inst, inst.initial_solution())
    # rank: R=east, local. both: tables in east and west -> NULL -> 150 cross bytes.
    # report: majority east (120 vs 30) -> 30 cross bytes.
    assert ev.cross_region_bytes == 150 + 30
    assert list(ev.job_region) == [0, -1, 0]
    # (2): only (A100, 0) and (H100, 1) have demand. A100: east has all 40 of 40, supply share 400/500.
    a100 = (40 / 40 - 400 / 500) ** 2 * sigmoid(max(0, 40 - 400)) * 8 + (0 - 100 / 500) ** 2 * sigmoid(0) * 8
    h100 = (0 - 0 / 50) ** 2 * sigmoid(0) * 4 + (0 - 50 / 50) ** 2 * sigmoid(0) * 4
    assert ev.gpu_balance == pytest.approx(a100 + h100)
    storage = (120 / 150 - 0.5) ** 2 + (30 / 150 - 0.5) ** 2
    assert ev.storage_balance == pytest.approx(storage)
    assert ev.objective == pytest.approx(180 + 1000 * (a100 + h100) + 100 * storage)
    assert ev.home_gpu_hours == 40
    assert violations(inst, inst.initial_solution()) == []


def test_violations_list_every_broken_constraint():
    doc = copy.deepcopy(DESIGN_EXAMPLE)
    doc["regions"][0]["storage_capacity"] = 100
    doc["apps"][0]["cpu_capacity"] = {"east": 10}
    doc["home_threshold"] = 1000
    doc["move_quota"] = 0
    inst = load_instance(doc)
    sol = load_solution(inst, {"home": {"clicks": "east", "views": "east"}})
    lines = violations(inst, sol)
    assert any(line.startswith("(4) storage in east") for line in lines)
    assert any(line.startswith("(5) CPU of app etl in east") for line in lines)
    assert any(line.startswith("(6)") for line in lines)
    assert any(line.startswith("move quota") for line in lines)


@given(st.integers(1, 12), st.integers(0, 20), st.integers(1, 4), st.integers(0, 10**6))
def test_json_round_trip_is_identity(T, J, R, seed):
    inst = generate_tetris(T, J, R, seed=seed)
    doc = instance_to_json(inst)
    again = load_instance(json.loads(json.dumps(doc)))
    assert instance_to_json(again) == doc
    sol = inst.initial_solution()
    assert load_solution(inst, json.loads(json.dumps(solution_to_json(inst, sol)))) == sol


@given(st.integers(1, 12), st.integers(0, 20), st.integers(1, 4), st.integers(0, 10**6))
def test_generator_is_deterministic_and_start_is_feasible(T, J, R, seed):
    a, b = tetris_document(T, J, R, seed=seed), tetris_document(T, J, R, seed=seed)
    assert a == b
    inst = load_instance(a)
    assert violations(inst, inst.initial_solution()) == []


def _mutate(path, value):
    doc = copy.deepcopy(DESIGN_EXAMPLE)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


BAD = [
    (("tables", 0, "size"), -5, "tables[0].size"),
    (("tables", 0, "size"), 1.5, "tables[0].size"),
    (("tables", 0, "home"), "mars", "tables[0].home"),
    (("tables", 1, "name"), "clicks", "tables[1].name"),
    (("jobs", 0, "tables"), ["nope"], "jobs[0].tables[0]"),
    (("jobs", 0, "tables"), [], "jobs[0].tables"),
    (("jobs", 1, "tables"), ["clicks", "clicks"], "jobs[1].tables[1]"),
    (("jobs", 0, "gpu_type"), "TPU", "jobs[0].gpu_type"),
    (("jobs", 0, "priority"), 9, "jobs[0].priority"),
    (("jobs", 0, "kind"), "batch", "jobs[0].kind"),
    (("jobs", 0, "app"), "ghost", "jobs[0].app"),
    (("jobs", 2, "gpu_hours"), 5, "jobs[2].gpu_hours"),
    (("jobs", 0, "gpu_hours"), KeyError, "jobs[0].gpu_hours"),
    (("regions", 0, "storage_capacity"), KeyError, "regions[0].storage_capacity"),
    (("regions", 0, "gpu_supply"), {"A100": -1}, "regions[0].gpu_supply.A100"),
    (("apps", 0, "cpu_capacity"), {"north": 4}, "apps[0].cpu_capacity.north"),
    (("high_priorities",), [7], "high_priorities[0]"),
    (("weights",), {"w1": -1}, "weights.w1"),
    (("weights",), {"w4": 1}, "weights.w4"),
    (("version",), 2, "version"),
    (("regions",), [], "regions"),
    (("tables",), KeyError, "tables"),
    (("move_quota",), -1, "move_quota"),
    (("tables", 0, "size"), 10**30, "tables[0].size"),
    (("move_qouta",), 5, "move_qouta"),
    (("jobs", 0, "gpu_typ"), "A100", "jobs[0].gpu_typ"),
    (("tables",), [{"name": "clicks", "size": 2**53, "home": "east"}, {"name": "views", "size": 2**53, "home": "west"}],
     "tables[].size"),
]


@pytest.mark.parametrize("path,value,field", BAD, ids=[b[2] + "=" + repr(b[1]) for b in BAD])
def test_bad_input_names_the_field(path, value, field):
    with pytest.raises(InstanceError) as err:
        load_instance(_mutate(path, value))
    assert err.value.field == field
    assert str(err.value).startswith(field + ":")


def test_solution_for_another_instance_is_rejected():
    inst = load_instance(DESIGN_EXAMPLE)
    with pytest.raises(InstanceError, match="solution.home.t0"):
        load_solution(inst, {"home": {"t0": "east"}})
    with pytest.raises(InstanceError, match="solution.home.views: is missing"):
        load_solution(inst, {"home": {"clicks": "east"}})
    with pytest.raises(InstanceError, match="unknown region"):
        load_solution(inst, {"home": {"clicks": "east", "views": "mars"}})
