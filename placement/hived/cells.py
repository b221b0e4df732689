"""HiveD cells (OSDI'20 §3.2): chains, physical cells, virtual clusters.

Terms
-----
cell
    A collection of affinity GPUs. A level-``k`` cell consists of ``h_k``
    level-``(k-1)`` *buddy* cells; level 1 is one GPU (a leaf cell).
chain (pool)
    One homogeneous cell hierarchy, named by the type of its top-level cells
    (HiveD's ``CellChain``). Hierarchical uniform composability holds inside a
    chain: every level-``k`` cell splits into the same number ``h_k`` of cells.
physical cell
    Identified by ``(chain, level, index)``: ``index`` numbers the level-``k``
    cells of the chain left to right, so the children of ``(k, i)`` are
    ``(k-1, i*h_k .. i*h_k + h_k - 1)`` and the parent is ``(k+1, i // h_{k+1})``.
    Nothing per cell is stored except explicit addresses, pinned ids and health.
virtual cluster (VC)
    ``r[t, (chain, k)]``: the number of level-``k`` cells of a chain tenant ``t``
    reserves, plus pinned cells (each one fixed physical cell).
pinned cell
    A physical cell named by a ``pinnedCellId``; a VC that lists the id owns
    exactly that cell. Ids that no VC lists are ordinary cells.
bad (faulty) cell
    A cell with at least one faulty GPU. Health does not change feasibility:
    HiveD binds a bad cell to a VC when it has no other choice (§4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

__all__ = ["Chain", "VirtualCluster", "PinnedCell", "HivedInstance", "CellId"]

CellId = tuple[int, int, int]  # (chain index, level 1..K, index within the level)


@dataclass(frozen=True)
class Chain:
    """One cell hierarchy with its physical top-level cells.

    ``types[k-1]`` is the cell type of level ``k``; ``split[k-1]`` is ``h_k``,
    the number of level-``(k-1)`` children of a level-``k`` cell (``split[0] = 1``).
    """

    name: str
    types: tuple[str, ...]
    split: tuple[int, ...]
    node_level: int
    n_top: int

    @property
    def top(self) -> int:
        return len(self.types)

    @cached_property
    def gpus(self) -> tuple[int, ...]:
        """``gpus[k]``: GPUs in a level-``k`` cell (``gpus[0]`` unused, 0)."""
        out = [0, 1]
        for k in range(2, self.top + 1):
            out.append(out[-1] * self.split[k - 1])
        return tuple(out)

    @cached_property
    def count(self) -> tuple[int, ...]:
        """``count[k]``: number of level-``k`` physical cells (``count[0]`` unused, 0)."""
        out = [0] * (self.top + 1)
        out[self.top] = self.n_top
        for k in range(self.top - 1, 0, -1):
            out[k] = out[k + 1] * self.split[k]
        return tuple(out)

    @property
    def total_gpus(self) -> int:
        return self.n_top * self.gpus[self.top]

    def level_of(self, cell_type: str) -> int:
        return self.types.index(cell_type) + 1

    def parent(self, level: int, index: int) -> tuple[int, int]:
        return level + 1, index // self.split[level]

    def children(self, level: int, index: int) -> range:
        h = self.split[level - 1]
        return range(index * h, index * h + h)

    def ancestor(self, level: int, index: int, at: int) -> int:
        """Index of the level-``at`` ancestor (``at >= level``) of cell ``(level, index)``."""
        return index // (self.gpus[at] // self.gpus[level])

    def leaves(self, level: int, index: int) -> range:
        g = self.gpus[level]
        return range(index * g, index * g + g)

    def level_for_gpus(self, g: int) -> int:
        """The smallest level whose cells hold at least ``g`` GPUs (job -> cell rule)."""
        for k in range(1, self.top + 1):
            if self.gpus[k] >= g:
                return k
        raise ValueError(f"a job of {g} GPUs does not fit a {self.name} cell")


@dataclass(frozen=True)
class PinnedCell:
    id: str
    chain: int
    level: int
    index: int


@dataclass(frozen=True)
class VirtualCluster:
    """A tenant's VC: reserved (non-pinned) cells per (chain index, level) and pinned ids."""

    name: str
    reserved: dict[tuple[int, int], int]
    pinned: tuple[str, ...] = ()

    @property
    def n_reserved(self) -> int:
        return sum(self.reserved.values())


@dataclass(frozen=True)
class HivedInstance:
    """A physical cluster of chains and the VC assignment on it.

    ``addresses[(c, k, i)]`` holds explicitly given cell addresses; the others
    follow HiveD's defaults (:meth:`address`). ``bad`` lists faulty cells
    (every GPU below a bad cell is faulty).
    """

    name: str
    chains: tuple[Chain, ...]
    vcs: tuple[VirtualCluster, ...]
    pinned: dict[str, PinnedCell] = field(default_factory=dict)
    addresses: dict[CellId, str] = field(default_factory=dict)
    bad: frozenset[CellId] = frozenset()

    @cached_property
    def chain_index(self) -> dict[str, int]:
        return {c.name: i for i, c in enumerate(self.chains)}

    @cached_property
    def vc_index(self) -> dict[str, int]:
        return {v.name: i for i, v in enumerate(self.vcs)}

    @cached_property
    def used_pins(self) -> dict[str, str]:
        """Pinned id -> the VC that owns it (ids no VC lists are ordinary cells)."""
        return {p: v.name for v in self.vcs for p in v.pinned}

    def reserved_total(self, chain: int) -> list[int]:
        """``r_k`` of the chain summed over VCs (non-pinned), index ``k`` = level."""
        r = [0] * (self.chains[chain].top + 1)
        for v in self.vcs:
            for (c, k), n in v.reserved.items():
                if c == chain:
                    r[k] += n
        return r

    @property
    def n_reserved(self) -> int:
        """Logical cells of all VCs, pinned cells included."""
        return sum(v.n_reserved + len(v.pinned) for v in self.vcs)

    def bad_gpus(self, chain: int) -> list[list[int]]:
        """``bad[k][i]``: faulty GPUs in cell ``(k, i)`` of a chain (dense, for allocators)."""
        ch = self.chains[chain]
        leaf = [0] * ch.count[1]
        for c, k, i in self.bad:
            if c == chain:
                for g in ch.leaves(k, i):
                    leaf[g] = 1
        out = [[], leaf]
        for k in range(2, ch.top + 1):
            h = ch.split[k - 1]
            below = out[k - 1]
            out.append([sum(below[j * h:(j + 1) * h]) for j in range(ch.count[k])])
        return out

    def address(self, chain: int, level: int, index: int) -> str:
        """Address of one cell: explicit, else HiveD's default rule.

        Defaults: a top cell's index in its chain; above the node level
        the index among the same level within its top cell; at or below the
        node level the index within its node.
        """
        key = (chain, level, index)
        if key in self.addresses:
            return self.addresses[key]
        ch = self.chains[chain]
        if level == ch.top:
            return str(index)
        scope = ch.node_level if level < ch.node_level else ch.top
        return str(index % (ch.gpus[scope] // ch.gpus[level]))

    def path(self, chain: int, level: int, index: int) -> str:
        """Full address ``chain/top/.../cell`` of a physical cell."""
        ch = self.chains[chain]
        parts = [self.address(chain, k, ch.ancestor(level, index, k)) for k in range(ch.top, level - 1, -1)]
        return ch.name + "/" + "/".join(parts)
