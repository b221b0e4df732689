"""The claim contract and the one verdict function (``placement.app.reproduce.claims``).

Hand-made cases of every verdict category, a failed precondition turning a would-be "no" into
"off-regime", calibration statuses, the leak check over every registered paper, and bad
declarations as one-line errors."""

from __future__ import annotations

import csv
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement.app import reproduce as rp
from placement.app.reproduce.claims import (
    VERDICTS,
    Choice,
    ClaimSpec,
    Knob,
    Measure,
    Number,
    PaperSpec,
    Precondition,
    calibration_status,
    leaks,
    verdict,
)
from placement.errors import InstanceError

# -- the verdict function on hand-made cases --------------------------------------------------------


def test_effect_inside_the_widened_range_holds():
    # paper: -19% to -36%; tolerance 0.25 widens magnitudes to [0.1425, 0.45]
    assert verdict([-0.20, -0.30, -0.25], -0.36, -0.19, tolerance=0.25).category == "holds"
    assert verdict([-0.44, -0.43, -0.44], -0.36, -0.19, tolerance=0.25).category == "holds"


def test_effect_overshoot_and_undershoot_are_direction_only():
    over = verdict([-0.50, -0.48, -0.55], -0.36, -0.19, tolerance=0.25)
    under = verdict([-0.05, -0.10, -0.08], -0.36, -0.19, tolerance=0.25)
    assert (over.category, under.category) == ("direction only", "direction only")
    assert over.detail.startswith("over") and under.detail.startswith("under")


def test_effect_wrong_sign_on_every_seed_is_no_and_straddling_is_not_decided():
    assert verdict([0.1, 0.2, 0.0], -0.36, -0.19, tolerance=0.25).category == "no"
    assert verdict([-0.3, 0.1, -0.2], -0.36, -0.19, tolerance=0.25).category == "not decided"


def test_ratio_claims_use_their_null():
    # "1.6x faster": no effect at 1.0; 1.5x is inside 0.6 * (1 +- 0.25) from 1
    assert verdict([1.5, 1.55, 1.7], 1.6, 1.6, tolerance=0.25, null=1.0).category == "holds"
    assert verdict([0.98, 0.99, 0.97], 1.6, 1.6, tolerance=0.25, null=1.0).category == "no"
    assert verdict([1.05, 1.1, 1.08], 1.6, 1.6, tolerance=0.25, null=1.0).category == "direction only"


def test_bounds():
    # "below 1.3% at all times"
    assert verdict([0.001, 0.01, 0.012], -math.inf, 0.013, tolerance=0.0, kind="bound").category == "holds"
    assert verdict([0.02, 0.05, 0.10], -math.inf, 0.013, tolerance=0.0, kind="bound").category == "no"
    assert verdict([0.01, 0.05, 0.012], -math.inf, 0.013, tolerance=0.0, kind="bound").category == "not decided"
    # "around 90%" with a 5-point tolerance of the magnitude
    assert verdict([0.88, 0.9, 0.93], 0.9, 0.9, tolerance=0.05, kind="bound").category == "holds"


def test_failed_precondition_makes_a_no_off_regime():
    would_be = verdict([0.5, 0.4, 0.6], 7.0, 7.0, tolerance=0.25, null=1.0)
    assert would_be.category == "no"
    got = verdict([0.5, 0.4, 0.6], 7.0, 7.0, tolerance=0.25, null=1.0, precondition_ok=[False, False, True],
                  failed="fragmentation >= 0.95 measured 0.7, 0.6, 0.97")
    assert got.category == "off-regime" and "2 of 3" in got.detail and "0.7" in got.detail


def test_precondition_on_a_majority_judges_on_those_seeds():
    # the seed where the precondition fails (and the sign is wrong) is left out
    got = verdict([-0.3, 0.2, -0.25], -0.36, -0.19, tolerance=0.25, precondition_ok=[True, False, True])
    assert got.category == "holds" and got.seeds_judged == 2


def test_not_comparable_and_uncalibrated():
    assert verdict([-0.3] * 3, -0.36, -0.19, tolerance=0.25, comparable=False,
                   not_comparable="MAST and federated coincide").category == "not comparable"
    assert verdict([None, None], -0.36, -0.19, tolerance=0.25).category == "not comparable"
    got = verdict([-0.3] * 3, -0.36, -0.19, tolerance=0.25, uncalibrated=["workload sigma (not converged)"])
    assert got.category == "uncalibrated" and "workload sigma" in got.detail


@given(st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=7), st.randoms(use_true_random=False))
def test_verdict_depends_on_the_values_not_their_order(xs, rnd):
    shuffled = list(xs)
    rnd.shuffle(shuffled)
    a = verdict(xs, -0.36, -0.19, tolerance=0.25)
    b = verdict(shuffled, -0.36, -0.19, tolerance=0.25)
    assert a.category == b.category in VERDICTS
    # flipping every value and the range flips nothing
    c = verdict([-x for x in xs], 0.19, 0.36, tolerance=0.25)
    assert c.category == a.category


