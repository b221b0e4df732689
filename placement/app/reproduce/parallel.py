"""``placement reproduce PAPER --workers N [--scheduler ADDR]``: a reproduction's simulations as
Dask tasks, with the same outputs as the serial run (app layer).

The paper's module is not changed: its ``run(ctx)`` is a plain program that calls
:meth:`~.context.Context.simulate` and reads each result before the next call, so the calls
to come are not known in advance. They are found by *passes*. A pass runs the paper's whole
``run(ctx)`` into the staging folder (emptied first). Its ``ctx.simulate`` keys each call by a
SHA-256 of the pickled ``(instance, policy, seed, name, options, agent)`` (each trace pickled once per
object and named by its own SHA-256; the same bytes are the task's argument) and

- returns the call's real outcome (result, per-job rows, summary, replay verdict, the policy
  object as ``ctx.last_policy``) when a Dask task computed it, waiting for a task that runs;
- for a call no task has yet: submits one, and returns a *stand-in*: the same call simulated
  here on the trace's first :data:`STAND_IN_JOBS` jobs, so that the program goes on and
  announces its next calls. The pass is then *speculative*: its numbers are not kept, and from
  then on it writes no log and no figure.

A pass that needed no stand-in is the serial run itself, every outcome the one the serial
run computes (the simulations are seeded and single-threaded), and its outputs are the ones
moved into place. Otherwise another pass runs, with every task submitted so far: the first
pass submits nearly every simulation of a paper whose calls do not depend on earlier
results, and a later pass finds the calls that do (a size chosen from earlier runs). Tasks
that the latest pass no longer calls are cancelled; a later pass's tasks run first, each in
the order its pass called them, and the task of a call a pass waits for goes ahead of all of
them while it is still queued (an earlier pass may have queued it behind calls whose arguments
came from stand-ins, which the pass waiting no longer makes). A stand-in that makes the paper's code raise ends that pass
(the next one goes further, since more outcomes are real); after :data:`MAX_SPECULATIVE`
passes, a missing outcome is waited for instead of stood in. A call whose arguments or
policy object do not pickle is simulated here, as in the serial run.

The paper's code, its post-processing and the log writing run here, in this process, in
every pass; the simulations and their replay checks run on the workers, and each result comes
back with the engine's link model (``SimResult.link_model``, its solved components), so measures
that a paper takes from a log reuse them here as in the serial run: a LocalCluster of
``--workers N`` processes (one thread each) or the scheduler at ``--scheduler ADDR`` (the
engine of ``placement sweep``). What the outputs hold does not depend on the workers:
``results.csv``, the claims and the logs are the serial run's, apart from columns that
hold wall times. A paper's module must keep its state on the context (a module-level
cache written during a run is written again by the last pass).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["run_passes", "STAND_IN_JOBS", "MAX_SPECULATIVE", "call_blob", "simulate_task"]

STAND_IN_JOBS = 8       # jobs of a stand-in simulation
MAX_SPECULATIVE = 6     # passes that may stand in for a missing outcome; later ones wait


class _CallPickler(pickle.Pickler):
    """Pickles a call with each trace replaced by the SHA-256 of its own pickle, computed once
    per trace object (a paper runs several policies on one trace)."""

    def __init__(self, f, traces: dict[int, tuple[Any, str, bytes]], used: dict[str, bytes]):
        super().__init__(f, protocol=5)
        self.traces, self.used = traces, used

    def persistent_id(self, obj):
        from ...sim.trace import Trace

        if type(obj) is not Trace:
            return None
        got = self.traces.get(id(obj))
        if got is None or got[0] is not obj:
            blob = pickle.dumps(obj, protocol=5)
            got = self.traces[id(obj)] = (obj, hashlib.sha256(blob).hexdigest(), blob)
        self.used[got[1]] = got[2]
        return got[1]


class _CallUnpickler(pickle.Unpickler):
    def __init__(self, f, traces: dict[str, bytes]):
        super().__init__(f)
        self.traces = traces

    def persistent_load(self, pid):
        return pickle.loads(self.traces[pid])


def call_blob(inst, policy, seed: int, name: str, options: dict | None,
              traces: dict[int, tuple[Any, str, bytes]] | None = None,
              agent: bool | str = False) -> tuple[str, bytes, dict[str, bytes]] | None:
    """(SHA-256 key, pickled call, pickled traces by their SHA-256) of a call; ``None`` when it
    does not pickle (simulated here). The same bytes are the task's arguments; ``traces`` caches
    each trace object's pickle; ``agent``: the run's link sharing (:meth:`.context.Context.simulate`)."""
    buf, used = io.BytesIO(), {}
    try:
        _CallPickler(buf, {} if traces is None else traces, used).dump((inst, policy, seed, name, options, agent))
    except Exception:
        return None
    blob = buf.getvalue()
    return hashlib.sha256(blob + "".join(sorted(used)).encode()).hexdigest(), blob, used


def _outcome(inst, policy, seed: int, options: dict | None, checks, command: str,
             agent: bool | str = False) -> dict[str, Any]:
    from ..run import run_simulation

    built: list = []
    record: dict[str, Any] = {"command": command}
    t0 = time.perf_counter()
    res, rows, summ, broken = run_simulation(inst, policy, seed, options, checks=checks, built=built, record=record,
                                             agent=agent)
    return {"res": res, "rows": rows, "summ": summ, "broken": broken, "record": record, "policy": built[0],
            "wall_s": time.perf_counter() - t0}


def simulate_task(call: bytes, traces: dict[str, bytes], checks, command: str) -> bytes | None:
    """One simulation and its replay check, on a worker: the pickled outcome ``Context.simulate``
    needs (result, per-job rows, summary, violations, provenance record, policy object, and the
    engine's link model with its solved components, put back as the result's ``link_model`` by
    :func:`_loaded`, so that measures taken from the log in the main process reuse them as the
    serial run does instead of solving every component again), or ``None`` when it does not
    pickle (the caller then simulates the call itself); a link model that does not pickle is
    left out (``link_model`` None)."""
    inst, policy, seed, _name, options, agent = _CallUnpickler(io.BytesIO(call), traces).load()
    out = _outcome(inst, policy, seed, options, checks, command, agent)
    try:   # the result pickles without its link model (SimResult): shipped beside it
        return pickle.dumps({**out, "links": out["res"].link_model}, protocol=5)
    except Exception:
        pass
    try:
        return pickle.dumps(out, protocol=5)
    except Exception:
        return None


def _loaded(blob: bytes) -> dict[str, Any]:
    """A task's outcome unpickled, its result's ``link_model`` the worker's (shipped beside it)."""
    out = pickle.loads(blob)
    out["res"].link_model = out.pop("links", None)
    return out


