"""CASSINI instances: jobs, a topology (a tree, or a Clos with ECMP routes), placement candidates; loading and validation.

Terms
-----
candidate
    A placement of every job onto servers (job -> list of servers, a server listed
    twice hosts two workers). Candidates are alternatives a scheduler offers
    (CASSINI §4.2, step 1); Algorithm 2 ranks them.
loaded / shared link
    A link traversed by at least one / more than one job of a candidate
    (see :mod:`.topology` for the ring all-reduce route). Shared links are the
    link vertices V of the Affinity graph.
time shift
    ``shifts[j]``, an integer ``0 <= s < iteration_time``: job j starts its
    iterations ``s`` time units late (Eq. 5 converts rotations into shifts).

File format (version 1)::

    {"problem": "cassini", "version": 1, "name": "...",
     "precision_deg": 5, "max_angles": 720, "max_perimeter": 1000000,
     "topology": {"servers": [{"name": "s0", "gpus": 1}], "switches": ["tor0", "core"],
                  "links": [{"name": "s0-tor0", "ends": ["s0", "tor0"], "capacity": 50}]},
     "jobs": [{"name": "vgg16", "iteration_time": 255, "kind": "data_parallel",
               "phases": [[141, 0], [114, 40]]}],
     "candidates": [{"name": "c0", "placement": {"vgg16": ["s0", "s1"]}}]}

A solution: ``{"problem": "cassini", "candidate": "c0", "shifts": {"vgg16": 17}}``
(jobs without a shift start at 0; ``candidate`` may be omitted with one candidate).
Everything is validated on load; the first problem raises :class:`InstanceError`
naming the field. ``max_perimeter`` bounds the unified-circle perimeter (LCM of a
link's iteration times): the reference evaluation walks every time unit of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx

from ..errors import InstanceError
from ..validate import as_list as _list
from ..validate import integer as _int
from ..validate import name as _name
from ..validate import number as _num
from ..validate import obj as _obj
from ..validate import unique as _unique
from .profiles import JobProfile
from .topology import Link, Topology

__all__ = ["Candidate", "CassiniInstance", "CassiniSolution", "load_instance", "instance_to_json",
           "load_solution", "solution_to_json", "build_instance", "lcm"]

MAX_PERIMETER = 10**7  # time units of one unified circle at most
FORMAT_VERSION = 1


def lcm(values) -> int:
    out = 1
    for v in values:
        out = out * int(v) // math.gcd(out, int(v))
    return out


@dataclass(frozen=True)
class Candidate:
    name: str
    placement: tuple[tuple[str, tuple[str, ...]], ...]  # (job, servers) in job order

    @property
    def servers(self) -> dict[str, tuple[str, ...]]:
        return dict(self.placement)


@dataclass(frozen=True)
class CassiniSolution:
    """The chosen candidate and one integer time shift per job."""

    candidate: str
    shifts: tuple[tuple[str, int], ...]

    @property
    def shift(self) -> dict[str, int]:
        return dict(self.shifts)


@dataclass(frozen=True, eq=False)
class CassiniInstance:
    """Immutable CASSINI instance; build with :func:`load_instance` or :func:`build_instance`."""

    topology: Topology
    jobs: tuple[JobProfile, ...]
    candidates: tuple[Candidate, ...]
    precision_deg: float = 5.0
    max_angles: int = 720
    max_perimeter: int = 1_000_000
    name: str = ""

    @cached_property
    def job(self) -> dict[str, JobProfile]:
        return {j.name: j for j in self.jobs}

    @cached_property
    def candidate_index(self) -> dict[str, int]:
        return {c.name: i for i, c in enumerate(self.candidates)}

    def candidate(self, name_or_index: str | int) -> Candidate:
        if isinstance(name_or_index, int):
            return self.candidates[name_or_index]
        return self.candidates[self.candidate_index[name_or_index]]

    @cached_property
    def _loads(self) -> dict[str, dict[str, tuple[str, ...]]]:
        out = {}
        for c in self.candidates:
            load: dict[str, list[str]] = {}
            for job, servers in c.placement:
                for lk in self.topology.job_links(servers):
                    load.setdefault(lk, []).append(job)
            out[c.name] = {lk: tuple(js) for lk, js in sorted(load.items())}
        return out

    def link_jobs(self, candidate: str) -> dict[str, tuple[str, ...]]:
        """Loaded links of a candidate -> the jobs traversing them (job order)."""
        return self._loads[candidate]

    def shared_links(self, candidate: str) -> dict[str, tuple[str, ...]]:
        """Links carrying more than one job (the link vertices V of the Affinity graph)."""
        return {lk: js for lk, js in self._loads[candidate].items() if len(js) > 1}

    def perimeter(self, jobs) -> int:
        return lcm(self.job[j].iteration_time for j in jobs)


# ---- validation -------------------------------------------------------------------------------

def _load_topology(doc: Any) -> Topology:
    doc = _obj(doc, "topology")
    servers = []
    for i, s in enumerate(_list(doc.get("servers"), "topology.servers", nonempty=True)):
        if isinstance(s, str):
            s = {"name": s}
        s = _obj(s, f"topology.servers[{i}]")
        servers.append((_name(s.get("name"), f"topology.servers[{i}].name"),
                        _int(s.get("gpus", 1), f"topology.servers[{i}].gpus", 1)))
    switches = tuple(_name(w, f"topology.switches[{i}]")
                     for i, w in enumerate(_list(doc.get("switches", []), "topology.switches")))
    nodes = [n for n, _ in servers] + list(switches)
    seen: set[str] = set()
    for n in nodes:
        if n in seen:
            raise InstanceError("topology", f"node name {n!r} is used twice")
        seen.add(n)
    links = []
    for i, lk in enumerate(_list(doc.get("links"), "topology.links", nonempty=True)):
        w = f"topology.links[{i}]"
        lk = _obj(lk, w)
        ends = _list(lk.get("ends"), f"{w}.ends")
        if len(ends) != 2 or ends[0] == ends[1]:
            raise InstanceError(f"{w}.ends", "must name two different nodes")
        for e in ends:
            if not isinstance(e, str) or e not in seen:
                raise InstanceError(f"{w}.ends", f"unknown node {e!r}")
        name = lk.get("name", f"{ends[0]}-{ends[1]}")
        links.append(Link(_name(name, f"{w}.name"), (ends[0], ends[1]),
                          _num(lk.get("capacity"), f"{w}.capacity", positive=True)))
    _unique([lk.name for lk in links], "topology.links")
    topo = Topology(tuple(servers), switches, tuple(links))
    g = topo.graph
    if g.number_of_edges() != len(links):
        raise InstanceError("topology.links", "two links join the same pair of nodes")
    if not g.number_of_nodes() or not nx.is_connected(g):
        raise InstanceError("topology.links", "must connect every server and switch (routes: shortest paths, "
                            "one per flow by the ECMP rule of placement.cassini.topology)")
    return topo


def _load_job(doc: Any, i: int) -> JobProfile:
    w = f"jobs[{i}]"
    doc = _obj(doc, w)
    name = _name(doc.get("name"), f"{w}.name")
    it = _int(doc.get("iteration_time"), f"{w}.iteration_time", 1)
    phases = []
    for k, ph in enumerate(_list(doc.get("phases"), f"{w}.phases", nonempty=True)):
        pw = f"{w}.phases[{k}]"
        if isinstance(ph, dict):
            d, b = ph.get("duration"), ph.get("bandwidth")
        elif isinstance(ph, list) and len(ph) == 2:
            d, b = ph
        else:
            raise InstanceError(pw, "must be [duration, bandwidth] or {duration, bandwidth}")
        phases.append((_int(d, f"{pw}.duration", 1), _num(b, f"{pw}.bandwidth")))
    total = sum(d for d, _ in phases)
    if total != it:
        raise InstanceError(f"{w}.phases", f"durations must cover the iteration exactly: they sum to {total}, "
                            f"iteration_time is {it}")
    kind = doc.get("kind", "custom")
    return JobProfile(name, it, tuple(phases), _name(kind, f"{w}.kind"))


def build_instance(topology: Topology, jobs, candidates, *, precision_deg: float = 5.0,
                   max_angles: int = 720, max_perimeter: int = 1_000_000, name: str = "") -> CassiniInstance:
    """Validate already-built parts (via the JSON form) and return the instance."""
    inst = CassiniInstance(topology, tuple(jobs), tuple(candidates), precision_deg, max_angles,
                           max_perimeter, name)
    return load_instance(instance_to_json(inst))


def load_instance(doc: Any, name: str = "") -> CassiniInstance:
    """Validate a CASSINI document (format version 1) and build the instance.

    Raises
    ------
    InstanceError
        Naming the first offending field (e.g. ``jobs[2].phases[1].bandwidth``).
    """
    doc = _obj(doc, "instance")
    if doc.get("problem", "cassini") != "cassini":
        raise InstanceError("problem", f"must be 'cassini', got {doc.get('problem')!r}")
    if doc.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise InstanceError("version", f"must be {FORMAT_VERSION}, got {doc.get('version')!r}")
    precision = _num(doc.get("precision_deg", 5.0), "precision_deg", positive=True)
    n_angles = 360.0 / precision
    if precision > 360 or n_angles > MAX_PERIMETER or abs(n_angles - round(n_angles)) > 1e-9:
        raise InstanceError("precision_deg", f"must divide 360 degrees into a whole number of at most {MAX_PERIMETER} angles, got {precision!r}")
    # Bounds keep every circle array in memory (the perimeter is materialized on the integer grid).
    max_angles = _int(doc.get("max_angles", 720), "max_angles", 1, MAX_PERIMETER)
    max_perimeter = _int(doc.get("max_perimeter", 1_000_000), "max_perimeter", 1, MAX_PERIMETER)
    topo = _load_topology(doc.get("topology"))
    jobs = [_load_job(j, i) for i, j in enumerate(_list(doc.get("jobs"), "jobs", nonempty=True))]
    _unique([j.name for j in jobs], "jobs")
    jobnames = [j.name for j in jobs]
    gpus = topo.server_gpus
    cands = []
    for ci, cd in enumerate(_list(doc.get("candidates"), "candidates", nonempty=True)):
        w = f"candidates[{ci}]"
        cd = _obj(cd, w)
        cname = _name(cd.get("name", f"c{ci}"), f"{w}.name")
        pl = _obj(cd.get("placement"), f"{w}.placement")
        used: dict[str, int] = {}
        for jn in pl:
            if jn not in jobnames:
                raise InstanceError(f"{w}.placement.{jn}", "is not a job of the instance")
        placement = []
        for jn in jobnames:
            if jn not in pl:
                raise InstanceError(f"{w}.placement.{jn}", "is missing: every candidate places every job")
            servers = _list(pl[jn], f"{w}.placement.{jn}", nonempty=True)
            for k, s in enumerate(servers):
                if not isinstance(s, str) or s not in gpus:
                    raise InstanceError(f"{w}.placement.{jn}[{k}]", f"unknown server {s!r}")
                used[s] = used.get(s, 0) + 1
            placement.append((jn, tuple(servers)))
        for s, n in used.items():
            if n > gpus[s]:
                raise InstanceError(f"{w}.placement", f"server {s!r} hosts {n} workers but has {gpus[s]} GPU(s)")
        cands.append(Candidate(cname, tuple(placement)))
    _unique([c.name for c in cands], "candidates")
    inst = CassiniInstance(topo, tuple(jobs), tuple(cands), precision, max_angles, max_perimeter,
                           str(doc.get("name", name)))
    for ci, c in enumerate(cands):
        for lk, js in inst.link_jobs(c.name).items():
            p = inst.perimeter(js)
            if p > max_perimeter:
                raise InstanceError(f"candidates[{ci}]", f"link {lk!r} has a unified circle of perimeter {p} "
                                    f"(LCM of its iteration times) > max_perimeter {max_perimeter}; use a "
                                    "coarser time unit or raise max_perimeter")
    return inst


def instance_to_json(inst: CassiniInstance) -> dict:
    t = inst.topology
    out: dict[str, Any] = {"problem": "cassini", "version": FORMAT_VERSION}
    if inst.name:
        out["name"] = inst.name
    out.update({
        "precision_deg": inst.precision_deg, "max_angles": inst.max_angles, "max_perimeter": inst.max_perimeter,
        "topology": {"servers": [{"name": s, "gpus": g} for s, g in t.servers], "switches": list(t.switches),
                     "links": [{"name": lk.name, "ends": list(lk.ends), "capacity": lk.capacity}
                               for lk in t.links]},
        "jobs": [{"name": j.name, "iteration_time": j.iteration_time, "kind": j.kind,
                  "phases": [[d, b] for d, b in j.phases]} for j in inst.jobs],
        "candidates": [{"name": c.name, "placement": {jn: list(s) for jn, s in c.placement}}
                       for c in inst.candidates],
    })
    return out


def load_solution(inst: CassiniInstance, doc: Any) -> CassiniSolution:
    """Validate a solution document (or the output of ``placement solve -o``) against ``inst``."""
    doc = _obj(doc, "solution")
    if "solution" in doc and "shifts" not in doc:
        doc = _obj(doc["solution"], "solution")
    if doc.get("problem", "cassini") != "cassini":
        raise InstanceError("solution.problem", f"must be 'cassini', got {doc.get('problem')!r}")
    cand = doc.get("candidate")
    if cand is None:
        if len(inst.candidates) != 1:
            raise InstanceError("solution.candidate", "is missing and the instance has several candidates")
        cand = inst.candidates[0].name
    cand = _name(cand, "solution.candidate")
    if cand not in inst.candidate_index:
        raise InstanceError("solution.candidate", f"unknown candidate {cand!r}")
    shifts = _obj(doc.get("shifts", {}), "solution.shifts")
    for jn in shifts:
        if jn not in inst.job:
            raise InstanceError(f"solution.shifts.{jn}", "is not a job of the instance")
    out = []
    for j in inst.jobs:
        s = shifts.get(j.name, 0)
        s = _int(s, f"solution.shifts.{j.name}", 0)
        if s >= j.iteration_time:
            raise InstanceError(f"solution.shifts.{j.name}", f"must be < iteration_time {j.iteration_time}, got {s}")
        out.append((j.name, s))
    return CassiniSolution(cand, tuple(out))


def solution_to_json(inst: CassiniInstance, sol: CassiniSolution) -> dict:
    return {"problem": "cassini", "candidate": sol.candidate, "shifts": dict(sol.shifts)}
