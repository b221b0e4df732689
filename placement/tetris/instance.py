"""Tetris instances (MAST §3.2-3.3): regions, apps, tables, jobs; loading and validation.

Terms
-----
home region
    ``home[t]``, the region holding table ``t``; the only decision of Figure 4.
R(job)
    The region a job is inferred to run in (see :mod:`placement.tetris.evaluation`).
GPU-hours / supply
    ``Region.gpu_supply[g]`` is the GPU-hours of type ``g`` the region offers per
    planning period; a region "has" type ``g`` when its supply is > 0.

The file format is version 1 (``placement/tetris/README.md`` shows an example). Everything is validated on load and
every problem is reported as one :class:`InstanceError` naming the field.
All quantities are integers so that exact models can be checked exactly.
Compiled numpy arrays (index form) are built once per instance and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InstanceError
from ..validate import integer, known_keys, list_field, total
from ..validate import name as _name
from ..validate import number as _num
from ..validate import obj as _obj
from ..validate import unique as _unique

__all__ = ["Region", "App", "Table", "Job", "TetrisInstance", "TetrisSolution",
           "load_instance", "instance_to_json", "load_solution", "solution_to_json"]

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Region:
    name: str
    storage_capacity: int
    gpu_supply: dict[str, int]


@dataclass(frozen=True)
class App:
    name: str
    cpu_capacity: dict[str, int]  # region name -> CPU-hours; (5) applies only there


@dataclass(frozen=True)
class Table:
    name: str
    size: int
    home: str  # current home region: hill-climbing start, reference for bytes moved


@dataclass(frozen=True)
class Job:
    name: str
    kind: str  # "ml" | "analytics"
    tables: tuple[str, ...]
    gpu_type: str | None = None
    gpu_hours: int = 0
    cpu_hours: int = 0
    priority: int | None = None
    app: str | None = None


@dataclass(frozen=True)
class TetrisSolution:
    """A home region per table (index form) and optional extra replicas."""

    home: np.ndarray  # int64 [T], region index per table
    replicas: tuple[tuple[int, ...], ...] | None = None  # per table, replica region indices

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TetrisSolution) and np.array_equal(self.home, other.home)
                and self.replicas == other.replicas)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class TetrisInstance:
    """Immutable Tetris instance; build with :func:`load_instance` (validates)."""

    regions: tuple[Region, ...]
    apps: tuple[App, ...]
    tables: tuple[Table, ...]
    jobs: tuple[Job, ...]
    priority_weights: tuple[float, ...]
    high_priorities: tuple[int, ...]
    w1: float
    w2: float
    w3: float
    home_threshold: int
    move_quota: int | None
    name: str = ""

    # ---- names and sizes -------------------------------------------------------------
    @cached_property
    def region_names(self) -> list[str]:
        return [r.name for r in self.regions]

    @cached_property
    def region_index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.region_names)}

    @cached_property
    def table_index(self) -> dict[str, int]:
        return {t.name: i for i, t in enumerate(self.tables)}

    @cached_property
    def gpu_types(self) -> list[str]:
        types: dict[str, None] = {}
        for r in self.regions:
            types.update(dict.fromkeys(r.gpu_supply))
        for j in self.jobs:
            if j.gpu_type is not None:
                types[j.gpu_type] = None
        return list(types)

    @property
    def n_regions(self) -> int:
        return len(self.regions)

    @property
    def n_tables(self) -> int:
        return len(self.tables)

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def n_priorities(self) -> int:
        return len(self.priority_weights)

    # ---- compiled arrays (index form, used by evaluation, models and heuristics) -------
    @cached_property
    def arrays(self) -> TetrisArrays:
        return TetrisArrays.build(self)

    def initial_solution(self) -> TetrisSolution:
        return TetrisSolution(home=self.arrays.home0.copy())


@dataclass(frozen=True, eq=False)
class TetrisArrays:
    """Index form of an instance. Regions r, tables t, jobs j, GPU types g, priorities k, apps a.

    ``job_ptr``/``job_tab`` are the CSR incidence of jobs to tables (a job's tables are
    ``job_tab[job_ptr[j]:job_ptr[j+1]]``); ``tab_ptr``/``tab_job`` the transpose.
    ``job_gpu``, ``job_prio`` are -1 for analytics jobs; ``job_app`` is -1 without an app.
    ``cpu_cap[a, r]`` is ``inf`` where (5) does not apply.
    """

    size: np.ndarray
    home0: np.ndarray
    job_ptr: np.ndarray
    job_tab: np.ndarray
    entry_job: np.ndarray
    tab_ptr: np.ndarray
    tab_job: np.ndarray
    job_ml: np.ndarray
    job_gpu: np.ndarray
    job_prio: np.ndarray
    job_gh: np.ndarray
    job_cpu: np.ndarray
    job_app: np.ndarray
    job_size: np.ndarray
    job_high: np.ndarray
    supply: np.ndarray
    storage_cap: np.ndarray
    cpu_cap: np.ndarray
    prio_w: np.ndarray
    total_demand: np.ndarray
    total_supply: np.ndarray
    total_size: int
    total_capacity: int

    def job_entries(self, jobs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One entry per (job, table) pair of ``jobs`` (the CSR ``job_ptr`` / ``job_tab`` gathered
        without a Python loop): the job's position in ``jobs`` and the table's index."""
        n_j = self.job_ptr[jobs + 1] - self.job_ptr[jobs]
        ent_job = np.repeat(np.arange(len(jobs)), n_j)
        within = np.arange(n_j.sum()) - np.repeat(np.cumsum(n_j) - n_j, n_j)
        return ent_job, self.job_tab[np.repeat(self.job_ptr[jobs], n_j) + within]

    @staticmethod
    def build(inst: TetrisInstance) -> TetrisArrays:
        R, T, J = inst.n_regions, inst.n_tables, inst.n_jobs
        gidx = {g: i for i, g in enumerate(inst.gpu_types)}
        G, K = len(gidx), inst.n_priorities
        ridx, tidx = inst.region_index, inst.table_index
        aidx = {a.name: i for i, a in enumerate(inst.apps)}
        size = np.fromiter((t.size for t in inst.tables), dtype=np.int64, count=T)
        home0 = np.fromiter((ridx[t.home] for t in inst.tables), dtype=np.int64, count=T)
        lens = np.fromiter((len(j.tables) for j in inst.jobs), dtype=np.int64, count=J)
        job_ptr = np.zeros(J + 1, dtype=np.int64)
        np.cumsum(lens, out=job_ptr[1:])
        job_tab = np.fromiter((tidx[n] for j in inst.jobs for n in j.tables), dtype=np.int64,
                              count=int(job_ptr[-1]))
        entry_job = np.repeat(np.arange(J, dtype=np.int64), lens)
        order = np.argsort(job_tab, kind="stable")
        tab_job = entry_job[order]
        tab_ptr = np.zeros(T + 1, dtype=np.int64)
        np.cumsum(np.bincount(job_tab, minlength=T), out=tab_ptr[1:])
        job_ml = np.fromiter((j.kind == "ml" for j in inst.jobs), dtype=bool, count=J)
        job_gpu = np.fromiter((gidx[j.gpu_type] if j.kind == "ml" else -1 for j in inst.jobs),
                              dtype=np.int64, count=J)
        job_prio = np.fromiter((j.priority if j.kind == "ml" else -1 for j in inst.jobs),
                               dtype=np.int64, count=J)
        job_gh = np.fromiter((j.gpu_hours if j.kind == "ml" else 0 for j in inst.jobs),
                             dtype=np.int64, count=J)
        job_cpu = np.fromiter((j.cpu_hours for j in inst.jobs), dtype=np.int64, count=J)
        job_app = np.fromiter((aidx[j.app] if j.app is not None else -1 for j in inst.jobs),
                              dtype=np.int64, count=J)
        job_size = np.add.reduceat(size[job_tab], job_ptr[:-1]) if J and len(job_tab) else np.zeros(J, np.int64)
        high = set(inst.high_priorities)
        job_high = job_ml & np.isin(job_prio, list(high) if high else [-2])
        supply = np.zeros((R, G), dtype=np.int64)
        for r, reg in enumerate(inst.regions):
            for g, v in reg.gpu_supply.items():
                supply[r, gidx[g]] = v
        storage_cap = np.fromiter((r.storage_capacity for r in inst.regions), dtype=np.int64, count=R)
        cpu_cap = np.full((len(inst.apps), R), np.inf)
        for a, app in enumerate(inst.apps):
            for rn, v in app.cpu_capacity.items():
                cpu_cap[a, ridx[rn]] = v
        total_demand = np.zeros((G, K), dtype=np.int64)
        ml = np.flatnonzero(job_ml)
        np.add.at(total_demand, (job_gpu[ml], job_prio[ml]), job_gh[ml])
        arrays = TetrisArrays(
            size=size, home0=home0, job_ptr=job_ptr, job_tab=job_tab, entry_job=entry_job,
            tab_ptr=tab_ptr, tab_job=tab_job, job_ml=job_ml, job_gpu=job_gpu, job_prio=job_prio,
            job_gh=job_gh, job_cpu=job_cpu, job_app=job_app, job_size=job_size, job_high=job_high,
            supply=supply, storage_cap=storage_cap, cpu_cap=cpu_cap,
            prio_w=np.asarray(inst.priority_weights, dtype=float), total_demand=total_demand,
            total_supply=supply.sum(axis=0), total_size=int(size.sum()),
            total_capacity=int(storage_cap.sum()))
        for a in arrays.__dict__.values():
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        return arrays


