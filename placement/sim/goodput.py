"""Goodput: Pollux's model of a training job (Pollux, OSDI'21, §3) and its applications' measurements.

Terms (Pollux §3):

- **throughput** (§3.2, Eq. 7-9): an iteration on ``N`` nodes and ``K`` replicas with atomic
  (per-GPU) batch ``m`` and ``s`` gradient-accumulation steps takes
  ``T_iter = s * T_grad + (T_grad^g + T_sync^g)^(1/g)`` with ``T_grad = a_c + b_c m`` and
  ``T_sync = a_n + b_n (K - 2)`` across nodes (``a_r + b_r (K - 2)`` within one node, 0 for one
  replica); throughput = ``K m (s + 1) / T_iter`` samples per second. The seven parameters
  :class:`PerfParams` are fitted per job to the configurations it has run (:func:`fit_perf_params`).
- **statistical efficiency** (§3.1, Eq. 5-6): with gradient noise scale ``B_noise = M0 var / sqr``
  (``sqr``, ``var``: the gradient's squared norm and variance at the initial batch ``M0``),
  ``E(M) = (B_noise + M0) / (B_noise + M)``; goodput = throughput x efficiency
  (:class:`GoodputFunction`). Progress is in units of ``M0``-sample iterations: a configuration
  makes ``gain / T_iter`` of them per second, ``gain = (var + sqr) / (var / (M/M0) + sqr)``.
- **speedup** (§4.1): a job's best goodput on ``(N, K)`` (batch size and accumulation chosen
  together, :meth:`GoodputFunction.optimize`) over its goodput on a reference allocation.
- an **application** (:class:`Application`): one of the six jobs the Pollux authors measured
  (``instances/data/pollux/traces/``: per-placement step and sync times by local batch, and per
  epoch the progress, metric and gradient statistics at several batch sizes). It is the ground
  truth of the simulation, as in the authors' simulator (``simulator/applications.py``:
  throughput interpolated in local batch for a measured placement, else linearly over
  (nodes, replicas, local batch); gradient statistics interpolated linearly in batch size).

:class:`GoodputPerf` is the simulator's performance model for these jobs: a job's work is its
total progress (``Application.total``), its rate on a placement the true goodput at its current
epoch and batch size, and its batch size the one its own fitted model picks (the PolluxAgent,
§4.2) -- or the trace's fixed batch size for jobs that do not adapt (Tiresias+TunedJobs). A start
costs ``restart_delay`` seconds with no progress (the authors' simulator charges 30 s at every
re-allocation, ``simulator.py`` ``Job.reallocate``). :func:`goodput_check` re-derives every
logged rate from the measurements, for the replay check.

We read the authors' code at ``petuum/adaptdl`` branch ``osdi21-artifact`` folder ``simulator/``
(``goodput.py``, ``speedup.py``, ``applications.py``, ``simulator.py``; Apache-2.0). Where we
differ: :func:`fit_perf_params` minimises the same objective with L-BFGS-B and the same exact
gradient written out by hand (theirs: autograd); the
rate changes exactly at epoch boundaries (theirs rounds the crossing to a whole second).
Like theirs, the batch is re-picked at every epoch boundary and every 60 s step
(``GoodputPerf.retune_interval``).
"""

from __future__ import annotations

import csv
import ctypes
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InstanceError
from .log import EventLog
from .perf import PerfModel

__all__ = ["PerfParams", "GoodputFunction", "fit_perf_params", "Application", "load_applications",
           "APP_SETTINGS", "Agent", "Segment", "GoodputPerf", "goodput_check", "SpeedupTable",
           "use_applications", "default_perf", "check_measured"]

# Per-application settings as the authors' simulator sets them (applications.py APPLICATIONS):
# max_epochs, and yolov3's max local batch 8; the rest are read from the traces.
APP_SETTINGS: dict[str, dict] = {
    "bert": {"max_epochs": 2}, "cifar10": {"max_epochs": 100}, "ncf": {"max_epochs": 10},
    "imagenet": {"max_epochs": 90}, "deepspeech2": {"max_epochs": 80},
    "yolov3": {"max_epochs": 50, "max_local_bsz": 8},
}
# NCF trains at a fixed batch size of 32768 under Pollux (simulator.py Cluster.__init__).
FIXED_BATCH = {"ncf": 32768}
EPS = 1e-8


