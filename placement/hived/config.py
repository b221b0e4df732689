"""Loading and validating HiveD cell specifications (three forms) and writing them back.

Accepted documents (JSON or YAML, parsed by :func:`placement.io.read_document`):

HiveD YAML (Microsoft's hivedscheduler config)
    ``physicalCluster.cellTypes`` (``childCellType``, ``childCellNumber``,
    ``isNodeLevel``), ``physicalCluster.physicalCells`` (``cellType``,
    ``cellAddress``, ``pinnedCellId``, nested ``cellChildren``) and
    ``virtualClusters`` (``virtualCells`` with dotted ``cellType`` paths,
    ``pinnedCells``). A type not listed under ``cellTypes`` is a leaf type;
    each top cell's type names a chain; ``A.B.C`` names level ``C`` of chain
    ``A`` (each element the child type of the one before). Kubernetes keys
    (``kubeApiServerAddress``, ``skuTypes``, ...) are ignored. Extension: a cell
    entry with ``healthy: false`` is a faulty cell.
Paper Figure 4 form
    ``cellHierarchy`` (``name``, ``hierarchy`` from level 1 up with
    ``splitFactor``; when the first entry has a ``splitFactor`` the lower
    levels are omitted and an implicit level-1 type ``<type>-UNIT`` is added),
    ``physicalCluster`` (``topLevelCellType``, ``topLevelCellAddresses``: one
    entry per top cell; ``10.0.1.0~7`` expands to the node addresses of that
    cell and must list exactly as many), ``vcAssignment`` (``vc``, ``cells`` with
    ``subCluster``/``cellType``/``cellNumber``, optional ``pinnedCells``).
    The node level is the entry with ``isNodeLevel: true``, else the type whose
    name ends in ``NODE``, else level 1.
Canonical JSON (``"problem": "hived"``, what :func:`instance_to_json` writes).

:func:`instance_to_hived` writes the HiveD YAML form back (round trip).

Every problem raises one :class:`~placement.errors.InstanceError` naming the field.
"""

from __future__ import annotations

import re
from typing import Any

from .. import validate
from ..errors import InstanceError
from .cells import Chain, HivedInstance, PinnedCell, VirtualCluster

__all__ = ["load_instance", "instance_to_json", "instance_to_hived", "claims"]

FORMAT_VERSION = 1


def claims(doc: Any) -> bool:
    """True for HiveD YAML and Figure 4 documents (they carry no ``problem`` key)."""
    return isinstance(doc, dict) and "problem" not in doc and (
        "physicalCluster" in doc or "cellHierarchy" in doc)


def load_instance(doc: Any, name: str = "") -> HivedInstance:
    """Validate any accepted form and return a :class:`HivedInstance`."""
    if not isinstance(doc, dict):
        raise InstanceError("document", "must be a mapping (HiveD YAML, Figure 4 form or hived JSON)")
    if doc.get("problem") is not None:
        if doc["problem"] != "hived":
            raise InstanceError("problem", f"must be 'hived', got {doc['problem']!r}")
        return _load_canonical(doc, name)
    if "cellHierarchy" in doc:
        return _load_figure4(doc, name)
    if "physicalCluster" in doc:
        return _load_hived_yaml(doc, name)
    raise InstanceError("physicalCluster", "is missing (expected a HiveD config, "
                        "the Figure 4 form with cellHierarchy, or a hived JSON document)")


# ----------------------------------------------------------------------------- helpers

_obj = validate.obj
_list = validate.as_list
MAX_GPUS_PER_CHAIN = 2**22  # 4,194,304 GPUs: 16x the largest cluster of the benchmarks


def _pos_int(v: Any, field: str) -> int:
    """A cell count or GPU count: an integer in 1..MAX_GPUS_PER_CHAIN."""
    return validate.integer(v, field, 1, MAX_GPUS_PER_CHAIN)


def _name(v: Any, field: str) -> str:
    """A cell type, VC or node name (YAML reads ``1`` as an integer: accepted as ``"1"``)."""
    return validate.name(v, field, numbers=True)


def _reservation(b: _Builder, c: int, e: dict, fe: str, chain_label: str) -> tuple[int, int, int, str]:
    """One VC entry naming a ``cellType`` of chain ``c`` and a ``cellNumber``: (chain, level, count, field)."""
    t = _name(e.get("cellType"), f"{fe}.cellType")
    if t not in b.chains[c].types:
        raise InstanceError(f"{fe}.cellType", f"{t!r} is not a cell type of {chain_label}")
    return c, b.chains[c].level_of(t), _pos_int(e.get("cellNumber"), f"{fe}.cellNumber"), fe


