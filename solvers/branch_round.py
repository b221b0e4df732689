"""Branch and round: a Tetris placement and a certified lower bound in one run.

Not in MAST. The certified branching of :mod:`placement.models.tetris_bound.branch` (best-first on
hot tables' homes over the LP relaxation of Figure 4, every leaf's bound computed in numpy
from its duals) gives, at each node it expands, an LP solution ``X[t, r]`` in which the
branched tables have one home. This solver turns each such ``X`` into placements -- the
*LP-guided rounding* of a branch and bound's primal heuristic -- and climbs from each:

1. the start: MAST §3.4's hill climbing from the current homes (so the result is never
   worse than :func:`placement.solvers.hill_climb.solve`);
2. at every expanded node: ``X``'s argmax per table, and ``samples`` randomized roundings
   (table ``t`` to region ``r`` with probability ``X[t, r]``, seeded by ``seed`` and the
   node's number); each is the start of :func:`placement.solvers.hill_climb.solve`, whose repair
   phase restores (4)-(6) and the move quota where it can (a start it cannot repair is
   counted and dropped). Before the climb, (5) is restored against the incumbent
   (``_Rounding.restore``): the relaxation lets an analytics job count its CPU in a region of
   its choosing, so a rounding can put several of an app's jobs where the app's CPU cap is
   met; the tables of every job of an over-cap (app, region) pair go back to the incumbent's
   homes, until no pair is over or ``RESTORE_ROUNDS`` passes. Hill climbing's own repair
   (single-table moves, then a local minimum of the violation) left one (5) pair over at
   10,000 tables (seed 52203, the LP's argmax: 77 pairs over); the restoration took it to a
   feasible start in 4 passes (Tetris page);
3. the final ``polish_share`` of the time: iterated local search (hill climbing's seeded
   kicks, :func:`placement.solvers.hill_climb.solve` with ``kicks``) from the incumbent;
4. the best placement by the reference evaluation (:func:`placement.tetris.evaluation.evaluate`,
   checked by :func:`~placement.tetris.evaluation.violations`) is the incumbent; its value
   is handed back to the branching as its ``upper``, which stops the search once the
   bound meets it (a proof of optimality within 1e-6).

**Beyond the branching's size** (``root="auto"``: more than
:data:`~placement.models.tetris_bound.AUTO_BRANCH_MAX_TABLES` tables, where one node's LP
takes minutes by simplex) the bound is the LP relaxation's (:func:`placement.models.tetris_bound.lp.solve`,
HiGHS's interior point, certified in numpy) and its rounds' ``X`` are rounded as above
(``root="lp"``; ``stats["bound_method"]`` says which ran), their climbs allowed into the polish's
share of the time (the LP's one round at that size ends close to its own deadline). At 10,000 x 20,000 x 16 the LP's one
round takes 17-30 minutes on one thread and the rounding seconds (Tetris page).

The result carries both numbers: ``objective`` (the incumbent) and ``bound`` (the
branching's certified minimum over the open leaves, or the LP's certified bound), so ``stats["certified_gap"]`` is a
gap no solver's own number decides. Everything shares one ``time_limit``.
"""

from __future__ import annotations

import time

import numpy as np

from placement.errors import InstanceError
from placement.result import SolveResult, Status, relative_gap
from placement.tetris import TetrisInstance, TetrisSolution
from placement.tetris.evaluation import evaluate

from . import hill_climb

__all__ = ["solve", "RESTORE_ROUNDS"]

RESTORE_ROUNDS = 10   # passes of the (5) restoration (_Rounding.restore); 4 sufficed at 10,000 tables


