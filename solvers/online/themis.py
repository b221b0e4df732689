"""Themis: finish-time fairness auctions over leased GPUs (as CASSINI §4.2 and §5.1 run it).

A policy of ``placement simulate``: on a cluster with a network its jobs share links over time
(:mod:`placement.sim.links`) and ``themis+cassini`` (:mod:`solvers.online.cassini`) plugs
CASSINI in; the epoch-by-epoch testbed experiment is :mod:`solvers.cassini_testbed`.

Every lease lasts ``lease`` seconds (10 minutes, §5.1). At each scheduling call the GPUs that
are free or whose lease expired are auctioned: bidders (pending jobs and running jobs whose
lease expired) are served in decreasing finish-time fairness ``rho = T_shared / T_ideal``,
``T_shared`` = time since submission + remaining work at the job's current rate (its ideal
rate when pending), ``T_ideal`` = its work alone x ``max(1, N * gpus / G)`` (its 1/N share of
the cluster, N the jobs present). A bidder wins if its gang fits; an expired job that loses is
preempted. Placement takes the fewest machines, then one rack (the rack-crossing slowdown
penalty): :func:`placement.sim.placement.first_fit_consolidated`. The worker count is the
job's own (Themis's elastic tuning is not modelled).
"""

from __future__ import annotations

from placement.sim.placement import first_fit_consolidated
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["Themis"]


class Themis(Policy):
    """Themis: finish-time fairness auctions, 10-minute GPU leases (CASSINI §5.1)."""

    name = "themis"

    def __init__(self, lease: float = 600.0):
        if lease <= 0:
            raise ValueError(f"lease: must be > 0, got {lease}")
        self.lease = float(lease)
        self._lease_end: dict[str, float] = {}
        self.auctions = 0
        self.preemptions = 0

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
        G = view.cluster.n_gpus
        n_jobs = max(1, len(view.pending) + len(running))

        def rho(jid: str) -> float:
            job = view.job(jid)
            h = view.history(jid)
            rate = running[jid].rate if jid in running else 1.0
            left = max(0.0, job.duration - h.work_done)
            t_sh = (now - job.submit) + left / max(rate, 1e-12)
            return t_sh / (job.duration * max(1.0, n_jobs * job.gpus / G))

        bidders.sort(key=lambda j: (-rho(j), view.job(j).submit, j))
        free = view.free.copy()
        for j in expired:
            free[list(running[j].gpus)] = True
        left = int(free.sum())
        win = []
        for j in bidders:
            if view.job(j).gpus <= left:
                win.append(j)
                left -= view.job(j).gpus
        out: list = []
        won = set(win)
        for j in expired:
            if j in won:
                self._lease_end[j] = now + self.lease
                free[list(running[j].gpus)] = False  # keeps its GPUs
            else:
                out.append(Preempt(j))
                self.preemptions += 1
                self._lease_end.pop(j, None)
        for j in win:
            if j in running:
                continue
            job = view.job(j)
            gpus = first_fit_consolidated(view.cluster, free, job.gpus, job.gpu_type)
            if gpus is None:
                continue
            free[list(gpus)] = False
            out.append(Start(j, gpus))
            self._lease_end[j] = now + self.lease
        return out + self._timers(now)

    def _timers(self, now: float) -> list:
        nxt = [t for t in self._lease_end.values() if t > now + 1e-9]
        return [Timer(min(nxt), "lease")] if nxt else []

    def stats(self):
        return {"auctions": self.auctions, "preemptions": self.preemptions, "lease_s": self.lease}
