"""The policy seam: what a scheduling policy sees and what it may decide.

The engine (:mod:`placement.sim.engine`) calls ``policy.schedule(view, events)`` after each batch
of simultaneous events and applies the returned decisions in order, validating each one: a
decision that does not fit the state raises :class:`PolicyError` (never skipped).

Decisions: :class:`Start` (run a pending job on exactly ``job.gpus`` free GPUs of its type, or,
for a policy whose ``elastic`` attribute is true, on 1 to ``job.gpus`` of them: the job then
runs ``w`` of its ``g`` requested workers at ``w / g`` of its rate, see :class:`Start`),
:class:`Preempt` (stop a running job; it returns to the pending queue keeping its work up to the
last checkpoint), :class:`Timer` (call me back at ``at`` with an event carrying ``key``),
:class:`Shift` (on a cluster with a network, set a running job's iteration phase: a CASSINI
time shift, :mod:`placement.sim.links`).

Events: :class:`Event` with ``kind`` in ``"finish"``, ``"submit"``, ``"timer"``, ``"scan"`` (the
periodic scan, every ``scan_interval`` simulated seconds), delivered in that order within a batch.
Jobs that can never fit the cluster are logged ``unschedulable`` at arrival and never reach the
policy (they are listed in ``view.unschedulable``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .cluster import Cluster
    from .trace import Job

__all__ = ["Policy", "Start", "worker_rate", "Preempt", "Timer", "Shift", "Event", "PolicyError", "Running", "History",
           "SimView"]


class PolicyError(RuntimeError):
    """A policy returned a decision that does not fit the simulator's state (a policy bug)."""


def worker_rate(rate: float, workers: int, gpus: int) -> float:
    """A job's progress rate on ``workers`` of its ``gpus`` requested GPUs (an elastic start,
    :class:`Start`): ``rate * workers / gpus`` below its ask (linear data-parallel scaling),
    ``rate`` at it."""
    return rate * workers / gpus if 0 < workers < gpus else rate


@dataclass(frozen=True)
class Start:
    """Start pending job ``job_id`` on ``gpus`` (exactly ``job.gpus`` distinct free GPU ids).

    An *elastic* policy (``policy.elastic`` true: Themis as CASSINI §5.1 runs it, re-tuning a
    job's workers per lease) may give a job ``w`` of its ``g = job.gpus`` requested GPUs, any
    ``1 <= w <= g``: it runs ``w`` data-parallel workers and progresses at ``w / g`` of its rate
    on those GPUs (linear data-parallel scaling: the same per-worker batch, so an iteration takes
    as long and processes ``w / g`` of the samples; §5.1: DistributedDataParallel "distributes
    the dataset across GPUs"). The log's start row says ``workers=w`` when ``w < g``.

    ``note``: ``key=value`` words the engine appends to the start row's extra text, for an outside
    check of the policy's own guarantee (HiveD: ``class=guaranteed vc=... cells=...``)."""

    job_id: str
    gpus: tuple[int, ...]
    note: str = ""


@dataclass(frozen=True)
class Preempt:
    """Stop running job ``job_id``; it returns to the pending queue."""

    job_id: str


@dataclass(frozen=True)
class Timer:
    """Wake the policy at simulated time ``at`` (>= now) with ``Event("timer", at, key=key)``."""

    at: float
    key: Hashable = None


@dataclass(frozen=True)
class Shift:
    """Set running job ``job_id``'s phase: its iterations begin at ``phase`` ms (modulo its
    iteration time) on the simulator's clock. Only on a cluster with a network."""

    job_id: str
    phase: float


@dataclass(frozen=True)
class Event:
    """One thing that happened: ``kind`` is ``finish``/``submit`` (with ``job_id``), ``timer``
    (with the timer's ``key``) or ``scan``."""

    kind: str
    time: float
    job_id: str | None = None
    key: Hashable = None


class Running(NamedTuple):
    """A running job as the view shows it: its GPUs, when this attempt started, the work it still
    needs now (s at rate 1.0), its progress rate on these GPUs (times its link factor on a
    cluster with a network; times ``workers / job.gpus`` when an elastic policy gave it fewer
    GPUs than it asked for), and the tier they span. ``workers``: its current worker count."""

    gpus: tuple[int, ...]
    start: float
    remaining: float
    rate: float
    tier: str

    @property
    def workers(self) -> int:
        """The job's current worker count (one per GPU of this attempt)."""
        return len(self.gpus)


class History(NamedTuple):
    """A job's past: attempts started, preemptions, work kept so far (s at rate 1.0, up to the
    last checkpoint; includes the running attempt's progress when running), first start time
    (None before), when it last stopped (preempted) or was submitted, and its total time in the
    run queue (all attempts, the current one up to now; Dally's T_run, §4.3.1)."""

    attempts: int
    preemptions: int
    work_done: float
    first_start: float | None
    last_stop: float
    run_time: float = 0.0


