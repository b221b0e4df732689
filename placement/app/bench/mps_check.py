"""An independent solution checker for MPS files: every row, bound and integrality, and the objective.

A benchmark must not take a solver's word for a solution (MIPLIB's ``solchecker`` does the same
for MIPLIB 2017). This module reads the model file itself, in plain Python -- no solver and no
modelling layer is involved -- and judges a solution file against it.

MPS (free format, gzipped or not)
    Sections ``NAME``, ``OBJSENSE`` (``MAX``/``MIN``, on its line or the next), ``ROWS``
    (``N``, ``E``, ``L``, ``G``; the first ``N`` row is the objective), ``COLUMNS`` (with
    ``'MARKER' 'INTORG'`` / ``'INTEND'`` for integer columns), ``RHS`` (a value on the objective
    row is minus the objective's constant, the convention HiGHS, SCIP and CBC read), ``RANGES``
    (MPS's rules per row type) and ``BOUNDS`` (``UP LO FX FR MI PL BV LI UI``; a negative ``UP``
    on a column whose lower bound is still 0 makes it ``-inf``, as the classic readers do).
    Columns default to ``[0, +inf)``. Names may not contain spaces (free format).
Solution files (``.sol``)
    MIPLIB's format: one ``NAME VALUE`` a line, optional ``=obj= VALUE``; lines starting with
    ``#`` and SCIP's ``solution status:`` / ``objective value:`` header lines are read too (the
    latter as the claimed objective). A column the file omits is 0 (SCIP writes only non-zeros).
    A name that is not a column of the model, or a value that is not a number, is an error.
Tolerance
    ``tol`` (default :data:`TOL` = 1e-6) applies to every test: a row ``lo <= a x <= hi`` is
    violated by ``max(lo - a x, a x - hi, 0) / max(1, |violated side|)``, a bound likewise, an
    integer column by ``|v - round(v)|``; the claimed objective must equal the recomputed one
    within ``tol * max(1, |recomputed|)``. Sums are exact to rounding (``math.fsum``).

:func:`check_solution` returns a :class:`Check`: feasible or not, the recomputed objective, the
largest violation of each kind with the row or column that holds it.
"""

from __future__ import annotations

import gzip
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InstanceError

__all__ = ["MpsModel", "Check", "read_mps", "read_sol", "write_sol", "check_solution", "TOL", "read_solu",
           "write_solu"]

TOL = 1e-6
MAX_MPS_BYTES = 2 * 1024 ** 3  # a model file larger than this (uncompressed) is refused


@dataclass
class MpsModel:
    """A linear (mixed-integer) model as an MPS file states it."""

    name: str
    sense: str  # "min" or "max"
    objective_row: str
    constant: float
    columns: list[str]
    cost: dict[str, float]
    integer: set[str]
    lower: dict[str, float]
    upper: dict[str, float]
    rows: list[str]
    row_lower: dict[str, float]
    row_upper: dict[str, float]
    entries: dict[str, list[tuple[str, float]]]  # row -> (column, coefficient)

    @property
    def nonzeros(self) -> int:
        return sum(len(e) for e in self.entries.values())

    def stats(self) -> dict[str, int]:
        """Rows, columns, non-zeros and integer columns (MIPLIB's instance statistics)."""
        return {"rows": len(self.rows), "columns": len(self.columns), "nonzeros": self.nonzeros,
                "integers": len(self.integer)}


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt")
    return open(path)


