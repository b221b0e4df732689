"""Regime maps (``regimes.csv``, the crossover sentence, the figures) of ``placement reproduce``.

The verdict at a knob value is the majority of the judged seeds; the crossover is recomputed
here by hand on rows whose answer is known, and the written CSV is read back and compared with
the recorded rows.
"""

from __future__ import annotations

import csv
import json

import pytest

from placement.app import reproduce as rp
from placement.app.reproduce.regimes import RegimeRow, crossover, regimes_csv, verdict_by_value
from placement.errors import InstanceError


def _rows(pattern: dict[float, list[bool | None]], claim: str = "c", knob: str = "load") -> list[RegimeRow]:
    return [RegimeRow(claim, knob, v, s, float(v) * (s + 1), 1.0, h)
            for v, hs in pattern.items() for s, h in enumerate(hs)]


def test_majority_verdict_and_spread():
    rows = _rows({2.0: [True, True, False], 1.0: [False, False, True], 3.0: [True, False, None, None]})
    per = verdict_by_value(rows, "c", "load")
    assert [p["value"] for p in per] == [1.0, 2.0, 3.0]        # numeric knobs in ascending order
    assert [p["verdict"] for p in per] == [False, True, "split"]
    assert [(p["held"], p["judged"], p["seeds"]) for p in per] == [(1, 3, 3), (2, 3, 3), (1, 2, 4)]
    assert per[1]["median"] == 4.0 and per[1]["lo"] == 2.0 and per[1]["hi"] == 6.0


def test_crossover_names_the_flip():
    rows = _rows({0.5: [False, False], 1.0: [False, True, False], 2.0: [True, True], 4.0: [True, True]})
    text = crossover(rows, "c", "load")
    assert "holds at load = 2, 4" in text and "not at 0.5, 1" in text and "flips between 1 and 2" in text
    assert crossover(_rows({1: [True], 2: [True]}), "c", "load").startswith("holds at every load")
    assert crossover(_rows({1: [False], 2: [False]}), "c", "load").startswith("holds at no load")
    assert crossover(_rows({1: [None]}), "c", "load") == "load: not judged at any value"
    assert crossover([], "c", "load") == "load: not mapped"


def test_labels_keep_their_order():
    rows = [RegimeRow("c", "cells", v, 0, 1.0, None, h) for v, h in (("node", False), ("multi", True))]
    assert [p["value"] for p in verdict_by_value(rows, "c", "cells")] == ["node", "multi"]
    assert "flips between node and multi" in crossover(rows, "c", "cells")


def _mapped(ctx: rp.Context) -> None:
    for seed in ctx.seeds:
        for load in (0.5, 1.0, 2.0, 4.0):
            gain = load - 1.0 - 0.1 * seed
            ctx.regime(claim="gain above 1", knob="load", value=load, seed=seed, ours=gain,
                       paper=1.5, holds=gain > 0)
    ctx.claim(claim="gain above 1", source="toy", paper="1.5", ours=[1.0] * len(ctx.seeds),
              difference=ctx.crossover("gain above 1", "load"))


@pytest.fixture
def registry(monkeypatch):
    reps = {"mapped": rp.Reproduction("mapped", "A mapped paper", "a regime map", _mapped, seeds=2,
                                      quick_seeds=2)}
    monkeypatch.setattr(rp, "reproductions", lambda: reps)
    return reps


def test_context_writes_csv_figure_and_section(registry, tmp_path):
    out = tmp_path / "rep"
    ctx = rp.run_reproduction("mapped", str(out))
    with open(out / "regimes.csv", newline="") as fh:
        got = list(csv.DictReader(fh))
    assert list(got[0]) == ["claim", "knob", "value", "seed", "ours", "paper", "holds"]
    assert len(got) == len(ctx.regimes) == 8
    for row, rec in zip(got, ctx.regimes, strict=True):
        assert float(row["value"]) == rec.value and int(row["seed"]) == rec.seed
        assert float(row["ours"]) == rec.ours and row["holds"] == ("yes" if rec.holds else "no")
    assert (out / "figures" / "regime-load.png").stat().st_size > 1000
    report = (out / "report.md").read_text()
    assert "## Regime map" in report and "flips between 1 and 2" in report
    assert "figures/regime-load.png" in report
    doc = json.loads((out / "claims.json").read_text())
    assert doc["regimes"] == [{"claim": "gain above 1", "knob": "load",
                               "crossover": crossover(ctx.regimes, "gain above 1", "load")}]
    assert doc["claims"][0]["difference"] == "holds at load = 2, 4; not at 0.5, 1; flips between 1 and 2"


def test_regimes_csv_header_alone_when_unmapped():
    assert regimes_csv([]) == "claim,knob,value,seed,ours,paper,holds\n"


@pytest.mark.parametrize("kw, field", [({"knob": ""}, "knob"), ({"value": float("nan")}, "value"),
                                       ({"seed": 1.5}, "seed"), ({"ours": "x"}, "ours"),
                                       ({"holds": 1}, "holds"), ({"value": True}, "value")])
def test_bad_row_is_one_line_naming_the_field(tmp_path, kw, field):
    ctx = rp.Context("p", "t", tmp_path, quick=True, seeds=[0])
    args = dict(claim="c", knob="k", value=1.0, seed=0, ours=1.0, paper=None, holds=None) | kw
    with pytest.raises(InstanceError, match=f"regime {field}"):
        ctx.regime(**args)
    assert ctx.regimes == []
