"""The event loop of the trace-driven simulator: arrivals, finishes, timers and scans in time order.

Heap-based and incremental: arrivals are read from the submit-ordered trace with a cursor, the
heap holds only finishes, timers and scans; free GPUs are a numpy bool mask updated in place.
Ties are broken by (time, event kind, sequence number) with kinds ordered finish < submit <
timer < scan, so GPUs freed at time t are free for jobs arriving at t. All events at one time
form one batch, then the policy is called once.

Work model: a job needs ``duration`` work; on GPUs spanning tier T it progresses at
``perf.rate(job, T)`` (:mod:`placement.sim.perf`). A preempted job keeps its work up to its last
checkpoint: with ``checkpoint_interval`` C seconds, checkpoints are taken every C seconds of the
attempt's run time; with None (default, our choice) all progress is kept.

Elastic starts: a policy whose ``elastic`` attribute is true may start a job on ``w`` of its
``g = job.gpus`` GPUs (``1 <= w <= g``, :class:`~placement.sim.policy.Start`); the attempt's rate
is then ``perf.rate(job, tier) * w / g`` (linear data-parallel scaling) and its start row's
extra adds ``workers=w``. Every other policy must give exactly ``g``.

Links: on a cluster with a ``network`` section the rate is also multiplied by the job's link
factor (:mod:`placement.sim.links`). After each batch's decisions, when the running set or a
phase changed, the factors are recomputed; a job whose factor changed has its progress settled
at that instant, its finish event re-issued (the old one becomes stale) and a ``rate`` row
logged. ``links=False`` turns this off (GPU-only, as on a cluster without a network).

Goodput jobs (Pollux, :mod:`placement.sim.goodput`): with a performance model that has a
``segment(job, placement, done)`` method (:class:`~placement.sim.goodput.GoodputPerf`), a job's
rate on a start is that segment's rate on its GPUs per machine, after ``perf.restart_delay``
seconds without progress (the attempt's first segment begins then); at each segment's end (an
epoch boundary, or a point of the grid ``k x perf.retune_interval`` when the model has one) the
rate is re-derived and a ``rate`` row logged (the job's link factor and the segment's rate, epoch
and batch layout). With a network the job progresses at the segment's rate times its link factor;
its phase is set on a start as for any job, and a factor change logs a ``rate`` row with the
segment's extras (during a restart delay progress still begins after the delay). A policy whose
``elastic_any`` attribute is true may
start a job on any number of GPUs (Pollux sizes jobs itself).

Time sharing (fluid time slicing; Gandiva OSDI'18 §3.1 "oversubscription"): a policy whose
``time_sharing`` attribute is true (``True``: any number of holders; an integer ``k >= 2``: at most
``k`` per GPU) may start a job on GPUs that running jobs hold. A GPU held by ``h`` jobs gives each
of them ``1/h`` of its time; a gang job runs when all its GPUs run it, so it progresses at
``1 / max(h over its GPUs)`` of its placement's rate: the fluid limit of round-robin
suspend-resume with a quantum well below the job lengths, with no event per quantum (an upper
bound on a gang's share where holder counts differ across its GPUs; suspend-resume itself is
free). The start row says ``share=h``; after each batch, every running job whose GPUs' holder
counts changed has its progress settled at that instant, its finish re-issued and a ``rate`` row
``factor=1/h share=h`` logged. ``view.holders`` is the per-GPU count; ``view.free`` is
``holders == 0``. Not combined with links or goodput jobs (a policy error).
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cluster import Cluster
from .log import EventLog, LogRow
from .perf import DallyPerf, PerfModel
from .policy import (
    Event,
    History,
    Policy,
    PolicyError,
    Preempt,
    Shift,
    SimView,
    Start,
    Timer,
    worker_rate,
)
from .trace import Job, Trace

__all__ = ["simulate", "SimResult", "KIND_ORDER"]

KIND_ORDER = {"finish": 0, "submit": 1, "timer": 2, "scan": 3}
SAME_TIME_LIMIT = 100_000  # batches at one instant before the loop calls it a livelock
# Batches in a row with nothing running, no arrival left and no decision before the loop calls
# the remaining jobs stuck (a policy timer that keeps firing for a job that can never start)
IDLE_LIMIT = 10_000


@dataclass
class SimResult:
    """Outcome of :func:`simulate`: the log (the record to judge), statistics, and jobs left
    pending or running when the loop ran out of events (a policy that stopped starting jobs).
    ``link_model``: the :class:`~placement.sim.links.LinkSharing` the run shared links with (None
    without one), so measures from the log can reuse its solved components; not pickled."""

    trace: str
    cluster: str
    policy: str
    log: EventLog
    end_time: float
    unfinished: tuple[str, ...]
    stats: dict[str, Any] = field(default_factory=dict)
    policy_stats: dict[str, Any] = field(default_factory=dict)
    link_model: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "link_model"}


class _Run:
    """A running attempt: ``left`` work at time ``since`` (the last rate change), progressing at
    ``rate`` = ``base`` (perf model) x ``factor`` (links); ``segments`` are the earlier
    ``(since, left, rate)`` of this attempt (for checkpoints); ``gen`` numbers finish events."""

    __slots__ = ("gpus", "start", "left", "rate", "tier", "attempt", "since", "base", "factor", "gen",
                 "segments", "stop", "grid", "seg", "share")

    def __init__(self, gpus, start, left, rate, tier, attempt):
        self.gpus, self.start, self.left, self.rate, self.tier, self.attempt = (
            gpus, start, left, rate, tier, attempt)
        self.since, self.base, self.factor, self.gen, self.segments = start, rate, 1.0, 0, []
        self.stop = 0.0      # work left at the end of this segment (goodput jobs: an epoch boundary)
        self.grid = False    # goodput jobs: this segment ends on the re-tune grid, before ``stop``
        self.seg = None      # goodput jobs: the current segment (its rate is ``base``)
        self.share = 1       # time sharing: the most holders of any of its GPUs (rate = base x factor / share)

    def left_at(self, t: float) -> float:
        """Work still needed at time ``t`` (within this attempt)."""
        since, left, rate = self.since, self.left, self.rate
        for seg in reversed(self.segments):
            if t >= since:
                break
            since, left, rate = seg
        # min: before ``since`` of the first segment (a restart delay) no progress yet
        return max(0.0, min(left, left - rate * (t - since)))


class _State:
    def __init__(self, trace: Trace, cluster: Cluster, perf: PerfModel, seed: int, links=None):
        self.cluster, self.perf, self.seed, self.links = cluster, perf, seed, links
        self.phase: dict[str, float] = {}       # running jobs' phases (ms), with links only
        self.jobs: dict[str, Job] = {j.id: j for j in trace.jobs}
        self.index = {j.id: i for i, j in enumerate(trace.jobs)}
        self.now = trace.jobs[0].submit if trace.jobs else 0.0
        self.free = np.ones(cluster.n_gpus, dtype=bool)
        self.free_ro = self.free.view()
        self.free_ro.flags.writeable = False
        self.holders = np.zeros(cluster.n_gpus, dtype=np.int32)   # running jobs per GPU
        self.holders_ro = self.holders.view()
        self.holders_ro.flags.writeable = False
        self.on_gpu: list[set[str]] | None = None   # with time sharing: the jobs holding each GPU
        self.n_free = cluster.n_gpus
        self.pending: dict[str, Job] = {}
        self.pending_dirty = False
        self.running: dict[str, _Run] = {}
        self.version = 0                         # bumped on every start / preempt / finish
        self.work: dict[str, float] = {}        # kept work of jobs not running
        self.attempts: dict[str, int] = {}
        self.preemptions: dict[str, int] = {}
        self.first_start: dict[str, float] = {}
        self.last_stop: dict[str, float] = {}
        self.run_time: dict[str, float] = {}    # time in the run queue over finished attempts
        self.completed: dict[str, float] = {}
        self.unschedulable: dict[str, float] = {}

    def pending_jobs(self):
        if self.pending_dirty:
            idx = self.index
            self.pending = dict(sorted(self.pending.items(), key=lambda kv: idx[kv[0]]))
            self.pending_dirty = False
        return self.pending.values()

    def history(self, job_id: str) -> History:
        if job_id not in self.jobs:
            raise KeyError(job_id)
        w = self.work.get(job_id, 0.0)
        run = self.run_time.get(job_id, 0.0)
        r = self.running.get(job_id)
        if r is not None:
            w = self.jobs[job_id].duration - r.left_at(self.now)
            run += self.now - r.start
        return History(self.attempts.get(job_id, 0), self.preemptions.get(job_id, 0), w,
                       self.first_start.get(job_id),
                       self.last_stop.get(job_id, self.jobs[job_id].submit), run)


MIN_SCAN_INTERVAL = 1.0


def simulate(trace: Trace, cluster: Cluster, policy: Policy, perf: PerfModel | None = None,
             seed: int = 0, scan_interval: float | None = None,
             checkpoint_interval: float | None = None,
             progress: Callable[[int, int, float], None] | None = None, links: Any = None) -> SimResult:
    """Run ``policy`` on ``trace`` over ``cluster``; return the log and statistics.

    ``perf`` defaults to :class:`DallyPerf`. ``scan_interval`` (s) adds a periodic ``scan`` event
    while jobs remain. ``progress(done, total, now)`` is called now and then.
    Raises :class:`PolicyError` on an invalid decision. When nothing runs, no job is left to
    arrive and the policy has decided nothing for :data:`IDLE_LIMIT` batches in a row (its
    timers keep firing for jobs it can never start), the run stops there: the waiting jobs are
    ``unfinished`` and ``stats["stalled_at"]`` is the time (a run that would never end).
    ``links``: None builds :class:`placement.sim.links.LinkSharing` when the cluster has a
    network; a ``LinkSharing`` is used as given; False runs GPU-only.
    """
    perf = DallyPerf() if perf is None else perf
    # At least 1 s: a shorter period makes a scan batch per millisecond of simulated time (or,
    # below float resolution at trace times, a loop that never advances).
    if scan_interval is not None and not (math.isfinite(scan_interval) and scan_interval >= MIN_SCAN_INTERVAL):
        raise ValueError(f"scan_interval must be at least {MIN_SCAN_INTERVAL:g} s")
    if checkpoint_interval is not None and not (math.isfinite(checkpoint_interval)
                                                and checkpoint_interval > 0):
        raise ValueError("checkpoint_interval must be a positive number of seconds")
    if links is None and cluster.network is not None:
        from .links import LinkSharing

        links = LinkSharing(cluster)
    return _Loop(trace, cluster, policy, perf, seed, scan_interval, checkpoint_interval, progress,
                 links or None).run()


def _share_cap(policy) -> float | None:
    """The policy's ``time_sharing``: None (no sharing), an integer >= 2, or inf (``True``)."""
    v = getattr(policy, "time_sharing", False)
    if v is False or v is None or v == 0:
        return None
    if v is True:
        return math.inf
    if isinstance(v, int) and v >= 2:
        return v
    raise PolicyError(f"time_sharing must be True, False or an integer >= 2, got {v!r}")