def read_mps(path: str | os.PathLike) -> MpsModel:
    """Parse a free-format MPS file (module docstring); one :class:`InstanceError` naming the line
    on anything it cannot read."""
    path = Path(path)
    if not path.is_file():
        raise InstanceError("model file", f"must be an existing file, got {str(path)!r}")
    name, sense, obj = "", "min", None
    constant = 0.0
    columns: list[str] = []
    cost: dict[str, float] = {}
    integer: set[str] = set()
    lower: dict[str, float] = {}
    upper: dict[str, float] = {}
    rows: list[str] = []
    kind: dict[str, str] = {}
    rhs: dict[str, float] = {}
    ranges: dict[str, float] = {}
    entries: dict[str, list[tuple[str, float]]] = {}
    section = None
    in_int = False
    read = 0

    def bad(lineno: int, what: str):
        return InstanceError("model file", f"{path.name} line {lineno}: {what}")

    def num(tok: str, lineno: int) -> float:
        try:
            v = float(tok)
        except ValueError:
            raise bad(lineno, f"expected a number, got {tok!r}") from None
        if math.isnan(v):
            raise bad(lineno, "NaN is not a number a model can hold")
        return v

    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            read += len(line)
            if read > MAX_MPS_BYTES:
                raise InstanceError("model file", f"{path.name} is larger than {MAX_MPS_BYTES} bytes")
            if not line.strip() or line.startswith("*"):
                continue
            tok = line.split()
            if not line[0].isspace():  # a section header
                head = tok[0].upper()
                if head == "NAME":
                    name = " ".join(tok[1:])
                    section = "NAME"
                elif head == "OBJSENSE":
                    section = "OBJSENSE"
                    if len(tok) > 1:
                        sense = "max" if tok[1].upper().startswith("MAX") else "min"
                elif head in ("ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS"):
                    section = head
                elif head == "ENDATA":
                    break
                else:
                    raise bad(lineno, f"unknown section {tok[0]!r}")
                continue
            if section == "OBJSENSE":
                sense = "max" if tok[0].upper().startswith("MAX") else "min"
            elif section == "ROWS":
                if len(tok) != 2 or tok[0].upper() not in ("N", "E", "L", "G"):
                    raise bad(lineno, "a row is 'N|E|L|G NAME'")
                t, r = tok[0].upper(), tok[1]
                if t == "N":
                    if obj is None:
                        obj = r
                    continue  # further free rows are ignored, as solvers do
                if r in kind:
                    raise bad(lineno, f"row {r!r} declared twice")
                kind[r] = t
                rows.append(r)
                entries[r] = []
            elif section == "COLUMNS":
                if len(tok) >= 3 and tok[1].strip("'\"").upper() == "MARKER":
                    marker = tok[2].strip("'\"").upper()
                    if marker not in ("INTORG", "INTEND"):
                        raise bad(lineno, f"unknown marker {tok[2]!r}")
                    in_int = marker == "INTORG"
                    continue
                if len(tok) not in (3, 5):
                    raise bad(lineno, "a column line is 'COLUMN ROW VALUE [ROW VALUE]'")
                c = tok[0]
                if c not in cost:
                    columns.append(c)
                    cost[c] = 0.0
                    if in_int:
                        integer.add(c)
                for r, v in zip(tok[1::2], tok[2::2], strict=True):
                    val = num(v, lineno)
                    if r == obj:
                        cost[c] += val
                    elif r in kind:
                        entries[r].append((c, val))
                    elif r not in kind:
                        raise bad(lineno, f"row {r!r} is not declared in ROWS")
            elif section in ("RHS", "RANGES"):
                pairs = tok[1:] if len(tok) in (3, 5) else tok if len(tok) in (2, 4) else None
                if pairs is None:
                    raise bad(lineno, f"a {section} line is '[SET] ROW VALUE [ROW VALUE]'")
                for r, v in zip(pairs[0::2], pairs[1::2], strict=True):
                    val = num(v, lineno)
                    if section == "RHS" and r == obj:
                        constant = -val
                    elif r not in kind:
                        raise bad(lineno, f"row {r!r} is not declared in ROWS")
                    elif section == "RHS":
                        rhs[r] = val
                    else:
                        ranges[r] = val
            elif section == "BOUNDS":
                t = tok[0].upper()
                if t in ("FR", "MI", "PL", "BV") and len(tok) in (2, 3):
                    c, v = tok[-1], None
                elif len(tok) == 4:
                    c, v = tok[2], num(tok[3], lineno)
                elif len(tok) == 3 and t not in ("FR", "MI", "PL", "BV"):
                    c, v = tok[1], num(tok[2], lineno)  # no bound-set name
                else:
                    raise bad(lineno, "a bound line is 'TYPE SET COLUMN [VALUE]'")
                if c not in cost:
                    raise bad(lineno, f"column {c!r} is not declared in COLUMNS")
                if t == "UP":
                    if v < 0 and lower.get(c, 0.0) == 0.0:
                        lower[c] = -math.inf
                    upper[c] = v
                elif t == "LO":
                    lower[c] = v
                elif t == "FX":
                    lower[c] = upper[c] = v
                elif t == "FR":
                    lower[c], upper[c] = -math.inf, math.inf
                elif t == "MI":
                    lower[c] = -math.inf
                elif t == "PL":
                    upper[c] = math.inf
                elif t == "BV":
                    lower[c], upper[c] = 0.0, 1.0
                    integer.add(c)
                elif t == "LI":
                    lower[c] = v
                    integer.add(c)
                elif t == "UI":
                    upper[c] = v
                    integer.add(c)
                else:
                    raise bad(lineno, f"bound type {tok[0]!r} is not supported")
            else:
                raise bad(lineno, "data outside a section")
    if obj is None and not columns:
        raise InstanceError("model file", f"{path.name} holds no model (no ROWS / COLUMNS)")
    row_lower: dict[str, float] = {}
    row_upper: dict[str, float] = {}
    for r in rows:
        b = rhs.get(r, 0.0)
        t = kind[r]
        lo, hi = (b, b) if t == "E" else (-math.inf, b) if t == "L" else (b, math.inf)
        if r in ranges:
            rng = ranges[r]
            if t == "E":
                lo, hi = (b, b + abs(rng)) if rng >= 0 else (b - abs(rng), b)
            elif t == "L":
                lo = b - abs(rng)
            else:
                hi = b + abs(rng)
        row_lower[r], row_upper[r] = lo, hi
    return MpsModel(name, sense, obj or "", constant, columns, cost, integer,
                    {c: lower.get(c, 0.0) for c in columns}, {c: upper.get(c, math.inf) for c in columns},
                    rows, row_lower, row_upper, entries)


