"""HiveD cell specs: every shared real config loads and is feasible; bad input names the field."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st
from placement.instances import generate_hived
from placement.models.hived import solve as exact_solve
from placement.solvers.buddy import solve as buddy_solve

from placement.app.cli import main
from placement.errors import InstanceError
from placement.hived import instance_to_json, load_instance
from placement.hived.config import instance_to_hived
from placement.hived.evaluation import load_solution, solution_to_json, violations
from placement.hived.feasibility import check_feasibility, is_feasible
from placement.io import read_document

STORED = Path(__file__).resolve().parents[2] / "instances" / "data" / "hived"
# the real HiveD configs shipped with the package (copies of HiveD's, LICENSE beside them)
CONFIGS = sorted(p for p in STORED.glob("*.yaml") if p.name != "figure4.yaml")
BASIC = STORED / "basic.yaml"


@pytest.mark.parametrize("path", CONFIGS + [STORED / "figure4.yaml"], ids=lambda p: p.name)
def test_config_loads_and_is_feasible_three_ways(path):
    inst = load_instance(read_document(path))
    assert is_feasible(inst)
    ex = exact_solve(inst)
    bu = buddy_solve(inst)
    assert ex.status == "optimal" and bu.status == "optimal"
    assert ex.objective == bu.objective == inst.n_reserved
    assert violations(inst, ex.solution) == [] and violations(inst, bu.solution) == []
    # canonical JSON round trip keeps everything
    again = load_instance(instance_to_json(inst))
    assert (again.chains, again.vcs, again.pinned, again.addresses) == (inst.chains, inst.vcs, inst.pinned,
                                                                        inst.addresses)
    # solutions round trip through their JSON form
    sol = load_solution(inst, solution_to_json(inst, bu.solution))
    assert sorted(sol.bindings, key=repr) == sorted(bu.solution.bindings, key=repr)


def test_design_yaml_structure():
    inst = load_instance(read_document(STORED / "design.yaml"))
    names = [c.name for c in inst.chains]
    assert names == ["CT1-NODE", "3-DGX1-P100-NODE", "DGX2-V100-NODE", "3-DGX2-V100-NODE", "4-DGX2-V100-NODE",
                     "2-IB-DGX2-V100-NODE"]
    ch = inst.chains[inst.chain_index["4-DGX2-V100-NODE"]]
    assert ch.types[-3:] == ("DGX2-V100-NODE", "2-DGX2-V100-NODE", "4-DGX2-V100-NODE")
    assert ch.gpus[ch.top] == 64 and ch.node_level == 5
    vc1 = inst.vcs[inst.vc_index["VC1"]]
    c4 = inst.chain_index["4-DGX2-V100-NODE"]
    assert vc1.reserved[(c4, 5)] == 2 and vc1.reserved[(c4, 6)] == 1
    pin = inst.pinned["VC1-YQW-CT1"]
    assert inst.address(pin.chain, pin.level, pin.index) == "8"
    p100 = inst.chain_index["3-DGX1-P100-NODE"]
    # the node 1.0.0.0 lists GPU addresses in a custom order
    assert inst.path(p100, 1, 16) .startswith("3-DGX1-P100-NODE/")
    assert inst.address(p100, 4, 2) == "1.0.0.0"


def test_figure4_form():
    inst = load_instance(read_document(STORED / "figure4.yaml"))
    v100 = inst.chains[inst.chain_index["V100-RACK"]]
    assert v100.split == (1, 2, 2, 2, 8) and v100.node_level == 4 and v100.n_top == 2
    assert inst.address(0, 4, 9) == "10.0.2.1"
    p100 = inst.chains[inst.chain_index["P100-RACK"]]
    assert p100.types == ("P100-RACK-UNIT", "P100-RACK") and p100.split == (1, 8)


def _basic() -> dict:
    return yaml.safe_load(BASIC.read_text())


def _set(doc, path, value):
    d = doc
    for key in path[:-1]:
        d = d[key]
    if value is _DEL:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return doc


_DEL = object()

BAD_HIVED = [
    (("physicalCluster", "cellTypes", "K80-NODE", "childCellNumber"), 0, "cellTypes.K80-NODE.childCellNumber"),
    (("physicalCluster", "cellTypes", "K80-2GPU", "childCellType"), "3-K80-NODE", "forms a cycle"),
    (("physicalCluster", "physicalCells", 0, "cellType"), "K80", "below node level"),
    (("physicalCluster", "physicalCells", 0, "cellType"), "K80-2GPU", "below node level"),
    (("physicalCluster", "physicalCells", 0, "cellType"), "NOPE", "not defined in cellTypes"),
    (("virtualClusters", "VC1", "virtualCells", 0, "cellType"), "2-K80-NODE.K80-NODE", "unknown chain"),
    (("virtualClusters", "VC1", "virtualCells", 0, "cellType"), "3-K80-NODE.K80", "not a child type"),
    (("virtualClusters", "VC1", "virtualCells", 0, "cellNumber"), -1, "virtualCells[0].cellNumber"),
    (("virtualClusters", "VC2", "pinnedCells", 0, "pinnedCellId"), "NOPE", "unknown pinnedCellId"),
    (("physicalCluster", "physicalCells", 0, "cellChildren", 0, "cellAddress"), _DEL, "cellAddress"),
    (("physicalCluster", "physicalCells", 0, "cellChildren"), [{"cellAddress": "a"}], "lists 1 children"),
    (("physicalCluster", "cellTypes", "K80-NODE", "isNodeLevel"), "yes", "isNodeLevel"),
    (("virtualClusters", "VC1", "pinnedCells"), [{"pinnedCellId": "VC2-K80"}], "already assigned"),
]


@pytest.mark.parametrize("path,value,needle", BAD_HIVED,
                         ids=lambda x: re.sub(r" at 0x[0-9a-f]+", "", str(x))[:30])  # same ids in every process
def test_hived_yaml_errors_name_the_field(path, value, needle):
    doc = _set(_basic(), path, value)
    with pytest.raises(InstanceError) as err:
        load_instance(doc)
    assert needle in str(err.value)
    assert err.value.field  # one field named


def test_more_errors():
    doc = _basic()
    doc["physicalCluster"]["cellTypes"]["3-K80-NODE"]["isNodeLevel"] = True
    with pytest.raises(InstanceError, match="more than one isNodeLevel"):
        load_instance(doc)
    fig = read_document(STORED / "figure4.yaml")
    bad = copy.deepcopy(fig)
    bad["physicalCluster"][0]["topLevelCellAddresses"][1] = "10.0.2.0~8"
    with pytest.raises(InstanceError, match=r"physicalCluster\[0\]\.topLevelCellAddresses\[1\].*9 addresses"):
        load_instance(bad)
    bad = copy.deepcopy(fig)
    bad["vcAssignment"][0]["cells"][0]["subCluster"] = "K80"
    with pytest.raises(InstanceError, match="subCluster"):
        load_instance(bad)
    bad = copy.deepcopy(fig)
    bad["cellHierarchy"][0]["hierarchy"][2]["splitFactor"] = 0
    with pytest.raises(InstanceError, match=r"hierarchy\[2\]\.splitFactor"):
        load_instance(bad)
    with pytest.raises(InstanceError, match="problem"):
        load_instance({"problem": "tetris"})
    with pytest.raises(InstanceError, match="physicalCluster"):
        load_instance({"virtualClusters": {}})


def test_pinned_cells_make_the_exact_difference():
    """HiveD's own check (a pinned cell = one reservation at its level) passes; the assignment is infeasible."""
    doc = _basic()
    doc["physicalCluster"]["physicalCells"].append(copy.deepcopy(doc["physicalCluster"]["physicalCells"][0]))
    cells = doc["physicalCluster"]["physicalCells"]
    for child in cells[1]["cellChildren"]:  # a second cell needs nodes of its own
        child["cellAddress"] = "copy-" + child["cellAddress"]
    cells[0]["cellChildren"][1].pop("pinnedCellId")
    cells[0]["cellChildren"][0]["cellChildren"] = [{"pinnedCellId": "P1"}, {}]
    cells[1]["cellChildren"][0]["cellChildren"] = [{"pinnedCellId": "P2"}, {}]
    cells[1]["cellChildren"][1].pop("pinnedCellId")
    doc["virtualClusters"] = {
        "A": {"virtualCells": [{"cellType": "3-K80-NODE", "cellNumber": 1}]},
        "B": {"pinnedCells": [{"pinnedCellId": "P1"}, {"pinnedCellId": "P2"}]},
    }
    inst = load_instance(doc)
    assert not is_feasible(inst)
    top = check_feasibility(inst)[0].levels[0]
    assert top.reserved == 1 and top.available == 0 and top.shortfall == 1
    ex = exact_solve(inst)
    assert ex.status == "optimal" and ex.objective == inst.n_reserved - 1
    assert exact_solve(inst, form="feasibility").status == "infeasible"
    assert buddy_solve(inst).objective == inst.n_reserved - 1


