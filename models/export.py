"""Every exact model written as a model file (MPS or LP) by its modelling layer's own writer.

The files are what MIP benchmarks run on (MIPLIB's convention: one MPS file per instance),
so any solver -- HiGHS, SCIP, CBC, Gurobi -- can be pitted against this package's models
without this package. :mod:`placement.models.backends` reads them back with HiGHS, SCIP or CBC.

Models (``model=`` of :func:`write`, by family)
-----------------------------------------------
tetris
    ``exact`` (default): Figure 4's MIP (:mod:`placement.models.tetris`) in a form that does not
    depend on any solve (:func:`frozen_tetris_model`): each square term (7), (9) ``z >= f(n)``
    gets an argument column ``n`` (one equality row) and the chords of ``f`` between consecutive
    values ``n`` can take (the subset sums of its integer coefficients), all up front. ``n`` only
    takes those values, and the chords are the lower convex hull of ``f`` on them, so the
    file's optimum is the instance's optimum, and the same instance gives the same bytes
    whatever the options. ``solve=True`` (default) also solves the instance in memory
    (``time_limit``, ``mip_gap``) for the record's ``in_memory`` comparison; the file never
    depends on it.
    ``joint``: homes and replicas (:mod:`placement.models.tetris_joint`). Its squares are cut
    lazily, so that file is the model *after* the in-memory solve's cut rounds (exact at the
    answer when the solve converged; cut short by ``time_limit``, an outer approximation whose
    optimum is a lower bound).
    ``bound-lp`` / ``bound-mip``: the scaling relaxation of :mod:`placement.models.tetris_bound`
    (continuous, or with ``x, b, y`` integer and the argmax rows: the ``mip`` method's matrix),
    written by highspy (``Highs.writeModel``), the layer that holds it.
cassini
    ``cluster`` (default): the cluster-level shift model of each candidate
    (:func:`placement.models.cassini.build_cluster`), one file per candidate
    (``NAME.<candidate>.mps``) unless ``candidate=`` names one. ``link``: Table 1 per shared
    link (:func:`placement.models.cassini.build_link`), one file per candidate and link.
hived
    ``exact`` (default, ``form="max"``: the most reservations honoured) or ``feasibility``
    (:func:`placement.models.hived.build`); ``exact-pulp``: the same model in PuLP
    (:func:`placement.models.hived_pulp.build`), written by PuLP's ``writeMPS`` / ``writeLP``.
trace
    ``schedule-bound``: the time-indexed bound of :mod:`placement.models.schedule_bound` on the
    trace and cluster (``objective=`` makespan or mean_jct, ``buckets=``, ``integer=``), by highspy.

Each written file gets a record: path, family, model, columns, rows, integers, sense, and for the
models solved in memory first their status, objective and bound.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from placement.errors import InstanceError

from .backends import round_highs_integer_bounds, write_pyomo

__all__ = ["MODELS", "write", "write_tetris", "frozen_tetris_model", "write_cassini", "write_hived", "write_schedule_bound",
           "file_stats"]

MODELS: dict[str, tuple[str, ...]] = {
    "tetris": ("exact", "joint", "bound-lp", "bound-mip"),
    "cassini": ("cluster", "link"),
    "hived": ("exact", "feasibility", "exact-pulp"),
    "trace": ("schedule-bound",),
}


def _suffix(path: Path) -> str:
    suf = path.suffix.lower()
    if suf not in (".mps", ".lp"):
        raise InstanceError("-o", f"must end in .mps or .lp, got {path.name!r}")
    return suf


def _sibling(path: Path, *parts: str) -> Path:
    """``stem.part1.part2.suffix`` beside ``path``, parts made file-name safe."""
    safe = [re.sub(r"[^A-Za-z0-9_.-]+", "_", p) for p in parts]
    return path.with_name(".".join([path.stem, *safe]) + path.suffix)


def file_stats(path: str | os.PathLike) -> dict[str, Any]:
    """Columns, rows, integer columns and sense of a model file, as HiGHS reads it."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if h.readModel(str(path)) == highspy.HighsStatus.kError:
        raise InstanceError("model file", f"HiGHS cannot read {str(path)!r}")
    lp = h.getLp()
    ints = sum(1 for t in lp.integrality_ if t != highspy.HighsVarType.kContinuous)
    return {"columns": int(lp.num_col_), "rows": int(lp.num_row_), "integers": ints,
            "sense": "max" if lp.sense_ == highspy.ObjSense.kMaximize else "min"}


