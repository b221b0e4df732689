"""HiGHS on an integer column with a fractional upper bound: a wrong "infeasible" and a wrong "optimal".

Run: ``python reproduce.py`` (needs only highspy). Each model's true optimum is 0 (x = y = z = 0 is
feasible, and every integer point of the bounds gives at least 0):

* ``fractional_bound_infeasible.mps``: min -x - y, x + y <= 0.49, x, y integer in [0, 0.49];
* ``fractional_bound_optimal.mps``: min z, x - z <= 0, x integer in [0, 0.49], z integer in [0, 1].

HiGHS 1.15.1 answers "Infeasible" and "Optimal" with objective 1. With the bounds rounded to
the integers they allow (floor of an upper bound: 0) it answers 0 for both. SCIP and CBC answer 0
on the raw files.
"""

from pathlib import Path

import highspy

HERE = Path(__file__).parent
TRUE_OPTIMUM = {"fractional_bound_infeasible.mps": 0.0, "fractional_bound_optimal.mps": 0.0}


def run(path: Path, round_bounds: bool = False) -> tuple[str, float]:
    """HiGHS's model status and objective on ``path`` (bounds of integer columns rounded inward if asked)."""
    import math

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    if round_bounds:
        lp = h.getLp()
        for j, kind in enumerate(lp.integrality_):
            if kind != highspy.HighsVarType.kContinuous:
                h.changeColBounds(j, math.ceil(lp.col_lower_[j]), math.floor(lp.col_upper_[j]))
    h.run()
    return h.modelStatusToString(h.getModelStatus()), h.getInfo().objective_function_value


if __name__ == "__main__":
    print("HiGHS", highspy.Highs().version())
    for name, truth in TRUE_OPTIMUM.items():
        raw, rounded = run(HERE / name), run(HERE / name, round_bounds=True)
        print(f"{name}: raw {raw[0]} {raw[1]}, bounds rounded {rounded[0]} {rounded[1]}, true optimum {truth}")