def _stand_in(inst, policy, seed: int, options: dict | None, checks, command: str,
              agent: bool | str = False) -> dict[str, Any]:
    """The call simulated here on the trace's first :data:`STAND_IN_JOBS` jobs."""
    from ...sim.trace import Trace

    small = dataclasses.replace(inst, trace=Trace(inst.trace.name, inst.trace.jobs[:STAND_IN_JOBS],
                                                  inst.trace.provenance))
    return _outcome(small, policy, seed, options, checks, command, agent)


class _Runner:
    """The ``Context.simulate`` back end of one pass (see the module docstring)."""

    def __init__(self, client, futures: dict[str, Any], pass_no: int, speculate: bool,
                 traces: dict[int, tuple[Any, str, bytes]], urgent: set[str] | None = None):
        self.client, self.futures, self.pass_no, self.speculate = client, futures, pass_no, speculate
        self.traces = traces
        self.urgent = set() if urgent is None else urgent   # calls whose task was put first (:meth:`_first`)
        self.hurried = 0
        self.used: list[str] = []
        self.new = 0
        self.stood_in = 0
        self.local = 0

    def __call__(self, inst, policy, seed, name, options, checks, command, agent: bool | str = False):
        called = call_blob(inst, policy, seed, name, options, self.traces, agent)
        if called is None:
            return self._here(inst, policy, seed, options, checks, command, agent)
        key, blob, traces = called
        self.used.append(key)
        fut = self.futures.get(key)
        new = fut is None or fut.cancelled()
        if new:
            self.new += 1
            self.urgent.discard(key)
            fut = self.futures[key] = self.client.submit(
                simulate_task, blob, traces, checks, command, key=f"reproduce-sim-{key}", pure=False,
                priority=self.pass_no * 1_000_000 - len(self.used))
        if new and self.speculate:   # a call no earlier pass announced: stand in, go on
            self.stood_in += 1
            try:
                return _stand_in(inst, policy, seed, options, checks, command, agent)
            except Exception:   # the policy needs more of the trace: wait for the real outcome
                self.stood_in -= 1
        if not fut.done():
            fut = self._first(key, fut, blob, traces, checks, command)
        out = fut.result()
        if out is None:
            return self._here(inst, policy, seed, options, checks, command, agent)
        return _loaded(out)

    def _first(self, key: str, fut, blob: bytes, traces: dict[str, bytes], checks, command: str):
        """The task of a call this pass waits for, put ahead of every other task when it still
        waits in the scheduler's queue: an earlier pass submitted it behind calls this pass may
        no longer make (a pass whose stand-ins chose other arguments), and those would run
        first. A copy is submitted at the highest priority and whichever finishes first is kept,
        the other cancelled (the same outcome: the simulations are seeded); a task already on a
        worker is waited for as it is."""
        if key in self.urgent:
            return fut
        state = self.client.run_on_scheduler(_task_state, fut.key)
        if state not in ("queued", "no-worker", "waiting", "released"):
            return fut
        from distributed import wait

        self.urgent.add(key)
        self.hurried += 1
        copy = self.client.submit(simulate_task, blob, traces, checks, command,
                                  key=f"reproduce-sim-{key}-first{self.pass_no}", pure=False,
                                  priority=URGENT + self.pass_no * 1_000_000 - len(self.used))
        wait([fut, copy], return_when="FIRST_COMPLETED")
        keep, drop = (fut, copy) if fut.done() else (copy, fut)
        if not drop.done():
            self.client.cancel([drop])
        self.futures[key] = keep
        return keep

    def _here(self, inst, policy, seed, options, checks, command, agent: bool | str = False):
        self.local += 1
        return _outcome(inst, policy, seed, options, checks, command, agent)


