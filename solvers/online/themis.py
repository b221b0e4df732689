"""Themis: finish-time fairness auctions over leased GPUs, as CASSINI §4.2 and §5.1 run it.

A policy of ``placement simulate``: on a cluster with a network its jobs share links over time
(:mod:`placement.sim.links`) and ``themis+cassini`` (:mod:`solvers.online.cassini`) plugs
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

Differences from §5.1 (stated on the cassini page): the worker count is the job's own trace
count (Themis re-tunes it per lease from its fairness metric; the simulator's jobs are gangs of
a fixed size, ``Start`` takes exactly ``job.gpus`` GPUs); the auction is a greedy pass in
fairness order, not the arbiter's global optimisation over bids.
"""

from __future__ import annotations

from placement.sim.placement import first_fit_consolidated
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["Themis"]


class Themis(Policy):
    """Themis: finish-time fairness auctions, 10-minute GPU leases returned on expiry (CASSINI §5.1)."""

    name = "themis"

    def __init__(self, lease: float = 600.0, rack_penalty: float = 1.25):
        if not lease > 0:
            raise ValueError(f"lease: must be > 0, got {lease}")
        if not rack_penalty >= 1.0:
            raise ValueError(f"rack_penalty: must be >= 1, got {rack_penalty}")
        self.lease = float(lease)
        self.rack_penalty = float(rack_penalty)
        self._lease_end: dict[str, float] = {}
        self.auctions = 0
        self.preemptions = 0
        self.moves = 0
        self.renewals = 0

    def schedule(self, view, events):
        now = view.now
        running = dict(view.running.items())
        for jid in list(self._lease_end):
            if jid not in running:
                del self._lease_end[jid]
        expired = [j for j in running if self._lease_end.get(j, now) <= now + 1e-9]
        bidders = [j.id for j in view.pending] + expired
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
                rate = 1.0 / (self.rack_penalty if job.gpus > 1 and max(rack_free) < job.gpus else 1.0)
            t_sh = (now - job.submit) + left / max(rate, 1e-12)
            return t_sh / (job.duration * max(1.0, n_jobs * job.gpus / G))

        bidders.sort(key=lambda j: (-rho(j), view.job(j).submit, j))
        left = int(free.sum())
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
            gpus = first_fit_consolidated(cluster, free, job.gpus, job.gpu_type)
            if gpus is not None and j in running and _racks(cluster, running[j].gpus) <= _racks(cluster, gpus):
                gpus = tuple(running[j].gpus)   # no better placement: it keeps its GPUs (no move)
            if gpus is None:
                if j in running:                # cannot happen (its own GPUs were returned); be safe
                    out.append(Preempt(j))
                    self.preemptions += 1
                continue
            free[list(gpus)] = False
            self._lease_end[j] = now + self.lease
            if j in running:
                if tuple(gpus) == tuple(running[j].gpus):
                    self.renewals += 1
                    continue
                out.append(Preempt(j))          # moved: gives up its servers, restarts on the new ones
                self.moves += 1
            out.append(Start(j, gpus))
        # preemptions first, so GPUs a moved job gave up are free for the starts of this call
        out = [d for d in out if isinstance(d, Preempt)] + [d for d in out if not isinstance(d, Preempt)]
        return out + self._timers(now)

    def _timers(self, now: float) -> list:
        nxt = [t for t in self._lease_end.values() if t > now + 1e-9]
        return [Timer(min(nxt), "lease")] if nxt else []

    def stats(self):
        return {"auctions": self.auctions, "preemptions": self.preemptions, "moves": self.moves,
                "renewals": self.renewals, "lease_s": self.lease, "rack_penalty": self.rack_penalty}


def _racks(cluster, gpus) -> int:
    return len({int(cluster.rack[g]) for g in gpus})


def _per_rack(cluster, free) -> list[int]:
    import numpy as np

    return np.bincount(cluster.rack, weights=free.astype(np.int64), minlength=len(cluster.rack_names)).tolist()
