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
    lines 1-2): time since the job last lost or never had resources. The
    paper is silent on what "last assignment" is for a job that waits; two
    readings (:class:`placement.solvers.online.dally.Dally`'s ``clock``):
    ``"submit"``, the time since submission or the last preemption; ``"lease"``,
    the Themis-style re-offer reading (the paper's simulator is built on
    Themis's, whose GPUs are re-offered every lease): the clock starts at the
    first offer the job could have used (enough free GPUs of its type) since
    its last assignment, so a timer counts the delay the job chose, not its
    wait for capacity (Zaharia et al.'s delay scheduling counts from the first
    skip the same way).
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

The tiers, :class:`~placement.sim.placement.Shape` and
:func:`~placement.sim.placement.choose_gpus` (which free GPUs an accepted offer allocates at its
tier; our rule: best fit) live in :mod:`placement.sim.placement`, shared with the baselines.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from placement.errors import InstanceError
from placement.options import NonNegFloat
from placement.sim.placement import MACHINE, NETWORK, RACK
from placement.validate import check_number

__all__ = ["Timers", "TimerOption", "Decision", "fit_timers", "on_offer", "AutoTuner", "nw_sens", "offer_order",
           "MANUAL_TIMERS", "HOUR", "as_timers"]

HOUR = 3600.0


@dataclass(frozen=True)
class Timers:
    """Delay timers in seconds of starvation: :math:`T_{Mc}` and :math:`T_{Rk}` (cumulative)."""

    machine: float
    rack: float


MANUAL_TIMERS = Timers(12 * HOUR, 24 * HOUR)  # Dally §4.3.2: 12 h machine, another 12 h rack
# What a timer option takes: Timers, or [machine, rack] seconds from the command line.
TimerOption = Timers | tuple[NonNegFloat, NonNegFloat]


@dataclass(frozen=True)
class Decision:
    """Answer of Algorithm 1 to one offer.

    ``accept``: whether the job takes GPUs; ``tier``: the tier it takes them at;
    ``record``: the wait list to update (``"machine"``/``"rack"``, lines 7 and 15;
    ``None`` for a network placement, which Algorithm 1 does not record);
    ``retry_at``: for a reject by a timer, the starvation at which that timer
    elapses (the answer to the same offer changes then); ``None`` when the offer
    simply holds too few GPUs; ``timer``: which timer rejected (``"machine"``, line 11, or
    ``"rack"``, line 19), ``None`` otherwise.
    """

    accept: bool
    tier: str | None = None
    record: str | None = None
    retry_at: float | None = None
    timer: str | None = None


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
        return Decision(False, retry_at=timers.machine, timer=MACHINE)  # line 11
    if gpus <= rack_free_max:                         # line 13
        return Decision(True, RACK, RACK)             # lines 14-16
    if starvation < timers.rack:                      # line 18
        return Decision(False, retry_at=timers.rack, timer=RACK)  # line 19
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


# ----------------------------------------------------------------------------- parameter checks

def as_timers(name: str, value) -> Timers:
    """A :class:`Timers` from itself or a pair (machine, rack) of non-negative seconds."""
    if isinstance(value, Timers):
        value = (value.machine, value.rack)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InstanceError(name, f"must be a pair [machine, rack] of seconds, got {value!r}")
    return Timers(check_number(f"{name}[0]", value[0], 0.0), check_number(f"{name}[1]", value[1], 0.0))
