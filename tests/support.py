"""Shared test support: hypothesis strategies, instance builders and independent oracles.

Test modules import shared pieces from here only (never from each other):

- Tetris: a brute-force oracle over every placement (independent of the exact model and the
  heuristics: it only calls the reference evaluation, R**T placements; keep T*log(R) small),
  tie-heavy and large-magnitude instance strategies;
- HiveD: generated feasibility instances (closed form, exact model and buddy allocator);
- the simulator: small hand-built traces and the HiveD sharing scene;
- the command line: ``placement ARGS`` run as its console script, forked from a preloaded server.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
from hypothesis import strategies as st
from placement.instances import generate_hived, generate_tetris, tetris_document
from placement.models import hived_vc as hv

from placement.sim.trace import Job, Trace
from placement.tetris import evaluate, load_instance, violations

__all__ = ["held_gpu_seconds", "brute_force", "lp_value_and_duals", "small_sizes", "proven_tetris", "library_tetris", "tie_heavy", "large_magnitudes", "large_instance", "large",
           "hived_instances", "sim_trace", "SCENE", "SCENE_ASSIGNMENT", "run_placement"]

# --- Tetris ---------------------------------------------------------------------------------


def brute_force(inst):
    """Return ``(best_objective, best_home)`` over feasible placements, or ``(None, None)``."""
    best, best_home = None, None
    for combo in itertools.product(range(inst.n_regions), repeat=inst.n_tables):
        home = np.asarray(combo, dtype=np.int64)
        ev = evaluate(inst, home)
        if violations(inst, home, ev):
            continue
        if best is None or ev.objective < best - 1e-12:
            best, best_home = ev.objective, home
    return best, best_home


def small_sizes(doc, sizes):
    """A copy of a Tetris document with these table sizes (e.g. in {0, 1, 2}: zero-size tables and
    argmax ties everywhere), storage capacities kept valid and no move quota."""
    doc = copy.deepcopy(doc)
    for t, size in zip(doc["tables"], sizes, strict=False):
        t["size"] = size
    total = sum(t["size"] for t in doc["tables"])
    for r in doc["regions"]:
        r["storage_capacity"] = max(r["storage_capacity"], total)
    doc["move_quota"] = None
    return doc


def _with_small_sizes(doc, sizes):
    """Sizes in {0, 1, 2}: zero-size tables and argmax ties everywhere; capacities kept valid."""
    return load_instance(small_sizes(doc, sizes))


tie_heavy = st.builds(
    lambda T, J, R, seed, sizes: _with_small_sizes(tetris_document(T, J, R, seed=seed, ml_share=0.4), sizes),
    T=st.integers(2, 6), J=st.integers(1, 8), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(0, 2), min_size=6, max_size=6),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def large_magnitudes(doc, size_unit: int, gh_unit: int, seed: int, tight_share: float = 0.8):
    """Blow a generated document up to large integers (sizes ~ size_unit x 20, GPU-hours ~ gh_unit x 30).

    Sizes and GPU-hours get a random remainder so they are not multiples of the
    unit. Supplies are set close to a random subset sum of the jobs' GPU-hours
    (within 12), so a region's overload lands in the few GPU-hours where the
    sigmoid (8) still changes: that is where an integrality tolerance times a
    million GPU-hours used to hide real overload. Capacities, the quota and the
    threshold are scaled so the start placement stays feasible.
    """
    rng = np.random.default_rng(seed)
    doc = copy.deepcopy(doc)
    n = len(doc["tables"])
    for t in doc["tables"]:
        t["size"] = int(t["size"] * size_unit + rng.integers(0, size_unit))
    ml = [j for j in doc["jobs"] if j["kind"] == "ml"]
    for j in ml:
        j["gpu_hours"] = int(j["gpu_hours"] * gh_unit + rng.integers(0, gh_unit))
    for r in doc["regions"]:
        supply = {}
        for g, v in r["gpu_supply"].items():
            hours = [j["gpu_hours"] for j in ml if j["gpu_type"] == g]
            if v <= 0:
                supply[g] = 0
            elif hours and rng.random() < tight_share:
                pick = rng.choice(len(hours), size=int(rng.integers(1, len(hours) + 1)), replace=False)
                supply[g] = max(1, int(sum(hours[i] for i in pick) - rng.integers(0, 12)))
            else:
                supply[g] = int(v * gh_unit + rng.integers(0, gh_unit))
        r["gpu_supply"] = supply
        r["storage_capacity"] = int((r["storage_capacity"] + n) * size_unit)
    doc["home_threshold"] = int(doc["home_threshold"] * gh_unit * rng.uniform(0, 1))
    doc["move_quota"] = int(doc["move_quota"] * size_unit) if rng.random() < 0.5 else None
    total = sum(t["size"] for t in doc["tables"])
    doc["weights"] = {"w1": 1.0, "w2": float(total), "w3": float(round(0.2 * total))}
    return load_instance(doc)


def large_instance(T, J, R, seed, size_unit=300_000, gh_unit=30_000):
    """A brute-forceable instance with table sizes ~1e6-1e7 and GPU-hours ~1e5-1e6."""
    doc = tetris_document(T, J, R, seed=seed, n_gpu_types=1 + seed % 2, n_priorities=1 + seed % 3, ml_share=0.8)
    return large_magnitudes(doc, size_unit, gh_unit, seed)


large = st.builds(
    large_instance, T=st.integers(3, 6), J=st.integers(2, 10), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    size_unit=st.sampled_from([100_000, 300_000, 1_000_000]), gh_unit=st.sampled_from([10_000, 30_000, 100_000]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


# --- HiveD ----------------------------------------------------------------------------------

hived_instances = st.builds(
    lambda chains, levels, top, vcs, seed, overload, pins, bad, split: generate_hived(
        chains, levels, top, vcs, seed=seed, overload=overload, n_pinned=pins, n_bad=bad, max_split=split),
    st.integers(1, 2), st.integers(1, 4), st.integers(1, 3), st.integers(1, 4), st.integers(0, 10**6),
    st.integers(0, 2), st.integers(0, 3), st.integers(0, 2), st.integers(1, 3))


# --- Simulator ------------------------------------------------------------------------------

def sim_trace(rows, name="t"):
    """A trace from ``(submit, gpus, duration, tenant)`` rows; ids ``j000``, ``j001``, ... in row order."""
    jobs = [Job(id=f"j{i:03d}", submit=float(s), gpus=g, duration=float(d), tenant=t)
            for i, (s, g, d, t) in enumerate(rows)]
    return Trace(name=name, jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))), provenance="test")


# The sharing-anomaly scene (HiveD §2.2): A and B have one node each (quota 8 GPUs); A's four
# short 1-GPU jobs make B's eight long 1-GPU jobs (within B's quota) spread over both nodes; A's
# 8-GPU job, within A's quota, then finds no node with 8 idle GPUs under quota sharing.
SCENE = [(0, 1, 1, "A")] * 4 + [(0, 1, 100, "B")] * 8 + [(2, 8, 10, "A")]
SCENE_ASSIGNMENT = hv.VCAssignment(2, {"A": (0, 0, 0, 1), "B": (0, 0, 0, 1)})


def run_reproduction_with(rep, out):
    """Run a paper's reproduction (``rep``, e.g. ``configured(...)`` on a tiny config) into
    ``out`` with the registry showing only it; returns its context."""
    import pytest

    from placement.app import reproduce as rp

    mp = pytest.MonkeyPatch()
    mp.setattr(rp, "reproductions", lambda: {rep.name: rep})
    try:
        return rp.run_reproduction(rep.name, str(out))
    finally:
        mp.undo()


def rack_spreads(log, rack) -> list[tuple[str, float, int, int]]:
    """Every start of ``log`` whose GPUs span two racks or more, with the most free GPUs any one
    rack had at that moment, recomputed from the log alone (stops at a time are applied before
    the starts at that time, and the starts at one time in the log's order, each taking its GPUs
    before the next is placed): ``(job, time, job's GPUs, most free in one rack)``."""
    rack = [int(x) for x in rack]
    rows = list(log)
    held: dict[str, tuple[int, ...]] = {}
    busy = [False] * len(rack)
    out = []
    i = 0
    while i < len(rows):
        t, batch = rows[i].time, []
        while i < len(rows) and rows[i].time == t:
            batch.append(rows[i])
            i += 1
        for r in batch:
            if r.event in ("finish", "preempt") and r.job in held:
                for g in held.pop(r.job):
                    busy[g] = False
        for r in batch:
            if r.event == "start":
                if len({rack[g] for g in r.gpus}) > 1:
                    free = [0] * (max(rack) + 1)
                    for g, b in enumerate(busy):
                        free[rack[g]] += not b
                    out.append((r.job, r.time, len(r.gpus), max(free)))
                held[r.job] = tuple(r.gpus)
                for g in r.gpus:
                    busy[g] = True
    return out


def held_gpu_seconds(log, t0: float, t1: float) -> float:
    """Independent oracle of the simulator's utilization over ``[t0, t1]``: the GPU-seconds of
    every attempt (a start to its job's next preempt or finish, or on past the log's end) that
    fall inside the window, summed segment by segment (no step function); a time-shared segment
    (``share=h`` on its start or rate row) holds ``1/h`` of each of its GPUs."""
    def share(extra):
        words = dict(w.split("=", 1) for w in extra.split() if "=" in w)
        return float(words.get("share", 1))

    held, since = 0.0, {}
    for r in log:
        if r.event == "start":
            since[r.job] = (r.time, len(r.gpus) / share(r.extra))
        elif r.event == "rate" and "share=" in r.extra and r.job in since:
            a, g = since[r.job]
            held += g * max(0.0, min(r.time, t1) - max(a, t0))
            since[r.job] = (r.time, len(r.gpus) / share(r.extra))
        elif r.event in ("preempt", "finish") and r.job in since:
            a, g = since.pop(r.job)
            held += g * max(0.0, min(r.time, t1) - max(a, t0))
    return held + sum(g * max(0.0, t1 - max(a, t0)) for a, g in since.values())


# Tetris instances small enough for brute force (at most 729 placements): the bound tests' draw.
tiny_tetris = st.builds(
    lambda T, J, R, seed, G, K: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K),
    T=st.integers(2, 6), J=st.integers(1, 8), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 3), K=st.integers(1, 3),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def lp_value_and_duals(m):
    """The Tetris bound relaxation ``m``'s LP value and row duals by HiGHS's dual simplex (the tests' reference)."""
    from placement.models import tetris_bound

    h, _ = tetris_bound.highs_model(m, 30.0, 1e-6)
    h.setOptionValue("solver", "simplex")
    h.run()
    return h.getInfo().objective_function_value, np.asarray(h.getSolution().row_dual)


