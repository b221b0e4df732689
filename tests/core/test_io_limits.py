"""Where documents enter (placement/io.py): limits before and while parsing, and the write path."""

import json
import os
import stat
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.errors import InstanceError
from placement.io import (
    MAX_DEPTH,
    MAX_NODES,
    check_output_path,
    dumps_json,
    parse_document,
    read_document,
    write_text,
)

BOMB = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True))


@pytest.mark.parametrize("text,yaml_file,expect", [
    ("[" * 100_000 + "]" * 100_000, False, "deeper than"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", False, "deeper than"),
    ("- " * 5_000 + "1", True, "deeper than"),
    ('{"size": ' + "7" * 5000 + "}", False, "more than 30 digits"),
    ("size: " + "7" * 5000, True, "more than 30 digits"),
    (BOMB, True, "YAML aliases expanded"),
    ("? [1, 2]\n: 3\n", True, "mapping key must be a string or a number"),
    ("? {a: 1}\n: 3\n", True, "mapping key must be a string or a number"),
    ('{"a": NaN}', False, "not a JSON number"),
    ('{"a": 1, "a": 2}', False, "repeats the key"),
    ("a: 1\na: 2\n", True, "repeats the key"),
])
def test_hostile_documents_are_one_error(text, yaml_file, expect):
    with pytest.raises(InstanceError, match=expect):
        parse_document(text, "f", yaml_file=yaml_file)


def test_value_limit_is_yamls_alone():
    """The 5,000,000-value limit guards against YAML alias bombs; JSON has no aliases, so a JSON
    document is bounded by its size only (a 7-day MAST week holds 5.2 million values)."""
    text = "[" + "0," * MAX_NODES + "0]"
    assert len(parse_document(text, "f")) == MAX_NODES + 1
    with pytest.raises(InstanceError, match="more than 10 values"):
        parse_document("[" + "0," * 10 + "0]", "f", max_nodes=10)
    with pytest.raises(InstanceError, match="YAML aliases expanded"):
        parse_document("- 0\n" * 11, "f", yaml_file=True, max_nodes=10)


def test_depth_limit_is_exact():
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_document(ok, "f") is not None
    with pytest.raises(InstanceError):
        parse_document("[" + ok + "]", "f")


def test_brackets_inside_strings_do_not_count():
    doc = parse_document('{"name": "' + "[" * 500 + '"}', "f")
    assert doc["name"] == "[" * 500


def test_yaml_merge_keys_are_accepted_and_own_keys_win():
    doc = parse_document("base: &b {x: 1, y: 2}\nv:\n  <<: *b\n  y: 3\n", "f", yaml_file=True)
    assert doc["v"] == {"x": 1, "y": 3}


def test_file_size_limit(tmp_path, monkeypatch):
    p = tmp_path / "big.json"
    p.write_text("[" + ",".join(["1"] * 1000) + "]")
    monkeypatch.setenv("PLACEMENT_MAX_INPUT_BYTES", "100")
    with pytest.raises(InstanceError, match="larger than 100 bytes"):
        read_document(p)
    monkeypatch.setenv("PLACEMENT_MAX_INPUT_BYTES", "junk")
    with pytest.raises(InstanceError, match="PLACEMENT_MAX_INPUT_BYTES"):
        read_document(p)
    monkeypatch.delenv("PLACEMENT_MAX_INPUT_BYTES")
    assert len(read_document(p)) == 1000


def test_folder_and_missing_file(tmp_path):
    with pytest.raises(InstanceError, match="folder"):
        read_document(tmp_path)
    with pytest.raises(InstanceError, match="not found"):
        read_document(tmp_path / "nope.json")


def test_write_keeps_mode_of_existing_target(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("old")
    os.chmod(p, 0o600)
    write_text(p, "new")
    assert p.read_text() == "new"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


def test_stale_temporary_of_a_dead_writer_is_removed(tmp_path):
    p = tmp_path / "r.json"
    # A writer killed at the rename leaves its temporary: simulate with a pid that has exited.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    stale = tmp_path / f".r.json.{dead}.abc123.tmp"
    stale.write_text("partial")
    live = tmp_path / f".r.json.{os.getppid()}.def456.tmp"  # a running process: left alone
    live.write_text("in progress")
    unrelated = tmp_path / f".other.json.{dead}.x.tmp"
    unrelated.write_text("not ours to judge")
    write_text(p, "done")
    assert p.read_text() == "done"
    assert not stale.exists()
    assert live.exists() and unrelated.exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".r.json.") and f != live.name]


