"""``placement generate trace --perf``: written into the instance for every kind that runs under it;
``--kind cassini`` (CASSINI's catalogue models, none of them Dally's or Pollux's) takes perf
``ideal`` only and refuses another in one line, writing nothing."""

from __future__ import annotations

import json

import pytest

from placement.app.cli import main


def _perf(path) -> str:
    return json.loads(path.read_text())["perf"]


@pytest.mark.parametrize("perf", ["dally", "dally-machine", "goodput"])
def test_cassini_refuses_another_perf_in_one_line(tmp_path, capsys, perf):
    out = tmp_path / "t.json"
    assert main(["generate", "trace", "--kind", "cassini", "--perf", perf, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --perf: --kind cassini runs under perf 'ideal' only (CASSINI's catalogue models are "
                   f"in neither Dally's Table 1 nor the goodput measurements), not {perf!r}\n")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_cassini_is_ideal_given_or_not_and_other_kinds_honour_perf(tmp_path):
    for args, want in ((["--kind", "cassini"], "ideal"), (["--kind", "cassini", "--perf", "ideal"], "ideal"),
                       (["--kind", "poisson", "--jobs", "3"], "dally"),
                       (["--kind", "poisson", "--jobs", "3", "--perf", "ideal"], "ideal"),
                       (["--kind", "batch", "--jobs", "3", "--perf", "dally-machine"], "dally-machine")):
        out = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
        assert main(["generate", "trace", *args, "-o", str(out)]) == 0
        assert _perf(out) == want, args
