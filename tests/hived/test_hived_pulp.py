"""The HiveD model written twice, in Pyomo and in PuLP: both layers reach the same optimum."""

from pathlib import Path

import pytest
from hypothesis import given
from placement.instances import stored, stored_path
from placement.models import hived, hived_pulp

from placement.app.cli import load_instance_file
from placement.hived.evaluation import violations
from tests.support import hived_instances as instances


@given(instances)
def test_pulp_and_pyomo_layers_agree(inst):
    a = hived.solve(inst, time_limit=60)
    b = hived_pulp.solve(inst, time_limit=60)
    assert a.status == b.status == "optimal"
    assert a.objective == b.objective
    assert b.bound == pytest.approx(b.objective)
    assert not violations(inst, b.solution)


@given(instances)
def test_feasibility_forms_agree(inst):
    a = hived.solve(inst, time_limit=60, form="feasibility")
    b = hived_pulp.solve(inst, time_limit=60, form="feasibility")
    assert (a.status == "optimal") == (b.status == "optimal")
    assert {a.status, b.status} <= {"optimal", "infeasible"}


@pytest.mark.parametrize("name", [n for n in stored("hived") if n.endswith(".yaml")])
def test_real_configs_same_optimum_in_both_layers(name):
    _, inst = load_instance_file(str(Path(str(stored_path("hived", name)))))
    a, b = hived.solve(inst), hived_pulp.solve(inst)
    assert a.status == b.status == "optimal"
    assert a.objective == b.objective == inst.n_reserved  # every real config is feasible
