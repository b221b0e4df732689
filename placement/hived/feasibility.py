"""Closed-form feasibility of a VC assignment (HiveD Eq. 1 at time 0, per chain).

A VC assignment is *feasible* when the logical cells of all VCs map one to one
onto disjoint physical cells (§3.2). Inside one chain (hierarchical uniform
composability) this is decided top-down, level by level:

    avail_top = f_top
    left_k    = avail_k - r_k                      (must be >= 0)
    avail_k-1 = f_(k-1) + left_k * h_k

where ``r_k`` sums the non-pinned reservations of all VCs at level ``k`` and
``f_k`` counts the maximal free cells at level ``k`` once the pinned cells are
carved out (without pinned cells only ``f_top`` = number of top cells is
non-zero). This is ``r_k <= f_k + F_k`` of invariant (2) with ``a_k = 0`` and
``F_k`` from Eq. (1). Serving level-``k`` reservations with any free level-``k``
cells is optimal because every such cell yields the same number of cells below
(uniform composability), so the check is exact.

HiveD's own check counts a pinned cell as one reservation at its level; that is
necessary but not sufficient when two pinned cells sit in different cells that
a larger reservation would need. Carving the pinned cells out first is exact.

When a level falls short, ``left_k`` is reported negative and the levels below
continue from ``max(left_k, 0)`` (as if the missing cells were dropped), so every
shortfall is reported once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cells import HivedInstance

__all__ = ["LevelCheck", "ChainCheck", "free_cells_after_pinning", "check_chain", "check_feasibility",
           "is_feasible"]


@dataclass(frozen=True)
class LevelCheck:
    level: int
    cell_type: str
    gpus_per_cell: int
    free: int        # f_k: maximal free cells at this level after pinning
    available: int   # f_k + F_k
    reserved: int    # r_k
    left: int        # available - reserved (negative: shortfall)

    @property
    def shortfall(self) -> int:
        return max(0, -self.left)


@dataclass(frozen=True)
class ChainCheck:
    chain: str
    levels: tuple[LevelCheck, ...]  # top level first
    pinned: int

    @property
    def feasible(self) -> bool:
        return all(lv.left >= 0 for lv in self.levels)


def free_cells_after_pinning(inst: HivedInstance, chain: int) -> list[list[int]]:
    """Maximal free cells per level (``out[k]`` = indices) once owned pinned cells are taken.

    A pinned cell no VC lists is an ordinary cell and is not taken.
    """
    ch = inst.chains[chain]
    pins = [p for p in inst.pinned.values() if p.chain == chain and p.id in inst.used_pins]
    blocked: set[tuple[int, int]] = set()  # strict ancestors of pinned cells
    taken = {(p.level, p.index) for p in pins}
    for p in pins:
        for k in range(p.level + 1, ch.top + 1):
            blocked.add((k, ch.ancestor(p.level, p.index, k)))
    out: list[list[int]] = [[] for _ in range(ch.top + 1)]
    out[ch.top] = [i for i in range(ch.n_top) if (ch.top, i) not in blocked and (ch.top, i) not in taken]
    for k, i in sorted(blocked):
        for j in ch.children(k, i):
            if (k - 1, j) not in blocked and (k - 1, j) not in taken:
                out[k - 1].append(j)
    return out


def check_chain(inst: HivedInstance, chain: int) -> ChainCheck:
    """Eq. (1)/(2) at time 0 for one chain, every level reported (top first)."""
    ch = inst.chains[chain]
    free = [len(x) for x in free_cells_after_pinning(inst, chain)]
    r = inst.reserved_total(chain)
    levels = []
    carry = 0  # F_k
    for k in range(ch.top, 0, -1):
        avail = free[k] + carry
        left = avail - r[k]
        levels.append(LevelCheck(k, ch.types[k - 1], ch.gpus[k], free[k], avail, r[k], left))
        carry = max(left, 0) * ch.split[k - 1] if k > 1 else 0
    n_pins = sum(1 for p in inst.pinned.values() if p.chain == chain and p.id in inst.used_pins)
    return ChainCheck(ch.name, tuple(levels), n_pins)


def check_feasibility(inst: HivedInstance) -> list[ChainCheck]:
    """The closed-form check of every chain."""
    return [check_chain(inst, c) for c in range(len(inst.chains))]


def is_feasible(inst: HivedInstance) -> bool:
    return all(c.feasible for c in check_feasibility(inst))