def _record(path: Path, family: str, model: str, **extra) -> dict[str, Any]:
    return {"path": str(path), "family": family, "model": model, **file_stats(path), **extra}


MAX_FROZEN_CHORDS = 2_000_000  # the frozen Tetris model's chord rows, bounded before they are built


def _support(values: list[int], base: int) -> list[int]:
    """``base`` plus every subset sum of the non-negative integers ``values``, sorted (a bitset)."""
    total = sum(values)
    if total > 8 * MAX_FROZEN_CHORDS:
        raise InstanceError("instance", f"a square term's domain spans {total} integers: too large for the "
                                        f"frozen model (at most {8 * MAX_FROZEN_CHORDS})")
    bits = 1
    for v in values:
        bits |= bits << v
    digits = bin(bits)[:1:-1]
    return [base + k for k, d in enumerate(digits) if d == "1"]


def frozen_tetris_model(inst):
    """Figure 4's MIP with every square term's chords up front (module docstring, ``exact``).

    Built by :func:`placement.models.tetris.build`; its lazily grown cuts are replaced by, for each
    square term ``z >= f(n) = (n/den - s)**2``, a column ``nv = n`` and the chords of ``f``
    between consecutive points of ``n``'s support. ``n`` is ``lo + sum c_i v_i`` with integer
    ``c_i >= 0`` and each ``v_i`` 0 or 1 at every integer point of the model (``x``, or ``a`` =
    AND of ``x``), so its values are the subset sums of the ``c_i``; the chord through
    consecutive support points ``p < q`` lies below ``f`` at every support point (convexity), and
    the chords meet ``f`` at every support point: ``z = f(n)`` at the optimum. Deterministic:
    the same instance gives the same model, row for row.
    """
    import pyomo.environ as pyo
    from pyomo.repn import generate_standard_repn

    from . import tetris

    m = tetris.build(inst)
    squares = m._squares
    supports = []
    for sq in squares:
        repn = generate_standard_repn(sq.n, compute_values=True)
        coefs = [float(c) for c in repn.linear_coefs]
        if any(c < 0 or c != int(c) for c in coefs) or float(repn.constant) != int(repn.constant):
            raise InstanceError("instance", "a square term's argument is not a non-negative integer combination")
        supports.append(_support([int(c) for c in coefs], int(repn.constant)))
    if sum(len(p) for p in supports) > MAX_FROZEN_CHORDS:
        raise InstanceError("instance", f"the frozen model would need more than {MAX_FROZEN_CHORDS} chord rows")
    m.del_component(m.cuts)
    m.nv = pyo.Var(range(len(squares)))
    m.nv_def = pyo.Constraint(range(len(squares)), rule=lambda m, i: m.nv[i] == squares[i].n)
    m.cuts = pyo.ConstraintList()
    for i, (sq, pts) in enumerate(zip(squares, supports, strict=True)):
        m.nv[i].setlb(pts[0])
        m.nv[i].setub(pts[-1])
        if len(pts) == 1:
            m.cuts.add(sq.z >= sq.f(pts[0]))
            continue
        for p, q in zip(pts, pts[1:], strict=False):
            slope = (sq.f(q) - sq.f(p)) / (q - p)
            m.cuts.add(sq.z >= sq.f(p) + slope * (m.nv[i] - p))
    return m