#: the priority band of a task a pass is waiting for (:meth:`_Runner._first`), above every pass's
URGENT = 1_000_000_000


def _task_state(key: str, dask_scheduler=None) -> str | None:
    """The scheduler's state of task ``key`` (run on the scheduler)."""
    ts = dask_scheduler.tasks.get(key)
    return None if ts is None else ts.state


def _empty(folder: Path) -> None:
    for p in folder.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def run_passes(run: Callable, make_context: Callable, stage: Path, *, workers: int, scheduler: str | None,
               echo: Callable[[str], None] | None = None):
    """Run ``run(ctx)`` in passes (module docstring) on a LocalCluster of ``workers`` processes
    or the scheduler at ``scheduler``; returns the last pass's context, whose outputs are in
    ``stage`` (``make_context(runner, echo)`` builds a context writing there)."""
    from ..sweep.run import _connect

    client, cluster = _connect(scheduler, workers)
    futures: dict[str, Any] = {}
    traces: dict[int, tuple[Any, str, bytes]] = {}
    urgent: set[str] = set()
    try:
        pass_no = 0
        while True:
            pass_no += 1
            speculate = pass_no <= MAX_SPECULATIVE
            runner = _Runner(client, futures, pass_no, speculate, traces, urgent)
            _empty(stage)
            t0 = time.perf_counter()
            ctx = make_context(runner, echo if pass_no > 1 else None)
            try:
                run(ctx)
                completed = True
            except Exception:
                if not runner.stood_in:
                    raise           # the serial run raises here too
                completed = False   # a stand-in's numbers made the paper's code raise
            if not runner.stood_in:
                return ctx
            if completed:           # calls the whole pass no longer makes: cancelled
                used = set(runner.used)
                stale = [k for k in futures if k not in used]
                client.cancel([futures[k] for k in stale if not futures[k].done()])
                for k in stale:
                    del futures[k]
            if echo is not None:
                echo(f"pass {pass_no} ({time.perf_counter() - t0:.1f} s): {runner.new} simulations submitted, "
                     f"{runner.stood_in} stood in for, {runner.hurried} waited for put first; running the paper's "
                     f"code again")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
