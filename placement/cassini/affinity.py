"""The Affinity graph of a placement candidate and loop detection (CASSINI §4.1, Algorithm 2 lines 2-15).

Terms
-----
Affinity graph ``G = (U, V, E)``
    Bipartite: ``V`` are the links carrying more than one job, ``U`` the jobs on those
    links, and an edge ``(j, l)`` means job j traverses link l. Its weight ``w_e`` is the
    per-link time shift ``t_j^l`` (Eq. 5), set by the solver.
loop
    A cycle of ``G``. Two jobs that share two links already form one
    (``j1 - l1 - j2 - l2 - j1``). Theorem 1 only holds on loop-free graphs.

Nodes are tuples ``("job", name)`` and ``("link", name)`` so job and link names never clash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx

__all__ = ["affinity_graph", "has_loop", "loop_components", "job_node", "link_node"]


def job_node(name: str) -> tuple[str, str]:
    return ("job", name)


def link_node(name: str) -> tuple[str, str]:
    return ("link", name)


def affinity_graph(link_jobs: Mapping[str, Sequence[str]]) -> nx.Graph:
    """Affinity graph of a link -> jobs mapping; links with fewer than two jobs are left out."""
    g = nx.Graph()
    for lk, jobs in link_jobs.items():
        if len(set(jobs)) < 2:
            continue
        g.add_node(link_node(lk), bipartite=1)
        for j in jobs:
            g.add_node(job_node(j), bipartite=0)
            g.add_edge(job_node(j), link_node(lk), weight=0)
    return g


def _union_find_loops(link_jobs: Mapping[str, Sequence[str]]) -> set[str]:
    """Links whose edges close a cycle, found with union-find over the edge list."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    closing: set[str] = set()
    for lk, jobs in link_jobs.items():
        jobs = list(dict.fromkeys(jobs))
        if len(jobs) < 2:
            continue
        for j in jobs:
            a, b = find(job_node(j)), find(link_node(lk))
            # An edge whose ends are already connected closes a cycle.
            if a == b:
                closing.add(lk)
            else:
                parent[a] = b
    return closing


def has_loop(link_jobs: Mapping[str, Sequence[str]]) -> bool:
    """Whether the Affinity graph of ``link_jobs`` has a cycle (union-find; Algorithm 2 line 13)."""
    return bool(_union_find_loops(link_jobs))


def loop_components(g: nx.Graph) -> list[set]:
    """Connected components of the Affinity graph that contain a cycle.

    A connected graph is a tree exactly when it has one edge fewer than nodes.
    """
    out = []
    for comp in nx.connected_components(g):
        sub = g.subgraph(comp)
        if sub.number_of_edges() >= sub.number_of_nodes():
            out.append(set(comp))
    return out
