"""Pollux: goodput-driven co-adaptive scheduling, the allocation maximising the generalized mean of speedups.

Qiao et al., "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning",
OSDI'21, as its authors' simulator runs it (``petuum/adaptdl`` branch ``osdi21-artifact``,
``simulator/pollux.py``, ``speedup.py``, ``goodput.py``, ``simulator.py``; we read the code there).

Per job (PolluxAgent, §4.2; :mod:`placement.sim.goodput`)
    goodput = throughput (§3.2, Eq. 7-9, fitted to the configurations the job has run) x
    statistical efficiency (§3.1, Eq. 5-6, gradient noise scale); the job's batch size and
    gradient accumulation are chosen together with its GPUs: on every allocation the agent
    takes the batch that maximises its goodput there (``GoodputFunction.optimize``).
Speedup (§4.1)
    ``SPEEDUP_j(A) = max goodput on A / goodput on the fair share``: the fair share is
    ``ceil(G / J)`` GPUs on one node (the authors' ``Problem.__init__`` re-bases speedups so),
    ``r / ceil(G / J)`` for a job that has not run yet (no fitted model).
Objective (§4.1, Eq. 10-11)
    the generalized (power) mean over jobs of ``(SPEEDUP_j x N / G + 1e-3)`` with ``p = -1``
    (``p`` is an option), each job's speedup times its restart factor
    ``max(age - restarts x 30 s, 0) / (age + 30 s)`` when its allocation changes (§4.2
    "re-allocation penalty", the authors' ``_evaluate``).
Constraints
    a node's GPUs; at most ``max_replicas`` GPUs per job: twice the most it has run on, at least 1,
    at most 64 and at most ``max batch / min local batch`` (NCF, trained at a fixed batch: 1),
    as the authors' simulator sets it; interference avoidance (§4.2): at most one distributed
    job per node.
Fixed-size (model-parallel) jobs (``fixed_models``, empty by default: the authors' simulator has none)
    a job whose model is listed runs on exactly its trace's GPU count or waits (every other
    count costs infinity in the dynamic program). CASSINI trains DLRM model-parallel (§5.2:
    "we use model parallelism for the DLRM model because of its large model size"; GPT-1/2/3
    too on the model-parallel trace, Fig. 12), and its Pollux baseline places DLRM across
    servers (§5.3); DLRM's goodput analogue, the authors' NCF, is a fixed-batch job that their
    ``max_replicas`` rule holds at one GPU, so without this option CASSINI's Pollux would never
    run DLRM distributed. The job's speedup table is that analogue's
    goodput at its count (interpolated by the throughput model, Eq. 7-9).
Interval
    re-optimised every ``interval`` seconds (60 s, §5.3) on the grid ``k x interval`` (the authors'
    simulator steps so); new jobs wait for the next round.

Where we differ: the authors search allocations with a genetic algorithm (NSGA-II, 100 x 100,
from the previous population); ours is exact on GPU counts: the objective separates over jobs,
so a dynamic program over (jobs, GPUs used) finds the counts that maximise the power mean
(``ceil(r / 4)`` nodes for ``r`` GPUs), then packs them: jobs whose count is unchanged keep
their GPUs, others take the fewest nodes (best fit for one node; for several, nodes with the
most free GPUs that host no other distributed job; when those hold fewer GPUs than counted, the
most one node holds if that is more); a running job that would not get more GPUs than it has
keeps them (no restart for nothing). When that layout holds fewer GPUs than the counts (kept
jobs fragment the nodes; on workload 6 it left 5-20 of 64 GPUs idle from minute 21 to 44 where
theirs used 61-64 nearly always), every job is also packed afresh (biggest first, a job
keeps its GPUs where they are still free) and the layout with the better objective, evaluated on
the nodes and GPUs each job actually gets, is taken: their GA searches whole layouts, so such a
move is in its reach. The search has no randomness: the seed is
unused and the same input gives the same log. Their cluster autoscaling is not modelled (their
runs keep 16 nodes).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from placement.errors import InstanceError
from placement.sim.goodput import FIXED_BATCH, SpeedupTable
from placement.sim.policy import Event, Policy, Preempt, SimView, Start, Timer

__all__ = ["Pollux", "best_counts", "power_cost"]

EPS_SPEEDUP = 1e-3   # added to each scaled speedup before the power mean (the authors' 1e-3)


def power_cost(x: np.ndarray, p: float) -> np.ndarray:
    """Per-job cost whose sum is minimal where the power mean of ``x + 1e-3`` is maximal."""
    y = x + EPS_SPEEDUP
    if p == 0:
        return -np.log(y)
    return y ** p if p < 0 else -(y ** p)


def best_counts(costs: list[np.ndarray], gpus: int, prefer: list[int] | None = None) -> tuple[list[int], float]:
    """Exact minimum of ``sum_j costs[j][r_j]`` over ``sum_j r_j <= gpus`` (``r_j`` indexes
    ``costs[j]``): a dynamic program over (jobs, GPUs used). Ties go to ``prefer[j]`` (the job's
    current count), then to fewer GPUs. Returns (counts, total cost)."""
    dp = np.zeros(gpus + 1)
    choices = []
    for j, c in enumerate(costs):
        new = np.full(gpus + 1, np.inf)
        arg = np.zeros(gpus + 1, dtype=np.int64)
        order = list(range(min(len(c) - 1, gpus) + 1))
        if prefer is not None and 0 <= prefer[j] < len(order):
            order.remove(prefer[j])
            order.insert(0, prefer[j])
        for r in order:
            cand = dp[: gpus + 1 - r] + c[r]
            better = cand < new[r:] - 1e-12 * np.abs(new[r:]).clip(max=1e300)
            new[r:] = np.where(better, cand, new[r:])
            arg[r:] = np.where(better, r, arg[r:])
        dp = new
        choices.append(arg)
    g = int(np.argmin(dp))
    total = float(dp[g])
    counts = [0] * len(costs)
    for j in range(len(costs) - 1, -1, -1):
        counts[j] = int(choices[j][g])
        g -= counts[j]
    return counts, total


class Pollux(Policy):
    """Pollux (OSDI'21): goodput-driven co-adaptive allocation maximising the generalized mean of speedups."""

    name = "pollux"
    elastic = True
    elastic_any = True   # a job's GPU count is Pollux's choice, not the trace's

    def __init__(self, interval: float = 60.0, p: float = -1.0, restart_delay: float = 30.0,
                 avoid_interference: bool = True, fixed_models: tuple[str, ...] = ()):
        if not (math.isfinite(interval) and interval > 0):
            raise ValueError("interval must be a positive number of seconds")
        if not math.isfinite(p) or p > 1:
            raise ValueError("p must be a finite number <= 1")
        if not (math.isfinite(restart_delay) and restart_delay >= 0):
            raise ValueError("restart_delay must be a number of seconds >= 0")
        self.interval, self.p, self.restart_delay = float(interval), float(p), float(restart_delay)
        self.avoid_interference = bool(avoid_interference)
        #: models whose jobs keep their trace's GPU count (module docstring, "Fixed-size jobs")
        self.fixed_models = frozenset(str(m) for m in fixed_models)
        self._armed: float | None = None
        self._service: dict[str, float] = {}
        self._last = 0.0
        self._tables: dict[str, SpeedupTable] = {}
        self._stats = {"rounds": 0, "optimize_s": 0.0, "restarts": 0, "repacks": 0}
        self._factor: dict[str, float] = {}
        self._fair = 1

    def setup(self, view: SimView, seed: int) -> None:
        if not hasattr(view.perf, "agent"):
            raise InstanceError("--policy", "pollux runs on the goodput model of measured jobs: the Pollux "
                                "workloads (placement.sim.goodput.GoodputPerf, placement bench --problem trace)")
        self._last = view.now

    def stats(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self._stats.items()}

    def schedule(self, view: SimView, events: list[Event]) -> list:
        out: list = []
        if any(e.kind == "timer" and e.key == "pollux" for e in events):
            self._armed = None
            t0 = time.perf_counter()
            out = self.optimize(view)
            self._stats["optimize_s"] += time.perf_counter() - t0
            self._stats["rounds"] += 1
        if self._armed is None and (len(view.pending) or len(view.running)):
            self._armed = (math.floor(view.now / self.interval) + 1) * self.interval
            out.append(Timer(self._armed, "pollux"))
        return out

    # ------------------------------------------------------------------ one round
    def _job_costs(self, view: SimView, jobs, n_gpus: int, n_nodes: int, per_node: int):
        perf, now = view.perf, view.now
        fair = math.ceil(n_gpus / len(jobs))
        costs, current = [], []
        for job in jobs:
            agent = perf.agent(job)
            app = agent.app
            fixed = job.model in self.fixed_models
            if fixed:
                max_r = min(int(job.gpus), n_gpus)
            else:
                max_r = 1 if app.name in FIXED_BATCH else min(max(2 * agent.max_profiled_replicas, 1), 64,
                                                                app.max_batch_size // app.min_local_bsz, n_gpus)
            tab = self._tables.get(job.id)
            if tab is None or tab.max_r != max_r:
                tab = self._tables[job.id] = SpeedupTable(agent, max_r)
            r = np.arange(max_r + 1)
            nodes_of = np.ceil(r / per_node).astype(int)
            speed = tab.table(nodes_of, (1, fair)) * n_nodes / n_gpus
            run = view.running.get(job.id)
            cur = len(run.gpus) if run is not None else 0
            hist = view.history(job.id)
            age = now - job.submit
            restarts = max(hist.attempts - 1, 0)
            d = self.restart_delay
            factor = max(age - restarts * d, 0.0) / (age + d) if age + d > 0 else 0.0
            self._factor[job.id], self._fair = factor, fair
            eff = np.where(r == cur, speed, speed * factor)
            cost = power_cost(eff, self.p)
            if fixed:
                cost[1:max_r] = np.inf   # all of its GPUs or none
            costs.append(cost)
            current.append(cur if cur <= max_r else -1)
        return costs, current

    def optimize(self, view: SimView) -> list:
        """One round: GPU counts by :func:`best_counts`, then placement (module docstring)."""
        now, cl = view.now, view.cluster
        for jid, r in view.running.items():
            self._service[jid] = self._service.get(jid, 0.0) + len(r.gpus) * (now - max(self._last, r.start))
        self._last = now
        jobs = list(view.pending) + [view.job(j) for j in view.running]
        if not jobs:
            return []
        jobs.sort(key=lambda j: (self._service.get(j.id, 0.0), j.submit, j.id))
        machine = np.asarray(cl.machine)
        n_nodes = cl.n_machines
        cap = np.bincount(machine, minlength=n_nodes)
        per_node = int(cap.max())
        costs, current = self._job_costs(view, jobs, cl.n_gpus, n_nodes, per_node)
        counts, _ = best_counts(costs, cl.n_gpus, prefer=current)
        out, alloc = self._place(view, jobs, counts, machine, n_nodes)
        if sum(len(g) for g in alloc.values()) < sum(counts):
            # the counts do not fit around the jobs that keep their GPUs: pack every job afresh
            # too and keep whichever layout scores better on the objective (their GA searches
            # whole layouts, so a layout that moves jobs to realise the counts is in its reach)
            out2, alloc2 = self._repack(view, jobs, counts, machine, n_nodes)
            if self._value(view, jobs, alloc2, machine) > self._value(view, jobs, alloc, machine) + 1e-12:
                out, alloc = out2, alloc2
                self._stats["repacks"] += 1
        self._stats["restarts"] += sum(1 for d in out if isinstance(d, Start)
                                       and view.history(d.job_id).attempts > 0)
        return out

    def _value(self, view: SimView, jobs, alloc: dict, machine) -> float:
        """The objective (module docstring) of a layout ``alloc`` (job id -> GPUs): the power mean
        of scaled speedups on the nodes and GPUs each job actually gets, times the restart factor
        where its GPUs change."""
        perf, cl = view.perf, view.cluster
        xs = []
        for job in jobs:
            g = alloc.get(job.id, ())
            run = view.running.get(job.id)
            r, nodes = len(g), len(np.unique(machine[list(g)])) if g else 0
            if r == 0:
                sp = 0.0
            else:
                agent = perf.agent(job)
                fn, app = agent.goodput_fn(), agent.app
                if fn is None:
                    sp = r / self._fair
                else:
                    rng = (app.min_local_bsz, app.max_local_bsz)
                    sp = float(fn.optimize(nodes, r, app.max_batch_size, rng)[0]) / float(
                        fn.optimize(1, self._fair, app.max_batch_size, rng)[0])
            sp *= cl.n_machines / cl.n_gpus
            if (tuple(sorted(g)) != (tuple(sorted(run.gpus)) if run is not None else ())):
                sp *= self._factor.get(job.id, 1.0)
            xs.append(sp)
        return float(-np.mean(power_cost(np.array(xs), self.p)))   # increasing in the power mean

    def _choose(self, free, dist, machine, n_nodes, k) -> list[tuple[int, int]]:
        """(node, GPUs) to give a job of ``k`` GPUs: best fit on one node, else the nodes with the
        most free GPUs hosting no other distributed job (module docstring)."""
        nfree = np.bincount(machine[free], minlength=n_nodes)
        fits = np.flatnonzero(nfree >= k)
        if len(fits):
            return [(int(fits[np.argmin(nfree[fits])]), k)]   # best fit on one node (first on ties)
        ok = nfree > 0
        if self.avoid_interference:
            ok &= ~dist
        cand = np.flatnonzero(ok)
        cand = cand[np.argsort(-nfree[cand], kind="stable")]
        take, left = [], k
        for m in cand:
            if left == 0:
                break
            c = int(min(left, nfree[m]))
            take.append((int(m), c))
            left -= c
        # fewer GPUs than counted: the most one node holds, if that is more (a job on one
        # node may share it with a distributed one)
        best = int(np.argmax(nfree))
        if nfree[best] > 0 and nfree[best] >= sum(c for _, c in take):
            take = [(best, int(nfree[best]))]
        return take

    @staticmethod
    def _take(free, machine, take) -> list[int]:
        gpus = []
        for m, c in take:
            ids = np.flatnonzero(free & (machine == m))[:c]
            free[ids] = False
            gpus.extend(int(x) for x in ids)
        return gpus

    def _short(self, job, k: int, take: list) -> list:
        """``take`` (node, GPUs) pairs, or none for a fixed-size job they give fewer than its ``k``."""
        if job.model in self.fixed_models and sum(c for _, c in take) < k:
            return []
        return take

    def _repack(self, view: SimView, jobs, counts, machine, n_nodes):
        """Every job placed afresh, biggest first, on an empty cluster; a job whose count is
        unchanged keeps its GPUs when they are still free (no restart). (decisions, layout)."""
        free = np.ones(len(machine), dtype=bool)
        dist = np.zeros(n_nodes, dtype=bool)
        alloc: dict[str, tuple] = {}
        order = sorted((jk for jk in zip(jobs, counts, strict=True) if jk[1] > 0), key=lambda jk: -jk[1])
        for job, k in order:
            run = view.running.get(job.id)
            if run is not None and len(run.gpus) == k and free[list(run.gpus)].all():
                ms = np.unique(machine[list(run.gpus)])
                if len(ms) == 1 or not (self.avoid_interference and dist[ms].any()):
                    free[list(run.gpus)] = False
                    if len(ms) > 1:
                        dist[ms] = True
                    alloc[job.id] = tuple(run.gpus)
                    continue
            take = self._short(job, k, self._choose(free, dist, machine, n_nodes, k))
            if not take:
                continue
            if len(take) > 1:
                dist[[m for m, _ in take]] = True
            alloc[job.id] = tuple(self._take(free, machine, take))
        pre, starts = [], []
        for job in jobs:
            run, g = view.running.get(job.id), alloc.get(job.id, ())
            if run is not None and tuple(sorted(run.gpus)) == tuple(sorted(g)):
                continue
            if run is not None:
                pre.append(Preempt(job.id))
            if g:
                starts.append(Start(job.id, g))
        return pre + starts, alloc

    def _place(self, view: SimView, jobs, counts, machine, n_nodes):
        """Jobs whose count is unchanged keep their GPUs, the others are placed around them
        (module docstring). (decisions, layout: job id -> GPUs)."""
        free = np.array(view.free, dtype=bool)
        dist = np.zeros(n_nodes, dtype=bool)    # a kept distributed job uses the node
        out: list = []
        alloc: dict[str, tuple] = {}
        todo = []
        for job, k in zip(jobs, counts, strict=True):
            run = view.running.get(job.id)
            if run is not None and len(run.gpus) == k:
                ms = np.unique(machine[list(run.gpus)])
                if len(ms) > 1:
                    dist[ms] = True
                alloc[job.id] = tuple(run.gpus)
                continue
            if run is not None and k < len(run.gpus):
                out.append(Preempt(job.id))
                free[list(run.gpus)] = True
                run = None
            if run is not None:
                ms = np.unique(machine[list(run.gpus)])
                if len(ms) > 1:
                    dist[ms] = True             # while it may keep them (conservative)
            if k > 0:
                todo.append((job, k, run))   # run: a growing job keeps its GPUs until it is placed
        todo.sort(key=lambda jk: -jk[1])     # big jobs first; stable: the round's job order
        for job, k, run in todo:
            if run is not None:
                free[list(run.gpus)] = True
            take = self._short(job, k, self._choose(free, dist, machine, n_nodes, k))
            if run is not None and sum(c for _, c in take) <= len(run.gpus):
                free[list(run.gpus)] = False     # it would not grow: it keeps its GPUs, no restart
                alloc[job.id] = tuple(run.gpus)
                continue
            if not take:
                continue
            if len(take) > 1:
                dist[[m for m, _ in take]] = True
            if run is not None:
                out.append(Preempt(job.id))
            gpus = self._take(free, machine, take)
            alloc[job.id] = tuple(gpus)
            out.append(Start(job.id, tuple(gpus)))
        return out, alloc
