"""The command line starts without the heavy modules: the families load lazily, and a command of the
base parser builds no ``reproduce`` parser (whose reproductions import networkx)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from placement.instances import stored, stored_path

from placement.app.bench.startup import StartupTimes, startup_ratio
from placement.app.cli import main
from placement.io import read_document
from placement.registry import lazy, problems

HEAVY = ("networkx", "pyomo", "scipy", "pandas", "matplotlib")

_PROBE = """
import sys
import placement.app.cli as cli
from placement.registry import problems
specs = problems()
token = cli._RUNNING.set("generate")
parser = cli.build_parser()
cli._RUNNING.reset(token)
sub = next(a for a in parser._actions if a.dest == "command")
print(sorted(specs), sorted(sub.choices), [m for m in {heavy!r} if m in sys.modules])
"""


def test_loading_the_cli_and_the_families_imports_no_heavy_module():
    out = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split("] [")
    assert out[0] == "['cassini', 'hived', 'tetris', 'trace'"
    commands = out[1].split(", ")
    assert "'generate'" in commands and "'simulate'" in commands and "'reproduce'" not in commands
    assert out[2].strip() == "]"     # none of HEAVY was imported


def test_a_misspelt_command_still_lists_every_command(capsys):
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(f"'{c}'" in err for c in ("generate", "sweep", "reproduce", "export"))


@pytest.mark.parametrize("family", ["tetris", "cassini", "hived"])
def test_lazy_loaders_give_what_the_modules_give(family):
    """The registry's lazy loaders against the family modules' own functions, on a stored file."""
    import importlib

    module = {"tetris": "placement.tetris.instance", "cassini": "placement.cassini.instance",
              "hived": "placement.hived.config"}[family]
    direct = importlib.import_module(module)
    spec = problems()[family]
    name = stored(family)[0]
    doc = read_document(str(stored_path(family, name)))
    via_spec, via_module = spec.load_instance(doc), direct.load_instance(doc)
    assert json.dumps(spec.instance_to_json(via_spec), sort_keys=True) == \
        json.dumps(direct.instance_to_json(via_module), sort_keys=True)


def test_lazy_names_its_target_and_refuses_a_malformed_one():
    fn = lazy("json:dumps")
    assert fn.__name__ == "dumps" and fn([1, 2]) == json.dumps([1, 2])
    with pytest.raises(ValueError, match="module:function"):
        lazy("json.dumps")


def test_startup_times_take_medians_and_their_ratio():
    t = StartupTimes(("generate", "tetris"), (0.02, 0.04, 0.03), (0.3, 0.5, 0.4))
    assert t.python_median_s == 0.03 and t.placement_median_s == 0.4
    assert t.ratio == pytest.approx(0.4 / 0.03)
    assert t.lines()[-1] == f"  ratio {0.4 / 0.03:.1f}x the bare interpreter"


@pytest.mark.parametrize("repeats", [0, 101, 1.5, True])
def test_startup_ratio_refuses_a_bad_repeat_count(repeats):
    with pytest.raises(ValueError, match="repeats"):
        startup_ratio(repeats=repeats)


def test_the_trace_familys_perf_choices_are_the_simulators():
    from placement.app.families import trace
    from placement.sim.instance import PERF_MODELS

    assert trace.PERF_MODELS == PERF_MODELS
