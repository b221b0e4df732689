"""MIP solver backends: HiGHS, SCIP and CBC on one model file, behind one small interface.

Terms
-----
backend
    One of :data:`MIP_SOLVERS`: ``highs`` (highspy, a dependency), ``scip`` (PySCIPOpt, SCIP
    inside its wheel: ``pip install 'placement[scip]'``) or ``cbc`` (the binary PuLP ships,
    ``pulp.apis.PULP_CBC_CMD().path``).
model file
    An MPS or LP file written by the modelling layer's own writer (Pyomo ``model.write``, PuLP
    ``writeMPS``, highspy ``writeModel``; :mod:`placement.models.export`). Every backend reads
    the same file, as MIPLIB's benchmarks do; the answer comes back by column name.

The in-memory HiGHS path of each model (Pyomo's persistent HiGHS interface) stays the default;
``mip_solver="scip"`` or ``"cbc"`` writes the model to a temporary MPS file, solves it with
:func:`solve_file` and loads the values back into the Pyomo variables (:class:`FileSolver`,
which answers like Pyomo's ``pyomo.contrib.solver`` interface). The model's own verification
then judges that answer with the reference evaluation, exactly as it judges HiGHS's: a
backend's "optimal" is never the last word.

Conventions: ``threads=1`` everywhere; the relative gap is the MIP gap of each solver
(HiGHS ``mip_rel_gap``, SCIP ``limits/gap``, CBC ``-ratioGap``). CBC ignores an MPS file's
``OBJSENSE`` section, so a maximization is passed to it with ``-max``, and its LP reader drops
the objective's constant, so an LP file reaches it rewritten as MPS by HiGHS. CBC prints no dual
bound when it proves optimality: a search run to completion reports the incumbent's value as
the bound, one stopped by the gap ``g`` reports ``objective -/+ g |objective|`` (what the gap
proves).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from placement.errors import InstanceError

__all__ = ["MIP_SOLVERS", "MipSolver", "FileSolve", "require", "available", "solve_file", "FileSolver",
           "solver", "cbc_path", "write_pyomo", "check_mip_solver", "solve_highs_model", "MipOutcome", "outcome",
           "rounded_integer_bounds", "round_pyomo_integer_bounds", "round_highs_integer_bounds", "INTEGER_BOUND_TOL"]

MIP_SOLVERS = ("highs", "scip", "cbc")
MipSolver = Literal["highs", "scip", "cbc"]

_INSTALL = {
    "highs": "pip install highspy (a dependency of placement: reinstall the package)",
    "scip": "pip install 'placement[scip]' (PySCIPOpt, SCIP inside its wheel)",
    "cbc": "pip install pulp (its wheel ships the CBC binary; a dependency of placement)",
}


def check_mip_solver(name: str) -> str:
    """``name`` if it is a known backend, else a one-line :class:`InstanceError` naming ``mip_solver``."""
    if name not in MIP_SOLVERS:
        raise InstanceError("mip_solver", f"must be one of {', '.join(MIP_SOLVERS)}, got {name!r}")
    return name


def cbc_path() -> str | None:
    """Path of the CBC binary PuLP ships (``None`` when PuLP or its binary is absent)."""
    try:
        import pulp
    except ImportError:
        return None
    path = pulp.apis.PULP_CBC_CMD().path
    return path if path and os.path.exists(path) and os.access(path, os.X_OK) else None


def available(name: str) -> bool:
    """Whether backend ``name`` can run here."""
    check_mip_solver(name)
    if name == "cbc":
        return cbc_path() is not None
    try:
        __import__("highspy" if name == "highs" else "pyscipopt")
    except ImportError:
        return False
    return True


INTEGER_BOUND_TOL = 1e-9  # a bound within this of an integer is that integer (1 - 1e-12 -> 1, not 0)


def rounded_integer_bounds(lower, upper, integer, tol: float = INTEGER_BOUND_TOL):
    """Column bounds with every integer column's bounds rounded inward: ``ceil`` of the lower,
    ``floor`` of the upper (``tol`` absorbs representation error). Numpy arrays in, new arrays out.

    The integer points are the same, so the model is the same MIP; the rounding only keeps a
    fractional bound of an integer column away from solvers that mishandle it (HiGHS 1.15.1 returns
    a wrong "optimal" and a wrong "infeasible" on such columns; ``tests/core/highs_defect/``).
    """
    import numpy as np

    lo, hi = np.array(lower, dtype=float), np.array(upper, dtype=float)
    mask = np.asarray(integer, dtype=bool)
    flo, fhi = mask & np.isfinite(lo), mask & np.isfinite(hi)
    lo[flo] = np.ceil(lo[flo] - tol)
    hi[fhi] = np.floor(hi[fhi] + tol)
    return lo, hi


def round_pyomo_integer_bounds(m) -> int:
    """Round the bounds of every integer variable of Pyomo model ``m`` inward (as
    :func:`rounded_integer_bounds`); returns how many bounds changed."""
    import pyomo.environ as pyo

    changed = 0
    for v in m.component_data_objects(pyo.Var, descend_into=True):
        if not v.is_integer() or v.fixed:
            continue
        lb, ub = v.lb, v.ub
        if lb is not None and math.isfinite(lb) and math.ceil(lb - INTEGER_BOUND_TOL) != lb:
            v.setlb(math.ceil(lb - INTEGER_BOUND_TOL))
            changed += 1
        if ub is not None and math.isfinite(ub) and math.floor(ub + INTEGER_BOUND_TOL) != ub:
            v.setub(math.floor(ub + INTEGER_BOUND_TOL))
            changed += 1
    return changed


def round_highs_integer_bounds(h) -> int:
    """Round the bounds of every integer column of the model a ``highspy.Highs`` holds inward (as
    :func:`rounded_integer_bounds`); returns how many columns changed."""
    import highspy
    import numpy as np

    lp = h.getLp()
    if not len(lp.integrality_):
        return 0
    integer = np.array([t != highspy.HighsVarType.kContinuous for t in lp.integrality_])
    lo0, hi0 = np.asarray(lp.col_lower_, dtype=float), np.asarray(lp.col_upper_, dtype=float)
    inf = highspy.kHighsInf
    lo, hi = rounded_integer_bounds(np.where(lo0 <= -inf, -np.inf, lo0), np.where(hi0 >= inf, np.inf, hi0), integer)
    lo, hi = np.where(np.isinf(lo), -inf, lo), np.where(np.isinf(hi), inf, hi)
    cols = np.flatnonzero((lo != lo0) | (hi != hi0)).astype(np.int32)
    if len(cols):
        h.changeColsBounds(len(cols), cols, lo[cols], hi[cols])
    return int(len(cols))


def require(name: str) -> str:
    """``name`` when it can run here, else a one-line error naming how to install it."""
    if not available(name):
        raise InstanceError("mip_solver", f"{name!r} is not installed here: {_INSTALL[name]}")
    return name


@dataclass
class FileSolve:
    """What a backend made of a model file.

    ``termination``: ``optimal`` (proved within the gap), ``time_limit``, ``infeasible``,
    ``unbounded`` or ``error``. ``objective`` / ``bound`` in the file's own sense and units (the
    objective's constant included); ``values`` maps column names to values when a solution exists.
    ``stats["incumbents"]``: (seconds since the solve started, objective) of each improving
    solution the backend reported (HiGHS's improving-solution callback, SCIP's best-solution
    event, CBC's log), for primal integrals.
    """

    solver: str
    termination: str
    objective: float | None = None
    bound: float | None = None
    values: dict[str, float] | None = None
    wall_time_s: float = 0.0
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def _sense_of(path: Path) -> str:
    """``max`` or ``min``, read from an MPS ``OBJSENSE`` section or an LP file's first keyword."""
    with open(path) as f:
        lines = [ln.strip() for ln, _ in zip(f, range(400), strict=False)]
    body = [ln for ln in lines if ln and not ln.startswith(("*", "\\"))]
    if path.suffix.lower() == ".lp":
        return "max" if body and body[0].lower().startswith("max") else "min"
    for i, ln in enumerate(body):
        up = ln.upper()
        if up.startswith("OBJSENSE"):
            rest = up.split()[1:] or (body[i + 1].upper().split() if i + 1 < len(body) else [])
            return "max" if rest and rest[0].startswith("MAX") else "min"
        if up.startswith("ROWS"):
            break
    return "min"


def _gap_bound(objective: float, gap: float, sense: str) -> float:
    return objective - gap * abs(objective) if sense == "min" else objective + gap * abs(objective)


def _highs(path: Path, time_limit: float, mip_gap: float, options: dict) -> FileSolve:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(max(time_limit, 1e-3)))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    for k, v in options.items():
        h.setOptionValue(k, v)
    if h.readModel(str(path)) == highspy.HighsStatus.kError:
        return FileSolve("highs", "error", message=f"HiGHS could not read {path.name}")
    incumbents: list[tuple[float, float]] = []
    t0 = time.perf_counter()

    def improving(_type, _message, data_out, _data_in, _user):
        incumbents.append((time.perf_counter() - t0, float(data_out.objective_function_value)))

    h.setCallback(improving, None)
    h.startCallback(highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution)
    h.run()
    st = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    lp = h.getLp()
    has = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values = dict(zip(lp.col_names_, h.getSolution().col_value, strict=True)) if has else None
    is_mip = info.mip_node_count >= 0 and len(lp.integrality_) > 0
    bound = info.mip_dual_bound if is_mip else (info.objective_function_value if st == S.kOptimal else None)
    if bound is not None and not math.isfinite(bound):
        bound = None
    term = {S.kOptimal: "optimal", S.kTimeLimit: "time_limit", S.kInfeasible: "infeasible",
            S.kUnbounded: "unbounded", S.kUnboundedOrInfeasible: "infeasible"}.get(st, "error")
    return FileSolve("highs", term, info.objective_function_value if has else None, bound, values,
                     message="" if term != "error" else h.modelStatusToString(st),
                     stats={"nodes": int(max(info.mip_node_count, 0)), "incumbents": incumbents})