def read_sol(path: str | os.PathLike) -> tuple[dict[str, float], float | None]:
    """Values by column name and the claimed objective (``None`` if the file states none)."""
    path = Path(path)
    if not path.is_file():
        raise InstanceError("solution file", f"must be an existing file, got {str(path)!r}")
    values: dict[str, float] = {}
    claimed = None
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            low = s.lower()
            if low.startswith("solution status"):
                continue
            if low.startswith("objective value:"):
                claimed = _sol_number(s.split(":", 1)[1].split()[0], path, lineno)
                continue
            tok = s.split()
            if tok[0] == "=obj=":
                if len(tok) < 2:
                    raise InstanceError("solution file", f"{path.name} line {lineno}: '=obj=' without a value")
                claimed = _sol_number(tok[1], path, lineno)
                continue
            if len(tok) < 2:
                raise InstanceError("solution file", f"{path.name} line {lineno}: expected 'NAME VALUE'")
            if tok[0] in values:
                raise InstanceError("solution file", f"{path.name} line {lineno}: {tok[0]!r} given twice")
            values[tok[0]] = _sol_number(tok[1], path, lineno)
    return values, claimed


def _sol_number(tok: str, path: Path, lineno: int) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise InstanceError("solution file", f"{path.name} line {lineno}: {tok!r} is not a number") from None
    if not math.isfinite(v):
        raise InstanceError("solution file", f"{path.name} line {lineno}: {tok!r} is not a finite number")
    return v


def write_sol(path: str | os.PathLike, values: dict[str, float], objective: float | None = None) -> str:
    """The text of a MIPLIB ``.sol`` file (``=obj=`` first, then every non-zero column), written to
    ``path`` atomically; returns the text."""
    from ...io import write_text

    lines = [] if objective is None else [f"=obj= {objective!r}"]
    lines += [f"{k} {float(v)!r}" for k, v in values.items() if v != 0.0]
    text = "\n".join(lines) + "\n"
    write_text(path, text)
    return text


@dataclass
class Check:
    """The verdict on one solution (module docstring)."""

    feasible: bool
    objective: float | None
    claimed: float | None
    objective_agrees: bool
    max_row_violation: float = 0.0
    worst_row: str = ""
    max_bound_violation: float = 0.0
    worst_bound: str = ""
    max_integrality_violation: float = 0.0
    worst_integer: str = ""
    tolerance: float = TOL
    unknown: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.feasible and self.objective_agrees

    @property
    def message(self) -> str:
        if self.ok:
            return ""
        out = []
        if self.max_row_violation > self.tolerance:
            out.append(f"row {self.worst_row} violated by {self.max_row_violation:.3g}")
        if self.max_bound_violation > self.tolerance:
            out.append(f"bound of {self.worst_bound} violated by {self.max_bound_violation:.3g}")
        if self.max_integrality_violation > self.tolerance:
            out.append(f"{self.worst_integer} is {self.max_integrality_violation:.3g} from an integer")
        if not self.objective_agrees:
            out.append(f"claimed objective {self.claimed!r} is not the recomputed {self.objective!r}")
        return "; ".join(out)


def _side_violation(a: float, lo: float, hi: float) -> float:
    if a < lo:
        return (lo - a) / max(1.0, abs(lo))
    if a > hi:
        return (a - hi) / max(1.0, abs(hi))
    return 0.0


