"""``--workers`` runs a +CASSINI call with the link sharing it asked for: the agent is part of the
task's pickled call and of its key, so the worker's outcome is the serial run's (it was dropped
before: the workers shared links without the agent)."""

from __future__ import annotations

import pickle

from placement.app.reproduce.cassini_sim import CLOS, SECTION_2_2_GOODPUT, experiment_trace
from placement.app.reproduce.cassini_sim import testbed as clos_testbed
from placement.app.reproduce.parallel import call_blob, simulate_task
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
