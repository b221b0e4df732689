"""The CASSINI reproduction's measures reuse the engine's link model
(:func:`placement.app.reproduce.cassini_sim._measure_with`): on a short Themis / Th+CASSINI pair
they are the same floats (==, NaN as NaN) as the measures computed the earlier way, on a fresh
:class:`~placement.sim.links.LinkSharing` with the run's agent rule (``agent_share`` from its
``stats``), and measuring solved no fluid component the engine had not already solved."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import numpy as np

from placement.app.reproduce import cassini_sim as cs
from placement.app.reproduce.context import Context
from placement.sim.links import LinkSharing


@dataclass
class _Recording(Context):
    """A context that keeps each run's result and the link model it handed back."""

    runs: list = field(default_factory=list)

    def simulate(self, *args, **kw):
        res, rows, summ = super().simulate(*args, **kw)
        self.runs.append((res, self.last_links, kw.get("agent", False)))
        return res, rows, summ


def _fresh(exp, trace, log, cluster, agent) -> dict:
    """The measures as computed before the reuse: a fresh model, the agent's share from its stats."""
    own = LinkSharing(cluster, agent=agent)
    m = cs.measure(exp, trace, log, own)
    seen = own.stats["agent_on"] + own.stats["agent_off"]
    m["agent_share"] = (own.stats["agent_on"] / seen if seen else None) if agent else None
    return m


def test_measures_from_the_engines_link_model_equal_a_fresh_models(tmp_path):
    # seed 2: a short trace on which the agent meets both compatible and incompatible sets
    ctx = _Recording(paper="cassini", title="reuse", out=tmp_path, quick=True, seeds=[2])
    cluster, trace = cs.testbed(), cs.experiment_trace("poisson", 2, 0.08)
    out, logs = cs.run_pair(ctx, "poisson", cluster, trace, 2, "reuse", keep_log=False)
    assert [p for p in out] == ["themis", "themis+cassini"] and len(ctx.runs) == 2
    for (res, model, agent), pol in zip(ctx.runs, out, strict=True):
        assert model is res.link_model and model.agent == bool(agent)
        engine = res.stats["links"]              # the model's counts when the engine finished
        assert engine["fluid_runs"] > 0
        # measuring solved no component anew: every one came from the engine's cache
        assert model.stats["fluid_runs"] == engine["fluid_runs"]
        assert model.stats["cache_hits"] > engine["cache_hits"]
        fresh = _fresh("poisson", trace, logs[pol], cluster, agent)
        got = {k: out[pol][k] for k in fresh}
        np.testing.assert_equal(got, fresh)      # exact, NaN equal to NaN
    assert 0 < out["themis+cassini"]["agent_share"] < 1    # the agent acted on some sets, not all
    assert pickle.loads(pickle.dumps(ctx.runs[0][0])).link_model is None   # not shipped with --workers
