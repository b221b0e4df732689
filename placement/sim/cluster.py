"""The simulated cluster: regions -> dynamic clusters -> racks -> machines -> GPUs of a type.

GPUs are numbered 0..G-1, machine by machine (a machine's GPUs are consecutive), machines rack
by rack, racks dynamic cluster by dynamic cluster, those region by region. Per-GPU numpy arrays
(read-only) give each GPU's type and the index of its machine, rack, dynamic cluster and region;
indices are global (rack 3 is the fourth rack of the whole cluster). Network tiers follow
(Dally §3): a set of GPUs spans the ``machine``, ``rack``, ``cluster`` (one dynamic
cluster, several racks: MAST §4) or ``network`` tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InstanceError

__all__ = ["Cluster", "TIERS", "MachineSpec"]

TIERS = ("machine", "rack", "cluster", "network")
MAX_GPUS = 2_000_000


@dataclass(frozen=True)
class MachineSpec:
    """One machine as built: its name, rack/dynamic cluster/region names, GPU type and counts."""

    name: str
    rack: str
    dcluster: str
    region: str
    gpus: int
    gpu_type: str
    cpus: int = 0


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Cluster:
    """An immutable cluster. Build with :meth:`uniform`, :meth:`from_machines`, or the spec
    loaders in :mod:`placement.sim.clusters`.

    Attributes (numpy arrays indexed by GPU): ``gpu_type`` (str), ``machine``, ``rack``,
    ``dcluster``, ``region`` (int). Per machine: ``machine_cpus``, ``machine_rack``,
    ``machine_first`` (first GPU id), ``machine_gpus`` (count). Names: ``machine_names``,
    ``rack_names``, ``dcluster_names``, ``region_names``; ``types`` (sorted distinct GPU types),
    ``type_count`` (type -> GPUs).
    """

    name: str
    gpu_type: np.ndarray
    machine: np.ndarray
    rack: np.ndarray
    dcluster: np.ndarray
    region: np.ndarray
    machine_cpus: np.ndarray
    machine_names: tuple[str, ...]
    rack_names: tuple[str, ...]
    dcluster_names: tuple[str, ...]
    region_names: tuple[str, ...]
    machine_rack: np.ndarray = field(repr=False, default=None)
    machine_first: np.ndarray = field(repr=False, default=None)
    machine_gpus: np.ndarray = field(repr=False, default=None)
    types: tuple[str, ...] = field(repr=False, default=())
    type_count: dict = field(repr=False, default_factory=dict)
    #: the validated ``network`` spec section (:mod:`placement.sim.network`), or None: no links
    network: dict | None = field(repr=False, default=None)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_machines(cls, machines: Sequence[MachineSpec], name: str = "cluster") -> Cluster:
        """Build from machines listed in order; names of racks/dynamic clusters/regions may repeat
        only contiguously within their parent (a rack belongs to one dynamic cluster, etc.)."""
        if not machines:
            raise InstanceError("machines", "a cluster needs at least one machine")
        total = sum(m.gpus for m in machines)
        if total > MAX_GPUS:
            raise InstanceError("machines", f"a cluster may have at most {MAX_GPUS} GPUs, not {total}")
        reg_idx: dict[str, int] = {}
        dc_idx: dict[tuple, int] = {}
        rack_idx: dict[tuple, int] = {}
        m_names: list[str] = []
        seen_m: set[str] = set()
        gtype, gm, gr, gd, gg, cpus, mrack, mfirst, mcount = [], [], [], [], [], [], [], [], []
        parent_of_rack: dict[int, int] = {}
        for i, m in enumerate(machines):
            if m.name in seen_m:
                raise InstanceError(f"machines[{i}].name", f"repeats the machine name {m.name!r}")
            seen_m.add(m.name)
            if m.gpus < 1 or m.cpus < 0:
                raise InstanceError(f"machines[{i}]", "a machine needs >= 1 GPU and >= 0 CPUs")
            if not m.gpu_type:
                raise InstanceError(f"machines[{i}].gpu_type", "must name the GPU type")
            r = reg_idx.setdefault(m.region, len(reg_idx))
            d = dc_idx.setdefault((m.region, m.dcluster), len(dc_idx))
            k = rack_idx.setdefault((m.region, m.dcluster, m.rack), len(rack_idx))
            parent_of_rack[k] = d
            mi = len(m_names)
            m_names.append(m.name)
            mfirst.append(len(gtype))
            mcount.append(m.gpus)
            mrack.append(k)
            cpus.append(m.cpus)
            for _ in range(m.gpus):
                gtype.append(m.gpu_type)
                gm.append(mi)
                gr.append(k)
                gd.append(d)
                gg.append(r)
        if not gtype:
            raise InstanceError("machines", "a cluster needs at least one GPU")
        order = np.lexsort((np.arange(len(gm)), gm, gr, gd, gg))
        if not np.array_equal(order, np.arange(len(gm))):
            raise InstanceError("machines", "must be listed region by region, dynamic cluster by "
                                "dynamic cluster, rack by rack (contiguous groups)")
        types = tuple(sorted(set(gtype)))
        ga = np.array(gtype)
        return cls(
            name=name, gpu_type=_ro(ga), machine=_ro(np.array(gm, dtype=np.int64)),
            rack=_ro(np.array(gr, dtype=np.int64)), dcluster=_ro(np.array(gd, dtype=np.int64)),
            region=_ro(np.array(gg, dtype=np.int64)),
            machine_cpus=_ro(np.array(cpus, dtype=np.int64)), machine_names=tuple(m_names),
            rack_names=tuple(n[2] for n in rack_idx), dcluster_names=tuple(n[1] for n in dc_idx),
            region_names=tuple(reg_idx), machine_rack=_ro(np.array(mrack, dtype=np.int64)),
            machine_first=_ro(np.array(mfirst, dtype=np.int64)),
            machine_gpus=_ro(np.array(mcount, dtype=np.int64)), types=types,
            type_count={t: int((ga == t).sum()) for t in types})

    @classmethod
    def uniform(cls, regions: int = 1, clusters: int = 1, racks: int = 2, machines: int = 4,
                gpus_per_machine: int = 8, gpu_type: str = "V100", cpus: int = 64,
                name: str | None = None) -> Cluster:
        """Shorthand: ``regions`` x ``clusters`` (dynamic clusters per region) x ``racks`` per
        dynamic cluster x ``machines`` per rack x ``gpus_per_machine``, all of one type."""
        for fname, v in (("regions", regions), ("clusters", clusters), ("racks", racks),
                         ("machines", machines), ("gpus_per_machine", gpus_per_machine)):
            if not isinstance(v, int | np.integer) or v < 1:
                raise InstanceError(fname, "must be a positive integer")
        if regions * clusters * racks * machines * gpus_per_machine > MAX_GPUS:
            raise InstanceError("cluster", f"may have at most {MAX_GPUS} GPUs")
        ms = [MachineSpec(f"r{a}-c{b}-k{c}-m{d}", f"r{a}-c{b}-k{c}", f"r{a}-c{b}", f"r{a}",
                          gpus_per_machine, gpu_type, cpus)
              for a in range(regions) for b in range(clusters) for c in range(racks)
              for d in range(machines)]
        nm = name or f"uniform-{regions}x{clusters}x{racks}x{machines}x{gpus_per_machine}"
        return cls.from_machines(ms, name=nm)

    # ------------------------------------------------------------------ queries
    @property
    def n_gpus(self) -> int:
        return int(self.gpu_type.shape[0])

    @property
    def n_machines(self) -> int:
        return len(self.machine_names)

    def tier(self, gpu_ids) -> str:
        """The widest level the GPUs span: ``"machine"``, ``"rack"``, ``"cluster"`` or
        ``"network"`` (an empty or one-GPU set is ``"machine"``)."""
        g = np.asarray(gpu_ids, dtype=np.int64)
        if g.size <= 1:
            return "machine"
        m = self.machine[g]
        if (m == m[0]).all():
            return "machine"
        r = self.rack[g]
        if (r == r[0]).all():
            return "rack"
        d = self.dcluster[g]
        if (d == d[0]).all():
            return "cluster"
        return "network"

    def capacity(self, gpu_type: str | None) -> int:
        """GPUs a job asking for ``gpu_type`` could use (all GPUs when None)."""
        return self.n_gpus if gpu_type is None else self.type_count.get(gpu_type, 0)

    def with_network(self, network: dict | None) -> Cluster:
        """This cluster carrying a (validated) network spec section; None removes it."""
        from dataclasses import replace

        return replace(self, network=None if network is None else dict(network))

    def topology(self):
        """The :class:`placement.cassini.topology.Topology` of the network, or None without one.
        Server ``s{i}`` is machine ``i`` in order (checked when the spec is read)."""
        if self.network is None:
            return None
        from .network import network_from_doc

        return network_from_doc(self.network)

    def machines(self) -> list[MachineSpec]:
        """The machines as :class:`MachineSpec` (round-trips through :meth:`from_machines`)."""
        out = []
        for mi, nm in enumerate(self.machine_names):
            f = int(self.machine_first[mi])
            k = int(self.machine_rack[mi])
            n = int(self.machine_gpus[mi])
            out.append(MachineSpec(nm, self.rack_names[k], self.dcluster_names[int(self.dcluster[f])],
                                   self.region_names[int(self.region[f])], n, str(self.gpu_type[f]),
                                   int(self.machine_cpus[mi])))
        return out