def _bool(v: Any, field: str) -> bool:
    return validate.check_bool(field, v)


class _Builder:
    """Collects chains, addresses, pins and bad cells while walking a document."""

    def __init__(self) -> None:
        self.chains: list[Chain] = []
        self.chain_of: dict[str, int] = {}
        self.addresses: dict[tuple[int, int, int], str] = {}
        self.pinned: dict[str, PinnedCell] = {}
        self.bad: set[tuple[int, int, int]] = set()
        self.node_address_field: dict[tuple[int, int, str], str] = {}

    def address(self, key: tuple[int, int, int], addr: str, field: str, *, whole_chain: bool = False) -> None:
        """Record a cell's address; node-level addresses must not repeat.

        The scope is the top-level cell (addresses may be relative to it, as the
        default rule makes them), or the whole chain for the Figure 4 form, whose
        node addresses are IP ranges. Several chains may share a node.
        """
        c, k, i = key
        ch = self.chains[c]
        if k == ch.node_level:
            scope = (c, -1 if whole_chain else ch.ancestor(k, i, ch.top), addr)
            other = self.node_address_field.get(scope)
            if other is not None and self.addresses.get(key) != addr:
                where = f"chain {ch.name}" if whole_chain else f"one {ch.types[-1]} cell of chain {ch.name}"
                raise InstanceError(field, f"repeats the node address {addr!r} within {where} (also at {other})")
            self.node_address_field[scope] = field
        self.addresses[key] = addr

    def check_sizes(self) -> None:
        """Every chain must stay within MAX_GPUS_PER_CHAIN GPUs (cells are enumerated per level)."""
        for ch in self.chains:
            gpus = 1
            for h in ch.split:
                gpus *= h
            if gpus * ch.n_top > MAX_GPUS_PER_CHAIN:
                raise InstanceError(f"chain {ch.name}", f"has {gpus * ch.n_top} GPUs; at most "
                                    f"{MAX_GPUS_PER_CHAIN} per chain are supported")

    def pin(self, pid: str, c: int, k: int, i: int, field: str) -> None:
        if pid in self.pinned:
            raise InstanceError(field, f"pinnedCellId {pid!r} is used by more than one physical cell")
        for p in self.pinned.values():
            if p.chain == c and _overlap(self.chains[c], p.level, p.index, k, i):
                raise InstanceError(field, f"pinned cell {pid!r} overlaps pinned cell {p.id!r}")
        self.pinned[pid] = PinnedCell(pid, c, k, i)

    def vcs(self, vc_docs: list[tuple[str, list[tuple[int, int, int, str]], list[str], str]]) -> tuple:
        out = []
        owner: dict[str, str] = {}
        for vname, cells, pins, field in vc_docs:
            reserved: dict[tuple[int, int], int] = {}
            for c, k, n, _f in cells:
                reserved[(c, k)] = reserved.get((c, k), 0) + n
            for pid in pins:
                if pid not in self.pinned:
                    raise InstanceError(f"{field}.pinnedCells", f"names an unknown pinnedCellId {pid!r}")
                if pid in owner:
                    raise InstanceError(f"{field}.pinnedCells",
                                        f"pinnedCellId {pid!r} is already assigned to VC {owner[pid]!r}")
                owner[pid] = vname
            out.append(VirtualCluster(vname, reserved, tuple(pins)))
        return tuple(out)


def _overlap(ch: Chain, k1: int, i1: int, k2: int, i2: int) -> bool:
    lo, hi = (k1, i1), (k2, i2)
    if k1 > k2:
        lo, hi = hi, lo
    return ch.ancestor(lo[0], lo[1], hi[0]) == hi[1]


# ----------------------------------------------------------------------------- HiveD YAML

def _chain_types(cell_types: dict[str, dict], top: str, field: str) -> tuple[list[str], list[int], list[bool]]:
    """Walk ``childCellType`` from ``top`` down to the leaf: types, splits, node flags (top first)."""
    types, splits, node = [], [], []
    seen: set[str] = set()
    t = top
    while t in cell_types:
        if t in seen:
            raise InstanceError(f"physicalCluster.cellTypes.{t}",
                                f"childCellType forms a cycle ({' -> '.join(types + [t])})")
        seen.add(t)
        spec = cell_types[t]
        types.append(t)
        splits.append(spec["childCellNumber"])
        node.append(spec["isNodeLevel"])
        t = spec["childCellType"]
    types.append(t)
    splits.append(1)
    node.append(False)
    return types, splits, node