def check_solution(model: MpsModel | str | os.PathLike, values: dict[str, float] | str | os.PathLike,
                   claimed: float | None = None, tol: float = TOL) -> Check:
    """Judge ``values`` (a dict, or a ``.sol`` path whose ``=obj=`` is the claim) against ``model``
    (an :class:`MpsModel` or an MPS path) at tolerance ``tol``: every row, every bound, every
    integrality, and the objective recomputed from the values (module docstring)."""
    if not isinstance(model, MpsModel):
        model = read_mps(model)
    if not isinstance(values, dict):
        values, file_claim = read_sol(values)
        claimed = file_claim if claimed is None else claimed
    unknown = sorted(k for k in values if k not in model.cost)
    if unknown:
        raise InstanceError("solution file", f"names {unknown[0]!r}, which is not a column of the model "
                                             f"({len(unknown)} unknown names)")
    x = {c: float(values.get(c, 0.0)) for c in model.columns}
    chk = Check(True, None, claimed, True, tolerance=tol)
    for r in model.rows:
        a = math.fsum(v * x[c] for c, v in model.entries[r])
        viol = _side_violation(a, model.row_lower[r], model.row_upper[r])
        if viol > chk.max_row_violation:
            chk.max_row_violation, chk.worst_row = viol, r
    for c in model.columns:
        viol = _side_violation(x[c], model.lower[c], model.upper[c])
        if viol > chk.max_bound_violation:
            chk.max_bound_violation, chk.worst_bound = viol, c
        if c in model.integer:
            iv = abs(x[c] - round(x[c]))
            if iv > chk.max_integrality_violation:
                chk.max_integrality_violation, chk.worst_integer = iv, c
    chk.feasible = max(chk.max_row_violation, chk.max_bound_violation, chk.max_integrality_violation) <= tol
    chk.objective = math.fsum([model.constant] + [model.cost[c] * x[c] for c in model.columns])
    chk.objective_agrees = claimed is None or abs(claimed - chk.objective) <= tol * max(1.0, abs(chk.objective))
    return chk


# ---- .solu files: what is known about each instance (MIPLIB's format) ---------------------------

SOLU_TAGS = {"optimal": "=opt=", "best-known": "=best=", "infeasible": "=inf=", "open": "=unkn="}


def write_solu(rows) -> str:
    """MIPLIB's ``.solu`` text from ``(name, status, value, bound)`` rows: ``=opt= NAME VALUE`` for
    a proven optimum, ``=best= NAME VALUE`` (and ``=bestdual= NAME BOUND``) for a best-known value,
    ``=inf= NAME`` for a proven infeasible instance, ``=unkn= NAME`` for an open one."""
    out = []
    for name, status, value, bound in rows:
        tag = SOLU_TAGS.get(status)
        if tag is None:
            raise InstanceError("status", f"must be one of {', '.join(SOLU_TAGS)}, got {status!r}")
        if tag in ("=opt=", "=best=") and value is None:
            raise InstanceError("objective", f"{name}: a {status} row needs a value")
        if tag in ("=inf=", "=unkn="):
            out.append(f"{tag} {name}")
            continue
        out.append(f"{tag} {name} {value!r}")
        if tag == "=best=" and bound is not None:
            out.append(f"=bestdual= {name} {bound!r}")
    return "\n".join(out) + "\n"


def read_solu(path: str | os.PathLike) -> dict[str, dict]:
    """``{name: {"status", "objective", "bound"}}`` from a ``.solu`` file (:func:`write_solu`)."""
    back = {v: k for k, v in SOLU_TAGS.items()}
    out: dict[str, dict] = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            if tok[0] == "=bestdual=" and len(tok) == 3:
                out.setdefault(tok[1], {"status": "open", "objective": None, "bound": None})["bound"] = \
                    _sol_number(tok[2], Path(path), lineno)
                continue
            if tok[0] not in back or len(tok) < 2:
                raise InstanceError("solu file", f"{Path(path).name} line {lineno}: expected '=opt=|=best=|=inf=|"
                                                 f"=unkn= NAME [VALUE]'")
            row = out.setdefault(tok[1], {"status": "open", "objective": None, "bound": None})
            row["status"] = back[tok[0]]
            if tok[0] in ("=opt=", "=best="):
                if len(tok) < 3:
                    raise InstanceError("solu file", f"{Path(path).name} line {lineno}: {tok[0]} needs a value")
                row["objective"] = _sol_number(tok[2], Path(path), lineno)
                if tok[0] == "=opt=":
                    row["bound"] = row["objective"]
    return out
