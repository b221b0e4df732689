"""Sweep specs: load and validate a grid (solve or simulate cells), expand it into cells, key
each cell by its content and the package version (so a rerun skips finished cells)."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from ...errors import InstanceError
from ...io import read_document
from ..run import package_version as installed_version

__all__ = ["load_spec", "expand_cells", "validate_cells", "cell_key", "MAX_CELLS"]


def _flag(key: str) -> str:
    return "--" + str(key).replace("_", "-")


def _argv(options: dict[str, Any], where: str = "options") -> list[str]:
    out: list[str] = []
    for k, v in options.items():
        if not isinstance(k, str):
            raise InstanceError(f"{where}.{k}", "option names must be strings")
        if v is None:
            raise InstanceError(f"{where}.{k}", "must have a value")
        if not isinstance(v, (str, int, float)):
            raise InstanceError(f"{where}.{k}", f"must be a number, a string or a boolean, got {type(v).__name__}")
        if isinstance(v, bool):
            if v:
                out.append(_flag(k))
            continue
        out += [_flag(k), str(v)]
    return out


def _parse(argv: list[str], where: str) -> argparse.Namespace:
    """Parse a command line with the CLI's own parser; errors name the spec field."""
    from ..commands import base_parser

    try:
        return base_parser()[0].parse_args(argv)
    except InstanceError as exc:
        raise InstanceError(f"{where}.{exc.field.lstrip('-').replace('-', '_')}", exc.message) from None


def _seq(doc: dict, key: str, *, required: bool = True) -> list:
    v = doc.get(key)
    if v is None and not required:
        return []
    if not isinstance(v, list) or not v:
        raise InstanceError(key, "must be a non-empty list")
    if len(v) > 10_000:
        raise InstanceError(key, "must have at most 10,000 entries")
    return v


def load_spec(path: str | Path | dict) -> dict[str, Any]:
    """Read (a file) and validate a sweep spec; returns it normalized. A mapping is validated as
    it is (a spec written in Python). Raises :class:`InstanceError`."""
    doc = read_document(path) if isinstance(path, str | Path) else path
    if not isinstance(doc, dict):
        raise InstanceError("spec", "must be a mapping with a 'kind'")
    kind = doc.get("kind", "solve")
    known: dict[str, set[str]] = {"solve": {"kind", "family", "solvers", "sizes", "seeds", "time_limit", "options", "name"},
             "simulate": {"kind", "policies", "traces", "clusters", "seeds", "options", "name"}}
    if not isinstance(kind, str) or kind not in known:
        raise InstanceError("kind", f"must be 'solve' or 'simulate', got {kind!r}")
    for key in doc:
        if not isinstance(key, str) or key not in known[kind]:
            raise InstanceError(str(key), f"is not a field of a {kind} sweep (fields: {', '.join(sorted(known[kind]))})")
    seeds = _seq(doc, "seeds")
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 2**32:
            raise InstanceError(f"seeds[{i}]", f"must be an integer in 0..2**32, got {s!r}")
    options = doc.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise InstanceError("options", "must map a solver or policy name to a mapping of keyword arguments")
    spec: dict[str, Any] = {"kind": kind, "seeds": seeds, "options": options, "name": str(doc.get("name", ""))}
    if kind == "solve":
        from ...registry import get_problem

        fam = doc.get("family")
        if not isinstance(fam, str):
            raise InstanceError("family", "must name a problem family")
        try:
            pspec = get_problem(fam)
        except InstanceError as exc:
            raise InstanceError("family", exc.message) from None
        solvers = _seq(doc, "solvers")
        for i, s in enumerate(solvers):
            if not isinstance(s, str) or s not in pspec.solvers:
                raise InstanceError(f"solvers[{i}]", f"must be one of {sorted(pspec.solvers)}, got {s!r}")
        for name in options:
            if name not in solvers:
                raise InstanceError(f"options.{name}", "names a solver that is not in 'solvers'")
        sizes = _seq(doc, "sizes")
        for i, sz in enumerate(sizes):
            if not isinstance(sz, dict):
                raise InstanceError(f"sizes[{i}]", "must be a mapping of generate options")
        tl = doc.get("time_limit")
        if tl is not None and (isinstance(tl, bool) or not isinstance(tl, (int, float))
                               or not math.isfinite(tl) or tl <= 0):
            raise InstanceError("time_limit", f"must be a positive number of seconds, got {tl!r}")
        spec.update(family=fam, solvers=solvers, sizes=sizes, time_limit=tl)
    else:
        from ...sim.policies import policy_names

        POLICIES = policy_names()

        policies = _seq(doc, "policies")
        for i, p in enumerate(policies):
            if not isinstance(p, str) or p not in POLICIES:
                raise InstanceError(f"policies[{i}]", f"must be one of {sorted(POLICIES)}, got {p!r}")
        for name in options:
            if name not in policies:
                raise InstanceError(f"options.{name}", "names a policy that is not in 'policies'")
        traces = _seq(doc, "traces")
        for i, t in enumerate(traces):
            if not isinstance(t, dict) or not isinstance(t.get("trace"), str):
                raise InstanceError(f"traces[{i}]", "must be a mapping with 'trace' (a file or a shipped name)")
        clusters = _seq(doc, "clusters")
        for i, c in enumerate(clusters):
            if not isinstance(c, str):
                raise InstanceError(f"clusters[{i}]", "must be a --cluster value (a spec file or RxCxKxMxG)")
        spec.update(policies=policies, traces=traces, clusters=clusters)
    return spec


