r"""Time-indexed lower bounds on the makespan and the mean JCT of a GPU-job schedule.

The exact counterpart of the Dally simulator study: whatever a
scheduling policy does (delay scheduling, preemption, migration), its makespan
and its mean job completion time (JCT) are never below the optimum of the
linear programs built here. Benchmarks report each policy's gap to them.

Terms
-----
job j
    Released (submitted) at :math:`r_j`, needs :math:`g_j` GPUs at once and
    :math:`D_j` seconds of *ideal* work (its trace duration, the consolidated
    run time at progress rate 1).
tier
    The widest level a placement spans: 0 machine, 1 rack, 2 network (several
    racks). Job j progresses at rate :math:`\rho_{j\tau} \le 1` at tier
    :math:`\tau` (the performance model, e.g. Dally Table 1) and
    :math:`\rho_{j\tau} = 0` where it cannot be placed at that tier (more GPUs
    than a machine / rack holds; a 1-GPU job is always on one machine; a
    placement spans two racks only when the cluster has two).
    :math:`\bar\rho_j = \max_\tau \rho_{j\tau}` and :math:`p_j = D_j/\bar\rho_j`,
    the shortest possible run time (its best tier).
bucket
    Time is cut into K buckets :math:`[t_k, t_k+\Delta)`, :math:`t_k = t_0 + k\Delta`,
    :math:`t_0 = \min_j r_j`, followed by one *tail* bucket :math:`[t_K, \infty)`
    so that every schedule, however long, is represented.

Formulation (LP; variables are bucket fractions)
------------------------------------------------
:math:`x_{j\tau k} \ge 0` is the time job j runs at tier :math:`\tau` inside
bucket k, in units of :math:`\Delta`; :math:`a_{jk} = |[t_k,t_{k+1}) \cap [r_j,\infty)|/\Delta`.

(W) work      :math:`\sum_{\tau,k} \rho_{j\tau}\,\Delta\,x_{j\tau k} \ge D_j`
(P) one place :math:`\sum_\tau x_{j\tau k} \le \min(a_{jk}, z_k)`
(G) GPUs      :math:`\sum_{j,\tau} g_j x_{j\tau k} \le G\,z_k`
(M) machines  :math:`\sum_{j:\,g_j > C_M/2} x_{j,0,k} \le M\,z_k`
(R) racks     :math:`\sum_{j:\,g_j > C_R/2} x_{j,1,k} \le R\,z_k`

with :math:`G` GPUs, :math:`M` machines of at most :math:`C_M` GPUs and
:math:`R` racks of at most :math:`C_R` GPUs. For the makespan,
:math:`z_k \in [0,1]` is the part of bucket k before the makespan,
:math:`z_{k+1} \le z_k`, the tail bucket has a free length :math:`s \ge 0`
(its rows read :math:`\le s`, :math:`\le Gs`, ...), and

    minimize :math:`C_{\max} = t_0 + \Delta\sum_k z_k + s` subject to
    :math:`C_{\max} \ge r_j + p_j` for all j.

For the mean JCT, :math:`z_k = 1`, the tail is unlimited, and with
:math:`e_{jk} = \max(t_k, r_j)` (:math:`e_{jK} = \max(t_K, r_j)` for the tail)

    minimize :math:`\frac1n\sum_j (C_j - r_j)` subject to
    :math:`C_j \ge r_j + p_j` and
    :math:`C_j \ge \frac{1}{D_j}\sum_{\tau,k} e_{jk}\,\rho_{j\tau}\Delta\,x_{j\tau k} + \frac{p_j}{2}`.

Rows (M) and (R) only exist where they can tighten: a job with more than half
a machine's GPUs excludes every other such job from its machine, and likewise
for racks; jobs below the half never appear in them. Tiers a job never needs
are dropped: a tier dominated by a better one (higher rate, and the job is in
no count row at the better tier) gains nothing.

Validity (theorem)
------------------
*For any schedule S that a policy can produce — any placements, any
preemptions, migrations and lost work — the LP optimum is at most S's
makespan (respectively mean JCT).*

Proof. Map S to an LP point. Job j's running periods each have one placement
and hence one tier; its useful work is done at rate at most
:math:`\rho_{j\tau}` (slower if the performance model adds contention). Keep
only running periods whose work survives to completion (work lost to a
preemption is dropped; dropping running time only relaxes (P), (G), (M),
(R)), and truncate the last kept period so that exactly :math:`D_j` work is
counted at rate :math:`\rho_{j\tau}` (truncating only shortens running time).
Let :math:`x_{j\tau k}` be the kept running time at tier :math:`\tau` in bucket
k divided by :math:`\Delta`. Then (W) holds with equality. A job runs in one
place at a time and not before its release, so (P) holds with the release
part; for the makespan, nothing runs after :math:`C_{\max}(S)`, and with
:math:`z_k` = the part of bucket k before :math:`C_{\max}(S)`,
:math:`s = \max(0, C_{\max}(S) - t_K)`, the job's time in bucket k is at most
:math:`\Delta z_k` (tail: at most s). (G): at any instant at most G GPUs are
busy; integrate over the part of the bucket before :math:`C_{\max}(S)`.
(M): a machine-tier job with :math:`g_j > C_M/2` occupies one machine, and two
of them cannot share one (:math:`g_j + g_i > C_M`), so at any instant at most
M run; integrate. (R) likewise with racks. :math:`z` is non-increasing and
:math:`C_{\max}(S) = t_0 + \Delta\sum_k z_k + s` by construction; every job
finishes after its release plus its shortest run time, so
:math:`C_{\max}(S) \ge r_j + p_j`. For the JCT: the kept work of j forms a
measure :math:`\mu_j` on the time axis of total mass :math:`D_j` and density
at most :math:`\bar\rho_j`, supported in :math:`[r_j, C_j(S)]`. Its mean is at
least :math:`\sum_k e_{jk}\mu_j(\text{bucket }k)/D_j` (mass in bucket k lies
at or after :math:`e_{jk}`), and at most :math:`C_j(S) - p_j/2` (the mean is
largest when the mass is packed at full density just before
:math:`C_j(S)`). With :math:`C_j = C_j(S)` every row holds, and the objective
equals S's value. Since S maps to a feasible point of equal objective, the LP
minimum is no larger. ∎

A dropped dominated tier does not break this: a period at a dominated tier is
mapped to the dominating tier with the running time scaled down by the rate
ratio, which only relaxes (P), (G), (M), (R) and leaves (W) and the mean
bound valid (the mass moves to a subset of the same interval).

The same rows with integer :math:`x`, :math:`z`, :math:`s` (whole buckets) give
the *integer time-indexed model*; with integer release times, :math:`\Delta =
1` and integer run times :math:`D_j/\rho_{j\tau}`, every non-preemptive schedule
with integer start times is one of its points, and its LP relaxation is the LP
above with the buckets a release cuts closed (an integer :math:`x` there can only
be 0, so its bound ``avail < 1`` is floored to 0: the same integer points, and no
fractional bound on an integer column, which HiGHS 1.15.1 mishandles), so
LP ≤ IP ≤ any such schedule (``tests/dally/test_schedule_bound.py`` checks
the chain against brute force).

Numerics. HiGHS solves the LP to a primal/dual feasibility tolerance of
1e-7; the reported ``bound`` is the optimal value reduced by
``1e-6 * max(1, |value|)`` so that tolerance cannot make it exceed a true
schedule value.

Library choice: the LP is built as a sparse column-wise matrix with numpy and
passed to HiGHS through ``highspy`` (``Highs.passModel``). A 500-job trace
over 64 buckets has about 40,000 columns; we measured Pyomo's model
transfer at 5-15x highspy's at that size, and these bounds are solved inside
benchmarks, next to 10-second simulations. The rows are few and regular
(listed above), so the matrix form stays readable.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placement.errors import InstanceError
from placement.result import SolveResult, Status

from .backends import (
    INTEGER_BOUND_TOL,
    MipSolver,
    check_mip_solver,
    require,
    rounded_integer_bounds,
    solve_highs_model,
)

__all__ = ["BoundInstance", "TIERS", "solve", "instance_from_trace", "bucket_grid", "simple_terms", "highs_model"]

TIERS = ("machine", "rack", "network")
_REL_SAFETY = 1e-6


@dataclass(frozen=True)
class BoundInstance:
    """Plain data the bound needs (see the module docstring for the symbols).

    ``rates[j, tau]`` is job j's progress rate at tier tau (0 where it cannot
    be placed at that tier). ``job_ids`` name the jobs in results.
    """

    release: np.ndarray
    work: np.ndarray
    gpus: np.ndarray
    rates: np.ndarray
    total_gpus: int
    machines: int
    gpus_per_machine: int
    racks: int
    gpus_per_rack: int
    job_ids: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        n = len(self.release)
        for name in ("work", "gpus"):
            if len(getattr(self, name)) != n:
                raise InstanceError(name, f"must have one entry per job ({n})")
        if np.shape(self.rates) != (n, len(TIERS)):
            raise InstanceError("rates", f"must be an array of shape ({n}, {len(TIERS)})")
        if n and (np.any(~np.isfinite(self.release)) or np.any(self.release < 0)):
            raise InstanceError("release", "must be finite, non-negative seconds")
        if n and (np.any(~np.isfinite(self.work)) or np.any(self.work <= 0)):
            raise InstanceError("work", "must be finite, positive seconds")
        if n and np.any(self.gpus < 1):
            raise InstanceError("gpus", "must be positive integers")
        if n and (np.any(self.rates < 0) or np.any(self.rates > 1) or np.any(self.rates.max(axis=1) <= 0)):
            raise InstanceError("rates", "must lie in [0, 1] with a positive rate at some tier for every job")
        if n and np.any(self.gpus > self.total_gpus):
            raise InstanceError("gpus", f"every job must fit the cluster's {self.total_gpus} GPUs")
        if min(self.total_gpus, self.machines, self.gpus_per_machine, self.racks, self.gpus_per_rack) < 1:
            raise InstanceError("cluster", "must have at least one GPU, machine and rack")
        if not self.job_ids:
            object.__setattr__(self, "job_ids", tuple(str(i) for i in range(n)))

    @property
    def n(self) -> int:
        return len(self.release)

    @property
    def shortest(self) -> np.ndarray:
        """:math:`p_j = D_j / \\max_\\tau \\rho_{j\\tau}`, the best-tier run time."""
        return self.work / self.rates.max(axis=1)


def placeable_tiers(gpus: int, gpus_per_machine: int, machines_per_rack: int, gpus_per_rack: int,
                    racks: int) -> tuple[bool, bool, bool]:
    """Which tiers a job of ``gpus`` GPUs can be placed at on a uniform cluster.

    A placement's tier is the widest level it spans, so spanning two machines
    needs 2 GPUs and a rack of 2 machines, spanning two racks needs 2 GPUs and 2 racks.
    """
    machine = gpus <= gpus_per_machine
    rack = 2 <= gpus <= gpus_per_rack and machines_per_rack >= 2
    network = gpus >= 2 and racks >= 2 and gpus <= gpus_per_rack * racks
    return machine, rack, network


def instance_from_trace(trace: Any, cluster: Any, perf: Any = None) -> BoundInstance:
    """The bound's data for a simulator trace on a cluster (``placement.sim``).

    Rates come from ``perf.rate(job, tier)`` (default: :class:`placement.sim.perf.DallyPerf`,
    the simulator's default). The rack tier is the simulator's ``"rack"``; the
    network tier takes the best rate of a multi-rack placement the cluster
    allows (``"cluster"`` when some dynamic cluster holds two racks, else
    ``"network"``). Jobs that can never fit (more GPUs than exist) are left
    out: the simulator logs them ``unschedulable`` and no metric counts them.
    """
    from placement.sim.perf import DallyPerf

    perf = perf if perf is not None else DallyPerf()
    machine_of = np.asarray(cluster.machine)
    rack_of = np.asarray(cluster.rack)
    G = len(machine_of)
    per_machine = np.bincount(machine_of)
    per_rack = np.bincount(rack_of)
    racks = int(np.count_nonzero(per_rack))
    machines = int(np.count_nonzero(per_machine))
    machines_per_rack = int(max(len(set(machine_of[rack_of == r])) for r in np.unique(rack_of)))
    C_M, C_R = int(per_machine.max()), int(per_rack.max())
    dcl = np.asarray(getattr(cluster, "dcluster", np.zeros(G, dtype=int)))
    racks_per_dcl = max(len(set(rack_of[dcl == d])) for d in np.unique(dcl))
    wide = "cluster" if racks_per_dcl >= 2 else "network"
    rows = []
    for job in trace.jobs:
        if job.gpus > G:
            continue
        ok = placeable_tiers(job.gpus, C_M, machines_per_rack, C_R, racks)
        rates = [float(perf.rate(job, t)) if fit else 0.0 for t, fit in zip(("machine", "rack", wide), ok, strict=True)]
        rows.append((job.id, job.submit, job.duration, job.gpus, rates))
    if not rows:
        raise InstanceError("trace", "must hold at least one job that fits the cluster")
    return BoundInstance(
        release=np.array([r[1] for r in rows], dtype=float), work=np.array([r[2] for r in rows], dtype=float),
        gpus=np.array([r[3] for r in rows], dtype=int), rates=np.array([r[4] for r in rows], dtype=float),
        total_gpus=G, machines=machines, gpus_per_machine=C_M, racks=racks, gpus_per_rack=C_R,
        job_ids=tuple(r[0] for r in rows))


def simple_terms(inst: BoundInstance) -> dict[str, Any]:
    r"""The two elementary lower bounds beside the LP, each valid for any schedule on its own.

    Makespan (from the first release :math:`t_0`):

    - single-job term :math:`\max_j (r_j + p_j) - t_0`: one job at its best tier from its
      release (``makespan_single_job`` names it);
    - capacity term :math:`\max_t \big(t - t_0 + \sum_{r_j \ge t} g_j p_j / G\big)` over
      release times t: the GPU-seconds released from t on cannot finish sooner on G GPUs.

    Mean JCT:

    - single-job term :math:`\frac1n\sum_j p_j`;
    - capacity term: shortest-remaining-processing-time on one machine that processes
      :math:`a_j = g_j p_j / G` with releases :math:`r_j`, which is optimal for
      :math:`1|r_j,pmtn|\sum C_j`; any G-GPU schedule, aggregated, is such a preemptive
      schedule in which every job's area is done by its completion, so its mean
      :math:`C_j - r_j` is at least SRPT's.

    ``makespan_binding`` / ``mean_jct_binding`` say which term is larger; an LP value
    equal to the single-job term means one job decides the bound.
    """
    import heapq

    r, p, g = inst.release, inst.shortest, inst.gpus
    t0 = float(r.min())
    single = r + p - t0
    j = int(np.argmax(single))
    area = g * p / inst.total_gpus
    order = np.argsort(-r, kind="stable")
    suffix = np.cumsum(area[order])                 # area released at or after r[order[i]]
    cap = float(np.max(r[order] - t0 + suffix))
    # SRPT on one machine of unit speed, processing times `area`, releases r
    idx = np.argsort(r, kind="stable")
    heap: list[tuple[float, int]] = []
    now, k, total, n = t0, 0, 0.0, len(r)
    while k < n or heap:
        if not heap:
            now = max(now, float(r[idx[k]]))
        while k < n and r[idx[k]] <= now:
            heapq.heappush(heap, (float(area[idx[k]]), int(idx[k])))
            k += 1
        rem, i = heapq.heappop(heap)
        nxt = float(r[idx[k]]) if k < n else np.inf
        if now + rem <= nxt:
            now += rem
            total += now - float(r[i])
        else:
            heapq.heappush(heap, (rem - (nxt - now), i))
            now = nxt
    out = {"makespan_single_job_s": float(single[j]), "makespan_single_job": inst.job_ids[j],
           "makespan_capacity_s": cap, "mean_jct_single_job_s": float(p.mean()),
           "mean_jct_capacity_s": total / n}
    out["makespan_binding"] = "single job" if out["makespan_single_job_s"] >= cap else "capacity"
    out["mean_jct_binding"] = "single job" if out["mean_jct_single_job_s"] >= out["mean_jct_capacity_s"] else "capacity"
    return out


def bucket_grid(inst: BoundInstance, buckets: int = 48, horizon: float | None = None) -> tuple[float, float, int]:
    """(t0, width, K): ``buckets`` buckets from the first release to ``horizon``.

    The default horizon is 1.5 x the larger of the latest release plus the
    area bound (total GPU-seconds at best tiers / G) and the latest
    :math:`r_j + p_j`: enough for the tail bucket to stay empty on our traces
    (:func:`solve` doubles it when it is not).
    """
    t0 = float(inst.release.min())
    if horizon is None:
        p = inst.shortest
        area = float((inst.gpus * p).sum()) / inst.total_gpus
        horizon = t0 + 1.5 * max(float(inst.release.max()) - t0 + area, float((inst.release + p).max()) - t0)
    width = max((horizon - t0) / buckets, 1e-9)
    return t0, width, buckets


def _columns(inst: BoundInstance) -> list[tuple[int, int]]:
    """(job, tier) pairs that get variables: placeable and not dominated (module docstring)."""
    half_m, half_r = inst.gpus_per_machine / 2, inst.gpus_per_rack / 2
    in_count = (inst.gpus > half_m, inst.gpus > half_r, np.zeros(inst.n, dtype=bool))
    out = []
    for j in range(inst.n):
        rates = inst.rates[j]
        free = [tau for tau in range(len(TIERS)) if rates[tau] > 0 and not in_count[tau][j]]
        # the best tier outside every count row dominates all tiers no faster than it
        top = max(free, key=lambda tau: (rates[tau], -tau)) if free else None
        for tau in range(len(TIERS)):
            if rates[tau] <= 0:
                continue
            if tau == top or (in_count[tau][j] and (top is None or rates[tau] > rates[top])):
                out.append((j, tau))
    return out


def _build(inst: BoundInstance, objective: str, t0: float, width: float, K: int, integer: bool):
    """Columns, bounds, rows (COO) and costs of the LP/IP (module docstring)."""
    n = inst.n
    pairs = _columns(inst)
    t = t0 + width * np.arange(K + 1)  # bucket starts; t[K] is the tail start
    cols_lo, cols_hi, cost, integ = [], [], [], []
    rows_i, rows_j, rows_v = [], [], []
    row_lo, row_hi = [], []

    def new_col(lo, hi, c, is_int):
        cols_lo.append(lo)
        cols_hi.append(hi)
        cost.append(c)
        integ.append(is_int)
        return len(cols_lo) - 1

    def new_row(entries, lo, hi):
        r = len(row_lo)
        for c, v in entries:
            rows_i.append(r)
            rows_j.append(c)
            rows_v.append(v)
        row_lo.append(lo)
        row_hi.append(hi)

    inf = np.inf
    makespan = objective == "makespan"
    # x[j, tau, k] for k in 0..K (K = tail); avail in bucket units
    avail = np.clip((t[1:, None] - np.maximum(t[:-1, None], inst.release[None, :])) / width, 0.0, 1.0)  # (K, n)
    x: dict[tuple[int, int], list[int]] = {}
    for j, tau in pairs:
        ks = []
        for k in range(K + 1):
            hi = inf if k == K else float(avail[k, j])
            if integer and k < K:
                # whole buckets: a bucket the release cuts holds no integer x (floor of the bound)
                hi = math.floor(hi + INTEGER_BOUND_TOL)
            ks.append(new_col(0.0, hi, 0.0, integer) if hi > 0 else -1)
        x[(j, tau)] = ks
    by_job: dict[int, list[int]] = {}
    for j, tau in pairs:
        by_job.setdefault(j, []).append(tau)
    p = inst.shortest
    if makespan:
        z = [new_col(0.0, 1.0, width, integer) for _ in range(K)]
        s = new_col(0.0, inf, 1.0, integer)
        zk = z + [s]
        cap_scale = [1.0] * K + [1.0 / width]  # tail rows: x (in Delta units) <= s / Delta
    else:
        C = [new_col(float(inst.release[j] + p[j]), inf, 1.0 / n, False) for j in range(n)]
    # (W) work
    for j in range(n):
        ent = []
        for tau in by_job.get(j, []):
            for c in x[(j, tau)]:
                if c >= 0:
                    ent.append((c, inst.rates[j, tau] * width))
        new_row(ent, float(inst.work[j]), inf)
    # (P) one place at a time, with release and (makespan) the z fraction
    for j in range(n):
        for k in range(K + 1):
            ent = [(x[(j, tau)][k], 1.0) for tau in by_job[j] if x[(j, tau)][k] >= 0]
            if not ent:
                continue
            if makespan:
                new_row(ent + [(zk[k], -cap_scale[k])], -inf, 0.0)
            elif len(ent) > 1 and k < K:
                new_row(ent, -inf, float(avail[k, j]))
    # (G), (M), (R) per bucket
    big_m = [j for j in range(n) if inst.gpus[j] > inst.gpus_per_machine / 2]
    big_r = [j for j in range(n) if inst.gpus[j] > inst.gpus_per_rack / 2]
    for k in range(K + 1):
        if k == K and not makespan:
            continue  # the JCT tail is unlimited
        for members, scale, tiers in ((range(n), inst.total_gpus, None), (big_m, inst.machines, 0),
                                      (big_r, inst.racks, 1)):
            ent = []
            for j in members:
                for tau in by_job[j]:
                    if (tiers is None or tau == tiers) and x[(j, tau)][k] >= 0:
                        ent.append((x[(j, tau)][k], float(inst.gpus[j]) if tiers is None else 1.0))
            if not ent or (tiers is not None and len(ent) <= scale):
                continue  # a count row with no more members than units cannot bind
            if makespan:
                new_row(ent + [(zk[k], -scale * cap_scale[k])], -inf, 0.0)
            else:
                new_row(ent, -inf, float(scale))
    if makespan:
        for k in range(K - 1):
            new_row([(z[k + 1], 1.0), (z[k], -1.0)], -inf, 0.0)
        ent = [(c, width) for c in z] + [(s, 1.0)]
        new_row(ent, float((inst.release + p).max() - t0), inf)
        offset = t0
    else:
        for j in range(n):
            ent = [(C[j], 1.0)]
            for tau in by_job[j]:
                for k, c in enumerate(x[(j, tau)]):
                    if c >= 0:
                        e = max(t[k], inst.release[j])
                        ent.append((c, -e * inst.rates[j, tau] * width / inst.work[j]))
            new_row(ent, float(p[j] / 2), inf)
        offset = -float(inst.release.sum()) / n
    return dict(lo=np.array(cols_lo), hi=np.array(cols_hi), cost=np.array(cost), integ=np.array(integ),
                ri=np.array(rows_i, dtype=np.int64), rj=np.array(rows_j, dtype=np.int64),
                rv=np.array(rows_v, dtype=float), rlo=np.array(row_lo), rhi=np.array(row_hi),
                offset=offset, x=x, K=K, t=t, tail_cols=[x[key][K] for key in x])


def _highs_model(m: dict, time_limit: float, mip_gap: float):
    """The model ``m`` of :func:`_build` held by a ``highspy.Highs`` (not yet run)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    ncol, nrow = len(m["lo"]), len(m["rlo"])
    lp.num_col_, lp.num_row_ = ncol, nrow
    lp.col_cost_ = m["cost"]
    lo, hi = rounded_integer_bounds(m["lo"], m["hi"], m["integ"])  # no fractional bound on an integer column
    lp.col_lower_ = np.where(np.isinf(lo), -inf, lo)
    lp.col_upper_ = np.where(np.isinf(hi), inf, hi)
    lp.row_lower_ = np.where(np.isinf(m["rlo"]), -inf, m["rlo"])
    lp.row_upper_ = np.where(np.isinf(m["rhi"]), inf, m["rhi"])
    lp.offset_ = m["offset"]
    order = np.lexsort((m["ri"], m["rj"]))  # column-major for the CSC form
    cols = m["rj"][order]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.searchsorted(cols, np.arange(ncol + 1)).astype(np.int32)
    lp.a_matrix_.index_ = m["ri"][order].astype(np.int32)
    lp.a_matrix_.value_ = m["rv"][order]
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = ncol, nrow
    if m["integ"].any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                           for b in m["integ"]]
    lp.col_names_ = [f"c{i}" for i in range(ncol)]
    lp.row_names_ = [f"r{i}" for i in range(nrow)]
    h.passModel(lp)
    return h