# ---- validation helpers ------------------------------------------------------------------

_KEYS = {
    "": {"problem", "version", "name", "description", "regions", "apps", "tables", "jobs", "priority_weights",
         "high_priorities", "weights", "home_threshold", "move_quota"},
    "regions": {"name", "storage_capacity", "gpu_supply"},
    "apps": {"name", "cpu_capacity"},
    "tables": {"name", "size", "home"},
    "jobs": {"name", "kind", "tables", "gpu_type", "gpu_hours", "cpu_hours", "priority", "app"},
}


def _known_keys(d: dict, kind: str, where: str) -> dict:
    """A misspelt key (``move_qouta``) would silently drop a constraint: reject unknown keys."""
    return known_keys(d, _KEYS[kind], where)


def load_instance(doc: Any, name: str = "") -> TetrisInstance:
    """Validate a Tetris document (format version 1) and build the instance.

    Raises
    ------
    InstanceError
        Naming the first offending field (e.g. ``jobs[4].gpu_type``).
    """
    doc = _known_keys(_obj(doc, "instance"), "", "")
    if doc.get("problem", "tetris") != "tetris":
        raise InstanceError("problem", f"must be 'tetris', got {doc.get('problem')!r}")
    version = doc.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise InstanceError("version", f"must be {FORMAT_VERSION}, got {version!r}")

    regions = []
    for i, rd in enumerate(list_field(doc, "regions", "")):
        w = f"regions[{i}]"
        rd = _known_keys(_obj(rd, w), "regions", w + ".")
        supply = _obj(rd.get("gpu_supply", {}), f"{w}.gpu_supply")
        regions.append(Region(
            name=_name(rd.get("name"), f"{w}.name"),
            storage_capacity=integer(rd.get("storage_capacity"), f"{w}.storage_capacity"),
            gpu_supply={_name(g, f"{w}.gpu_supply"): integer(v, f"{w}.gpu_supply.{g}") for g, v in supply.items()},
        ))
    if not regions:
        raise InstanceError("regions", "must list at least one region")
    _unique([r.name for r in regions], "regions")
    rnames = {r.name for r in regions}

    apps = []
    for i, ad in enumerate(list_field(doc, "apps", "", required=False)):
        w = f"apps[{i}]"
        ad = _known_keys(_obj(ad, w), "apps", w + ".")
        caps = _obj(ad.get("cpu_capacity", {}), f"{w}.cpu_capacity")
        for rn in caps:
            if rn not in rnames:
                raise InstanceError(f"{w}.cpu_capacity.{rn}", "names an unknown region")
        apps.append(App(name=_name(ad.get("name"), f"{w}.name"),
                        cpu_capacity={rn: integer(v, f"{w}.cpu_capacity.{rn}") for rn, v in caps.items()}))
    _unique([a.name for a in apps], "apps")
    anames = {a.name for a in apps}

    tables = []
    for i, td in enumerate(list_field(doc, "tables", "")):
        w = f"tables[{i}]"
        td = _known_keys(_obj(td, w), "tables", w + ".")
        home = _name(td.get("home"), f"{w}.home")
        if home not in rnames:
            raise InstanceError(f"{w}.home", f"names an unknown region {home!r}")
        tables.append(Table(name=_name(td.get("name"), f"{w}.name"),
                            size=integer(td.get("size"), f"{w}.size"), home=home))
    _unique([t.name for t in tables], "tables")
    tnames = {t.name for t in tables}

    pw = list_field(doc, "priority_weights", "")
    if not pw:
        raise InstanceError("priority_weights", "must list at least one weight")
    prio_w = tuple(_num(v, f"priority_weights[{k}]") for k, v in enumerate(pw))
    K = len(prio_w)
    high = tuple(integer(v, f"high_priorities[{k}]") for k, v in enumerate(list_field(doc, "high_priorities", "")))
    for k, p in enumerate(high):
        if p >= K:
            raise InstanceError(f"high_priorities[{k}]", f"must be a priority below {K}, got {p}")

    supply_types: dict[str, int] = {}
    for r in regions:
        for g, v in r.gpu_supply.items():
            supply_types[g] = supply_types.get(g, 0) + v

    jobs = []
    for i, jd in enumerate(list_field(doc, "jobs", "")):
        w = f"jobs[{i}]"
        jd = _known_keys(_obj(jd, w), "jobs", w + ".")
        kind = jd.get("kind")
        if kind not in ("ml", "analytics"):
            raise InstanceError(f"{w}.kind", f"must be 'ml' or 'analytics', got {kind!r}")
        tl = list_field(jd, "tables", f"{w}.")
        if not tl:
            raise InstanceError(f"{w}.tables", "must list at least one table")
        seen: set[str] = set()
        for k, tn in enumerate(tl):
            _name(tn, f"{w}.tables[{k}]")
            if tn not in tnames:
                raise InstanceError(f"{w}.tables[{k}]", f"names an unknown table {tn!r}")
            if tn in seen:
                raise InstanceError(f"{w}.tables[{k}]", f"lists table {tn!r} twice")
            seen.add(tn)
        app = jd.get("app")
        if app is not None and _name(app, f"{w}.app") not in anames:
            raise InstanceError(f"{w}.app", f"names an unknown app {app!r}")
        cpu = integer(jd.get("cpu_hours", 0), f"{w}.cpu_hours")
        if kind == "ml":
            g = jd.get("gpu_type")
            _name(g, f"{w}.gpu_type")
            if supply_types.get(g, 0) <= 0:
                raise InstanceError(f"{w}.gpu_type", f"{g!r} has no supply in any region (gpu_supply)")
            prio = integer(jd.get("priority"), f"{w}.priority")
            if prio >= K:
                raise InstanceError(f"{w}.priority", f"must be below {K} (len(priority_weights)), got {prio}")
            jobs.append(Job(name=_name(jd.get("name"), f"{w}.name"), kind=kind, tables=tuple(tl),
                            gpu_type=g, gpu_hours=integer(jd.get("gpu_hours"), f"{w}.gpu_hours"),
                            cpu_hours=cpu, priority=prio, app=app))
        else:
            for key in ("gpu_type", "gpu_hours", "priority"):
                if jd.get(key) is not None:
                    raise InstanceError(f"{w}.{key}", "must be absent for an analytics job")
            jobs.append(Job(name=_name(jd.get("name"), f"{w}.name"), kind=kind, tables=tuple(tl),
                            cpu_hours=cpu, app=app))
    _unique([j.name for j in jobs], "jobs")

    weights = _obj(doc.get("weights", {"w1": 1.0, "w2": 1.0, "w3": 1.0}), "weights")
    for key in weights:
        if key not in ("w1", "w2", "w3"):
            raise InstanceError(f"weights.{key}", "is not one of w1, w2, w3")
    w1, w2, w3 = (_num(weights.get(k, 1.0), f"weights.{k}") for k in ("w1", "w2", "w3"))
    if total((r.storage_capacity for r in regions), "regions[].storage_capacity") <= 0:
        raise InstanceError("regions", "total storage_capacity must be positive")
    total((t.size for t in tables), "tables[].size")
    total((j.gpu_hours for j in jobs), "jobs[].gpu_hours")
    total((j.cpu_hours for j in jobs), "jobs[].cpu_hours")
    for g in supply_types:
        total((r.gpu_supply.get(g, 0) for r in regions), f"regions[].gpu_supply.{g}")
    for i, a in enumerate(apps):
        total(a.cpu_capacity.values(), f"apps[{i}].cpu_capacity")
    quota = doc.get("move_quota")
    return TetrisInstance(
        regions=tuple(regions), apps=tuple(apps), tables=tuple(tables), jobs=tuple(jobs),
        priority_weights=prio_w, high_priorities=high, w1=w1, w2=w2, w3=w3,
        home_threshold=integer(doc.get("home_threshold", 0), "home_threshold"),
        move_quota=None if quota is None else integer(quota, "move_quota"),
        name=str(doc.get("name", name)),
    )


