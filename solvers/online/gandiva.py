"""Gandiva baseline: network-agnostic greedy placement with migration to better consolidation.

Xiao et al., "Gandiva: Introspective Cluster Scheduling for Deep Learning",
OSDI'18, as the Dally paper characterises it (§5.1.3): "being network-agnostic
... it addresses this limitation by migrating jobs to more favorable GPU
consolidation whenever resources become available". Rule by rule:

Order and admission (Gandiva §3-4; our choice: FIFO with greedy backfill)
    Waiting jobs in submit order; every job that fits the free GPUs starts
    (greedy, no head-of-line blocking). Gandiva's time-slicing and
    grow-shrink are out of scope (Dally compares placements, not packing).
Placement (network-agnostic)
    The lowest-numbered free GPUs, whatever machines or racks they are on.
Migration (Gandiva §3.3, "migration to improve locality")
    Whenever GPUs were released this round (a completion, a preemption),
    running jobs placed at a tier worse than their best possible one are
    examined in submit order; if a strictly better tier is free now, the job
    is preempted and restarted there after ``migration_cost`` seconds (the
    target GPUs are held meanwhile). Migrations go before new starts, so
    freed GPUs first repair consolidation. The simulator's checkpoint rule
    adds its own loss (work since the last checkpoint). ``migration_cost``
    (the checkpoint, the move and the restart) defaults to 60 s, our choice
    of the order of Gandiva's reported checkpoint-restore times; a job
    migrates at most once per ``migration_interval`` seconds (default 0: no
    limit). ``placement reproduce dally`` reports the sensitivity to both.

Statistics: starts per tier, migrations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from placement.options import NonNegFloat
from placement.sim.placement import MACHINE, RACK, Shape, choose_gpus, usable_mask
from placement.sim.policy import Policy, Preempt, Start, Timer
from placement.validate import check_bool, check_number

__all__ = ["Gandiva"]

_RANK = {"machine": 0, "rack": 1, "network": 2}


class Gandiva(Policy):
    """Gandiva: greedy placement with migration towards consolidation.

    See the module docstring.

    Parameters
    ----------
    migration_cost : float
        Seconds a migrating job stays stopped before restarting on its new GPUs.
    migrate : bool
        Migration on (default) or off (pure greedy FIFO).
    migration_interval : float
        Seconds after a job's migration before it may migrate again (0: no limit).
    """

    name = "gandiva"

    def __init__(self, migration_cost: NonNegFloat = 60.0, migrate: bool = True,
                 migration_interval: NonNegFloat = 0.0):
        self.cost = check_number("migration_cost", migration_cost, 0.0)
        self.interval = check_number("migration_interval", migration_interval, 0.0)
        self._last_migration: dict[str, float] = {}
        self.migrate = check_bool("migrate", migrate)
        self._shape: Shape | None = None
        self._held: dict[str, tuple[np.ndarray, float]] = {}  # migrating job -> (target GPUs, restart time)
        self._tier: dict[str, str] = {}
        self._prev_free = -1
        self._stats = {"start_machine": 0, "start_rack": 0, "start_network": 0, "migrations": 0}

    def schedule(self, view, events) -> list:
        if self._shape is None:
            self._shape = Shape.from_arrays(view.cluster.machine, view.cluster.rack)
        sh = self._shape
        now = float(view.now)
        free = np.array(view.free, dtype=bool)
        decisions: list = []
        started: set[str] = set()
        # restarts of migrated jobs whose cost has elapsed
        for jid, (gpus, at) in sorted(self._held.items(), key=lambda kv: kv[1][1]):
            if at <= now + 1e-9 and jid not in view.running:
                del self._held[jid]
                started.add(jid)
                decisions.append(Start(jid, tuple(int(g) for g in gpus)))
                self._tier[jid] = sh.tier_of(gpus)
                free[gpus] = False
        for gpus, _at in self._held.values():
            free[gpus] = False
        n_free = int(free.sum())
        if self.migrate and n_free > 0 and n_free != self._prev_free:
            for jid, r in sorted(view.running.items(), key=lambda kv: (view.job(kv[0]).submit, kv[0])):
                job = view.job(jid)
                tier = self._tier.get(jid) or sh.tier_of(r.gpus)
                best = sh.best_tier(job.gpus)
                if _RANK[tier] <= _RANK[best]:
                    continue
                if self.interval > 0 and now - self._last_migration.get(jid, -np.inf) < self.interval:
                    continue
                for better in (MACHINE, RACK):
                    if _RANK[better] >= _RANK[tier]:
                        break
                    target = choose_gpus(usable_mask(view.cluster, free, job.gpu_type), sh.machine, sh.rack,
                                         job.gpus, better)
                    if target is not None:
                        free[target] = False
                        self._held[jid] = (target, now + self.cost)
                        self._last_migration[jid] = now
                        self._stats["migrations"] += 1
                        decisions += [Preempt(jid), Timer(now + self.cost, ("migrate", jid))]
                        break
        for job in view.pending:
            if job.id in self._held or job.id in started:
                continue
            usable = usable_mask(view.cluster, free, job.gpu_type)  # its GPU type only
            if job.gpus > int(usable.sum()):
                continue
            gpus = np.flatnonzero(usable)[:job.gpus]
            free[gpus] = False
            tier = sh.tier_of(gpus)
            self._tier[job.id] = tier
            self._stats[f"start_{tier}"] += 1
            decisions.append(Start(job.id, tuple(int(g) for g in gpus)))
        self._prev_free = int(free.sum())
        return decisions

    def stats(self) -> dict[str, Any]:
        return dict(self._stats)
