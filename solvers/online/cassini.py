"""CASSINI as a plug-in of any simulator policy (CASSINI §4, Fig. 9): ``<base>+cassini``.

The paper augments Themis and Pollux (§5.1's Th+CASSINI and Po+CASSINI, "all CASSINI-related
parameters ... the same") and says the module is scheduler-agnostic; here it wraps Themis,
Pollux (:class:`placement.solvers.online.pollux.Pollux`, unchanged), Tiresias and Dally alike (:class:`CassiniPlugin` is a mixin over the base class, so the
base's options stay ``--option`` settable). On a cluster with a network
(:mod:`placement.sim.links`), at every call in which the base starts jobs:

1. **Candidates** (§4.2 step 1): the base's own placement is candidate 0; then, as in §4.2's
   example of two winners that may trade workers, the placements of two starting jobs of the
   same GPU count (and type) swapped; up to ``candidates`` in all, the rest drawn (seeded) with
   the *same fairness outcome*: the same jobs
   start, each on GPUs of the same tier (machine / rack / cluster / network) as the base gave
   it, hence at the same performance-model rate, on the GPUs free after the base's preemptions.
   Our generator: a job takes a uniformly drawn group of its tier with enough free GPUs, and
   inside it the machines with the most free GPUs first (ties at random); a draw at another
   tier, or one already seen, is dropped. Under an elastic base (Themis re-tuning workers per
   lease) a job's candidates keep the worker count the base gave it; swaps need equal counts.
2. **Ranking** (Algorithm 2): every candidate, with the running jobs that share links with a
   starting job in some candidate (directly or through other jobs; the rest keep their
   shifts), is an instance
   of :mod:`placement.cassini.instance` (the jobs' synthetic profiles of
   :mod:`placement.cassini.catalogue`), ranked by :func:`placement.solvers.affinity.rank_candidates`
   (per-link rotation search, Affinity-graph BFS, ``precision`` degrees). The top candidate's
   GPUs replace the base's. ``stats()["cassini"]["mean_link_sets"]``: distinct link sets (each
   starting job's links) per ranking, how much the candidates differ for the network.
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

from typing import Any

import networkx as nx
import numpy as np
from placement.solvers.affinity import rank_candidates
from placement.solvers.online.dally import Dally
from placement.solvers.online.pollux import Pollux
from placement.solvers.online.themis import Themis
from placement.solvers.online.tiresias import Tiresias

from placement.cassini.catalogue import PROFILES, profile_of
from placement.cassini.instance import Candidate, build_instance
from placement.options import PosFloat, PosInt
from placement.sim.placement import usable_mask
from placement.sim.policy import Preempt, Shift, Start

__all__ = ["CassiniPlugin", "ThemisCassini", "PolluxCassini", "TiresiasCassini", "DallyCassini"]


class CassiniPlugin:
    """Mixin: CASSINI's candidate ranking and time shifts over the base policy it precedes."""

    def __init__(self, candidates: PosInt = 10, precision: PosFloat = 5.0, **base_options: Any):
        super().__init__(**base_options)
        if int(candidates) < 1:
            raise ValueError(f"candidates: must be >= 1, got {candidates}")
        steps = 360.0 / float(precision)
        if not (float(precision) <= 360.0 and abs(steps - round(steps)) <= 1e-9):
            raise ValueError(f"precision: must divide 360 degrees into a whole number of angles, got {precision}")
        self._n_candidates, self._precision = int(candidates), float(precision)
        self._cassini = {"rankings": 0, "candidates": 0, "moved": 0, "shifts": 0, "score_sum": 0.0,
                         "link_sets": 0}

    def setup(self, view, seed: int) -> None:
        super().setup(view, seed)
        self._rng = np.random.default_rng(seed)
        self._seed = seed

    def schedule(self, view, events):
        out = list(super().schedule(view, events) or ())
        starts = [d for d in out if isinstance(d, Start)]
        if view.links is None or not starts:
            return out
        stopped = {d.job_id for d in out if isinstance(d, Preempt)}
        free = view.free.copy()
        for j in stopped:
            if j in view.running:
                free[list(view.running[j].gpus)] = True
        base = {d.job_id: tuple(int(x) for x in d.gpus) for d in starts}
        cands = self._candidates(view, free, base)
        running = {j: r.gpus for j, r in view.running.items() if j not in stopped}
        chosen, shifts, score = self._rank(view, running, cands)
        self._cassini["rankings"] += 1
        self._cassini["candidates"] += len(cands)
        self._cassini["link_sets"] += len({tuple(sorted((j, view.links.links(g)) for j, g in c.items()))
                                           for c in cands})
        self._cassini["moved"] += chosen is not cands[0]
        self._cassini["score_sum"] += score or 0.0
        # preemptions first: a chosen candidate may use GPUs a preemption of this call frees
        out = ([d for d in out if isinstance(d, Preempt)]
               + [Start(d.job_id, chosen[d.job_id]) if isinstance(d, Start) else d
                  for d in out if not isinstance(d, Preempt)])
        now_ms = view.now * 1000.0
        for j, s in sorted(shifts.items()):
            if j in running or j in chosen:
                period = PROFILES[view.job(j).model][1]
                out.append(Shift(j, float((now_ms + s) % period)))
                self._cassini["shifts"] += 1
        return out

    # ------------------------------------------------------------------ step 1: candidates
    def _candidates(self, view, free: np.ndarray, base: dict) -> list[dict]:
        cluster = view.cluster
        first = cluster.machine_first
        groups = {"machine": np.arange(cluster.n_machines), "rack": cluster.machine_rack,
                  "cluster": cluster.dcluster[first], "network": np.zeros(cluster.n_machines, dtype=np.int64)}
        cands, seen = [base], {tuple(sorted(base.items()))}
        # §4.2's example: jobs winning the same number of workers may trade their placements
        ids = sorted(base)
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                ja, jb = view.job(a), view.job(b)
                if (len(cands) < self._n_candidates and len(base[a]) == len(base[b])
                        and ja.gpu_type == jb.gpu_type):
                    alt = {**base, a: base[b], b: base[a]}
                    key = tuple(sorted(alt.items()))
                    if key not in seen:
                        seen.add(key)
                        cands.append(alt)
        for _ in range(3 * (self._n_candidates - 1)):
            if len(cands) >= self._n_candidates:
                break
            f = free.copy()
            alt = {}
            for j, gpus in base.items():
                job = view.job(j)
                tier = cluster.tier(gpus)
                g = self._draw(cluster, f, job, len(gpus), groups[tier])
                if g is None or cluster.tier(g) != tier:
                    break
                f[list(g)] = False
                alt[j] = g
            else:
                key = tuple(sorted(alt.items()))
                if key not in seen:
                    seen.add(key)
                    cands.append(alt)
        return cands

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
        inst = build_instance(links.topology, profiles, cs, precision_deg=self._precision)
        top = rank_candidates(inst, seed=self._seed)[0]
        chosen = cands[int(top["candidate"][1:])]
        return chosen, {j: float(v) for j, v in (top["shifts"] or {}).items()}, top["score"]

    @staticmethod
    def _affected(view, running: dict, cands: list[dict]) -> list[str]:
        """Jobs (with a profile) that share links, in any candidate, with a job starting now,
        directly or through other jobs: the others' shifts and scores cannot change."""
        links = view.links
        g = nx.Graph()
        for c in cands:
            for j, gpus in {**running, **c}.items():
                if view.job(j).model in PROFILES:
                    g.add_node(("job", j))
                    g.add_edges_from((("job", j), ("link", lk)) for lk in links.links(gpus))
        keep: set[str] = set()
        for j in cands[0]:
            if ("job", j) in g:
                keep.update(n[1] for n in nx.node_connected_component(g, ("job", j)) if n[0] == "job")
        return sorted(keep)

    def stats(self) -> dict[str, Any]:
        c = self._cassini

        def per(k: str) -> float | None:
            return c[k] / c["rankings"] if c["rankings"] else None

        return {**super().stats(), "cassini": {**{k: v for k, v in c.items() if k != "score_sum"},
                                               "mean_score": per("score_sum"), "mean_link_sets": per("link_sets")}}


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
