"""Tree networks and the links a ring all-reduce traverses.

Terms
-----
server, switch
    Nodes of the network; servers host GPUs (``gpus`` workers each).
link
    An undirected, full-duplex edge with ``capacity`` (Gbps) in each direction.
route of a job
    A job's workers run a ring all-reduce in depth-first order of its servers.
    On a tree that ring crosses every edge of the minimal subtree spanning the
    servers exactly once in each direction, so the job loads each of those links
    with its phase bandwidth in each direction (one flow per direction). A job
    on a single server traverses no link.

Topologies must be trees (unique routes, no ECMP choice to model). The paper's
testbed (Figure 10: 24 single-GPU servers, 13 logical switches, 2:1
oversubscription) is read here as 12 top-of-rack switches with 2 servers each
and one core switch, all links 50 Gbps: each ToR has 100 Gbps down and 50 Gbps
up (2:1). The figure itself is not in the text, so this is our reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx

__all__ = ["Link", "Topology", "tree_topology", "testbed_topology"]


@dataclass(frozen=True)
class Link:
    name: str
    ends: tuple[str, str]
    capacity: float


@dataclass(frozen=True, eq=False)
class Topology:
    """Servers (name -> GPU count), switches and links of a tree network."""

    servers: tuple[tuple[str, int], ...]
    switches: tuple[str, ...]
    links: tuple[Link, ...]

    @cached_property
    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from((s for s, _ in self.servers), kind="server")
        g.add_nodes_from(self.switches, kind="switch")
        for lk in self.links:
            g.add_edge(*lk.ends, name=lk.name, capacity=lk.capacity)
        return g

    @cached_property
    def server_gpus(self) -> dict[str, int]:
        return dict(self.servers)

    @cached_property
    def capacity(self) -> dict[str, float]:
        return {lk.name: lk.capacity for lk in self.links}

    @cached_property
    def _order(self) -> dict[str, int]:
        root = self.switches[0] if self.switches else self.servers[0][0]
        return {n: i for i, n in enumerate(nx.dfs_preorder_nodes(self.graph, root))}

    def ring_order(self, servers: tuple[str, ...]) -> list[str]:
        """Distinct servers of a job in depth-first order (the ring all-reduce order)."""
        return sorted(set(servers), key=self._order.__getitem__)

    def job_links(self, servers: tuple[str, ...]) -> tuple[str, ...]:
        """Names of the links a ring all-reduce over ``servers`` traverses, sorted."""
        ring = self.ring_order(servers)
        if len(ring) < 2:
            return ()
        g = self.graph
        used: set[str] = set()
        for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
            path = nx.shortest_path(g, a, b)
            used.update(g.edges[u, v]["name"] for u, v in zip(path, path[1:], strict=False))
        return tuple(sorted(used))


def tree_topology(pods: int = 1, tors_per_pod: int = 12, servers_per_tor: int = 2, *,
                  gpus_per_server: int = 1, server_capacity: float = 50.0,
                  oversubscription: float = 2.0) -> Topology:
    """A three-tier tree (two-tier when ``pods == 1``) with the given oversubscription.

    ToR uplink capacity = ``servers_per_tor * server_capacity / oversubscription``; pod
    uplinks likewise from the ToR uplinks. With ``pods == 1`` the ToRs attach to the core.
    """
    servers, switches, links = [], ["core"], []
    tor_up = servers_per_tor * server_capacity / oversubscription
    pod_up = tors_per_pod * tor_up / oversubscription
    k = 0
    for p in range(pods):
        parent = "core"
        if pods > 1:
            parent = f"pod{p}"
            switches.append(parent)
            links.append(Link(f"{parent}-core", (parent, "core"), pod_up))
        for t in range(tors_per_pod):
            tor = f"tor{p * tors_per_pod + t}"
            switches.append(tor)
            links.append(Link(f"{tor}-{parent}", (tor, parent), tor_up))
            for _ in range(servers_per_tor):
                s = f"s{k}"
                k += 1
                servers.append((s, gpus_per_server))
                links.append(Link(f"{s}-{tor}", (s, tor), server_capacity))
    return Topology(tuple(servers), tuple(switches), tuple(links))


def testbed_topology() -> Topology:
    """Our tree reading of the paper's 24-server testbed (Figure 10), see the module docstring."""
    return tree_topology(pods=1, tors_per_pod=12, servers_per_tor=2, server_capacity=50.0,
                         oversubscription=2.0)