def highs_model(inst: BoundInstance, objective: str = "makespan", *, buckets: int = 48,
                horizon: float | None = None, integer: bool = False):
    """The time-indexed model of :func:`solve` on the first grid (before any horizon doubling), held
    by a ``highspy.Highs``: what ``placement export`` writes (``h.writeModel(path)``)."""
    if objective not in ("makespan", "mean_jct"):
        raise InstanceError("objective", f"must be 'makespan' or 'mean_jct', got {objective!r}")
    t0, w, K = bucket_grid(inst, buckets, horizon)
    m = _build(inst, "makespan" if objective == "makespan" else "jct", t0, w, K, integer)
    return _highs_model(m, 60.0, 0.0)


def solve(inst: BoundInstance, objective: str = "makespan", *, buckets: int = 48, horizon: float | None = None,
          width: float | None = None, integer: bool = False, time_limit: float = 60.0, mip_gap: float = 0.0,
          max_doublings: int = 3, mip_solver: MipSolver = "highs") -> SolveResult:
    """Lower bound on ``objective`` ("makespan" or "mean_jct") for any schedule of ``inst``.

    Parameters
    ----------
    buckets, horizon, width
        The grid (:func:`bucket_grid`); ``width`` overrides ``buckets`` (then
        ``buckets = ceil((horizon - t0) / width)``).
    integer
        Solve the integer time-indexed model instead of its LP relaxation
        (tiny instances only: the tests' exact reference).
    max_doublings
        When the optimum puts work in the tail bucket, the horizon is doubled
        and the model re-solved, at most this many times (the bound is valid
        either way; the tail only weakens it).
    mip_solver : {"highs", "scip", "cbc"}
        HiGHS in memory, or SCIP / CBC on the model written as MPS
        (:func:`placement.models.backends.solve_highs_model`).

    Returns
    -------
    SolveResult
        ``optimal`` with ``bound`` = the proven lower bound (module docstring,
        Numerics) and ``objective`` = the model's optimal value; ``time_limit``
        with the MIP's dual bound as ``bound``; ``error`` when HiGHS fails.
        ``stats``: buckets, width, horizon, columns, rows, tail work share,
        best-tier lower bounds (``trivial``: max / mean of :math:`r_j + p_j - r_j`).
    """
    if objective not in ("makespan", "mean_jct"):
        raise InstanceError("objective", f"must be 'makespan' or 'mean_jct', got {objective!r}")
    require(check_mip_solver(mip_solver))
    if buckets < 1:
        raise InstanceError("buckets", "must be a positive integer")
    t_start = time.perf_counter()
    t0, w, K = bucket_grid(inst, buckets, horizon)
    if width is not None:
        if not width > 0:
            raise InstanceError("width", "must be a positive number of seconds")
        K = max(1, int(np.ceil(w * K / width)))
        w = float(width)
    obj_key = "makespan" if objective == "makespan" else "jct"
    for attempt in range(max_doublings + 1):
        m = _build(inst, obj_key, t0, w, K, integer)
        left = time_limit - (time.perf_counter() - t_start)
        out, xs = solve_highs_model(_highs_model(m, left, mip_gap), mip_solver, time_limit=left, mip_gap=mip_gap)
        if out.termination != "optimal":
            xs = None
        tail = 0.0 if xs is None else float(sum(xs[c] for c in m["tail_cols"] if c >= 0))
        if obj_key == "makespan" and xs is not None:
            # the tail and the last buckets cost the same: only a makespan past the horizon calls for more room
            tail = max(0.0, out.objective - (t0 + w * K)) / w
        if xs is None or tail <= 1e-9 or attempt == max_doublings or horizon is not None or width is not None:
            break
        w *= 2.0  # the tail was used: double the horizon with the same number of buckets
    p = inst.shortest
    stats = {"objective": objective, "buckets": K, "width_s": w, "horizon_s": t0 + w * K, "columns": len(m["lo"]),
             "rows": len(m["rlo"]), "tail_bucket_units": tail, "integer": integer, "mip_solver": mip_solver,
             "trivial": float((inst.release + p).max() - inst.release.min()) if objective == "makespan"
             else float(p.mean())}
    terms = simple_terms(inst)
    stats.update({k: v for k, v in terms.items() if k.startswith(obj_key if obj_key == "makespan" else "mean_jct")})
    wall = time.perf_counter() - t_start
    name = f"schedule-bound-{'ip' if integer else 'lp'}"
    value = out.objective if out.objective is not None else math.nan
    if objective == "makespan":
        value_rel = value - float(inst.release.min())  # makespan counts from the first arrival
    else:
        value_rel = value
    if out.termination == "optimal":
        bound = value_rel - _REL_SAFETY * max(1.0, abs(value_rel))
        return SolveResult(Status.OPTIMAL, name, solution=None, objective=value_rel, bound=bound,
                           wall_time_s=wall, stats=stats)
    if out.termination == "time_limit" and integer:
        dual = None if out.bound is None else \
            out.bound - (float(inst.release.min()) if objective == "makespan" else 0.0)
        return SolveResult(Status.TIME_LIMIT, name, bound=dual, wall_time_s=wall, stats=stats)
    if out.termination == "time_limit":
        return SolveResult(Status.TIME_LIMIT, name, wall_time_s=wall, stats=stats, message="LP not solved in time")
    return SolveResult(Status.ERROR, name, wall_time_s=wall, stats=stats,
                       message=f"{mip_solver}: {out.message or out.termination}")
