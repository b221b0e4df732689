"""Dally's delay-scheduling pieces as pure functions (Dally §4.3, Algorithms 1 and 2).

Terms
-----
offer
    The GPUs free right now, seen as free counts per machine and per rack
    (Dally §4.3: the global scheduler makes "resource offers" to waiting jobs).
tier
    Where an accepted placement lies: ``"machine"`` (one machine), ``"rack"``
    (one rack, several machines), ``"network"`` (several racks).
starvation
    :math:`T_{starvation} = T_{curr} - T_{last\\_assignment}` (Algorithm 1,
    lines 1-2): time since the job last lost or never had resources. Our
    choice where the paper is silent: for a job that never ran it is the
    time since submission; for a preempted job, the time since the preemption.
delay timers
    :math:`T_{Mc}` (machine) and :math:`T_{Rk}` (rack), both compared with
    the whole starvation time (the paper's manual default is 12 h and "another
    12 h", i.e. :math:`T_{Mc}` = 12 h, :math:`T_{Rk}` = 24 h).

Contents
--------
:func:`fit_timers`   timers 0 where the job cannot fit the tier (§4.3.2).
:func:`on_offer`     Algorithm 1, line by line (accept at a tier, or reject and say until when).
:class:`AutoTuner`   Algorithm 2: per (tier, GPU demand) wait lists, a history window,
                     mean + 2 sample standard deviations.
:func:`nw_sens`      :math:`Nw_{sens} = W_{compl} / T_{norm}` (§4.3.1);
:func:`offer_order`  jobs in increasing :math:`Nw_{sens}`.
:func:`choose_gpus`  which free GPUs an accepted offer allocates at its tier (our rule: best fit).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["Shape", "Timers", "Decision", "fit_timers", "on_offer", "AutoTuner", "nw_sens", "offer_order",
           "choose_gpus", "MANUAL_TIMERS", "HOUR", "check_number", "check_bool", "as_timers"]

HOUR = 3600.0
MACHINE, RACK, NETWORK = "machine", "rack", "network"


@dataclass(frozen=True)
class Timers:
    """Delay timers in seconds of starvation: :math:`T_{Mc}` and :math:`T_{Rk}` (cumulative)."""

    machine: float
    rack: float


MANUAL_TIMERS = Timers(12 * HOUR, 24 * HOUR)  # Dally §4.3.2: 12 h machine, another 12 h rack


@dataclass(frozen=True)
class Decision:
    """Answer of Algorithm 1 to one offer.

    ``accept``: whether the job takes GPUs; ``tier``: the tier it takes them at;
    ``record``: the wait list to update (``"machine"``/``"rack"``, lines 7 and 15;
    ``None`` for a network placement, which Algorithm 1 does not record);
    ``retry_at``: for a reject by a timer, the starvation at which that timer
    elapses (the answer to the same offer changes then); ``None`` when the offer
    simply holds too few GPUs.
    """

    accept: bool
    tier: str | None = None
    record: str | None = None
    retry_at: float | None = None


def fit_timers(gpus: int, timers: Timers, gpus_per_machine: int, gpus_per_rack: int) -> Timers:
    """Timers with 0 where the job cannot fit the tier (Dally §4.3.2).

    "A job that cannot fit on a single machine will have a machine-level delay
    timer set to 0, and ... a job that cannot fit on a single rack will have
    both delay timers set to 0."
    """
    if gpus > gpus_per_rack:
        return Timers(0.0, 0.0)
    if gpus > gpus_per_machine:
        return Timers(0.0, timers.rack)
    return timers


def on_offer(gpus: int, starvation: float, timers: Timers, machine_free_max: int, rack_free_max: int,
             total_free: int) -> Decision:
    """Algorithm 1 ("On Resource Offer") for a job demanding ``gpus`` GPUs.

    ``machine_free_max`` / ``rack_free_max`` are the most free GPUs of the offer
    on one machine / one rack, ``total_free`` all of them. Lines 5-8: fits one
    machine -> accept there (record the wait at machine level). Lines 10-12:
    machine timer not elapsed -> reject. Lines 13-17: fits one rack -> accept
    (record at rack level). Lines 18-20: rack timer not elapsed -> reject.
    Lines 21-22: accept on the network. Our addition: an offer with fewer free
    GPUs than the demand is rejected (Algorithm 1 assumes it can allocate).
    """
    if gpus <= machine_free_max:                      # line 5
        return Decision(True, MACHINE, MACHINE)       # lines 6-8
    if starvation < timers.machine:                   # line 10
        return Decision(False, retry_at=timers.machine)  # line 11
    if gpus <= rack_free_max:                         # line 13
        return Decision(True, RACK, RACK)             # lines 14-16
    if starvation < timers.rack:                      # line 18
        return Decision(False, retry_at=timers.rack)  # line 19
    if gpus <= total_free:
        return Decision(True, NETWORK, None)          # lines 21-22
    return Decision(False)


class AutoTuner:
    """Algorithm 2 ("Get Tuned Timers") with the wait lists of Algorithm 1 (lines 7, 15).

    One list per (tier, GPU demand). ``record`` appends the starvation time of
    a job that accepted an offer at that tier (``update_demand_delay``).
    ``timers`` prunes the lists (lines 2-6, 8-12) and returns, per tier,
    ``mean + 2 * sample standard deviation`` of what remains (lines 13-14).

    Parameters
    ----------
    history : float
        HISTORY_TIME_LIMIT in seconds. The pseudo-code compares each listed
        ``time`` with it; the text calls it a "sliding window" whose size should
        shrink in larger clusters "because more jobs get placed over time".
        ``window="age"`` (default, our reading of the text) drops entries
        recorded more than ``history`` seconds ago; ``window="value"`` (the
        literal pseudo-code) drops waits longer than ``history``.
    initial : Timers
        Timers used while a list is empty (the paper does not say; we start
        from its manual defaults, 12 h / 24 h).
    window : {"age", "value"}

    Notes
    -----
    A list with one entry has no sample standard deviation; we use 0 there.
    Pruning is permanent, as in the pseudo-code ("remove time from" the list).
    """

    def __init__(self, history: float = 48 * HOUR, initial: Timers = MANUAL_TIMERS, window: str = "age"):
        if window not in ("age", "value"):
            raise ValueError("window must be 'age' or 'value'")
        if not history > 0:
            raise ValueError("history must be a positive number of seconds")
        self.history = float(history)
        self.initial = initial
        self.window = window
        self._lists: dict[tuple[str, int], deque[tuple[float, float]]] = {}
        self.trace: list[tuple[float, int, float, float]] = []  # (now, gpus, T_Mc, T_Rk) per query

    def record(self, tier: str, gpus: int, wait: float, now: float) -> None:
        """``update_demand_delay(tier, t_starvation, g_d)``."""
        if tier in (MACHINE, RACK):
            self._lists.setdefault((tier, int(gpus)), deque()).append((float(now), float(wait)))

    def waits(self, tier: str, gpus: int, now: float) -> list[float]:
        """The pruned wait list of (tier, gpus) at time ``now``."""
        lst = self._lists.get((tier, int(gpus)))
        if not lst:
            return []
        if self.window == "age":
            while lst and now - lst[0][0] > self.history:  # recorded in time order
                lst.popleft()
        else:
            kept = [e for e in lst if e[1] <= self.history]
            lst.clear()
            lst.extend(kept)
        return [w for _, w in lst]

    def timers(self, gpus: int, now: float) -> Timers:
        """``get_tuned_timers(g_d)``: mean + 2 sample standard deviations per tier."""
        out = []
        for tier, default in ((MACHINE, self.initial.machine), (RACK, self.initial.rack)):
            w = self.waits(tier, gpus, now)
            out.append(default if not w else mean_plus_two_sd(w))
        t = Timers(*out)
        self.trace.append((float(now), int(gpus), t.machine, t.rack))
        return t


def mean_plus_two_sd(values: Iterable[float]) -> float:
    """average + 2 x sample standard deviation (ddof = 1; 0 for a single value)."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        raise ValueError("empty list")
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return float(v.mean()) + 2.0 * sd