def _load_hived_yaml(doc: dict, name: str) -> HivedInstance:
    pc = _obj(doc.get("physicalCluster"), "physicalCluster")
    raw_types = _obj(pc.get("cellTypes"), "physicalCluster.cellTypes")
    cell_types: dict[str, dict] = {}
    for t, spec in raw_types.items():
        f = f"physicalCluster.cellTypes.{t}"
        spec = _obj(spec, f)
        if "childCellType" not in spec:
            raise InstanceError(f"{f}.childCellType", "is missing")
        cell_types[str(t)] = {
            "childCellType": _name(spec["childCellType"], f"{f}.childCellType"),
            "childCellNumber": _pos_int(spec.get("childCellNumber"), f"{f}.childCellNumber"),
            "isNodeLevel": _bool(spec.get("isNodeLevel", False), f"{f}.isNodeLevel"),
        }
    for t in cell_types:  # cycles anywhere in cellTypes, not only below used top types
        _chain_types(cell_types, t, f"physicalCluster.cellTypes.{t}")
    leaf_types = {s["childCellType"] for s in cell_types.values()} - set(cell_types)

    b = _Builder()
    cells = _list(pc.get("physicalCells"), "physicalCluster.physicalCells")
    if not cells:
        raise InstanceError("physicalCluster.physicalCells", "must list at least one physical cell")
    tops: list[tuple[int, dict, str]] = []
    for n, cd in enumerate(cells):
        f = f"physicalCluster.physicalCells[{n}]"
        cd = _obj(cd, f)
        t = _name(cd.get("cellType"), f"{f}.cellType")
        if t not in cell_types:
            what = "is a leaf type, below node level" if t in leaf_types else "is not defined in cellTypes"
            raise InstanceError(f"{f}.cellType", f"{t!r} {what}")
        if t not in b.chain_of:
            types, splits, node = _chain_types(cell_types, t, f)
            nodes = [k for k, flag in enumerate(node) if flag]
            if not nodes:
                raise InstanceError(f"{f}.cellType", f"{t!r} is below node level: no isNodeLevel type "
                                    "at or below it")
            if len(nodes) > 1:
                raise InstanceError(f"{f}.cellType", f"{t!r} has more than one isNodeLevel type below it "
                                    f"({', '.join(types[k] for k in nodes)})")
            b.chain_of[t] = len(b.chains)
            b.chains.append(Chain(t, tuple(reversed(types)), tuple(reversed(splits)),
                                  node_level=len(types) - nodes[0], n_top=0))
        c = b.chain_of[t]
        ch = b.chains[c]
        tops.append((c, cd, f))
        b.chains[c] = Chain(ch.name, ch.types, ch.split, ch.node_level, ch.n_top + 1)
    seen_top = [0] * len(b.chains)
    for n, (c, cd, f) in enumerate(tops):
        i = seen_top[c]
        seen_top[c] += 1
        ch = b.chains[c]
        _walk_cell(b, ch, c, ch.top, i, cd, f, default_address=str(n))

    vc_docs = []
    vcs = _obj(doc.get("virtualClusters", {}), "virtualClusters")
    for vname, vd in vcs.items():
        f = f"virtualClusters.{vname}"
        vd = _obj(vd if vd is not None else {}, f)
        entries = []
        for j, e in enumerate(_list(vd.get("virtualCells"), f"{f}.virtualCells", allow_none=True)):
            fe = f"{f}.virtualCells[{j}]"
            e = _obj(e, fe)
            path = _name(e.get("cellType"), f"{fe}.cellType").split(".")
            if path[0] not in b.chain_of:
                raise InstanceError(f"{fe}.cellType", f"names an unknown chain {path[0]!r} "
                                    f"(chains are the physicalCells types: {', '.join(b.chain_of)})")
            c = b.chain_of[path[0]]
            ch = b.chains[c]
            k = ch.top
            for step in path[1:]:
                if k == 1 or ch.types[k - 2] != step:
                    below = ch.types[k - 2] if k > 1 else "nothing (a leaf)"
                    raise InstanceError(f"{fe}.cellType", f"{step!r} is not a child type of "
                                        f"{ch.types[k - 1]!r} (its child type is {below})")
                k -= 1
            entries.append((c, k, _pos_int(e.get("cellNumber"), f"{fe}.cellNumber"), fe))
        pins = []
        for j, p in enumerate(_list(vd.get("pinnedCells"), f"{f}.pinnedCells", allow_none=True)):
            p = _obj(p, f"{f}.pinnedCells[{j}]")
            pins.append(_name(p.get("pinnedCellId"), f"{f}.pinnedCells[{j}].pinnedCellId"))
        vc_docs.append((str(vname), entries, pins, f))
    b.check_sizes()
    return HivedInstance(name=name or str(doc.get("name", "hived-config")), chains=tuple(b.chains),
                         vcs=b.vcs(vc_docs), pinned=b.pinned, addresses=b.addresses, bad=frozenset(b.bad))


