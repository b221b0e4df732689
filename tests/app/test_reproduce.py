"""``placement reproduce``: the registry, the staged output folder, report.md, results and logs.

A throwaway reproduction (FIFO and Tiresias on a small synthetic trace) stands in for a paper's;
the papers' own modules have their tests in their areas.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from placement.app import reproduce as rp
from placement.app.cli import main
from placement.app.shipped import cluster_arg
from placement.sim.instance import SimInstance
from placement.sim.trace import synthetic_trace


def _toy(ctx: rp.Context) -> None:
    ctx.note("toy set-up: 30 jobs, 16 GPUs")
    gaps = []
    for seed in ctx.seeds:
        inst = SimInstance(synthetic_trace("poisson", jobs=30, seed=seed, jobs_per_hour=20, max_gpus=8),
                           cluster_arg("1x1x2x1x8"), perf="ideal")
        jct = {}
        for pol in ("fifo", "tiresias"):
            _res, _rows, summ = ctx.simulate(inst, pol, seed, f"{pol}-s{seed}")
            jct[pol] = summ["mean_jct_s"]
            ctx.row(policy=pol, seed=seed, mean_jct_s=summ["mean_jct_s"], run=f"{pol}-s{seed}")
        ctx.row(policy="all", seed=seed, level="all" if seed else 0)   # a column mixing text and numbers
        gaps.append(jct["tiresias"] / jct["fifo"] - 1)
    ctx.claim(claim="Tiresias lowers mean JCT", source="toy", paper="-30%", ours=gaps, unit="%",
              scale=100, holds=sorted(gaps)[len(gaps) // 2] < 0, rule="median below 0")
    ctx.section("Set-up", "| a | b |\n|---|---|\n| 1 | 2 |")


def _boom(ctx: rp.Context) -> None:
    (ctx.out / "partial.txt").write_text("x")
    raise RuntimeError("boom")


@pytest.fixture
def registry(monkeypatch):
    reps = {"toy": rp.Reproduction("toy", "A toy paper", "fifo vs tiresias", _toy, seeds=3, quick_seeds=2),
            "boom": rp.Reproduction("boom", "A failing paper", "raises", _boom)}
    monkeypatch.setattr(rp, "reproductions", lambda: reps)
    return reps


def test_report_results_and_logs_agree(registry, tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["reproduce", "toy", "--quick", "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "# A toy paper" in report and "`placement reproduce toy --quick`" in report
    assert "seeds 0-1 (2)" in report and "toy set-up: 30 jobs" in report
    assert "| Tiresias lowers mean JCT | -30% (toy) |" in report
    assert "4 simulation logs" in report and "no violation" in report
    table = pq.read_table(out / "results.parquet").to_pylist()
    assert [(r["policy"], r["seed"]) for r in table] == [("fifo", 0), ("tiresias", 0), ("all", 0),
                                                         ("fifo", 1), ("tiresias", 1), ("all", 1)]
    assert [r["level"] for r in table if r["policy"] == "all"] == ["0", "all"]
    # every row's number equals what `placement evaluate` recomputes from the log it wrote
    for r in table:
        if r["policy"] == "all":
            continue
        run = out / "logs" / r["run"]
        capsys.readouterr()
        assert main(["evaluate", str(run / "instance.json"), str(run / "log.json")]) == 0
        printed = capsys.readouterr().out
        summary = json.loads((run / "summary.json").read_text())["metrics"]
        assert summary["mean_jct_s"] == pytest.approx(r["mean_jct_s"], rel=1e-12)
        assert "mean_jct_s" in printed
    assert (out / "results.csv").read_text().splitlines()[0] == "policy,seed,mean_jct_s,run,level"


def test_claim_is_median_with_spread(registry, tmp_path):
    ctx = rp.run_reproduction("toy", str(tmp_path / "r"), seeds=3)
    (c,) = ctx.claims
    assert len(c.ours) == 3
    med, lo, hi = rp.spread(c.ours)
    assert lo <= med <= hi and med == sorted(c.ours)[1]
    assert c.ours_text().endswith("3 seeds)") or "all 3 seeds" in c.ours_text()


def test_spread_even_count_and_missing():
    assert rp.spread([1.0, 4.0, None, 2.0, 3.0]) == (2.5, 1.0, 4.0)
    assert rp.spread([None, float("nan")]) is None
    assert rp.Claim("c", "s", "p", [0.5], unit="%", scale=100).ours_text() == "50.0%"


def test_error_leaves_output_as_it_was(registry, tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.txt").write_text("old")
    with pytest.raises(RuntimeError):
        rp.run_reproduction("boom", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rep")]


@pytest.mark.parametrize("argv, field", [
    (["reproduce", "nope"], "PAPER"),
    (["reproduce", "toy", "--seeds", "0"], "--seeds"),
    (["reproduce", "toy", "--seeds", "51"], "--seeds"),
])
def test_bad_arguments_are_one_line(registry, tmp_path, capsys, argv, field, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {field}:") and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_fidelity_block_from_claims(registry, tmp_path, capsys):
    from placement.app.reproduce import fidelity

    out = tmp_path / "rep"
    rp.run_reproduction("toy", str(out), quick=True)
    doc = json.loads((out / "claims.json").read_text())
    assert doc["paper"] == "toy" and doc["seeds"] == 2 and doc["replay_ok"] is True
    (c,) = doc["claims"]
    assert len(c["ours"]) == 2 and c["ours_text"] in (out / "report.md").read_text()
    page = tmp_path / "page.md"
    page.write_text(f"intro\n{fidelity.BEGIN}\nold\n{fidelity.END}\ntail\n")
    assert fidelity.main([str(page), str(out / "claims.json")]) == 0
    text = page.read_text()
    assert text.startswith("intro\n") and text.endswith("tail\n") and "\nold\n" not in text
    assert f"| toy | Tiresias lowers mean JCT | -30% (toy) | {c['ours_text']} |" in text
    assert "`placement reproduce toy --quick`: 2 seeds" in text
    # regenerating from the same runs changes nothing
    assert fidelity.main([str(page), str(out / "claims.json")]) == 0 and page.read_text() == text
    # a page without markers or a file that is not a claims document: one line, page unchanged
    bad = tmp_path / "bad.md"
    bad.write_text("no markers\n")
    assert fidelity.main([str(bad), str(out / "claims.json")]) == 2
    assert fidelity.main([str(page), str(out / "report.md")]) == 2
    assert bad.read_text() == "no markers\n" and page.read_text() == text
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)


def test_fidelity_keeps_the_rows_of_papers_not_given(registry, tmp_path):
    """One paper's new run regenerates its own rows, run line and summary line; the page's other
    papers keep theirs, in the page's order."""
    from placement.app.reproduce import fidelity

    out = tmp_path / "rep"
    rp.run_reproduction("toy", str(out), quick=True)
    doc = json.loads((out / "claims.json").read_text())
    old_rows = ("| paper | claim | paper's number | ours | verdict |\n|---|---|---|---|---|\n"
                "| alpha | a claim | 1x (s1) | 2x | no |\n| toy | stale | 0 (toy) | 0 | no |\n"
                "| omega | z claim | 3x (s9) | 3x | holds |\n\n"
                "- alpha: `placement reproduce alpha` (full run): 5 seeds, 9 s, 1 logs all passing replay_check.\n"
                "- toy: `old`: 1 seeds, 1 s, 1 logs all passing replay_check.\n"
                "- omega: `placement reproduce omega --quick`: 3 seeds, 8 s, 2 logs all passing replay_check.")
    old_summary = "- **alpha**: 1 claims: 1 no; x\n- **toy**: stale\n- **omega**: 1 claims: 1 holds; y"
    page = tmp_path / "page.md"
    page.write_text(f"{fidelity.BEGIN}\n{old_rows}\n{fidelity.END}\n{fidelity.SUMMARY_BEGIN}\n{old_summary}\n"
                    f"{fidelity.SUMMARY_END}\n")
    assert fidelity.main([str(page), str(out / "claims.json")]) == 0
    text = page.read_text()
    table = text.split(fidelity.BEGIN)[1].split(fidelity.END)[0]
    papers = [ln.split("|")[1].strip() for ln in table.splitlines() if ln.startswith("| ") and "paper |" not in ln]
    assert papers == ["alpha", "toy", "omega"] and "stale" not in text and "`old`" not in text
    (c,) = doc["claims"]
    assert f"| toy | Tiresias lowers mean JCT | -30% (toy) | {c['ours_text']} |" in table
    assert "- alpha: `placement reproduce alpha` (full run)" in table and "- omega: `placement" in table
    assert "- toy: `placement reproduce toy --quick`: 2 seeds" in table
    summary = text.split(fidelity.SUMMARY_BEGIN)[1].split(fidelity.SUMMARY_END)[0]
    assert [ln[4:].split("**")[0] for ln in summary.strip().splitlines()] == ["alpha", "toy", "omega"]
    assert "- **alpha**: 1 claims: 1 no; x" in summary and "- **toy**: 1 claims" in summary
    # regenerating from the same run changes nothing
    assert fidelity.main([str(page), str(out / "claims.json")]) == 0 and page.read_text() == text


def test_reproductions_page_holds_one_fidelity_block():
    """The full table lives on the reproductions' page (the front door holds a per-paper summary:
    tests/docs/test_front_door.py)."""
    from placement.app.reproduce import fidelity

    text = fidelity.PAGE.read_text()
    assert text.count(fidelity.BEGIN) == 1 and text.count(fidelity.END) == 1