def write_tetris(inst, path: str | os.PathLike, model: str = "exact", *, time_limit: float = 60.0,
                 mip_gap: float = 1e-6, tangents: int | None = None, solve: bool = True) -> list[dict[str, Any]]:
    """Write a Tetris model (module docstring); ``time_limit`` and ``mip_gap`` are the in-memory
    solve's (``exact`` with ``solve``: only the record's comparison; ``joint``: its cut rounds),
    ``tangents`` the relaxation's grid (``bound-*``)."""
    path = Path(path)
    suf = _suffix(path)
    if model == "exact":
        from . import tetris

        write_pyomo(frozen_tetris_model(inst), path)
        if not _parse_bool(solve, "solve"):
            return [_record(path, "tetris", model, frozen=True)]
        r = tetris.solve(inst, time_limit=float(time_limit), mip_gap=float(mip_gap))
        return [_record(path, "tetris", model, frozen=True,
                        in_memory={"status": str(r.status), "objective": r.objective, "bound": r.bound,
                                   "rounds": r.stats.get("rounds"), "mip_gap": mip_gap,
                                   "exact_at_answer": True})]
    if model == "joint":
        from . import tetris_joint

        fn = tetris_joint.solve
        r = fn(inst, time_limit=time_limit, mip_gap=mip_gap, on_model=lambda m: write_pyomo(m, path))
        if not path.exists():
            raise InstanceError("instance", f"the {model} model has nothing to write ({r.status}: {r.message})")
        exact = r.status == "optimal"
        return [_record(path, "tetris", model, in_memory={"status": str(r.status), "objective": r.objective,
                                                          "bound": r.bound, "rounds": r.stats.get("rounds"),
                                                          "mip_gap": mip_gap, "exact_at_answer": exact})]
    if model in ("bound-lp", "bound-mip"):
        from .tetris_bound import relaxation

        kw = {} if tangents is None else {"tangents": tangents}
        m = relaxation.build(inst, integer=model == "bound-mip", exact_argmax=model == "bound-mip", **kw)
        h, _ = relaxation.highs_model(m, 60.0, mip_gap)
        _write_highs(h, path, suf)
        return [_record(path, "tetris", model)]
    raise InstanceError("model", f"must be one of {', '.join(MODELS['tetris'])} for tetris, got {model!r}")


def _parse_bool(v, name: str) -> bool:
    """A keyword given as a bool or as CLI text (``true``/``false``, ``1``/``0``, ``yes``/``no``)."""
    if isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InstanceError("--option", f"{name} must be true or false, got {v!r}")


def _write_highs(h, path: Path, suf: str) -> None:
    import highspy

    round_highs_integer_bounds(h)  # no fractional bound on an integer column in any file
    if h.writeModel(str(path)) == highspy.HighsStatus.kError:
        raise InstanceError("-o", f"HiGHS could not write {str(path)!r}")


def write_cassini(inst, path: str | os.PathLike, model: str = "cluster", *, candidate: str | None = None,
                  formulation: str = "auto") -> list[dict[str, Any]]:
    """Write CASSINI's models: one file per candidate (``cluster``) or per candidate and shared
    link (``link``); ``candidate`` restricts to one (then ``cluster`` writes ``path`` itself)."""
    from placement.cassini.circle import unified_circle

    from . import cassini

    path = Path(path)
    _suffix(path)
    names = [c.name for c in inst.candidates]
    if candidate is not None and candidate not in names:
        raise InstanceError("candidate", f"must be one of {', '.join(names)}, got {candidate!r}")
    chosen = [candidate] if candidate is not None else names
    out = []
    for cand in chosen:
        shared = inst.shared_links(cand)
        if model == "cluster":
            if not shared:
                continue  # no link carries two jobs: nothing to decide
            p = path if candidate is not None else _sibling(path, cand)
            write_pyomo(cassini.build_cluster(inst, cand, formulation=formulation), p)
            out.append(_record(p, "cassini", model, candidate=cand))
        elif model == "link":
            for lk, jobs in shared.items():
                circ = unified_circle([inst.job[n] for n in jobs], inst.topology.capacity[lk],
                                      inst.precision_deg, inst.max_angles)
                p = _sibling(path, cand, lk)
                write_pyomo(cassini.build_link(circ), p)
                out.append(_record(p, "cassini", model, candidate=cand, link=lk, jobs=list(jobs)))
        else:
            raise InstanceError("model", f"must be one of {', '.join(MODELS['cassini'])} for cassini, got {model!r}")
    if not out:
        raise InstanceError("instance", "no candidate has a link shared by two jobs: there is no model to write")
    return out


