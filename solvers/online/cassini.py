"""CASSINI as a plug-in of any simulator policy (CASSINI §4, Fig. 9): ``<base>+cassini``.

The paper augments Themis and Pollux (§5.1's Th+CASSINI and Po+CASSINI, "all CASSINI-related
parameters ... the same") and says the module is scheduler-agnostic; here it wraps Themis,
Pollux (:class:`placement.solvers.online.pollux.Pollux`, unchanged), Tiresias and Dally alike (:class:`CassiniPlugin` is a mixin over the base class, so the
base's options stay ``--option`` settable). On a cluster with a network
(:mod:`placement.sim.links`), at every call in which the base starts jobs:

1. **Candidates** (§4.2 step 1), from the auction's reassignment (``candidate_rule="reassignment"``,
   the default): the base's placement is candidate 0; the *winners* of this call are every job it
   starts (new winners, jobs moved or grown, losers re-placed with fewer workers) and, under a
   base with leases (Themis: ``expired_now``), the winners whose lease expired at this auction and
   that kept their GPUs; the *pool* is the GPUs free now, those the base's preemptions give back
   (losers, moved and grown jobs) and the renewed winners' own. Then, as in §4.2's example of two
   winners that may trade workers, the placements of two winners of the same GPU count (and type)
   swapped; up to ``candidates`` in all, the rest whole reassignments drawn (seeded) with the
   *same fairness outcome*: every winner gets its worker count at the tier (machine / rack /
   cluster / network) the base gave it, hence at the same performance-model rate, from the pool.
   A winner takes a uniformly drawn group of its tier with enough pool GPUs, and inside it the
   machines with the most pool GPUs first (ties at random); winners are drawn largest first (ties
   in a drawn order) on even attempts and in a drawn order on odd ones; a draw at another tier,
   or one already seen, is dropped. A renewed winner the chosen candidate moves is preempted and
   started there at once (keeping its work, a new lease already given). Under an elastic base a
   job's candidates keep the worker count the base gave it; swaps need equal counts. The plug-in
   ranks at every call with a winner: a call that only renews leases ranks too, unless its
   renewed winners have no other placement (one candidate: nothing would change).
   ``candidate_rule="starting"`` is the earlier rule: only the jobs starting now move, onto the
   GPUs free now (after the base's preemptions), drawn in the base's order, ranked only when a job
   starts. ``stats()["cassini"]``: ``mean_link_sets`` (distinct link sets, each winner's links,
   per ranking: how much the candidates differ for the network), ``share_one_link_set`` (rankings
   with no choice), ``renewed`` / ``renewed_moved`` (renewed winners in the reassignment / moved).
2. **Ranking** (Algorithm 2): every candidate, with the running jobs that share links with a
   starting job in some candidate (directly or through other jobs; the rest keep their
   shifts), is an instance
   of :mod:`placement.cassini.instance` (the jobs' synthetic profiles of
   :mod:`placement.cassini.catalogue`), ranked by :func:`placement.solvers.affinity.rank_candidates`
   (per-link rotation search, Affinity-graph BFS, ``precision`` degrees). The top candidate's
   GPUs replace the base's.
3. **Shifts** (Algorithm 1): the top candidate's unique time shifts are applied to every running
   job as :class:`~placement.sim.policy.Shift` decisions: a job's phase becomes
   ``(now in ms + shift) mod its iteration time``. The agents' re-adjustments on drift (§4.2
   step 3) belong to the link model, not to the policy: with
   ``LinkSharing(cluster, agent=True)`` (the reproduction's ``+cassini`` runs) a worker of a
   compatible set waits for its planned start when its boundary drifts more than 5% of its
   iteration (:mod:`placement.sim.links`, "agent"); without it the link model counts the
   adjustments its drift would trigger (:func:`placement.sim.link_metrics.shift_adjustments`).

Jobs whose model is not in the catalogue take part in the base's decisions but not in the
ranking. On a cluster without a network the plug-in passes the base's decisions through.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from placement.solvers.affinity import rank_candidates
from placement.solvers.online.dally import Dally
from placement.solvers.online.pollux import Pollux
from placement.solvers.online.themis import Themis
from placement.solvers.online.tiresias import Tiresias

from placement.cassini.catalogue import PROFILES, profile_of
from placement.cassini.instance import Candidate, CassiniInstance, build_instance
from placement.options import PosFloat, PosInt
from placement.sim.link_check import link_components
from placement.sim.placement import usable_mask
from placement.sim.policy import Preempt, Shift, Start

#: how step 1 finds candidates (:class:`CassiniPlugin` ``candidate_rule``)
CANDIDATE_RULES = ("reassignment", "starting")

__all__ = ["CANDIDATE_RULES", "CassiniPlugin", "ThemisCassini", "PolluxCassini", "TiresiasCassini", "DallyCassini"]


class CassiniPlugin:
    """Mixin: CASSINI's candidate ranking and time shifts over the base policy it precedes."""

    def __init__(self, candidates: PosInt = 10, precision: PosFloat = 5.0,
                 candidate_rule: Literal["reassignment", "starting"] = "reassignment", **base_options: Any):
        super().__init__(**base_options)
        if int(candidates) < 1:
            raise ValueError(f"candidates: must be >= 1, got {candidates}")
        steps = 360.0 / float(precision)
        if not (float(precision) <= 360.0 and abs(steps - round(steps)) <= 1e-9):
            raise ValueError(f"precision: must divide 360 degrees into a whole number of angles, got {precision}")
        if candidate_rule not in CANDIDATE_RULES:
            raise ValueError(f"candidate_rule: must be one of {', '.join(CANDIDATE_RULES)}, got {candidate_rule!r}")
        self._n_candidates, self._precision = int(candidates), float(precision)
        self._rule = candidate_rule
        self._cassini = {"rankings": 0, "candidates": 0, "moved": 0, "shifts": 0, "score_sum": 0.0,
                         "link_sets": 0, "one_link_set": 0, "renewed": 0, "renewed_moved": 0}

    def setup(self, view, seed: int) -> None:
        super().setup(view, seed)
        self._rng = np.random.default_rng(seed)
        self._seed = seed

    def schedule(self, view, events):
        out = list(super().schedule(view, events) or ())
        if view.links is None:
            return out
        stopped = {d.job_id for d in out if isinstance(d, Preempt)}
        starts = {d.job_id: tuple(int(x) for x in d.gpus) for d in out if isinstance(d, Start)}
        # the reassignment (§4.2 step 1): besides the jobs starting now (new winners, jobs moved or
        # grown, losers re-placed with fewer workers), the winners whose lease expired at this
        # auction and that the base let keep their GPUs: their GPUs go back to the pool too
        renewed = {} if self._rule == "starting" else {
            j: tuple(int(x) for x in view.running[j].gpus) for j in getattr(self, "expired_now", ())
            if j in view.running and j not in stopped and j not in starts}
        if not starts and not renewed:
            return out
        free = view.free.copy()
        for j in stopped:
            if j in view.running:
                free[list(view.running[j].gpus)] = True
        for g in renewed.values():
            free[list(g)] = True
        base = {**starts, **renewed}
        cands = (self._candidates(view, free, base) if self._rule == "starting"
                 else self._reassignments(view, free, base))
        if not starts and len(cands) == 1:
            return out          # only renewals, and no other placement of them: nothing to rank
        running = {j: r.gpus for j, r in view.running.items() if j not in stopped}
        chosen, shifts, score = self._rank(view, running, cands)
        c = self._cassini
        c["rankings"] += 1
        c["candidates"] += len(cands)
        n_sets = len({tuple(sorted((j, view.links.links(g)) for j, g in cand.items())) for cand in cands})
        c["link_sets"] += n_sets
        c["one_link_set"] += n_sets == 1
        c["moved"] += chosen is not cands[0]
        c["score_sum"] += score or 0.0
        c["renewed"] += len(renewed)
        moved = sorted(j for j, g in renewed.items() if tuple(chosen[j]) != g)
        c["renewed_moved"] += len(moved)
        # preemptions first: a chosen candidate may use GPUs a preemption of this call frees; a
        # renewed job the chosen candidate moves restarts there at once (keeping its work)
        out = ([d for d in out if isinstance(d, Preempt)] + [Preempt(j) for j in moved]
               + [Start(d.job_id, chosen[d.job_id]) if isinstance(d, Start) else d
                  for d in out if not isinstance(d, Preempt)]
               + [Start(j, chosen[j]) for j in moved])
        now_ms = view.now * 1000.0
        for j, s in sorted(shifts.items()):
            if j in running or j in chosen:
                period = PROFILES[view.job(j).model][1]
                out.append(Shift(j, float((now_ms + s) % period)))
                c["shifts"] += 1
        return out

    # ------------------------------------------------------------------ step 1: candidates
    def _candidates(self, view, free: np.ndarray, base: dict) -> list[dict]:
        groups = self._groups(view.cluster)
        cands, seen = self._swaps(view, base)   # §4.2's example: equal worker counts trade placements
        for _ in range(3 * (self._n_candidates - 1)):
            if len(cands) >= self._n_candidates:
                break
            self._add(cands, seen, self._draw_at_tiers(view, free, base, list(base), groups))
        return cands

    def _swaps(self, view, base: dict) -> tuple[list[dict], set]:
        """Candidate 0 (``base``) and the placements where two winners of the same worker count
        and GPU type trade theirs, up to the candidate count; with the set of their keys."""
        cands, seen = [base], {tuple(sorted(base.items()))}
        ids = sorted(base)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                if (len(cands) < self._n_candidates and len(base[a]) == len(base[b])
                        and view.job(a).gpu_type == view.job(b).gpu_type):
                    self._add(cands, seen, {**base, a: base[b], b: base[a]})
        return cands, seen

    @staticmethod
    def _add(cands: list[dict], seen: set, alt: dict | None) -> None:
        """Append ``alt`` to ``cands`` unless it is None or already seen."""
        if alt is not None:
            key = tuple(sorted(alt.items()))
            if key not in seen:
                seen.add(key)
                cands.append(alt)

    def _draw_at_tiers(self, view, free: np.ndarray, base: dict, order: list, groups) -> dict | None:
        """A whole reassignment: each winner of ``order`` in turn drawn (seeded) from what is left
        of ``free``, its worker count at the tier ``base`` gave it; None when one finds no group
        there."""
        cluster = view.cluster
        f = free.copy()
        alt = {}
        for j in order:
            tier = cluster.tier(base[j])
            g = self._draw(cluster, f, view.job(j), len(base[j]), groups[tier])
            if g is None or cluster.tier(g) != tier:
                return None
            f[list(g)] = False
            alt[j] = g
        return alt

    def _reassignments(self, view, free: np.ndarray, base: dict) -> list[dict]:
        """§4.2 step 1 on the auction's reassignment: ``base`` holds every winner of this call (the
        jobs the base starts, moves, grows or re-places with fewer workers, and the winners whose
        lease expired and that kept their GPUs), ``free`` the pool (the GPUs free now, those the
        base's preemptions give back, the renewed winners' own). Candidate 0 is the base's; then
        winners of the same worker count and type trade placements (§4.2's example); then whole
        reassignments drawn (seeded) with the same fairness outcome: every winner gets its
        worker count at the tier the base gave it, from the pool. Draws place the winners largest
        first (ties in a drawn order) on even attempts and in a drawn order on odd ones: in a tight
        pool (the cluster full, the pool exactly the winners' GPUs) a fixed order leaves the later
        winners no group. A draw at another tier, or one already seen, is dropped."""
        groups = self._groups(view.cluster)
        cands, seen = self._swaps(view, base)
        ids = sorted(base)
        for attempt in range(6 * (self._n_candidates - 1)):
            if len(cands) >= self._n_candidates:
                break
            tie = self._rng.random(len(ids))
            order = ([ids[k] for k in np.lexsort((tie, [-len(base[j]) for j in ids]))] if attempt % 2 == 0
                     else [ids[k] for k in np.argsort(tie)])
            self._add(cands, seen, self._draw_at_tiers(view, free, base, order, groups))
        return cands

    @staticmethod
    def _groups(cluster) -> dict[str, np.ndarray]:
        """Each machine's group at every tier (machine, rack, dynamic cluster, the network)."""
        return {"machine": np.arange(cluster.n_machines), "rack": cluster.machine_rack,
                "cluster": cluster.dcluster[cluster.machine_first],
                "network": np.zeros(cluster.n_machines, dtype=np.int64)}

    def _draw(self, cluster, free: np.ndarray, job, n: int, group: np.ndarray) -> tuple[int, ...] | None:
        """``n`` free GPUs of ``job``'s type (its workers in the base's placement: ``job.gpus``, or
        fewer under an elastic base) in a uniformly drawn group of ``group`` that holds them."""
        mask = usable_mask(cluster, free, job.gpu_type)
        per_machine = np.add.reduceat(mask.astype(np.int64), cluster.machine_first)
        per_group = np.bincount(group, weights=per_machine)
        ok = np.flatnonzero(per_group >= n)
        if not ok.size:
            return None
        members = np.flatnonzero(group == self._rng.choice(ok))
        order = members[np.lexsort((self._rng.random(len(members)), -per_machine[members]))]
        taken: list[int] = []
        for m in order:
            ids = np.flatnonzero(mask[cluster.machine_first[m]:cluster.machine_first[m] + cluster.machine_gpus[m]])
            taken += (ids + cluster.machine_first[m]).tolist()[: n - len(taken)]
            if len(taken) == n:
                return tuple(sorted(taken))
        return None

    # ------------------------------------------------------------------ steps 2-3: rank, shifts
    def _rank(self, view, running: dict, cands: list[dict]) -> tuple[dict, dict, float | None]:
        links = view.links
        names = self._affected(view, running, cands)
        if not names:
            return cands[0], {}, None
        profiles = [profile_of(view.job(j).model, j) for j in names]
        cs = [Candidate(f"c{i}", tuple((j, links.servers({**running, **c}[j])) for j in names))
              for i, c in enumerate(cands)]
        inst = self._instance(links.topology, profiles, cs)
        top = rank_candidates(inst, seed=self._seed)[0]
        chosen = cands[int(top["candidate"][1:])]
        return chosen, {j: float(v) for j, v in (top["shifts"] or {}).items()}, top["score"]

    def _instance(self, topology, profiles: list, cs: list):
        """``build_instance(topology, profiles, cs, precision_deg=...)``, the same instance built
        faster: the first ranking of a run builds it (validated through its JSON form); later ones
        reuse that instance's copy of ``topology`` and the routes it gave each job's servers
        (cached by servers: a job's links are a function of its servers alone), so the instance's
        loaded links per candidate (its ``_loads``) are computed as it computes them, without routing
        again; the jobs are catalogue profiles and the candidates' servers the link model's, which
        the validation accepts."""
        cache = getattr(self, "_routes", None)
        if cache is None or cache[0] is not topology:
            inst = build_instance(topology, profiles, cs, precision_deg=self._precision)
            self._routes = (topology, inst, {})
            return inst
        _, first, routes = cache
        topo = first.topology
        inst = CassiniInstance(topo, tuple(profiles), tuple(cs), first.precision_deg, first.max_angles,
                               first.max_perimeter, "")
        loads = {}
        for c in inst.candidates:
            load: dict[str, list[str]] = {}
            for job, servers in c.placement:
                lks = routes.get(servers)
                if lks is None:
                    lks = routes[servers] = tuple(topo.job_links(servers))
                for lk in lks:
                    load.setdefault(lk, []).append(job)
            loads[c.name] = {lk: tuple(js) for lk, js in sorted(load.items())}
        inst.__dict__["_loads"] = loads   # the cached property's slot (the instance is frozen)
        for c in inst.candidates:
            for js in loads[c.name].values():
                if inst.perimeter(js) > inst.max_perimeter:   # load_instance's check
                    return build_instance(topology, profiles, cs, precision_deg=self._precision)
        return inst

    @staticmethod
    def _affected(view, running: dict, cands: list[dict]) -> list[str]:
        """Jobs (with a profile) that share links, in any candidate, with a job starting now,
        directly or through other jobs: the others' shifts and scores cannot change."""
        links = view.links
        # the union over candidates of the job-link graph: each job's links in any candidate
        has: dict[str, bool] = {}
        on: dict[str, tuple] = {}
        for c in cands:
            for j, gpus in {**running, **c}.items():
                if j not in has:
                    has[j] = view.job(j).model in PROFILES
                if has[j]:
                    on.setdefault(j, (set(),))[0].update(links.links(gpus))
        keep = {j for j in cands[0] if has.get(j)}
        for comp in link_components(on):
            if keep.intersection(comp):
                keep.update(comp)
        return sorted(keep)

    def stats(self) -> dict[str, Any]:
        c = self._cassini

        def per(k: str) -> float | None:
            return c[k] / c["rankings"] if c["rankings"] else None

        return {**super().stats(), "cassini": {**{k: v for k, v in c.items() if k != "score_sum"},
                                               "candidate_rule": self._rule,
                                               "mean_score": per("score_sum"), "mean_link_sets": per("link_sets"),
                                               "share_one_link_set": per("one_link_set")}}


class ThemisCassini(CassiniPlugin, Themis):
    """Th+CASSINI: Themis's auctions, CASSINI's candidate ranking and time shifts (§4.2)."""

    name = "themis+cassini"


class PolluxCassini(CassiniPlugin, Pollux):
    """Po+CASSINI: Pollux's goodput rounds, CASSINI's candidate ranking and time shifts (§5.1)."""

    name = "pollux+cassini"


class TiresiasCassini(CassiniPlugin, Tiresias):
    """Tiresias with the CASSINI plug-in (candidate ranking and time shifts)."""

    name = "tiresias+cassini"


class DallyCassini(CassiniPlugin, Dally):
    """Dally with the CASSINI plug-in (candidate ranking and time shifts)."""

    name = "dally+cassini"