def _walk_cell(b: _Builder, ch: Chain, c: int, k: int, i: int, cd: dict, f: str,
               default_address: str | None = None) -> None:
    """Record address, pin and health of cell ``(k, i)`` and recurse into ``cellChildren``."""
    if cd.get("cellAddress") is not None:
        b.address((c, k, i), _name(cd["cellAddress"], f"{f}.cellAddress"), f"{f}.cellAddress")
    elif default_address is not None:
        b.address((c, k, i), default_address, f)
    if k == ch.node_level and (c, k, i) not in b.addresses:
        raise InstanceError(f"{f}.cellAddress", "is required for a node-level cell (its Kubernetes node name)")
    if cd.get("pinnedCellId") is not None:
        b.pin(_name(cd["pinnedCellId"], f"{f}.pinnedCellId"), c, k, i, f"{f}.pinnedCellId")
    if cd.get("healthy") is not None and not _bool(cd["healthy"], f"{f}.healthy"):
        b.bad.add((c, k, i))
    kids = _list(cd.get("cellChildren"), f"{f}.cellChildren", allow_none=True)
    if kids and k == 1:
        raise InstanceError(f"{f}.cellChildren", f"a leaf cell ({ch.types[0]}) has no children")
    if kids and len(kids) != ch.split[k - 1]:
        raise InstanceError(f"{f}.cellChildren", f"lists {len(kids)} children but {ch.types[k - 1]} "
                            f"has childCellNumber {ch.split[k - 1]}")
    if not kids:
        if k > ch.node_level:
            raise InstanceError(f"{f}.cellChildren", f"must list the {ch.types[k - 2]} children: the "
                                f"node-level cells below need a cellAddress")
        return
    for j, child in zip(ch.children(k, i), kids, strict=True):
        fc = f"{f}.cellChildren[{j - ch.children(k, i)[0]}]"
        _walk_cell(b, ch, c, k - 1, j, _obj(child, fc) if child is not None else {}, fc)


# ----------------------------------------------------------------------------- Figure 4

_RANGE = re.compile(r"^(.*?)(\d+)~(\d+)$")
_MAX_RANGE = 2**22


def _expand(entry: str, field: str) -> list[str]:
    m = _RANGE.match(entry)
    if not m:
        return [entry]
    if len(m.group(2)) > 18 or len(m.group(3)) > 18:
        raise InstanceError(field, f"range {entry[:60]!r} has a bound of more than 18 digits")
    prefix, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
    if hi < lo:
        raise InstanceError(field, f"range {entry!r} ends before it starts")
    # A range lists the nodes of one top cell; no chain holds more than 2**22 GPUs (hence nodes).
    if hi - lo + 1 > _MAX_RANGE:
        raise InstanceError(field, f"range {entry!r} lists {hi - lo + 1} nodes; at most {_MAX_RANGE} fit in a chain")
    return [f"{prefix}{x}" for x in range(lo, hi + 1)]


