"""The catalogue's profiles against what the CASSINI paper states (catalogue docstring): Table 2's
scores at its configuration, the compatible and incompatible pairs of §2.3, §5.2 and Fig. 12, and
Table 2's snapshots in the fluid model (Themis starting the jobs together)."""

from __future__ import annotations

import numpy as np
import pytest

from placement.app.reproduce.cassini_snapshots import SNAPSHOTS, snapshot, themis_times
from placement.cassini.catalogue import CATALOGUE, VARIANTS, profile_of, variant_profile
from placement.cassini.evaluation import link_score
from placement.cassini.fluid import SECTION_2_2_GOODPUT


def _best_pair_score(a, b, capacity=50.0):
    """Brute force over every integer shift of ``b`` (its period's worth): the best score."""
    return max(link_score([a, b], [0, s], capacity) for s in range(b.iteration_time))


@pytest.mark.parametrize("pair,compatible", [
    (("WideResNet101", "VGG16"), True),      # §2.3: shifting VGG16 interleaves them perfectly
    (("VGG19", "VGG19"), True),              # §2.2, Fig. 2(c): two VGG19 interleave at a shift
    (("BERT", "VGG19"), False),              # §2.3: no shift interleaves BERT and VGG19
    (("XLM", "WideResNet101"), False),       # §5.2, Fig. 11: XLM and WideResNet101 not compatible
    (("GPT-1", "GPT-2"), True),              # §5.4, Fig. 12: GPT-2-A placed with a compatible GPT-1
    (("GPT-2", "GPT-3"), False),             # §5.4, Fig. 12: GPT-2-A and GPT-3 not compatible
])
def test_the_papers_compatible_and_incompatible_pairs(pair, compatible):
    a, b = profile_of(pair[0], "a"), profile_of(pair[1], "b")
    score = _best_pair_score(a, b)
    assert (score == pytest.approx(1.0)) == compatible