class PerfParams(NamedTuple):
    """Pollux §3.2 throughput-model parameters (module docstring)."""

    alpha_c: float
    beta_c: float
    alpha_n: float
    beta_n: float
    alpha_r: float
    beta_r: float
    gamma: float


def _accum_time(p, atomic):
    return p[0] + p[1] * atomic


def _network_time(p, nodes, replicas):
    nodes, replicas = np.asarray(nodes), np.asarray(replicas)
    conds = [nodes > 1, replicas > 1]
    bottleneck = np.select(conds, [p[2], p[4]], 1e-8)
    retro = np.select(conds, [p[3], p[5]], 1e-8)
    return bottleneck + retro * np.maximum(replicas - 2, 1e-8)


def _log_optim_time(p, accum, network):
    g = p[6]
    return np.log(accum ** g + network ** g) / g


class GoodputFunction:
    """Goodput = throughput (§3.2) x efficiency (§3.1) of one job; ``optimize`` picks the batch."""

    def __init__(self, perf_params, grad_params, init_batch_size: float):
        self.p = tuple(float(x) for x in perf_params)
        self.sqr, self.var = (float(x) for x in grad_params)
        self.m0 = float(init_batch_size)

    def throughput(self, nodes, replicas, atomic, accum):
        a = _accum_time(self.p, atomic)
        optim = np.exp(_log_optim_time(self.p, a, _network_time(self.p, nodes, replicas)))
        return replicas * atomic * (accum + 1) / (accum * a + optim)

    def efficiency(self, batch):
        scale = batch / self.m0
        denom = self.var / scale + self.sqr
        gain = np.where(denom > 0, (self.var + self.sqr) / np.where(denom > 0, denom, 1.0), 1.0)
        return gain / scale

    def __call__(self, nodes, replicas, atomic, accum):
        batch = replicas * atomic * (accum + 1)
        return self.throughput(nodes, replicas, atomic, accum) * self.efficiency(batch)

    def optimize(self, nodes, replicas, max_batch: float, atomic_range: tuple[int, int]):
        """Best goodput over 50 batch sizes geometrically spaced in ``[max(M0, K min_atomic),
        max_batch]`` with gradient accumulation (the authors' ``GoodputFunction.optimize`` with
        ``accumulation=True``): arrays (goodput, atomic batch, accumulation steps) shaped like the
        broadcast of ``nodes`` and ``replicas``."""
        lo_a, hi_a = atomic_range
        nodes, replicas = np.broadcast_arrays(np.asarray(nodes, float), np.asarray(replicas, float))
        shape = nodes.shape
        n, k = nodes.ravel(), replicas.ravel()
        lo = np.maximum(self.m0, lo_a * k)
        batch = np.geomspace(lo, max(max_batch, 1.0) * np.ones_like(lo))  # (50, len)
        local = batch / k
        accum = np.ceil(local / hi_a - EPS) - 1
        accum = np.where((k == 1) & (local > self.m0 + EPS), np.maximum(accum, 1), accum).astype(int)
        atomic = np.ceil(local / (accum + 1) - EPS).astype(int)
        good = self(n, k, atomic, accum)
        good = np.where((lo_a <= atomic) & (atomic <= hi_a) & (batch >= self.m0 - EPS), good, 0.0)
        i = np.argmax(good, axis=0)
        j = np.arange(good.shape[1])
        return good[i, j].reshape(shape), atomic[i, j].reshape(shape), accum[i, j].reshape(shape)


def _objective(params, nodes, replicas, atomic, accum_t, optim_t):
    pred_a = _accum_time(params, atomic)
    pred_o = _log_optim_time(params, pred_a, _network_time(params, nodes, replicas))
    err1 = np.sqrt(((np.log(pred_a) - np.log(accum_t)) ** 2).mean())
    err2 = np.sqrt(((pred_o - np.log(optim_t)) ** 2).mean())
    reg1 = 1e-3 * (params[6] - 1) ** 2
    reg2 = 1e-2 * ((params[3] / params[2]) ** 2 + (params[5] / params[4]) ** 2)
    return err1 + err2 + reg1 + reg2