def instance_to_json(inst: TetrisInstance) -> dict:
    jobs = []
    for j in inst.jobs:
        d: dict[str, Any] = {"name": j.name, "kind": j.kind, "tables": list(j.tables)}
        if j.kind == "ml":
            d.update(gpu_type=j.gpu_type, gpu_hours=j.gpu_hours)
        d["cpu_hours"] = j.cpu_hours
        if j.kind == "ml":
            d["priority"] = j.priority
        if j.app is not None:
            d["app"] = j.app
        jobs.append(d)
    out: dict[str, Any] = {"problem": "tetris", "version": FORMAT_VERSION}
    if inst.name:
        out["name"] = inst.name
    out.update({
        "regions": [{"name": r.name, "storage_capacity": r.storage_capacity, "gpu_supply": dict(r.gpu_supply)}
                    for r in inst.regions],
        "apps": [{"name": a.name, "cpu_capacity": dict(a.cpu_capacity)} for a in inst.apps],
        "tables": [{"name": t.name, "size": t.size, "home": t.home} for t in inst.tables],
        "jobs": jobs,
        "priority_weights": list(inst.priority_weights),
        "high_priorities": list(inst.high_priorities),
        "weights": {"w1": inst.w1, "w2": inst.w2, "w3": inst.w3},
        "home_threshold": inst.home_threshold,
        "move_quota": inst.move_quota,
    })
    return out