def test_periods_are_one_common_period_or_its_quarter_fitted_on_themis_column():
    from placement.app.reproduce.cassini_snapshots import fit_period, fitted_common_period
    from placement.app.reproduce.cassini_spec import SPEC

    common = CATALOGUE["VGG16"][1]
    assert {it for _, it, _ in CATALOGUE.values()} == {common, common // 4}
    assert CATALOGUE["ResNet50"][1] * 4 == common
    for model, _ in VARIANTS.values():
        assert model in CATALOGUE
    # the catalogue's period is the fit on Table 2's Themis column (never its Th+CASSINI column)
    assert fitted_common_period() == common
    for k in range(1, 6):
        period, ours = fit_period(k, "paper", SECTION_2_2_GOODPUT)
        paper = SPEC.by_key[f"table2.themis.s{k}"].mid
        assert SPEC.by_key[f"table2.themis.s{k}"].role == "baseline"
        assert abs(ours / paper - 1) <= 0.05 and period % 5 == 0
        # the fluid model's times scale with a common period: the fit at twice the period doubles
        a = themis_times(SNAPSHOTS[k - 1][0], "paper", SECTION_2_2_GOODPUT, 100)
        b = themis_times(SNAPSHOTS[k - 1][0], "paper", SECTION_2_2_GOODPUT, 200)
        assert b == pytest.approx([2 * x for x in a], rel=0.02)


def test_snapshot3_variants_scale_compute_with_the_batch():
    # Table 2's batch sizes: VGG19 1024 of 1400, VGG16 1200 of 1700, Up 0.45 at the base batch
    for variant, batch, base in (("VGG19 (1024)", 1024, 1400), ("VGG16 (1200)", 1200, 1700)):
        f = VARIANTS[variant][1]["comm_fraction"]
        up, down = 0.45, 0.55 * batch / base
        assert f == pytest.approx(up / (up + down), abs=1e-3)


@pytest.mark.parametrize("k", range(len(SNAPSHOTS)))
def test_table2_scores_at_the_papers_configuration(k):
    models, _, _, paper_score = SNAPSHOTS[k]
    r = snapshot(models, seed=1, reading="paper", goodput=SECTION_2_2_GOODPUT, adjust_s=5.0)
    assert abs(r["score"] - paper_score) <= 0.1
    # the score is the reference evaluation of the logged shifts on the variants' profiles
    profs = [variant_profile(m, f"j{i}") for i, m in enumerate(models)]
    assert link_score(profs, [int(round(s)) for s in r["shifts"]], 50.0) == pytest.approx(r["score"], abs=1e-9)


def test_snapshot1_is_fully_compatible_runs_ideal_and_themis_together_is_slower():
    models = SNAPSHOTS[0][0]
    r = snapshot(models, seed=1, reading="paper", goodput=SECTION_2_2_GOODPUT)
    assert r["score"] >= 0.95
    # score 1 and one capacity (fluid.py): the shifted jobs run their ideal iterations exactly
    assert r["cassini"] == pytest.approx(r["ideal"], rel=1e-9)
    # Themis starts them together: both Up phases collide every iteration; each stretches to
    # u * b / 22 Gbps while both send (0.88 * 50 / 2) until the shorter one ends
    assert all(t > i * 1.2 for t, i in zip(r["themis"], r["ideal"], strict=True))
    assert snapshot(models, seed=2, reading="paper", goodput=SECTION_2_2_GOODPUT)["themis"] == \
        pytest.approx(r["themis"])            # no random phases: the seed does not move Themis
    assert np.all(np.asarray(r["adjust_by_noise"][0.0]) == 0.0)     # noise-free: the agent never acts


def test_snapshot1_regimes_period_mismatch_and_up_bandwidth():
    from placement.app.reproduce.cassini_snapshots import SNAPSHOT_KNOBS, snapshot_regimes

    class Rows:
        seeds = [1]

        def __init__(self):
            self.rows = []

        def regime(self, **row):
            self.rows.append(row)

    ctx = Rows()
    out = snapshot_regimes(ctx, goodput=SECTION_2_2_GOODPUT)
    assert len(ctx.rows) == sum(len(v) for v in SNAPSHOT_KNOBS.values())
    r = snapshot(SNAPSHOTS[0][0], seed=1, reading="paper", goodput=SECTION_2_2_GOODPUT)
    at_paper = float(np.mean(r["themis"]) / np.mean(r["cassini"]))
    assert out[("period mismatch", 0.0)] == pytest.approx([at_paper])      # the paper's configuration
    assert out[("Up bandwidth", 45.0)] == pytest.approx([at_paper])        # the catalogue's 45 Gbps
    assert out[("Up bandwidth", 25.0)] == pytest.approx([1.0])             # 25 + 25 fits: nothing to gain


def test_gpt_shapes_per_fig1_and_only_dlrm_model_parallel_on_fig11s_trace():
    from placement.cassini.catalogue import PROFILES
    from placement.sim.cassini_workload import ALL_MODELS, MODEL_PARALLEL, poisson_trace

    # Fig. 1: GPT-1 data parallel (a), GPT-2 pipeline (b), GPT-3 hybrid (d)
    assert [CATALOGUE[m][0] for m in ("GPT-1", "GPT-2", "GPT-3")] == ["data_parallel", "pipeline_parallel",
                                                                        "hybrid_parallel"]
    # §5.2: on Fig. 11's trace only DLRM is model-parallel; Fig. 12's mix keeps the GPT shapes
    assert len(ALL_MODELS) == 13 and len(CATALOGUE) == 13
    assert [m for m in ALL_MODELS if PROFILES[m][0] != "data_parallel"] == ["DLRM"]
    assert {m for j in poisson_trace(3, hours=0.5).jobs for m in [j.model]} <= set(ALL_MODELS)
    assert [PROFILES[m][0] for m in MODEL_PARALLEL] == ["data_parallel", "pipeline_parallel", "hybrid_parallel",
                                                        "pipeline_parallel"]