MAX_CELLS = 100_000


def expand_cells(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of the grid, in a stable order (size or trace, cluster, seed, solver or policy).

    Refuses a grid of more than ``MAX_CELLS`` cells before building it (one line).
    """
    axes = (("sizes", "seeds", "solvers") if spec["kind"] == "solve" else ("traces", "clusters", "seeds", "policies"))
    n = math.prod(len(spec[a]) for a in axes)
    if n > MAX_CELLS:
        raise InstanceError("spec", f"the grid {' x '.join(str(len(spec[a])) for a in axes)} = {n:,} cells "
                                    f"exceeds {MAX_CELLS:,}; split the sweep")
    cells = []
    if spec["kind"] == "solve":
        for si, size in enumerate(spec["sizes"]):
            for seed in spec["seeds"]:
                for solver in spec["solvers"]:
                    cells.append({"kind": "solve", "family": spec["family"], "size": size, "size_index": si,
                                  "seed": seed, "solver": solver, "time_limit": spec["time_limit"],
                                  "options": spec["options"].get(solver, {})})
    else:
        for ti, tr in enumerate(spec["traces"]):
            for cluster in spec["clusters"]:
                for seed in spec["seeds"]:
                    for policy in spec["policies"]:
                        cells.append({"kind": "simulate", "trace": tr, "trace_index": ti, "cluster": cluster,
                                      "seed": seed, "policy": policy, "options": spec["options"].get(policy, {})})
    return cells


def cell_key(cell: dict[str, Any], package_version: str | None = None) -> str:
    """SHA-256 of the cell's canonical inputs and the package version."""
    blob = json.dumps({"cell": cell, "version": package_version or installed_version()},
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def validate_cells(spec: dict[str, Any], cells: list[dict[str, Any]]) -> None:
    """Everything a cell needs, checked before any cell runs (one line naming the field)."""
    from ...registry import check_solver_options, get_problem

    if spec["kind"] == "solve":
        pspec = get_problem(spec["family"])
        for si, size in enumerate(spec["sizes"]):
            args = _parse(["generate", spec["family"], *_argv(size, f"sizes[{si}]"), "--seed", str(spec["seeds"][0])],
                          f"sizes[{si}]")
            try:
                pspec.generate(args)  # the generator's own checks (counts, memory bound)
            except InstanceError as exc:
                raise InstanceError(f"sizes[{si}].{exc.field.lstrip('-').replace('-', '_')}", exc.message) from None
        for solver in spec["solvers"]:
            try:
                check_solver_options(pspec, solver, dict(spec["options"].get(solver, {})),
                                     reserved={"seed": "seeds", "time_limit": "time_limit"})
            except InstanceError as exc:
                raise InstanceError(f"options.{solver}", exc.message) from None
    else:
        from ..policy_data import check_policy_options
        from ..run import load_inputs

        clusters = {}
        for ti, tr in enumerate(spec["traces"]):
            for cluster in spec["clusters"]:
                args = _sim_args(tr, cluster, spec["seeds"][0], "fifo", f"traces[{ti}]")
                clusters.setdefault(cluster, load_inputs(args)[0].cluster)
        for p in spec["policies"]:
            for name, cluster in clusters.items():  # what simulate refuses, the spec refuses first
                try:
                    check_policy_options(p, spec["options"].get(p, {}), cluster)
                except InstanceError as exc:
                    field = exc.field if exc.field.startswith("--option") else f"{exc.field} on {name}"
                    raise InstanceError(f"options.{p}", f"{field}: {exc.message}") from None


def _sim_args(tr: dict[str, Any], cluster: str, seed: int, policy: str, where: str) -> argparse.Namespace:
    window = {k: v for k, v in tr.items() if k != "trace"}
    return _parse(["simulate", tr["trace"], "--policy", policy, "--cluster", cluster, "--seed", str(seed),
                   *_argv(window, where), "-o", "unused"], where)