def _objective_grad(params, nodes, replicas, atomic, accum_t, optim_t) -> np.ndarray:
    """Exact gradient of :func:`_objective` (the authors differentiate it with autograd)."""
    a_c, b_c, a_n, b_n, a_r, b_r, g = params
    n = len(atomic)
    pa = a_c + b_c * atomic
    inter, intra = nodes > 1, (nodes <= 1) & (replicas > 1)
    k2 = np.maximum(replicas - 2, 1e-8)
    net = _network_time(params, nodes, replicas)
    u = pa ** g + net ** g
    lo = np.log(u) / g
    d1 = np.log(pa) - np.log(accum_t)
    d2 = lo - np.log(optim_t)
    e1, e2 = np.sqrt((d1 ** 2).mean()), np.sqrt((d2 ** 2).mean())
    w1 = d1 / (e1 * n) if e1 > 0 else np.zeros(n)
    w2 = d2 / (e2 * n) if e2 > 0 else np.zeros(n)
    dlo_pa, dlo_net = pa ** (g - 1) / u, net ** (g - 1) / u
    dlo_g = -np.log(u) / g ** 2 + (pa ** g * np.log(pa) + net ** g * np.log(net)) / (g * u)
    grad = np.array([
        (w1 / pa).sum() + (w2 * dlo_pa).sum(),
        (w1 * atomic / pa).sum() + (w2 * dlo_pa * atomic).sum(),
        (w2 * dlo_net * inter).sum() - 2e-2 * b_n ** 2 / a_n ** 3,
        (w2 * dlo_net * inter * k2).sum() + 2e-2 * b_n / a_n ** 2,
        (w2 * dlo_net * intra).sum() - 2e-2 * b_r ** 2 / a_r ** 3,
        (w2 * dlo_net * intra * k2).sum() + 2e-2 * b_r / a_r ** 2,
        (w2 * dlo_g).sum() + 2e-3 * (g - 1),
    ])
    return grad


def fit_perf_params(nodes, replicas, atomic, accum_time, step_time) -> PerfParams:
    """Fit the seven §3.2 parameters to observed (accumulation, step) times, as the authors'
    ``fit_perf_params``: RMS log error of both times, plus small priors (gamma near 1,
    retrogression small); parameters the observations cannot identify are pinned. The same
    observations give the same fit (memoized: jobs of one application often observe the same
    configurations)."""
    key = tuple(sorted(zip(*(np.asarray(v, float).tolist() for v in (nodes, replicas, atomic, accum_time,
                                                                       step_time)), strict=True)))
    out = _FITS.get(key)
    if out is None:
        if len(_FITS) > 200_000:
            _FITS.clear()
        out = _FITS[key] = _fit(*(np.array(c) for c in zip(*key, strict=True)))
    return out


_FITS: dict[tuple, PerfParams] = {}
FIT_METHOD = "L-BFGS-B"   # scipy.optimize.minimize method of the fit, as the authors


@cache
def _blas_threads_setter():
    """scipy's OpenBLAS ``openblas_set_num_threads_local`` (None when not found). L-BFGS-B calls
    BLAS on vectors of seven numbers; with OpenBLAS's threads on a loaded 2-core machine each of
    those calls waited for idle threads: one fit took 1.1 s, 0.12 s on one thread (measured), and
    a Pollux run of 160 jobs fits some 1,000 times. The fit's result does not depend on it."""
    import scipy

    folder = Path(scipy.__file__).resolve().parent.parent / "scipy.libs"
    for path in sorted(folder.glob("*openblas*")):
        try:
            fn = ctypes.CDLL(str(path)).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        return fn
    return None


def _fit(nodes, replicas, atomic, accum_time, step_time) -> PerfParams:
    x0 = [1e-1, 1e-2] * 3 + [1.0 + 1e-3]
    lo = [1e-8, 1e-8] * 3 + [1.0]
    hi = [np.inf, np.inf] * 3 + [10.0]
    if len(np.unique(atomic)) == 1:
        x0[0] = lo[0] = hi[0] = float(np.mean(accum_time)) / 2
    if not np.any(nodes > 1):
        for i in (2, 3):
            x0[i] = hi[i] = lo[i]
    if not np.any((nodes == 1) & (replicas > 1)):
        for i in (4, 5):
            x0[i] = hi[i] = lo[i]
    if not np.any(replicas > 2):
        for i in (3, 5):
            x0[i] = hi[i] = lo[i]
    # pinned parameters (lo == hi) are left out of the search
    free = [i for i in range(7) if lo[i] < hi[i]]
    full = np.array(x0, float)
    args = (nodes, replicas, atomic, accum_time, step_time)

    def obj(x):
        full[free] = x
        return _objective(full, *args), _objective_grad(full, *args)[free]

    import scipy.optimize  # here, not at import: the command line loads this module on every start

    setter = _blas_threads_setter()
    prev = setter(1) if setter is not None else None
    try:
        res = scipy.optimize.minimize(obj, [x0[i] for i in free], method=FIT_METHOD, jac=True,
                                      bounds=[(lo[i], hi[i]) for i in free])
    finally:
        if setter is not None:
            setter(prev)
    full[free] = res.x
    p = [float(v) for v in full]
    if not np.any(nodes > 1):   # prior: inter-node at least as slow as intra-node
        p[2] = max(p[2], p[4] * 1.1)
        p[3] = max(p[3], p[5] * 1.1)
    return PerfParams(*p)


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise InstanceError(str(path), "must have at least one row")
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


