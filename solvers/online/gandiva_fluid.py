"""Gandiva as OSDI'18 describes it: every job admitted, time slicing as a fluid share.

Xiao et al., "Gandiva: Introspective Cluster Scheduling for Deep Learning", OSDI'18. Where
:mod:`placement.solvers.online.gandiva` queues jobs that fit no free GPUs (FIFO with greedy
backfill, slicing only jobs of one size on one GPU set, one event per quantum), this form follows
the paper's oversubscription (§3.1, §4 "reactive mode"):

Admission (every job, at once)
    A job starts when it arrives: on free GPUs of its type when enough are free (the placement
    rule below), otherwise it time-slices with the jobs on the least-held GPUs of one machine
    (a job that fits a machine) or one rack (one that fits a rack), the domain whose worst GPU
    is held by the fewest jobs (ties to the lowest-numbered): Gandiva slices jobs on a GPU set,
    with affinity, not across the cluster. (Slicing only with jobs of the same size, the other
    reading of Gandiva's affinity, was measured and not kept: batch, 8 racks, seeds 0-2, at
    sigma 2.5 / 3.0 with 60% of jobs at 16-64 GPUs it gave Tiresias's median over Gandiva's
    2.58x / 3.69x, against 3.08x / 4.49x for the rule above, and higher mean JCTs.) Gandiva "oversubscribes" GPUs with
    suspend-resume instead of queueing; jobs of every size share (suspend-resume across sizes).
Time slicing (fluid; the engine's ``time_sharing``, :mod:`placement.sim.engine`)
    Gandiva's quantum is about a minute and our jobs run for hours to weeks, so the round robin
    is its fluid limit: a GPU held by ``h`` jobs gives each ``1/h`` of its time, and a gang job
    progresses at ``1 / (most holders of its GPUs)`` of its placement's rate. No event per
    quantum: the run's cost grows with the jobs, not with 1 / quantum. Suspend-resume is free
    (Gandiva moves GPU state to host memory in ~100 ms). ``max_share`` bounds the holders per GPU
    (default None: unbounded; a job that finds every GPU at the bound waits, in submit order).
Migration when resources free (Gandiva §3.2-3.3: jobs move to freed GPUs)
    Whenever GPUs are free after the arrivals are placed, a time-shared job moves to free GPUs
    of its type that hold it whole: the job with the most co-holders first (then submit order),
    as long as free GPUs are left. A move is a preempt and a start in the same instant; with the
    simulator's checkpoint rule it loses the work since its last checkpoint, otherwise nothing.
Placement (network-agnostic, as the Dally paper characterises Gandiva, §5.1.3; ``placement``)
    ``"lowest"`` (default): the lowest-numbered free GPUs; ``"random"``: drawn uniformly among
    the free ones (seeded by the run's seed).
Packing (two jobs on one GPU at once, when each leaves it underused) is not modelled: no
profile here says how much of a GPU a job leaves idle; grow-shrink is out of scope.

Statistics: starts on free and on shared GPUs, moves, the most holders seen on one GPU.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from placement.sim.placement import usable_mask
from placement.sim.policy import Policy, Preempt, Start


class GandivaFluid(Policy):
    """Gandiva as OSDI'18 describes it: every job admitted, fluid time slicing, moves to freed GPUs.

    See the module docstring.

    Parameters
    ----------
    placement : {"lowest", "random"}
        Which free GPUs a start or a move takes.
    max_share : int or None
        Jobs holding one GPU at most (None: unbounded).
    migrate : bool
        Move time-shared jobs to GPUs that free up.
    """

    name = "gandiva-osdi18"
    time_sharing: bool | int = True

    def __init__(self, placement: Literal["lowest", "random"] = "lowest", max_share: int | None = None,
                 migrate: bool = True):
        from placement.errors import InstanceError
        from placement.validate import check_bool

        if placement not in ("lowest", "random"):
            raise InstanceError("placement", f"must be 'lowest' or 'random', got {placement!r}")
        if max_share is not None and (isinstance(max_share, bool) or not isinstance(max_share, int)
                                      or max_share < 2):
            raise InstanceError("max_share", f"must be an integer >= 2 or None, got {max_share!r}")
        self.placement = placement
        self.time_sharing = True if max_share is None else max_share
        self.cap = np.inf if max_share is None else max_share
        self.migrate = check_bool("migrate", migrate)
        self._rng = np.random.default_rng(0)
        self._gpus: dict[str, np.ndarray] = {}     # our running jobs' GPUs
        self._stats = {"start_free": 0, "start_shared": 0, "moves": 0, "peak_holders": 1}

    def setup(self, view, seed: int) -> None:
        self._rng = np.random.default_rng([seed, 18])

    def _pick(self, free_ids: np.ndarray, n: int) -> np.ndarray:
        if self.placement == "random":
            return np.sort(self._rng.choice(free_ids, size=n, replace=False))
        return free_ids[:n]

    def schedule(self, view, events) -> list:
        holders = np.array(view.holders, dtype=np.int64)
        for jid in [j for j in self._gpus if j not in view.running]:
            del self._gpus[jid]          # finished
        out: list = []
        for job in view.pending:
            usable = usable_mask(view.cluster, holders == 0, job.gpu_type)
            if int(usable.sum()) >= job.gpus:
                gpus = self._pick(np.flatnonzero(usable), job.gpus)
                self._stats["start_free"] += 1
            else:
                ok = np.flatnonzero(usable_mask(view.cluster, holders < self.cap, job.gpu_type))
                if len(ok) < job.gpus:
                    continue             # every GPU of its type at max_share: it waits
                gpus = self._shared_block(view.cluster, holders, ok, job.gpus)
                self._stats["start_shared"] += 1
            holders[gpus] += 1
            self._gpus[job.id] = gpus
            out.append(Start(job.id, tuple(int(g) for g in gpus)))
        if self.migrate and (holders == 0).any():
            out += self._moves(view, holders)
        self._stats["peak_holders"] = max(self._stats["peak_holders"], int(holders.max(initial=1)))
        return out

    def _shared_block(self, cluster, holders: np.ndarray, ok: np.ndarray, n: int) -> np.ndarray:
        """The GPUs a job time-slices on: inside one machine (``n`` up to a machine's GPUs) or one
        rack (up to a rack's), else anywhere, the ``n`` least-held GPUs of the domain whose
        ``n``-th least-held GPU has the fewest holders (ties: the lowest-numbered domain); the
        Gandiva paper's affinity (jobs slice on a GPU set, not across the cluster)."""
        for domain in (cluster.machine, cluster.rack):
            ids = [ok[domain[ok] == d] for d in np.unique(domain[ok])]
            ids = [g for g in ids if len(g) >= n]
            if ids:
                break
        else:
            ids = [ok]
        best = None
        for g in ids:
            take = g[np.argsort(holders[g], kind="stable")[:n]]
            key = int(holders[take].max())
            if best is None or key < best[0]:
                best = (key, take)
        return np.sort(best[1])

    def _moves(self, view, holders: np.ndarray) -> list:
        """Time-shared jobs to freed GPUs: the most co-holders first, then submit order."""
        shared = [(-int(holders[g].max()), view.job(jid).submit, jid) for jid, g in self._gpus.items()
                  if holders[g].max() > 1]
        out: list = []
        for _neg, _sub, jid in sorted(shared):
            job = view.job(jid)
            usable = usable_mask(view.cluster, holders == 0, job.gpu_type)
            if int(usable.sum()) < job.gpus:
                continue
            old = self._gpus[jid]
            if holders[old].max() <= 1:   # an earlier move this round left it alone on its GPUs
                continue
            new = self._pick(np.flatnonzero(usable), job.gpus)
            holders[old] -= 1
            holders[new] += 1
            self._gpus[jid] = new
            self._stats["moves"] += 1
            out += [Preempt(jid), Start(jid, tuple(int(g) for g in new))]
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self._stats)