def _scip_incumbent_handler(t0: float):
    """A SCIP event handler recording (seconds since ``t0``, objective) at each new best solution."""
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    class _Incumbents(Eventhdlr):
        def __init__(self):
            self.points: list[tuple[float, float]] = []

        def eventinit(self):
            self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexit(self):
            self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexec(self, event):
            self.points.append((time.perf_counter() - t0, float(self.model.getSolObjVal(self.model.getBestSol()))))

    return _Incumbents()


def _scip(path: Path, time_limit: float, mip_gap: float, options: dict) -> FileSolve:
    import pyscipopt

    m = pyscipopt.Model()
    m.hideOutput()
    try:
        m.readProblem(str(path))
    except OSError as exc:  # SCIP's reader reports a file it cannot parse as an OSError
        return FileSolve("scip", "error", message=f"SCIP could not read {path.name}: {exc}")
    m.setParam("limits/time", float(max(time_limit, 1e-3)))
    m.setParam("limits/gap", float(mip_gap))
    m.setParam("randomization/randomseedshift", 0)
    for k, v in options.items():
        m.setParam(k, v)
    handler = _scip_incumbent_handler(time.perf_counter())
    m.includeEventhdlr(handler, "placement-incumbents", "records each new best solution")
    m.optimize()
    st = m.getStatus()
    has = m.getNSols() > 0
    values = None
    if has:
        sol = m.getBestSol()
        values = {v.name: m.getSolVal(sol, v) for v in m.getVars()}
    bound = m.getDualbound()
    term = {"optimal": "optimal", "gaplimit": "optimal", "timelimit": "time_limit", "infeasible": "infeasible",
            "unbounded": "unbounded", "inforunbd": "infeasible"}.get(st, "error")
    return FileSolve("scip", term, m.getObjVal() if has else None,
                     bound if math.isfinite(bound) and abs(bound) < 1e20 else None, values,
                     message="" if term != "error" else f"SCIP status {st}",
                     stats={"nodes": int(m.getNNodes()), "incumbents": handler.points})