class Application:
    """One measured training job (module docstring): the simulation's ground truth."""

    def __init__(self, trace_dir: Path, max_epochs: int, max_local_bsz: int | None = None):
        trace_dir = Path(trace_dir)
        self.name = trace_dir.name
        val = {}
        for p in trace_dir.glob("validation-*.csv"):
            val[int(p.stem.split("-")[-1])] = _read_csv(p)
        if not val:
            raise InstanceError(str(trace_dir), "has no validation-*.csv")
        self.validation = dict(sorted(val.items()))
        self.bszs = np.array(list(self.validation), float)
        pl = _read_csv(trace_dir / "placements.csv")
        self.pl_id = pl["placement"].astype(int)
        self.pl_bsz, self.pl_step, self.pl_sync = pl["local_bsz"], pl["step_time"], pl["sync_time"]
        sc = _read_csv(trace_dir / "scalability.csv")
        self.init_batch_size = int(self.bszs[0])
        self.max_batch_size = int(self.bszs[-1])
        self.min_local_bsz = int(self.pl_bsz.min())
        self.max_local_bsz = int(max_local_bsz or self.pl_bsz.max())
        self.max_epochs = int(max_epochs)
        # progress after each epoch: the smallest over batch sizes (theirs: get_progress)
        prog = np.min([v["progress"][:self.max_epochs] for v in self.validation.values()], axis=0)
        self.progress_after = np.concatenate([[0.0], prog])      # index e: progress at epoch e
        self.total = float(self.progress_after[self.max_epochs])
        # scattered interpolation points: mean step/sync per (nodes, replicas, local batch) of the
        # placement rows, plus the scalability rows (theirs: groupby(...).mean().append(...))
        digits = [str(i) for i in self.pl_id]
        nodes = np.array([len(d) for d in digits], float)
        reps = np.array([sum(map(int, d)) for d in digits], float)
        keys: dict[tuple, list] = {}
        for i in range(len(digits)):
            keys.setdefault((nodes[i], reps[i], self.pl_bsz[i]), []).append(i)
        pts = [k for k in sorted(keys)]
        vals = [(self.pl_step[keys[k]].mean(), self.pl_sync[keys[k]].mean()) for k in pts]
        pts += list(zip(sc["num_nodes"], sc["num_replicas"], sc["local_bsz"], strict=True))
        vals += list(zip(sc["step_time"], sc["sync_time"], strict=True))
        self._points = (np.array(pts, float), np.array(vals, float))
        self._interp = None     # built on the first unmeasured placement (_nd)
        self._tp: dict = {}

    def epoch_of(self, done: float) -> int:
        """The epoch a job with progress ``done`` is in (boundaries count as the next epoch)."""
        tol = 1e-9 * max(1.0, self.total)
        return int(np.searchsorted(self.progress_after[1:], done + tol, side="right"))

    def _bracket(self, batch: float) -> tuple[int, int]:
        b = self.bszs
        i = int(np.searchsorted(b, batch, side="right")) - 1
        j = int(np.searchsorted(b, batch, side="left"))
        if i < 0 or j >= len(b):
            raise ValueError(f"{self.name}: batch size {batch} outside {int(b[0])}..{int(b[-1])}")
        return int(b[i]), int(b[j])

    @cache  # noqa: B019 - one Application per data folder, loaded once (load_applications)
    def grad_stats(self, batch: float, epoch: int) -> tuple[float, float]:
        """(sqr, var) of the gradient during ``epoch`` at total batch ``batch`` (interpolated)."""
        lo, hi = self._bracket(batch)
        vl, vh = self.validation[lo], self.validation[hi]
        if lo == hi:
            return float(vl["grad_sqr"][epoch]), float(vl["grad_var"][epoch])
        w = (batch - lo) / (hi - lo)
        return (float((1 - w) * vl["grad_sqr"][epoch] + w * vh["grad_sqr"][epoch]),
                float((1 - w) * vl["grad_var"][epoch] + w * vh["grad_var"][epoch]))

    def throughput(self, placement: tuple[int, ...], local_bsz: float) -> tuple[float, float]:
        """(step time, sync time) of one iteration on ``placement`` (GPUs per node)."""
        placement = tuple(x for x in placement if x)
        placement = min(placement[i:] + placement[:i] for i in range(len(placement)))
        key = (placement, float(local_bsz))
        out = self._tp.get(key)
        if out is not None:
            return out
        pid = int("".join(map(str, placement)))
        rows = self.pl_id == pid
        if rows.any():
            xs, order = self.pl_bsz[rows], np.argsort(self.pl_bsz[rows], kind="stable")
            if not xs.min() - EPS <= local_bsz <= xs.max() + EPS:
                raise ValueError(f"{self.name}: local batch {local_bsz} outside the measured range")
            step = float(np.interp(local_bsz, xs[order], self.pl_step[rows][order]))
            sync = float(np.interp(local_bsz, xs[order], self.pl_sync[rows][order]))
        else:
            step, sync = (float(v) for v in self._nd()([min(len(placement), 16), sum(placement), local_bsz])[0])
        if not (math.isfinite(step) and math.isfinite(sync)):
            raise ValueError(f"{self.name}: no throughput for placement {placement} at local batch {local_bsz}")
        self._tp[key] = out = (step, sync)
        return out

    def _nd(self):
        """The linear interpolator over (nodes, replicas, local batch) of the scattered
        measurements (module docstring), built when first needed: reading a workload's jobs
        needs only their total progress."""
        if self._interp is None:
            from scipy.interpolate import LinearNDInterpolator

            self._interp = LinearNDInterpolator(*self._points)
        return self._interp

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


