"""The front door stays a front door: ``README.md`` at most 250 lines, with one line per paper's
reproduction (generated) and the full fidelity table on the reproductions' reference page."""

from __future__ import annotations

import json
from pathlib import Path

from placement.app.reproduce import fidelity

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 250


def test_readme_is_at_most_250_lines():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines; move reference material to a reference page"


def test_summary_on_the_front_door_full_table_on_the_reproductions_page():
    readme = (ROOT / "README.md").read_text()
    page = (ROOT / "placement" / "app" / "reproduce" / "README.md").read_text()
    assert readme.count(fidelity.SUMMARY_BEGIN) == 1 and readme.count(fidelity.SUMMARY_END) == 1
    assert fidelity.BEGIN not in readme and "| paper | claim |" not in readme
    assert page.count(fidelity.BEGIN) == 1 and page.count(fidelity.END) == 1
    summary = readme.split(fidelity.SUMMARY_BEGIN)[1].split(fidelity.SUMMARY_END)[0].strip().splitlines()
    table = page.split(fidelity.BEGIN)[1].split(fidelity.END)[0]
    papers = {line.split(" | ")[0].strip("| ") for line in table.splitlines()
              if line.startswith("| ") and not line.startswith("| paper |")}
    assert len(summary) == len(papers) >= 1  # one line per paper of the table
    for line in summary:
        paper = line.split("**")[1]
        verdicts = [r.rstrip().rstrip("|").rsplit(" | ", 1)[1].strip() for r in table.splitlines()
                    if r.startswith(f"| {paper} |")]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(sorted(verdicts, key=_order)))
        assert f"{len(verdicts)} claims: {counts};" in line  # the summary counts the table's rows


def _order(v: str) -> tuple[int, str]:
    from placement.app.reproduce.claims import VERDICTS

    return (VERDICTS.index(v), v) if v in VERDICTS else (len(VERDICTS), v)


def test_both_blocks_regenerate_from_claims(tmp_path):
    doc = {"paper": "toy", "title": "Toy", "command": "placement reproduce toy", "quick": False, "seeds": 3,
           "elapsed_s": 12.0, "replay_ok": True, "logs": 6,
           "claims": [{"claim": f"c{i}", "source": "Fig. 1", "paper": "1x", "ours": [1.0], "ours_text": "1x",
                       "verdict": v, "rule": "", "difference": "", "decided_by": ""}
                      for i, v in enumerate(["holds", "off-regime", "direction only", "holds"])]}
    (tmp_path / "claims.json").write_text(json.dumps(doc))
    front = tmp_path / "README.md"
    front.write_text(f"# x\n{fidelity.SUMMARY_BEGIN}\nold\n{fidelity.SUMMARY_END}\ntail\n")
    page = tmp_path / "page.md"
    page.write_text(f"{fidelity.BEGIN}\nold\n{fidelity.END}\n")
    assert fidelity.main([str(page), str(front), str(tmp_path / "claims.json")]) == 0
    text = front.read_text()
    assert "- **toy**: 4 claims: 2 holds, 1 direction only, 1 off-regime;" in text and "6 logs" in text
    assert text.endswith("tail\n") and "\nold\n" not in text and "README.md#fidelity-table" in text
    assert "| toy | c3 | 1x (Fig. 1) | 1x | holds |" in page.read_text()
    assert "(full run): 3 seeds" in page.read_text()


def test_front_door_table_cells_fit_a_screen():
    """Every cell of the front door's tables is short: what is implemented, one headline number and
    a link; the detail lives on the reference pages."""
    long = [(n, len(cell)) for n, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1)
            if line.startswith("|") for cell in line.strip("|").split(" | ") if len(cell.strip()) > 300]
    assert long == []
