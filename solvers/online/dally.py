"""Dally: delay scheduling over network tiers with an auto-tuner and network-sensitive priority.

Sharma, Bhasi, Singh, Kesidis, Kandemir and Das, "GPU Cluster Scheduling for
Network-Sensitive Deep Learning", arXiv:2401.16492 (2024). Registered twice in the entry-point group
``placement.policies`` (``pyproject.toml``): ``dally`` (auto-tuned timers) and
``dally-manual`` (fixed timers, §5.1.3's Dally-manual baseline).

Each scheduling round (the engine calls :meth:`Dally.schedule` after every
batch of simultaneous events) does, in this order:

1. **Offers in increasing Nw_sens** (§4.3.1). Waiting jobs are offered the
   free GPUs in increasing :math:`Nw_{sens} = W_{compl}/T_{norm}`
   (:func:`placement.solvers.online.delay.nw_sens`; ties by submit time, then id). Our
   choices: a job that never ran has :math:`Nw_{sens} = 1` (no slowdown
   observed); iterations are ideal time / the model's time per iteration, so
   :math:`W_{compl}` counts work kept after preemptions (lost work lowers
   :math:`Nw_{sens}`, as the paper's "slowdowns it has experienced").
   A job that rejects does not block the next one (delay scheduling, Zaharia
   et al. [50]).
2. **Algorithm 1 on each offer** (§4.3.2, :func:`placement.solvers.online.delay.on_offer`):
   accept on one machine, else reject until :math:`T_{Mc}`, accept on one
   rack, else reject until :math:`T_{Rk}`, then anywhere; timers are 0 where
   the job cannot fit the tier (:func:`placement.solvers.online.delay.fit_timers`). Accepted
   GPUs are chosen best-fit within the tier (our rule,
   :func:`placement.sim.placement.choose_gpus`). A reject by a timer sets an engine
   timer for the moment it elapses, so the job is re-offered then.
3. **Timers** (§4.3.3, Algorithm 2): ``auto_tune=True`` asks the
   :class:`placement.solvers.online.delay.AutoTuner` (per (tier, GPU demand) wait lists over a
   history window, mean + 2 sample standard deviations; empty lists fall back
   to ``initial`` = 12 h / 24 h); ``auto_tune=False`` uses ``timers``
   (default 12 h machine, 12 h more rack: :data:`placement.solvers.online.delay.MANUAL_TIMERS`).
   Starvation (``clock``): ``"submit"`` counts from submission or the last
   preemption; ``"lease"`` (Themis's lease reading of
   :math:`T_{last\\_assignment}`, :mod:`placement.solvers.online.delay`) counts from the first
   offer since the last assignment that held enough free GPUs, and re-offers the
   free GPUs every ``lease`` seconds while such an offer was declined (Themis
   re-auctions GPUs every lease; its length here is ours, 1 h).
4. **Network-sensitive preemption** (§4.3.1: priority by :math:`Nw_{sens}`
   so that jobs "suffering from sub-optimal placements or network sensitivity"
   get better-consolidated placements, §5.2.3). The paper gives the metric,
   not the mechanics; our rule: a running job placed at a tier worse than its
   best placeable tier, whose :math:`Nw_{sens}` is below ``preempt_below`` and
   that has run at least ``min_run`` since its start (no thrashing), is
   preempted and restarted at once on a strictly better tier when one is free
   after the offers (lowest :math:`Nw_{sens}` first; the simulator's
   checkpoint rule decides what work it keeps). We also tried letting such a
   job preempt less sensitive running jobs, but with immediate restarts no
   job with a run history ever waits, so that rule never fired on our traces
   and is left out.

Statistics (:meth:`Dally.stats`): offers made, accepts per tier, rejects by
timer (in all, and per timer: ``reject_timer_machine``, ``reject_timer_rack``), preemptions
per rule, the auto-tuner's timers over time.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from placement.options import Fraction, NonNegFloat, PosFloat
from placement.sim.placement import Shape, choose_gpus, usable_mask
from placement.sim.policy import Policy, Preempt, Start, Timer
from placement.validate import check_bool, check_number

from .delay import (
    HOUR,
    MANUAL_TIMERS,
    AutoTuner,
    TimerOption,
    Timers,
    as_timers,
    fit_timers,
    nw_sens,
    on_offer,
)

__all__ = ["Dally", "DallyManual", "ITERATION_TIME"]

_TIER_RANK = {"machine": 0, "rack": 1, "network": 2}

# Compute time per iteration (s, one GPU) per Table 1 model: SYNTHETIC values of our choosing (the
# paper's traces carry them; Philly does not). Iterations = ideal time / this. Nw_sens does not
# depend on them (I_compl / I_total and T_run / (t_iter I_total) share t_iter), so they only label.
ITERATION_TIME = {"VGG11": 0.12, "AlexNet": 0.05, "MobileNetV3": 0.08, "ResNet18": 0.06,
                  "ResNet50": 0.15, "BERT-large": 0.40}
_DEFAULT_ITERATION_TIME = 0.1


def iteration_time(job) -> float:
    """Seconds per iteration of the job's model (:data:`ITERATION_TIME`, synthetic)."""
    return ITERATION_TIME.get(job.model, _DEFAULT_ITERATION_TIME)


