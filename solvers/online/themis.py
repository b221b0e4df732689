"""Themis: finish-time fairness auctions over leased GPUs, as CASSINI §4.2 and §5.1 run it.

A policy of ``placement simulate``: on a cluster with a network its jobs share links over time
(:mod:`placement.sim.links`) and ``themis+cassini`` (:mod:`placement.solvers.online.cassini`) plugs
CASSINI in.

Leases (§5.1: "An assignment of GPU servers is valid until the period of lease time. When the
lease time expires, the job gives up the server, and a new auction is conducted for all the
released servers"). Every lease lasts ``lease`` seconds (10 minutes). At each scheduling call
the GPUs that are free or whose lease expired are auctioned: bidders (pending jobs and running
jobs whose lease expired, which have given their GPUs back) are served in decreasing
finish-time fairness ``rho = T_shared / T_ideal``; ``T_shared`` = time since submission +
remaining work at the job's current rate (its ideal rate when pending, times ``rack_penalty``
when the free GPUs cannot hold it in one rack), ``T_ideal`` = its work alone x
``max(1, N * gpus / G)`` (its 1/N share of the cluster, N the jobs present). A bidder wins if
its gang fits the GPUs left. Every winner is placed afresh on the auctioned GPUs, so a job whose
lease expired may come back on other GPUs (preempted and restarted there in the same instant,
keeping its work) or lose them to a fairer job (preempted, pending again).

Placement and the rack penalty (§4.2: "Themis uses a slowdown penalty based on whether the
workers are under the same rack or across racks"): a winner takes the fewest machines, then one
rack, then one dynamic cluster (:func:`placement.sim.placement.first_fit_consolidated`); the
penalty (``rack_penalty``, our value 1.25: the paper does not give Themis's) enters the fairness
estimate of a bidder that cannot get one rack. A job whose lease expired and wins again keeps
its GPUs unless the new placement spans fewer racks (ties go to the GPUs it holds: moving costs a
restart); so expiries move jobs that were fragmented when they started onto freed racks.

Elastic workers (``elastic=True``, §5.1: "When a job arrives, its initial number of requested
workers is randomly selected between 1 to 12 GPUs. As the experiment progresses, the number of
workers is automatically tuned based on Themis's finish-time-fairness metric"): at every auction
a winner gets ``w`` of its ``g`` requested GPUs, ``1 <= w <= g``, and runs ``w`` workers at
``w / g`` of its rate (linear data-parallel scaling, :class:`placement.sim.policy.Start`). The
split is Themis's arbiter (Themis, NSDI'20, §4-5) as we read it: the auctioned GPUs are offered
to the ``1 - f`` fraction of bidders with the largest ``rho`` (at least one; ``f`` is Themis's
fairness knob, ``fairness`` here, our value 0.8), which share them by the partial-allocation
mechanism; with valuations linear in workers (a job's rate is ``w / g`` of its full rate), the
allocation that maximises the product of the valuations gives them equal counts capped at each
ask (one GPU at a time in decreasing ``rho``); what is left goes to the other bidders in
decreasing ``rho``, each up to its ask (Themis's work-conserving leftover allocation). A job
whose lease expired gives its servers back: the winners are placed in decreasing ``rho`` on the
pooled GPUs, so a fairer job may take a returning job's servers; the returning job keeps its
GPUs only when it wins the same worker count, they are all still unclaimed, and no placement
spans fewer racks; otherwise it restarts on other GPUs (preempted and started in the same
instant, keeping its work), with more or fewer workers. A running job's ``rho`` uses its current
rate (its ``w / g`` included), so a job cut short bids higher. A running job below its ask also
bids, for its missing workers, whenever GPUs are free (Themis's agents keep bidding while a job
could use more; its lease holds what it has): when it wins ``k`` more it restarts at once on its
GPUs plus ``k`` free ones (a new lease). Off by
default (``themis`` keeps fixed gangs: the logs of earlier runs stay the same).

Phase spread (``phase_spread``, default 1: the engine's start-time phases): on a cluster with a
network every job this policy starts settles at :func:`placement.sim.links.spread_phase` (a
``shift`` row in the log), the link model's phase dynamics of network-agnostic jobs; the CASSINI
reproduction fits it to Themis's slowdown over Ideal.

The auction's reassignment for CASSINI (:mod:`placement.solvers.online.cassini`, §4.2 step 1):
``expired_now`` lists the running jobs whose lease expired at the current call (the winners
among them that kept their GPUs join the candidates' winners, their GPUs the pool).

Random placement (``placement="random"``; default ``"consolidated"``): the same auctions,
leases and worker counts, each winner's GPUs drawn uniformly at random among the free GPUs of
its type (seeded by the run's seed), no rack penalty: CASSINI §5.1's Random baseline ("places
workers for each job randomly") in Themis's elastic regime, so Random and Themis differ only in
where workers go.

Differences from §5.1 (stated on the cassini page): without ``elastic`` the worker count is the
job's own trace count (a gang of fixed size); the elastic split above is our reading of
Themis's partial-allocation auction (bids are the linear valuations, not the agents' own
estimates); the rate of ``w`` workers is linear in ``w`` (no statistical-efficiency or
batch-size effect).
"""