@cache
def _load(folder: str) -> Mapping[str, Application]:
    root = Path(folder)
    return {name: Application(root / name, **APP_SETTINGS[name]) for name in sorted(APP_SETTINGS)
            if (root / name).is_dir()}


def load_applications(folder) -> Mapping[str, Application]:
    """The applications under ``folder`` (one sub-folder each, :data:`APP_SETTINGS`), loaded once."""
    apps = _load(str(Path(folder).resolve()))
    if not apps:
        raise InstanceError(str(folder), "holds none of the Pollux applications " + ", ".join(APP_SETTINGS))
    return apps


_FOLDER: list[Path] = []    # where default_perf finds the applications (use_applications)


def use_applications(folder) -> None:
    """Where the performance model named ``goodput`` (:func:`default_perf`,
    ``placement.sim.instance.make_perf``) finds its applications: the app layer names the
    shipped ones (``instances/data/pollux/traces``) when it loads; the simulator knows no path."""
    _FOLDER[:] = [Path(folder)]


def default_perf() -> GoodputPerf:
    """A fresh :class:`GoodputPerf` on the applications :func:`use_applications` named, every
    job's batch size its agent's choice (NCF's fixed, :data:`FIXED_BATCH`)."""
    if not _FOLDER:
        raise InstanceError("perf", "'goodput' needs the Pollux applications: call "
                            "placement.sim.goodput.use_applications(folder) first (the command line does)")
    return GoodputPerf(load_applications(_FOLDER[0]))


@cache
def _measured(folder: str) -> tuple[tuple[str, ...], int, int]:
    """(application names, most GPUs per node, most GPUs per job) the applications under
    ``folder`` were measured on: read from their ``placements.csv`` (a placement id's digits are
    GPUs per node) and ``scalability.csv``, without building the applications; the range is
    the one every application covers."""
    root = Path(folder)
    names = tuple(n for n in sorted(APP_SETTINGS) if (root / n).is_dir())
    if not names:
        raise InstanceError(str(folder), "holds none of the Pollux applications " + ", ".join(APP_SETTINGS))
    per_node, replicas = [], []
    for n in names:
        ids = [str(int(i)) for i in _read_csv(root / n / "placements.csv")["placement"]]
        per_node.append(max(max(int(c) for c in i) for i in ids))
        replicas.append(int(max(max(sum(int(c) for c in i) for i in ids),
                                _read_csv(root / n / "scalability.csv")["num_replicas"].max())))
    return names, min(per_node), min(replicas)


