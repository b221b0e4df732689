"""Data that policies receive, built by the app for ``placement simulate`` and the benches.

A policy never loads shipped files or generates instances: it names the data it needs in its
class attribute ``needs`` (constructor option -> data kind), and :func:`build_policy` fills an
option the user did not give from the provider of its kind:

``"vc-assignment"`` (HiveD, quota sharing, private clusters)
    The VC assignment fitted to the shipped Philly trace for the cluster's node count
    (:func:`placement.solvers.online.tenants.fit_assignment`), with the policy's ``fit_levels``
    (``"multi"`` or ``"node"``) unless ``--option levels=...`` says otherwise. Cached per
    (nodes, levels).
``"data-placement"`` (MAST, federated)
    ``data=candidate-regions`` (the default when the instance has ``table_regions``, as the
    traces of ``placement generate trace --kind mast`` do): each table where the instance says,
    :func:`candidate_placement`; the trace's workloads name their tables. Otherwise
    :func:`tetris_placement` for the cluster: a variant name (``data=replicas``, the default
    without ``table_regions``, ``v0``, ``hill_climb``) with ``data_seed``, ``n_tables`` and
    ``n_data_jobs``; ``data=null`` means no data constraint. Built afresh for every run
    (replication during a run changes it).

Data placement variants (MAST §3)
---------------------------------
``"v0"``: the instance's starting homes, no replicas (MAST's V0: users picked the
regions, tables never moved); ``"hill_climb"``: homes after §3.4's hill climbing,
no replicas; ``"replicas"``: hill climbing then §3.5's extra replicas
(:mod:`placement.solvers.replicas`).

How the Tetris instance matches the simulated cluster (our construction)
-----------------------------------------------------------------------
:func:`placement.instances.tetris.tetris_document` draws tables, popularity, ML jobs and storage;
its regions are renamed to the cluster's regions and its GPU types to the cluster's
(up to 8 types: type i of the instance is the cluster's i-th type in name order), and
GPU supply is replaced by the cluster's: supply[r, g] = the cluster's share of type g
GPUs in region r times 80% of the instance's demand for g (GPUs scarcer than demand,
as in §3.2), at least 1 where the region has the type. The threshold of (6) is
recomputed from the starting homes with the same rule as the generator (80% of the
high-priority GPU-hours that can run at home). Trace jobs do not name Tetris tables, so
each is mapped to one ML job of the instance, the same GPU type when there is one,
by a seeded hash of its id (independent of the trace window and of job order); it
reads that job's tables. A trace job that names tables known to the instance uses them.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

import numpy as np

from placement.errors import InstanceError
from placement.instances.tetris import tetris_document
from placement.instances.traces import trace_path
from placement.options import Range, check_options
from placement.sim.policies import policy_class
from placement.sim.trace import load_philly
from placement.solvers import hill_climb as hill_climb_solver
from placement.solvers import replicas as replicas_solver
from placement.solvers.online.mast import DataPlacement
from placement.solvers.online.tenants import as_assignment, check_cluster, fit_assignment
from placement.tetris.instance import load_instance

__all__ = ["build_policy", "tetris_placement", "candidate_placement", "default_data", "philly_assignment",
           "cluster_supply", "VARIANTS", "PROVIDERS", "check_policy_options"]

VARIANTS = ("v0", "hill_climb", "replicas")
CANDIDATES = "candidate-regions"
_MISSING = object()


def _v0_threshold(doc: dict, supply: np.ndarray, type_index: dict, region_index: dict) -> int:
    home = {t["name"]: region_index[t["home"]] for t in doc["tables"]}
    high = set(doc["high_priorities"])
    total = 0
    for j in doc["jobs"]:
        if j["kind"] != "ml" or j["priority"] not in high:
            continue
        regs = {home[t] for t in j["tables"]}
        if len(regs) == 1 and supply[regs.pop(), type_index[j["gpu_type"]]] > 0:
            total += j["gpu_hours"]
    return int(0.8 * total)


def tetris_placement(regions: list[str], gpu_types: list[str], gpus: np.ndarray, *, variant: str = "replicas",
                     n_tables: int = 200, n_jobs: int = 400, seed: int = 0,
                     time_limit: float | None = 30.0) -> DataPlacement:
    """Build a Tetris instance matching a cluster and solve it with the chosen variant.

    Parameters
    ----------
    regions, gpu_types : names in the cluster (region index order; types in name order).
    gpus : int array (regions x types), GPUs of each type per region in the cluster.
    variant : one of :data:`VARIANTS`.
    """
    if variant not in VARIANTS:
        raise InstanceError("data", f"must be null, or a variant: one of {', '.join(VARIANTS)}, got {variant!r}")
    gpus = np.asarray(gpus, dtype=np.int64)
    R = len(regions)
    G = min(len(gpu_types), 8)
    doc = tetris_document(n_tables, n_jobs, R, seed=seed, n_gpu_types=G, n_priorities=7)
    old_types = [g for g in doc["regions"][0]["gpu_supply"]]
    rename_r = {f"r{i}": regions[i] for i in range(R)}
    rename_g = dict(zip(old_types, gpu_types[:G], strict=True))
    type_index = {gpu_types[g]: g for g in range(G)}
    region_index = {regions[r]: r for r in range(R)}
    demand = np.zeros(G)
    for j in doc["jobs"]:
        if j["kind"] == "ml":
            j["gpu_type"] = rename_g[j["gpu_type"]]
            demand[type_index[j["gpu_type"]]] += j["gpu_hours"]
    share = gpus[:, :G] / np.maximum(gpus[:, :G].sum(axis=0, keepdims=True), 1)
    supply = np.floor(share * np.maximum(demand, 10) * 0.8).astype(np.int64)
    supply[(gpus[:, :G] > 0) & (supply == 0)] = 1
    for r, reg in enumerate(doc["regions"]):
        reg["name"] = regions[r]
        reg["gpu_supply"] = {gpu_types[g]: int(supply[r, g]) for g in range(G)}
    for t in doc["tables"]:
        t["home"] = rename_r[t["home"]]
    for a in doc["apps"]:
        a["cpu_capacity"] = {rename_r[k]: v for k, v in a["cpu_capacity"].items()}
    doc["home_threshold"] = _v0_threshold(doc, supply, type_index, region_index)
    inst = load_instance(doc)
    a = inst.arrays
    stats: dict = {"variant": variant}
    replicas = None
    if variant == "v0":
        home = a.home0.copy()
    elif variant == "hill_climb":
        res = hill_climb_solver.solve(inst, seed=seed, time_limit=time_limit)
        home = res.solution.home if res.solution is not None else a.home0.copy()
        stats["tetris_status"] = str(res.status)
    else:
        res = replicas_solver.solve(inst, seed=seed, time_limit=time_limit)
        if res.solution is not None:
            home, replicas = res.solution.home, res.solution.replicas
        else:
            home = a.home0.copy()
        stats["tetris_status"] = str(res.status)
    stats["collocation_jobs"] = replicas_solver.collocation(inst, home, replicas)["jobs"]
    present = (np.int64(1) << np.asarray(home, dtype=np.int64)).astype(np.int64)
    if replicas is not None:
        for t, regs in enumerate(replicas):
            for r in regs:
                present[t] |= np.int64(1 << int(r))
    ml = np.flatnonzero(a.job_ml)
    job_tables = [a.job_tab[a.job_ptr[j]:a.job_ptr[j + 1]].copy() for j in range(inst.n_jobs)]
    jobs_of_type = {gpu_types[g]: ml[a.job_gpu[ml] == g] for g in range(G)}
    return DataPlacement(regions=tuple(regions), gpu_types=tuple(gpu_types),
                         tables=tuple(t.name for t in inst.tables), present=present, job_tables=job_tables,
                         jobs_of_type=jobs_of_type, all_jobs=ml, variant=variant, seed=seed, stats=stats)


def candidate_placement(cluster, masks: dict[str, int]) -> DataPlacement:
    """Each table in the regions of its bit mask (``masks``: table -> bit r set for the cluster's
    region r), no Tetris instance: the data placement of a trace that says where its tables are
    (the candidate regions of MAST's workloads, Fig. 7: :mod:`placement.sim.meta_week`)."""
    tables = tuple(sorted(masks))
    return DataPlacement(regions=tuple(cluster.region_names), gpu_types=tuple(cluster.types), tables=tables,
                         present=np.array([masks[t] for t in tables], dtype=np.int64), job_tables=[],
                         jobs_of_type={}, all_jobs=np.zeros(0, dtype=np.int64), variant=CANDIDATES)


def default_data(table_regions: bool) -> str:
    """The data option's default: ``"candidate-regions"`` when the instance has ``table_regions``."""
    return CANDIDATES if table_regions else "replicas"


def cluster_supply(cluster) -> tuple[list[str], list[str], np.ndarray]:
    """Region names, GPU type names (sorted) and GPUs per (region, type) of a simulator cluster."""
    types = list(cluster.types)
    type_of_gpu = np.searchsorted(np.asarray(types), np.asarray(cluster.gpu_type))
    region = np.asarray(cluster.region)
    supply = np.zeros((len(cluster.region_names), len(types)), dtype=np.int64)
    np.add.at(supply, (region, type_of_gpu), 1)
    return list(cluster.region_names), types, supply


@functools.lru_cache(maxsize=16)
def philly_assignment(n_nodes: int, levels: str = "multi"):
    """The VC assignment fitted to the shipped Philly trace on ``n_nodes`` nodes; cached."""
    if levels not in ("multi", "node"):
        raise InstanceError("levels", f"must be 'multi' or 'node', not {levels!r}")
    jobs = load_philly(trace_path("philly.csv")).jobs
    return fit_assignment(jobs, n_nodes, levels, name="philly.csv")


def _vc_assignment(cls, option: str, options: dict[str, Any], cluster, table_regions=None) -> dict[str, Any]:
    levels = options.pop("levels", getattr(cls, "fit_levels", "multi"))
    if options.get(option) is None:
        options[option] = philly_assignment(check_cluster(cluster), levels)
    return options


def _data_placement(cls, option: str, options: dict[str, Any], cluster, table_regions=None) -> dict[str, Any]:
    value = options.get(option, default_data(table_regions is not None))
    extra = {k: options.pop(k) for k in ("data_seed", "n_tables", "n_data_jobs") if k in options}
    if value == CANDIDATES:
        if table_regions is None:
            raise InstanceError("data", "candidate-regions needs an instance with table_regions (the traces of "
                                        "placement generate trace --kind mast have them)")
        index = {r: i for i, r in enumerate(cluster.region_names)}
        masks = {}
        for t, regs in table_regions.items():
            if any(r not in index for r in regs):
                raise InstanceError(f"table_regions.{t}"[:200], "names a region the cluster does not have")
            masks[t] = sum(1 << index[r] for r in set(regs))
        options[option] = candidate_placement(cluster, masks)
    elif isinstance(value, str):
        regions, types, supply = cluster_supply(cluster)
        options[option] = tetris_placement(regions, types, supply, variant=value,
                                           n_tables=int(extra.get("n_tables", 200)),
                                           n_jobs=int(extra.get("n_data_jobs", 400)),
                                           seed=int(extra.get("data_seed", 0)))
    else:
        options[option] = value
    return options


PROVIDERS = {"vc-assignment": _vc_assignment, "data-placement": _data_placement}
# The options each provider consumes (they are not the policy's own), with what they take.
PROVIDER_OPTIONS: dict[str, dict[str, Any]] = {
    "vc-assignment": {"levels": Literal["multi", "node"]},
    "data-placement": {"data_seed": Annotated[int, Range(0, 2**32)],
                       "n_tables": Annotated[int, Range(1, 10_000)],        # a Tetris instance per run:
                       "n_data_jobs": Annotated[int, Range(1, 100_000)]},   # bounded by its build time
}
# What the data option itself takes from the command line: a variant name or null.
DATA_OPTION = Literal["candidate-regions", "v0", "hill_climb", "replicas"] | DataPlacement | None


def check_policy_options(name: str, options: dict[str, Any], cluster=None) -> dict[str, Any]:
    """``options`` for policy ``name`` checked against its constructor's annotations and its data
    providers' options (:func:`placement.options.check_options`, the checker solvers use), before
    anything is built; with ``cluster``, also that the policy can run on it (the tenant schemes
    need 8-GPU nodes). Returns the converted options; one :class:`InstanceError` otherwise."""
    cls = policy_class(name)
    extra: dict[str, Any] = {}
    for option, kind in getattr(cls, "needs", {}).items():
        extra.update(PROVIDER_OPTIONS.get(kind, {}))
        if kind == "data-placement":
            extra[option] = DATA_OPTION
    out = check_options(cls, options, owner=f"policy {name!r}", extra=extra)
    for option, kind in getattr(cls, "needs", {}).items():
        if kind == "vc-assignment" and cluster is not None:
            n_nodes = check_cluster(cluster)
            if out.get(option) is not None:
                as_assignment(out[option], n_nodes)  # fits this cluster (HiveD §3.2), else one line
    return out


def build_policy(name: str, cluster, *, table_regions=None, **options: Any):
    """The registered policy ``name`` built with ``options`` (checked first:
    :func:`check_policy_options`), its ``needs`` filled for ``cluster`` by :data:`PROVIDERS`
    (module doc; ``table_regions``: the instance's, for ``data=candidate-regions``). A
    constructor that still refuses the options is an :class:`InstanceError`."""
    cls = policy_class(name)
    options = check_policy_options(name, options, cluster)
    for option, kind in getattr(cls, "needs", {}).items():
        if kind not in PROVIDERS:
            raise InstanceError("--policy", f"{name!r} needs data of kind {kind!r}, which nothing provides")
        options = PROVIDERS[kind](cls, option, options, cluster, table_regions)
    try:
        return cls(**options)
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:  # a constructor's own check (e.g. increasing queue limits)
        raise InstanceError("--option", f"policy {name!r}: {exc}") from None
