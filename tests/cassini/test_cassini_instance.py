"""CASSINI instances: validation naming the field, routes, file round trip, link-sharing model, CLI."""

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.instances import stored, stored_path
from placement.instances.cassini import (
    cassini_document,
    figure5_instance,
    generate_cassini,
    links_instance,
)

from placement.app.cli import main
from placement.cassini.evaluation import evaluate, iteration_times
from placement.cassini.instance import (
    CassiniSolution,
    instance_to_json,
    load_instance,
    load_solution,
)
from placement.cassini.profiles import SYNTHETIC_KINDS, JobProfile
from placement.cassini.topology import testbed_topology as paper_testbed
from placement.errors import InstanceError
from placement.io import read_document


def _doc():
    return instance_to_json(figure5_instance())


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["jobs"][0].update(phases=[[30, 0], [20, 40]]), "jobs[0].phases"),
    (lambda d: d["jobs"][1]["phases"][1].__setitem__(1, -5), "jobs[1].phases[1].bandwidth"),
    (lambda d: d["jobs"][0]["phases"][0].__setitem__(0, 0), "jobs[0].phases[0].duration"),
    (lambda d: d["jobs"][0].update(iteration_time=0), "jobs[0].iteration_time"),
    (lambda d: d["candidates"][0]["placement"].update(j1=["s0", "nowhere"]), "candidates[0].placement.j1[1]"),
    (lambda d: d["candidates"][0]["placement"].pop("j2"), "candidates[0].placement.j2"),
    (lambda d: d["candidates"][0]["placement"].update(j3=["s0"]), "candidates[0].placement.j3"),
    (lambda d: d["topology"]["links"][0].update(capacity=0), "topology.links[0].capacity"),
    (lambda d: d["topology"]["links"][0].update(ends=["s0", "mars"]), "topology.links[0].ends"),
    (lambda d: d["topology"]["links"].pop(), "topology.links"),   # a server cut off
    (lambda d: d["topology"]["servers"][0].update(gpus=1), "candidates[0].placement"),
    (lambda d: d.update(precision_deg=7), "precision_deg"),
    (lambda d: d.update(max_perimeter=100), "candidates[0]"),
    (lambda d: d["jobs"][1].update(name="j1"), "jobs[1].name"),
])
def test_bad_input_is_rejected_naming_the_field(mutate, field):
    doc = copy.deepcopy(_doc())
    mutate(doc)
    with pytest.raises(InstanceError) as err:
        load_instance(doc)
    assert err.value.field == field


def test_round_trip_and_stored_instances_load():
    for name in stored("cassini"):
        inst = load_instance(read_document(str(stored_path("cassini", name))))
        again = load_instance(json.loads(json.dumps(instance_to_json(inst))))
        assert instance_to_json(again) == instance_to_json(inst)
    assert len(stored("cassini")) >= 4


def test_generator_is_deterministic_and_valid():
    a, b = cassini_document(9, 3, seed=11), cassini_document(9, 3, seed=11)
    assert a == b and a != cassini_document(9, 3, seed=12)
    inst = load_instance(a)
    for c in inst.candidates:
        used = [s for _, servers in c.placement for s in servers]
        assert len(used) == len(set(used))  # one GPU per testbed server


def test_synthetic_profiles_cover_their_iteration():
    for kind, fn in SYNTHETIC_KINDS.items():
        for it in (120, 180, 240, 360):
            p = fn("x", it, quantum=10)
            assert sum(d for d, _ in p.phases) == it and all(d > 0 for d, _ in p.phases), kind
            assert len(p.demand) == it and p.peak > 0


def test_testbed_and_ring_routes():
    topo = paper_testbed()
    assert len(topo.server_gpus) == 24 and len(topo.switches) == 13
    # Ring all-reduce over a tree crosses exactly the Steiner tree of the servers.
    assert topo.job_links(("s0", "s1")) == ("s0-tor0", "s1-tor0")
    assert set(topo.job_links(("s0", "s2", "s5"))) == {"s0-tor0", "tor0-core", "s2-tor1", "tor1-core",
                                                         "s5-tor2", "tor2-core"}
    assert topo.job_links(("s3",)) == ()


