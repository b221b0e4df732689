"""Policy options are checked like solver options: against the constructor's annotations, before
the run, one line naming the option, exit 2, nothing written (one checker:
:func:`placement.options.check_options`)."""

from __future__ import annotations

import json

import pytest
from placement.solvers.online.gms import GmsParams

from placement.app.cli import main
from placement.app.policy_data import check_policy_options
from placement.options import UNANNOTATED, _parameters
from placement.sim.policies import policy_class, policy_names

WINDOW = ["philly", "--start", "1200", "--hours", "1"]
BAD = [
    ("fifo", "backfill=maybe", "--option backfill: must be bool"),
    ("fifo", "backfill=1", "--option backfill: must be bool"),
    ("fifo", "backfill=null", "--option backfill: must be bool"),
    ("fifo", "backfill=[true]", "--option backfill: must be bool"),
    ("mast", "negative_cache=2", "--option negative_cache: must be bool"),
    ("mast", "prefilter_min=-1", "--option prefilter_min: must be int >= 0"),
    ("mast", "prefilter_min=abc", "--option prefilter_min: must be int"),
    ("mast", 'quotas={"t0": -5}', "--option quotas.t0: must be int >= 0"),
    ("mast", "perf=1", "'perf' is not a parameter of policy 'mast'"),
    ("mast", "data=bogus", "--option data: must be one of ['candidate-regions', 'v0', 'hill_climb', 'replicas'] or null"),
    ("mast", "data=1", "--option data: must be one of"),
    ("mast", "data_seed=-1", "--option data_seed: must be int >= 0"),
    ("mast", "n_tables=-1", "--option n_tables: must be int >= 1"),
    ("federated", "n_tables=1e308", "--option n_tables: must be int"),
    ("mast", "replication_delay=-1", "--option replication_delay: must be float >= 0 or null"),
    ("mast", "quota_share=0", "--option quota_share: must be float > 0"),
    ("mast", "quota_share=1e400", "--option quota_share: must be a finite float of magnitude at most 1e300"),
    ("mast", "gms=1", "--option gms: must be an object of GmsParams's fields or null"),
    ("mast", 'gms={"w_age": -1}', "--option gms: must be valid (w_age must be a finite number >= 0)"),
    ("mast", 'gms={"bogus": 1}', "--option gms.bogus: must be one of the fields"),
    ("tiresias", "high_skew={}", "--option high_skew: must be a list"),
    ("tiresias", "queue_limits=[0]", "--option queue_limits[0]: must be float > 0"),
    ("dally", "timers=[1,-2]", "--option timers[1]: must be float >= 0"),
    ("dally", "window=both", "--option window: must be one of ['age', 'value']"),
    ("dally", "perf=1", "'perf' of policy 'dally' cannot be set from the command line"),
    ("dally-manual", "preempt_below=2", "--option preempt_below: must be float >= 0 and <= 1"),
    ("gandiva", "migration_cost=-5", "--option migration_cost: must be float >= 0"),
    ("private", "levels=bogus", "--option levels: must be one of ['multi', 'node']"),
    ("private", 'assignment={"t0": [1, 2]}', "--option assignment.t0: must be a list of 4 values"),
    ("private", 'assignment={"t0": "abcd"}', "--option assignment.t0: must be a list"),
    ("quota", 'assignment={"t0": [-1, 0, 0, 0]}', "--option assignment.t0[0]: must be int >= 0"),
    ("hived", 'assignment={"t0": [1.5, 0, 0, 0]}', "--option assignment.t0[0]: must be int"),
    ("hived", 'assignment={"t0": [1000000, 0, 0, 0]}', "assignment: does not fit the cluster's 64 nodes"),
    ("hived-static", "assignment={}", "assignment: must name at least one tenant"),
    ("quota", "order=lifo", "--option order: must be one of ['fifo', 'tiresias']"),
]


@pytest.mark.parametrize(("policy", "option", "message"), BAD, ids=[f"{p}-{o}" for p, o, _ in BAD])
def test_bad_policy_option_is_one_line_exit_2_nothing_written(policy, option, message, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["simulate", *WINDOW, "--policy", policy, "--option", option, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert not out.exists()


def test_seed_rules_are_the_same_for_simulate_and_solve(tmp_path, capsys):
    assert main(["simulate", *WINDOW, "--seed", "-1", "-o", str(tmp_path / "o")]) == 2
    sim = capsys.readouterr().err
    inst = tmp_path / "t.json"
    assert main(["generate", "tetris", "--seed", "1", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["solve", str(inst), "--seed", "-1"]) == 2
    solve = capsys.readouterr().err
    assert sim.splitlines()[-1] == solve.splitlines()[-1] == "error: --seed: must be a non-negative integer, got '-1'"


def test_good_options_are_converted_to_what_the_constructor_takes():
    got = check_policy_options("mast", {"gms": {"w_age": 2, "scan_interval": 60}, "quotas": {"t0": 8},
                                        "replication_delay": None, "data": "v0", "n_tables": 50})
    assert got["gms"] == GmsParams(w_age=2, scan_interval=60) and got["quotas"] == {"t0": 8}
    assert got["data"] == "v0" and got["replication_delay"] is None and got["n_tables"] == 50
    assert check_policy_options("dally-manual", {"timers": [60, 120]})["timers"] == (60, 120)
    assert check_policy_options("tiresias", {"high_skew": ["VGG16"]})["high_skew"] == frozenset({"VGG16"})
    assert check_policy_options("hived", {"assignment": {"a": [0, 1, 0, 2]}})["assignment"] == {"a": (0, 1, 0, 2)}


def test_an_object_a_python_caller_built_passes_an_optional_annotation():
    """``fifo``'s ``data: DataPlacement | None`` takes the object ``placement reproduce mast``
    builds (the union's class), and still refuses what the command line could give."""
    from placement.app.policy_data import candidate_placement
    from placement.app.shipped import cluster_arg
    from placement.errors import InstanceError

    data = candidate_placement(cluster_arg("1x1x1x2x8"), {"t": 1})
    assert check_policy_options("fifo", {"data": data})["data"] is data
    assert check_policy_options("fifo", {"data": None})["data"] is None
    with pytest.raises(InstanceError, match="'data' of .* cannot be set from the command line"):
        check_policy_options("fifo", {"data": "v0"})


def test_a_converted_option_runs(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["simulate", *WINDOW, "--cluster", "1x1x2x4x8", "--policy", "mast", "--option",
                 'gms={"scan_interval": 60}', "--option", "data=null", "-o", str(out)]) == 0
    assert json.loads((out / "summary.json").read_text())["replay_ok"]
    capsys.readouterr()


@pytest.mark.parametrize("name", policy_names())
def test_every_policy_parameter_is_annotated(name):
    params = _parameters(policy_class(name))
    assert params and all(hint is not UNANNOTATED for _, hint in params.values()), params