def _load_figure4(doc: dict, name: str) -> HivedInstance:
    b = _Builder()
    hier: dict[str, Chain] = {}
    for n, hd in enumerate(_list(doc.get("cellHierarchy"), "cellHierarchy")):
        f = f"cellHierarchy[{n}]"
        hd = _obj(hd, f)
        hname = _name(hd.get("name"), f"{f}.name")
        levels = _list(hd.get("hierarchy"), f"{f}.hierarchy")
        if not levels:
            raise InstanceError(f"{f}.hierarchy", "must list at least one cell type")
        types, split, flags = [], [], []
        for j, ld in enumerate(levels):
            fl = f"{f}.hierarchy[{j}]"
            ld = _obj(ld, fl)
            t = _name(ld.get("cellType"), f"{fl}.cellType")
            if t in types:
                raise InstanceError(f"{fl}.cellType", f"{t!r} appears twice in the hierarchy (a cycle)")
            if j == 0 and ld.get("splitFactor") is not None:
                types.append(f"{t}-UNIT")
                split.append(1)
                flags.append(False)
            if j > 0 or ld.get("splitFactor") is not None:
                split.append(_pos_int(ld.get("splitFactor"), f"{fl}.splitFactor"))
            else:
                split.append(1)
            types.append(t)
            flags.append(_bool(ld.get("isNodeLevel", False), f"{fl}.isNodeLevel"))
        if sum(flags) > 1:
            raise InstanceError(f"{f}.hierarchy", "has more than one isNodeLevel type")
        if any(flags):
            node = flags.index(True) + 1
        else:
            ends = [k + 1 for k, t in enumerate(types) if t.upper().endswith("NODE")]
            node = ends[0] if ends else 1
        if hname in hier or types[-1] in {c.types[-1] for c in hier.values()}:
            raise InstanceError(f"{f}.name", f"hierarchy {hname!r} is defined twice")
        hier[hname] = Chain(types[-1], tuple(types), tuple(split), node, 0)
    by_top = {c.name: h for h, c in hier.items()}
    tops: list[tuple[int, list[str], str, str]] = []
    for n, pd in enumerate(_list(doc.get("physicalCluster"), "physicalCluster")):
        f = f"physicalCluster[{n}]"
        pd = _obj(pd, f)
        t = _name(pd.get("topLevelCellType"), f"{f}.topLevelCellType")
        if t not in by_top:
            raise InstanceError(f"{f}.topLevelCellType", f"{t!r} is not the top cell type of any cellHierarchy")
        if t not in b.chain_of:
            b.chain_of[t] = len(b.chains)
            b.chains.append(hier[by_top[t]])
        c = b.chain_of[t]
        for j, a in enumerate(_list(pd.get("topLevelCellAddresses"), f"{f}.topLevelCellAddresses")):
            fa = f"{f}.topLevelCellAddresses[{j}]"
            entry = _name(a, fa)
            tops.append((c, _expand(entry, fa), entry, fa))
    counts = [0] * len(b.chains)
    for c, expanded, entry, f in tops:
        ch = b.chains[c]
        i = counts[c]
        counts[c] += 1
        b.address((c, ch.top, i), entry, f)
        if "~" in entry:
            per = ch.gpus[ch.top] // ch.gpus[ch.node_level]
            if len(expanded) != per:
                raise InstanceError(f, f"{entry!r} expands to {len(expanded)} addresses but a {ch.name} cell "
                                    f"holds {per} {ch.types[ch.node_level - 1]} cells")
            for j, a in enumerate(expanded):
                b.address((c, ch.node_level, i * per + j), a, f, whole_chain=True)
    for c, ch in enumerate(b.chains):
        b.chains[c] = Chain(ch.name, ch.types, ch.split, ch.node_level, counts[c])
    if not b.chains:
        raise InstanceError("physicalCluster", "must list at least one top-level cell")
    vc_docs = []
    for n, vd in enumerate(_list(doc.get("vcAssignment", []), "vcAssignment", allow_none=True)):
        f = f"vcAssignment[{n}]"
        vd = _obj(vd, f)
        vname = _name(vd.get("vc"), f"{f}.vc")
        entries = []
        for j, e in enumerate(_list(vd.get("cells"), f"{f}.cells", allow_none=True)):
            fe = f"{f}.cells[{j}]"
            e = _obj(e, fe)
            sub = _name(e.get("subCluster"), f"{fe}.subCluster")
            top = hier[sub].name if sub in hier else sub
            if top not in b.chain_of:
                raise InstanceError(f"{fe}.subCluster", f"names an unknown chain {sub!r}")
            entries.append(_reservation(b, b.chain_of[top], e, fe, repr(sub)))
        pins = [_name(p, f"{f}.pinnedCells") for p in _list(vd.get("pinnedCells"), f"{f}.pinnedCells",
                                                             allow_none=True)]
        vc_docs.append((vname, entries, pins, f))
    names = [v[0] for v in vc_docs]
    if len(set(names)) != len(names):
        raise InstanceError("vcAssignment", "names a VC more than once")
    b.check_sizes()
    return HivedInstance(name=name or str(doc.get("name", "hived-figure4")), chains=tuple(b.chains),
                         vcs=b.vcs(vc_docs), pinned={}, addresses=b.addresses)