class _Rounding:
    """The incumbent and the rounding counts; ``__call__`` is the branching's ``on_node`` hook."""

    def __init__(self, inst: TetrisInstance, samples: int, seed: int, t0: float) -> None:
        self.inst, self.samples, self.seed, self.t0 = inst, samples, seed, t0
        self.home: np.ndarray | None = None
        self.value = np.inf
        self.nodes = self.starts = self.unrepaired = self.improved = self.restore_passes = 0
        self.found_at: list[tuple[float, int, float]] = []   # (seconds, node number, value)
        self.climb_s = 0.0

    def restore(self, start: np.ndarray) -> np.ndarray:
        """(5) restored against the incumbent: the tables of every job whose (app, R(job)) pair is over
        the app's CPU cap go back to the incumbent's homes, pass after pass (a job's region moves
        with them, which can push another pair over), until no pair is over or ``RESTORE_ROUNDS``
        passes; the other constraints are left to hill climbing's repair. No incumbent: ``start``."""
        if self.home is None:
            return start
        A = self.inst.arrays
        home = start.copy()
        for _ in range(RESTORE_ROUNDS):
            ev = evaluate(self.inst, home)
            over = ev.cpu_used > A.cpu_cap
            if not over.any():
                break
            jobs = np.flatnonzero((A.job_app >= 0) & (ev.job_region >= 0))
            jobs = jobs[over[A.job_app[jobs], ev.job_region[jobs]]]
            _, tables = A.job_entries(jobs)
            if (home[tables] == self.home[tables]).all():
                break   # the incumbent's homes already: nothing left to restore
            home[tables] = self.home[tables]
            self.restore_passes += 1
        return home

    def offer(self, start: np.ndarray | None, deadline: float, kicks: int = 0) -> dict:
        """Climb from ``start`` (None: the current homes; with ``kicks``, iterated local search) and keep
        the result if strictly better; returns the climb's stats."""
        left = deadline - time.perf_counter()
        if left <= 0:
            return {}
        c0 = time.perf_counter()
        if start is not None and not kicks:
            start = self.restore(start)
        res = hill_climb.solve(self.inst, home=start, seed=self.seed, time_limit=left, kicks=kicks)
        self.climb_s += time.perf_counter() - c0
        self.starts += 1
        if res.solution is None or res.objective is None:
            self.unrepaired += 1
            return res.stats
        # hill climbing returns a placement only when violations() finds nothing, valued by evaluate()
        home, value = res.solution.home, res.objective
        if value < self.value - 1e-9 * max(1.0, abs(value)):
            self.home, self.value = home.copy(), value
            self.improved += 1
            self.found_at.append((time.perf_counter() - self.t0, self.nodes, value))
        return res.stats

    def __call__(self, X: np.ndarray, homes: dict[int, int], deadline: float) -> float | None:
        """Round the node's LP solution ``X`` (argmax, then ``samples`` draws) and climb from each."""
        rng = np.random.default_rng([self.seed, self.nodes])
        self.nodes += 1
        P = np.clip(X, 0.0, None)
        if homes:   # the branched tables' homes, exactly (the LP holds them up to its tolerance)
            t = np.fromiter(homes.keys(), dtype=np.int64)
            P[t] = 0.0
            P[t, np.fromiter(homes.values(), dtype=np.int64)] = 1.0
        s = P.sum(axis=1, keepdims=True)
        P = np.where(s > 0, P / np.where(s > 0, s, 1.0), 1.0 / P.shape[1])
        self.offer(np.argmax(P, axis=1), deadline)
        cum = np.cumsum(P, axis=1)
        for _ in range(self.samples):
            if time.perf_counter() >= deadline:
                break
            u = rng.random(P.shape[0])[:, None]
            self.offer(np.minimum((cum < u).sum(axis=1), P.shape[1] - 1), deadline)
        return None if self.home is None else self.value


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, seed: int = 0, samples: int = 2,
          polish_share: float = 0.1, polish_kicks: int = 1000, max_nodes: int | None = None, node_rounds: int | None = None,
          root: str = "auto") -> SolveResult:
    """Hill climbing from LP-guided roundings at the nodes of the certified branching (module docstring).

    Parameters
    ----------
    time_limit : float
        Seconds for everything: the start, the branching's LPs and the roundings' climbs.
    seed : int
        Seeds the randomized roundings, the climbs' tie order and the polish's kicks; same
        seed and ``max_nodes``, no time limit reached: same result.
    samples : int
        Randomized roundings per expanded node, besides the argmax.
    polish_share : float
        Share of ``time_limit`` kept for the final iterated local search from the incumbent
        (0: none). The branching gets the rest; when it stops early (``max_nodes``, or the
        bound meets the incumbent) the polish gets what is left. Measured at 1,000 x 2,000 x 10
        (seed 38001): 60 s of kicks took the incumbent from 269,088 to 260,691, while the
        bound rises by a few hundred a minute at that point (Tetris page).
    polish_kicks : int
        At most this many kicks in the polish (the time share bounds it too; at 1,000 tables a
        kick and its climb take about 0.1 s).
    max_nodes, node_rounds
        As :func:`placement.models.tetris_bound.branch.solve` ("branch" only).
    root : {"auto", "branch", "lp"}
        Where the ``X`` to round come from: the branching's nodes ("branch"), or the LP relaxation's
        rounds with its certified bound ("lp", HiGHS's interior point beyond
        ``SIMPLEX_MAX_COLUMNS`` columns); "auto": "branch" up to
        :data:`~placement.models.tetris_bound.AUTO_BRANCH_MAX_TABLES` tables, "lp" beyond.

    Returns
    -------
    SolveResult
        ``feasible`` with the incumbent and the certified ``bound`` (``stats["proof"]`` when
        they meet), ``infeasible`` when the branching certifies that no placement exists,
        ``time_limit`` when nothing feasible was found in time. ``stats``: the branching's
        (nodes, root and final bound, ``bound_trace``), ``certified_gap``, ``start_objective``
        (hill climbing), roundings tried / unrepaired / improving, ``incumbent_trace``
        ((seconds, expanded node, value); the polish's entry has node = nodes rounded), seconds in
        the climbs (the polish included), the polish's seconds, kicks and gain.
    """
    from placement.models.tetris_bound import AUTO_BRANCH_MAX_TABLES, branch, lp

    if root not in ("auto", "branch", "lp"):
        raise InstanceError("root", f"must be 'auto', 'branch' or 'lp', got {root!r}")
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if samples < 0:
        raise InstanceError("samples", f"must be at least 0, got {samples}")
    if not 0.0 <= polish_share < 1.0:
        raise InstanceError("polish_share", f"must be in [0, 1), got {polish_share}")
    if polish_kicks < 0:
        raise InstanceError("polish_kicks", f"must be at least 0, got {polish_kicks}")
    # the branching's own options, refused before the start's climb
    if max_nodes is not None and max_nodes < 1:
        raise InstanceError("max_nodes", f"must be at least 1, got {max_nodes}")
    if node_rounds is not None and node_rounds < 1:
        raise InstanceError("node_rounds", f"must be at least 1, got {node_rounds}")
    t0 = time.perf_counter()
    end = t0 + time_limit
    rounding = _Rounding(inst, int(samples), seed, t0)
    rounding.offer(None, end)
    start = rounding.value
    left = end - polish_share * time_limit - time.perf_counter()
    if root == "auto":
        root = "branch" if inst.n_tables <= AUTO_BRANCH_MAX_TABLES else "lp"
    if left > 0 and root == "lp":
        # A round's roundings may climb into the polish's share (to ``end``, not the LP's deadline): at
        # 10,000 tables the LP's one round ends close to its deadline, and climbs cut there kept the
        # rounding from its local minimum (seed 38523: 20.4% above the bound; 10.1% with the climbs'
        # time, the same bound). The polish then gets what is left.
        b = lp.solve(inst, time_limit=left, on_round=lambda X, deadline: rounding(X, {}, end))
    elif left > 0:
        b = branch.solve(inst, time_limit=left, max_nodes=max_nodes, node_rounds=node_rounds,
                         upper=None if rounding.home is None else rounding.value, on_node=rounding)
    else:
        b = SolveResult(Status.TIME_LIMIT, "tetris-bound-branch", message="no time left for the branching")
    polish: dict = {}
    if polish_share > 0 and polish_kicks > 0 and rounding.home is not None and b.status != Status.INFEASIBLE:
        before = rounding.value
        c0 = time.perf_counter()
        polish = rounding.offer(rounding.home, end, kicks=int(polish_kicks))
        polish = {"polish_s": time.perf_counter() - c0, "polish_kicks": polish.get("kicks"),
                  "polish_gain": before - rounding.value}
    wall = time.perf_counter() - t0
    keep = (("nodes", "root_bound", "n_branched", "open_leaves", "bound_trace") if root == "branch" else
            ("rounds", "round_values", "round_lp_values", "last_round_status", "ipm_iterations"))
    stats = {f"{root}_{k}": v for k, v in b.stats.items() if k in (*keep, "columns", "rows", "peak_rss_mb")}
    stats.update(bound_method=root, **{f"{root}_status": str(b.status)},
                 start_objective=None if np.isinf(start) else start,
                 rounded_nodes=rounding.nodes, rounding_starts=rounding.starts,
                 rounding_unrepaired=rounding.unrepaired, rounding_improved=rounding.improved,
                 restore_passes=rounding.restore_passes,
                 incumbent_trace=rounding.found_at, climb_s=rounding.climb_s, **polish)
    name = "branch-round"
    if b.status == Status.INFEASIBLE:
        return SolveResult(Status.INFEASIBLE, name, wall_time_s=wall, stats=stats, message=b.message)
    if rounding.home is None:
        return SolveResult(Status.TIME_LIMIT, name, bound=b.bound, wall_time_s=wall, stats=stats,
                           message="no feasible placement found (not a proof of infeasibility)")
    value = rounding.value
    bound = None if b.bound is None else min(b.bound, value)
    if b.bound is not None and b.bound > value + 1e-6 * max(1.0, abs(value)):
        stats["bound_inconsistent"] = b.bound   # cannot happen for a valid bound; kept visible if it does
    stats["certified_gap"] = None if bound is None else relative_gap(value, bound)
    stats["proof"] = bound is not None and stats["certified_gap"] <= 1e-6
    return SolveResult(Status.FEASIBLE, name, solution=TetrisSolution(home=rounding.home), objective=value,
                       bound=bound, wall_time_s=wall, stats=stats,
                       message=f"incumbent {value:.6g}, certified bound {bound if bound is None else f'{bound:.6g}'}")
