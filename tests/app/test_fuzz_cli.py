"""Fuzzing the command line with mutated documents: exit 2 with one line, or success; never a traceback.

Each family's valid document is mutated by hypothesis (values replaced by wrong types,
names by lists or objects, fields removed or added, deep nesting, huge integers) and fed
to ``solve`` (a fast solver), ``evaluate`` and ``check-cells`` in-process. Any exception
other than the CLI's own exit is a failure. Regression tests for each kind of the fuzzing
issue follow.
"""

import contextlib
import copy
import io
import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placement.instances import generate_cassini, generate_hived, generate_tetris, stored_path

from placement.app.cli import main
from placement.cassini.instance import instance_to_json as cassini_json
from placement.hived.config import instance_to_json as hived_json
from placement.tetris import instance_to_json as tetris_json

DOCS = {
    "tetris": tetris_json(generate_tetris(5, 7, 2, seed=1)),
    "hived": hived_json(generate_hived(seed=1)),
    "cassini": cassini_json(generate_cassini(4, 2, seed=1)),
    "figure4": yaml.safe_load(stored_path("hived", "figure4.yaml").read_text()),
    "hived-yaml": yaml.safe_load(stored_path("hived", "hived-config-2.yaml").read_text()),
}
FAST = {"tetris": "hill-climb", "hived": "buddy", "cassini": "affinity", "figure4": "buddy", "hived-yaml": "buddy"}

WEIRD = st.one_of(
    st.just([1, 2]), st.just({"a": 1}), st.none(), st.booleans(), st.integers(-10**6, 10**6),
    st.just(10**40), st.just(2**60), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
    st.just([]), st.just({}), st.just([["x"]]), st.just("x" * 3000),
    st.integers(1, 3000).map(lambda d: json.loads("[" * d + "]" * d) if d < 60 else "[" * d + "]" * d),
)


def _paths(d, pre=()):
    yield pre
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, (*pre, k))
    elif isinstance(d, list):
        for i, v in enumerate(d[:3]):
            yield from _paths(v, (*pre, i))


@st.composite
def mutated(draw, family):
    doc = copy.deepcopy(DOCS[family])
    paths = list(_paths(doc))[1:]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
            if action == "replace":
                parent[path[-1]] = draw(WEIRD)
            elif action == "delete" and isinstance(parent, dict):
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.sampled_from(["extra", "name", "x"]))] = draw(WEIRD)
        except (KeyError, IndexError, TypeError):
            pass
    return doc


def _run(argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


def _check(rc: int, err: str) -> None:
    assert rc in (0, 1, 2), rc
    assert "Traceback" not in err
    if rc == 2:
        lines = [ln for ln in err.splitlines() if not ln.startswith("note: ")]
        assert len(lines) == 1 and lines[0].startswith("error: "), err


@pytest.mark.parametrize("family", sorted(DOCS))
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_documents_get_one_line_or_success(family, data, tmp_path):
    doc = data.draw(mutated(family))
    yaml_file = family in ("figure4", "hived-yaml") and data.draw(st.booleans())
    path = tmp_path / ("d.yaml" if yaml_file else "d.json")
    text = yaml.safe_dump(doc) if yaml_file else json.dumps(doc)
    path.write_text(text)
    out = tmp_path / "o.json"
    out.unlink(missing_ok=True)
    command = data.draw(st.sampled_from(["solve", "evaluate", "check-cells"]))
    if command == "solve":
        argv = ["solve", str(path), "--solver", FAST[family], "--time-limit", "5", "-o", str(out)]
    elif command == "evaluate":
        argv = ["evaluate", str(path), str(path)]
    else:
        argv = ["check-cells", str(path)]
    rc, err = _run(argv)
    _check(rc, err)
    if rc == 2:
        assert not out.exists()


@pytest.mark.parametrize("argv,expect", [
    (["generate", "tetris", "--tables", str(10**12)], "--tables: too large"),
    (["generate", "tetris", "--jobs", str(10**12)], "--jobs: too large"),
    (["generate", "tetris", "--regions", str(10**12)], "--regions: too large"),
    (["generate", "tetris", "--priorities", str(10**12)], "--priorities: too large"),
    (["generate", "hived", "--vcs", str(10**12)], "--vcs: too large"),
    (["generate", "hived", "--chains", str(10**12)], "--chains: too large"),
    (["generate", "hived", "--top-cells", str(10**12)], "--top-cells: too large"),
    (["generate", "hived", "--bad", str(10**12)], "--bad: too large"),
    (["generate", "hived", "--overload", str(10**12)], "--overload: too large"),
    (["generate", "hived", "--pinned", str(10**12)], "--pinned: too large"),
    (["generate", "hived", "--levels", "5000"], "--levels: must be at most 23"),
    (["generate", "cassini", "--jobs", str(10**12)], "--jobs: too large"),
    (["generate", "cassini", "--candidates", str(10**12)], "--candidates: too large"),
    (["generate", "cassini", "--topology", "tree", "--pods", str(10**9)], "--pods: too large"),
    (["generate", "cassini", "--precision", "1e-300"], "--precision: must divide 360"),
])
def test_generate_bounds_counts_by_memory_and_names_the_option(argv, expect, tmp_path):
    rc, err = _run([*argv, "-o", str(tmp_path / "g.json")])
    assert rc == 2 and err.startswith("error: ") and expect in err, err
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize("replace,expect", [
    ("10.0.2.0~1000000000", "at most 4194304 fit in a chain"),
    ("10.0.2.0~" + "9" * 5000, "more than"),
])
def test_figure4_huge_node_ranges(tmp_path, replace, expect):
    text = stored_path("hived", "figure4.yaml").read_text().replace("10.0.2.0~7", replace)
    p = tmp_path / "f.yaml"
    p.write_text(text)
    rc, err = _run(["check-cells", str(p)])
    assert rc == 2 and expect in err, err


@pytest.mark.parametrize("family", ["tetris", "cassini", "hived"])
def test_names_that_are_not_strings(tmp_path, family):
    doc = copy.deepcopy(DOCS[family])
    # Replace every string value that names something with a list, one at a time, at a few spots.
    spots = [p for p in _paths(doc) if p and isinstance(_get(doc, p), str)][:25]
    for p in spots:
        d = copy.deepcopy(doc)
        _set(d, p, ["not", "a", "name"])
        f = tmp_path / "d.json"
        f.write_text(json.dumps(d))
        for argv in (["solve", str(f), "--solver", FAST[family]], ["evaluate", str(f), str(f)]):
            rc, err = _run(argv)
            _check(rc, err)


def _get(d, p):
    for k in p:
        d = d[k]
    return d


def _set(d, p, v):
    for k in p[:-1]:
        d = d[k]
    d[p[-1]] = v


def test_fifty_megabyte_array_is_refused_quickly(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_MAX_INPUT_BYTES", str(8 * 2**20))
    doc = copy.deepcopy(DOCS["tetris"])
    doc["tables"][0]["junk"] = list(range(2_000_000))  # ~16 MB of text
    p = tmp_path / "big.json"
    p.write_text(json.dumps(doc))
    rc, err = _run(["solve", str(p)])
    assert rc == 2 and "larger than" in err