class Policy(ABC):
    """Base class of scheduling policies (one per module in ``solvers/online/``).

    Subclasses implement :meth:`schedule`; :meth:`setup` is called once before the first event;
    :meth:`stats` reports the policy's own statistics (JSON-able values). The first line of a
    subclass's docstring is its one-line description in ``placement simulate --help``.

    ``needs`` maps a constructor option to the kind of data the policy receives there (a VC
    assignment, a data placement); a policy never loads or generates it. The app layer
    (:mod:`placement.app.policy_data`) fills an option the user did not give.
    """

    name = "policy"
    needs: ClassVar[dict[str, str]] = {}
    # True: the policy may start a job on fewer GPUs than it asks for (:class:`Start`)
    elastic: bool = False
    # True or an integer k >= 2: a Start may take GPUs running jobs hold (at most k per GPU), each
    # job progressing at 1 / (most holders of its GPUs): fluid time slicing (placement.sim.engine)
    time_sharing: bool | int = False

    def setup(self, view: SimView, seed: int) -> None:  # noqa: B027 - an optional hook, empty by default
        """Called once before the first event (``view.now`` is the first event's time)."""

    @abstractmethod
    def schedule(self, view: SimView, events: list[Event]) -> list:
        """The decisions (Start, Preempt, Timer) for this batch of simultaneous events."""

    def stats(self) -> dict[str, Any]:
        return {}


class _RunningMap(Mapping):
    """Live read-only mapping job id -> :class:`Running` (remaining work computed at ``now``).

    The :class:`Running` tuples are cached per (time, state version): a policy that walks all
    running jobs in every call pays for building them once per batch, not once per access."""

    def __init__(self, state):
        self._s = state
        self._key = None
        self._cache: dict[str, Running] = {}
        self._full = False

    def _fresh(self) -> dict[str, Running]:
        s = self._s
        key = (s.now, s.version)
        if key != self._key:
            self._key, self._cache, self._full = key, {}, False
        return self._cache

    def _make(self, r) -> Running:
        left = min(r.left, r.left - r.rate * (self._s.now - r.since))   # no progress before since (a restart delay)
        return Running(r.gpus, r.start, left if left > 0.0 else 0.0, r.rate, r.tier)

    def __getitem__(self, job_id: str) -> Running:
        cache = self._fresh()
        out = cache.get(job_id)
        if out is None:
            out = cache[job_id] = self._make(self._s.running[job_id])
        return out

    def _all(self) -> dict[str, Running]:
        cache = self._fresh()
        if not self._full:
            make = self._make
            self._cache = cache = {k: cache.get(k) or make(r) for k, r in self._s.running.items()}
            self._full = True
        return cache

    def items(self):
        return self._all().items()

    def values(self):
        return self._all().values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._s.running)

    def __len__(self) -> int:
        return len(self._s.running)

    def __contains__(self, job_id) -> bool:
        return job_id in self._s.running


class SimView:
    """Read-only state handed to :meth:`Policy.schedule` (live: valid during the call).

    Attributes: ``now``, ``cluster``, ``perf``, ``seed``, ``free`` (read-only numpy bool mask per
    GPU), ``holders`` (running jobs per GPU), ``n_free``, ``pending`` (the pending :class:`Job` objects in (submit, id) order, an
    iterable with ``len``), ``running`` (job id -> :class:`Running`), ``completed`` and
    ``unschedulable`` (sets of job ids, live views). Methods: ``job(id)``, ``history(id)``,
    ``rate(job, gpus)``, ``is_pending(id)``, ``phase(id)``. ``links`` is the
    :class:`placement.sim.links.LinkSharing` of a cluster with a network (else None).
    """

    def __init__(self, state):
        self._s = state
        self.cluster: Cluster = state.cluster
        self.perf = state.perf
        self.seed: int = state.seed
        self.running = _RunningMap(state)
        self.links = getattr(state, "links", None)

    @property
    def now(self) -> float:
        return self._s.now

    @property
    def free(self) -> np.ndarray:
        return self._s.free_ro

    @property
    def n_free(self) -> int:
        return self._s.n_free

    @property
    def holders(self) -> np.ndarray:
        """Running jobs per GPU (read-only numpy int array; above 1 only under time sharing)."""
        return self._s.holders_ro

    @property
    def pending(self):
        return self._s.pending_jobs()

    def is_pending(self, job_id: str) -> bool:
        return job_id in self._s.pending

    @property
    def completed(self):
        return self._s.completed.keys()

    @property
    def unschedulable(self):
        return self._s.unschedulable.keys()

    def job(self, job_id: str) -> Job:
        return self._s.jobs[job_id]

    def history(self, job_id: str) -> History:
        return self._s.history(job_id)

    def phase(self, job_id: str) -> float | None:
        """A running job's phase (ms) on a cluster with a network, else None."""
        return self._s.phase.get(job_id)

    def rate(self, job: Job, gpus) -> float:
        """The job's progress rate on these GPUs under the simulation's performance model (times
        ``len(gpus) / job.gpus`` on fewer GPUs than it asks for: an elastic start, :class:`Start`)."""
        return worker_rate(self._s.perf.rate(job, self._s.cluster.tier(gpus)), len(gpus), job.gpus)