# ----------------------------------------------------------------------------- canonical JSON

def _cell_ref(b: _Builder, v: Any, field: str) -> tuple[int, int, int]:
    v = _list(v, field)
    if len(v) != 3:
        raise InstanceError(field, "must be [chain, cellType, index]")
    chain = _name(v[0], f"{field}[0]")
    if chain not in b.chain_of:
        raise InstanceError(f"{field}[0]", f"names an unknown chain {chain!r}")
    c = b.chain_of[chain]
    ch = b.chains[c]
    t = _name(v[1], f"{field}[1]")
    if t not in ch.types:
        raise InstanceError(f"{field}[1]", f"{t!r} is not a cell type of chain {chain!r}")
    k = ch.level_of(t)
    i = v[2]
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < ch.count[k]:
        raise InstanceError(f"{field}[2]", f"must be an index in 0..{ch.count[k] - 1}, got {i!r}")
    return c, k, i


def _load_canonical(doc: dict, name: str) -> HivedInstance:
    if doc.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise InstanceError("version", f"must be {FORMAT_VERSION}, got {doc.get('version')!r}")
    b = _Builder()
    chains = _list(doc.get("chains"), "chains")
    if not chains:
        raise InstanceError("chains", "must list at least one chain")
    for n, cd in enumerate(chains):
        f = f"chains[{n}]"
        cd = _obj(cd, f)
        types = [_name(t, f"{f}.types") for t in _list(cd.get("types"), f"{f}.types")]
        if not types or len(set(types)) != len(types):
            raise InstanceError(f"{f}.types", "must list distinct cell types from level 1 up (a cycle otherwise)")
        split = [_pos_int(s, f"{f}.split") for s in _list(cd.get("split"), f"{f}.split")]
        if len(split) != len(types) or split[0] != 1:
            raise InstanceError(f"{f}.split", "must have one entry per type, starting with 1 for level 1")
        node = cd.get("nodeLevel")
        if isinstance(node, bool) or not isinstance(node, int) or not 1 <= node <= len(types):
            raise InstanceError(f"{f}.nodeLevel", f"must be a level in 1..{len(types)} (the top cell type may "
                                f"not be below node level), got {node!r}")
        cname = types[-1]
        if cname in b.chain_of:
            raise InstanceError(f"{f}.types", f"chain {cname!r} is defined twice")
        b.chain_of[cname] = n
        b.chains.append(Chain(cname, tuple(types), tuple(split), node,
                              _pos_int(cd.get("topCells"), f"{f}.topCells")))
    for n, a in enumerate(_list(doc.get("addresses", []), "addresses")):
        a = _list(a, f"addresses[{n}]")
        if len(a) != 4:
            raise InstanceError(f"addresses[{n}]", "must be [chain, cellType, index, address]")
        b.address(_cell_ref(b, a[:3], f"addresses[{n}]"), _name(a[3], f"addresses[{n}][3]"), f"addresses[{n}][3]")
    for pid, ref in _obj(doc.get("pinnedCells", {}), "pinnedCells").items():
        b.pin(str(pid), *_cell_ref(b, ref, f"pinnedCells.{pid}"), f"pinnedCells.{pid}")
    for n, ref in enumerate(_list(doc.get("badCells", []), "badCells")):
        b.bad.add(_cell_ref(b, ref, f"badCells[{n}]"))
    vc_docs = []
    for vname, vd in _obj(doc.get("virtualClusters", {}), "virtualClusters").items():
        f = f"virtualClusters.{vname}"
        vd = _obj(vd, f)
        entries = []
        for j, e in enumerate(_list(vd.get("cells", []), f"{f}.cells")):
            fe = f"{f}.cells[{j}]"
            e = _obj(e, fe)
            chain = _name(e.get("chain"), f"{fe}.chain")
            if chain not in b.chain_of:
                raise InstanceError(f"{fe}.chain", f"names an unknown chain {chain!r}")
            entries.append(_reservation(b, b.chain_of[chain], e, fe, f"chain {chain!r}"))
        pins = [_name(p, f"{f}.pinnedCells") for p in _list(vd.get("pinnedCells", []), f"{f}.pinnedCells")]
        vc_docs.append((str(vname), entries, pins, f))
    b.check_sizes()
    return HivedInstance(name=name or str(doc.get("name", "hived")), chains=tuple(b.chains), vcs=b.vcs(vc_docs),
                         pinned=b.pinned, addresses=b.addresses, bad=frozenset(b.bad))


