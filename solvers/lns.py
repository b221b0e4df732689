"""MIP-based large neighbourhood search (LNS) for Tetris home regions: a matheuristic.

Not in MAST: the paper keeps hill climbing (§3.4) for scale and interpretability
and leaves "a comprehensive comparison with local-search alternatives" open. This
is the optimization-centric answer, in three phases under one time budget:

A. **Start.** Hill climbing (:func:`placement.solvers.hill_climb.solve`, passes to
   convergence; its objective is ``stats["start_objective"]`` and the result is
   never worse), then iterated local search from it (``kicks`` perturbations, at
   most ``kick_share_of_time`` of the budget; instances up to
   ``local_max_tables`` tables) -- skipped when phase B runs cold (below): its
   placement would only be a fallback, and hill climbing's already is one.
B. **Whole model.** When the instance is small (``tables x regions <=
   full_max_cells``), the exact model (:func:`placement.models.tetris.solve`) on the whole
   instance for ``full_share`` of the remaining time: the neighbourhood
   "everything". HiGHS's own primal heuristics work best here with the LP of the
   whole problem; its verified bound becomes the result's ``bound``, and when it
   proves optimality the search stops (``stats["proof"] = True``, ``bound ==
   objective``; the status stays ``feasible``, the heuristics' contract); its
   placement replaces phase A's when the reference evaluation says it is better.
   By default it runs cold (``full_start=False``: no start from phase A, whose
   placement was seen to lead HiGHS away from the optimum -- 30x60x5 seed 9401
   at 6.5 s: 4.7% and 8.3% from two ILS starts, 0% cold -- while cold runs of
   the exact model at 10 s were within 0.08% on all 16 fresh instances from
   30x60x5 to 40x80x5, seeds 9203-9206, 9301-9306, 9401-9406); with
   ``full_start=True`` phase A's placement is HiGHS's first incumbent
   (:func:`placement.models.tetris.solve`'s ``start``). Optionally (off by
   default), when the neighbourhoods of phase C improve the incumbent and then
   stall for ``whole_again_after`` rounds, phase B runs again from the better
   incumbent (``whole_again_share`` of the remaining time).
C. **Neighbourhoods.** Repeatedly

1. chooses a *neighbourhood*: a set of free tables and the regions they may take,
   everything else fixed at the incumbent;
2. solves it exactly with the Tetris model (:func:`placement.models.tetris.solve` with
   ``fixed=`` / ``regions=``; only the free tables and the jobs reading them get
   variables, the rest of (1)-(3) is a constant), the incumbent given as ``start``
   so the sub-solve never returns worse;
3. accepts the sub-solution only when the reference evaluation
   (:func:`placement.tetris.evaluate`) says it is strictly better and
   :func:`placement.tetris.violations` finds nothing broken ((4), (5), (6) and the
   move quota, counted against the instance's current homes);
4. polishes an accepted placement with hill climbing from it (``polish``; up to
   ``local_max_tables`` tables), kept when the reference evaluation is better.

A neighbourhood is capped at ``max_affected`` reading jobs: a table read by more
jobs than that never joins one (generated scale instances have Zipf-popular
tables read by ~50,000 jobs, each reader a set of variables); hill climbing still
moves those. When one neighbourhood is the whole instance with every region and
its sub-solve proves that nothing is better, the search stops with the proof.

In the code: phase A is ``_hill_climb_start`` and ``_ils_start``, phase B
``_whole_model``, phase C ``_Rounds`` (``_sub_solve``, ``_resize``, ``_polish``);
every candidate placement passes ``_Incumbent.accept`` (step 3).

Measured (README "Tetris", bench section "Tetris heuristics vs the exact
optimum on a generated suite"): the defaults were first chosen on generated instances
with seeds 11-14 from 20x40x4 to 60x120x6; the bench judges them on seeds 100+.
Without phase B (neighbourhoods only, 10 s) gaps were 0-7%; phase B alone (the
exact model for 10 s from the ILS start) 0-9.6%; together, 0-2%. Once the exact
model started each cut round from the best placement known (and proved 40x80x5 in
5-40 s), phase B became the best use of the budget up to ``full_max_cells``: its
share went from 0.3 to 0.95, it runs cold (``full_start``) and its first-round
secants went from 64 to 8, chosen on seeds 9201-9206, 9301-9306 and 9401-9406 (LNS
seeds 3-5 at 10 s; 9101-9105, 9311-9315 and 9411-9415 at 60 s) and judged on seeds
9501-9506 and 9511-9515 (placement/tetris/README.md). Up to ``full_max_cells`` the
search is then mostly the exact model with a fallback; the neighbourhoods matter
beyond it, and when the whole model stops short.

Neighbourhoods (the kind is drawn by the seeded generator, in equal shares; ``adaptive``)
------------------------------------------------------------------------------------
``jobs``
    Tables that share jobs: the tables of one job (drawn in proportion to its
    cross-region bytes plus its GPU-hours), then the tables of the jobs reading
    those, breadth first in seeded order, up to the size. This is the move single-
    table hill climbing cannot make: an ML job gains only when all its tables move
    together.
``region_pair``
    Two regions (the first drawn in proportion to its share of the objective's
    GPU and storage terms plus one, the second uniformly): a seeded sample of the
    tables homed there, free to take either region.
``overloaded``
    The region with the largest GPU overload (demand over supply, all GPU
    types), its tables read by the most ML GPU-hours, free to stay or move to the
    regions with the most spare supply.
``moved``
    Re-decides which tables use the move quota: tables away from their current
    home and large tables still there, together.
``quota``
    Re-decides the whole move quota at once: every table away from its current
    home plus the largest tables still there (half as many, at least the adaptive
    size; sizes jittered by a seeded factor in [0.5, 1.5]), at most ``2 x
    max_size`` tables (beyond two thirds of that, a seeded sample of the moved
    tables by size). Which tables spend a binding quota is a knapsack over all of
    them, which ``moved`` re-decides only in part. A neighbourhood larger than the
    adaptive size (this one, mostly) leaves that size alone. Measured on fresh 40x80x5 instances at 10 s (seeds 9303, 9304, 9306,
    9206; LNS seeds 3-5; phase B started, share 0.5): without it the largest gap
    was 4.9% (9303), with it 2.2%.
``gpu_type`` (not in the default ``kinds``)
    Tables read by the ML jobs of one GPU type (drawn by its share of the GPU
    term), by those jobs' GPU-hours. Measured on seeds 11-14: no better than the
    default mix, kept for ablations (``kinds="jobs,gpu_type"``).
``absorb`` (not in the default ``kinds``)
    The (region, GPU type) with the largest overload: the tables of its ML jobs of
    that type (whole jobs, by GPU-hours), free to stay or go to the regions with
    the most spare supply of that type -- where the optimum was seen to differ
    from LNS's answer on hard instances.
With at most ``all_regions`` regions (default 6) every free table may take every
region in every kind except ``region_pair``.

Persistent sub-solves: up to ``persistent_max_cells`` (``tables x regions``) all
neighbourhoods are solved on one persistent model
(:mod:`placement.models.tetris_persistent`): built once, each neighbourhood changes only
the bounds of the ``x`` columns, HiGHS presolve on (off for a whole-instance
neighbourhood), lazy secants kept. Measured in one run (10 s, seed 3, loaded
2-core machine; neighbourhoods per second of phase C, gap to the proven
optimum): 30x60x5 seed 8803 1.8 -> 2.3/s, 0.43 -> 0.30%; 40x80x5 seed 8802
2.6 -> 3.5/s, 0.49 -> 0.42%; 40x80x5 seed 8805 1.8 -> 3.5/s, 4.80 -> 4.75%.
``stats["neighbourhoods_per_s"]`` reports the rate (phase C rounds over its time).

Size and limits: a neighbourhood starts at ``size`` free tables; a sub-solve that
finishes proven grows the next one by 2 (up to ``max_size``), one stopped by its
node limit shrinks it by 2 (down to 4) -- a rule on statuses, not on times. A
``quota`` neighbourhood may hold up to ``2 x max_size`` tables; one larger than the
adaptive size leaves it alone.

Determinism: HiGHS runs with one thread; each sub-solve is limited by
``node_limit`` branch-and-bound nodes per cut round (deterministic) and by a
safety time limit (``sub_time_limit``, not deterministic when it binds). With
``time_limit=None`` and ``iterations`` set, the result depends only on the
instance, the seed and the options; with a time limit, the number of
neighbourhoods tried depends on the machine (each one is still deterministic),
and the search also stops after ``stall`` neighbourhoods in a row without
improvement.

Statuses: ``feasible`` (a placement :func:`violations` accepts, never worse than
the hill-climbing start), ``infeasible`` (hill climbing found no feasible start;
not a proof), ``time_limit`` (the budget ended inside hill climbing). Stats:
rounds, neighbourhoods tried / improved per kind, sub-MIP sizes (free tables,
binaries) and times, start (hill-climbing), ILS (``ils_objective``, when it ran)
and final objective, phase times (``hill_climb_s``, ``ils_s``, ``full``), ``polished``, ``empty``
(neighbourhoods emptied by the reader cap), ``proof``, ``stopped_by``.
"""