# -- the declaration ---------------------------------------------------------------------------------


def _spec(**kw) -> PaperSpec:
    base = dict(
        paper="toy", tolerance=0.25,
        numbers=(Number("jct.claim", -0.36, -0.19, "Fig. 11a", "claim", "-19% to -36%"),
                 Number("tiresias.median", 707.0, 707.0, "Table 2", "baseline", "707 h"),
                 Number("alloc.claim", 98.0, 98.0, "Fig. 5", "claim", "98%")),
        claims=(ClaimSpec("jct", "Dally lowers mean JCT vs Tiresias", "jct.claim", "mean JCT", baseline="tiresias",
                          preconditions=(Precondition("load", "offered load", ">=", 0.9, "§5.1"),),
                          depends_on=("sigma", "placement rule"), unit="%", scale=100),),
        knobs=(Knob("sigma", ("tiresias.median",), 0.25),),
        choices=(Choice("placement rule", "random", "ours, not fitted", affects=("jct",)),),
        measures=(Measure("t99", "time to 99% finished", "the paper reports makespan"),))
    return PaperSpec(**(base | kw))


@pytest.mark.parametrize("build, field", [
    (lambda: Number("x", math.nan, 1.0, "Fig. 1", "claim"), "number x: range"),
    (lambda: Number("x", 2.0, 1.0, "Fig. 1", "claim"), "number x: range"),
    (lambda: Number("x", 1.0, 1.0, "", "claim"), "number x: source"),
    (lambda: Number("x", 1.0, 1.0, "Fig. 1", "headline"), "number x: role"),
    (lambda: Precondition("frag", "fragmentation", "about", 0.95), "precondition frag: op"),
    (lambda: Precondition("frag", "fragmentation", ">=", None), "precondition frag: threshold"),
    (lambda: Knob("sigma", ("t",), 0), "knob sigma: tolerance"),
    (lambda: Knob("sigma", (), 0.1), "knob sigma: targets"),
    (lambda: Choice("rule", 1, "by taste"), "choice rule: how"),
    (lambda: ClaimSpec("c", "text", "", "metric"), "claim c: number"),
    (lambda: _spec(claims=(ClaimSpec("c", "t", "nope", "m"),)), "claim c: number"),
    (lambda: _spec(claims=(ClaimSpec("c", "t", "tiresias.median", "m"),)), "claim c: number"),
    (lambda: _spec(claims=(ClaimSpec("c", "t", "jct.claim", "m", depends_on=("ghost",)),)), "claim c: depends_on"),
    (lambda: _spec(knobs=(Knob("sigma", ("missing",), 0.1),)), "knob sigma: targets"),
    (lambda: _spec(tolerance=1.5), "paper toy: tolerance"),
])
def test_bad_declarations_are_one_line_errors(build, field):
    with pytest.raises(InstanceError) as e:
        build()
    assert str(e.value).startswith(field) and "\n" not in str(e.value)


def test_leaks_declared_and_by_value():
    clean = _spec()
    assert leaks(clean) == []
    fed = _spec(knobs=(Knob("sigma", ("jct.claim",), 0.25),))
    assert any("knob 'sigma' is fitted to 'jct.claim'" in x for x in leaks(fed))
    warm = _spec(choices=(Choice("placement rule", "random", "ours, not fitted"),
                          Choice("warm_fill", 0.98, "ours, not fitted")))
    assert leaks(warm) == ["choice 'warm_fill' = 0.98 equals claim number 'alloc.claim' (98%, Fig. 5)"]


def test_every_registered_paper_declares_a_spec_without_leak():
    reps = rp.reproductions()
    assert set(reps) >= {"mast", "cassini", "hived", "dally"}
    for name, rep in reps.items():
        assert isinstance(rep.spec, PaperSpec), f"{name} declares no PaperSpec"
        assert rep.spec.paper == name and rep.seeds >= 5
        assert leaks(rep.spec) == [], name


def test_calibration_status():
    assert calibration_status([{"status": "converged"}] * 2) == "converged"
    assert calibration_status([{"status": "converged"}, {"status": "at the grid's edge"}]) == "at the grid's edge"
    assert calibration_status([{"status": "converged"}, {"status": "not converged"}]) == "not converged"
    assert calibration_status([]) == "not converged"


# -- through a reproduction --------------------------------------------------------------------------


def _toy_run(converge: bool, load: float):
    def run(ctx: rp.Context) -> None:
        ctx.calibrate(knob="sigma", value=2.5, target="tiresias.median", ours=707.0 * (1.1 if converge else 1.5),
                      edge=not converge)
        ctx.judge("jct", [-0.25, 0.05, -0.30], measured={"load": [load, load, load]})
        ctx.report_measure("t99", [1.0, 2.0, 3.0], unit=" h")
    return run