def check_measured(jobs, cluster, folder=None) -> None:
    """Refuse, before a run, what the Pollux measurements do not cover (their throughput is
    interpolated only inside them, ``Application.throughput``): a job whose ``model`` is none of
    the applications, a job of more GPUs than every application was measured on, and a cluster
    with machines of more GPUs than the measured nodes had. One :class:`InstanceError` naming the
    job or the cluster and what is measured. ``folder``: the applications' folder, default the
    one :func:`use_applications` named (the applications are not built for the check)."""
    from .perf import check_models

    if folder is None:
        if not _FOLDER:
            raise InstanceError("perf", "'goodput' needs the Pollux applications: call "
                                "placement.sim.goodput.use_applications(folder) first (the command line does)")
        folder = _FOLDER[0]
    names, per_node, replicas = _measured(str(Path(folder).resolve()))
    check_models(jobs, names, "goodput", allow_none=False)
    machine_gpus = getattr(cluster, "machine_gpus", None)
    if machine_gpus is not None and len(machine_gpus) and int(max(machine_gpus)) > per_node:
        raise InstanceError("--cluster", f"{cluster.name[:60]!r} has machines of {int(max(machine_gpus))} GPUs; "
                            f"perf 'goodput' is measured on nodes of at most {per_node} GPUs (the Pollux "
                            f"applications {', '.join(names)}, at most {replicas} GPUs per job): use "
                            f"machines of {per_node} GPUs or fewer, e.g. --cluster 1x1x1x16x{per_node}")
    for j in jobs:
        if j.gpus > replicas:
            raise InstanceError(f"job {j.id[:60]!r} gpus", f"is {j.gpus}; perf 'goodput' is measured on at most "
                                f"{replicas} GPUs per job (nodes of at most {per_node} GPUs)")


def batch_layout(app: Application, replicas: int, batch: float) -> tuple[int, int]:
    """(atomic batch, accumulation steps) for a fixed total ``batch`` on ``replicas`` GPUs (the
    authors' ``Job.update_local_bsz`` with a target batch size)."""
    local = math.ceil(batch / replicas - 1e-8)
    accum = math.ceil(local / app.max_local_bsz - 1e-8) - 1
    if replicas == 1 and batch > app.init_batch_size:
        accum = max(1, accum)
    atomic = math.ceil(local / (accum + 1) - 1e-8)
    return atomic, accum


class Agent:
    """A job's own view (the PolluxAgent, §4.2): the configurations it has run, its fitted §3.2
    parameters and its latest gradient statistics; it picks its batch size on a placement."""

    def __init__(self, app: Application, target_batch: float | None):
        self.app, self.target = app, target_batch
        self.profile: dict[tuple[int, int, int], tuple[float, float]] = {}
        self.params: PerfParams | None = None
        self.grad: tuple[float, float] | None = None
        self.version = 0            # bumped whenever params or grad change (speedup caches)

    @property
    def max_profiled_replicas(self) -> int:
        return max((k[1] for k in self.profile), default=0)

    def goodput_fn(self) -> GoodputFunction | None:
        if self.params is None:
            return None
        return GoodputFunction(self.params, self.grad, self.app.init_batch_size)

    def choose(self, nodes: int, replicas: int) -> tuple[int, int]:
        """(atomic batch, accumulation steps) on ``nodes`` x ``replicas``."""
        app, batch = self.app, self.target
        if batch is None and self.params is None:
            batch = max(app.init_batch_size, app.min_local_bsz * replicas)
        if batch is None:
            _, atomic, accum = self.goodput_fn().optimize(nodes, replicas, app.max_batch_size,
                                                          (app.min_local_bsz, app.max_local_bsz))
            atomic, accum = int(atomic), int(accum)
        else:
            atomic, accum = batch_layout(app, replicas, batch)
        atomic = min(atomic, int(app.max_batch_size / (replicas * (accum + 1))))
        return atomic, accum

    def observe(self, nodes, replicas, atomic, step, sync, grad) -> None:
        changed = self.grad != grad
        self.grad = grad
        key = (nodes, replicas, atomic)
        if key not in self.profile:
            self.profile[key] = (step, sync)
            ks, vs = list(self.profile), list(self.profile.values())
            self.params = fit_perf_params([k[0] for k in ks], [k[1] for k in ks], [k[2] for k in ks],
                                          [v[0] - v[1] for v in vs], [v[0] for v in vs])
            changed = True
        if changed:
            self.version += 1


