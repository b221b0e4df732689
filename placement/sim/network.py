"""A cluster's network (CASSINI, NSDI'24, §5.1): a tree or a Clos from a small spec section.

Spec section (JSON/YAML)::

    network: {racks: 12, servers_per_rack: 2, gpus_per_server: 1,
              server_capacity: 50, oversubscription: 2}
    network: {kind: clos, racks: 6, servers_per_rack: 4, racks_per_pod: 3,
              uplinks_per_rack: 2, cores: 3, server_capacity: 50, link_capacity: 50}

``kind`` is ``tree`` (default) or ``clos``. ``server_capacity`` is the server NIC (Gbps). In a
tree a rack uplink carries ``servers_per_rack * server_capacity / oversubscription`` (the
paper's 2:1 testbed, Figure 10; :func:`placement.cassini.topology.tree_topology`). A Clos
(:func:`placement.cassini.topology.clos_topology`) groups racks in pods of ``racks_per_pod``,
gives each rack ``uplinks_per_rack`` uplinks of ``link_capacity`` to its pod's aggregation
switches and joins every aggregation switch to each of ``cores`` core switches; flows take
one of the equal-cost paths by a deterministic hash (ECMP). ``goodput`` (optional, in (0, 1],
default 1) is the share of a link's capacity delivered while more than one flow crosses it
and their demand exceeds its capacity (one reading for CASSINI's score and the transport)
(:data:`placement.cassini.fluid.SECTION_2_2_GOODPUT` = 0.88 reproduces CASSINI §2.2's 22 + 22 of
50 Gbps under DCQCN; 1 is plain max-min sharing). Errors name the field
(``network.server_capacity``). The engine shares these links over time through
:mod:`placement.sim.links`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .. import validate as v
from ..cassini.topology import Topology, clos_topology, tree_topology

__all__ = ["iteration_times", "shared_links", "fluid_window", "mean_iterations", "network_from_doc", "network_matches"]

_COMMON = {"kind", "racks", "servers_per_rack", "gpus_per_server", "server_capacity", "goodput"}
_KEYS = {"tree": _COMMON | {"oversubscription"},
         "clos": _COMMON | {"racks_per_pod", "uplinks_per_rack", "cores", "link_capacity"}}


def network_from_doc(doc: Any, where: str = "network") -> Topology:
    """The :class:`Topology` of a ``network`` spec section (module docstring)."""
    d = v.obj(doc, where)
    kind = d.get("kind", "tree")
    if not isinstance(kind, str) or kind not in _KEYS:
        from ..errors import InstanceError

        raise InstanceError(f"{where}.kind", f"must be 'tree' or 'clos', not {kind!r}")
    d = v.required_keys(v.known_keys(d, _KEYS[kind], f"{where}."), {"racks", "servers_per_rack", "server_capacity"},
                        f"{where}.")
    racks = v.integer(d["racks"], f"{where}.racks", 1, 10_000)
    per = v.integer(d["servers_per_rack"], f"{where}.servers_per_rack", 1, 10_000)
    gpus = v.integer(d.get("gpus_per_server", 1), f"{where}.gpus_per_server", 1, 64)
    cap = v.number(d["server_capacity"], f"{where}.server_capacity", positive=True)
    good = v.number(d.get("goodput", 1.0), f"{where}.goodput", positive=True)
    if good > 1.0:
        from ..errors import InstanceError

        raise InstanceError(f"{where}.goodput", f"must be in (0, 1], not {good}")
    return replace(_topology(d, kind, where, racks, per, gpus, cap), shared_goodput=float(good))


def _topology(d: dict, kind: str, where: str, racks: int, per: int, gpus: int, cap: float) -> Topology:
    if kind == "tree":
        over = v.number(d.get("oversubscription", 1.0), f"{where}.oversubscription", positive=True)
        return tree_topology(pods=1, tors_per_pod=racks, servers_per_tor=per, gpus_per_server=gpus,
                             server_capacity=cap, oversubscription=over)
    pod = v.integer(d.get("racks_per_pod", racks), f"{where}.racks_per_pod", 1, racks)
    if racks % pod:
        from ..errors import InstanceError

        raise InstanceError(f"{where}.racks_per_pod", f"must divide racks ({racks}), not {pod}")
    up = v.integer(d.get("uplinks_per_rack", 1), f"{where}.uplinks_per_rack", 1, 64)
    cores = v.integer(d.get("cores", 1), f"{where}.cores", 1, 1_000)
    link = v.number(d.get("link_capacity", cap), f"{where}.link_capacity", positive=True)
    return clos_topology(racks, per, racks_per_pod=pod, uplinks_per_rack=up, cores=cores, gpus_per_server=gpus,
                         server_capacity=cap, link_capacity=link)


def network_matches(topo: Topology, cluster, where: str = "network") -> None:
    """Server ``s{i}`` is machine ``i`` of the cluster: same count, same GPUs per server, and
    the servers of one rack switch are the machines of one cluster rack."""
    from ..errors import InstanceError

    if len(topo.servers) != cluster.n_machines:
        raise InstanceError(where, f"racks x servers_per_rack = {len(topo.servers)} servers, but the "
                            f"cluster has {cluster.n_machines} machines")
    for i, (_s, g) in enumerate(topo.servers):
        if int(cluster.machine_gpus[i]) != g:
            raise InstanceError(f"{where}.gpus_per_server", f"is {g}, but machine "
                                f"{cluster.machine_names[i]!r} has {int(cluster.machine_gpus[i])} GPUs")
    index = {s: i for i, (s, _) in enumerate(topo.servers)}
    rack_of_switch: dict[str, int] = {}
    for lk in topo.links:
        a, b = lk.ends
        if a in index or b in index:
            s, sw = (a, b) if a in index else (b, a)
            i = index[s]
            first = rack_of_switch.setdefault(sw, int(cluster.machine_rack[i]))
            if int(cluster.machine_rack[i]) != first:
                raise InstanceError(f"{where}.servers_per_rack", f"machine {cluster.machine_names[i]!r} is "
                                    "not in the cluster rack of the other machines of its rack switch")


def iteration_times(topo: Topology, jobs: dict, *, window_iterations: int = 16, warmup: int = 3,
                    loss: float = 0.0) -> dict[str, float]:
    """Each job's mean iteration time (ms) when ``jobs`` share the links of ``topo``.

    ``jobs`` maps a name to ``(profile, servers, shift_ms)``. The event-driven fluid model
    (max-min sharing per link; CASSINI §2's stretched phases) runs for ``window_iterations`` of the
    slowest ideal iteration plus the largest shift; the first ``warmup`` iterations of each job are
    skipped. A job alone on its links runs at its profile's iteration time.
    """
    return shared_links(topo, jobs, window_iterations=window_iterations, warmup=warmup, loss=loss)[0]


def shared_links(topo: Topology, jobs: dict, *, window_iterations: int = 16, warmup: int = 3,
                 loss: float = 0.0) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`iteration_times` and each link's utilisation (carried volume over capacity x the
    fluid run's horizon, warm-up included) for the links the jobs cross."""
    if not jobs:
        return {}, {}
    names, r = fluid_window(topo, jobs, window_iterations=window_iterations, loss=loss)
    return mean_iterations(names, r, jobs, warmup), r.link_utilisation(topo.capacity)


def fluid_window(topo: Topology, jobs: dict, *, window_iterations: int = 16, loss: float = 0.0):
    """``(names, FluidResult)``: the fluid model run on ``jobs`` (as :func:`iteration_times`) for
    ``window_iterations`` of the slowest ideal iteration plus the largest shift, with the
    topology's ``shared_goodput``."""
    from ..cassini.fluid import FluidJob, simulate

    names = sorted(jobs)
    if not names:
        return names, None
    window = window_iterations * max(jobs[n][0].iteration_time for n in names)
    shifts = [float(jobs[n][2]) for n in names]
    fl = [FluidJob(jobs[n][0], topo.job_links(tuple(jobs[n][1])), shift=s, iterations=10**9)
          for n, s in zip(names, shifts, strict=True)]
    return names, simulate(fl, topo.capacity, loss=loss, horizon=window + max(shifts),
                           shared_goodput=topo.shared_goodput)


def mean_iterations(names: list[str], r, jobs: dict, warmup: int) -> dict[str, float]:
    """Each job's mean iteration time in a :func:`fluid_window` run after ``warmup`` iterations
    (its profile's when it completes none)."""
    out = {}
    for n, it in zip(names, r.iteration_times() if names else (), strict=True):
        use = it[warmup:] if len(it) > warmup else it
        out[n] = float(use.mean()) if len(use) else float(jobs[n][0].iteration_time)
    return out