def write_hived(inst, path: str | os.PathLike, model: str = "exact") -> list[dict[str, Any]]:
    """Write HiveD's VC-assignment model (``exact``: most reserved cells honoured; ``feasibility``)."""
    from . import hived

    path = Path(path)
    _suffix(path)
    if model not in MODELS["hived"]:
        raise InstanceError("model", f"must be one of {', '.join(MODELS['hived'])} for hived, got {model!r}")
    if model == "exact-pulp":
        from . import hived_pulp

        prob, _ = hived_pulp.build(inst, "max")
        _write_pulp(prob, path)
        return [_record(path, "hived", model)]
    m = hived.build(inst, "max" if model == "exact" else "feasibility")
    if len(m.I) == 0:
        raise InstanceError("instance", "every reserved cell is pinned: the model has no variable to write")
    write_pyomo(m, path)
    return [_record(path, "hived", model)]


def _write_pulp(prob, path: Path) -> None:
    """PuLP's own writers. Its MPS writer puts ``OBJSENSE`` before ``NAME``, where SCIP's reader
    rejects it, and without ``with_objsense`` only a comment states the sense: the section is
    written and moved below ``NAME``."""
    if path.suffix.lower() == ".lp":
        prob.writeLP(str(path))
        return
    prob.writeMPS(str(path), with_objsense=True)
    lines = path.read_text().splitlines(keepends=True)
    if lines and lines[0].startswith("OBJSENSE") and len(lines) > 2 and lines[2].startswith("NAME"):
        lines = [lines[2], lines[0], lines[1], *lines[3:]]
        path.write_text("".join(lines))


def write_schedule_bound(bound_inst, path: str | os.PathLike, *, objective: str = "makespan",
                         buckets: int = 48, integer: bool = False) -> list[dict[str, Any]]:
    """Write the schedule bound's time-indexed model (first grid, :func:`placement.models.schedule_bound.highs_model`)."""
    from . import schedule_bound

    path = Path(path)
    suf = _suffix(path)
    h = schedule_bound.highs_model(bound_inst, objective, buckets=buckets, integer=integer)
    _write_highs(h, path, suf)
    return [_record(path, "trace", "schedule-bound", objective=objective, buckets=buckets, integer=integer)]


def write(family: str, inst, path: str | os.PathLike, model: str | None = None, **options) -> list[dict[str, Any]]:
    """Write ``inst`` of ``family`` as model ``model`` (default: the family's first) to ``path``.

    ``options`` go to the family's writer (:func:`write_tetris`, :func:`write_cassini`,
    :func:`write_hived`, :func:`write_schedule_bound`; a trace instance gives the schedule bound
    its data with :func:`placement.models.schedule_bound.instance_from_trace`). Returns one
    record per written file.
    """
    if family not in MODELS:
        raise InstanceError("instance", f"must be of a family with an exact model ({', '.join(MODELS)}), "
                                        f"got {family!r}")
    model = model or MODELS[family][0]
    if model not in MODELS[family]:
        raise InstanceError("model", f"must be one of {', '.join(MODELS[family])} for {family}, got {model!r}")
    if family == "tetris":
        return write_tetris(inst, path, model, **options)
    if family == "cassini":
        return write_cassini(inst, path, model, **options)
    if family == "hived":
        return write_hived(inst, path, model, **options)
    from .schedule_bound import instance_from_trace

    return write_schedule_bound(instance_from_trace(inst.trace, inst.cluster, inst.perf_model()), path, **options)
