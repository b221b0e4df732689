"""``--workers`` runs a +CASSINI call with the link sharing it asked for: the agent is part of the
task's pickled call and of its key, so the worker's outcome is the serial run's (it was dropped
before: the workers shared links without the agent)."""

from __future__ import annotations

import pickle

from placement.app.reproduce.cassini_sim import CLOS, SECTION_2_2_GOODPUT, experiment_trace
from placement.app.reproduce.cassini_sim import testbed as clos_testbed
from placement.app.reproduce.parallel import _loaded, call_blob, simulate_task
from placement.app.run import run_simulation
from placement.sim.instance import SimInstance

HOURS = 0.35   # a short Poisson trace on which the agent still changes the log


def test_the_worker_task_keeps_the_agent():
    inst = SimInstance(experiment_trace("poisson", 0, HOURS), clos_testbed(CLOS[0], SECTION_2_2_GOODPUT), "ideal")
    opts = {"elastic": True}
    logs = {}
    for agent in (True, False):
        res, _rows, _summ, broken = run_simulation(inst, "themis+cassini", 0, dict(opts), agent=agent)
        assert broken == []
        logs[agent] = [tuple(r) for r in res.log]
    assert logs[True] != logs[False]           # the agent changes this run: the test can tell them apart
    key, blob, traces = call_blob(inst, "themis+cassini", 0, "main", dict(opts), {}, True)
    out = pickle.loads(simulate_task(blob, traces, None, "test"))
    assert out["broken"] == [] and [tuple(r) for r in out["res"].log] == logs[True]
    assert call_blob(inst, "themis+cassini", 0, "main", dict(opts), {}, False)[0] != key


def test_the_worker_ships_its_link_model_back():
    """The task's outcome carries the engine's link model with its solved components, put back as
    the result's ``link_model``: the main process's measures reuse it (no component solved again)
    and equal the serial run's."""
    from placement.app.reproduce.cassini_sim import measure

    inst = SimInstance(experiment_trace("poisson", 0, 0.1), clos_testbed(CLOS[0], SECTION_2_2_GOODPUT), "ideal")
    res, _rows, _summ, broken = run_simulation(inst, "themis+cassini", 0, {"elastic": True}, agent=True)
    serial = measure("poisson", inst.trace, res.log, res.link_model)
    _key, blob, traces = call_blob(inst, "themis+cassini", 0, "main", {"elastic": True}, {}, True)
    out = _loaded(simulate_task(blob, traces, None, "test"))
    model = out["res"].link_model
    assert model is not None and model.agent and "links" not in out
    solved = model.stats["fluid_runs"]
    assert solved > 0 and model.stats == out["res"].stats["links"]
    got = measure("poisson", inst.trace, out["res"].log, model)
    assert model.stats["fluid_runs"] == solved          # every component from the engine's cache
    assert got == serial