@pytest.mark.parametrize("converge, load, want", [(True, 1.0, "not decided"), (False, 1.0, "uncalibrated"),
                                                   (True, 0.5, "off-regime")])
def test_reproduction_writes_the_contract(monkeypatch, tmp_path, converge, load, want):
    rep = rp.Reproduction("toy", "A toy paper", "toy", _toy_run(converge, load), seeds=5, quick_seeds=3, spec=_spec())
    monkeypatch.setattr(rp, "reproductions", lambda: {"toy": rep})
    ctx = rp.run_reproduction("toy", str(tmp_path / "out"), quick=True)
    doc = json.loads((tmp_path / "out" / "claims.json").read_text())
    (c,) = doc["claims"]
    assert c["verdict"] == want and c["range"] == [-0.36, -0.19] and c["source"] == "Fig. 11a"
    assert c["role"] == "claim" and c["preconditions"][0]["measured"] == [load] * 3
    assert {d["name"]: d["kind"] for d in c["depends_on"]} == {"sigma": "knob", "placement rule": "choice"}
    assert doc["counts"] == {want: 1} and doc["measures"][0]["key"] == "t99"
    cal = list(csv.DictReader((tmp_path / "out" / "calibration.csv").open()))
    assert cal[0]["status"] == ("converged" if converge else "at the grid's edge")
    assert float(cal[0]["error"]) == pytest.approx(0.1 if converge else 0.5)
    assert float(cal[0]["abs_error"]) == pytest.approx(707.0 * (0.1 if converge else 0.5))
    choices = list(csv.DictReader((tmp_path / "out" / "choices.csv").open()))
    assert choices == [{"choice": "placement rule", "value": "random", "how": "ours, not fitted", "affects": "jct",
                        "derived_from": ""}]
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Verdicts: 1 {want}" in report and "ours, not fitted: placement rule" in report
    assert ctx.counts_line() == f"1 {want}"
    fragment = (tmp_path / "out" / "measured" / "toy-reproduce.md").read_text()
    assert f"Verdicts (1 claims): 1 {want}." in fragment and f"| {want} |" in fragment


def test_calibrating_on_a_claim_number_is_refused(tmp_path):
    spec = _spec(knobs=(Knob("sigma", ("tiresias.median",), 0.25),))
    ctx = rp.Context("toy", "t", tmp_path, quick=True, seeds=[0], spec=spec)
    with pytest.raises(InstanceError, match="is not one of its targets"):
        ctx.calibrate(knob="sigma", value=1, target="jct.claim", ours=1.0)
    with pytest.raises(InstanceError, match="precondition load"):
        ctx.judge("jct", [-0.3])   # its precondition was not measured


def test_a_full_run_with_a_spec_needs_five_seeds():
    with pytest.raises(InstanceError, match="at least 5 seeds"):
        rp.Reproduction("toy", "t", "s", lambda ctx: None, seeds=3, spec=_spec())


def test_a_reading_may_depend_on_one_knob_of_two(tmp_path):
    """``depends_on=`` replaces the claim's knobs for one row: the reading whose knob converged is
    judged, the other reads uncalibrated; a name outside the spec is refused."""
    spec = _spec(numbers=_spec().numbers + (Number("gandiva.median", 51.0, 51.0, "Table 2", "baseline"),),
                 knobs=(Knob("sigma", ("tiresias.median",), 0.25), Knob("sigma-51h", ("gandiva.median",), 0.25)),
                 claims=(ClaimSpec("jct", "Dally lowers mean JCT", "jct.claim", "mean JCT",
                                   depends_on=("sigma", "sigma-51h")),))
    ctx = rp.Context("toy", "t", tmp_path, quick=True, seeds=[0, 1], spec=spec)
    ctx.calibrate(knob="sigma", value=1, target="tiresias.median", ours=700.0)
    ctx.calibrate(knob="sigma-51h", value=1, target="gandiva.median", ours=500.0)
    both = ctx.judge("jct", [-0.3, -0.25])
    one = ctx.judge("jct", [-0.3, -0.25], depends_on=("sigma",), reading="510 h")
    assert (both.verdict, one.verdict) == ("uncalibrated", "holds")
    with pytest.raises(InstanceError, match="depends_on"):
        ctx.judge("jct", [-0.3, -0.25], depends_on=("ghost",))
    from placement.app.reproduce.fidelity import fidelity_block

    doc = {"paper": "toy", "command": "c", "seeds": 2, "elapsed_s": 1.0, "logs": 0, "replay_ok": True,
           "claims": [c.document() for c in ctx.claims[:2]]}
    assert "| toy | Dally lowers mean JCT [510 h] |" in fidelity_block([doc])
