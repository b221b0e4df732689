"""Cell bindings (the solution of a VC assignment) and their reference evaluation.

A *binding* maps one logical cell of a VC, at level ``k`` of a chain, to one
physical level-``k`` cell of that chain (§3.3). A set of bindings honours the
assignment when it is one to one onto disjoint physical cells (no GPU covered
twice), binds no VC more level-``k`` cells than it reserves, and binds each
pinned cell only to the VC that lists it.

Objective (what ``placement solve`` reports, maximized): the number of
*honoured* logical cells = distinct bindings counted up to each (VC, chain, level)
reservation, plus the VC's own pinned cells bound to the right physical cell. The assignment is
feasible exactly when the optimum equals ``instance.n_reserved``; the
difference is the smallest number of reserved cells to drop to make it
feasible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import validate
from ..errors import InstanceError
from .cells import HivedInstance

__all__ = ["Binding", "HivedSolution", "HivedEvaluation", "evaluate", "violations", "load_solution",
           "solution_to_json"]


@dataclass(frozen=True)
class Binding:
    vc: int
    chain: int
    level: int
    index: int
    pinned: str | None = None


@dataclass(frozen=True)
class HivedSolution:
    bindings: tuple[Binding, ...]


@dataclass
class HivedEvaluation:
    honoured: int
    reserved: int
    honoured_gpus: int
    reserved_gpus: int
    bad_gpus_bound: int
    unhonoured: dict[str, int] = field(default_factory=dict)  # "vc/chain/type" -> missing cells

    @property
    def objective(self) -> float:
        return float(self.honoured)

    def terms(self) -> dict[str, Any]:
        out: dict[str, Any] = {"objective (honoured cells)": self.honoured, "reserved cells": self.reserved,
                               "honoured GPUs": self.honoured_gpus, "reserved GPUs": self.reserved_gpus,
                               "all honoured": self.honoured == self.reserved,
                               "faulty GPUs bound": self.bad_gpus_bound}
        for key, n in self.unhonoured.items():
            out[f"missing {key}"] = n
        return out


def _reserved_gpus(inst: HivedInstance) -> int:
    tot = 0
    for v in inst.vcs:
        tot += sum(n * inst.chains[c].gpus[k] for (c, k), n in v.reserved.items())
        tot += sum(inst.chains[inst.pinned[p].chain].gpus[inst.pinned[p].level] for p in v.pinned)
    return tot


def evaluate(inst: HivedInstance, sol: HivedSolution) -> HivedEvaluation:
    """Honoured cells and GPUs, missing cells per (VC, chain, level), faulty GPUs bound."""
    got: dict[tuple[int, int, int], int] = {}
    pins_bound: set[str] = set()
    gpus = 0
    bad_leaf: dict[int, set[int]] = {}
    for c, k, i in inst.bad:
        bad_leaf.setdefault(c, set()).update(inst.chains[c].leaves(k, i))
    bad = 0
    for b in dict.fromkeys(sol.bindings):  # a binding listed twice counts once
        ch = inst.chains[b.chain]
        gpus += ch.gpus[b.level]
        if b.chain in bad_leaf:
            bad += sum(1 for g in ch.leaves(b.level, b.index) if g in bad_leaf[b.chain])
        if b.pinned is not None:
            p = inst.pinned.get(b.pinned)
            if p is not None and inst.used_pins.get(b.pinned) == inst.vcs[b.vc].name and \
                    (p.chain, p.level, p.index) == (b.chain, b.level, b.index):
                pins_bound.add(b.pinned)
        else:
            got[(b.vc, b.chain, b.level)] = got.get((b.vc, b.chain, b.level), 0) + 1
    missing = {}
    for t, v in enumerate(inst.vcs):
        for (c, k), n in sorted(v.reserved.items()):
            m = n - got.get((t, c, k), 0)
            if m > 0:
                missing[f"{v.name}/{inst.chains[c].name}/{inst.chains[c].types[k - 1]}"] = m
        for p in v.pinned:
            if p not in pins_bound:
                missing[f"{v.name}/pinned/{p}"] = 1
    # Honoured = bindings up to each reservation, plus the VCs' own pinned cells: a solver that
    # binds more than reserved (a violation) cannot score above the optimum.
    honoured = sum(min(n, inst.vcs[t].reserved.get((c, k), 0)) for (t, c, k), n in got.items()) + len(pins_bound)
    return HivedEvaluation(honoured, inst.n_reserved, gpus, _reserved_gpus(inst), bad, missing)


def violations(inst: HivedInstance, sol: HivedSolution) -> list[str]:
    """Every broken rule: overlapping cells, over-binding, wrong pinned cells, bad indices."""
    out: list[str] = []
    count: dict[tuple[int, int, int], int] = {}
    spans: dict[int, list[tuple[int, int, str]]] = {}
    for p in inst.pinned.values():
        if p.id in inst.used_pins:
            lv = inst.chains[p.chain].leaves(p.level, p.index)
            spans.setdefault(p.chain, []).append((lv.start, lv.stop, f"pinned cell {p.id}"))
    seen_pins: set[str] = set()
    for n, b in enumerate(sol.bindings):
        if not (0 <= b.vc < len(inst.vcs) and 0 <= b.chain < len(inst.chains)):
            out.append(f"binding {n}: unknown VC or chain")
            continue
        ch = inst.chains[b.chain]
        vname = inst.vcs[b.vc].name
        if not (1 <= b.level <= ch.top and 0 <= b.index < ch.count[b.level]):
            out.append(f"binding {n}: no cell {b.index} at level {b.level} of {ch.name}")
            continue
        if b.pinned is not None:
            p = inst.pinned.get(b.pinned)
            if p is None or inst.used_pins.get(b.pinned) != vname:
                out.append(f"binding {n}: pinned cell {b.pinned!r} does not belong to VC {vname}")
            elif (p.chain, p.level, p.index) != (b.chain, b.level, b.index):
                out.append(f"binding {n}: pinned cell {b.pinned!r} is bound to the wrong physical cell")
            if b.pinned in seen_pins:
                out.append(f"binding {n}: pinned cell {b.pinned!r} is bound twice")
            seen_pins.add(b.pinned)
            continue
        key = (b.vc, b.chain, b.level)
        count[key] = count.get(key, 0) + 1
        lv = ch.leaves(b.level, b.index)
        spans.setdefault(b.chain, []).append((lv.start, lv.stop, f"binding {n} ({vname})"))
    for (t, c, k), n in sorted(count.items()):
        r = inst.vcs[t].reserved.get((c, k), 0)
        if n > r:
            out.append(f"VC {inst.vcs[t].name} binds {n} {inst.chains[c].types[k - 1]} cells of "
                       f"{inst.chains[c].name} but reserves {r}")
    for c, sp in sorted(spans.items()):
        sp.sort()
        end, who = -1, ""
        for s, e, name in sp:
            if s < end:  # sorted by start: an overlap always shows against the running maximum end
                out.append(f"{name} overlaps {who} in {inst.chains[c].name} (GPU {s})")
            if e > end:
                end, who = e, name
    return out


def load_solution(inst: HivedInstance, doc: Any) -> HivedSolution:
    """Validate ``{"bindings": [...]}`` (or ``placement solve -o`` output)."""
    if not isinstance(doc, dict):
        raise InstanceError("solution", "must be a mapping")
    if "solution" in doc and "bindings" not in doc:
        doc = doc["solution"]
        if not isinstance(doc, dict):
            raise InstanceError("solution", "must be a mapping with bindings")
    rows = doc.get("bindings")
    if not isinstance(rows, list):
        raise InstanceError("solution.bindings", "must be a list")
    out = []
    for n, r in enumerate(rows):
        f = f"solution.bindings[{n}]"
        if not isinstance(r, dict):
            raise InstanceError(f, "must be a mapping")
        # names first: a list or an object where a name goes is one line, not an unhashable key
        vc, chain, cell_type = (validate.name(r.get(key), f"{f}.{key}", numbers=True)
                                for key in ("vc", "chain", "cellType"))
        if vc not in inst.vc_index:
            raise InstanceError(f"{f}.vc", f"names an unknown VC {vc!r}")
        if chain not in inst.chain_index:
            raise InstanceError(f"{f}.chain", f"names an unknown chain {chain!r}")
        c = inst.chain_index[chain]
        ch = inst.chains[c]
        if cell_type not in ch.types:
            raise InstanceError(f"{f}.cellType", f"is not a cell type of {ch.name}")
        k = ch.level_of(cell_type)
        i = r.get("index")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < ch.count[k]:
            raise InstanceError(f"{f}.index", f"must be in 0..{ch.count[k] - 1}")
        pid = r.get("pinnedCellId")
        out.append(Binding(inst.vc_index[vc], c, k, i, str(pid) if pid is not None else None))
    return HivedSolution(tuple(out))


def solution_to_json(inst: HivedInstance, sol: HivedSolution) -> dict:
    rows = []
    for b in sol.bindings:
        ch = inst.chains[b.chain]
        row = {"vc": inst.vcs[b.vc].name, "chain": ch.name, "cellType": ch.types[b.level - 1], "index": b.index,
               "address": inst.path(b.chain, b.level, b.index)}
        if b.pinned is not None:
            row["pinnedCellId"] = b.pinned
        rows.append(row)
    return {"problem": "hived", "bindings": rows}