def load_solution(inst: TetrisInstance, doc: Any) -> TetrisSolution:
    """Validate a solution document against ``inst``.

    Accepts a solution file (``{"problem", "home", "replicas"?}``) or the output of
    ``placement solve -o`` (the solution under ``"solution"``).
    """
    doc = _obj(doc, "solution")
    if "solution" in doc and "home" not in doc:
        doc = _obj(doc["solution"], "solution")
    if doc.get("problem", "tetris") != "tetris":
        raise InstanceError("solution.problem", f"must be 'tetris', got {doc.get('problem')!r}")
    home = _obj(doc.get("home"), "solution.home")
    ridx, tidx = inst.region_index, inst.table_index
    out = np.full(inst.n_tables, -1, dtype=np.int64)
    for tn, rn in home.items():
        if tn not in tidx:
            raise InstanceError(f"solution.home.{tn}", "names a table that is not in the instance")
        if not isinstance(rn, str) or rn not in ridx:
            raise InstanceError(f"solution.home.{tn}", f"names an unknown region {rn!r}")
        out[tidx[tn]] = ridx[rn]
    missing = np.flatnonzero(out < 0)
    if len(missing):
        raise InstanceError(f"solution.home.{inst.tables[missing[0]].name}",
                            f"is missing ({len(missing)} table(s) have no home region)")
    replicas = None
    if doc.get("replicas") is not None:
        rep = _obj(doc["replicas"], "solution.replicas")
        lists: list[tuple[int, ...]] = [() for _ in inst.tables]
        for tn, regs in rep.items():
            if tn not in tidx:
                raise InstanceError(f"solution.replicas.{tn}", "names a table that is not in the instance")
            if not isinstance(regs, list):
                raise InstanceError(f"solution.replicas.{tn}", "must be a list of region names")
            idx = []
            for rn in regs:
                if not isinstance(rn, str) or rn not in ridx:
                    raise InstanceError(f"solution.replicas.{tn}", f"names an unknown region {rn!r}")
                idx.append(ridx[rn])
            if int(out[tidx[tn]]) in idx:
                raise InstanceError(f"solution.replicas.{tn}", "must not list the table's home region")
            lists[tidx[tn]] = tuple(sorted(set(idx)))
        replicas = tuple(lists)
    return TetrisSolution(home=out, replicas=replicas)


def solution_to_json(inst: TetrisInstance, sol: TetrisSolution) -> dict:
    names = inst.region_names
    out: dict[str, Any] = {"problem": "tetris",
                           "home": {t.name: names[int(r)] for t, r in zip(inst.tables, sol.home, strict=True)}}
    if sol.replicas is not None:
        out["replicas"] = {t.name: [names[r] for r in regs]
                           for t, regs in zip(inst.tables, sol.replicas, strict=True) if regs}
    return out
