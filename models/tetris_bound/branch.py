"""A tighter certified lower bound on MAST Tetris (Figure 4, expressions (1)-(9)): branching on hot tables' homes.

Why (measured, Tetris page "A lower bound at scale"): the LP relaxation of
:mod:`placement.models.tetris_bound.lp` loses most of the optimum through *hot tables*. At
1,000 x 2,000 x 10 (seed 38001) the hottest table (608 readers) sits in the LP at
fractions 0.04-0.19 of nine regions, so the AND rows ``a[j,r] <= x[t,r]`` let its
readers' GPU demand spread over the regions in proportion to supply, the (7)
squared deviations near zero; in every integer placement a table has one home,
so every ML job reading it is in that region or NULL (expression (1) pays its
bytes). The LP places 73% of the ML demand, hill climbing 45%.

What: a best-first branch and bound on the LP. A node fixes the homes of some
tables (``x[t, rho] = 1``); branching on table ``t`` makes one child per region
it may take. The children partition the node's integer placements (each table
has exactly one home, Figure 4's one-home rows), so the **minimum over the open
leaves** of a valid bound of each leaf is a valid bound of the instance. Each
leaf's bound is the numpy dual certificate of its LP
(:func:`placement.models.tetris_bound.relaxation.dual_bound` with the leaf's column bounds: never a
solver's number), and never less than its parent's (a leaf's placements are a
subset of its parent's). A leaf whose LP HiGHS calls infeasible keeps its
parent's bound unless the ray HiGHS returns proves it empty in numpy
(:func:`placement.models.tetris_bound.relaxation.farkas_value` > 0): then it is closed. Tangent rows added at any node
are valid at every real demand (:mod:`placement.models.tetris_bound.relaxation`), so they stay for all
nodes; HiGHS's dual simplex restarts from the previous node's basis.

Branching rule: the table with the largest ``weight x (1 - max_r x[t,r])``, the
weight being the (7) importance of its ML readers (``sum_j w_k GPU-hours_j /
TD[g_j,k_j]``) plus a 1e-9 tie-break by index, at the node's LP solution.
The node to expand is the open leaf with the lowest bound (it decides the minimum).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

import numpy as np

from placement.errors import InstanceError
from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance

from . import relaxation

__all__ = ["solve"]


def _reader_weight(inst: TetrisInstance) -> np.ndarray:
    """Per table, the (7) weight of the ML jobs reading it: sum of w_k * GPU-hours / TD[g, k]."""
    A = inst.arrays
    ml = A.job_ml.astype(bool)
    TD = A.total_demand.astype(float)
    w = np.zeros(len(A.job_ptr) - 1)
    sel = np.flatnonzero(ml)
    w[sel] = A.prio_w[A.job_prio[sel]] * A.job_gh[sel] / np.where(TD > 0, TD, 1.0)[A.job_gpu[sel], A.job_prio[sel]]
    return np.bincount(A.job_tab, weights=w[A.entry_job], minlength=inst.n_tables)


class _Search:
    """HiGHS model of the relaxation plus the column bounds of the node it currently holds.

    A node is a dict ``column -> value`` of fixed columns (x of branched tables, overload levels y).
    """

    def __init__(self, inst: TetrisInstance, m: relaxation.BoundModel, h, deadline: float, tol: float, max_rounds: int):
        self.inst, self.m, self.h = inst, m, h
        self.deadline, self.tol, self.max_rounds = deadline, tol, max_rounds
        self.lo0, self.hi0 = m.col_lo.copy(), m.col_hi.copy()
        self.applied: dict[int, float] = {}   # column -> value fixed in HiGHS now
        self.lazy = 0
        self.statuses: dict[str, int] = {}

    def table_cols(self, t: int) -> np.ndarray:
        return self.m.ox + t * self.m.R + np.arange(self.m.R)

    def apply(self, fixes: dict[int, float]) -> None:
        """Put the bounds of the node ``fixes`` into HiGHS (only the columns that change)."""
        change = sorted({c for c in self.applied if self.applied[c] != fixes.get(c)}
                        | {c for c in fixes if self.applied.get(c) != fixes[c]})
        if not change:
            return
        idx = np.asarray(change, dtype=np.int64)
        lo, hi = self.lo0[idx].copy(), self.hi0[idx].copy()
        for i, c in enumerate(change):
            if c in fixes:
                lo[i] = hi[i] = fixes[c]
        self.h.changeColsBounds(len(idx), idx.astype(np.int32), lo, hi)
        self.applied = dict(fixes)

    def node_bounds(self, fixes: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.lo0.copy(), self.hi0.copy()
        if fixes:
            idx = np.fromiter(fixes.keys(), dtype=np.int64, count=len(fixes))
            val = np.fromiter(fixes.values(), dtype=float, count=len(fixes))
            lo[idx] = hi[idx] = val
        return lo, hi

    def solve_node(self, fixes: dict[int, float], rounds: int | None = None):
        """(certified bound or None, LP solution or None, HiGHS status string) of the node's LP with tangent rounds."""
        import highspy

        self.apply(fixes)
        lo, hi = self.node_bounds(fixes)
        best, x, status = None, None, "not run"
        for _ in range(self.max_rounds if rounds is None else rounds):
            if self.deadline <= time.perf_counter():
                break
            relaxation.run_until(self.h, self.deadline)
            # after the root's first solve (interior point crossed over, on a large model), dual simplex
            # from the basis: the tangent rounds and the nodes change a few rows and bounds each
            self.h.setOptionValue("solver", "simplex")
            st = self.h.getModelStatus()
            status = self.h.modelStatusToString(st)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            sol = self.h.getSolution()
            if st in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit,
                      highspy.HighsModelStatus.kIterationLimit) and sol.dual_valid:
                value, _ = relaxation.dual_bound(self.m, np.asarray(sol.row_dual), col_lo=lo, col_hi=hi,
                                                 polish=False, exact=False)   # node LPs end optimal; many nodes
                best = value if best is None else max(best, value)
            if st == highspy.HighsModelStatus.kInfeasible:
                _, has_ray, ray = self.h.getDualRay()
                if has_ray and relaxation.farkas_value(self.m, np.asarray(ray), col_lo=lo, col_hi=hi) > 0:
                    return np.inf, None, "Infeasible (certified)"
                return best, None, status
            if st != highspy.HighsModelStatus.kOptimal:
                return best, None, status
            x = np.asarray(sol.col_value)
            n_new = relaxation.add_tangents(self.m, self.h, x, self.tol)
            if not n_new:
                break
            self.lazy += n_new
        return best, x, status

    def children(self, fixes: dict[int, float], x: np.ndarray, weight: np.ndarray) -> tuple[str, list[dict]]:
        """The branching of a node at its LP solution ``x``: a table's home (one child per region it
        may take) while some table is fractional, else an overload level (``y = 1`` / ``y = 0``), else
        an analytics job's region ``b`` (one child per region)."""
        m, T, R = self.m, self.inst.n_tables, self.m.R
        X = m.x_matrix(x)
        score = weight * (1.0 - X.max(axis=1))
        fixed_t = {(c - m.ox) // R for c in fixes if m.ox <= c < m.ox + T * R}
        if fixed_t:
            score[list(fixed_t)] = -1.0
        t = int(np.argmax(score))
        if score[t] > 1e-9:
            out = []
            for r in np.flatnonzero(self.hi0[self.table_cols(t)] > 0):
                child = dict(fixes)
                for rr, c in enumerate(self.table_cols(t)):
                    child[int(c)] = 1.0 if rr == r else 0.0
                out.append(child)
            return f"t{t}", out
        best_c, best_f = -1, 1e-6
        for (_r, _g), (over_hi, (oy, _ow)) in m.levels.items():
            L = min(relaxation.SATURATION_LEVEL, over_hi)
            for c in range(oy, oy + L + 1):
                f = min(x[c], 1.0 - x[c])
                if c not in fixes and f > best_f:
                    best_c, best_f = c, f
        if best_c >= 0:
            return f"y{best_c}", [{**fixes, best_c: 1.0}, {**fixes, best_c: 0.0}]
        nA = len(m.multi_an)
        if not nA:
            return "", []
        Bv = x[m.ob:m.ob + nA * R].reshape(nA, R)
        sc = self.inst.arrays.job_size[m.multi_an] * (1.0 - Bv.max(axis=1))
        i = int(np.argmax(sc))
        if sc[i] <= 1e-6:
            return "", []
        cols = m.ob + i * R + np.arange(R)
        return f"b{int(m.multi_an[i])}", [{**fixes, **{int(c): float(rr == r) for rr, c in enumerate(cols)}}
                                          for r in np.flatnonzero(self.hi0[cols] > 0)]


def _homes(m: relaxation.BoundModel, fixes: dict[int, float]) -> dict[int, int]:
    """The homes a node fixes: table -> region, from its ``x`` columns fixed at 1."""
    return {int((c - m.ox) // m.R): int((c - m.ox) % m.R) for c, v in fixes.items()
            if v == 1.0 and m.ox <= c < m.ox + m.T * m.R}


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, max_nodes: int | None = None,
          tangents: int = relaxation.GRID_TANGENTS, max_rounds: int = 30, tol: float = 1e-6,
          dense_row: int = relaxation.DENSE_ROW, upper: float | None = None, node_rounds: int | None = None,
          seed: int = 0, on_node: Callable[[np.ndarray, dict[int, int], float], float | None] | None = None,
          ) -> SolveResult:
    """A certified lower bound on the optimum of (1)-(9): best-first branching on tables' homes (module docstring).

    Parameters
    ----------
    time_limit : float
        Seconds for the build, the root LP and the nodes; the bound is the minimum over the
        open leaves when it runs out.
    max_nodes : int, optional
        Stop after this many node LPs (the root included); ``None``: only the time limit.
    upper : float, optional
        A known objective value (a heuristic's): the search stops once the bound is within
        1e-6 of it (relative) -- the bound does not depend on it otherwise.
    tangents, max_rounds, tol, dense_row
        As :func:`placement.models.tetris_bound.solve` (``max_rounds`` at the root).
    node_rounds : int, optional
        Tangent rounds per node after the root (default ``max_rounds``); every round's
        certificate is valid, fewer rounds make more nodes in the same time.
    seed : int
        Unused (deterministic); every solver's keyword.
    on_node : callable, optional
        Called at every node the search expands (the root first), best-first, as
        ``on_node(X, homes, deadline)``: ``X`` the node's LP values of ``x`` (tables x regions),
        ``homes`` the tables it fixes (table -> region), ``deadline`` the search's
        ``time.perf_counter()`` deadline. It may return the objective of a feasible placement
        it found (a primal heuristic: :mod:`placement.solvers.branch_round`); the smallest becomes
        ``upper``. Its time counts in ``time_limit``.

    Returns
    -------
    SolveResult
        ``bound``: the minimum of the certified bounds of the open leaves (floored at 0);
        ``stats``: nodes solved, leaves open, the root's bound, the bound after each expansion
        (``bound_trace``: (seconds, bound)), tables branched on, peak memory.
    """
    del seed
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if max_nodes is not None and max_nodes < 1:
        raise InstanceError("max_nodes", f"must be at least 1, got {max_nodes}")
    if node_rounds is not None and node_rounds < 1:
        raise InstanceError("node_rounds", f"must be at least 1, got {node_rounds}")
    t0 = time.perf_counter()
    m = relaxation.build(inst, tangents=tangents, dense_row=dense_row)
    h, nnz = relaxation.highs_model(m, time_limit, 1e-6)
    big = m.n_cols > relaxation.SIMPLEX_MAX_COLUMNS
    if big:  # the root by the interior-point method, crossed over to a basis for the nodes' warm starts
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "on")
    else:
        h.setOptionValue("solver", "simplex")
    search = _Search(inst, m, h, t0 + time_limit, tol, max_rounds)
    root, x, status = search.solve_node({})
    stats: dict = {"columns": m.n_cols, "rows": m.rows.n, "nonzeros": nnz, "root_bound": root,
                   "root_status": status, "instance": inst.name}
    name = "tetris-bound-branch"
    if root is None or root == np.inf or x is None:
        wall = time.perf_counter() - t0
        if root == np.inf:
            return SolveResult(Status.INFEASIBLE, name, wall_time_s=wall, stats=stats,
                               message="the relaxation is empty (certified in numpy), so the instance is too")
        st = Status.TIME_LIMIT if status.startswith("Time") or root is not None else Status.ERROR
        return SolveResult(st, name, bound=None if root is None else max(0.0, root), wall_time_s=wall,
                           stats=stats, message=f"root LP: {status}")
    weight = _reader_weight(inst) + 1e-9 * np.arange(inst.n_tables)[::-1]
    heap: list = []   # open leaves: (bound, node id, fixes, LP solution)
    counter = 0
    heapq.heappush(heap, (root, counter, {}, x))
    nodes, branched, trace, infeasible = 1, [], [(time.perf_counter() - t0, root)], 0
    final: list[float] = []     # leaves with nothing fractional, or closed (inf): no branching raises them
    stopped: list[float] = []   # leaves not solved (time) or not certified: their parent's bound
    while heap and time.perf_counter() < search.deadline:
        if max_nodes is not None and nodes >= max_nodes:
            break
        if final and min(final) <= heap[0][0]:
            break   # the minimum is held by a leaf no branching can raise
        if upper is not None and heap[0][0] >= upper - 1e-6 * max(1.0, abs(upper)):
            break
        bound, _, fixes, x = heapq.heappop(heap)
        if on_node is not None:
            found = on_node(m.x_matrix(x), _homes(m, fixes), search.deadline)
            if found is not None and (upper is None or found < upper):
                upper = found
                if bound >= upper - 1e-6 * max(1.0, abs(upper)):
                    heapq.heappush(heap, (bound, counter, fixes, x))
                    break
        what, kids = search.children(fixes, x, weight)
        if not kids:
            final.append(bound)
            continue
        branched.append(what)
        for child in kids:
            counter += 1
            if time.perf_counter() >= search.deadline:
                stopped.append(bound)
                continue
            b, xc, st = search.solve_node(child, node_rounds)
            nodes += 1
            infeasible += st.startswith("Infeasible")
            cb = bound if b is None else max(bound, b)
            if xc is None:
                (stopped if np.isfinite(cb) else final).append(cb)
            else:
                heapq.heappush(heap, (cb, counter, child, xc))
        trace.append((time.perf_counter() - t0, min(heap[0][0] if heap else np.inf, min(final + stopped, default=np.inf))))
    held = min(final, default=np.inf)
    bound = min(heap[0][0] if heap else np.inf, held, min(stopped, default=np.inf))
    wall = time.perf_counter() - t0
    stats.update(nodes=nodes, open_leaves=len(heap) + len(final) + len(stopped), stopped_leaves=len(stopped), branched=branched[:50],
                 n_branched=len(branched), infeasible_nodes=infeasible, lazy_tangents=search.lazy,
                 bound_trace=trace[-200:], lp_statuses=search.statuses, peak_rss_mb=relaxation.peak_rss_mb())
    done = bool(np.isfinite(held)) and held <= bound   # the minimum is a leaf with nothing left to branch on
    if bound == np.inf:
        return SolveResult(Status.INFEASIBLE, name, wall_time_s=wall, stats=stats,
                           message="every leaf's LP is certified empty, so the instance is infeasible")
    return SolveResult(Status.OPTIMAL if done else Status.TIME_LIMIT, name, objective=None,
                       bound=max(0.0, float(bound)), wall_time_s=wall, stats=stats,
                       message="" if done else "the bound is the minimum over the open leaves")