def true_rate(app: Application, placement: tuple[int, ...], atomic: int, accum: int,
              epoch: int) -> float:
    """Progress per second (``M0``-sample iterations) of the job on ``placement`` at this batch
    layout in ``epoch``: ``gain / T_iter`` from the measurements (the authors' ``Job.step``)."""
    replicas = sum(placement)
    batch = replicas * atomic * (accum + 1)
    step, sync = app.throughput(placement, atomic)
    sqr, var = app.grad_stats(batch, epoch)
    scale = batch / app.init_batch_size
    gain = (var + sqr) / (var / scale + sqr)
    return gain / (step + (step - sync) * accum)


@dataclass(frozen=True)
class Segment:
    """A stretch of constant rate: from now until progress ``until`` (the next epoch boundary,
    or the job's total work)."""

    rate: float
    until: float
    epoch: int
    atomic: int
    accum: int
    placement: tuple[int, ...]

    def extra(self) -> str:
        k = sum(self.placement)
        return (f"rate={self.rate!r} epoch={self.epoch} bsz={k * self.atomic * (self.accum + 1)} "
                f"atomic={self.atomic} accum={self.accum} placement={'-'.join(map(str, self.placement))}")


class GoodputPerf(PerfModel):
    """Performance model of Pollux jobs (module docstring): work is progress, rate is goodput.

    ``apps``: application name -> :class:`Application` (a job's ``model``). ``batch``: job id ->
    fixed total batch size (jobs that do not adapt); a job not in it adapts its batch with its
    :class:`Agent` (NCF keeps 32768, :data:`FIXED_BATCH`). One instance per simulation run: the
    agents keep state. ``restart_delay``: seconds without progress after every start.
    ``retune_interval``: the agent also re-picks its batch at every multiple of this many seconds
    (60: the authors' simulator re-runs ``update_local_bsz`` at the end of every 60 s step, not
    only at epoch boundaries); None: at epoch boundaries only.
    """

    name = "goodput"

    def __init__(self, apps: Mapping[str, Application], batch: Mapping[str, float] | None = None,
                 restart_delay: float = 30.0, retune_interval: float | None = 60.0):
        self.apps, self.batch = dict(apps), dict(batch or {})
        self.restart_delay = float(restart_delay)
        self.retune_interval = None if retune_interval is None else float(retune_interval)
        self.agents: dict[str, Agent] = {}

    def agent(self, job) -> Agent:
        a = self.agents.get(job.id)
        if a is None:
            app = self.app(job)
            a = self.agents[job.id] = Agent(app, self.batch.get(job.id, FIXED_BATCH.get(app.name)))
        return a

    def app(self, job) -> Application:
        app = self.apps.get(job.model)
        if app is None:
            raise ValueError(f"job {job.id!r}: model {job.model!r} is none of the applications {sorted(self.apps)}")
        return app

    def rate(self, job, tier: str) -> float:
        """Nominal rate (the first epoch on one node at the initial batch): the engine and the
        replay use :meth:`segment` for these jobs; this serves generic callers only."""
        app = self.app(job)
        k = max(1, min(4, job.gpus))
        atomic, accum = batch_layout(app, k, max(app.init_batch_size, app.min_local_bsz * k))
        return true_rate(app, (k,), atomic, accum, 0)

    def segment(self, job, placement: tuple[int, ...], done: float) -> Segment:
        """The job's next stretch on ``placement`` (GPUs per node) from progress ``done``: its
        agent picks the batch, observes the true times and gradient statistics, and the rate is the
        true goodput (:func:`true_rate`)."""
        app, agent = self.app(job), self.agent(job)
        placement = tuple(x for x in placement if x)
        nodes, k = len(placement), sum(placement)
        epoch = min(app.epoch_of(done), app.max_epochs - 1)
        atomic, accum = agent.choose(nodes, k)
        batch = k * atomic * (accum + 1)
        step, sync = app.throughput(placement, atomic)
        agent.observe(nodes, k, atomic, step, sync, app.grad_stats(batch, epoch))
        return Segment(true_rate(app, placement, atomic, accum, epoch),
                       float(app.progress_after[epoch + 1]), epoch, atomic, accum, placement)