def instance_to_json(inst: HivedInstance) -> dict:
    """The canonical JSON form (round-trips through :func:`load_instance`)."""
    ch = inst.chains

    def ref(c: int, k: int, i: int) -> list:
        return [ch[c].name, ch[c].types[k - 1], i]

    return {
        "problem": "hived", "version": FORMAT_VERSION, "name": inst.name,
        "chains": [{"types": list(c.types), "split": list(c.split), "nodeLevel": c.node_level,
                    "topCells": c.n_top} for c in ch],
        "addresses": [ref(*key) + [a] for key, a in sorted(inst.addresses.items())],
        "pinnedCells": {p.id: ref(p.chain, p.level, p.index) for p in inst.pinned.values()},
        "badCells": [ref(*key) for key in sorted(inst.bad)],
        "virtualClusters": {v.name: {"cells": [{"chain": ch[c].name, "cellType": ch[c].types[k - 1],
                                                "cellNumber": n} for (c, k), n in sorted(v.reserved.items())],
                                     "pinnedCells": list(v.pinned)} for v in inst.vcs},
    }


def instance_to_hived(inst: HivedInstance) -> dict:
    """The HiveD YAML form of an instance (what Microsoft's hivedscheduler reads).

    Raises ``ValueError`` when the instance cannot be written in that form: two
    chains giving one cell type different children, or a chain whose node level
    is its leaf level (HiveD marks node levels on non-leaf ``cellTypes`` only).
    Bad cells are written with ``healthy: false`` (this package's extension).
    """
    cell_types: dict[str, dict] = {}
    for ch in inst.chains:
        if ch.node_level == 1 and ch.top > 1 or ch.top == 1:
            raise ValueError(f"chain {ch.name}: HiveD needs a non-leaf node-level cell type")
        for k in range(2, ch.top + 1):
            spec = {"childCellType": ch.types[k - 2], "childCellNumber": ch.split[k - 1],
                    "isNodeLevel": k == ch.node_level}
            if cell_types.setdefault(ch.types[k - 1], spec) != spec:
                raise ValueError(f"cell type {ch.types[k - 1]} has different children in two chains")
    marks: dict[tuple[int, int, int], dict] = {}
    for p in inst.pinned.values():
        marks.setdefault((p.chain, p.level, p.index), {})["pinnedCellId"] = p.id
    for key in inst.bad:
        marks.setdefault(key, {})["healthy"] = False

    def cell(c: int, k: int, i: int) -> dict:
        ch = inst.chains[c]
        out: dict[str, Any] = {}
        if k == ch.top:
            out["cellType"] = ch.name
        if (c, k, i) in inst.addresses or k in (ch.node_level, ch.top):
            out["cellAddress"] = inst.address(c, k, i)
        out.update(marks.get((c, k, i), {}))
        deeper = k > ch.node_level or any(mc == c and mk < k and ch.ancestor(mk, mi, k) == i
                                          for (mc, mk, mi) in list(marks) + list(inst.addresses))
        if k > 1 and deeper:
            out["cellChildren"] = [cell(c, k - 1, j) for j in ch.children(k, i)]
        return out

    physical = [cell(c, ch.top, i) for c, ch in enumerate(inst.chains) for i in range(ch.n_top)]
    vcs = {}
    for v in inst.vcs:
        entry: dict[str, Any] = {"virtualCells": [
            {"cellType": ".".join(inst.chains[c].types[m - 1] for m in range(inst.chains[c].top, k - 1, -1)),
             "cellNumber": n} for (c, k), n in sorted(v.reserved.items())]}
        if v.pinned:
            entry["pinnedCells"] = [{"pinnedCellId": p} for p in v.pinned]
        vcs[v.name] = entry
    return {"physicalCluster": {"cellTypes": cell_types, "physicalCells": physical}, "virtualClusters": vcs}
