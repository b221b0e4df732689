"""The bench page's generated figures section is what ``placement bench`` writes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from placement.app.bench import bench_command, run_bench
from placement.app.report import (
    BEGIN,
    END,
    figures_section,
    main,
    parse_figures_section,
    replace_figures_section,
)
from placement.registry import problems

BENCH_PAGE = Path(__file__).resolve().parents[2] / "placement" / "app" / "bench" / "README.md"


def test_section_round_trips_and_rejects_hand_edits():
    fams = {"cassini": ["cassini: exact proved optimality on 5 of 5 instances", "cassini ranking: 0.03 s"],
            "hived": ["hived: buddy median 3.1 µs"]}
    text = figures_section("placement bench --quick", 21.6, "2 CPU(s), Linux x86_64", fams)
    parsed = parse_figures_section(text)
    assert parsed == {"command": "placement bench --quick", "elapsed_s": 22.0, "machine": "2 CPU(s), Linux x86_64",
                      "families": fams}
    assert figures_section(parsed["command"], parsed["elapsed_s"], parsed["machine"], parsed["families"]) == text
    with pytest.raises(ValueError):
        parse_figures_section(text.replace("- hived:", "hived:"))  # a line that is neither heading nor bullet
    with pytest.raises(ValueError):
        parse_figures_section(text.replace(END, ""))


def test_bench_page_quotes_exactly_one_block_in_the_bench_format():
    page = BENCH_PAGE.read_text()
    assert page.count(BEGIN) == 1 and page.count(END) == 1
    block = page[page.index(BEGIN):page.index(END) + len(END)] + "\n"
    parsed = parse_figures_section(block)
    # Byte-for-byte what the bench renders from the same content: nobody edited it by hand.
    assert figures_section(parsed["command"], parsed["elapsed_s"], parsed["machine"], parsed["families"]) == block
    assert set(parsed["families"]) <= set(problems()) and parsed["families"]
    assert all(parsed["families"].values())
    words = shlex.split(parsed["command"])
    problems_ = [words[i + 1] for i, w in enumerate(words) if w == "--problem"]
    seed = int(words[words.index("--seed") + 1]) if "--seed" in words else 0
    assert bench_command(problems_, "--quick" in words, "--scale" in words, seed) == parsed["command"]
    assert not problems_ or set(parsed["families"]) <= set(problems_)


@pytest.mark.slow
def test_bench_run_writes_the_block_and_the_page_updater_takes_it(tmp_path):
    out = tmp_path / "bench"
    assert run_bench(["trace"], quick=True, out_dir=str(out)) == 0
    text = (out / "figures.md").read_text()
    parsed = parse_figures_section(text)
    summary = json.loads((out / "results.json").read_text())["summary"]
    assert parsed["command"] == "placement bench --problem trace --quick"
    assert parsed["families"] == {"trace": [" ".join(s.split()) for s in summary]} and summary
    # the simulator family has no exact-vs-heuristic rows: no empty table in the report
    assert json.loads((out / "results.json").read_text())["rows"] == []
    assert "## Exact vs heuristic" not in (out / "report.md").read_text()
    page = tmp_path / "README.md"
    original = BENCH_PAGE.read_text()
    page.write_text(original)
    assert main([str(page), str(out / "figures.md")]) == 0
    updated = page.read_text()
    assert parse_figures_section(updated) == parsed
    assert updated[:updated.index(BEGIN)] == original[:original.index(BEGIN)]
    assert updated[updated.index(END):] == original[original.index(END):]
    assert replace_figures_section(updated, text) == updated
