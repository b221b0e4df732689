"""How the Tetris family plugs into the CLI and the benchmark harness."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from placement.registry import ProblemSpec, lazy
from placement.validate import generated_size, option_counts

if TYPE_CHECKING:
    from placement.tetris.instance import TetrisInstance

__all__ = ["SPEC"]

# The Tetris modules (and numpy) load on first use, not when the registry lists the families.


def _evaluate_report(inst: TetrisInstance, sol) -> tuple[dict, list[str]]:
    """The reference evaluation's terms and measures, and the broken hard constraints."""
    from placement.tetris.evaluation import evaluate, violations

    ev = evaluate(inst, sol)
    report = ev.terms(inst)
    report.update(ev.measures)
    return report, violations(inst, sol, ev)


def _add_generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tables", type=int, default=10, help="number of tables (default 10)")
    p.add_argument("--jobs", type=int, default=15, help="number of jobs (default 15)")
    p.add_argument("--regions", type=int, default=3, help="number of regions (default 3)")
    p.add_argument("--gpu-types", type=int, default=2, help="number of GPU types (default 2)")
    p.add_argument("--priorities", type=int, default=3, help="number of priority levels (default 3)")


def _generate(args: argparse.Namespace) -> TetrisInstance:
    from placement.errors import InstanceError
    from placement.instances import generate_tetris

    option_counts(args, positive=("tables", "regions", "gpu_types", "priorities"), non_negative=("jobs",))
    if args.gpu_types > 8:
        raise InstanceError("--gpu-types", "must be at most 8")
    # Per-item sizes measured on generated instances (Python objects, JSON and evaluation arrays),
    # rounded up: a table ~0.5 KB, a job ~1 KB, D[r,g,k] and per-region rows 8 B per cell.
    cells = args.regions * args.gpu_types * args.priorities
    generated_size([("--tables", 512 * args.tables), ("--jobs", 1024 * args.jobs),
                    ("--regions", 1024 * args.regions + 8 * cells), ("--priorities", 64 * args.priorities + 8 * cells)],
                   "the Tetris instance")
    return generate_tetris(args.tables, args.jobs, args.regions, seed=args.seed,
                           n_gpu_types=args.gpu_types, n_priorities=args.priorities)


def _bench_instances(quick: bool) -> list[tuple[str, TetrisInstance]]:
    from placement.instances import stored, stored_path
    from placement.io import read_document
    from placement.tetris.instance import load_instance

    names = stored("tetris")
    if quick:
        names = names[:2]
    out = []
    for n in names:
        doc = read_document(str(stored_path("tetris", n)))
        out.append((n.removesuffix(".json"), load_instance(doc, name=n)))
    return out


SPEC = ProblemSpec(
    name="tetris",
    sense="min",
    description="MAST Tetris: home region per table (Figure 4, expressions (1)-(9))",
    load_instance=lazy("placement.tetris.instance:load_instance"),
    instance_to_json=lazy("placement.tetris.instance:instance_to_json"),
    load_solution=lazy("placement.tetris.instance:load_solution"),
    solution_to_json=lazy("placement.tetris.instance:solution_to_json"),
    evaluate_report=_evaluate_report,
    solvers={
        "exact": "placement.models.tetris:solve",
        "hill-climb": "placement.solvers.hill_climb:solve",
        "hill-climb-ils": "placement.solvers.hill_climb:solve_ils",
        "replicas": "placement.solvers.replicas:solve",
        "lns": "placement.solvers.lns:solve",
        "joint": "placement.models.tetris_joint:solve",
        "bound": "placement.models.tetris_bound:solve",
        "branch-round": "placement.solvers.branch_round:solve",
    },
    exact_solver="exact",
    add_generate_args=_add_generate_args,
    generate=_generate,
    bench_instances=_bench_instances,
    bench_solvers=["exact", "hill-climb", "hill-climb-ils", "lns"],
    bench_options={"exact": {"time_limit": 30.0}, "lns": {"time_limit": 10.0}},
    bench_extra="placement.app.bench.tetris:bench_sections",
)
