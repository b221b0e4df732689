"""Clusters from files: a JSON/YAML spec, the openb node list, or shorthand text.

Spec document (JSON or YAML)::

    name: my-cluster            # optional
    regions:
      - name: east
        clusters:               # dynamic clusters (MAST §4)
          - name: dc0
            racks:
              - name: k0
                machines:
                  - {name: m, gpus: 8, gpu_type: V100, cpus: 64, count: 4}

A machine entry with ``count: n`` (default 1) stands for n machines named ``<name>-0..``.
Every field is validated; errors name the field path (``regions[0].clusters[1].racks[0]
.machines[2].gpus``) after the file name.

An optional ``network`` section gives the links (a two-tier tree, :mod:`placement.sim.network`);
without it the cluster has no links, as before.

Shorthand (``--cluster``): ``RxCxKxMxG[:TYPE]``: R regions x C dynamic clusters x K racks x M
machines x G GPUs per machine, of one type (default V100, 64 CPUs per machine).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import validate as v
from ..errors import InstanceError
from .cluster import MAX_GPUS, Cluster, MachineSpec

__all__ = ["cluster_from_doc", "cluster_to_doc", "load_cluster_spec", "load_openb_nodes",
           "parse_shorthand", "resolve_cluster", "OPENB_RACK_SIZE"]

OPENB_RACK_SIZE = 8
MAX_MACHINES = 200_000
MAX_CPUS = 100_000  # per machine
_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,100}")


def _name(x: Any, where: str) -> str:
    return v.name(x, where, pattern=_NAME, describe="a name of 1-100 letters, digits or _ . : / -")


def _count(x: Any, where: str, lo: int, hi: int) -> int:
    return v.integer(x, where, lo, hi)


def _list(x: Any, where: str) -> list:
    return v.as_list(x, where, nonempty=True)


def _obj(x: Any, where: str, allowed: set[str], required: set[str]) -> dict:
    return v.required_keys(v.known_keys(v.obj(x, where), allowed, f"{where}."), required, f"{where}.")


def cluster_from_doc(doc: Any, where: str = "cluster") -> Cluster:
    """A :class:`Cluster` from a parsed spec document (module docstring)."""
    d = _obj(doc, where, {"name", "regions", "problem", "network"}, {"regions"})
    name = _name(d.get("name", "cluster"), f"{where}.name")
    machines: list[MachineSpec] = []
    total = 0
    for a, reg in enumerate(_list(d["regions"], f"{where}.regions")):
        w_r = f"{where}.regions[{a}]"
        reg = _obj(reg, w_r, {"name", "clusters"}, {"name", "clusters"})
        rname = _name(reg["name"], f"{w_r}.name")
        for b, dc in enumerate(_list(reg["clusters"], f"{w_r}.clusters")):
            w_c = f"{w_r}.clusters[{b}]"
            dc = _obj(dc, w_c, {"name", "racks"}, {"name", "racks"})
            cname = _name(dc["name"], f"{w_c}.name")
            for c, rack in enumerate(_list(dc["racks"], f"{w_c}.racks")):
                w_k = f"{w_c}.racks[{c}]"
                rack = _obj(rack, w_k, {"name", "machines"}, {"name", "machines"})
                kname = _name(rack["name"], f"{w_k}.name")
                for e, m in enumerate(_list(rack["machines"], f"{w_k}.machines")):
                    w_m = f"{w_k}.machines[{e}]"
                    m = _obj(m, w_m, {"name", "gpus", "gpu_type", "cpus", "count"},
                             {"name", "gpus", "gpu_type"})
                    mname = _name(m["name"], f"{w_m}.name")
                    gpus = _count(m["gpus"], f"{w_m}.gpus", 1, 1024)
                    gtype = _name(m["gpu_type"], f"{w_m}.gpu_type")
                    cpus = _count(m.get("cpus", 0), f"{w_m}.cpus", 0, MAX_CPUS)
                    n = _count(m.get("count", 1), f"{w_m}.count", 1, MAX_MACHINES)
                    total += n * gpus
                    if total > MAX_GPUS or len(machines) + n > MAX_MACHINES:
                        raise InstanceError(w_m, f"the cluster may have at most {MAX_GPUS} GPUs "
                                            f"and {MAX_MACHINES} machines")
                    names = [mname] if "count" not in m else [f"{mname}-{i}" for i in range(n)]
                    machines += [MachineSpec(x, kname, cname, rname, gpus, gtype, cpus) for x in names]
    seen: set[str] = set()
    for m in machines:
        if m.name in seen:
            raise InstanceError(f"{where}.regions", f"machine name {m.name!r} is used twice")
        seen.add(m.name)
    try:
        cluster = Cluster.from_machines(machines, name=name)
    except InstanceError as exc:
        raise InstanceError(f"{where}.regions", exc.message) from None
    if "network" not in d:
        return cluster
    from .network import network_from_doc, network_matches

    net = dict(d["network"]) if isinstance(d["network"], dict) else d["network"]
    network_matches(network_from_doc(net, f"{where}.network"), cluster, f"{where}.network")
    return cluster.with_network(net)


def cluster_to_doc(cluster: Cluster) -> dict:
    """The spec document of a cluster (round-trips through :func:`cluster_from_doc`)."""
    regions: list[dict] = []
    for m in cluster.machines():
        if not regions or regions[-1]["name"] != m.region:
            regions.append({"name": m.region, "clusters": []})
        cl = regions[-1]["clusters"]
        if not cl or cl[-1]["name"] != m.dcluster:
            cl.append({"name": m.dcluster, "racks": []})
        racks = cl[-1]["racks"]
        if not racks or racks[-1]["name"] != m.rack:
            racks.append({"name": m.rack, "machines": []})
        racks[-1]["machines"].append({"name": m.name, "gpus": m.gpus, "gpu_type": m.gpu_type,
                                      "cpus": m.cpus})
    doc = {"name": cluster.name, "regions": regions}
    if cluster.network is not None:
        doc["network"] = dict(cluster.network)
    return doc


def load_cluster_spec(path: str | os.PathLike) -> Cluster:
    """A cluster from a JSON/YAML spec file; errors name the file and the field path."""
    from ..io import read_document

    p = Path(path)
    if p.exists() and p.stat().st_size > 64 * 2**20:
        raise InstanceError(str(p), "a cluster spec may have at most 64 MiB")
    doc = read_document(p)
    return cluster_from_doc(doc, where=str(p))


OPENB_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")


def load_openb_nodes(path: str | os.PathLike, rack_size: int = OPENB_RACK_SIZE) -> Cluster:
    """The Alibaba openb GPU node list (``sn,cpu_milli,memory_mib,gpu,model``) as a cluster.

    Real heterogeneous GPU models (``model`` is the GPU type; CPUs = ``cpu_milli`` / 1000, rounded
    down). The file has no racks or regions: one region, one dynamic cluster, racks of
    ``rack_size`` consecutive nodes in file order (our choice). Nodes with no GPU are skipped.
    """
    from .trace import _cell, _csv_rows, _header, _int, _open_rows

    if not isinstance(rack_size, int) or rack_size < 1:
        raise InstanceError("rack_size", "must be a positive integer")
    name, text = _open_rows(path, "CSV")
    rows = _csv_rows(name, text)
    cols, width = _header(name, rows, OPENB_NODE_COLUMNS)
    machines: list[MachineSpec] = []
    seen: set[str] = set()
    total = 0
    for n, row in rows:
        sn = _cell(name, n, row, cols, width, "sn")
        if sn in seen:
            raise InstanceError(f"{name} row {n} column 'sn'", "must be a unique, non-empty node name")
        _name(sn, f"{name} row {n} column 'sn'")  # what a cluster spec accepts, so instance.json reads back
        seen.add(sn)
        cpu = _int(name, n, "cpu_milli", _cell(name, n, row, cols, width, "cpu_milli"))
        if cpu > MAX_CPUS * 1000:
            raise InstanceError(f"{name} row {n} column 'cpu_milli'", f"must be at most {MAX_CPUS * 1000:,}")
        _int(name, n, "memory_mib", _cell(name, n, row, cols, width, "memory_mib"))
        g = _int(name, n, "gpu", _cell(name, n, row, cols, width, "gpu"))
        model = _cell(name, n, row, cols, width, "model")
        if g == 0:
            continue
        if g > 1024:
            raise InstanceError(f"{name} row {n} column 'gpu'", "must be at most 1024 GPUs per node")
        _name(model, f"{name} row {n} column 'model'")
        total += g
        if total > MAX_GPUS:
            raise InstanceError(name, f"a cluster may have at most {MAX_GPUS} GPUs")
        k = len(machines) // rack_size
        machines.append(MachineSpec(sn, f"rack-{k:04d}", "openb", "openb", g, model, cpu // 1000))
    if not machines:
        raise InstanceError(name, "has no GPU node")
    return Cluster.from_machines(machines, name=re.sub(r"[^A-Za-z0-9_.:/-]", "_", Path(name).stem)[:100] or "openb")


_SHORT = re.compile(r"^(\d{1,9})x(\d{1,9})x(\d{1,9})x(\d{1,9})x(\d{1,9})(?::([A-Za-z0-9_.-]{1,100}))?$")
MAX_DCLUSTERS = 10_000  # regions x dynamic clusters: each is a unit the policies keep state for


def parse_shorthand(text: str, option: str = "--cluster") -> Cluster:
    """``RxCxKxMxG[:TYPE]`` -> :meth:`Cluster.uniform`."""
    m = _SHORT.match(text.strip())
    if not m:
        raise InstanceError(option, "must be a spec file (.json/.yaml), a node list (.csv), 'openb', "
                            f"or RxCxKxMxG[:TYPE] (e.g. 1x2x4x8x8:V100), not {text[:60]!r}")
    r, c, k, mm, g = (int(x) for x in m.groups()[:5])
    if min(r, c, k, mm, g) < 1 or r * c * k * mm * g > MAX_GPUS:
        raise InstanceError(option, f"every count must be >= 1 and the cluster at most {MAX_GPUS} GPUs")
    if r * c > MAX_DCLUSTERS or r * c * k * mm > MAX_MACHINES:
        raise InstanceError(option, f"at most {MAX_DCLUSTERS:,} regions x dynamic clusters and "
                            f"{MAX_MACHINES:,} machines, got {r * c:,} and {r * c * k * mm:,}")
    return Cluster.uniform(r, c, k, mm, g, gpu_type=m.group(6) or "V100")


def resolve_cluster(text: str, option: str = "--cluster") -> Cluster:
    """A cluster from a ``--cluster`` value: spec file, openb node CSV, or shorthand. (The shipped
    name ``openb`` is the app's: :func:`placement.app.shipped.cluster_arg`.)"""
    low = text.lower()
    if low.endswith((".json", ".yaml", ".yml")):
        return load_cluster_spec(text)
    if low.endswith(".csv"):
        return load_openb_nodes(text)
    return parse_shorthand(text, option)