_CBC_INCUMBENT = re.compile(r"^Cbc00(?:04|12)I Integer solution of (\S+) found.*?\(([0-9.]+) seconds\)", re.M)
_CBC_BOUND = re.compile(r"^(Lower bound|Upper bound|Best possible):\s*(-?[0-9.eE+-]+)", re.M)


def _cbc(path: Path, time_limit: float, mip_gap: float, options: dict) -> FileSolve:
    exe = cbc_path()
    sense = _sense_of(path)
    with tempfile.TemporaryDirectory(prefix="placement-cbc-") as tmp:
        if path.suffix.lower() == ".lp":
            path = _lp_to_mps(path, Path(tmp) / "model.mps")
        sol = Path(tmp) / "solution.txt"
        cmd = [exe, str(path)] + (["-max"] if sense == "max" else []) + [
            "-sec", f"{max(time_limit, 1e-3):.3f}", "-ratioGap", repr(float(mip_gap)), "-threads", "1",
            "-randomCbcSeed", "1"]
        for k, v in options.items():
            cmd += [f"-{k}", str(v)]
        cmd += ["-solve", "-printingOptions", "all", "-solu", str(sol)]  # all columns, zeros too
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(time_limit, 1.0) * 3 + 60)
        log = proc.stdout
        if not sol.exists():
            return FileSolve("cbc", "error", message=f"CBC wrote no solution (exit {proc.returncode})")
        lines = sol.read_text().splitlines()
    head = lines[0] if lines else ""
    low = head.lower()
    m_obj = re.search(r"objective value\s+(-?[0-9.eE+-]+)", head)
    objective = float(m_obj.group(1)) if m_obj else None
    values = {}
    for ln in lines[1:]:
        parts = ln.split()
        if len(parts) >= 3 and not parts[0].startswith("**"):
            values[parts[1]] = float(parts[2])
        elif len(parts) >= 4 and parts[0] == "**":  # infeasible columns are flagged "**"
            values[parts[2]] = float(parts[3])
    if low.startswith("optimal"):
        term = "optimal"
    elif "infeasible" in low and "integer" not in low or low.startswith("infeasible"):
        term = "infeasible"
    elif "unbounded" in low:
        term = "unbounded"
    elif "stopped on time" in low or "stopped on iterations" in low:
        term = "time_limit"
    else:
        term = "error"
    has = term in ("optimal", "time_limit") and objective is not None and "no integer solution" not in low
    bound = None
    mb = _CBC_BOUND.search(log)
    if mb:
        raw = float(mb.group(2))
        # CBC minimizes -objective for a maximization: its bound comes in that sign.
        bound = -raw if sense == "max" and objective is not None and abs(-raw - objective) < abs(raw - objective) else raw
        if sense == "max" and objective is None:
            bound = -raw
    if term == "optimal" and objective is not None and bound is None:
        # A search that ran to completion proves the incumbent; one stopped by the gap proves the gap.
        bound = _gap_bound(objective, mip_gap, sense) if "Exiting as integer gap" in log else objective
    # each new incumbent CBC logs, in its sign (it minimizes -objective for a maximization)
    incumbents = [(float(t), -float(v) if sense == "max" else float(v)) for v, t in _CBC_INCUMBENT.findall(log)]
    return FileSolve("cbc", term, objective if has else None, bound, values if has else None,
                     message="" if term != "error" else head[:200], stats={"incumbents": incumbents})


