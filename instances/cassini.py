"""Seeded generator of CASSINI instances, and the paper's worked examples.

Shapes: jobs drawn from the four synthetic profile kinds of Figure 1
(:mod:`placement.cassini.profiles`), iteration times from
:data:`ITERATION_TIMES` (ms, multiples of 10 ms as a profiler would round them,
which keeps every unified circle's perimeter at most 720 ms), data-parallel
jobs on 2-4 servers, tensor on 2, pipeline on 2-4, hybrid on 4-8. A candidate is
a Themis-like placement: jobs in random order, each filling a random rack and
spilling into neighbouring racks; with probability ``fragmentation`` a job's
servers are scattered at random instead (schedulers "frequently end up with
fragmented placements", §4.1). Candidates differ by their random draws.
Everything is deterministic for a seed.
"""

from __future__ import annotations

import numpy as np

from placement.cassini.instance import CassiniInstance, instance_to_json, load_instance
from placement.cassini.profiles import JobProfile, synthetic_profile
from placement.cassini.topology import Topology, testbed_topology, tree_topology
from placement.errors import InstanceError
from placement.validate import integer, number
from placement.validate import seed as seed_of

__all__ = ["generate_cassini", "cassini_document", "ITERATION_TIMES", "random_candidate",
           "figure5_instance", "figure8b_instance", "links_instance"]

ITERATION_TIMES = (120, 180, 240, 360)
WORKERS = {"data_parallel": (2, 4), "tensor_parallel": (2, 2), "pipeline_parallel": (2, 4),
           "hybrid_parallel": (4, 8)}
BANDWIDTH = {"data_parallel": (30, 45), "tensor_parallel": (20, 30), "pipeline_parallel": (35, 45),
             "hybrid_parallel": (35, 45)}


def _jobs(n_jobs: int, rng: np.random.Generator, kinds) -> tuple[list[JobProfile], list[int]]:
    jobs, sizes = [], []
    for i in range(n_jobs):
        kind = kinds[int(rng.integers(len(kinds)))]
        it = int(ITERATION_TIMES[int(rng.integers(len(ITERATION_TIMES)))])
        lo, hi = BANDWIDTH[kind]
        bw = int(rng.integers(lo, hi + 1))
        kw = {"bandwidth": bw, "quantum": 10}
        if kind == "data_parallel":
            kw["comm_fraction"] = float(rng.choice([0.3, 0.4, 0.5]))
        jobs.append(synthetic_profile(kind, f"{kind.split('_')[0]}{i}", it, **kw))
        wlo, whi = WORKERS[kind]
        sizes.append(int(rng.integers(wlo, whi + 1)))
    return jobs, sizes


def _racks(topo: Topology) -> list[list[str]]:
    racks: dict[str, list[str]] = {}
    for lk in topo.links:
        a, b = lk.ends
        if a in topo.server_gpus:
            racks.setdefault(b, []).append(a)
    return list(racks.values())


def _candidate(topo: Topology, sizes: list[int], rng: np.random.Generator, fragmentation: float) -> list[list[str]]:
    free = dict(topo.server_gpus)
    racks = _racks(topo)
    out: list[list[str]] = [[] for _ in sizes]
    for j in rng.permutation(len(sizes)):
        need = sizes[j]
        if rng.random() < fragmentation:
            pool = [s for s, f in free.items() for _ in range(f)]
            pick = [pool[i] for i in rng.choice(len(pool), size=need, replace=False)]
        else:
            pick = []
            r0 = int(rng.integers(len(racks)))
            for r in range(len(racks)):
                for s in racks[(r0 + r) % len(racks)]:
                    while free[s] - pick.count(s) > 0 and len(pick) < need:
                        pick.append(s)
                if len(pick) == need:
                    break
        for s in pick:
            free[s] -= 1
        out[j] = pick
    return out


def random_candidate(inst: CassiniInstance, seed: int = 0, name: str = "random") -> dict:
    """A placement with every worker on a uniformly random free GPU (the random baseline)."""
    rng = np.random.default_rng(seed_of(seed))
    sizes = [len(s) for _, s in inst.candidates[0].placement]
    pl = _candidate(inst.topology, sizes, rng, fragmentation=1.0)
    return {"name": name, "placement": {j.name: p for j, p in zip(inst.jobs, pl, strict=True)}}


