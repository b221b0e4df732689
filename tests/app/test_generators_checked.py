"""Every Python generator checks its seed and sizes before any work (one InstanceError naming the
parameter), and ``placement generate`` refuses, before any work, a file the commands could not read."""

from __future__ import annotations

import pytest
from placement.instances import generate_cassini, generate_hived, generate_tetris
from placement.instances.cassini import random_candidate

from placement.app.cli import main
from placement.errors import InstanceError
from placement.sim.trace import synthetic_trace

GENERATORS = {
    "tetris": lambda **kw: generate_tetris(4, 5, 2, **kw),
    "hived": lambda **kw: generate_hived(1, 3, 1, 2, **kw),
    "cassini": lambda **kw: generate_cassini(3, 2, **kw),
    "random_candidate": lambda **kw: random_candidate(generate_cassini(3, 2), **kw),
    "synthetic_trace": lambda **kw: synthetic_trace("batch", jobs=3, **kw),
}


@pytest.mark.parametrize("gen", sorted(GENERATORS))
@pytest.mark.parametrize("seed", [-1, 1.5, "1", True, 2**64, None])
def test_a_bad_seed_is_one_line_naming_it(gen, seed):
    # Before: numpy's own ValueError / TypeError from default_rng.
    with pytest.raises(InstanceError) as e:
        GENERATORS[gen](seed=seed)
    assert e.value.field == "seed" and "must be an integer in 0..2^63-1" in e.value.message


@pytest.mark.parametrize("gen", sorted(GENERATORS))
def test_a_good_seed_is_deterministic(gen):
    a, b, c = GENERATORS[gen](seed=7), GENERATORS[gen](seed=7), GENERATORS[gen](seed=8)
    assert repr(a) == repr(b) and repr(a) != repr(c)


@pytest.mark.parametrize("call,field", [
    (lambda: generate_tetris(4, 5, 2, n_gpu_types=9), "n_gpu_types"),
    (lambda: generate_tetris(4, 5, 2, n_priorities=0), "n_priorities"),
    (lambda: generate_tetris(4, 5, 2, ml_share=1.5), "ml_share"),
    (lambda: generate_tetris(4.5, 5, 2), "n_tables"),
    (lambda: generate_hived(0), "n_chains"),
    (lambda: generate_hived(1, 3, 1, 2, load=float("nan")), "load"),
    (lambda: generate_cassini(0), "n_jobs"),
    (lambda: generate_cassini(3, 2, topology="ring"), "topology"),
    (lambda: synthetic_trace("batch", jobs=2.5), "jobs"),
])
def test_bad_sizes_are_named(call, field):
    # Before: ValueError (or a raw numpy error) with no field.
    with pytest.raises(InstanceError) as e:
        call()
    assert e.value.field == field


@pytest.mark.parametrize("argv,option", [
    (["generate", "tetris", "--tables", "1000000", "--jobs", "1000000"], "--jobs"),
    (["generate", "tetris", "--tables", "2000000"], "--tables"),
    (["generate", "trace", "--kind", "poisson", "--jobs", "1000000"], "--jobs"),
])
def test_a_file_too_large_to_read_back_is_refused_before_work(tmp_path, capsys, argv, option):
    # Before: 40 s and 0.9 GB of work for a ~200 MB file `solve` refuses to read (64 MiB).
    out = tmp_path / "big.json"
    assert main(argv + ["-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option}: too large") and "files of at most 64 MiB" in err and err.count("\n") == 1
    assert not out.exists()


def test_the_read_limit_follows_the_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PLACEMENT_MAX_INPUT_BYTES", "1000")
    assert main(["generate", "tetris", "--tables", "20", "--jobs", "5", "-o", str(tmp_path / "g.json")]) == 2
    assert "error: --tables: too large: the instance would be a file of at least 1.61 KiB (1.17 KiB from --tables), and the commands read files of at most 1,000 B" in capsys.readouterr().err
    assert not (tmp_path / "g.json").exists()
    monkeypatch.delenv("PLACEMENT_MAX_INPUT_BYTES")
    assert main(["generate", "tetris", "--tables", "20", "--jobs", "5", "-o", str(tmp_path / "g.json")]) == 0


def test_a_long_generation_says_so_first_and_a_short_one_does_not(tmp_path, capsys, monkeypatch):
    import placement.app.commands as commands

    monkeypatch.setattr(commands, "_NOTE_BYTES", 1000)    # the note's threshold, not the work, made small
    assert main(["generate", "tetris", "--tables", "20", "--jobs", "5", "-o", str(tmp_path / "g.json")]) == 0
    assert capsys.readouterr().err.startswith("note: generating tetris: a document of at least 0 MiB")
    monkeypatch.undo()
    assert main(["generate", "tetris", "--tables", "20", "--jobs", "5", "-o", str(tmp_path / "h.json")]) == 0
    assert capsys.readouterr().err == ""
