"""Trace files of every format, mutated: a trace or one InstanceError when read, and on the
command line exit 0 with the files or exit 2 with one line and nothing written."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placement.instances.traces import FORMAT_SAMPLES, trace_path

import placement.app.shipped  # noqa: F401 - names the goodput model's applications
from placement.app.cli import main
from placement.errors import InstanceError
from placement.sim.trace import Trace
from placement.sim.trace_formats import load_trace

JUNK = ["", "x", "-1", "nan", "inf", "1e400", "\x00", "9" * 40, "ResNet-18 (batch size 7)", "2.5", "0", " "]
SAMPLES = {fmt: trace_path(name).read_text(encoding="utf-8") for fmt, name in FORMAT_SAMPLES.items()}


@st.composite
def mutated(draw):
    fmt = draw(st.sampled_from(sorted(SAMPLES)))
    sep = "\t" if fmt == "gavel" else ","
    lines = SAMPLES[fmt].splitlines()[:4]
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        cells = lines[i].split(sep)
        op = draw(st.sampled_from(["cell", "drop", "extra", "dup", "cut", "bom"]))
        if op == "cell":
            cells[draw(st.integers(0, len(cells) - 1))] = draw(st.sampled_from(JUNK))
            lines[i] = sep.join(cells)
        elif op == "drop":
            lines[i] = sep.join(cells[:-1])
        elif op == "extra":
            lines[i] = sep.join(cells + ["1"])
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines = lines[:i]
        elif op == "bom":
            lines[0] = "\ufeff" + lines[0] if lines else "\ufeff"
    return fmt, "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutated())
def test_a_mutated_trace_file_is_a_trace_or_one_error(tmp_path, case):
    fmt, text = case
    p = tmp_path / "t.txt"
    p.write_text(text, encoding="utf-8")
    try:
        trace, _ = load_trace(p)
    except InstanceError as exc:
        assert "\n" not in str(exc) and exc.field
        return
    assert isinstance(trace, Trace)
    assert all(j.gpus >= 1 and j.duration >= 0 and j.submit >= 0 for j in trace.jobs)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutated().filter(lambda c: c[0] != "pollux"))   # the goodput runs: tests/sim/test_trace_formats.py
def test_a_mutated_trace_file_on_the_command_line(tmp_path_factory, monkeypatch, case):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # the run and its files, not plots
    fmt, text = case
    d = tmp_path_factory.mktemp("f")
    p = d / "t.txt"
    p.write_text(text, encoding="utf-8")
    code = main(["simulate", str(p), "--policy", "fifo", "-o", str(d / "o")])
    assert code in (0, 1, 2)
    if code == 2:
        assert not (d / "o").exists()
    else:
        assert (d / "o" / "summary.json").is_file()


@pytest.mark.parametrize("fmt", sorted(FORMAT_SAMPLES))
def test_every_sample_is_recognised(fmt, tmp_path):
    assert load_trace(trace_path(FORMAT_SAMPLES[fmt]))[1] == fmt