def _lp_to_mps(path: Path, out: Path) -> Path:
    """An LP file rewritten as MPS by HiGHS: CBC's LP reader drops the objective's constant."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.writeModel(str(out))
    return out


def solve_file(path: str | os.PathLike, solver: str = "highs", *, time_limit: float = 60.0,
               mip_gap: float = 1e-6, options: dict | None = None) -> FileSolve:
    """Solve an MPS or LP model file with backend ``solver`` (one thread, ``time_limit`` seconds).

    ``options`` are the backend's own parameter names (HiGHS option names, SCIP parameter
    paths, CBC command-line flags without the dash). Raises :class:`InstanceError` when the
    backend is not installed; a time limit or an infeasible model is a ``termination``, never
    an exception.
    """
    require(check_mip_solver(solver))
    path = Path(path)
    if not path.exists():
        raise InstanceError("model file", f"must exist, got {str(path)!r}")
    t0 = time.perf_counter()
    fn = {"highs": _highs, "scip": _scip, "cbc": _cbc}[solver]
    out = fn(path, time_limit, mip_gap, dict(options or {}))
    out.wall_time_s = time.perf_counter() - t0
    return out


def write_pyomo(m, path: str | os.PathLike) -> dict[str, Any]:
    """Write Pyomo model ``m`` with its own writer (MPS or LP by the suffix), names kept readable.

    Returns column name -> Pyomo variable (the writer's symbol map), to load a file solver's
    values back. Integer variables' bounds are rounded inward first
    (:func:`round_pyomo_integer_bounds`: the same integer points), so no written file carries a
    fractional bound on an integer column.
    """
    import pyomo.environ as pyo

    path = Path(path)
    if path.suffix.lower() not in (".mps", ".lp"):
        raise InstanceError("-o", f"must end in .mps or .lp, got {path.name!r}")
    round_pyomo_integer_bounds(m)
    _, sid = m.write(str(path), io_options={"symbolic_solver_labels": True})  # the format from the suffix
    smap = m.solutions.symbol_map.pop(sid)
    out = {}
    for name, obj in smap.bySymbol.items():
        if isinstance(obj, weakref.ReferenceType):  # older Pyomo kept weak references
            obj = obj()
        if obj is not None and getattr(obj, "ctype", None) is pyo.Var and name != "ONE_VAR_CONSTANT":
            out[name] = obj
    return out


class _Loader:
    def __init__(self, names: dict[str, Any], values: dict[str, float] | None) -> None:
        self.names, self.values = names, values

    def load_vars(self) -> None:
        if self.values is None:
            raise RuntimeError("no solution to load")
        for name, var in self.names.items():
            if name in self.values and not var.fixed:
                var.set_value(self.values[name], skip_validation=True)


@dataclass
class _Results:
    termination_condition: Any
    solution_status: Any
    incumbent_objective: float | None
    objective_bound: float | None
    solution_loader: _Loader
    backend: FileSolve


class FileSolver:
    """A Pyomo model solved by a file backend, answering like ``pyomo.contrib.solver``'s solvers.

    ``solve(m, time_limit=..., rel_gap=..., solver_options=...)`` writes ``m`` to a temporary
    MPS file, runs :func:`solve_file` and returns an object with ``termination_condition``,
    ``solution_status``, ``incumbent_objective``, ``objective_bound`` and a
    ``solution_loader.load_vars()``, the part of Pyomo's results the models read. HiGHS option
    names in ``solver_options`` are mapped where a backend has the same parameter
    (``mip_feasibility_tolerance``: SCIP ``numerics/feastol``, CBC ``integerTolerance``) and
    otherwise left out: they tune HiGHS, they do not define the model.
    """

    _MAP = {"scip": {"mip_feasibility_tolerance": "numerics/feastol"},
            "cbc": {"mip_feasibility_tolerance": "integerTolerance"}}

    def __init__(self, name: str) -> None:
        self.name = require(check_mip_solver(name))
        self.last: FileSolve | None = None

    def solve(self, m, *, time_limit: float = 60.0, rel_gap: float = 1e-6, solver_options: dict | None = None,
              **_ignored) -> _Results:
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        opts = {}
        for k, v in (solver_options or {}).items():
            if k in self._MAP.get(self.name, {}):
                opts[self._MAP[self.name][k]] = max(float(v), 1e-9)
            elif self.name == "highs":
                opts[k] = v
        with tempfile.TemporaryDirectory(prefix="placement-mip-") as tmp:
            path = Path(tmp) / "model.mps"
            names = write_pyomo(m, path)
            out = solve_file(path, self.name, time_limit=time_limit, mip_gap=rel_gap, options=opts)
        self.last = out
        tc = {"optimal": TerminationCondition.convergenceCriteriaSatisfied,
              "time_limit": TerminationCondition.maxTimeLimit,
              "infeasible": TerminationCondition.provenInfeasible,
              "unbounded": TerminationCondition.unbounded}.get(out.termination, TerminationCondition.error)
        if out.values is None:
            ss = SolutionStatus.infeasible if out.termination == "infeasible" else SolutionStatus.noSolution
        else:
            ss = SolutionStatus.optimal if out.termination == "optimal" else SolutionStatus.feasible
        return _Results(tc, ss, out.objective, out.bound, _Loader(names, out.values), out)


@dataclass(frozen=True)
class MipOutcome:
    """What one Pyomo solve ended with, read once for every model (:func:`outcome`).

    ``termination``: ``converged`` (the solver's own criteria met: optimal within the gap),
    ``time_limit``, ``infeasible`` (proven infeasible, or infeasible-or-unbounded: every model
    here is bounded) or ``other`` (any other stop: an iteration limit, an error). ``has_solution``:
    a feasible or optimal point is loaded in the model's variables. ``bound``: the solver's dual
    bound when finite, else ``None``; ``incumbent``: its objective value of the loaded point.
    ``condition``: Pyomo's termination condition as text, for messages and stats.

    The solver's "converged" is its claim, not the package's: each model still judges the
    loaded point with its reference evaluation (:mod:`placement.models.verification`).
    """

    termination: str
    has_solution: bool
    bound: float | None
    incumbent: float | None
    condition: str

    @property
    def converged(self) -> bool:
        return self.termination == "converged"

    @property
    def stop(self) -> str:
        """``time_limit`` or ``error``: the status of a solve that gave no answer to use."""
        return "time_limit" if self.termination == "time_limit" else "error"


def outcome(res, *, load: bool = True) -> MipOutcome:
    """The :class:`MipOutcome` of a ``pyomo.contrib.solver`` result (HiGHS in memory or a
    :class:`FileSolver`), loading the point into the model's variables when one exists and
    ``load`` is true."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    tc = res.termination_condition
    term = ("converged" if tc == TerminationCondition.convergenceCriteriaSatisfied else
            "time_limit" if tc == TerminationCondition.maxTimeLimit else
            "infeasible" if tc in (TerminationCondition.provenInfeasible,
                                   TerminationCondition.infeasibleOrUnbounded) else "other")
    has = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if has and load:
        res.solution_loader.load_vars()
    b = res.objective_bound
    bound = float(b) if b is not None and math.isfinite(b) else None
    inc = res.incumbent_objective
    return MipOutcome(term, has, bound, None if inc is None else float(inc), str(tc))


def solver(name: str = "highs"):
    """A Pyomo solver for backend ``name``: Pyomo's own HiGHS interface, else a :class:`FileSolver`."""
    check_mip_solver(name)
    if name == "highs":
        from pyomo.contrib.solver.common.factory import SolverFactory

        return SolverFactory("highs")
    return FileSolver(name)


def solve_highs_model(h, solver_name: str = "highs", *, time_limit: float = 60.0, mip_gap: float = 1e-6):
    """Solve a model held by a ``highspy.Highs`` (the matrix-form models) with any backend.

    Returns ``(FileSolve, x)`` with ``x`` the column values in the model's order (``None`` without
    a solution). HiGHS runs in memory (with the options ``h`` already holds); SCIP and CBC read
    the model written by ``h.writeModel`` as MPS. The objective's constant (HiGHS's ``offset``,
    written as the objective row's right-hand side, which not every reader applies) is
    reconciled: the reported objective and bound are shifted so that the objective equals
    ``cost @ x + offset``.
    """
    import highspy
    import numpy as np

    check_mip_solver(solver_name)
    if solver_name == "highs":
        t0 = time.perf_counter()
        h.setOptionValue("time_limit", float(max(time_limit, 1e-3)))
        h.setOptionValue("mip_rel_gap", float(mip_gap))
        h.run()
        st, info = h.getModelStatus(), h.getInfo()
        S = highspy.HighsModelStatus
        has = info.primal_solution_status == 2
        x = np.asarray(h.getSolution().col_value) if has else None
        lp = h.getLp()
        is_mip = len(lp.integrality_) > 0
        bound = info.mip_dual_bound if is_mip else (info.objective_function_value if st == S.kOptimal else None)
        term = {S.kOptimal: "optimal", S.kTimeLimit: "time_limit", S.kInfeasible: "infeasible",
                S.kUnbounded: "unbounded", S.kUnboundedOrInfeasible: "infeasible"}.get(st, "error")
        out = FileSolve("highs", term, info.objective_function_value if has else None,
                        bound if bound is not None and math.isfinite(bound) else None,
                        wall_time_s=time.perf_counter() - t0, message=h.modelStatusToString(st),
                        stats={"nodes": int(max(info.mip_node_count, 0))})
        return out, x
    require(solver_name)
    lp = h.getLp()
    with tempfile.TemporaryDirectory(prefix="placement-mip-") as tmp:
        path = Path(tmp) / "model.mps"
        h.writeModel(str(path))
        reader = highspy.Highs()
        reader.setOptionValue("output_flag", False)
        reader.readModel(str(path))
        names = list(reader.getLp().col_names_)
        out = solve_file(path, solver_name, time_limit=time_limit, mip_gap=mip_gap)
    if out.values is None:
        return out, None
    x = np.array([out.values.get(n, 0.0) for n in names])
    value = float(np.dot(np.asarray(lp.col_cost_), x) + lp.offset_)
    if out.objective is not None:
        shift = value - out.objective
        if abs(shift) > 1e-9 * max(1.0, abs(value)):
            out.objective = value
            out.bound = None if out.bound is None else out.bound + shift
            out.stats["offset_applied"] = shift
    return out, x
