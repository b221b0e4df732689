"""Policies plug in through the entry-point group ``placement.policies`` and nothing else.

A policy registered only through an entry point (a module written to a temporary folder, an
entry point added to the list the registry reads) runs with ``placement simulate --policy NAME``
and its log passes the independent replay check; ``simulate --help`` lists every registered
policy with its one-line description; an unknown name is one error line and exit 2.
"""

from __future__ import annotations

import json
import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

import placement.sim.policies as registry
from placement.app.cli import main
from placement.sim import read_log, replay_check
from placement.sim.instance import load_instance

TOY = textwrap.dedent('''
    """A throwaway policy for the plug-in test."""
    from placement.sim.placement import first_fit_consolidated
    from placement.sim.policy import Policy, Start


    class LargestFirst(Policy):
        """Largest pending job first, first-fit consolidated (a plug-in test policy)."""

        name = "toy-largest"

        def schedule(self, view, events):
            free = view.free.copy()
            out = []
            for job in sorted(view.pending, key=lambda j: (-j.gpus, j.id)):
                gpus = first_fit_consolidated(view.cluster, free, job.gpus, job.gpu_type)
                if gpus is not None:
                    free[list(gpus)] = False
                    out.append(Start(job.id, gpus))
            return out
''')


@pytest.fixture
def toy_policy(tmp_path, monkeypatch):
    (tmp_path / "toy_policy_plugin.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = dict(registry.policy_entry_points())
    assert "toy-largest" not in real
    toy = EntryPoint(name="toy-largest", value="toy_policy_plugin:LargestFirst",
                     group=registry.ENTRY_POINT_GROUP)
    registry.policy_entry_points.cache_clear()
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [*real.values(), toy] if group == registry.ENTRY_POINT_GROUP else [])
    yield "toy-largest"
    registry.policy_entry_points.cache_clear()
    sys.modules.pop("toy_policy_plugin", None)


def test_a_policy_registered_only_by_entry_point_runs(toy_policy, tmp_path, capsys):
    inst = tmp_path / "t.json"
    assert main(["generate", "trace", "--kind", "poisson", "--jobs", "40", "--max-gpus", "8",
                 "--cluster", "1x1x2x2x4", "--seed", "3", "-o", str(inst)]) == 0
    out = tmp_path / "run"
    assert main(["simulate", str(inst), "--policy", toy_policy, "-o", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == toy_policy and summary["replay_ok"] and summary["jobs"] == 40
    sim = load_instance(json.loads((out / "instance.json").read_text()))
    log = read_log(out / "log.csv")
    assert replay_check(sim.trace, sim.cluster, log, perf=sim.perf_model()) == []
    assert sum(r.event == "finish" for r in log) == 40
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    help_text = capsys.readouterr().out
    assert "toy-largest" in help_text and "Largest pending job first" in help_text


def test_help_lists_every_registered_policy_with_its_description(capsys):
    described = registry.describe_policies()
    assert {"fifo", "dally", "tiresias", "gandiva", "mast", "federated", "hived", "quota",
            "private"} <= set(described)
    assert all(described.values()), [n for n, d in described.items() if not d]
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, line in described.items():
        assert name in text and " ".join(line.split()) in text


def test_an_unknown_policy_is_one_line_and_exit_2(tmp_path, capsys):
    inst = tmp_path / "t.json"
    assert main(["generate", "trace", "--kind", "poisson", "--jobs", "5", "--max-gpus", "2",
                 "--cluster", "1x1x1x1x4", "--seed", "1", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(inst), "--policy", "no-such-policy", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --policy:") and "fifo" in err[0]
    assert not (tmp_path / "o").exists()
