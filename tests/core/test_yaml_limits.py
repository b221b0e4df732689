"""YAML inputs: a size limit of their own (the parser costs far more per byte than JSON's), libyaml's
C parser where present, and the same refusals either way."""

from __future__ import annotations

import pytest

from placement.errors import InstanceError
from placement.io import max_yaml_bytes, read_document


def test_a_yaml_file_over_its_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    big = tmp_path / "big.yaml"
    big.write_text("physicalCluster:\n" + "  - 1\n" * (max_yaml_bytes() // 6 + 10))
    with pytest.raises(InstanceError, match="the limit for YAML") as e:
        read_document(big)
    assert e.value.field == str(big) and "\n" not in str(e.value)
    monkeypatch.setenv("PLACEMENT_MAX_YAML_BYTES", str(big.stat().st_size))
    n = (big.stat().st_size - len("physicalCluster:\n")) // 6
    assert read_document(big)["physicalCluster"] == [1] * n
    monkeypatch.setenv("PLACEMENT_MAX_YAML_BYTES", "abc")
    with pytest.raises(InstanceError, match="PLACEMENT_MAX_YAML_BYTES"):
        read_document(big)


def test_json_keeps_its_own_larger_limit(tmp_path):
    doc = tmp_path / "big.json"
    doc.write_text("[" + ",".join(["1"] * (max_yaml_bytes() // 2 + 10)) + "]")
    assert len(read_document(doc)) == max_yaml_bytes() // 2 + 10


@pytest.mark.parametrize("text,expect", [
    ("[" * 2000 + "]" * 2000, "deeper than 64 levels"),          # past libyaml's own cap
    ("a:\n" + "".join(" " * (i + 1) + "b:\n" for i in range(80)) + " " * 82 + "1\n", "deeper than 64 levels"),
    ("a: &x [1, 2]\nb: *x\n", None),
    ("base: &b {x: 1}\nitem:\n  <<: *b\n  y: 2\n", None),
    ("a: 1\na: 2\n", "repeats the key"),
    ("a: " + "9" * 40 + "\n", "more than 30 digits"),
])
def test_yaml_refusals_hold_with_the_fast_parser(tmp_path, text, expect):
    f = tmp_path / "d.yaml"
    f.write_text(text)
    if expect is None:
        doc = read_document(f)
        assert doc.get("b") == [1, 2] or doc["item"] == {"x": 1, "y": 2}
    else:
        with pytest.raises(InstanceError, match=expect):
            read_document(f)