def test_cli_check_cells_and_solve(tmp_path, capsys):
    assert main(["check-cells", str(STORED / "design.yaml")]) == 0
    out = capsys.readouterr().out
    assert "chain 4-DGX2-V100-NODE: feasible" in out
    doc = _basic()
    doc["virtualClusters"]["VC1"]["virtualCells"][0]["cellNumber"] = 3
    bad = tmp_path / "over.yaml"
    bad.write_text(yaml.safe_dump(doc))
    assert main(["check-cells", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "INFEASIBLE" in out and "short by 2 cell(s)" in out
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(_set(_basic(), ("physicalCluster", "cellTypes", "K80-NODE",
                                                     "childCellNumber"), "two")))
    assert main(["check-cells", str(broken)]) == 2
    assert "childCellNumber" in capsys.readouterr().err
    for solver in ("exact", "buddy"):
        res = tmp_path / f"{solver}.json"
        assert main(["solve", str(bad), "--solver", solver, "-o", str(res)]) == 0
        out = capsys.readouterr().out
        assert "objective 3.0" in out  # 5 cells (4 nodes + 1 pinned node) in 3 nodes: 3 honoured
        assert main(["evaluate", str(bad), str(res)]) == 0
        capsys.readouterr()


@given(st.integers(0, 10**6), st.integers(2, 4), st.integers(1, 3), st.integers(0, 2), st.integers(0, 2))
def test_generated_hierarchies_round_trip_through_the_hived_yaml_form(seed, levels, top, pins, bad):
    inst = generate_hived(2, levels, top, 3, seed=seed, n_pinned=pins, n_bad=bad)
    assume(all(ch.node_level > 1 for ch in inst.chains))
    back = load_instance(yaml.safe_load(yaml.safe_dump(instance_to_hived(inst))))
    assert (back.chains, back.vcs, back.pinned, back.bad) == (inst.chains, inst.vcs, inst.pinned, inst.bad)
    for c, ch in enumerate(inst.chains):
        for k in range(1, ch.top + 1):
            assert [back.path(c, k, i) for i in range(ch.count[k])] == [inst.path(c, k, i)
                                                                     for i in range(ch.count[k])]
    assert [lv.left for chk in check_feasibility(back) for lv in chk.levels] == \
        [lv.left for chk in check_feasibility(inst) for lv in chk.levels]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_real_configs_round_trip_through_the_hived_yaml_form(path):
    inst = load_instance(read_document(path))
    back = load_instance(instance_to_hived(inst))
    assert (back.chains, back.vcs, back.pinned) == (inst.chains, inst.vcs, inst.pinned)
    assert all(back.path(c, k, i) == inst.path(c, k, i) for c, ch in enumerate(inst.chains)
               for k in range(1, ch.top + 1) for i in range(ch.count[k]))


def test_hived_form_as_json_through_the_cli(tmp_path, capsys):
    doc = read_document(STORED / "design.yaml")
    p = tmp_path / "design.json"
    p.write_text(json.dumps(doc))
    assert main(["check-cells", str(p)]) == 0
    assert main(["solve", str(p), "--solver", "buddy"]) == 0
    assert "objective 15.0" in capsys.readouterr().out


def test_a_node_listed_twice_in_one_cell_is_rejected():
    """Review finding: a repeated node would count its GPUs twice."""
    doc = _basic()
    children = doc["physicalCluster"]["physicalCells"][0]["cellChildren"]
    children[-1]["cellAddress"] = children[0]["cellAddress"]
    with pytest.raises(InstanceError, match="repeats the node address"):
        load_instance(doc)


def test_figure4_ranges_that_overlap_are_rejected():
    doc = yaml.safe_load("""
cellHierarchy:
  - name: V100-chain
    hierarchy:
      - cellType: V100
      - {cellType: V100-SWITCH, splitFactor: 2}
      - {cellType: V100-NODE, splitFactor: 4}
      - {cellType: V100-RACK, splitFactor: 2}
physicalCluster:
  - topLevelCellType: V100-RACK
    topLevelCellAddresses: ["10.0.1.0~1", "10.0.1.1~2"]
vcAssignment:
  - vc: A
    cells: [{subCluster: V100-chain, cellType: V100-NODE, cellNumber: 2}]
""")
    with pytest.raises(InstanceError, match="physicalCluster\\[0\\].topLevelCellAddresses\\[1\\]"):
        load_instance(doc)


@pytest.mark.parametrize("path,value", [
    (("physicalCluster", "cellTypes", "3-K80-NODE", "childCellNumber"), 10**20),
    (("virtualClusters", "VC1", "virtualCells", 0, "cellNumber"), 10**30),
])
def test_huge_numbers_are_bad_input_not_a_crash(path, value):
    doc = _basic()
    _set(doc, path, value)
    with pytest.raises(InstanceError, match="must be at most"):
        load_instance(doc)