class _Loop:
    """One run of the event loop: the state, the log, the event heap and the trace cursor.

    :meth:`run` takes one batch of simultaneous events at a time — finishes
    (:meth:`_finishes`), arrivals (:meth:`_arrivals`), timers and scans (:meth:`_timers`) — calls
    the policy once, and applies its decisions in order (:meth:`_start`, :meth:`_preempt`,
    :meth:`_timer`), each validated against the state.
    """

    def __init__(self, trace, cluster, policy, perf, seed, scan_interval, checkpoint_interval, progress, links):
        self.trace, self.cluster, self.policy, self.perf, self.seed = trace, cluster, policy, perf, seed
        self.scan_interval, self.checkpoint_interval, self.progress = scan_interval, checkpoint_interval, progress
        self.s = _State(trace, cluster, perf, seed, links)
        self.links, self._link_key = links, None
        self.elastic = bool(getattr(policy, "elastic", False))
        self.elastic_any = bool(getattr(policy, "elastic_any", False))
        self.segment = getattr(perf, "segment", None)    # goodput jobs (module docstring)
        self.share_cap = _share_cap(policy)
        if self.share_cap is not None:
            if links:
                raise PolicyError("time sharing is modelled on clusters without a network (links)")
            if self.segment is not None:
                raise PolicyError("time sharing is not modelled for goodput jobs")
            self.s.on_gpu = [set() for _ in range(cluster.n_gpus)]
        self._touched: set[int] = set()                  # GPUs whose holders changed this batch
        self.view = SimView(self.s)
        self.log = EventLog()
        self.jobs = trace.jobs
        self.n = len(trace.jobs)
        self.heap: list = []
        self.seq = 0
        self.cursor = 0
        self.stats = {"batches": 0, "events": 0, "starts": 0, "preemptions": 0, "timers": 0, "scans": 0,
                      "decisions": 0, "peak_pending": 0, "unschedulable": 0}
        self.cap = {t: cluster.type_count[t] for t in cluster.types}
        self.done_count = 0

    def _push(self, at: float, kind: int, name: str, payload) -> None:
        heapq.heappush(self.heap, (at, kind, self.seq, name, payload))
        self.seq += 1

    def run(self) -> SimResult:
        s, heap, jobs, n, stats = self.s, self.heap, self.jobs, self.n, self.stats
        t_wall = _time.perf_counter()
        if self.scan_interval is not None and n:
            self._push(jobs[0].submit, KIND_ORDER["scan"], "scan", None)
        self.policy.setup(self.view, self.seed)
        same_time, last_t, idle = 0, None, 0
        while self.cursor < n or heap:
            t_arr = jobs[self.cursor].submit if self.cursor < n else math.inf
            t = min(t_arr, heap[0][0]) if heap else t_arr
            s.now = t
            same_time = same_time + 1 if t == last_t else 0
            last_t = t
            if same_time > SAME_TIME_LIMIT:
                raise PolicyError(f"no progress: over {SAME_TIME_LIMIT} event batches at time {t!r} "
                                  "(a timer set for 'now' over and over?)")
            events: list[Event] = []
            self._finishes(t, events)
            self._arrivals(t, events)
            rescan = self._timers(t, events)
            if not events:
                continue
            stats["batches"] += 1
            stats["events"] += len(events)
            if len(s.pending) > stats["peak_pending"]:
                stats["peak_pending"] = len(s.pending)
            made = self._decide(t, events)
            if self.links is not None:
                self._relink(t)
            if self._touched:
                self._reshare(t)
            idle = idle + 1 if (not self.acted and not s.running and self.cursor >= n) else 0
            if idle > IDLE_LIMIT:
                stats["stalled_at"] = t
                break
            if rescan and (self.cursor < n or s.running or (s.pending and made)):
                self._push(t + self.scan_interval, 3, "scan", None)
            if self.progress is not None and stats["batches"] % 2000 == 0:
                self.progress(self.done_count, n, t)
        if self.progress is not None:
            self.progress(self.done_count, n, s.now)
        unfinished = tuple(j.id for j in jobs if j.id in s.pending or j.id in s.running)
        stats["wall_s"] = round(_time.perf_counter() - t_wall, 3)
        if self.links is not None:
            stats["links"] = dict(self.links.stats)
        return SimResult(trace=self.trace.name, cluster=self.cluster.name,
                         policy=getattr(self.policy, "name", "policy"), log=self.log, end_time=s.now,
                         unfinished=unfinished, stats=stats, policy_stats=dict(self.policy.stats()),
                         link_model=self.links)

    # ------------------------------------------------------------------ one batch of events
    def _finishes(self, t: float, events: list) -> None:
        """Finishes at ``t`` (kind 0, first): free the GPUs, log, and tell the policy."""
        s, heap, log = self.s, self.heap, self.log
        while heap and heap[0][0] == t and heap[0][1] == 0:
            _, _, _, _, (jid, attempt, gen) = heapq.heappop(heap)
            r = s.running.get(jid)
            if r is None or r.attempt != attempt or r.gen != gen:
                continue  # stale: the job was preempted, or its rate changed
            if r.stop > 0.0 or r.grid:
                self._next_segment(jid, r, t)   # an epoch boundary or re-tune of a goodput job, not its end
                continue
            del s.running[jid]
            s.phase.pop(jid, None)
            s.version += 1
            s.run_time[jid] = s.run_time.get(jid, 0.0) + (t - r.start)
            self._release(jid, r.gpus)
            job = s.jobs[jid]
            s.completed[jid] = t
            s.work[jid] = job.duration
            log.append(LogRow(t, "finish", jid, r.gpus, job.duration))
            events.append(Event("finish", t, jid))
            self.done_count += 1

    def _placement(self, gpus) -> tuple[int, ...]:
        """GPUs per machine (machines in id order) of a GPU set."""
        m = self.cluster.machine[np.asarray(gpus, dtype=np.int64)]
        return tuple(int(c) for c in np.unique(m, return_counts=True)[1])

    def _push_segment(self, jid: str, r: _Run, seg, t_from: float) -> None:
        """Set ``r``'s rate to the goodput segment ``seg`` from ``t_from`` and schedule its end."""
        job = self.s.jobs[jid]
        r.base, r.seg = float(seg.rate), seg
        if not (math.isfinite(r.base) and r.base > 0):
            raise ValueError(f"performance model gave rate {r.base!r} for job {jid!r}")
        r.rate = r.base * r.factor          # times the link factor (1 without a network)
        r.stop = max(0.0, job.duration - seg.until)
        self._push_segment_end(jid, r, t_from)

    def _push_segment_end(self, jid: str, r: _Run, t_from: float) -> None:
        """Schedule the end of a goodput job's segment at ``r.rate`` from ``t_from``: its epoch
        boundary (``r.stop``) or the next point of the re-tune grid, whichever is first."""
        end = t_from + (r.left - r.stop) / r.rate
        step = getattr(self.perf, "retune_interval", None)
        r.grid = False
        if step:
            tick = (math.floor(t_from / step) + 1) * step      # the next point of the grid after t_from
            if tick < end:
                end, r.grid = tick, True
        self._push(end, 0, "finish", (jid, r.attempt, r.gen))

    def _next_segment(self, jid: str, r: _Run, t: float) -> None:
        """A goodput job reached an epoch boundary: its next segment's rate, a ``rate`` row."""
        r.segments.append((r.since, r.left, r.rate))
        job = self.s.jobs[jid]
        # exactly at an epoch boundary; on the re-tune grid, the work left now
        r.left, r.since, r.gen = (max(r.left_at(t), r.stop) if r.grid else r.stop), t, r.gen + 1
        seg = self.segment(job, self._placement(r.gpus), job.duration - r.left)
        self._push_segment(jid, r, seg, t)
        self.log.append(LogRow(t, "rate", jid, r.gpus, job.duration - r.left, f"factor={r.factor!r} {seg.extra()}"))

    def _arrivals(self, t: float, events: list) -> None:
        """Jobs submitted at ``t`` (kind 1): pending, or ``unschedulable`` when they can never fit."""
        s, jobs, n, log, cluster = self.s, self.jobs, self.n, self.log, self.cluster
        while self.cursor < n and jobs[self.cursor].submit == t:
            job = jobs[self.cursor]
            self.cursor += 1
            log.append(LogRow(t, "submit", job.id))
            if job.gpus > (cluster.n_gpus if job.gpu_type is None else self.cap.get(job.gpu_type, 0)):
                s.unschedulable[job.id] = t
                self.stats["unschedulable"] += 1
                self.done_count += 1
                log.append(LogRow(t, "unschedulable", job.id, (), 0.0,
                                  f"needs {job.gpus} GPUs of type {job.gpu_type or 'any'}"))
                continue
            s.pending[job.id] = job
            s.work[job.id] = 0.0
            events.append(Event("submit", t, job.id))

    def _timers(self, t: float, events: list) -> bool:
        """Timers and scans at ``t`` (kinds 2, 3); True when a scan fired (it re-arms itself)."""
        heap, rescan = self.heap, False
        while heap and heap[0][0] == t:
            _, kind, _, name, payload = heapq.heappop(heap)
            if name == "timer":
                events.append(Event("timer", t, None, payload))
                self.stats["timers"] += 1
            else:
                events.append(Event("scan", t))
                self.stats["scans"] += 1
                rescan = True
        return rescan

    # ------------------------------------------------------------------ the policy's decisions
    def _decide(self, t: float, events: list) -> bool:
        """Call the policy once for the batch and apply its decisions in order; True if any."""
        decisions = self.policy.schedule(self.view, events)
        if decisions is None:
            decisions = ()
        made = False
        self.acted = False   # a Start or a Preempt (a Timer alone changes nothing yet)
        for d in decisions:
            made = True
            self.stats["decisions"] += 1
            if isinstance(d, Start):
                self._start(d, t)
                self.acted = True
            elif isinstance(d, Preempt):
                self._preempt(d, t)
                self.acted = True
            elif isinstance(d, Timer):
                self._timer(d, t)
            elif isinstance(d, Shift):
                self._shift(d, t)
            else:
                raise PolicyError(f"unknown decision {d!r} (expected Start, Preempt or Timer)")
        return made

    def _start(self, d: Start, t: float) -> None:
        """Start a pending job on exactly its GPUs (or, elastic, 1 to its GPUs), all free and of its
        type (:meth:`_checked`)."""
        s = self.s
        job, g = self._checked(d, t)
        gpus = tuple(sorted(g.tolist()))
        tier = self.cluster.tier(g)
        if self.segment is not None:
            self._start_goodput(job, g, tier, t)
            return
        rate = float(self.perf.rate(job, tier))
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"performance model gave rate {rate!r} for job {job.id!r}")
        elastic = len(g) < job.gpus
        rate = worker_rate(rate, len(g), job.gpus)   # w of its g workers (an elastic policy)
        att = self._occupy(job, g, t)
        done = s.work[job.id]
        left = max(0.0, job.duration - done)
        r = s.running[job.id] = _Run(gpus, t, left, rate, tier, att)
        shared = ""
        if self.share_cap is not None:
            r.share = int(s.holders[g].max())
            r.rate = rate / r.share
            shared = f" share={r.share}"
        s.version += 1
        self._push(t + left / r.rate, 0, "finish", (job.id, att, 0))
        self.stats["starts"] += 1
        self.log.append(LogRow(t, "start", job.id, gpus, done, f"tier={tier} rate={r.rate!r}" + shared
                               + (f" workers={len(g)}" if elastic else "") + (f" {d.note}" if d.note else "")))

    def _occupy(self, job: Job, g: np.ndarray, t: float) -> int:
        """What every start does to the state: the job leaves pending, takes ``g``, its attempt is
        counted (returned) and its first start kept; with a network its link phase is set."""
        s = self.s
        del s.pending[job.id]
        if s.on_gpu is not None:
            s.n_free -= int(s.free[g].sum())
            s.holders[g] += 1
            for x in g.tolist():
                s.on_gpu[x].add(job.id)
            self._touched.update(g.tolist())
        else:
            s.n_free -= len(g)
            s.holders[g] = 1
        s.free[g] = False
        att = s.attempts[job.id] = s.attempts.get(job.id, 0) + 1
        s.first_start.setdefault(job.id, t)
        if self.links is not None:
            from .links import default_phase

            s.phase[job.id] = default_phase(job, t)
        return att

    def _start_goodput(self, job: Job, g: np.ndarray, tier: str, t: float) -> None:
        """Start a goodput job: its first segment begins after the restart delay."""
        s = self.s
        gpus = tuple(sorted(g.tolist()))
        done = s.work[job.id]
        seg = self.segment(job, self._placement(gpus), done)
        att = self._occupy(job, g, t)
        delay = float(self.perf.restart_delay)
        r = s.running[job.id] = _Run(gpus, t, max(0.0, job.duration - done), 1.0, tier, att)
        r.since = t + delay
        self._push_segment(job.id, r, seg, t + delay)
        s.version += 1
        self.stats["starts"] += 1
        self.log.append(LogRow(t, "start", job.id, gpus, done,
                               f"tier={tier} workers={len(g)} delay={delay!r} {seg.extra()}"))

    def _checked(self, d: Start, t: float) -> tuple[Job, np.ndarray]:
        """The job of a ``Start`` and its GPU ids as an array, after checking the decision:
        a pending job, as many distinct GPU ids as it needs (1 to that many for an elastic
        policy), in range, free, of its type."""
        s, cluster, free = self.s, self.cluster, self.s.free
        job = s.jobs.get(d.job_id) if isinstance(d.job_id, str) else None
        if job is None:
            raise PolicyError(f"Start of unknown job {d.job_id!r} at {t!r}")
        if d.job_id not in s.pending:
            state = ("running" if d.job_id in s.running else "finished" if d.job_id in
                     s.completed else "unschedulable" if d.job_id in s.unschedulable
                     else "not yet submitted")
            raise PolicyError(f"Start of job {d.job_id!r} at {t!r}: it is {state}")
        try:
            g = np.asarray(d.gpus, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            raise PolicyError(f"Start of job {d.job_id!r}: gpus must be GPU ids") from None
        if len(set(g.tolist())) != len(g) or not (
                len(g) == job.gpus or (self.elastic and 1 <= len(g) < job.gpus)
                or (self.elastic_any and len(g) >= 1)):
            raise PolicyError(f"Start of job {d.job_id!r}: needs {job.gpus} distinct GPUs"
                              + (f" (1 to {job.gpus}: elastic)" if self.elastic else "")
                              + f", got {tuple(d.gpus)}")
        if len(g) and (g.min() < 0 or g.max() >= cluster.n_gpus):
            raise PolicyError(f"Start of job {d.job_id!r}: GPU id out of range 0..{cluster.n_gpus - 1}")
        if self.share_cap is not None:
            full = s.holders[g] >= self.share_cap
            if full.any():
                raise PolicyError(f"Start of job {d.job_id!r} at {t!r}: GPU(s) {g[full].tolist()} "
                                  f"are held by {self.share_cap:g} jobs, the sharing limit")
        elif not free[g].all():
            raise PolicyError(f"Start of job {d.job_id!r} at {t!r}: GPU(s) "
                              f"{g[~free[g]].tolist()} are busy")
        if job.gpu_type is not None and not (cluster.gpu_type[g] == job.gpu_type).all():
            raise PolicyError(f"Start of job {d.job_id!r}: needs GPUs of type {job.gpu_type!r}")
        return job, g

    def _preempt(self, d: Preempt, t: float) -> None:
        """Stop a running job; it keeps its work up to the last checkpoint and waits again."""
        s = self.s
        r = s.running.get(d.job_id) if isinstance(d.job_id, str) else None
        if r is None:
            raise PolicyError(f"Preempt of job {d.job_id!r} at {t!r}: it is not running")
        job = s.jobs[d.job_id]
        at = t
        if self.checkpoint_interval is not None:
            at = r.start + math.floor((t - r.start) / self.checkpoint_interval) * self.checkpoint_interval
        kept = job.duration - r.left_at(at)
        del s.running[job.id]
        s.phase.pop(job.id, None)
        s.version += 1
        s.run_time[job.id] = s.run_time.get(job.id, 0.0) + (t - r.start)
        self._release(job.id, r.gpus)
        s.work[job.id] = kept
        s.preemptions[job.id] = s.preemptions.get(job.id, 0) + 1
        s.last_stop[job.id] = t
        s.pending[job.id] = job
        s.pending_dirty = True
        self.stats["preemptions"] += 1
        self.log.append(LogRow(t, "preempt", job.id, r.gpus, kept))

    def _release(self, jid: str, gpus: tuple[int, ...]) -> None:
        """A job leaves its GPUs (a finish or a preempt): a GPU no job holds is free again."""
        s = self.s
        g = np.asarray(gpus, dtype=np.int64)
        s.holders[g] -= 1
        empty = g[s.holders[g] == 0]
        s.free[empty] = True
        s.n_free += len(empty)
        if s.on_gpu is not None:
            for x in gpus:
                s.on_gpu[x].discard(jid)
            self._touched.update(gpus)

    def _reshare(self, t: float) -> None:
        """Time sharing: after a batch, each running job on a GPU whose holders changed gets the
        share ``1 / max(holders of its GPUs)`` (module docstring); a changed share settles its
        progress at ``t``, re-issues its finish and logs a ``rate`` row."""
        s = self.s
        jobs = sorted({j for x in self._touched for j in s.on_gpu[x]}, key=s.index.__getitem__)
        self._touched = set()
        for jid in jobs:
            r = s.running[jid]
            k = int(s.holders[list(r.gpus)].max())
            if k == r.share:
                continue
            r.segments.append((r.since, r.left, r.rate))
            r.left = r.left_at(t)
            r.since, r.share, r.rate, r.gen = t, k, r.base * r.factor / k, r.gen + 1
            self._push(t + r.left / r.rate, 0, "finish", (jid, r.attempt, r.gen))
            self.log.append(LogRow(t, "rate", jid, r.gpus, s.jobs[jid].duration - r.left,
                                   f"factor={1.0 / k!r} share={k} rate={r.rate!r}"))
        s.version += 1

    def _shift(self, d: Shift, t: float) -> None:
        """Set a running job's phase (ms): only with links, a finite number."""
        if self.links is None:
            raise PolicyError(f"Shift of job {d.job_id!r}: the cluster has no network")
        r = self.s.running.get(d.job_id) if isinstance(d.job_id, str) else None
        if r is None:
            raise PolicyError(f"Shift of job {d.job_id!r} at {t!r}: it is not running")
        try:
            phase = float(d.phase)
        except (TypeError, ValueError):
            phase = math.nan
        if not math.isfinite(phase):
            raise PolicyError(f"Shift of job {d.job_id!r}: phase {d.phase!r} is not a finite number of ms")
        if self.s.phase.get(d.job_id) != phase:
            self.s.phase[d.job_id] = phase
            self._link_key = None
            self.log.append(LogRow(t, "shift", d.job_id, r.gpus, self.s.jobs[d.job_id].duration - r.left_at(t),
                                   f"phase={phase!r}"))

    def _relink(self, t: float) -> None:
        """Recompute link factors after a batch that changed the running set or a phase."""
        s = self.s
        key = (s.version, len(s.running))
        if key == self._link_key:
            return
        fac = self.links.factors({jid: (s.jobs[jid], r.gpus, s.phase[jid]) for jid, r in s.running.items()})
        for jid, r in s.running.items():
            f = fac.get(jid, 1.0)
            if f == r.factor:
                continue
            if r.seg is not None:       # a goodput job: its segment's goodput times the new factor
                self._refactor_goodput(jid, r, f, t)
                continue
            r.segments.append((r.since, r.left, r.rate))
            r.left = r.left_at(t)
            r.since, r.factor, r.rate, r.gen = t, f, r.base * f, r.gen + 1
            self._push(t + r.left / r.rate, 0, "finish", (jid, r.attempt, r.gen))
            self.log.append(LogRow(t, "rate", jid, r.gpus, s.jobs[jid].duration - r.left,
                                   f"factor={f!r} rate={r.rate!r}"))
        s.version += 1
        self._link_key = (s.version, len(s.running))

    def _refactor_goodput(self, jid: str, r: _Run, f: float, t: float) -> None:
        """A goodput job's link factor changed at ``t``: settle its progress (in a restart delay,
        none: progress still begins at ``r.since``), rate = segment goodput x ``f``, the
        segment's end re-issued, a ``rate`` row with the factor and the segment's own extras
        (its ``rate=`` is the goodput before the factor, as :func:`goodput_check` re-derives)."""
        job = self.s.jobs[jid]
        if r.since <= t:
            r.segments.append((r.since, r.left, r.rate))
            r.left, r.since = r.left_at(t), t
        r.factor, r.rate, r.gen = f, r.base * f, r.gen + 1
        self._push_segment_end(jid, r, max(t, r.since))
        self.log.append(LogRow(t, "rate", jid, r.gpus, job.duration - r.left, f"factor={f!r} {r.seg.extra()}"))

    def _timer(self, d: Timer, t: float) -> None:
        """Wake the policy at ``d.at`` (a finite time, not in the past)."""
        try:
            at = float(d.at)
        except (TypeError, ValueError):
            at = math.nan
        if not (math.isfinite(at) and at >= t):
            raise PolicyError(f"Timer at {d.at!r} is not a finite time >= now ({t!r})")
        self._push(at, 2, "timer", d.key)