def nw_sens(iters_done: float, iters_total: float, run_time: float, ideal_total: float) -> float:
    """:math:`Nw_{sens} = W_{compl}/T_{norm}` (Dally §4.3.1).

    :math:`W_{compl} = I_{compl}/I_{total-expected}`,
    :math:`T_{norm} = T_{run}/T_{total-ideal-run}` with :math:`T_{run}` the time
    spent in the run queue. Equivalently, the ideal time of the completed
    iterations over the time run: 1 for a job that never suffered a slowdown,
    lower the more network overhead (or lost work) it endured. Our choice for a
    job that has not run yet (0/0): 1.0, no slowdown observed.
    """
    if run_time <= 0:
        return 1.0
    w = iters_done / iters_total
    t_norm = run_time / ideal_total
    return w / t_norm


def offer_order(entries: Iterable[tuple[str, float, float]]) -> list[str]:
    """Job ids in increasing :math:`Nw_{sens}` (§4.3.1: "Resource offers are hence made in
    increasing order of Nw_sens"); ties by submit time, then id. ``entries``: (id, nw_sens, submit)."""
    return [e[0] for e in sorted(entries, key=lambda e: (e[1], e[2], e[0]))]


def choose_gpus(free: np.ndarray, machine: np.ndarray, rack: np.ndarray, gpus: int, tier: str) -> np.ndarray | None:
    """GPU ids for a placement of ``gpus`` GPUs at ``tier`` (our rule; the paper does not say).

    Best fit, to keep large holes for later jobs: at ``"machine"`` the machine
    with the fewest free GPUs that still holds the job; at ``"rack"`` the rack
    with the fewest free GPUs that holds it, filled from its fullest-free
    machines (fewest machines spanned); at ``"network"`` racks with the most
    free GPUs first, each filled the same way. Ties go to the lower index.
    Returns ``None`` when the tier cannot hold the job.
    """
    idx = np.flatnonzero(free)
    if gpus > idx.size:
        return None
    m_of, r_of = machine[idx], rack[idx]
    if tier == MACHINE:
        ids, counts = np.unique(m_of, return_counts=True)
        ok = counts >= gpus
        if not ok.any():
            return None
        best = ids[ok][np.argmin(counts[ok])]
        return np.sort(idx[m_of == best][:gpus])
    if tier == RACK:
        ids, counts = np.unique(r_of, return_counts=True)
        ok = counts >= gpus
        if not ok.any():
            return None
        best = ids[ok][np.argmin(counts[ok])]
        return _fill(idx[r_of == best], machine, gpus)
    ids, counts = np.unique(r_of, return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    taken: list[int] = []
    for r in order:
        need = gpus - len(taken)
        if need <= 0:
            break
        pool = idx[r_of == r]
        taken.extend(_fill(pool, machine, min(need, pool.size)).tolist())
    return np.sort(np.array(taken[:gpus]))


def _fill(pool: np.ndarray, machine: np.ndarray, gpus: int) -> np.ndarray:
    """``gpus`` GPUs of ``pool`` from the machines with the most free GPUs first."""
    m = machine[pool]
    ids, counts = np.unique(m, return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    out: list[int] = []
    for mm in order:
        out.extend(pool[m == mm].tolist())
        if len(out) >= gpus:
            break
    return np.sort(np.array(out[:gpus]))



@dataclass(frozen=True)
class Shape:
    """The machine / rack structure the policies need, from a cluster's per-GPU arrays.

    ``machine[g]`` and ``rack[g]`` number GPU g's machine and rack (0-based,
    dense). Tiers follow Dally §3: one machine, one rack, else the network.
    """

    machine: np.ndarray
    rack: np.ndarray
    gpus_per_machine: int
    gpus_per_rack: int
    machines_per_rack: int
    racks: int
    total: int

    @classmethod
    def from_arrays(cls, machine, rack) -> Shape:
        machine = np.asarray(machine, dtype=np.int64)
        rack = np.asarray(rack, dtype=np.int64)
        _, machine = np.unique(machine, return_inverse=True)
        _, rack = np.unique(rack, return_inverse=True)
        per_m = np.bincount(machine)
        per_r = np.bincount(rack)
        mpr = max(len(np.unique(machine[rack == r])) for r in range(len(per_r)))
        return cls(machine, rack, int(per_m.max()), int(per_r.max()), int(mpr), len(per_r), len(machine))

    def free_counts(self, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Free GPUs per machine and per rack."""
        f = free.astype(np.int64)
        return (np.bincount(self.machine, weights=f, minlength=self.machine.max() + 1).astype(np.int64),
                np.bincount(self.rack, weights=f, minlength=self.racks).astype(np.int64))

    def tier_of(self, gpus) -> str:
        """The widest level GPU ids ``gpus`` span."""
        g = np.asarray(gpus, dtype=np.int64)
        if np.all(self.machine[g] == self.machine[g[0]]):
            return MACHINE
        return RACK if np.all(self.rack[g] == self.rack[g[0]]) else NETWORK

    def best_tier(self, gpus: int) -> str:
        """The most consolidated tier a job of ``gpus`` GPUs can have on an empty cluster."""
        if gpus <= self.gpus_per_machine:
            return MACHINE
        return RACK if gpus <= self.gpus_per_rack else NETWORK


# ----------------------------------------------------------------------------- parameter checks

def check_number(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    """``value`` as a finite float within [lo, hi]; :class:`InstanceError` naming ``name`` otherwise."""
    from placement.errors import InstanceError

    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f" in [{lo:g}, {hi:g}]" if lo is not None and hi is not None else f" >= {lo:g}" if lo is not None else ""
        raise InstanceError(name, f"must be a finite number{rng}, got {value!r}")
    return float(value)


def check_bool(name: str, value) -> bool:
    from placement.errors import InstanceError

    if not isinstance(value, bool):
        raise InstanceError(name, f"must be true or false, got {value!r}")
    return value


def as_timers(name: str, value) -> Timers:
    """A :class:`Timers` from itself or a pair (machine, rack) of non-negative seconds."""
    from placement.errors import InstanceError

    if isinstance(value, Timers):
        value = (value.machine, value.rack)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InstanceError(name, f"must be a pair [machine, rack] of seconds, got {value!r}")
    return Timers(check_number(f"{name}[0]", value[0], 0.0), check_number(f"{name}[1]", value[1], 0.0))