def test_link_sharing_model_more_overlap_never_faster():
    a = JobProfile("a", 40, ((20, 0.0), (20, 40.0)))
    b = JobProfile("b", 40, ((20, 0.0), (20, 30.0)))
    inst = links_instance({"l": ["a", "b"]}, [a, b], capacity=50.0)
    apart = iteration_times(inst, "c0", {"a": 0, "b": 20})
    together = iteration_times(inst, "c0", {"a": 0, "b": 0})
    assert apart == {"a": 40.0, "b": 40.0}
    # Overlapping for 20 units at 70/50: each transmitting unit takes 1.4 units.
    assert together["a"] == pytest.approx(40 + 20 * 0.4) and together["b"] == pytest.approx(48.0)
    for s in range(40):
        t = iteration_times(inst, "c0", {"a": 0, "b": s})
        assert t["a"] >= apart["a"] - 1e-12 and t["a"] <= together["a"] + 1e-12


def test_solution_validation():
    inst = figure5_instance()
    with pytest.raises(InstanceError) as err:
        load_solution(inst, {"shifts": {"j1": 40}})
    assert err.value.field == "solution.shifts.j1"
    with pytest.raises(InstanceError) as err:
        load_solution(inst, {"candidate": "zz", "shifts": {}})
    assert err.value.field == "solution.candidate"
    sol = load_solution(inst, {"shifts": {"j1": 10}})
    assert sol == CassiniSolution("c0", (("j1", 10), ("j2", 0)))
    assert evaluate(inst, sol).score == pytest.approx(1.0)


@pytest.mark.parametrize("solver", ["exact", "affinity", "rotation"])
def test_cli_generate_solve_evaluate(tmp_path, capsys, solver):
    inst_path, out_path = tmp_path / "i.json", tmp_path / "o.json"
    assert main(["generate", "cassini", "--jobs", "5", "--candidates", "3", "--seed", "2",
                 "-o", str(inst_path)]) == 0
    assert main(["solve", str(inst_path), "--solver", solver, "--time-limit", "30", "-o", str(out_path)]) == 0
    out = json.loads(out_path.read_text())
    assert out["problem"] == "cassini" and out["status"] in ("optimal", "feasible")
    inst = load_instance(json.loads(inst_path.read_text()))
    sol = load_solution(inst, out)
    assert out["objective"] == pytest.approx(evaluate(inst, sol).score)
    capsys.readouterr()
    assert main(["evaluate", str(inst_path), str(out_path)]) == 0
    assert "violations: none" in capsys.readouterr().out


def test_cli_bad_input_one_line(tmp_path, capsys):
    doc = _doc()
    doc["jobs"][0]["phases"][1][1] = -1
    bad, out = tmp_path / "bad.json", tmp_path / "o.json"
    bad.write_text(json.dumps(doc))
    assert main(["solve", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: jobs[0].phases[1].bandwidth") and "\n" not in err and not out.exists()
    assert main(["generate", "cassini", "--jobs", "0"]) == 2


def test_generate_many_jobs_on_a_larger_tree():
    inst = generate_cassini(200, 1, seed=0, topology="tree", pods=8, tors_per_pod=8, servers_per_tor=8)
    assert len(inst.jobs) == 200 and len(inst.shared_links("c0")) > 20


@given(st.lists(st.tuples(st.sampled_from([20, 30, 40, 60]), st.integers(1, 9),
                          st.sampled_from([10.0, 25.0, 40.0])), min_size=2, max_size=4),
       st.data())
def test_adding_a_job_to_a_link_never_makes_the_others_faster(specs, data):
    jobs = []
    for i, (it, cut, bw) in enumerate(specs):
        c = min(cut * it // 10, it - 1)
        jobs.append(JobProfile(f"j{i}", it, ((c, 0.0), (it - c, bw))))
    shifts = {j.name: data.draw(st.integers(0, j.iteration_time - 1)) for j in jobs}
    names = [j.name for j in jobs]
    without = iteration_times(links_instance({"l": names[:-1]}, jobs[:-1], 50.0), "c0", shifts)
    with_all = iteration_times(links_instance({"l": names}, jobs, 50.0), "c0", shifts)
    for n in names[:-1]:
        assert with_all[n] >= without[n] - 1e-9


def test_circle_bounds_are_capped_and_generator_errors_name_the_option(capsys):
    """Review findings: an unbounded max_perimeter let a circle exhaust memory; --precision was blamed on --jobs."""
    doc = _doc()
    doc["max_perimeter"] = 10**12
    with pytest.raises(InstanceError) as err:
        load_instance(doc)
    assert err.value.field == "max_perimeter"
    assert main(["generate", "cassini", "--precision", "7"]) == 2
    assert capsys.readouterr().err.startswith("error: --precision:")