from __future__ import annotations

import math
import time

import numpy as np
import placement.models.tetris as exact
from placement.models.tetris_persistent import PersistentTetris

from placement.errors import InstanceError
from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, TetrisSolution, evaluate, violations

from . import hill_climb

__all__ = ["solve", "KINDS"]

KINDS = ("jobs", "region_pair", "overloaded", "moved", "quota", "gpu_type", "absorb")
DEFAULT_KINDS = "jobs,region_pair,overloaded,moved,quota"
ADAPTIVE_RATE = 0.2  # weight of the latest outcome in a kind's adaptive weight
ADAPTIVE_FLOOR = 0.1  # no kind's weight falls below this (every kind keeps being tried)
_REL_EPS = 1e-9  # an accepted move must improve the reference objective by this share


class _Neighbourhoods:
    """Seeded choice of free tables and regions around the incumbent."""

    def __init__(self, inst: TetrisInstance, rng: np.random.Generator, all_regions: int,
                 max_free: int = 48) -> None:
        self.inst, self.rng = inst, rng
        self.A = inst.arrays
        self.R = inst.n_regions
        self.all_regions = all_regions
        self.max_free = max_free  # the most free tables of a quota neighbourhood

    def _regions(self, home: np.ndarray, free: np.ndarray, extra: list[int]) -> list[int]:
        """The free tables' current regions, topped up from ``extra`` to ``all_regions``."""
        if self.R <= self.all_regions:
            return list(range(self.R))
        regs = dict.fromkeys(home[free].tolist())
        for r in extra:
            if len(regs) >= self.all_regions:
                break
            regs.setdefault(r, None)
        return sorted(regs)

    def _spare_regions(self, ev) -> list[int]:
        """Regions by spare GPU supply (supply minus demand, all types), largest first."""
        spare = self.A.supply.sum(axis=1) - ev.demand.sum(axis=(1, 2))
        return np.argsort(-spare, kind="stable").tolist()

    def jobs(self, home: np.ndarray, ev, size: int):
        A, rng = self.A, self.rng
        J = self.inst.n_jobs
        if J == 0:
            return self.random(home, size)
        # Weight: bytes of ML jobs without a region (they gain only if their tables meet), GPU-hours, 1/J.
        null_bytes = np.where(A.job_ml & (ev.job_region < 0), A.job_size, 0).astype(float)
        w = null_bytes / max(null_bytes.sum(), 1.0) + A.job_gh / max(float(A.job_gh.sum()), 1.0) + 1.0 / J
        j0 = int(rng.choice(J, p=w / w.sum()))
        seed_tabs = A.job_tab[A.job_ptr[j0]:A.job_ptr[j0 + 1]]
        regs = self._regions(home, seed_tabs, self._spare_regions(ev))
        inside = np.isin(home, regs)  # tables that can stay where they are
        chosen: dict[int, None] = {}
        queue = [j0]
        seen_jobs = {j0}
        while queue and len(chosen) < size:
            j = queue.pop(0)
            tabs = A.job_tab[A.job_ptr[j]:A.job_ptr[j + 1]]
            for t in rng.permutation(tabs).tolist():
                if len(chosen) >= size:
                    break
                if t in chosen or not inside[t]:
                    continue
                chosen[t] = None
                readers = A.tab_job[A.tab_ptr[t]:A.tab_ptr[t + 1]]
                for k in rng.permutation(readers).tolist():
                    if k not in seen_jobs:
                        seen_jobs.add(k)
                        queue.append(k)
        free = np.asarray(sorted(chosen), dtype=np.int64)
        return free, regs

    def region_pair(self, home: np.ndarray, ev, size: int):
        A, rng, R = self.A, self.rng, self.R
        if R < 2:
            return self.random(home, size)
        from placement.tetris.evaluation import gpu_balance_terms, storage_balance_terms

        weight = gpu_balance_terms(A, ev.demand).sum(axis=(1, 2)) * self.inst.w2 + \
            storage_balance_terms(A, ev.storage_used) * self.inst.w3
        weight = weight / max(weight.sum(), 1e-300) + 1.0 / R
        r1 = int(rng.choice(R, p=weight / weight.sum()))
        r2 = int(rng.choice([r for r in range(R) if r != r1]))
        pool = np.flatnonzero((home == r1) | (home == r2))
        if len(pool) == 0:
            return self.random(home, size)
        free = np.sort(rng.choice(pool, size=min(size, len(pool)), replace=False))
        return free, sorted({r1, r2})

    def overloaded(self, home: np.ndarray, ev, size: int):
        A, rng = self.A, self.rng
        over = (ev.demand.sum(axis=2) - A.supply).clip(min=0).sum(axis=1)
        ratio = ev.demand.sum(axis=(1, 2)) / np.maximum(A.supply.sum(axis=1), 1)
        r0 = int(np.lexsort((-ratio, -over))[0])  # most overloaded, then highest demand/supply
        pool = np.flatnonzero(home == r0)
        if len(pool) == 0:
            return self.random(home, size)
        # Tables read by the most ML GPU-hours (a seeded tie-break), half of them by that rank.
        ml_gh = np.zeros(self.inst.n_tables)
        np.add.at(ml_gh, A.job_tab, A.job_gh[A.entry_job])
        score = ml_gh[pool] * rng.uniform(0.5, 1.5, size=len(pool))
        free = np.sort(pool[np.argsort(-score, kind="stable")[:size]])
        extra = [r for r in self._spare_regions(ev) if r != r0]
        regs = list(range(self.R)) if self.R <= self.all_regions else sorted({r0, *extra[:self.all_regions - 1]})
        return free, regs

    def absorb(self, home: np.ndarray, ev, size: int):
        """Move GPU overload to the regions that can absorb it: the (region, GPU type) with the largest
        overload, the tables of its ML jobs of that type (whole jobs, by GPU-hours with a seeded
        tie-break), free to stay or go to the regions with the most spare supply of that type."""
        A, rng = self.A, self.rng
        over = ev.demand.sum(axis=2) - A.supply  # [R, G]
        r0, g = np.unravel_index(int(np.argmax(over)), over.shape)
        if over[r0, g] <= 0:
            return self.overloaded(home, ev, size)
        jobs = np.flatnonzero(A.job_ml & (ev.job_region == r0) & (A.job_gpu == g))
        if len(jobs) == 0:
            return self.overloaded(home, ev, size)
        order = jobs[np.argsort(-A.job_gh[jobs] * rng.uniform(0.5, 1.5, size=len(jobs)), kind="stable")]
        chosen: dict[int, None] = {}
        for j in order.tolist():
            for t in A.job_tab[A.job_ptr[j]:A.job_ptr[j + 1]].tolist():
                if len(chosen) < size:
                    chosen[t] = None
        free = np.asarray(sorted(chosen), dtype=np.int64)
        spare = np.argsort(-(A.supply[:, g] - ev.demand[:, g].sum(axis=1)), kind="stable").tolist()
        return free, self._regions(home, free, [int(r0), *[r for r in spare if r != r0]])

    def moved(self, home: np.ndarray, ev, size: int):
        """Re-decide which tables use the move quota: moved tables and big unmoved ones together."""
        A, rng = self.A, self.rng
        away = np.flatnonzero(home != A.home0)
        if self.inst.move_quota is None or len(away) == 0:
            return self.jobs(home, ev, size)
        take = min(len(away), max(1, size // 2))
        part1 = rng.choice(away, size=take, replace=False, p=A.size[away] / max(A.size[away].sum(), 1))
        rest = np.flatnonzero(home == A.home0)
        part2 = np.zeros(0, dtype=np.int64)
        if len(rest) and size - take > 0:
            w = A.size[rest] + 1.0
            part2 = rng.choice(rest, size=min(len(rest), size - take), replace=False, p=w / w.sum())
        free = np.sort(np.concatenate([part1, part2]).astype(np.int64))
        extra = list(dict.fromkeys(A.home0[free].tolist() + self._spare_regions(ev)))
        return free, self._regions(home, free, extra)

    def quota(self, home: np.ndarray, ev, size: int):
        """Every table away from its current home, and the largest still there (the module docstring)."""
        A, rng = self.A, self.rng
        away = np.flatnonzero(home != A.home0)
        if self.inst.move_quota is None or len(away) == 0:
            return self.jobs(home, ev, size)
        cap = max(2, self.max_free)
        if len(away) > cap * 2 // 3:  # too many moved tables: a seeded sample, by size, of two thirds of the cap
            w = A.size[away] + 1.0
            away = np.sort(rng.choice(away, size=cap * 2 // 3, replace=False, p=w / w.sum()))
        rest = np.flatnonzero(home == A.home0)
        take = min(len(rest), max(size, len(away) // 2), cap - len(away))
        score = A.size[rest] * rng.uniform(0.5, 1.5, size=len(rest))
        big = rest[np.argsort(-score, kind="stable")[:take]]
        free = np.union1d(away, big).astype(np.int64)
        extra = list(dict.fromkeys(A.home0[free].tolist() + self._spare_regions(ev)))
        return free, self._regions(home, free, extra)

    def gpu_type(self, home: np.ndarray, ev, size: int):
        """Tables read by ML jobs of one GPU type (drawn by its share of the GPU term), by their GPU-hours."""
        A, rng = self.A, self.rng
        from placement.tetris.evaluation import gpu_balance_terms

        G = A.supply.shape[1]
        w = gpu_balance_terms(A, ev.demand).sum(axis=(0, 2))
        w = w / max(w.sum(), 1e-300) + 1.0 / G
        g = int(rng.choice(G, p=w / w.sum()))
        gh = np.zeros(self.inst.n_tables)
        sel = A.job_ml[A.entry_job] & (A.job_gpu[A.entry_job] == g)
        np.add.at(gh, A.job_tab[sel], A.job_gh[A.entry_job[sel]].astype(float))
        pool = np.flatnonzero(gh > 0)
        if len(pool) == 0:
            return self.random(home, size)
        p = gh[pool] + gh[pool].mean() * 0.1
        free = np.sort(rng.choice(pool, size=min(size, len(pool)), replace=False, p=p / p.sum()))
        return free, self._regions(home, free, self._spare_regions(ev))

    def random(self, home: np.ndarray, size: int):
        free = np.sort(self.rng.choice(self.inst.n_tables, size=min(size, self.inst.n_tables), replace=False))
        return free, self._regions(home, free, self.rng.permutation(self.R).tolist())


def _cap_affected(inst: TetrisInstance, free: np.ndarray, max_affected: int) -> np.ndarray:
    """The free tables, in their order, while the jobs reading them stay within ``max_affected``.

    A table read by more jobs than the cap on its own never joins a neighbourhood
    (generated scale instances have Zipf-popular tables read by ~50,000 jobs; each
    reader would be a set of variables). Hill climbing still moves such tables.
    """
    readers = np.diff(inst.arrays.tab_ptr)[free]
    keep = np.zeros(len(free), dtype=bool)
    total = 0
    for i, n in enumerate(readers.tolist()):
        if total + n <= max_affected:
            keep[i] = True
            total += n
    return free[keep]


def _proved(sub: SolveResult) -> bool:
    """Whether a sub-solve proved that its neighbourhood holds nothing better than the incumbent."""
    if sub.status == Status.OPTIMAL:
        return True
    checks = sub.stats.get("verification") or []
    return sub.status == Status.FEASIBLE and bool(checks) and checks[-1].get("claim") == "infeasible"


class _Incumbent:
    """The best placement so far (``home``), its reference evaluation ``ev`` and objective ``obj``."""

    def __init__(self, inst: TetrisInstance, home: np.ndarray) -> None:
        self.inst, self.home = inst, home
        self.ev = evaluate(inst, home)
        self.obj = self.ev.objective

    def margin(self) -> float:
        """The least improvement that counts: ``_REL_EPS`` of the objective (at least 1)."""
        return _REL_EPS * max(1.0, abs(self.obj))

    def accept(self, res: SolveResult) -> bool:
        """The acceptance check: take ``res``'s placement when the reference evaluation
        says it is strictly better and :func:`violations` finds nothing broken."""
        if res.solution is None:
            return False
        cand = res.solution.home
        cev = evaluate(self.inst, cand)  # our own check: a sub-solver's word is not the last one
        if cev.objective < self.obj - self.margin() and not violations(self.inst, cand, cev):
            self.home, self.ev, self.obj = cand.copy(), cev, cev.objective
            return True
        return False


def _kinds(kinds: str) -> list[str]:
    """The neighbourhood kinds of a comma-separated list, each one of :data:`KINDS`."""
    use_kinds = [k.strip() for k in str(kinds).split(",")]
    if any(k not in KINDS for k in use_kinds):
        raise InstanceError("kinds", f"must be a comma-separated subset of {','.join(KINDS)}, got {kinds!r}")
    return use_kinds


def _hill_climb_start(inst: TetrisInstance, *, seed: int, time_limit: float | None, t0: float,
                      hill_climb_options: dict) -> tuple[SolveResult, dict]:
    """Phase A, first step: hill climbing to convergence, and the stats of the whole search."""
    hc = hill_climb.solve(inst, seed=seed, time_limit=time_limit, **hill_climb_options)
    stats: dict = {"hill_climb_status": str(hc.status), "hill_climb_s": time.perf_counter() - t0, "rounds": 0,
                   "tried": dict.fromkeys(KINDS, 0), "improved": dict.fromkeys(KINDS, 0),
                   "sub_free_tables": [], "sub_binaries": [], "sub_s": [], "sub_status": {},
                   "start_objective": hc.objective, "final_objective": hc.objective, "proof": False}
    return hc, stats


def _ils_start(inst: TetrisInstance, home: np.ndarray, stats: dict, *, seed: int, time_limit: float | None,
               kicks: int, kick_share_of_time: float, local_max_tables: int,
               hill_climb_options: dict) -> SolveResult | None:
    """Phase A, second step: iterated local search from the hill-climbing placement.

    ``kicks`` perturbations within ``kick_share_of_time`` of the budget, on instances
    of at most ``local_max_tables`` tables (each kick re-climbs the whole placement);
    None when it does not run.
    """
    if not (kicks > 0 and inst.n_regions > 1 and inst.n_tables <= local_max_tables):
        return None
    ils_limit = None if time_limit is None else kick_share_of_time * time_limit
    ils = hill_climb.solve(inst, seed=seed, home=home, kicks=kicks, time_limit=ils_limit, **hill_climb_options)
    stats["ils_objective"] = ils.objective
    return ils


def _whole_eligible(inst: TetrisInstance, share: float, max_cells: int) -> bool:
    """Whether phase B runs at all: a positive share and ``tables x regions <= max_cells``."""
    return share > 0 and inst.n_tables * inst.n_regions <= max_cells


def _whole_model(inst: TetrisInstance, inc: _Incumbent, stats: dict, deadline: float | None, *,
                 share: float, max_cells: int, node_limit: int, saturation: int,
                 secants: int, warm: bool = True) -> float | None:
    """Phase B: the exact model on the whole instance, started from the incumbent when ``warm``, else cold.

    Runs when ``share > 0``, ``tables x regions <= max_cells`` and more than 0.5 s
    remain, for ``share`` of the remaining time (or ``node_limit`` nodes per cut
    round without a time limit). Returns HiGHS's verified lower bound (the
    objective when optimality is proven, ``stats["proof"]``), else None.
    """
    if not _whole_eligible(inst, share, max_cells):
        return None
    remaining = None if deadline is None else deadline - time.perf_counter()
    if remaining is not None and remaining <= 0.5:
        return None
    full = exact.solve(inst, start=inc.home if warm else None, recover=False, saturation=saturation,
                       initial_secants=secants, highs_options={"mip_pscost_minreliable": 0},
                       time_limit=1e9 if remaining is None else share * remaining,
                       node_limit=node_limit if remaining is None else None)
    stats["full"] = {"status": str(full.status), "objective": full.objective, "bound": full.bound,
                     "s": full.wall_time_s}
    bound = full.bound if full.bound is not None and math.isfinite(full.bound) else None
    inc.accept(full)
    if full.status == Status.OPTIMAL and full.objective <= inc.obj + inc.margin():
        stats["proof"] = True
        bound = inc.obj
    return bound


class _Rounds:
    """Phase C: neighbourhoods around the incumbent, each solved exactly, until a stop rule.

    Stop rules: a proof, ``iterations`` rounds, ``stall`` rounds in a row without
    improvement, or the deadline (less the longest round overhead seen). Keeps the
    adaptive size, the rounds since the last improvement, and ``bound`` (the
    objective once a whole-instance neighbourhood proves it).
    """

    def __init__(self, inst: TetrisInstance, inc: _Incumbent, stats: dict, deadline: float | None, *,
                 seed: int, iterations: int | None, size: int, max_size: int, all_regions: int,
                 node_limit: int, sub_time_limit: float, sub_gap: float, stall: int, saturation: int,
                 polish: bool, local_max_tables: int, max_affected: int, kinds: list[str],
                 hill_climb_options: dict, persistent_max_cells: int = 0, adaptive: bool = False) -> None:
        self.inst, self.inc, self.stats, self.deadline = inst, inc, stats, deadline
        self.seed, self.iterations, self.max_size, self.stall = seed, iterations, max_size, stall
        self.node_limit, self.sub_time_limit, self.sub_gap = node_limit, sub_time_limit, sub_gap
        self.saturation, self.polish, self.local_max_tables = saturation, polish, local_max_tables
        self.max_affected, self.kinds, self.hill_climb_options = max_affected, kinds, hill_climb_options
        self.rng = np.random.default_rng([seed, 7])
        self.hoods = _Neighbourhoods(inst, self.rng, all_regions, max_free=2 * max_size)
        self.cur_size = max(1, min(size, inst.n_tables))
        self.since_improved = 0
        self.overhead = 0.0  # the longest round time spent outside the sub-solve (kept out of its limit)
        self.bound: float | None = None
        self.model: PersistentTetris | None = None  # built at the first neighbourhood (persistent mode)
        self.persistent = 0 < inst.n_tables * inst.n_regions <= persistent_max_cells
        stats["persistent"] = self.persistent
        self.adaptive = adaptive
        self.weights = dict.fromkeys(kinds, 1.0)
        self.whole_again = None  # phase B again (returns whether it improved), set by solve()
        self.whole_again_after = stall
        self.whole_from = inc.obj  # the incumbent's objective when the whole model last ran

    def run(self) -> None:
        """Rounds until a stop rule: draw, sub-solve, adapt the size, accept, polish."""
        inst, stats = self.inst, self.stats
        whole_regions = list(range(inst.n_regions))
        while not stats["proof"]:
            t_round = time.perf_counter()
            if self.iterations is not None and stats["rounds"] >= self.iterations:
                break
            if self.since_improved >= self.stall:
                break
            remaining = None if self.deadline is None else self.deadline - time.perf_counter()
            if remaining is not None and remaining <= 0.05 + self.overhead:
                break
            kind = self._draw_kind()
            free, regions = getattr(self.hoods, kind)(self.inc.home, self.inc.ev, self.cur_size)
            free = _cap_affected(inst, np.asarray(free, dtype=np.int64), self.max_affected)
            stats["rounds"] += 1
            stats["tried"][kind] += 1
            if len(free) == 0:
                stats["empty"] = stats.get("empty", 0) + 1
                self.since_improved += 1
                continue
            sub = self._sub_solve(free, regions, remaining)
            if len(free) <= self.cur_size:  # a larger one (quota) says nothing about the adaptive size
                self._resize(sub)
            improved = self.inc.accept(sub)
            if improved:
                stats["improved"][kind] += 1
                self._polish()
            self._score(kind, improved)
            self.since_improved = 0 if improved else self.since_improved + 1
            self.overhead = max(self.overhead, time.perf_counter() - t_round - sub.wall_time_s)
            if self.whole_again is not None and self.since_improved >= self.whole_again_after \
                    and self.inc.obj < self.whole_from - self.inc.margin():
                # Neighbourhoods improved the incumbent since the whole model last ran, then stalled:
                # the whole model again, started from the better incumbent.
                self.whole_from = self.inc.obj
                stats["whole_again"] = stats.get("whole_again", 0) + 1
                if self.whole_again():
                    self.since_improved = 0
            if len(free) == inst.n_tables and list(regions) == whole_regions and not improved and _proved(sub):
                stats["proof"] = True  # the whole instance was the neighbourhood
                self.bound = self.inc.obj
                break

    def _draw_kind(self) -> str:
        """The next neighbourhood kind: uniform, or by adaptive weights (``adaptive``)."""
        if not self.adaptive:
            return self.kinds[int(self.rng.integers(len(self.kinds)))]
        w = np.asarray([self.weights[k] for k in self.kinds])
        return self.kinds[int(self.rng.choice(len(self.kinds), p=w / w.sum()))]

    def _score(self, kind: str, improved: bool) -> None:
        """Adaptive weights (ALNS, Ropke & Pisinger 2006): an exponential average of each kind's
        improvements, ``w <- (1 - r) w + r [improved]``, floored at ``ADAPTIVE_FLOOR``."""
        if self.adaptive:
            self.weights[kind] = max(ADAPTIVE_FLOOR, (1 - ADAPTIVE_RATE) * self.weights[kind]
                                     + ADAPTIVE_RATE * float(improved))
            self.stats["kind_weights"] = dict(self.weights)

    def stopped_by(self) -> str:
        """Which stop rule ended the search: proof, iterations, stall or time_limit."""
        if self.stats["proof"]:
            return "proof"
        if self.iterations is not None and self.stats["rounds"] >= self.iterations:
            return "iterations"
        return "stall" if self.since_improved >= self.stall else "time_limit"

    def _sub_solve(self, free: np.ndarray, regions: list[int], remaining: float | None) -> SolveResult:
        """The exact model on one neighbourhood (free tables, their regions), the rest fixed
        at the incumbent, which is also the start: the sub-solve never returns worse."""
        inc, stats, inst = self.inc, self.stats, self.inst
        fixed = inc.home.copy()
        fixed[free] = -1
        limit = (self.sub_time_limit if remaining is None
                 else max(0.05, min(self.sub_time_limit, remaining - self.overhead)))
        # Cut off everything not strictly better than the incumbent, and branch without strong-branching
        # warm-up (measured 2.4x faster on a 14-table neighbourhood, same optimum).
        options = {"objective_bound": inc.obj + inc.margin(), "mip_pscost_minreliable": 0,
                   "mip_allow_restart": False, "mip_detect_symmetry": False}
        if self.persistent:
            if self.model is None:
                self.model = PersistentTetris(self.inst, saturation=self.saturation)
                stats["persistent_build_s"] = self.model.build_s
            # HiGHS's presolve drops the fixed columns and the rows they settle (measured 1.4x more
            # neighbourhoods per second at 20x40x4 and 40x80x5). It stays off (DEFAULT_HIGHS_OPTIONS: a
            # presolve answer once claimed a wrong optimum) for a neighbourhood that is the whole instance,
            # whose "nothing better" ends the search; elsewhere every answer is judged by the reference
            # evaluation before it counts.
            whole = len(free) == inst.n_tables and len(regions) == inst.n_regions
            sub = self.model.solve(inc.home, free, regions, time_limit=limit, node_limit=self.node_limit,
                                   mip_gap=self.sub_gap,
                                   highs_options={**options, "presolve": "off" if whole else "on"})
        else:
            sub = exact.solve(self.inst, fixed=fixed, regions=regions, start=inc.home, time_limit=limit,
                              node_limit=self.node_limit, recover=False, mip_gap=self.sub_gap,
                              highs_options=options, saturation=self.saturation)
        stats["sub_free_tables"].append(len(free))
        stats["sub_binaries"].append(sub.stats.get("binaries", 0))
        stats["sub_s"].append(sub.wall_time_s)
        stats["sub_status"][str(sub.status)] = stats["sub_status"].get(str(sub.status), 0) + 1
        return sub

    def _resize(self, sub: SolveResult) -> None:
        """Adaptive size, a rule on statuses: +2 after a finished sub-solve, -2 after a stopped one."""
        if sub.status in (Status.OPTIMAL, Status.FEASIBLE, Status.INFEASIBLE):  # finished, not stopped
            self.cur_size = min(self.cur_size + 2, self.max_size, self.inst.n_tables)
        elif sub.status == Status.TIME_LIMIT:
            self.cur_size = max(4, self.cur_size - 2)

    def _polish(self) -> None:
        """Hill climbing from a newly accepted placement (up to ``local_max_tables`` tables),
        kept when the acceptance check takes it."""
        if not (self.polish and self.inst.n_tables <= self.local_max_tables):
            return
        left = None if self.deadline is None else max(0.01, self.deadline - time.perf_counter())
        res = hill_climb.solve(self.inst, seed=self.seed, home=self.inc.home, time_limit=left,
                               **self.hill_climb_options)
        if self.inc.accept(res):
            self.stats["polished"] = self.stats.get("polished", 0) + 1


def _result(hc: SolveResult, inc: _Incumbent, stats: dict, bound: float | None, stopped_by: str,
            t0: float) -> SolveResult:
    """The :class:`SolveResult` of a finished search: the incumbent and the summary stats."""
    obj = inc.obj
    stats["final_objective"] = obj
    subs = np.asarray(stats["sub_s"]) if stats["sub_s"] else np.zeros(1)
    stats["sub_s_median"] = float(np.median(subs))
    stats["sub_s_max"] = float(subs.max())
    stats["sub_s_total"] = float(subs.sum())
    stats["improvement"] = (hc.objective - obj) / max(abs(hc.objective), 1e-9)
    stats["stopped_by"] = stopped_by
    stats.update(inc.ev.measures)
    wall = time.perf_counter() - t0
    if bound is not None:
        bound = min(bound, obj)
    return SolveResult(Status.FEASIBLE, "lns", solution=TetrisSolution(home=inc.home), objective=obj, bound=bound,
                       wall_time_s=wall, stats=stats,
                       message=f"{sum(stats['improved'].values())} of {stats['rounds']} neighbourhoods improved, "
                               f"objective {hc.objective:.6g} -> {obj:.6g}")


def solve(inst: TetrisInstance, *, time_limit: float | None = 10.0, seed: int = 0, iterations: int | None = None,
          size: int = 6, max_size: int = 24, all_regions: int = 6, node_limit: int = 100,
          sub_time_limit: float = 1.0, sub_gap: float = 1e-6, stall: int = 60, saturation: int = 8,
          kicks: int = 50, kick_share_of_time: float = 0.2, polish: bool = True,
          full_share: float = 0.95, full_max_cells: int = 600, full_node_limit: int = 5000,
          local_max_tables: int = 5000, max_affected: int = 400, full_saturation: int = 37,
          full_secants: int = 8, kinds: str = DEFAULT_KINDS,
          hill_climb_options: dict | None = None, persistent_max_cells: int = 2400,
          adaptive: bool = False, whole_again_after: int = 0, whole_again_share: float = 0.5,
          full_start: bool = False, bound: float | str | None = None,
          bound_time_limit: float = 600.0) -> SolveResult:
    """MIP-based LNS from the hill-climbing placement (see the module docstring).

    Parameters
    ----------
    time_limit : float or None
        Seconds for everything (hill climbing included); ``None`` for no limit
        (then ``iterations`` or ``stall`` ends the search). A sub-solve's limit
        covers HiGHS, not Pyomo's hand-over of the model, so a run may end a few
        tenths of a second late (measured 0.1-0.2 s on 10 s and 60 s budgets).
    seed : int
        Seeds hill climbing's tie order and every neighbourhood choice.
    iterations : int, optional
        Neighbourhoods to try at most.
    size, max_size : int
        Free tables of the first neighbourhood, and the cap of the adaptive size.
    all_regions : int
        Up to this many regions, free tables may take every region.
    node_limit : int
        HiGHS branch-and-bound nodes per cut round of a sub-solve (deterministic).
    sub_time_limit : float
        Safety limit in seconds per sub-solve.
    stall : int
        Stop after this many neighbourhoods in a row without improvement.
    saturation : int
        Overload level where the sub-models' sigmoid saturates (a relaxation, see
        :func:`placement.models.tetris.build`; answers are judged by the reference evaluation).
    kicks, kick_share_of_time : int, float
        Iterated-local-search kicks after hill climbing (phase A), and the share of
        the budget they may use.
    polish : bool
        Hill climbing from every accepted neighbourhood solution.
    full_share, full_max_cells, full_node_limit, full_saturation : float, int, int, int
        Phase B: share of the remaining time for the whole model (0 turns it off;
        0.95 cold: at 10 s, LNS seeds 3 and 4, within 0.08% on the 16 fresh instances
        of the module docstring, as the exact model alone; started from phase A, 9303, 9306 and 9206 with LNS
        seeds 3-5 left 2.2% at 0.5, 1.9% at 0.7, 0.09% at 0.85, and 9401 7.2% at
        0.85), the largest ``tables x regions`` it runs on (600: beyond that, building the
        model and handing it to HiGHS alone outlasts its share of a 10 s budget --
        measured 2.4 s for a 1 s limit at 300 x 5), its node limit per cut round
        when there is no time limit (deterministic runs), and its overload
        saturation (default exact; 8 was measured no better on seeds 11-14).
    local_max_tables : int
        Largest instance on which the ILS kicks and the polish run (both re-climb
        the whole placement).
    max_affected : int
        Reading jobs per neighbourhood at most.
    full_secants : int
        Secants per square term in the whole model's first round (8, as the exact
        model; 64 was better on seeds 11-14 before the exact model started each cut
        round from the best placement known; now no better: 40x80x5 seeds 9205 / 9206 at
        10 s and share 0.3, LNS seeds 3-5, largest gaps 2.1% / 3.9% with 64, 0.01% / 3.9%
        with 8).
    kinds : str
        Comma-separated neighbourhood kinds to draw from (see the module docstring).
    hill_climb_options : dict, optional
        Keyword options of the hill-climbing start.
    persistent_max_cells : int
        Up to this many ``tables x regions``, every neighbourhood is solved on one
        persistent model (:class:`placement.models.tetris_persistent.PersistentTetris`, built
        once); beyond it (or 0), a sub-model is built per neighbourhood.
    full_start : bool
        Phase B from phase A's placement (HiGHS's first incumbent, after an ILS phase A)
        or cold (the default: phase A is hill climbing only, phase B's placement replaces
        it when better; see the module docstring for the measurements).
    whole_again_after, whole_again_share : int, float
        When phase B ran and the neighbourhoods have improved the incumbent since, then gone
        ``whole_again_after`` rounds without improvement, the whole model runs again,
        started from the better incumbent (HiGHS gets it as its first incumbent), for
        ``whole_again_share`` of the remaining time; its bound joins the result's. 0 (the
        default) never: measured with 8 on fresh 30x60x5-60x120x6 instances (seeds
        9201-9206 at 10 s, 9101-9105 at 60 s), it took time from the neighbourhoods and
        left larger gaps (60x120x6 seed 9105: 1.73% against 0.12% without).
    adaptive : bool
        Draw the neighbourhood kind by adaptive weights (ALNS: an exponential
        average of each kind's recent improvements, ``ADAPTIVE_RATE``, floored at
        ``ADAPTIVE_FLOOR``) instead of uniformly. Off by default: measured at 10 s
        on three fresh instances (30x60x5 seed 8803, 40x80x5 seeds 8802 and 8805;
        10-22 neighbourhoods per run), gaps 6.07 / 1.58 / 4.21% against uniform's
        0.30 / 0.42 / 4.75% -- too few neighbourhoods per run for weights to learn.
    bound, bound_time_limit : number, file, "compute" or None; float
        Report the certified gap to a valid lower bound (:func:`placement.solvers.hill_climb.certify`,
        reporting only: the search is the same; ``"compute"`` runs the relaxation of
        :mod:`placement.models.tetris_bound` after the search, outside ``time_limit``).

    Returns
    -------
    SolveResult
        ``feasible`` (never worse than the hill-climbing start), ``infeasible``
        (no feasible start found; not a proof) or ``time_limit`` (inside hill
        climbing). ``objective`` is the reference evaluation; ``bound`` the
        verified lower bound of phase B when it ran (else ``None``).
    """
    use_kinds = _kinds(kinds)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    given = bound  # a lower bound to certify the result against (reporting only)
    hco = hill_climb_options or {}
    # A. Start: hill climbing, then iterated local search from it.
    hc, stats = _hill_climb_start(inst, seed=seed, time_limit=time_limit, t0=t0, hill_climb_options=hco)
    if hc.solution is None or hc.status != Status.FEASIBLE:
        return SolveResult(hc.status, "lns", solution=hc.solution, objective=hc.objective,
                           wall_time_s=time.perf_counter() - t0, stats=stats,
                           message=f"hill-climbing start: {hc.message}")
    home = hc.solution.home.copy()
    cold_whole = not full_start and _whole_eligible(inst, full_share, full_max_cells)
    ils = None if cold_whole else _ils_start(inst, home, stats, seed=seed, time_limit=time_limit, kicks=kicks,
                                             kick_share_of_time=kick_share_of_time,
                                             local_max_tables=local_max_tables, hill_climb_options=hco)
    stats["ils_s"] = time.perf_counter() - t0 - stats["hill_climb_s"]
    inc = _Incumbent(inst, home)
    if ils is not None:
        inc.accept(ils)
    # B. The whole model.
    bound = _whole_model(inst, inc, stats, deadline, share=full_share, max_cells=full_max_cells,
                         node_limit=full_node_limit, saturation=full_saturation, secants=full_secants,
                         warm=full_start)
    # C. Neighbourhood rounds (each accepted one polished).
    rounds = _Rounds(inst, inc, stats, deadline, seed=seed, iterations=iterations, size=size,
                     max_size=max_size, all_regions=all_regions, node_limit=node_limit,
                     sub_time_limit=sub_time_limit, sub_gap=sub_gap, stall=stall, saturation=saturation,
                     polish=polish, local_max_tables=local_max_tables, max_affected=max_affected,
                     kinds=use_kinds, hill_climb_options=hco, persistent_max_cells=persistent_max_cells,
                     adaptive=adaptive)
    if whole_again_after > 0 and "full" in stats:
        def whole_again() -> bool:
            nonlocal bound
            before, first = inc.obj, stats["full"]
            b = _whole_model(inst, inc, stats, deadline, share=whole_again_share, max_cells=full_max_cells,
                             node_limit=full_node_limit, saturation=full_saturation, secants=full_secants)
            if stats["full"] is not first:
                stats.setdefault("full_again", []).append(stats["full"])
                stats["full"] = first
            if b is not None:
                bound = b if bound is None else max(bound, b)
            if stats["proof"]:
                rounds.bound = inc.obj
            return inc.obj < before

        rounds.whole_again, rounds.whole_again_after = whole_again, whole_again_after
    t_c = time.perf_counter()
    rounds.run()
    stats["rounds_s"] = time.perf_counter() - t_c
    stats["neighbourhoods_per_s"] = stats["rounds"] / stats["rounds_s"] if stats["rounds_s"] > 0 else 0.0
    if rounds.bound is not None:
        bound = rounds.bound
    res = _result(hc, inc, stats, bound, rounds.stopped_by(), t0)
    return hill_climb.certify(res, inst, given, bound_time_limit)
