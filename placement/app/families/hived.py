"""How the HiveD family plugs into the CLI and the benchmark harness.

``placement check-cells CONFIG`` prints the closed-form check per chain and
level (exit 0 feasible, 1 infeasible, 2 bad input). ``placement solve CONFIG
--solver exact|buddy`` binds every reserved cell; the objective is the number
of honoured reserved cells (maximized, pinned cells included).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from placement.errors import InstanceError
from placement.registry import ProblemSpec, lazy
from placement.validate import generated_size, option_counts

if TYPE_CHECKING:
    from placement.hived.cells import HivedInstance

__all__ = ["SPEC", "cmd_check_cells", "format_checks"]

# The HiveD modules load on first use, not when the registry lists the families.


def _evaluate_report(inst: HivedInstance, sol) -> tuple[dict, list[str]]:
    """The reference evaluation's terms and the broken hard constraints."""
    from placement.hived.evaluation import evaluate, violations

    return evaluate(inst, sol).terms(), violations(inst, sol)


def format_checks(inst: HivedInstance) -> tuple[bool, list[str]]:
    """Lines of the per-chain, per-level closed-form report, and overall feasibility."""
    from placement.hived.feasibility import check_feasibility

    lines = []
    ok = True
    for chk in check_feasibility(inst):
        ok &= chk.feasible
        verdict = "feasible" if chk.feasible else "INFEASIBLE"
        lines.append(f"chain {chk.chain}: {verdict}" + (f" ({chk.pinned} pinned cell(s) carved out)"
                                                         if chk.pinned else ""))
        width = max(len(lv.cell_type) for lv in chk.levels)
        lines.append(f"  {'level':>5}  {'cell type':<{width}}  {'GPUs':>6}  {'available':>9}  {'reserved':>8}"
                     f"  {'left':>6}")
        for lv in chk.levels:
            note = f"  short by {lv.shortfall} cell(s)" if lv.shortfall else ""
            lines.append(f"  {lv.level:>5}  {lv.cell_type:<{width}}  {lv.gpus_per_cell:>6}  {lv.available:>9}"
                         f"  {lv.reserved:>8}  {lv.left:>6}{note}")
    return ok, lines


def cmd_check_cells(args: argparse.Namespace) -> int:
    from placement.hived.config import load_instance
    from placement.io import read_document

    inst = load_instance(read_document(args.config), name=args.config)
    ok, lines = format_checks(inst)
    print("\n".join(lines))
    print(f"VC assignment: {'feasible' if ok else 'INFEASIBLE'} "
          f"({len(inst.vcs)} VC(s), {inst.n_reserved} reserved cell(s))")
    return 0 if ok else 1


def _add_commands(sub) -> None:
    p = sub.add_parser("check-cells", help="HiveD: closed-form feasibility of a cell spec, per chain and level")
    p.add_argument("config", help="HiveD YAML, Figure 4 form or hived JSON")
    p.set_defaults(func=cmd_check_cells)


def _add_generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chains", type=int, default=1, help="number of chains (default 1)")
    p.add_argument("--levels", type=int, default=4, help="levels per chain (default 4)")
    p.add_argument("--top-cells", type=int, default=2, help="top-level cells per chain (default 2)")
    p.add_argument("--vcs", type=int, default=3, help="number of VCs (default 3)")
    p.add_argument("--overload", type=int, default=0, help="extra cells per VC and chain (may be infeasible)")
    p.add_argument("--pinned", type=int, default=0, help="pinned cells (default 0)")
    p.add_argument("--bad", type=int, default=0, help="faulty GPUs per chain (default 0)")


def _generate(args: argparse.Namespace) -> HivedInstance:
    from placement.instances import generate_hived


    option_counts(args, positive=("chains", "levels", "top_cells", "vcs"), non_negative=("overload", "pinned", "bad"))
    if args.levels > 23:  # every split is >= 2 and a chain holds at most 2**22 GPUs
        raise InstanceError("--levels", f"must be at most 23 (a chain holds at most 2**22 GPUs), got {args.levels}")
    # A cell ~128 B per GPU of a chain (at most 2**22 GPUs, 3**(levels-1) per top cell with split <= 3),
    # a VC reservation row ~256 B per (VC, chain, level), a pinned or faulty cell ~256 B.
    per_top = 3 ** (args.levels - 1)
    generated_size([("--chains", 128 * args.chains * min(args.top_cells * per_top, 2**23)),
                    ("--top-cells", 128 * args.top_cells * per_top),
                    ("--vcs", 256 * args.vcs * args.chains * args.levels),
                    ("--overload", 256 * args.vcs * args.chains * args.overload),
                    ("--pinned", 256 * args.pinned), ("--bad", 256 * args.chains * args.bad)],
                   "the HiveD instance")
    return generate_hived(args.chains, args.levels, args.top_cells, args.vcs, seed=args.seed,
                          overload=args.overload, n_pinned=args.pinned, n_bad=args.bad)


def _bench_instances(quick: bool) -> list[tuple[str, HivedInstance]]:
    from placement.hived.config import load_instance
    from placement.instances import generate_hived, stored, stored_path
    from placement.io import read_document

    out = []
    for n in stored("hived"):
        out.append((n.rsplit(".", 1)[0], load_instance(read_document(str(stored_path("hived", n))), name=n)))
    if quick:
        return out[:3]
    for seed in range(3):  # infeasible generated assignments: the optimization form has work to do
        inst = generate_hived(2, 4, 3, 4, seed=100 + seed, overload=2, n_pinned=2)
        out.append((inst.name, inst))
    return out


SPEC = ProblemSpec(
    name="hived",
    sense="max",
    description="HiveD: cells, VC-assignment feasibility and buddy cell binding (OSDI'20 §3)",
    load_instance=lazy("placement.hived.config:load_instance"),
    instance_to_json=lazy("placement.hived.config:instance_to_json"),
    load_solution=lazy("placement.hived.evaluation:load_solution"),
    solution_to_json=lazy("placement.hived.evaluation:solution_to_json"),
    evaluate_report=_evaluate_report,
    solvers={"exact": "placement.models.hived:solve", "exact-pulp": "placement.models.hived_pulp:solve", "buddy": "placement.solvers.buddy:solve"},
    exact_solver="exact",
    add_generate_args=_add_generate_args,
    generate=_generate,
    bench_instances=_bench_instances,
    bench_solvers=["exact", "exact-pulp", "buddy"],
    bench_options={"exact": {"time_limit": 20.0}},
    bench_extra="placement.app.bench.hived:bench_sections",
    claims=lazy("placement.hived.config:claims"),
    add_commands=_add_commands,
)
