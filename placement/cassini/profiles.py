"""Job communication profiles (CASSINI §2.1, §3).

Terms
-----
iteration time
    Integer length of one training iteration in time units (1 unit = 1 ms in the
    built-in profiles).
phase
    ``(duration, bandwidth)``: for ``duration`` time units the job sends at
    ``bandwidth`` (Gbps) on every link it traverses. The phases of a profile
    cover exactly one iteration (Up phases have bandwidth > 0, Down phases 0).
demand vector
    The job's bandwidth at each integer time ``t = 0 .. iteration_time-1``.

The built-in shapes imitate Figure 1 of the paper and are **synthetic** (the
paper's measured traces are not public): data parallel (one Down, one Up),
pipeline parallel (three small activation peaks, then an all-reduce), tensor
parallel (~25 Gbps in forward and backward, a short near-zero data-loading
gap) and hybrid (six Up/Down phases of different heights).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["JobProfile", "data_parallel", "pipeline_parallel", "tensor_parallel", "hybrid_parallel",
           "SYNTHETIC_KINDS", "synthetic_profile"]


@dataclass(frozen=True, eq=False)
class JobProfile:
    """One job's periodic network demand; build valid ones through :mod:`.instance` or the helpers."""

    name: str
    iteration_time: int
    phases: tuple[tuple[int, float], ...]
    kind: str = "custom"

    @cached_property
    def demand(self) -> np.ndarray:
        """Bandwidth at each integer time of one iteration (read-only float array)."""
        d = np.repeat(np.array([b for _, b in self.phases], dtype=float),
                      np.array([t for t, _ in self.phases], dtype=np.int64))
        d.flags.writeable = False
        return d

    @cached_property
    def boundaries(self) -> tuple[int, ...]:
        """Phase start offsets within the iteration, and the iteration time itself."""
        return tuple(int(x) for x in np.cumsum([0] + [t for t, _ in self.phases]))

    @property
    def peak(self) -> float:
        return max(b for _, b in self.phases)

    @property
    def mean_bandwidth(self) -> float:
        return float(self.demand.mean())


def _split(total: int, weights: list[float], quantum: int) -> list[int]:
    """Split ``total`` into positive multiples of ``quantum`` proportional to ``weights``."""
    units = total // quantum
    raw = np.array(weights, dtype=float) / sum(weights) * units
    parts = np.maximum(1, np.floor(raw).astype(int))
    while parts.sum() > units:
        parts[int(np.argmax(parts))] -= 1
    order = np.argsort(-(raw - np.floor(raw)))
    i = 0
    while parts.sum() < units:
        parts[order[i % len(parts)]] += 1
        i += 1
    out = [int(p) * quantum for p in parts]
    out[-1] += total - sum(out)
    return out


def data_parallel(name: str, iteration_time: int, comm_fraction: float = 0.45, bandwidth: float = 40,
                  quantum: int = 5) -> JobProfile:
    """Figure 1(a): a forward pass with no traffic (Down), then back-propagation + AllReduce (Up)."""
    down, up = _split(iteration_time, [1 - comm_fraction, comm_fraction], quantum)
    return JobProfile(name, iteration_time, ((down, 0.0), (up, float(bandwidth))), "data_parallel")


def pipeline_parallel(name: str, iteration_time: int, bandwidth: float = 45, peak: float = 15,
                      quantum: int = 5) -> JobProfile:
    """Figure 1(b): three small activation peaks in the forward pass, then a heavy AllReduce."""
    w = [1.0, 0.6, 1.0, 0.6, 1.0, 0.6, 1.2, 3.0]
    d = _split(iteration_time, w, quantum)
    bws = [0.0, peak, 0.0, peak, 0.0, peak, 0.0, bandwidth]
    return JobProfile(name, iteration_time, tuple((t, float(b)) for t, b in zip(d, bws, strict=True)),
                      "pipeline_parallel")


def tensor_parallel(name: str, iteration_time: int, bandwidth: float = 25, quantum: int = 5) -> JobProfile:
    """Figure 1(c): ~25 Gbps during forward and backward passes, a short near-zero data-loading gap."""
    d = _split(iteration_time, [3.0, 0.8, 5.0, 1.2], quantum)
    bws = [bandwidth, 0.2 * bandwidth, bandwidth, 0.0]
    return JobProfile(name, iteration_time, tuple((t, float(b)) for t, b in zip(d, bws, strict=True)),
                      "tensor_parallel")


def hybrid_parallel(name: str, iteration_time: int, bandwidth: float = 45, quantum: int = 5) -> JobProfile:
    """Figure 1(d)/Figure 6: six Up/Down phases with different durations and heights."""
    w = [1.0, 0.5, 1.5, 0.5, 1.0, 0.5, 2.0, 0.5, 1.5, 0.5, 1.0, 0.5]
    d = _split(iteration_time, w, quantum)
    heights = [0.3, 0.0, 0.6, 0.0, 0.45, 0.0, 1.0, 0.0, 0.7, 0.0, 0.35, 0.0]
    return JobProfile(name, iteration_time,
                      tuple((t, float(round(h * bandwidth, 3))) for t, h in zip(d, heights, strict=True)),
                      "hybrid_parallel")


SYNTHETIC_KINDS = {"data_parallel": data_parallel, "pipeline_parallel": pipeline_parallel,
                   "tensor_parallel": tensor_parallel, "hybrid_parallel": hybrid_parallel}


def synthetic_profile(kind: str, name: str, iteration_time: int, **kw) -> JobProfile:
    """A built-in synthetic profile by kind name (see :data:`SYNTHETIC_KINDS`)."""
    return SYNTHETIC_KINDS[kind](name, iteration_time, **kw)
