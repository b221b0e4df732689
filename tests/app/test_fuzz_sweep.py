"""Fuzzed sweep specs: any document either validates or fails with one line naming a field.

Covers what the CLI fuzz (tests/app/test_fuzz_cli.py) does not reach: the fields of a
``placement sweep`` spec and their types (a list where a name is expected, a
mapping where a number is, non-string keys, huge grids). Validation never runs a
cell, so each example is cheap; the grid bound is checked before cells are built.
"""

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.app.cli import main
from placement.app.sweep import MAX_CELLS, expand_cells, load_spec, validate_cells
from placement.errors import InstanceError

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=True),
                    st.sampled_from(["", "tetris", "hill-climb", "exact", "fifo", "solve", "simulate", "1x1x1x2x8",
                                     "no-such.csv", "tables", "x" * 50]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.sampled_from(["tables", "jobs", "regions", "trace", "hours", "sample",
                                                "order", "max_passes", "delay"]), st.integers(-2, 2)),
                    inner, max_size=3)), max_leaves=8)

plausible = {
    "kind": st.one_of(st.sampled_from(["solve", "simulate"]), values),
    "family": st.one_of(st.sampled_from(["tetris", "cassini", "hived"]), values),
    "solvers": st.one_of(st.lists(st.sampled_from(["exact", "hill-climb", "lns", "nope"]), min_size=1, max_size=2),
                         values),
    "sizes": st.one_of(st.lists(st.dictionaries(st.sampled_from(["tables", "jobs", "regions", "bogus"]),
                                                st.one_of(st.integers(-1, 6), values), max_size=3),
                                min_size=1, max_size=2), values),
    "seeds": st.one_of(st.lists(st.integers(-1, 3), min_size=1, max_size=2), values),
    "time_limit": values,
    "options": values,
    "name": values,
    "policies": st.one_of(st.lists(st.sampled_from(["fifo", "dally", "nope"]), min_size=1, max_size=2), values),
    "traces": st.one_of(st.lists(st.fixed_dictionaries({"trace": st.just("no-such.csv")},
                                                       optional={"hours": values, "sample": values}),
                                 min_size=1, max_size=2), values),
    "clusters": st.one_of(st.lists(st.sampled_from(["1x1x1x2x8", "bogus"]), min_size=1, max_size=2), values),
}
docs = st.one_of(st.fixed_dictionaries({}, optional=plausible), values)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(docs)
def test_any_spec_validates_or_names_a_field(tmp_path, doc):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(doc, allow_nan=True))
    try:
        spec = load_spec(p)
        validate_cells(spec, expand_cells(spec))
    except InstanceError as exc:
        assert exc.field and "\n" not in str(exc)


@pytest.mark.parametrize("doc, expect", [
    ({"kind": [1], "seeds": [1]}, "kind: must be"),
    ({"kind": {"a": 1}}, "kind: must be"),
    ({"family": "tetris", "solvers": ["hill-climb"], "seeds": [0], "sizes": [{"tables": [5]}]}, "sizes[0].tables"),
    ({"family": "tetris", "solvers": ["hill-climb"], "seeds": [0], "sizes": [{"tables": None}]}, "sizes[0].tables"),
    ({"family": "tetris", "solvers": ["hill-climb"], "seeds": [0], "sizes": [{1: 5}]}, "sizes[0].1"),
    ({"kind": "simulate", "policies": ["fifo"], "traces": [{"trace": "philly", "hours": {"a": 1}}],
      "clusters": ["1x1x1x2x8"], "seeds": [0]}, "traces[0].hours"),
])
def test_wrong_field_types_are_one_line(tmp_path, capsys, doc, expect):
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["sweep", str(p), "-o", str(tmp_path / "o"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expect in err, err


def test_a_huge_grid_is_refused_before_cells_are_built(tmp_path, capsys):
    doc = {"family": "tetris", "solvers": ["exact", "hill-climb"], "seeds": list(range(10_000)),
           "sizes": [{"tables": 5 + i % 3} for i in range(10_000)]}
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["sweep", str(p), "-o", str(tmp_path / "o"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"exceeds {MAX_CELLS:,}" in err, err
    assert not (tmp_path / "o" / "cells").exists() or not list((tmp_path / "o" / "cells").iterdir())
