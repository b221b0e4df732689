"""How the CASSINI family plugs into the CLI and the benchmark harness.

Solvers (``placement solve FILE --solver NAME``); every one returns the chosen
candidate and one integer shift per job, scored by the reference evaluation
(mean shared-link score on the integer time grid, to maximize):

``exact``     cluster-level shift model on every candidate (HiGHS), best candidate.
``affinity``  Algorithm 2 + Algorithm 1: per-link optima, loop check, ranking, BFS
              shifts; loopy candidates get the spanning-forest + repair fallback.
``rotation``  per-link optima on every candidate, unique shifts by the paper's
              "simple approach" (a random per-link shift per job), the strawman of §4.1.
``table1``    the paper's per-link model (Table 1, HiGHS) on every shared link of every
              candidate, unique shifts by Algorithm 1's walk; reports the per-link optima, the
              reference score of the composed shifts and the bound "mean of per-link optima".
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from placement.errors import InstanceError
from placement.registry import ProblemSpec, lazy
from placement.validate import generated_size, option_counts

if TYPE_CHECKING:
    from placement.cassini.instance import CassiniInstance

__all__ = ["SPEC"]

# The CASSINI modules (and networkx, which they import) load on first use, not when the registry
# lists the families (every command lists them).


def _evaluate_report(inst: CassiniInstance, sol) -> tuple[dict, list[str]]:
    """The reference evaluation's terms and per-link scores, or the broken constraints."""
    from placement.cassini.evaluation import evaluate, violations

    broken = violations(inst, sol)
    if broken:
        return {"candidate": sol.candidate}, broken
    ev = evaluate(inst, sol)
    report = ev.terms()
    report.update({f"link {lk}": v for lk, v in ev.link_scores.items()})
    return report, []


def _add_generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=8, help="number of jobs (default 8)")
    p.add_argument("--candidates", type=int, default=4, help="placement candidates (default 4)")
    p.add_argument("--topology", choices=["testbed", "tree"], default="testbed",
                   help="testbed: 24 servers of Figure 10 (default); tree: --pods x --tors-per-pod x --servers-per-tor")
    p.add_argument("--pods", type=int, default=2)
    p.add_argument("--tors-per-pod", type=int, default=4)
    p.add_argument("--servers-per-tor", type=int, default=4)
    p.add_argument("--fragmentation", type=float, default=0.3, help="share of scattered jobs (default 0.3)")
    p.add_argument("--precision", type=float, default=5.0, help="angle precision in degrees (default 5)")


def _generate(args: argparse.Namespace) -> CassiniInstance:
    from placement.instances import generate_cassini

    option_counts(args, positive=("jobs", "candidates", "pods", "tors_per_pod", "servers_per_tor"))
    if not 0.0 <= args.fragmentation <= 1.0:
        raise InstanceError("--fragmentation", "must be in [0, 1]")
    if args.precision <= 0:
        raise InstanceError("--precision", "must be positive and divide 360")
    # A job ~2 KB (profile phases), a placement entry ~256 B, a server or link ~512 B.
    servers = args.pods * args.tors_per_pod * args.servers_per_tor if args.topology == "tree" else 24
    generated_size([("--jobs", 2048 * args.jobs), ("--candidates", 256 * args.candidates * args.jobs),
                    ("--pods", 512 * servers)], "the CASSINI instance")
    try:
        return generate_cassini(args.jobs, args.candidates, seed=args.seed, topology=args.topology, pods=args.pods,
                                tors_per_pod=args.tors_per_pod, servers_per_tor=args.servers_per_tor,
                                fragmentation=args.fragmentation, precision_deg=args.precision)
    except InstanceError as exc:  # a field of the generated document: name the option that set it
        option = {"precision_deg": "--precision"}.get(exc.field)
        raise InstanceError(option, exc.message) if option else exc from None
    except ValueError as exc:
        raise InstanceError("--jobs", str(exc)) from None


def _bench_instances(quick: bool) -> list[tuple[str, CassiniInstance]]:
    from placement.cassini.instance import load_instance
    from placement.instances import stored, stored_path
    from placement.io import read_document

    names = stored("cassini")
    if quick:
        names = names[:3]
    return [(n.removesuffix(".json"), load_instance(read_document(str(stored_path("cassini", n))), name=n))
            for n in names]


SPEC = ProblemSpec(
    name="cassini",
    sense="max",
    description="CASSINI: compatibility scores, Affinity-graph time shifts, candidate ranking (Table 1, Alg. 1-2)",
    load_instance=lazy("placement.cassini.instance:load_instance"),
    instance_to_json=lazy("placement.cassini.instance:instance_to_json"),
    load_solution=lazy("placement.cassini.instance:load_solution"),
    solution_to_json=lazy("placement.cassini.instance:solution_to_json"),
    evaluate_report=_evaluate_report,
    solvers={
        "exact": "placement.models.cassini:solve",
        "affinity": "placement.solvers.affinity:solve",
        "rotation": "placement.solvers.rotation:solve",
        "table1": "placement.models.cassini:solve_table1",
    },
    exact_solver="exact",
    add_generate_args=_add_generate_args,
    generate=_generate,
    bench_instances=_bench_instances,
    bench_solvers=["exact", "affinity", "rotation", "table1"],
    bench_options={"exact": {"time_limit": 8.0}, "table1": {"time_limit": 20.0}},
    bench_extra="placement.app.bench.cassini:bench_sections",
)
