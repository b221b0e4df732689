"""Model files of library instances, and a file solver's answer read back into the reference evaluation.

A library instance is solved by outside solvers as a model file (MIPLIB's convention). This
module writes those files the same way every time and maps an answer on them back to the
family's solution:

* :func:`model_files` -- the instance's exact model as MPS, independent of any solve: Tetris's
  frozen model (:func:`placement.models.export.frozen_tetris_model`: every chord up front),
  CASSINI's cluster model of each candidate as its own file (a candidate without a shared
  link has no model: its score is 1 whatever the shifts), HiveD's VC-assignment model
  (``form="max"``). Same instance, same bytes.
* :func:`gzip_bytes` -- gzip with no time stamp and no file name in the header, so a stored
  ``.mps.gz`` and its sha256 depend on the model alone.
* :func:`family_solution` -- column values of such a file (a ``.sol``, or a backend's answer)
  turned into the family's solution (Tetris homes, HiveD bindings, CASSINI shifts) and judged by
  the reference evaluation: its objective and the broken hard constraints. The file's objective
  and this reference value must agree; the bench counts a disagreement as a failure.
"""

from __future__ import annotations

import gzip
import hashlib
import tempfile
from pathlib import Path
from typing import Any

from ...errors import InstanceError

__all__ = ["model_files", "gzip_bytes", "sha256", "family_solution", "FILE_FAMILIES"]

FILE_FAMILIES = ("tetris", "cassini", "hived")


def gzip_bytes(data: bytes) -> bytes:
    """``data`` gzipped deterministically (``mtime=0``, no name in the header)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def model_files(family: str, inst, name: str) -> list[dict[str, Any]]:
    """The instance's model files as ``{"file", "candidate", "data"}`` (uncompressed MPS bytes);
    ``file`` is ``NAME.mps`` or ``NAME.<candidate>.mps`` (module docstring)."""
    from placement.models import export

    if family not in FILE_FAMILIES:
        raise InstanceError("instance", f"must be of a family with a model file ({', '.join(FILE_FAMILIES)}), "
                                        f"got {family!r}")
    out = []
    with tempfile.TemporaryDirectory(prefix="placement-files-") as tmp:
        path = Path(tmp) / f"{name}.mps"
        if family == "tetris":
            recs = export.write_tetris(inst, path, "exact", solve=False)
        elif family == "cassini":
            recs = export.write_cassini(inst, path, "cluster")
        else:
            try:
                recs = export.write_hived(inst, path, "exact")
            except InstanceError:  # every reserved cell pinned: nothing to decide, no file
                return []
        for rec in recs:
            p = Path(rec["path"])
            out.append({"file": p.name, "candidate": rec.get("candidate", ""), "data": p.read_bytes()})
    return out


def _model(family: str, inst, candidate: str | None):
    from placement.models import cassini, hived
    from placement.models.export import frozen_tetris_model

    if family == "tetris":
        return frozen_tetris_model(inst)
    if family == "hived":
        return hived.build(inst, "max")
    if family == "cassini":
        names = [c.name for c in inst.candidates]
        if candidate not in names:
            raise InstanceError("candidate", f"must be one of {', '.join(names)}, got {candidate!r}")
        return cassini.build_cluster(inst, candidate)
    raise InstanceError("instance", f"must be of a family with a model file ({', '.join(FILE_FAMILIES)}), "
                                    f"got {family!r}")


def family_solution(family: str, inst, values: dict[str, float], candidate: str | None = None) -> dict[str, Any]:
    """The family's solution read from a model file's column values, and its reference evaluation.

    ``values`` maps the file's column names (as :func:`model_files` writes them) to values;
    a column it omits is 0. Returns ``{"solution", "objective", "violations"}``: the
    solution, its objective by the family's reference evaluation (CASSINI: the candidate's
    score) and the list of broken hard constraints. A name that is not a column of the model is
    one :class:`InstanceError`.
    """
    import pyomo.environ as pyo

    from placement.models.backends import write_pyomo
    from placement.registry import get_problem

    m = _model(family, inst, candidate)
    with tempfile.TemporaryDirectory(prefix="placement-names-") as tmp:
        names = write_pyomo(m, Path(tmp) / "m.mps")  # the writer's names, as in the file
    unknown = sorted(k for k in values if k not in names and k != "ONE_VAR_CONSTANT")
    if unknown:
        raise InstanceError("solution", f"names {unknown[0]!r}, which is not a column of the {family} model "
                                        f"({len(unknown)} unknown names)")
    for n, var in names.items():
        if not var.fixed:
            var.set_value(float(values.get(n, 0.0)), skip_validation=True)
    spec = get_problem(family)
    if family == "tetris":
        from placement.models.tetris import _home_of
        from placement.tetris import TetrisSolution, evaluate

        sol = TetrisSolution(home=_home_of(m))
        objective = evaluate(inst, sol).objective
    elif family == "hived":
        from placement.hived.evaluation import Binding, HivedSolution, evaluate
        from placement.models.hived import pinned_bindings

        binds = [Binding(t, c, k, i) for (t, c, k, i) in m.I if (pyo.value(m.x[t, c, k, i]) or 0.0) > 0.5]
        sol = HivedSolution(tuple(binds + pinned_bindings(inst)))
        objective = evaluate(inst, sol).objective
    else:
        from placement.cassini.evaluation import evaluate
        from placement.cassini.instance import CassiniSolution

        shifts = {j.name: 0 for j in inst.jobs}
        for n, k in m.Y:
            if (pyo.value(m.y[n, k]) or 0.0) > 0.5:
                shifts[n] = k * m.G
        sol = CassiniSolution(candidate, tuple(shifts.items()))
        objective = evaluate(inst, sol).score
    _, broken = spec.evaluate_report(inst, sol)
    return {"solution": sol, "objective": float(objective), "violations": list(broken)}
