"""``evaluate`` on CASSINI and HiveD solutions whose names are lists or objects: one line naming
the field, exit 2 (it was ``TypeError: unhashable type``)."""

from __future__ import annotations

import copy
import json

import pytest

from placement.app.cli import main


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    d = tmp_path_factory.mktemp("solved")
    assert main(["generate", "cassini", "--seed", "1", "-o", str(d / "c.json")]) == 0
    assert main(["solve", str(d / "c.json"), "-o", str(d / "cs.json")]) == 0
    assert main(["generate", "hived", "--seed", "2", "-o", str(d / "h.json")]) == 0
    assert main(["solve", str(d / "h.json"), "--solver", "buddy", "-o", str(d / "hs.json")]) == 0
    return d


CASES = [("c", ("candidate",), "solution.candidate"), ("h", ("bindings", 0, "vc"), "solution.bindings[0].vc"),
         ("h", ("bindings", 0, "chain"), "solution.bindings[0].chain"),
         ("h", ("bindings", 0, "cellType"), "solution.bindings[0].cellType")]


@pytest.mark.parametrize("value", [["x"], {"a": 1}], ids=["list", "object"])
@pytest.mark.parametrize(("fam", "path", "field"), CASES, ids=[c[2] for c in CASES])
def test_a_name_that_is_a_list_or_object_is_one_line(solved, tmp_path, capsys, fam, path, field, value):
    sol = json.loads((solved / f"{fam}s.json").read_text())["solution"]
    bad = copy.deepcopy(sol)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    capsys.readouterr()
    assert main(["evaluate", str(solved / f"{fam}.json"), str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {field}: must be a non-empty string"), err
    (tmp_path / "good.json").write_text(json.dumps(sol))
    assert main(["evaluate", str(solved / f"{fam}.json"), str(tmp_path / "good.json")]) == 0