def test_kill_during_write_leaves_old_target_and_next_run_cleans(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("old")
    # The child writes its temporary then dies before the rename (os._exit inside os.replace).
    code = (
        "import os, placement.io as io\n"
        "os.replace = lambda *a: os._exit(9)\n"
        f"io.write_text({str(p)!r}, 'new')\n"
    )
    r = subprocess.run([sys.executable, "-c", code])
    assert r.returncode == 9
    assert p.read_text() == "old"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    write_text(p, "newer")
    assert p.read_text() == "newer"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_check_output_path_tries_a_real_write(tmp_path):
    with pytest.raises(InstanceError, match="does not exist"):
        check_output_path(tmp_path / "missing" / "x.json")
    with pytest.raises(InstanceError, match="folder"):
        check_output_path(tmp_path)
    with pytest.raises(InstanceError, match="longer than"):
        check_output_path(tmp_path / ("x" * 300))
    check_output_path(tmp_path / ("y" * 250))  # near the limit: the temporary name still fits
    assert os.listdir(tmp_path) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(InstanceError, match="does not exist"):
        check_output_path(tmp_path / "file" / "x.json")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_output_path_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    with pytest.raises(InstanceError, match="cannot write"):
        check_output_path(ro / "x.json")


def test_staged_folder_replaces_sub_folders_of_an_earlier_run(tmp_path):
    # an output folder left by an earlier (or killed) run: files and non-empty sub-folders
    from placement.io import staged_folder

    out = tmp_path / "out"
    (out / "logs" / "old-run").mkdir(parents=True)
    (out / "logs" / "old-run" / "log.json").write_text("{}")
    (out / "report.md").write_text("old")
    (out / "keep.txt").write_text("not ours")
    with staged_folder(out) as tmp:
        (tmp / "logs" / "new-run").mkdir(parents=True)
        (tmp / "logs" / "new-run" / "log.json").write_text("[]")
        (tmp / "report.md").write_text("new")
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["new-run"]
    assert (out / "report.md").read_text() == "new" and (out / "keep.txt").read_text() == "not ours"
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt", "logs", "report.md"]   # nothing left behind


_scalars = st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=8)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                            max_size=4), max_leaves=12)


@settings(max_examples=60)
@given(st.dictionaries(st.text(max_size=6), _values, max_size=4), st.lists(_values, max_size=5),
       st.dictionaries(st.text(max_size=6), _values, max_size=5))
def test_json_with_one_row_per_line_parses_to_the_same_document(head, rows, mapping):
    """dumps_json(rows=("jobs", "table_regions")) (how `placement generate` writes a trace) is the
    same document as plain JSON; each non-empty row of the list and each entry of the object sits
    on one line of its own."""
    doc = {**head, "jobs": rows, "table_regions": mapping}
    text = dumps_json(doc, rows=("jobs", "table_regions"))
    assert parse_document(text) == json.loads(json.dumps(doc)) == json.loads(text)
    if r"\u0000rows\u0000" not in json.dumps(doc):
        lines = [line.removesuffix(",") for line in text.splitlines()]
        for row in rows:
            assert "    " + json.dumps(row, separators=(",", ":")) in lines
        for k, v in mapping.items():
            assert f"    {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" in lines
