"""Networks of servers and switches, and the links a ring all-reduce traverses.

Terms
-----
server, switch
    Nodes of the network; servers host GPUs (``gpus`` workers each).
link
    An undirected, full-duplex edge with ``capacity`` (Gbps) in each direction.
route of a job
    A job's workers run a ring all-reduce in depth-first order of its servers. Between two
    consecutive servers of the ring the flow takes a shortest path; on a tree that path is
    unique and the ring crosses every edge of the minimal subtree spanning the servers exactly
    once in each direction, so the job loads each of those links with its phase bandwidth in
    each direction (one flow per direction). A job on a single server traverses no link.
equal-cost paths (ECMP, our rule)
    On a network with several shortest paths between two servers (a Clos), each flow is hashed
    onto one of them: the paths in sorted order, index ``crc32("a>b") mod count``. The rule is
    deterministic, so every run and every check routes the same flow the same way. Off a tree
    a ring need not cross a link both ways, so each direction is its own link id, ``name>``
    (from the link's first end to its second) and ``name<``, with the link's capacity; on a
    tree both directions carry the same flows and the id is the link's name.

The paper's testbed (Figure 10: 24 single-GPU servers, 13 logical switches, 48 links, 2:1
oversubscription) has two readings here; the figure itself is not in the text. The tree
reading (:func:`testbed_topology`): 12 top-of-rack switches with 2 servers each and one core
switch, all links 50 Gbps (each ToR 100 Gbps down, 50 Gbps up): 13 switches, 36 links. The
Clos reading (:func:`testbed_clos_topology`), the one that matches all three counts: 6 ToRs of
4 servers, each ToR with two 50 Gbps uplinks (200 down, 100 up: 2:1) to the two aggregation
switches of its pod (ToRs 0-2 and 3-5), and 3 core switches joined to all 4 aggregation
switches: 6 + 4 + 3 = 13 switches, 24 + 12 + 12 = 48 links, all 50 Gbps.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import cached_property

import networkx as nx

__all__ = ["Link", "Topology", "tree_topology", "testbed_topology", "clos_topology", "testbed_clos_topology"]


@dataclass(frozen=True)
class Link:
    name: str
    ends: tuple[str, str]
    capacity: float


@dataclass(frozen=True, eq=False)
class Topology:
    """Servers (name -> GPU count), switches and links of a connected network (module docstring)."""

    servers: tuple[tuple[str, int], ...]
    switches: tuple[str, ...]
    links: tuple[Link, ...]
    #: deliverable share of a link's capacity while it carries more than one flow (the transport's
    #: goodput factor, :mod:`.fluid`); 1 is plain max-min sharing
    shared_goodput: float = 1.0

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
    def is_tree(self) -> bool:
        g = self.graph
        return g.number_of_edges() == g.number_of_nodes() - 1 and nx.is_connected(g)

    @cached_property
    def capacity(self) -> dict[str, float]:
        """Capacity by link id: the link's name on a tree; elsewhere one id per direction,
        ``name>`` (from its first end to its second) and ``name<`` (module docstring)."""
        if self.is_tree:
            return {lk.name: lk.capacity for lk in self.links}
        return {f"{lk.name}{d}": lk.capacity for lk in self.links for d in "><"}

    @cached_property
    def _order(self) -> dict[str, int]:
        root = self.switches[0] if self.switches else self.servers[0][0]
        return {n: i for i, n in enumerate(nx.dfs_preorder_nodes(self.graph, root))}

    def ring_order(self, servers: tuple[str, ...]) -> list[str]:
        """Distinct servers of a job in depth-first order (the ring all-reduce order)."""
        return sorted(set(servers), key=self._order.__getitem__)

    def job_links(self, servers: tuple[str, ...]) -> tuple[str, ...]:
        """Names of the links a ring all-reduce over ``servers`` traverses, sorted (cached by the
        set of servers)."""
        key = tuple(sorted(set(servers)))
        got = self._job_links.get(key)
        if got is not None:
            return got
        ring = self.ring_order(servers)
        used: set[str] = set()
        if len(ring) >= 2:
            for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
                used.update(self.route(a, b))
        out = tuple(sorted(used))
        if len(self._job_links) >= 100_000:
            self._job_links.clear()
        self._job_links[key] = out
        return out

    @cached_property
    def _job_links(self) -> dict[tuple[str, ...], tuple[str, ...]]:
        return {}

    def route(self, a: str, b: str) -> tuple[str, ...]:
        """Names of the links of the flow from ``a`` to ``b`` (the ECMP rule of the module doc)."""
        key = (a, b)
        cache = self._routes
        if key not in cache:
            g = self.graph
            paths = sorted(nx.all_shortest_paths(g, a, b))
            path = paths[zlib.crc32(f"{a}>{b}".encode()) % len(paths)]
            if self.is_tree:
                cache[key] = tuple(g.edges[u, v]["name"] for u, v in zip(path, path[1:], strict=False))
            else:
                cache[key] = tuple(self._directed[(u, v)] for u, v in zip(path, path[1:], strict=False))
        return cache[key]

    @cached_property
    def _directed(self) -> dict[tuple[str, str], str]:
        out = {}
        for lk in self.links:
            a, b = lk.ends
            out[(a, b)], out[(b, a)] = f"{lk.name}>", f"{lk.name}<"
        return out


    @cached_property
    def _routes(self) -> dict[tuple[str, str], tuple[str, ...]]:
        return {}


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


def clos_topology(racks: int = 6, servers_per_rack: int = 4, *, racks_per_pod: int = 3, uplinks_per_rack: int = 2,
                  cores: int = 3, gpus_per_server: int = 1, server_capacity: float = 50.0,
                  link_capacity: float = 50.0) -> Topology:
    """A three-tier Clos: racks grouped in pods of ``racks_per_pod``; a pod has
    ``uplinks_per_rack`` aggregation switches and each rack one ``link_capacity`` uplink to each
    of them; every aggregation switch joins every core switch. Servers ``s{i}`` rack by rack."""
    if racks % racks_per_pod:
        raise ValueError(f"racks_per_pod: {racks_per_pod} does not divide racks = {racks}")
    servers, switches, links = [], [], []
    core = [f"core{c}" for c in range(cores)]
    k = 0
    for p in range(racks // racks_per_pod):
        aggs = [f"agg{p * uplinks_per_rack + a}" for a in range(uplinks_per_rack)]
        switches += aggs
        for t in range(racks_per_pod):
            tor = f"tor{p * racks_per_pod + t}"
            switches.append(tor)
            for _ in range(servers_per_rack):
                servers.append((f"s{k}", gpus_per_server))
                links.append(Link(f"s{k}-{tor}", (f"s{k}", tor), server_capacity))
                k += 1
            links += [Link(f"{tor}-{a}", (tor, a), link_capacity) for a in aggs]
        links += [Link(f"{a}-{c}", (a, c), link_capacity) for a in aggs for c in core]
    switches = sorted(switches, key=lambda n: (not n.startswith("tor"), n)) + core
    return Topology(tuple(servers), tuple(switches), tuple(links))


def testbed_clos_topology() -> Topology:
    """Our Clos reading of the paper's testbed: 13 switches, 48 links (module docstring)."""
    return clos_topology(6, 4, racks_per_pod=3, uplinks_per_rack=2, cores=3)