from __future__ import annotations

import math

import numpy as np

from placement.sim.links import phase_shifts
from placement.sim.placement import first_fit_consolidated, usable_mask
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["Themis"]


class Themis(Policy):
    """Themis: finish-time fairness auctions, 10-minute GPU leases returned on expiry, optionally elastic workers (CASSINI §5.1)."""

    name = "themis"

    def __init__(self, lease: float = 600.0, rack_penalty: float = 1.25, elastic: bool = False,
                 fairness: float = 0.8, phase_spread: float = 1.0, placement: str = "consolidated"):
        if not lease > 0:
            raise ValueError(f"lease: must be > 0, got {lease}")
        if not rack_penalty >= 1.0:
            raise ValueError(f"rack_penalty: must be >= 1, got {rack_penalty}")
        self.lease = float(lease)
        self.rack_penalty = float(rack_penalty)
        if not 0.0 <= fairness < 1.0:
            raise ValueError(f"fairness: must be in [0, 1), got {fairness}")
        self.elastic = bool(elastic)
        self.fairness = float(fairness)
        if not 0.0 <= float(phase_spread) <= 1.0:
            raise ValueError(f"phase_spread: must be in [0, 1], got {phase_spread}")
        self.phase_spread = float(phase_spread)
        if placement not in ("consolidated", "random"):
            raise ValueError(f"placement: must be 'consolidated' or 'random', got {placement!r}")
        self.placement = placement
        self._place_rng = np.random.default_rng(0)
        self._lease_end: dict[str, float] = {}
        self.expired_now: tuple[str, ...] = ()   # jobs whose lease expired at this call (CASSINI's reassignment)
        self.auctions = 0
        self.preemptions = 0
        self.moves = 0
        self.renewals = 0
        self.resized = 0          # winners given another worker count than they run / asked for
        self.partial_starts = 0   # starts on fewer GPUs than the job asks for
        self.grown = 0            # running jobs given more workers before their lease ended

    def setup(self, view, seed: int) -> None:
        super().setup(view, seed)
        self._place_rng = np.random.default_rng(seed)

    def _place(self, cluster, free, n: int, gpu_type):
        """``n`` free GPUs of ``gpu_type``: consolidated (fewest machines, one rack, one dynamic
        cluster) or, with ``placement="random"``, uniformly drawn; None when too few are free."""
        if self.placement == "consolidated":
            return first_fit_consolidated(cluster, free, n, gpu_type)
        ids = np.flatnonzero(usable_mask(cluster, free, gpu_type))
        if len(ids) < n:
            return None
        return tuple(sorted(int(x) for x in self._place_rng.choice(ids, size=n, replace=False)))

    def schedule(self, view, events):
        out = self._auction(view)
        return out + phase_shifts(view, out, self.phase_spread)

    def _auction(self, view):
        now = view.now
        running = dict(view.running.items())
        for jid in list(self._lease_end):
            if jid not in running:
                del self._lease_end[jid]
        expired = [j for j in running if self._lease_end.get(j, now) <= now + 1e-9]
        self.expired_now = tuple(expired)
        bidders = [j.id for j in view.pending] + expired
        grow: dict[str, int] = {}   # elastic: running jobs below their ask bid for more GPUs
        if self.elastic and view.n_free:
            gone = set(expired)
            grow = {j: view.job(j).gpus - len(r.gpus) for j, r in running.items()
                    if j not in gone and len(r.gpus) < view.job(j).gpus}
            bidders += list(grow)
        if not bidders:
            return self._timers(now)
        self.auctions += 1
        cluster = view.cluster
        G = cluster.n_gpus
        n_jobs = max(1, len(view.pending) + len(running))
        free = view.free.copy()
        for j in expired:                       # expired leases give their GPUs back
            free[list(running[j].gpus)] = True
        rack_free = _per_rack(cluster, free)

        def rho(jid: str) -> float:
            job = view.job(jid)
            left = max(0.0, job.duration - view.history(jid).work_done)
            if jid in running:
                rate = running[jid].rate
            else:
                penalty = self.rack_penalty if self.placement == "consolidated" else 1.0
                rate = 1.0 / (penalty if job.gpus > 1 and max(rack_free) < job.gpus else 1.0)
            t_sh = (now - job.submit) + left / max(rate, 1e-12)
            return t_sh / (job.duration * max(1.0, n_jobs * job.gpus / G))

        bidders.sort(key=lambda j: (-rho(j), view.job(j).submit, j))
        left = int(free.sum())
        want: dict[str, int] = {}
        if self.elastic:
            counts = _elastic_split([grow.get(j) or view.job(j).gpus for j in bidders], left, self.fairness)
            want = {j: k for j, k in zip(bidders, counts, strict=True) if k}
            win = [j for j in bidders if j in want]
        else:
            win = []
            for j in bidders:
                if view.job(j).gpus <= left:
                    win.append(j)
                    left -= view.job(j).gpus
        won = set(win)
        out: list = []
        for j in expired:
            if j not in won:
                out.append(Preempt(j))
                self.preemptions += 1
                self._lease_end.pop(j, None)
        for j in win:
            job = view.job(j)
            if j in grow:                       # more workers: its GPUs and the extra ones won
                extra = self._place(cluster, free, want[j], job.gpu_type)
                if extra is None:
                    continue
                free[list(extra)] = False
                self._lease_end[j] = now + self.lease
                self.grown += 1
                self.partial_starts += len(running[j].gpus) + len(extra) < job.gpus
                out += [Preempt(j), Start(j, tuple(sorted(running[j].gpus + tuple(extra))))]
                continue
            n = want.get(j, job.gpus)
            gpus = self._place(cluster, free, n, job.gpu_type)
            if (gpus is not None and j in running and len(running[j].gpus) == n
                    and free[list(running[j].gpus)].all()
                    and _racks(cluster, running[j].gpus) <= _racks(cluster, gpus)):
                gpus = tuple(running[j].gpus)   # no better placement: it keeps its GPUs (no move)
            if gpus is None:
                if j in running:                # cannot happen (its own GPUs were returned); be safe
                    out.append(Preempt(j))
                    self.preemptions += 1
                continue
            free[list(gpus)] = False
            self._lease_end[j] = now + self.lease
            self.resized += n != (len(running[j].gpus) if j in running else job.gpus)
            if j in running:
                if tuple(gpus) == tuple(running[j].gpus):
                    self.renewals += 1
                    continue
                out.append(Preempt(j))          # moved: gives up its servers, restarts on the new ones
                self.moves += 1
            self.partial_starts += n < job.gpus
            out.append(Start(j, gpus))
        # preemptions first, so GPUs a moved job gave up are free for the starts of this call
        out = [d for d in out if isinstance(d, Preempt)] + [d for d in out if not isinstance(d, Preempt)]
        return out + self._timers(now)

    def _timers(self, now: float) -> list:
        nxt = [t for t in self._lease_end.values() if t > now + 1e-9]
        return [Timer(min(nxt), "lease")] if nxt else []

    def stats(self):
        return {"auctions": self.auctions, "preemptions": self.preemptions, "moves": self.moves,
                "renewals": self.renewals, "lease_s": self.lease, "rack_penalty": self.rack_penalty,
                **({"phase_spread": self.phase_spread} if self.phase_spread < 1 else {}),
                **({"placement": self.placement} if self.placement != "consolidated" else {}),
                **({"elastic": True, "fairness": self.fairness, "resized": self.resized,
                    "partial_starts": self.partial_starts, "grown": self.grown}
                   if self.elastic else {})}


def _elastic_split(asks: list[int], supply: int, fairness: float) -> list[int]:
    """Worker counts of the elastic auction (module docstring), bidders in decreasing ``rho``
    asking ``asks`` GPUs for ``supply`` GPUs: the first ``max(1, ceil((1 - fairness) * n))``
    share them equally (one GPU at a time in order, each up to its ask), then the others in
    order take what is left, each up to its ask."""
    got = [0] * len(asks)
    k = max(1, math.ceil((1.0 - fairness) * len(asks) - 1e-9))
    while supply > 0:
        took = False
        for i in range(min(k, len(asks))):
            if supply > 0 and got[i] < asks[i]:
                got[i] += 1
                supply -= 1
                took = True
        if not took:
            break
    for i in range(k, len(asks)):
        got[i] = min(asks[i], supply)
        supply -= got[i]
    return got


def _racks(cluster, gpus) -> int:
    return len({int(cluster.rack[g]) for g in gpus})


def _per_rack(cluster, free) -> list[int]:
    import numpy as np

    return np.bincount(cluster.rack, weights=free.astype(np.int64), minlength=len(cluster.rack_names)).tolist()