def cassini_document(n_jobs: int = 8, n_candidates: int = 4, *, seed: int = 0, topology: str = "testbed",
                     pods: int = 2, tors_per_pod: int = 4, servers_per_tor: int = 4,
                     oversubscription: float = 2.0, fragmentation: float = 0.3, precision_deg: float = 5.0,
                     kinds=None, name: str = "") -> dict:
    """A CASSINI instance document (format version 1); see :func:`generate_cassini`."""
    integer(n_jobs, "n_jobs", 1)
    integer(n_candidates, "n_candidates", 1)
    if topology not in ("testbed", "tree"):
        raise InstanceError("topology", f"must be 'testbed' or 'tree', got {topology!r:.60}")
    for what, v in (("pods", pods), ("tors_per_pod", tors_per_pod), ("servers_per_tor", servers_per_tor)):
        integer(v, what, 1)
    number(fragmentation, "fragmentation")
    number(precision_deg, "precision_deg", positive=True)
    rng = np.random.default_rng(seed_of(seed))
    topo = testbed_topology() if topology == "testbed" else tree_topology(pods, tors_per_pod, servers_per_tor,
                                                                    oversubscription=oversubscription)
    kinds = list(kinds or ["data_parallel", "data_parallel", "tensor_parallel", "pipeline_parallel",
                           "hybrid_parallel"])
    jobs, sizes = _jobs(n_jobs, rng, kinds)
    gpus = sum(topo.server_gpus.values())
    while sum(sizes) > gpus:  # shrink the largest jobs until everything fits
        k = int(np.argmax(sizes))
        if sizes[k] <= 2:
            raise ValueError(f"{n_jobs} jobs do not fit on {gpus} GPUs")
        sizes[k] -= 1
    cands = []
    for c in range(n_candidates):
        pl = _candidate(topo, sizes, rng, fragmentation)
        cands.append({"name": f"c{c}", "placement": {j.name: p for j, p in zip(jobs, pl, strict=True)}})
    inst = CassiniInstance(topo, tuple(jobs), (), precision_deg, name=name or f"cassini-{topology}-{n_jobs}j-s{seed}")
    doc = instance_to_json(inst)
    doc["candidates"] = cands
    return doc


def generate_cassini(n_jobs: int = 8, n_candidates: int = 4, *, seed: int = 0, **kw) -> CassiniInstance:
    """Seeded CASSINI instance: jobs, a tree topology (``"testbed"`` or ``"tree"``) and candidates."""
    return load_instance(cassini_document(n_jobs, n_candidates, seed=seed, **kw))


def _one_switch(n_servers: int, gpus: int, capacity: float) -> dict:
    return {"servers": [{"name": f"s{i}", "gpus": gpus} for i in range(n_servers)], "switches": ["tor0"],
            "links": [{"name": f"l{i}", "ends": [f"s{i}", "tor0"], "capacity": capacity} for i in range(n_servers)]}


def figure5_instance() -> CassiniInstance:
    """Figure 5: a 40 ms and a 60 ms job on one 50 Gbps link, unified circle of 120 ms.

    Each job sends 40 Gbps for 10 ms per iteration (the figure's exact arcs are not in
    the text). Unshifted they collide once per 120 ms (score 0.95); turning j1 by 30 degrees
    (10 ms) interleaves them fully (score 1).
    """
    doc = {"problem": "cassini", "version": 1, "name": "figure5", "topology": _one_switch(2, 2, 50),
           "jobs": [{"name": "j1", "iteration_time": 40, "phases": [[30, 0], [10, 40]]},
                    {"name": "j2", "iteration_time": 60, "phases": [[50, 0], [10, 40]]}],
           "candidates": [{"name": "c0", "placement": {"j1": ["s0", "s1"], "j2": ["s0", "s1"]}}]}
    return load_instance(doc)


def figure8b_instance() -> CassiniInstance:
    """Figure 8(b): j1 and j2 share link l1, j2 and j3 share l2 (a loop-free chain).

    One switch, four 2-GPU servers: j1 on s0,s1; j2 on s1,s2; j3 on s2,s3, so the shared
    links are l1 (s1's uplink) and l2 (s2's uplink).
    """
    doc = {"problem": "cassini", "version": 1, "name": "figure8b", "topology": _one_switch(4, 2, 50),
           "jobs": [{"name": "j1", "iteration_time": 120, "kind": "data_parallel", "phases": [[60, 0], [60, 40]]},
                    {"name": "j2", "iteration_time": 120, "kind": "data_parallel", "phases": [[80, 0], [40, 45]]},
                    {"name": "j3", "iteration_time": 60, "kind": "data_parallel", "phases": [[30, 0], [30, 40]]}],
           "candidates": [{"name": "c0", "placement": {"j1": ["s0", "s1"], "j2": ["s1", "s2"],
                                                       "j3": ["s2", "s3"]}}]}
    return load_instance(doc)


def links_instance(link_jobs: dict[str, list[str]], jobs: list[JobProfile], capacity: float | dict = 50.0,
                   name: str = "links") -> CassiniInstance:
    """An instance whose single candidate has exactly the given shared links.

    One switch; every link ``l`` is the uplink of a server ``l`` hosting one worker of each
    job in ``link_jobs[l]``; every job also gets a private server, so a job traverses
    exactly its listed links plus its private uplink (carrying it alone).
    ``capacity`` is one number or a mapping link -> capacity.
    """
    caps = capacity if isinstance(capacity, dict) else {lk: capacity for lk in link_jobs}
    servers, links, placement = [], [], {j.name: [f"own-{j.name}"] for j in jobs}
    for lk, names in link_jobs.items():
        servers.append({"name": lk, "gpus": len(names)})
        links.append({"name": lk, "ends": [lk, "sw"], "capacity": caps[lk]})
        for n in names:
            placement[n].append(lk)
    for j in jobs:
        servers.append({"name": f"own-{j.name}", "gpus": 1})
        links.append({"name": f"own-{j.name}", "ends": [f"own-{j.name}", "sw"], "capacity": 1e9})
    doc = {"problem": "cassini", "version": 1, "name": name,
           "topology": {"servers": servers, "switches": ["sw"], "links": links},
           "jobs": [{"name": j.name, "iteration_time": j.iteration_time, "kind": j.kind,
                     "phases": [[d, b] for d, b in j.phases]} for j in jobs],
           "candidates": [{"name": "c0", "placement": placement}]}
    return load_instance(doc)
