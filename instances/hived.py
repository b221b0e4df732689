"""Seeded generators of HiveD clusters and VC assignments.

``hived_document`` draws chains with random split factors, carves every top
cell at random into a buddy decomposition (a random cut of the cell tree) and
hands a share ``load`` of the pieces to VCs as reservations: such an
assignment is feasible by construction. ``overload`` extra cells per VC (at
random levels) may make it infeasible, which the tests and the benchmark use to
exercise the shortfall reports and the optimization form. Pinned cells are
pieces of the decomposition given to a VC by id; faulty cells are random cells.

``paper_cluster`` is the setting of §5.3: 8-GPU nodes (GPU, PCIe switch,
socket, node levels) in racks of ``nodes_per_rack`` nodes.
"""

from __future__ import annotations

import numpy as np

from placement.hived.cells import HivedInstance
from placement.hived.config import load_instance
from placement.validate import integer, number
from placement.validate import seed as seed_of

__all__ = ["hived_document", "generate_hived", "paper_cluster"]


def hived_document(n_chains: int = 1, n_levels: int = 4, n_top: int = 2, n_vcs: int = 3, *, seed: int = 0,
                   max_split: int = 3, load: float = 0.8, overload: int = 0, n_pinned: int = 0,
                   n_bad: int = 0, name: str = "") -> dict:
    """A canonical hived JSON document; see the module docstring."""
    for what, v in (("n_chains", n_chains), ("n_levels", n_levels), ("n_top", n_top), ("n_vcs", n_vcs),
                    ("max_split", max_split)):
        integer(v, what, 1)
    integer(overload, "overload", 0)
    integer(n_pinned, "n_pinned", 0)
    integer(n_bad, "n_bad", 0)
    number(load, "load")
    rng = np.random.default_rng(seed_of(seed))
    chains, vcs = [], {f"vc{t}": {"cells": {}, "pinnedCells": []} for t in range(n_vcs)}
    pinned, bad = {}, []
    for c in range(n_chains):
        split = [1] + [int(rng.integers(2, max(2, max_split) + 1)) if max_split > 1 else 1
                       for _ in range(n_levels - 1)]
        types = [f"C{c}-L{k}" for k in range(1, n_levels + 1)]
        node = int(rng.integers(max(1, n_levels - 1), n_levels + 1))
        chains.append({"types": types, "split": split, "nodeLevel": node, "topCells": n_top})
        gpus = np.cumprod(split)

        def carve(k: int, i: int, c=c, split=split, types=types):
            """Random buddy decomposition of cell (k, i): yields (level, index) pieces."""
            if k > 1 and rng.random() < 0.55:
                for j in range(i * split[k - 1], (i + 1) * split[k - 1]):
                    yield from carve(k - 1, j)
            else:
                yield (k, i)

        for i in range(n_top):
            for k, j in carve(n_levels, i):
                if rng.random() >= load:
                    continue
                t = int(rng.integers(n_vcs))
                if len(pinned) < n_pinned and rng.random() < 0.3:
                    pid = f"pin-{c}-{k}-{j}"
                    pinned[pid] = [types[-1], types[k - 1], j]
                    vcs[f"vc{t}"]["pinnedCells"].append(pid)
                    continue
                cells = vcs[f"vc{t}"]["cells"]
                cells[(c, k)] = cells.get((c, k), 0) + 1
        for t in range(n_vcs):
            for _ in range(overload):
                k = int(rng.integers(1, n_levels + 1))
                cells = vcs[f"vc{t}"]["cells"]
                cells[(c, k)] = cells.get((c, k), 0) + 1
        total_leaves = n_top * int(gpus[-1])
        for _ in range(n_bad):
            bad.append([types[-1], types[0], int(rng.integers(total_leaves))])
    for v in vcs.values():
        v["cells"] = [{"chain": chains[c]["types"][-1], "cellType": chains[c]["types"][k - 1], "cellNumber": n}
                      for (c, k), n in sorted(v["cells"].items())]
    return {"problem": "hived", "version": 1,
            "name": name or f"hived-c{n_chains}-l{n_levels}-t{n_top}-v{n_vcs}-s{seed}",
            "chains": chains, "pinnedCells": pinned, "badCells": bad, "virtualClusters": vcs}


def generate_hived(n_chains: int = 1, n_levels: int = 4, n_top: int = 2, n_vcs: int = 3, *, seed: int = 0,
                   **kwargs) -> HivedInstance:
    """Generate a validated instance; same arguments and seed, same instance.

    Keyword options: ``max_split`` (3), ``load`` (share of decomposition pieces
    reserved, 0.8), ``overload`` (extra random cells per VC and chain, 0),
    ``n_pinned`` (0), ``n_bad`` (faulty GPUs per chain, 0), ``name``.
    """
    return load_instance(hived_document(n_chains, n_levels, n_top, n_vcs, seed=seed, **kwargs))


def paper_cluster(racks: int = 8, nodes_per_rack: int = 1024, reservations: dict | None = None,
                  name: str = "") -> HivedInstance:
    """The §5.3 cluster: ``racks`` x ``nodes_per_rack`` 8-GPU nodes, levels GPU/PCIe/socket/node/rack.

    ``reservations`` maps VC name -> {level: cells}; default: one VC per rack
    reserving the whole cluster at node level.
    """
    types = ["GPU", "PCIE-SWITCH", "CPU-SOCKET", "NODE", "RACK"]
    if reservations is None:
        reservations = {f"vc{r}": {4: nodes_per_rack} for r in range(racks)}
    doc = {"problem": "hived", "version": 1, "name": name or f"paper-{racks}x{nodes_per_rack}x8",
           "chains": [{"types": types, "split": [1, 2, 2, 2, nodes_per_rack], "nodeLevel": 4,
                       "topCells": racks}],
           "virtualClusters": {v: {"cells": [{"chain": "RACK", "cellType": types[k - 1], "cellNumber": n}
                                             for k, n in sorted(lv.items()) if n > 0]}
                               for v, lv in reservations.items()}}
    return load_instance(doc)
