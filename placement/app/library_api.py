"""The Python face of model files and the library benchmark: ``export``, ``bench``, ``load_solution``.

Each function is what a command runs, with the command's checks and messages, naming the Python
parameter where the command names its flag (``out: ...`` for ``-o``, ``solvers: ...`` for
``--solvers``, ``folder: ...`` for ``--library DIR``):

=============================================  ==================================================
Python                                         command line
=============================================  ==================================================
``export(instance, "m.mps")``                  ``placement export FILE -o m.mps``
``bench(out="lib")``                           ``placement bench --library --out lib``
``bench(folder="my-mps", out="lib")``          ``placement bench --library my-mps --out lib``
``load_solution(instance, "m.sol")``           (an outside solver's ``.sol`` on an exported file,
                                               judged by the family's reference evaluation)
=============================================  ==================================================
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from .options import python_names

__all__ = ["export", "bench", "load_solution"]

# the flags these verbs' code names, and their Python parameters
_NAMES = {"--solvers": "solvers", "--library": "folder", "--only": "only", "--model": "model", "-o": "out",
          "--out": "out", "--time-limit": "time_limit", "--seed": "seed", "--option": "options"}
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*|-o)(?![\w-])")


@contextlib.contextmanager
def _python_names():
    try:
        with python_names():
            yield
    except InstanceError as exc:
        field = _FLAG.sub(lambda m: _NAMES.get(m.group(1), m.group(1)), exc.field)
        message = _FLAG.sub(lambda m: _NAMES.get(m.group(1), m.group(1)), exc.message)
        if (field, message) == (exc.field, exc.message):
            raise
        raise InstanceError(field, message) from None


def _positive(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0 or v == float("inf"):
        raise InstanceError(name, f"must be a positive finite number, got {v!r:.60}")
    return float(v)


def export(instance, out: str | os.PathLike, model: str | None = None, **options: Any) -> list[dict[str, Any]]:
    """Write an instance's exact model as MPS or LP: ``placement export``. ``instance``: a file, a
    document or an instance object; ``out``: ``FILE.mps`` or ``FILE.lp`` (a CASSINI instance
    writes ``FILE.<candidate>.mps`` per candidate); ``model``: the family's model name
    (:data:`placement.models.export.MODELS`); ``options``: the writer's keywords. Returns one
    record per written file (path, rows, columns, integers, sense). Checked before writing; a
    failure leaves nothing behind."""
    with _python_names():

        from ..io import check_output_path
        from .export import write_staged
        from .solving import family_of

        out = Path(out)
        if out.suffix.lower() not in (".mps", ".lp"):
            raise InstanceError("-o", f"must end in .mps or .lp, got {out.name!r}")
        check_output_path(out)
        spec, inst = family_of(instance)
        return write_staged(spec.name, inst, out, model, options)


def bench(out: str | os.PathLike = "bench-results", *, folder: str | os.PathLike | None = None,
          solvers: list[str] | str | None = None, time_limit: float = 60.0, quick: bool = False, seed: int = 0,
          seeds: int = 1, only: list[str] | None = None, progress: bool = False) -> dict[str, Any]:
    """Run the library benchmark: ``placement bench --library [DIR]``. ``folder``: a folder of the
    user's ``.mps`` / ``.mps.gz`` files (with ``.solu`` files for known values) instead of the
    package's library; ``solvers``: labels (``"highs,scip"`` or a list); ``seeds``: runs per exact
    solver and file. Returns ``{"rows", "summary", "figure", "settings"}`` (the rows and summary
    as DataFrames) after writing the outputs in ``out`` (:mod:`placement.app.bench.library_run`)."""
    with _python_names():
        from .bench.library_run import run_library_bench

        if isinstance(solvers, str):
            solvers = [s.strip() for s in solvers.split(",") if s.strip()]
        elif solvers is not None and (not isinstance(solvers, list | tuple) or
                                      not all(isinstance(s, str) for s in solvers)):
            raise InstanceError("--solvers", f"must be a list of solver labels, got {solvers!r:.60}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InstanceError("--seed", f"must be a non-negative integer, got {seed!r:.60}")
        time_limit = _positive(time_limit, "--time-limit")
        if only is not None and (not isinstance(only, list | tuple) or not all(isinstance(s, str) for s in only)):
            raise InstanceError("--only", f"must be a list of library instance names, got {only!r:.60}")
        res = run_library_bench(out, solvers, time_limit, quick, seed, list(only) if only else None,
                                progress=print if progress else (lambda *_: None), folder=folder, seeds=seeds)
    import pandas as pd

    rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in res["rows"]]
    return {**res, "rows": pd.DataFrame(rows), "summary": pd.DataFrame(res["summary"])}


def load_solution(instance, solution: str | os.PathLike | dict[str, float], *, candidate: str | None = None,
                  model_file: str | os.PathLike | None = None, tol: float = 1e-6) -> dict[str, Any]:
    """Read an outside solver's answer on an exported model file back into the package.

    ``instance``: the instance the file was exported from (a file, a document or an instance
    object: Tetris, HiveD or CASSINI); ``solution``: a ``.sol`` file (MIPLIB's ``NAME VALUE``
    lines, ``=obj=``) or a mapping of column names to values; ``candidate``: the CASSINI
    candidate whose file it answers; ``model_file``: the MPS file, to check every row, bound and
    integrality at ``tol`` as well (:func:`placement.app.bench.mps_check.check_solution`).
    Returns ``{"solution", "objective", "violations", "check"}``: the family's solution, its
    reference evaluation (CASSINI: the candidate's score), the broken hard constraints, and the
    checker's verdict (``None`` without ``model_file``).
    """
    with _python_names():
        from .bench.model_files import FILE_FAMILIES, family_solution
        from .bench.mps_check import check_solution, read_sol
        from .solving import family_of

        spec, inst = family_of(instance)
        if spec.name not in FILE_FAMILIES:
            raise InstanceError("instance", f"must be of a family with a model file ({', '.join(FILE_FAMILIES)}), "
                                            f"got {spec.name!r}")
        if isinstance(solution, dict):
            values, claimed = {str(k): float(v) for k, v in solution.items()}, None
        elif isinstance(solution, str | os.PathLike):
            values, claimed = read_sol(solution)
        else:
            raise InstanceError("solution", f"must be a .sol file or a mapping of column names to values, "
                                            f"got {type(solution).__name__}")
        if spec.name == "cassini":
            names = [c.name for c in inst.candidates]
            if candidate is None and len(names) == 1:
                candidate = names[0]
            if candidate is None:
                raise InstanceError("candidate", f"must name the candidate the file answers ({', '.join(names)})")
        elif candidate is not None:
            raise InstanceError("candidate", f"applies to CASSINI only, not {spec.name}")
        check = None
        if model_file is not None:
            check = check_solution(model_file, values, claimed, tol=_positive(tol, "tol"))
        out = family_solution(spec.name, inst, values, candidate)
        return {**out, "check": check}
