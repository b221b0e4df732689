"""The reference pages are guides: at most 400 lines each, and their "Measured" sections are
generated -- the splice script (``python -m placement.app.pages``) rebuilds every section from the
fragments stored beside the page, and changes nothing outside the markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.app import pages
from placement.errors import InstanceError

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
GUIDES = [ROOT / "instances" / "README.md",
          *sorted(p for p in (ROOT / "placement").rglob("*.md") if p.parent.name != "measured")]


@pytest.mark.parametrize("page", GUIDES, ids=[str(p.relative_to(ROOT)) for p in GUIDES])
def test_page_is_at_most_400_lines(page):
    n = len(page.read_text().splitlines())
    assert n <= MAX_LINES, f"{page.relative_to(ROOT)} has {n} lines; move reference material to a second page"


def test_measured_sections_are_their_stored_fragments():
    found = pages.pages()
    assert ROOT / "placement" / "tetris" / "README.md" in found and ROOT / "placement" / "tetris" / "BOUNDS.md" in found
    for page in found:
        text, spliced = pages.splice_page(page)
        assert pages.sections(text), page
        assert spliced == text, f"{page.relative_to(ROOT)}: run python -m placement.app.pages"
    assert pages.main(["--check"]) == 0


def test_every_fragment_fills_a_section():
    used = {(p.parent / "measured" / f"{n}.md") for p in pages.pages() for n in pages.sections(p.read_text())}
    stored = {p for p in ROOT.glob("placement/**/measured/*.md")}
    assert stored and stored == used


def _page(tmp_path: Path, body: str, fragments: dict[str, str]) -> Path:
    (tmp_path / "measured").mkdir()
    for name, text in fragments.items():
        (tmp_path / "measured" / f"{name}.md").write_text(text)
    page = tmp_path / "page.md"
    page.write_text(body)
    return page


def test_splice_replaces_only_between_the_markers(tmp_path):
    body = (f"# t\nkeep 1\n{pages.begin_marker('a')}\nold a\n{pages.end_marker('a')}\nkeep 2\n"
            f"{pages.begin_marker('b-2')}\n{pages.end_marker('b-2')}\nkeep 3\n")
    page = _page(tmp_path, body, {"a": "| x |\n| 1 |\n", "b-2": "\n\nnew b\n"})
    assert pages.main([str(page), "--check"]) == 1  # stale: nothing written
    assert page.read_text() == body
    assert pages.main([str(page)]) == 0
    out = page.read_text()
    assert out == (f"# t\nkeep 1\n{pages.begin_marker('a')}\n| x |\n| 1 |\n{pages.end_marker('a')}\nkeep 2\n"
                   f"{pages.begin_marker('b-2')}\nnew b\n{pages.end_marker('b-2')}\nkeep 3\n")
    assert pages.main([str(page), "--check"]) == 0
    assert pages.splice(out, {"a": "| x |\n| 1 |", "b-2": "new b"}) == out  # idempotent


@pytest.mark.parametrize("body, message", [
    ("<!-- measured:a:begin -->\n", "no end marker"),
    ("<!-- measured:a:end -->\n", "closes without"),
    ("<!-- measured:a:begin -->\n<!-- measured:b:begin -->\n", "opens inside"),
    ("<!-- measured:a:begin -->\n<!-- measured:a:end -->\n<!-- measured:a:begin -->\n<!-- measured:a:end -->\n",
     "appears twice"),
    ("<!-- measured:zz:begin -->\n<!-- measured:zz:end -->\n", "has no fragment"),
])
def test_bad_pages_are_one_error_and_nothing_written(tmp_path, capsys, body, message):
    page = _page(tmp_path, body, {"a": "x", "b": "y"})
    with pytest.raises(InstanceError, match=message):
        pages.splice_page(page)
    assert pages.main([str(page)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert page.read_text() == body


def test_section_names_are_unique_over_the_pages():
    names = pages.owners(pages.pages())
    assert len(names) == sum(len(pages.sections(p.read_text())) for p in pages.pages()) >= 10


def test_a_run_folder_updates_the_page_its_fragments_name(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa = _page(a, f"A\n{pages.begin_marker('x')}\nold x\n{pages.end_marker('x')}\n", {"x": "old x"})
    pb = _page(b, f"B\n{pages.begin_marker('y')}\nold y\n{pages.end_marker('y')}\n", {"y": "old y"})
    run = tmp_path / "run"
    (run / "measured").mkdir(parents=True)
    (run / "measured" / "y.md").write_text("| new y |\n")
    assert pages.main([str(pa), str(pb), "--from", str(run), "--check"]) == 1
    assert (b / "measured" / "y.md").read_text() == "old y"  # --check writes nothing
    assert pages.main([str(pa), str(pb), "--from", str(run)]) == 0
    assert (b / "measured" / "y.md").read_text() == "| new y |\n"
    assert pb.read_text() == f"B\n{pages.begin_marker('y')}\n| new y |\n{pages.end_marker('y')}\n"
    assert pa.read_text() == f"A\n{pages.begin_marker('x')}\nold x\n{pages.end_marker('x')}\n"
    assert pages.main([str(pa), str(pb), "--check"]) == 0
    (run / "measured" / "z.md").write_text("stray")
    before = pb.read_text()
    assert pages.main([str(pa), str(pb), "--from", str(run)]) == 2
    assert "no page has a section" in capsys.readouterr().err and pb.read_text() == before
    pb.write_text(f"{pages.begin_marker('x')}\n{pages.end_marker('x')}\n")
    assert pages.main([str(pa), str(pb)]) == 2
    assert "also on" in capsys.readouterr().err