class SpeedupTable:
    """A job's speedup (§4.1) on (nodes, replicas) from its agent's fitted model, cached per agent
    version: ``goodput(n, r) / goodput(base_nodes, base_replicas)``; ``r / base_replicas`` before the
    job has run (no model yet), as the authors' ``Problem`` does."""

    def __init__(self, agent: Agent, max_replicas: int):
        self.agent, self.max_r = agent, max_replicas
        self._key = None
        self._good: np.ndarray | None = None    # (2, max_r + 1): goodput on ceil(r/4)... see table()

    def table(self, nodes_of: np.ndarray, base: tuple[int, int]) -> np.ndarray:
        """Speedups for r = 0..max_r replicas on ``nodes_of[r]`` nodes."""
        key = (self.agent.version, base, tuple(nodes_of.tolist()))
        if key == self._key:
            return self._good
        r = np.arange(self.max_r + 1)
        fn = self.agent.goodput_fn()
        app = self.agent.app
        if fn is None:
            out = r / base[1]
        else:
            rng = (app.min_local_bsz, app.max_local_bsz)
            g, _, _ = fn.optimize(np.maximum(nodes_of[1:], 1), r[1:], app.max_batch_size, rng)
            b, _, _ = fn.optimize(base[0], base[1], app.max_batch_size, rng)
            out = np.concatenate([[0.0], g / float(b)])
        self._key, self._good = key, out
        return out


def goodput_check(perf: GoodputPerf, cluster) -> Callable:
    """A replay check (``checks=`` of :func:`placement.sim.replay.replay_check`) for logs run on
    :class:`GoodputPerf`: each start and rate row's logged rate equals the goodput re-derived from
    the measurements (its logged placement, batch layout and the epoch of its logged work);
    the placement matches the row's GPUs; the batch layout is in the application's ranges; every
    start is charged the restart delay; rate rows fall on an epoch boundary or the re-tune grid,
    or change the link factor (``factor=``; its ``rate=`` is still the goodput before the factor)."""

    def check(trace, cluster_, log: EventLog) -> list[str]:
        out: list[str] = []
        jobs = {j.id: j for j in trace.jobs}
        last_factor: dict[str, str] = {}    # each job's last logged link factor (1 after a start)
        for i, r in enumerate(log):
            if r.event not in ("start", "rate") or r.job not in jobs:
                continue
            where = f"row {i + 1} ({r.event} {r.job} at {r.time!r})"
            kv = dict(p.split("=", 1) for p in r.extra.split() if "=" in p)
            try:
                rate, epoch = float(kv["rate"]), int(kv["epoch"])
                atomic, accum = int(kv["atomic"]), int(kv["accum"])
                placement = tuple(int(x) for x in kv["placement"].split("-"))
            except (KeyError, ValueError):
                out.append(f"goodput: {where} lacks rate/epoch/atomic/accum/placement ({r.extra!r})")
                continue
            app = perf.app(jobs[r.job])
            counts: dict[int, int] = {}
            for g in r.gpus:
                m = int(cluster.machine[g])
                counts[m] = counts.get(m, 0) + 1
            if tuple(counts[m] for m in sorted(counts)) != placement:
                out.append(f"goodput: {where} logs placement {placement} but its GPUs span {counts}")
            if min(app.epoch_of(r.work_done), app.max_epochs - 1) != epoch:
                out.append(f"goodput: {where} logs epoch {epoch} at work {r.work_done!r}")
            f = kv.get("factor", "1.0")
            relinked = r.event == "rate" and f != last_factor.get(r.job, "1.0")   # a link factor change
            last_factor[r.job] = f if r.event == "rate" else "1.0"
            on_grid = perf.retune_interval is not None and math.isclose(
                r.time / perf.retune_interval, round(r.time / perf.retune_interval), abs_tol=1e-9)
            at_epoch = np.isclose(r.work_done, app.progress_after[epoch], rtol=1e-9, atol=1e-6)
            if r.event == "rate" and not (on_grid or at_epoch or relinked):
                out.append(f"goodput: {where} changes rate off an epoch boundary and off the re-tune grid")
            if r.event == "start" and float(kv.get("delay", "nan")) != perf.restart_delay:
                out.append(f"goodput: {where} is not charged the restart delay {perf.restart_delay!r} s")
            batch = sum(placement) * atomic * (accum + 1)
            if not (app.min_local_bsz <= atomic <= app.max_local_bsz and batch <= app.max_batch_size):
                out.append(f"goodput: {where} batch layout {atomic}x{accum + 1} outside the application's ranges")
                continue
            want = true_rate(app, placement, atomic, accum, epoch)
            if not math.isclose(rate, want, rel_tol=1e-9):
                out.append(f"goodput: {where} logs rate {rate!r}; the measurements give {want!r}")
        return out

    return check
