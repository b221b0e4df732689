"""Gandiva baseline: network-agnostic greedy placement with migration to better consolidation.

Xiao et al., "Gandiva: Introspective Cluster Scheduling for Deep Learning",
OSDI'18, as the Dally paper characterises it (§5.1.3): "being network-agnostic
... it addresses this limitation by migrating jobs to more favorable GPU
consolidation whenever resources become available". Rule by rule:

Order and admission (Gandiva §4, reactive mode; our choice: FIFO with greedy backfill)
    Waiting jobs in submit order; every job that fits the free GPUs starts
    (greedy, no head-of-line blocking) whenever the scheduler is called (an
    arrival, a completion: Gandiva's reactive events).
Time slicing with suspend-resume (``time_slicing``; Gandiva §3.1 and §4, "oversubscription")
    When no free GPUs hold a waiting job, Gandiva suspends and resumes jobs on
    the same GPUs in round robin instead of queueing them. Ours: every started
    job owns a *slice group* (its GPU set); a waiting job that fits no free GPUs
    joins the group, in submit order, of a running job with the same GPU count
    (and GPU type) holding fewer than ``max_share`` jobs (the fewest first; the
    Gandiva paper time-slices jobs of the same size on one GPU set, its node
    affinity). Every ``time_slice`` seconds (one clock for the cluster) each
    group with several jobs suspends its running job and resumes the next one on
    the same GPUs; a finishing job hands its GPUs to the next member at once.
    Suspend-resume keeps all progress (Gandiva moves GPU state to host memory,
    ~100 ms; ours is free). A suspended member that fits free GPUs leaves its
    group and starts there (the greedy pass sees it like any waiting job).
    Gandiva's quantum is about a minute; ``time_slice`` defaults to 1 h, as
    our jobs run for hours to weeks (a quantum well below the job lengths gives
    the same shares; the simulation's cost grows as 1 / quantum).
    ``max_share`` (default 2, ours) is not published: the Dally reproduction fitted
    it to Gandiva's own JCTs (Dally Tables 2-3; placement.app.reproduce.dally_calibrate),
    where deeper sharing raised Gandiva's batch median and the fit chose 1 (no
    oversubscription); on the workload fitted since, unbounded sharing at a 1 h quantum
    raises the batch median too (580 h to 1,476 h, seed 0, 8 racks).
    Packing (two jobs running *at once* on one GPU) is not modelled: the
    simulator gives a GPU to one job at a time. Grow-shrink is out of scope.
    The Tiresias authors' time-slicing simulator (``gandiva_sim_jobs``: node
    sets per job size, no locality migration) is a different reading.
Placement (network-agnostic; ``placement``)
    ``"lowest"`` (default): the lowest-numbered free GPUs, whatever machines or racks they
    are on; numbering follows the tree, so this is consolidated by accident when the free GPUs
    are contiguous. ``"random"``: GPUs drawn uniformly among the free ones (seeded by the run's
    seed), the reading of "network-agnostic" the reproduction uses (Dally §5.1.3): where a job
    lands owes nothing to the tree.
Migration, three forms (``migration``)
    ``"introspective"`` (default; Gandiva §4, introspective mode: migration
        to improve locality, decided from profiled throughput). The scheduler
        introspects every ``introspection_interval`` seconds (default 60 s, the
        time-slicing quantum Gandiva uses; the paper names no separate
        migration period), after the reactive starts, so GPUs a waiting job can
        use go to it first. At each tick, a running job placed at a tier worse
        than its best is a candidate if a strictly better tier is free; its
        gain is profiled: the time its remaining work would save there,
        ``remaining x (1/rate_now - 1/rate_there)`` (rate_now its measured
        progress rate, rate_there its model's rate at that tier, the profile
        Gandiva measures by mini-batch time). It migrates when the gain exceeds
        the migration's cost, largest gain first. The cost grows with the
        checkpoint: ``migration_cost`` (restart, default 60 s) + 2 x checkpoint
        size / ``checkpoint_gbps`` (save and restore; default 1 GB/s), with the
        checkpoint = parameters x 12 bytes (fp32 weights and two optimizer
        moments) from :data:`PARAMETERS` (public model sizes; the bandwidth and
        the 12 bytes are ours). Gandiva reports migration times that grow with
        model size; its figure's values are not used here.
    ``"eager"`` (the Dally paper's reading, §5.1.3: Gandiva migrates "to more
        favorable GPU consolidation whenever resources become available"; the
        reproduction's default): whenever the free-GPU count changed this round,
        every running job at a worse tier is moved at once to a strictly better
        free tier, before new starts, at ``migration_cost`` (default 60 s), no
        gain test. With time slicing, only a job alone in its group migrates
        (its group moves with it).
    ``"none"``: no migration (pure greedy FIFO; also ``migrate=False``); a
        bound on what migration adds.
    In every form the migrating job stops for its cost with its target GPUs
    held, and a job migrates at most once per ``migration_interval`` seconds
    (default 0: no limit). The simulator's checkpoint rule adds its own loss
    (work since the last checkpoint).

Statistics: starts per tier, migrations, introspection ticks, slice joins and switches.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from placement.options import NonNegFloat, PosFloat, PosInt
from placement.sim.placement import MACHINE, RACK, Shape, choose_gpus, usable_mask
from placement.sim.policy import Policy, Preempt, Start, Timer
from placement.validate import check_bool, check_number

__all__ = ["Gandiva", "PARAMETERS", "checkpoint_gb"]

_RANK = {"machine": 0, "rack": 1, "network": 2}
# Parameters per Table 1 model (public model sizes: torchvision's VGG11, AlexNet,
# MobileNetV3-Large, ResNet-18, ResNet-50; BERT-large 340M); other models count as ResNet-50.
PARAMETERS = {"VGG11": 132.9e6, "AlexNet": 61.1e6, "MobileNetV3": 5.5e6, "ResNet18": 11.7e6,
              "ResNet50": 25.6e6, "BERT-large": 340e6}
_BYTES_PER_PARAMETER = 12.0   # fp32 weights + two optimizer moments (ours)


def checkpoint_gb(model: str | None) -> float:
    """A job's checkpoint size in GB: its model's parameters x 12 bytes (module docstring)."""
    return PARAMETERS.get(model or "", PARAMETERS["ResNet50"]) * _BYTES_PER_PARAMETER / 1e9


class Gandiva(Policy):
    """Gandiva: greedy placement with migration towards consolidation.

    See the module docstring.

    Parameters
    ----------
    migration : {"introspective", "eager", "none"}
        When a job migrates (module docstring).
    migration_cost : float
        Seconds a migrating job stays stopped (eager), or the restart part of it
        (introspective, plus the checkpoint's save and restore).
    migrate : bool
        False is ``migration="none"``.
    migration_interval : float
        Seconds after a job's migration before it may migrate again (0: no limit).
    introspection_interval : float
        Seconds between introspections (introspective).
    checkpoint_gbps : float
        GB/s at which a checkpoint is saved and restored (introspective).
    time_slicing : bool
        Suspend-resume time slicing of same-size jobs on one GPU set (module docstring).
    time_slice : float
        Seconds between switches of a slice group (the quantum).
    max_share : int
        Jobs per slice group at most (the oversubscription of a GPU set).
    placement : {"lowest", "random"}
        Which free GPUs a start takes (module docstring).
    """

    name = "gandiva"

    def __init__(self, migration: Literal["introspective", "eager", "none"] = "introspective",
                 migration_cost: NonNegFloat = 60.0, migrate: bool = True,
                 migration_interval: NonNegFloat = 0.0, introspection_interval: PosFloat = 60.0,
                 checkpoint_gbps: PosFloat = 1.0, time_slicing: bool = False, time_slice: PosFloat = 3600.0,
                 max_share: PosInt = 2, placement: Literal["lowest", "random"] = "lowest"):
        from placement.errors import InstanceError

        if migration not in ("introspective", "eager", "none"):
            raise InstanceError("migration", f"must be 'introspective', 'eager' or 'none', got {migration!r}")
        self.cost = check_number("migration_cost", migration_cost, 0.0)
        self.interval = check_number("migration_interval", migration_interval, 0.0)
        self.tick = check_number("introspection_interval", introspection_interval, 1e-9)
        self.gbps = check_number("checkpoint_gbps", checkpoint_gbps, 1e-9)
        self.migrate = check_bool("migrate", migrate)
        self.mode = migration if self.migrate else "none"
        self.slicing = check_bool("time_slicing", time_slicing)
        self.quantum = check_number("time_slice", time_slice, 1e-9)
        if isinstance(max_share, bool) or not isinstance(max_share, int) or max_share < 1:
            raise InstanceError("max_share", f"must be a positive integer, got {max_share!r}")
        self.max_share = max_share
        if placement not in ("lowest", "random"):
            raise InstanceError("placement", f"must be 'lowest' or 'random', got {placement!r}")
        self.placement = placement
        self._rng = np.random.default_rng(0)
        self._groups: dict[int, list[str]] = {}   # slice group -> members, the running one first
        self._group_of: dict[str, int] = {}
        self._group_gpus: dict[int, np.ndarray] = {}
        self._next_group = 0
        self._slice_at: float | None = None
        self._last_migration: dict[str, float] = {}
        self._shape: Shape | None = None
        self._held: dict[str, tuple[np.ndarray, float]] = {}  # migrating job -> (target GPUs, restart time)
        self._tier: dict[str, str] = {}
        self._prev_free = -1
        self._armed: float | None = None     # the next introspection (a Timer is set for it)
        self._seen: tuple | None = None      # (free GPUs, running jobs) at the last introspection
        self._stats = {"start_machine": 0, "start_rack": 0, "start_network": 0, "migrations": 0,
                       "introspections": 0, "migrations_declined_by_gain": 0,
                       "slice_joins": 0, "slice_switches": 0, "peak_group": 1}

    def setup(self, view, seed: int) -> None:
        self._rng = np.random.default_rng([seed, 18])

    def migration_seconds(self, job) -> float:
        """What one migration of ``job`` costs (module docstring): eager, ``migration_cost``;
        introspective, plus the checkpoint saved and restored at ``checkpoint_gbps``."""
        if self.mode == "eager":
            return self.cost
        return self.cost + 2.0 * checkpoint_gb(job.model) / self.gbps

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
        if self.slicing:
            decisions += self._rotate(view, free, now, started, events)
        n_free = int(free.sum())
        if self.mode == "eager" and n_free > 0 and n_free != self._prev_free:
            decisions += self._migrate(view, free, now, gain_test=False)
        fresh: list[str] = []
        waiting = []
        for job in view.pending:
            if job.id in self._held or job.id in started:
                continue
            usable = usable_mask(view.cluster, free, job.gpu_type)  # its GPU type only
            if job.gpus > int(usable.sum()):
                if job.id not in self._group_of:
                    waiting.append(job)
                continue
            gpus = np.flatnonzero(usable)
            gpus = (np.sort(self._rng.choice(gpus, size=job.gpus, replace=False)) if self.placement == "random"
                    else gpus[:job.gpus])
            free[gpus] = False
            tier = sh.tier_of(gpus)
            self._tier[job.id] = tier
            self._stats[f"start_{tier}"] += 1
            fresh.append(job.id)
            if self.slicing:
                self._leave(job.id)
                gid = self._next_group = self._next_group + 1
                self._groups[gid], self._group_of[job.id], self._group_gpus[gid] = [job.id], gid, gpus
            decisions.append(Start(job.id, tuple(int(g) for g in gpus)))
        if self.slicing:
            decisions += self._join(view, waiting, now)
        if self.mode == "introspective":
            decisions += self._introspect(view, free, now, fresh + sorted(started))
        self._prev_free = int(free.sum())
        return decisions

    # ------------------------------------------------------------------ time slicing
    def _leave(self, jid: str) -> None:
        """Take ``jid`` out of its slice group (it finished, or starts on GPUs of its own)."""
        gid = self._group_of.pop(jid, None)
        if gid is None:
            return
        members = self._groups[gid]
        members.remove(jid)
        if not members:
            del self._groups[gid], self._group_gpus[gid]

    def _rotate(self, view, free: np.ndarray, now: float, started: set[str], events) -> list:
        """Hand each slice group's GPUs to its next member: when its running job finished (at
        once) and, at a tick of the quantum clock, suspend the running member and resume the
        next. Members that ended are dropped first."""
        out: list = []
        pend = {j.id for j in view.pending}
        for jid in [j for j in self._group_of if j not in view.running and j not in pend]:
            self._leave(jid)   # finished
        tick = self._slice_at is not None and now + 1e-9 >= self._slice_at
        if tick:
            self._slice_at = None
        for gid in sorted(self._groups):
            members = self._groups[gid]
            gpus = self._group_gpus[gid]
            head = members[0]
            if head in self._held:
                continue
            if head in view.running:
                if not (tick and len(members) > 1):
                    continue
                out.append(Preempt(head))
                members.append(members.pop(0))
                self._stats["slice_switches"] += 1
                free[gpus] = True
            elif not free[gpus].all():
                continue   # a migration moved the group's head off these GPUs; wait
            nxt = members[0]
            if nxt in view.running or nxt in started:
                continue
            out.append(Start(nxt, tuple(int(g) for g in gpus)))
            started.add(nxt)
            free[gpus] = False
            self._tier[nxt] = self._shape.tier_of(gpus)
        return out + self._arm_slice(now)

    def _join(self, view, waiting: list, now: float) -> list:
        """Waiting jobs (submit order) that fit no free GPUs join a running same-size slice group
        with room (the fewest members first, then the oldest group)."""
        for job in waiting:
            best = None
            for gid, members in self._groups.items():
                if (len(members) >= self.max_share or len(self._group_gpus[gid]) != job.gpus
                        or view.job(members[0]).gpu_type != job.gpu_type or members[0] in self._held):
                    continue
                key = (len(members), gid)
                if best is None or key < best[0]:
                    best = (key, gid)
            if best is None:
                continue
            gid = best[1]
            self._groups[gid].append(job.id)
            self._group_of[job.id] = gid
            self._stats["slice_joins"] += 1
            self._stats["peak_group"] = max(self._stats["peak_group"], len(self._groups[gid]))
        return self._arm_slice(now)

    def _arm_slice(self, now: float) -> list:
        """Set the quantum clock's next tick (on the grid of ``time_slice``) while a group shares."""
        if self._slice_at is not None or not any(len(m) > 1 for m in self._groups.values()):
            return []
        self._slice_at = float((np.floor(now / self.quantum + 1e-9) + 1) * self.quantum)
        return [Timer(self._slice_at, "gandiva-slice")]

    def _introspect(self, view, free: np.ndarray, now: float, fresh: list[str]) -> list:
        """Introspective mode's clock: introspect when the armed tick is due; arm the next tick
        on the grid of ``introspection_interval`` when a job (running, or ``fresh``: started this
        round) sits at a worse tier than its best, GPUs are free, and the state changed since
        the last introspection (between events nothing changes, so a tick that would find the
        same state is skipped)."""
        out: list = []
        if self._armed is not None and now + 1e-9 >= self._armed:
            self._armed = None
            self._stats["introspections"] += 1
            out += self._migrate(view, free, now, gain_test=True)
            self._seen = (int(free.sum()), frozenset(view.running), len(self._held))
        state = (int(free.sum()), frozenset(view.running), len(self._held))
        if self._armed is None and int(free.sum()) > 0 and (state != self._seen or fresh or out):
            jobs = [*view.running, *fresh]
            if any(_RANK[self._tier.get(j) or self._shape.tier_of(view.running[j].gpus)]
                   > _RANK[self._shape.best_tier(view.job(j).gpus)] for j in jobs):
                self._armed = float((np.floor(now / self.tick + 1e-9) + 1) * self.tick)
                out.append(Timer(self._armed, "gandiva-introspect"))
        return out

    def _worse(self, view, jid: str, r) -> bool:
        tier = self._tier.get(jid) or self._shape.tier_of(r.gpus)
        return _RANK[tier] > _RANK[self._shape.best_tier(view.job(jid).gpus)]

    def _migrate(self, view, free: np.ndarray, now: float, gain_test: bool) -> list:
        """Move running jobs at a worse tier than their best to a strictly better free tier: in
        submit order (eager), or largest profiled gain first when it exceeds the cost
        (introspective). ``free`` is updated with the held targets."""
        sh = self._shape
        cands = []
        for jid, r in sorted(view.running.items(), key=lambda kv: (view.job(kv[0]).submit, kv[0])):
            if not self._worse(view, jid, r):
                continue
            if self.slicing and len(self._groups.get(self._group_of.get(jid, -1), ())) > 1:
                continue   # a shared GPU set stays; only a job alone in its group moves
            if self.interval > 0 and now - self._last_migration.get(jid, -np.inf) < self.interval:
                continue
            job = view.job(jid)
            tier = self._tier.get(jid) or sh.tier_of(r.gpus)
            gain = 0.0
            if gain_test:
                best_rate = max(view.perf.rate(job, t) for t in (MACHINE, RACK) if _RANK[t] < _RANK[tier])
                gain = r.remaining * (1.0 / max(r.rate, 1e-12) - 1.0 / max(best_rate, 1e-12))
            cands.append((-gain if gain_test else 0.0, jid, job, tier, r))
        cands.sort(key=lambda c: c[0])   # stable: submit order among equals
        out: list = []
        for _neg_gain, jid, job, tier, r in cands:
            cost = self.migration_seconds(job)
            for better in (MACHINE, RACK):
                if _RANK[better] >= _RANK[tier]:
                    break
                target = choose_gpus(usable_mask(view.cluster, free, job.gpu_type), sh.machine, sh.rack,
                                     job.gpus, better)
                if target is None:
                    continue
                if gain_test:
                    gain = r.remaining * (1.0 / max(r.rate, 1e-12) - 1.0 / max(view.rate(job, target), 1e-12))
                    if gain <= cost:
                        self._stats["migrations_declined_by_gain"] += 1
                        break
                free[target] = False
                self._held[jid] = (target, now + cost)
                if self.slicing and jid in self._group_of:
                    self._group_gpus[self._group_of[jid]] = target
                self._last_migration[jid] = now
                self._stats["migrations"] += 1
                out += [Preempt(jid), Timer(now + cost, ("migrate", jid))]
                break
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self._stats)
