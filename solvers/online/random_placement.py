"""Random: CASSINI §5.1's baseline that "places workers for each job randomly".

Jobs start in submit order (a preempted job keeps its place by submit time; the head of the
queue blocks those behind it, as :mod:`.fifo`, unless ``backfill=True``); each job gets its
asked number of GPUs drawn **uniformly at random** among the free GPUs of its type (no
locality, no compatibility: "the highest network overhead", §5.1), from a generator seeded by
the run's seed (same seed, same log). Never preempts. ``phase_spread`` (default 1) places the jobs
it starts at :func:`placement.sim.links.spread_phase` on a cluster with a network, as Themis's
option does. CASSINI's reproduction runs Random in Themis's elastic regime instead
(:class:`placement.solvers.online.themis.Themis` ``placement="random"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from placement.sim.links import phase_shifts
from placement.sim.placement import usable_mask
from placement.sim.policy import Policy, Start

__all__ = ["RandomPlacement"]


class RandomPlacement(Policy):
    """FIFO order, each job's workers on uniformly random free GPUs (CASSINI §5.1's Random)."""

    name = "random"

    def __init__(self, backfill: bool = False, phase_spread: float = 1.0):
        self.backfill = bool(backfill)
        if not 0.0 <= float(phase_spread) <= 1.0:
            raise ValueError(f"phase_spread: must be in [0, 1], got {phase_spread}")
        self.phase_spread = float(phase_spread)
        self._rng = np.random.default_rng(0)
        self._starts = 0

    def setup(self, view, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def schedule(self, view, events):
        if view.n_free == 0:
            return []
        free = view.free.copy()
        out = []
        for job in view.pending:
            ids = np.flatnonzero(usable_mask(view.cluster, free, job.gpu_type))
            if len(ids) < job.gpus:
                if self.backfill:
                    continue
                break
            gpus = tuple(sorted(int(x) for x in self._rng.choice(ids, size=job.gpus, replace=False)))
            free[list(gpus)] = False
            out.append(Start(job.id, gpus))
            self._starts += 1
        return out + phase_shifts(view, out, self.phase_spread)

    def stats(self) -> dict[str, Any]:
        return {"starts": self._starts}