class Dally(Policy):
    """Dally: delay scheduling over network tiers with auto-tuned timers (Algorithms 1-2).

    See the module docstring for each rule's source and our choices.

    Parameters
    ----------
    auto_tune : bool
        Algorithm 2 timers (True) or fixed ``timers`` (False, Dally-manual).
    timers : Timers
        Fixed timers when ``auto_tune`` is False (12 h, 24 h cumulative).
    history : float
        The auto-tuner's HISTORY_TIME_LIMIT in seconds (default 48 h, our choice).
    window : {"age", "value"}
        How the history limit applies (:class:`placement.solvers.online.delay.AutoTuner`).
    initial : Timers
        Timers while a wait list is empty.
    preempt : bool
        Network-sensitive preemption (rule 4) on or off.
    preempt_below : float
        :math:`Nw_{sens}` under which a running job may be re-placed (0.5).
    min_run : float
        Seconds a job runs after a start before it may be preempted (1 h).
    perf : performance model, optional
        Used for per-model iteration times and tier rates (default: the simulator's).
    clock : {"submit", "lease"}
        What T_last_assignment is for a waiting job (module docstring, rule 3).
    lease : float
        Seconds between re-offers under ``clock="lease"``.
    """

    name = "dally"

    def __init__(self, auto_tune: bool = True, timers: TimerOption = MANUAL_TIMERS, history: PosFloat = 48 * HOUR,
                 window: Literal["age", "value"] = "age", initial: TimerOption = MANUAL_TIMERS, preempt: bool = True,
                 preempt_below: Fraction = 0.5, min_run: NonNegFloat = HOUR, perf: Any = None,
                 clock: Literal["submit", "lease"] = "submit", lease: PosFloat = HOUR):
        from placement.errors import InstanceError

        self.auto_tune = check_bool("auto_tune", auto_tune)
        self.fixed = as_timers("timers", timers)
        if window not in ("age", "value"):
            raise InstanceError("window", f"must be 'age' or 'value', got {window!r}")
        self.tuner = AutoTuner(history=check_number("history", history, 1e-9), initial=as_timers("initial", initial),
                               window=window)
        self.preempt_enabled = check_bool("preempt", preempt)
        self.preempt_below = check_number("preempt_below", preempt_below, 0.0, 1.0)
        self.min_run = check_number("min_run", min_run, 0.0)
        self.perf = perf
        if clock not in ("submit", "lease"):
            raise InstanceError("clock", f"must be 'submit' or 'lease', got {clock!r}")
        self.clock = clock
        self.lease = check_number("lease", lease, 1e-9)
        self._first_offer: dict[str, float] = {}   # lease clock: first usable offer since the last assignment
        self._lease_at: float | None = None
        self._shape: Shape | None = None
        self._run_time: dict[str, float] = {}     # finished attempts
        self._attempt: dict[str, tuple[float, str]] = {}  # running: (start, tier)
        self._timers_set: set[tuple[str, float]] = set()
        self._stats = {"offers": 0, "accept_machine": 0, "accept_rack": 0, "accept_network": 0,
                       "reject_timer": 0, "reject_timer_machine": 0, "reject_timer_rack": 0, "replacements": 0}

    # ------------------------------------------------------------------ bookkeeping
    def _sync(self, view) -> None:
        """Track attempts from the view: an attempt that ended adds its length to T_run."""
        running = view.running
        for jid in list(self._attempt):
            start, _ = self._attempt[jid]
            if jid not in running or running[jid].start != start:  # ended (or restarted by rule 4)
                del self._attempt[jid]
                end = view.now if jid not in running else running[jid].start
                self._run_time[jid] = self._run_time.get(jid, 0.0) + (end - start)
        for jid in running:
            if jid not in self._attempt:
                r = running[jid]
                self._attempt[jid] = (float(r.start), self._shape.tier_of(r.gpus))

    def _nw(self, view, job, now: float) -> float:
        """Nw_sens from the view's kept work (I_compl) and our run-time bookkeeping (T_run)."""
        t_iter = iteration_time(job)
        run = self._run_time.get(job.id, 0.0)
        if job.id in self._attempt:
            run += now - self._attempt[job.id][0]
        done = view.history(job.id).work_done
        return nw_sens(done / t_iter, job.duration / t_iter, run, job.duration)

    def _timers(self, gpus: int, now: float, cache: dict[int, Timers]) -> Timers:
        if gpus not in cache:
            base = self.tuner.timers(gpus, now) if self.auto_tune else self.fixed
            cache[gpus] = fit_timers(gpus, base, self._shape.gpus_per_machine, self._shape.gpus_per_rack)
        return cache[gpus]

    # ------------------------------------------------------------------ the round
    def schedule(self, view, events) -> list:
        if self._shape is None:
            self._shape = Shape.from_arrays(view.cluster.machine, view.cluster.rack)
        sh = self._shape
        now = float(view.now)
        self._sync(view)
        free = np.array(view.free, dtype=bool)
        decisions: list = []
        cache: dict[int, Timers] = {}
        pending = list(view.pending)
        nws = {j.id: self._nw(view, j, now) for j in pending}
        order = sorted(pending, key=lambda j: (nws[j.id], j.submit, j.id))
        n_free = int(free.sum())
        declined = False
        for job in order:
            if job.gpus > n_free:
                continue
            # a typed job is offered the free GPUs of its type only (the whole mask when untyped)
            usable = usable_mask(view.cluster, free, job.gpu_type)
            n_usable = n_free if usable is free else int(usable.sum())
            if job.gpus > n_usable:
                continue
            self._stats["offers"] += 1
            m_free, r_free = sh.free_counts(usable)
            last = view.history(job.id).last_stop  # submission, or the last preemption
            if self.clock == "lease":
                if self._first_offer.get(job.id, -np.inf) < last:   # none since the last assignment
                    self._first_offer[job.id] = now
                last = self._first_offer[job.id]
            starvation = now - last
            d = on_offer(job.gpus, starvation, self._timers(job.gpus, now, cache),
                         int(m_free.max()), int(r_free.max()), n_usable)
            if not d.accept:
                if d.retry_at is not None:
                    self._stats["reject_timer"] += 1
                    self._stats[f"reject_timer_{d.timer}"] += 1
                    declined = True
                    at = last + d.retry_at
                    if at > now and (job.id, at) not in self._timers_set:
                        self._timers_set.add((job.id, at))
                        decisions.append(Timer(at, ("delay", job.id)))
                continue
            gpus = choose_gpus(usable, sh.machine, sh.rack, job.gpus, d.tier)
            free[gpus] = False
            n_free -= job.gpus
            self._stats[f"accept_{d.tier}"] += 1
            if d.record is not None and self.auto_tune:
                self.tuner.record(d.record, job.gpus, starvation, now)
            decisions.append(Start(job.id, tuple(int(g) for g in gpus)))
        if self.preempt_enabled:
            decisions += self._replace(view, free, now)
        if self.clock == "lease" and declined and (self._lease_at is None or self._lease_at <= now):
            self._lease_at = float((np.floor(now / self.lease + 1e-9) + 1) * self.lease)
            decisions.append(Timer(self._lease_at, "lease"))   # Themis: the GPUs are re-offered
        return decisions

    # ------------------------------------------------------------------ rule 4
    def _replace(self, view, free: np.ndarray, now: float) -> list:
        """Re-place slowed jobs on a strictly better tier that is free now (preempt, then start)."""
        sh = self._shape
        out: list = []
        cand = []
        for jid, r in view.running.items():
            if now - r.start < self.min_run:
                continue
            job = view.job(jid)
            tier = self._attempt[jid][1]
            if _TIER_RANK[tier] <= _TIER_RANK[sh.best_tier(job.gpus)]:
                continue
            nw = self._nw(view, job, now)
            if nw < self.preempt_below:
                cand.append((nw, job.submit, jid, tier))
        for _nw, _s, jid, tier in sorted(cand):
            job = view.job(jid)
            for better in ("machine", "rack"):
                if _TIER_RANK[better] >= _TIER_RANK[tier]:
                    break
                gpus = choose_gpus(usable_mask(view.cluster, free, job.gpu_type), sh.machine, sh.rack, job.gpus,
                                   better)
                if gpus is not None:
                    free[gpus] = False
                    free[list(view.running[jid].gpus)] = True
                    self._stats["replacements"] += 1
                    out += [Preempt(jid), Start(jid, tuple(int(g) for g in gpus))]
                    break
        return out

    def stats(self) -> dict[str, Any]:
        out = dict(self._stats)
        out["auto_tune"] = self.auto_tune
        out["timer_trace"] = [list(t) for t in self.tuner.trace] if self.auto_tune else []
        return out


class DallyManual(Dally):
    """Dally-manual (§5.1.3): Dally with fixed timers, 12 h machine and another 12 h rack."""

    name = "dally-manual"

    def __init__(self, timers: TimerOption = MANUAL_TIMERS, **kwargs: Any):
        kwargs.pop("auto_tune", None)
        super().__init__(auto_tune=False, timers=timers, **kwargs)
