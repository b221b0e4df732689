"""The unified circle of a link on an angle grid (CASSINI §3, Table 1).

Terms
-----
perimeter ``p``
    LCM of the iteration times of the jobs on the link (Figure 5: LCM(40, 60) = 120).
    Job j appears ``r_j = p / iter_j`` times around the circle.
angles ``A``
    The circle is cut into ``|A|`` equal arcs (slots); the paper's default precision
    is 5 degrees, ``|A| = 72``. A slot spans ``w = p/|A|`` time units.
``bw_circle_j(alpha)``
    Job j's bandwidth on slot alpha: the time-average of its demand over the slot.
rotation ``k_j``
    Job j is rotated by ``k_j`` slots, ``0 <= k_j < K_j = ceil(|A| / r_j)`` (Eq. 4: within
    its first iteration; fewer on folded grids, below); the time shift is ``t_j = round(k_j * p / |A|) mod iter_j`` (Eq. 5).
quantum ``g``
    GCD of all phase boundaries and iteration times of the link's jobs.

Faithfulness to the paper
---------------------------------
The grid is *faithful* when ``w`` is a whole number of time units and divides ``g``:
then every phase boundary falls on a slot boundary, each slot's demand is exact, the
angle-grid score of a rotation equals the integer-time-grid score of its shifts, and
the best rotation on the grid is the best over all integer shifts (the excess is
piecewise linear in the shifts with breakpoints on the ``g`` lattice, so its maximum
sits on that lattice, which the grid contains).

Resolution strategy (``refine=True``, the default):

1. ``requested``: the requested precision when it is faithful (5 degrees stays the default
   wherever it is faithful);
2. ``refined``: otherwise, when the quantum lattice has at most ``max_angles`` slots
   (``n* = p/g``), the finest faithful grid not finer than requested:
   ``|A| = max{n* m : m | g, n* m <= max(|A|_req, n*)}`` (slot width ``g/m``);
3. ``folded``: otherwise (incommensurate iteration times, ``p/g > max_angles``) the quantum
   lattice itself (``|A| = p/g``, faithful) with *folded* rotation domains: turning all jobs
   together changes nothing, so job j only needs ``gcd(lcm(iter_0..iter_{j-1}), iter_j) / g``
   rotations (:func:`folded_domains`; 1 for coprime iteration times, whose score no shift can
   change). Used while (combinations x slots) stays within ``max_folded``; the search is then
   exact on the integer grid;
4. ``coarse``: beyond that, the largest divisor of ``p`` not above ``max_angles`` (integer slot
   width, demand averaged per slot). Such a grid is not faithful: solvers report the difference
   between the circle's score and the integer-grid score of the returned shifts as the circle
   error (averaging only hides excess, so the circle is optimistic).

``refine=False`` uses the requested grid as is (the precision sweep of Figure 18).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .instance import lcm
from .profiles import JobProfile

__all__ = ["UnifiedCircle", "unified_circle", "link_quantum", "folded_domains"]


def link_quantum(jobs: Sequence[JobProfile]) -> int:
    """GCD of all phase boundaries and iteration times (the link's time quantum ``g``)."""
    g = 0
    for j in jobs:
        for b in j.boundaries[1:]:
            g = math.gcd(g, b)
    return g


def _divisors(n: int) -> list[int]:
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


@dataclass(frozen=True, eq=False)
class UnifiedCircle:
    """Unified circle of one link: slot demand per job (unrotated) and rotation domains."""

    jobs: tuple[JobProfile, ...]
    capacity: float
    perimeter: int
    n_angles: int
    quantum: int
    faithful: bool
    mode: str
    slots: np.ndarray      # (n_jobs, n_angles) bw_circle_j(alpha)
    n_rotations: tuple[int, ...]  # K_j

    @property
    def precision_deg(self) -> float:
        return 360.0 / self.n_angles

    @property
    def slot_width(self) -> float:
        return self.perimeter / self.n_angles

    def shift(self, j: int, k: int) -> int:
        """Eq. 5: time shift of job j rotated by k slots, on the integer grid."""
        p, A = self.perimeter, self.n_angles
        return ((2 * int(k) * p + A) // (2 * A)) % self.jobs[j].iteration_time

    def shifts(self, rotations: Sequence[int]) -> list[int]:
        return [self.shift(j, k) for j, k in enumerate(rotations)]

    def demand(self, rotations: Sequence[int]) -> np.ndarray:
        """``demand_alpha`` of Eq. 3 for the given rotations."""
        out = np.zeros(self.n_angles)
        for a, k in zip(self.slots, rotations, strict=True):
            out += np.roll(a, int(k))
        return out

    def score(self, rotations: Sequence[int]) -> float:
        """Eq. 2 on the angle grid: ``1 - sum_alpha Excess(demand_alpha) / (|A| C)``."""
        ex = np.maximum(self.demand(rotations) - self.capacity, 0.0).sum()
        return 1.0 - ex / (self.n_angles * self.capacity)

    def rolled(self, j: int) -> np.ndarray:
        """``(K_j, |A|)`` matrix: row k is job j's slot demand rotated by k slots."""
        a, K, A = self.slots[j], self.n_rotations[j], self.n_angles
        idx = (np.arange(A)[None, :] - np.arange(K)[:, None]) % A
        return a[idx]


def _slot_average(job: JobProfile, p: int, A: int) -> np.ndarray:
    """Time-average of the job's (tiled) demand over each slot ``[i p/A, (i+1) p/A)``."""
    d, it = job.demand, job.iteration_time
    csum = np.concatenate([[0.0], np.cumsum(d)])
    total = csum[-1]
    i = np.arange(A + 1, dtype=np.int64)
    num = i * p                      # slot edge = num / A time units
    fl = num // A
    frac = (num % A) / A
    F = (fl // it) * total + csum[fl % it] + frac * d[fl % it]
    return np.diff(F) * A / p


def folded_domains(jobs: Sequence[JobProfile]) -> list[int]:
    """Shifts (in time units) job j needs once jobs ``0..j-1`` are placed: ``gcd(L_{j-1}, iter_j)``.

    Turning every job by the same ``delta`` leaves a link's score unchanged. Fixing job 0 at 0
    leaves ``delta`` in multiples of ``iter_0``, under which job 1's shift only matters modulo
    ``gcd(iter_0, iter_1)``; then ``delta`` in multiples of ``L_1 = lcm(iter_0, iter_1)``, and so on
    (generalized Chinese remainder theorem). Job 0 gets 1; the product is ``prod(iter_j) / p``.
    """
    out, L = [], None
    for j in jobs:
        out.append(1 if L is None else math.gcd(L, j.iteration_time))
        L = j.iteration_time if L is None else L * j.iteration_time // math.gcd(L, j.iteration_time)
    return out


def unified_circle(jobs: Sequence[JobProfile], capacity: float, precision_deg: float = 5.0,
                   max_angles: int = 720, refine: bool = True, max_folded: int = 4_000_000) -> UnifiedCircle:
    """Build the unified circle of a link (see the module docstring for the grid choice)."""
    jobs = tuple(jobs)
    p = lcm(j.iteration_time for j in jobs)
    g = link_quantum(jobs)
    a_req = max(1, round(360.0 / precision_deg))

    def faithful(A: int) -> bool:
        return p % A == 0 and g % (p // A) == 0

    K = None
    if not refine or faithful(a_req):
        A, mode = a_req, "requested"
    elif p // g <= max_angles:
        n_star = p // g
        A = max(n_star * m for m in _divisors(g) if n_star * m <= max(a_req, n_star))
        mode = "refined"
    elif math.prod(d // g for d in folded_domains(jobs)[1:]) * (p // g) <= max_folded:
        A, mode = p // g, "folded"
        K = (1,) + tuple(d // g for d in folded_domains(jobs)[1:])  # g divides every iteration time
    else:
        A = max(d for d in _divisors(p) if d <= max_angles)
        mode = "coarse"
    slots = np.stack([_slot_average(j, p, A) for j in jobs])
    if K is None:
        K = tuple(max(1, -(-A * j.iteration_time // p)) for j in jobs)
    return UnifiedCircle(jobs, float(capacity), p, A, g, faithful(A), mode, slots, K)