def proven_tetris() -> list[tuple[str, float]]:
    """(name, optimum) of the instance library's Tetris instances the exact model proved."""
    import csv
    from pathlib import Path

    with open(Path(__file__).resolve().parents[1] / "instances/library/manifest.csv", newline="") as f:
        return [(r["name"], float(r["objective"])) for r in csv.DictReader(f)
                if r["family"] == "tetris" and r["status"] == "optimal"]


def library_tetris(name: str):
    """The instance library's Tetris instance ``name``, loaded."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / f"instances/library/tetris/{name}.json"
    return load_instance(json.loads(path.read_text()))


def bound_tol(v: float) -> float:
    """The tolerance a lower bound may exceed the optimum by (float rounding): 1e-7 relative."""
    return 1e-7 * max(1.0, abs(v))


# --- The command line -----------------------------------------------------------------------

# What the server of run_placement imports once, so that each command's child starts with it loaded:
# "__main__" is the script pytest runs from (multiprocessing would import it again in every child; under
# pytest-xdist's workers there is none); matplotlib is left out: it reads MPLBACKEND when imported, and
# the child sets the command's environment first.
CLI_PRELOAD = ["__main__", "tests.support", "placement.app.cli", "placement.app.commands", "placement.registry", "numpy",
               "networkx", "pyomo.environ", "highspy", "yaml"]
_FORKSERVER = None


def run_placement(args: list[str], cwd, env: dict, timeout: float) -> tuple[int, str, str]:
    """``placement ARGS`` as its console script runs it (``sys.exit(main())``, ``sys.argv`` set), with
    ``cwd`` and exactly ``env``, in its own process: a child of multiprocessing's fork server, which
    imported ``CLI_PRELOAD`` once, so each command skips the interpreter's start and the package's
    imports (~0.6 s a command; a single-threaded server, so the fork is safe). Returns (exit code,
    stdout, stderr); a command still running after ``timeout`` seconds is killed and raises
    ``subprocess.TimeoutExpired``."""
    import multiprocessing
    import subprocess
    import tempfile
    from pathlib import Path

    global _FORKSERVER
    if _FORKSERVER is None:
        _FORKSERVER = multiprocessing.get_context("forkserver")
        _FORKSERVER.set_forkserver_preload(CLI_PRELOAD)
    with tempfile.TemporaryDirectory() as d:
        out, err = Path(d) / "out", Path(d) / "err"
        p = _FORKSERVER.Process(target=_console_script, args=(list(args), str(cwd), dict(env), str(out), str(err)))
        p.start()
        p.join(timeout)
        if p.exitcode is None:
            p.kill()
            p.join()
            raise subprocess.TimeoutExpired(["placement", *args], timeout)
        return p.exitcode, *(f.read_text(errors="replace") if f.exists() else "" for f in (out, err))


def _console_script(args: list[str], cwd: str, env: dict, out: str, err: str) -> None:
    """The child of :func:`run_placement`: what ``.venv/bin/placement`` does, its output to files."""
    import os
    import sys

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = open(1, "w", closefd=False)   # noqa: SIM115 -- the process's own streams
    sys.stderr = open(2, "w", closefd=False)   # noqa: SIM115
    sys.argv = ["placement", *args]
    from placement.app.cli import main

    sys.exit(main())
