"""A reader of the package has no issues and no work log: pages, docstrings and comments carry no
issue numbers and no work-log words.

The first test is the issue tracker's own check, ``grep -rniE "issue [0-9]+|#[0-9]{2,} " placement
models solvers instances README.md``, run over every text file of those paths; it fails, naming
each file and line, while any occurrence remains. The second holds the reference pages to the
words of a lab notebook ("this stop", "Done-when", "(was 12%)", "issue").
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATHS = ["placement", "models", "solvers", "instances", "README.md"]
ISSUE_REF = re.compile(r"issue [0-9]+|#[0-9]{2,} ", re.IGNORECASE)
WORKLOG = re.compile(r"\bthis stop\b|\bdone-when\b|\(was [0-9]|\bissues?\b(?!d)|\bthis round\b", re.IGNORECASE)


def _text_files(paths: list[str]):
    for name in paths:
        top = ROOT / name
        for path in ([top] if top.is_file() else sorted(top.rglob("*"))):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            data = path.read_bytes()
            if b"\0" in data[:8192]:  # binary, as grep -I skips it
                continue
            yield path, data.decode("utf-8", errors="replace")


def _hits(pattern: re.Pattern, files) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}"
            for path, text in files for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def test_no_issue_numbers_in_the_package():
    assert _hits(ISSUE_REF, _text_files(PATHS)) == []


def test_reference_pages_hold_no_work_log_words():
    pages = [ROOT / "README.md", *sorted(p for d in ("placement", "instances") for p in (ROOT / d).rglob("*.md"))]
    assert len(pages) >= 10
    assert _hits(WORKLOG, ((p, p.read_text()) for p in pages)) == []


def test_the_patterns_catch_what_they_name():
    assert ISSUE_REF.search("as issue 52's item 5 said") and ISSUE_REF.search("see #47 for")
    assert not ISSUE_REF.search("Table 1 and §5.6") and not ISSUE_REF.search("#1 ")
    for line in ("at this stop", "Done-when: met", "gap 5% (was 12%)", "the issue's hypothesis"):
        assert WORKLOG.search(line), line
    assert not WORKLOG.search("its finish re-issued") and not WORKLOG.search("a paper's claims")
