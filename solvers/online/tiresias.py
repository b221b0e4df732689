"""Tiresias baseline: discretized 2D-LAS priority queues with preemption and skew-based consolidation.

Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning",
NSDI'19, as the Dally paper uses it (§3.4, §5.1.3), and as its authors'
simulator runs it (SymbioticLab/Tiresias, ``simulator/``: ``run_sim.py``
``dlas_sim_jobs`` with the ``dlas-gpu`` scheme, ``jobs.py``, ``cluster.py``).
Rule by rule, with its source:

Priority (Tiresias §4.2, Discretized 2D-LAS)
    A job's attained service is its executed time x its GPUs (2DAS; Dally
    §3.4). Jobs sit in K queues; a job enters Q0 and moves to Q(k+1) when its
    attained service reaches ``queue_limits[k]``. Queues are served in order.
    Defaults ``queue_limits=(3250, 7200)``: three queues, as the authors'
    simulator runs ``dlas-gpu`` (``jobs.py``: ``num_queue = 3``,
    ``queue_limit = [3250, 7200, 18000]``, of which a three-queue run uses the
    first two; the paper does not restate its thresholds).
Order within a queue (the authors' simulator)
    Each queue is a list, kept as theirs is: a job joins the end of a queue
    when it arrives, is demoted or is promoted, and after every scheduling
    round the jobs left waiting move behind the running ones, keeping their
    order (``dlas_sim_jobs``). So running jobs stay ahead of waiting ones,
    and a job preempted in a round leads the waiting jobs of its queue.
    ``queue_order="lists"``: the Pollux authors' ``simulator/tiresias.py`` (petuum/adaptdl): a
    job joins the end of its queue's list on arrival, demotion and promotion only, and keeps its
    place otherwise (a preempted or waiting job is not moved behind the running).
Service accounting
    A preempted job's executed time is credited up to the preemption, as the
    simulator's per-event update does (the next policy call may come later).
Starvation (Tiresias §4.2, PROMOTEKNOB)
    A waiting job with service is promoted back to Q0 (its executed time
    reset) when it has waited ``promote_knob`` x its executed time since it
    last ran. Default 0 = off, the simulator's default.
Preemption
    Each round, the jobs that should run are chosen in priority order by GPU
    count (as the simulator does); a running job outside that set is
    preempted. Our refinement: a victim is only preempted if a higher-priority
    job actually gets its GPUs this round (with consolidated placement a job
    chosen by count may not be placeable; the simulator counts GPUs only and
    never leaves a chosen job unplaced). Free GPUs left over go to further
    waiting jobs in priority order (work conserving), including a victim's GPUs
    that the job preempting it does not take (the simulator frees all of them; the
    mean JCT of the reference run below is unchanged by this, 22,633 s).
Placement (Tiresias §4.3, skew-based consolidation; Dally §3.2)
    High-skew models (Dally Table 1: VGG11, AlexNet, MobileNetV3) are
    consolidated on the fewest machines possible, :math:`\\lceil g/8 \\rceil`,
    and wait otherwise. With ``placement="rack"`` (default) those machines
    lie under one rack switch whenever the job fits a rack, as the
    simulator's ``ms_yarn_placement`` takes all of a job's GPUs from one
    switch (it takes the first switch that can hold the job and whole
    machines plus one for the remainder; we take the rack with the fewest
    free GPUs that holds the job on the fewest machines). ``placement=
    "anywhere"`` is the earlier rule: the fewest machines with the most free
    GPUs anywhere in the cluster, which can spread a job over racks. Other
    models take GPUs wherever they are free, the most consolidated tier
    available right now (one machine, else one rack, else the network),
    without waiting.
Strict consolidation (``consolidation="wait"``; the Dally paper's reading, §3.4 (ii): "restricting
    the job placement to ... the fewest machines possible (for high skewed models) may lead to
    high queueing delays in case the former is not available")
    A high-skew job takes only GPUs that are free: it never preempts lower-priority jobs to
    build its consolidated placement, and waits (without holding GPUs; later jobs may start)
    until a consolidated placement is free. Other jobs preempt as by default. Default
    ``"preempt"``: a chosen job may take GPUs of running jobs outside the chosen set. The
    authors' simulator has this rule only in a commented-out block of ``dlas_sim_jobs`` (every
    round, jobs re-placed in queue order with ``ms_yarn_placement``, a job that does not fit
    skipped); its active ``dlas-gpu`` path counts GPUs (``--scheme=count``), so neither
    option's placement can be checked against a run of it; tests check the rule on hand
    schedules.

Scheduling rounds (``round_interval``; the Pollux authors' simulator, ``simulator.py``)
    Default 0: the policy re-plans at every event (an arrival, a finish, a demotion), as the
    Tiresias authors' simulator does. ``round_interval=R`` > 0: it re-plans only at the times
    ``k R`` (k = 0, 1, ...), as petuum/adaptdl's ``simulator/simulator.py`` steps every job by 60 s
    and calls ``TiresiasPolicy.optimize`` once per step: a job arriving between two rounds waits for
    the next, GPUs a finishing job frees stay idle until then, and demotions (and promotions) are
    checked at the rounds only. Between rounds the policy only keeps its accounts.

Statistics: demotions, promotions, preemptions, skew waits, starts per tier, rounds.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from placement.options import NonNegFloat, PosFloat
from placement.sim.placement import MACHINE, NETWORK, RACK, Shape, choose_gpus, usable_mask
from placement.sim.policy import Policy, Preempt, Start, Timer
from placement.validate import check_bool, check_number

__all__ = ["Tiresias", "HIGH_SKEW", "QUEUE_LIMITS"]

HIGH_SKEW = frozenset({"vgg11", "alexnet", "mobilenetv3"})  # Dally Table 1, "Skew" column
QUEUE_LIMITS = (3250.0, 7200.0)  # the authors' simulator, jobs.py (3 queues)


def _norm(model: str | None) -> str:
    return (model or "").lower().replace("-", "").replace("_", "").replace(" ", "")


class Tiresias(Policy):
    """Tiresias: discretized two-dimensional least attained service, consolidated placement.

    See the module docstring.

    Parameters
    ----------
    queue_limits : tuple of float
        Attained-service thresholds between consecutive queues (GPU-seconds when
        ``gpu_time``, else seconds); K = len + 1 queues.
    gpu_time : bool
        2D-LAS (executed time x GPUs, default) or plain LAS (executed time).
    promote_knob : float
        PROMOTEKNOB; 0 disables starvation promotion.
    high_skew : set of str
        Models consolidated strictly (case and punctuation ignored).
    placement : {"rack", "anywhere"}
        Where a consolidated job's machines may lie: under one rack switch when the
        job fits a rack (the authors' simulator), or anywhere (see the module docstring).
    consolidation : {"preempt", "wait"}
        Whether a high-skew job may preempt for its consolidated placement, or waits for
        one to be free (strict consolidation; module docstring).
    round_interval : float
        Seconds between scheduling rounds (0: at every event; module docstring).
    queue_order : {"tiresias", "lists"}
        Whether the waiting move behind the running after each round (the Tiresias authors'
        simulator) or every job keeps its place in its queue's list (the Pollux authors').
    """

    name = "tiresias"

    def __init__(self, queue_limits: tuple[PosFloat, ...] = QUEUE_LIMITS, gpu_time: bool = True,
                 promote_knob: NonNegFloat = 0.0, high_skew: frozenset[str] = HIGH_SKEW,
                 placement: Literal["rack", "anywhere"] = "rack",
                 consolidation: Literal["preempt", "wait"] = "preempt", round_interval: NonNegFloat = 0.0,
                 queue_order: Literal["tiresias", "lists"] = "tiresias"):
        from placement.errors import InstanceError

        if not isinstance(queue_limits, (list, tuple)):
            raise InstanceError("queue_limits", f"must be a list of GPU-seconds, got {queue_limits!r}")
        limits = tuple(check_number(f"queue_limits[{i}]", x, 1e-9) for i, x in enumerate(queue_limits))
        if any(b <= a for a, b in zip(limits, limits[1:], strict=False)):
            raise InstanceError("queue_limits", "must be increasing")
        self.limits = limits
        self.gpu_time = check_bool("gpu_time", gpu_time)
        self.knob = check_number("promote_knob", promote_knob, 0.0)
        if isinstance(high_skew, str) or not all(isinstance(m, str) for m in high_skew):
            raise InstanceError("high_skew", f"must be a list of model names, got {high_skew!r}")
        self.high_skew = frozenset(_norm(m) for m in high_skew)
        if placement not in ("rack", "anywhere"):
            raise InstanceError("placement", f"must be 'rack' or 'anywhere', got {placement!r}")
        self.placement = placement
        if consolidation not in ("preempt", "wait"):
            raise InstanceError("consolidation", f"must be 'preempt' or 'wait', got {consolidation!r}")
        self.strict = consolidation == "wait"
        self.round = check_number("round_interval", round_interval, 0.0)
        if queue_order not in ("tiresias", "lists"):
            raise InstanceError("queue_order", f"must be 'tiresias' or 'lists', got {queue_order!r}")
        self.lists = queue_order == "lists"
        self._armed: float | None = None        # the next round's time (round_interval > 0)
        self._shape: Shape | None = None
        self._rack_machines: list[np.ndarray] = []
        self._executed: dict[str, float] = {}   # executed time (s) counted for the queue, finished attempts
        self._queue: dict[str, int] = {}
        self._ticket: dict[str, int] = {}       # position in its queue's list (larger = further back)
        self._tickets = 0
        self._last_run_end: dict[str, float] = {}
        self._attempt: dict[str, float] = {}    # running job -> start of the attempt
        self._stats = {"demotions": 0, "promotions": 0, "preemptions": 0, "skew_waits": 0,
                       "start_machine": 0, "start_rack": 0, "start_network": 0, "rounds": 0}

    def _service(self, jid: str, gpus: int, now: float) -> float:
        t = self._executed.get(jid, 0.0)
        if jid in self._attempt:
            t += now - self._attempt[jid]
        return t * gpus if self.gpu_time else t

    def _update_queues(self, view, now: float) -> None:
        for jid in list(self._attempt):
            if jid not in view.running:
                self._executed[jid] = self._executed.get(jid, 0.0) + now - self._attempt.pop(jid)
                self._last_run_end[jid] = now
        for jid, r in view.running.items():
            self._attempt.setdefault(jid, float(r.start))
        active = sorted(list(view.pending) + [view.job(j) for j in view.running], key=lambda j: (j.submit, j.id))
        for job in active:
            if job.id not in self._queue:
                self._queue[job.id] = 0
                self._to_back(job.id)
            q = self._queue[job.id]
            while q < len(self.limits) and self._service(job.id, job.gpus, now) >= self.limits[q] - 1e-9:
                q += 1
                self._stats["demotions"] += 1
                self._queue[job.id] = q
                self._to_back(job.id)
            if (self.knob > 0 and q > 0 and job.id not in view.running and self._executed.get(job.id, 0) > 0
                    and now - self._last_run_end.get(job.id, now) >= self.knob * self._executed[job.id]):
                self._queue[job.id] = 0
                self._executed[job.id] = 0.0
                self._to_back(job.id)
                self._stats["promotions"] += 1

    def _to_back(self, jid: str) -> None:
        """Append to the end of its queue's list (arrival, demotion, promotion, or still waiting)."""
        self._tickets += 1
        self._ticket[jid] = self._tickets

    def _place(self, job, avail: np.ndarray) -> np.ndarray | None:
        sh = self._shape
        if _norm(job.model) in self.high_skew:
            if job.gpus <= sh.gpus_per_machine:
                return choose_gpus(avail, sh.machine, sh.rack, job.gpus, MACHINE)
            need = -(-job.gpus // sh.gpus_per_machine)  # the fewest machines possible
            m_free, _ = sh.free_counts(avail)
            if self.placement == "rack" and job.gpus <= sh.gpus_per_rack:
                return self._one_rack(job.gpus, need, avail, m_free)
            order = np.lexsort((np.arange(len(m_free)), -m_free))[:need]
            if m_free[order].sum() < job.gpus:
                return None
            return self._take(order, avail, job.gpus)
        for tier in (MACHINE, RACK, NETWORK):
            g = choose_gpus(avail, sh.machine, sh.rack, job.gpus, tier)
            if g is not None:
                return g
        return None

    def _one_rack(self, gpus: int, need: int, avail: np.ndarray, m_free: np.ndarray) -> np.ndarray | None:
        """``need`` machines of one rack holding ``gpus`` GPUs: the rack with the fewest free
        GPUs that can (best fit, ties to the lower index), its fullest-free machines first."""
        best = None
        for ms in self._rack_machines:
            f = m_free[ms]
            order = np.lexsort((ms, -f))[:need]
            if f[order].sum() >= gpus and (best is None or f.sum() < best[0]):
                best = (int(f.sum()), ms[order])
        return None if best is None else self._take(best[1], avail, gpus)

    def _take(self, machines: np.ndarray, avail: np.ndarray, gpus: int) -> np.ndarray:
        out: list[int] = []
        for m in machines:
            out.extend(np.flatnonzero(avail & (self._shape.machine == m)).tolist())
        return np.sort(np.array(out[:gpus]))

    def schedule(self, view, events) -> list:
        if self._shape is None:
            self._shape = sh = Shape.from_arrays(view.cluster.machine, view.cluster.rack)
            m_rack = np.zeros(int(sh.machine.max()) + 1, dtype=np.int64)
            m_rack[sh.machine] = sh.rack
            self._rack_machines = [np.flatnonzero(m_rack == r) for r in range(sh.racks)]
        sh = self._shape
        now = float(view.now)
        self._update_queues(view, now)
        if self.round > 0:
            k = now / self.round
            if abs(k - round(k)) > 1e-9 * max(1.0, k):   # between rounds: wait for the next one
                return self._arm(float(np.ceil(k) * self.round))
            self._stats["rounds"] += 1
            self._armed = None
        jobs = [j for j in view.pending if j.gpus <= sh.total] + [view.job(j) for j in view.running]
        running = view.running
        jobs.sort(key=lambda j: (self._queue[j.id], self._ticket[j.id]))
        cap = sh.total
        should: set[str] = set()
        for j in jobs:
            if j.gpus <= cap:
                should.add(j.id)
                cap -= j.gpus
        free = np.array(view.free, dtype=bool)
        owner = np.full(sh.total, "", dtype=object)
        for jid, r in view.running.items():
            owner[list(r.gpus)] = jid
        keep = np.zeros(sh.total, dtype=bool)   # GPUs of running jobs that should run
        for jid in should:
            if jid in view.running:
                keep[list(view.running[jid][0])] = True
        avail = ~keep                             # free, or held by a job that should not run
        decisions: list = []
        victims: set[str] = set()
        starts: list[tuple[Any, np.ndarray]] = []
        n_avail, n_free = int(avail.sum()), int((avail & free).sum())
        for j in jobs:
            if j.id in running:
                continue
            # within the chosen set first, then backfill on genuinely free GPUs
            chosen = j.id in should and not (self.strict and _norm(j.model) in self.high_skew)
            if j.gpus > (n_avail if chosen else n_free):
                continue   # cannot fit whatever the placement: skip the placement search
            pool = avail if chosen else avail & free
            g = self._place(j, usable_mask(view.cluster, pool, j.gpu_type))  # its GPU type only
            if g is None:
                if _norm(j.model) in self.high_skew:
                    self._stats["skew_waits"] += 1
                continue
            n_avail -= g.size
            n_free -= int(free[g].sum())
            avail[g] = False
            free[g] = False
            for v in set(owner[g].tolist()) - {""}:
                if v not in victims:   # its other GPUs are freed by the preemption: later jobs may use them
                    victims.add(v)
                    rest = avail & (owner == v) & ~free
                    free[rest] = True
                    n_free += int(rest.sum())
            starts.append((j, g))
        for v in sorted(victims):
            decisions.append(Preempt(v))
            self._stats["preemptions"] += 1
            self._executed[v] = self._executed.get(v, 0.0) + now - self._attempt.pop(v)  # credited at the preemption
            self._last_run_end[v] = now
        for j, g in starts:
            self._stats[f"start_{sh.tier_of(g)}"] += 1
            decisions.append(Start(j.id, tuple(int(x) for x in g)))
        started = {j.id for j, _ in starts}
        for j in jobs:   # the waiting go behind the running in each queue, in their order
            if not self.lists and ((j.id in victims) or (j.id not in running and j.id not in started)):
                self._to_back(j.id)
        if self.round > 0:
            if len(view.pending) > len(started) or view.running or started:
                decisions += self._arm(now + self.round)
            return decisions
        nxt = self._next_jump(view, now, started)
        if nxt is not None:
            decisions.append(Timer(nxt, "tiresias-queue"))
        return decisions

    def _arm(self, at: float) -> list:
        """A timer for the round at ``at`` unless one is set for it already."""
        if self._armed is not None and self._armed <= at + 1e-9:
            return []
        self._armed = at
        return [Timer(at, "tiresias-round")]

    def _next_jump(self, view, now: float, started: set[str]) -> float | None:
        """The next demotion (or promotion) time, for a wake-up (the simulator's ``next_job_jump``)."""
        best = None
        for jid in list(view.running) + sorted(started):
            job = view.job(jid)
            q = self._queue[jid]
            if q >= len(self.limits):
                continue
            rate = job.gpus if self.gpu_time else 1
            at = now + max(self.limits[q] - self._service(jid, job.gpus, now), 0.0) / rate
            if jid not in self._attempt:  # starting now
                at = now + max(self.limits[q] - self._executed.get(jid, 0.0) * rate, 0.0) / rate
            if at > now and (best is None or at < best):
                best = at
        if self.knob > 0:
            for job in view.pending:
                if job.id in started or self._queue.get(job.id, 0) == 0 or self._executed.get(job.id, 0) <= 0:
                    continue
                at = self._last_run_end.get(job.id, now) + self.knob * self._executed[job.id]
                if at > now and (best is None or at < best):
                    best = at
        return best

    def stats(self) -> dict[str, Any]:
        return dict(self._stats)
