"""The commands every family shares: ``generate``, ``solve``, ``evaluate``, ``bench``.

:func:`base_parser` builds them (plus what families add through
:attr:`ProblemSpec.add_commands`); :mod:`placement.app.cli` adds ``sweep`` on top, and the sweep
parses its cells with :func:`base_parser` (so it never imports the CLI).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..errors import InstanceError
from ..io import check_output_path, commit, dumps_json, read_document, write_json
from ..registry import get_problem, problem_of_document, problems
from .options import key_value, nonnegative_int, option_dict

__all__ = ["base_parser", "load_instance_file", "cmd_generate", "cmd_solve", "cmd_evaluate", "cmd_bench", "cell"]


def load_instance_file(path: str):
    """Load and validate an instance file of any registered family: ``(spec, instance)``."""
    doc = read_document(path)
    spec = problem_of_document(doc)
    return spec, spec.load_instance(doc)


class _OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`InstanceError` naming the option (one line, exit 2)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        m = re.match(r"argument (\S+?)(?:/\S+)?: (.*)", message, re.S)
        if m:
            field, what = m.group(1), m.group(2)
        elif message.startswith("the following arguments are required: "):
            field, what = message.split(": ", 1)[1].split(",")[0].strip(), "is required"
        elif message.startswith("unrecognized arguments: "):
            field, what = message.split(": ", 1)[1].split()[0], "is not an option of this command"
        else:
            field, what = self.prog, message
        # Raised, not printed: main() prints it as the one line, and callers that parse
        # command lines of their own (the sweep) get the field named.
        raise InstanceError(field, " ".join(what.split()))


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if not 1 <= v <= 100:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to 100, got {text!r}")
    return v


def cell(key: str, v: Any) -> str:
    """A value as the command line prints it: ``-`` for None; a float with 4 significant digits,
    never in exponent form up to 10^15 (``78,440`` not ``7.844e+04``); a time in seconds (a key
    ending in ``_s``) of an hour or more also in hours (``78,440 s (21.8 h)``)."""
    import math

    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, float | int):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    text = f"{v:,}" if isinstance(v, int) else f"{v:,.0f}" if 1e4 <= abs(v) < 1e15 else \
        f"{v:,.4g}" if abs(v) < 1e4 else f"{v:.4g}"
    if key.endswith("_s") and abs(v) >= 3600:
        text += f" s ({v / 3600:,.1f} h)"
    return text


def _print_mapping(title: str, mapping: dict[str, Any]) -> None:
    print(title)
    width = max((len(k) for k in mapping), default=0)
    for k, v in mapping.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        print(f"  {k:<{width}}  {v}")


# Bytes each generated item takes at least in the written document (measured on the default
# options: a Tetris table 71 bytes, a job 110-150; a trace job 110): (family, option) -> bytes.
_FILE_BYTES_PER_ITEM = {("tetris", "tables"): 60, ("tetris", "jobs"): 90, ("trace", "jobs"): 80}
_NOTE_BYTES = 8 * 2**20   # about 100,000 tables: several seconds of generation


def _check_file_size(args: argparse.Namespace) -> None:
    """The document ``generate`` would write, checked against the size the commands read
    (:func:`placement.validate.generated_file`) before any work."""
    from ..validate import generated_file

    if getattr(args, "kind", None) in ("mast", "cassini"):   # trace kinds whose size --jobs does not set
        return
    terms = []
    for (family, option), per in _FILE_BYTES_PER_ITEM.items():
        n = getattr(args, option, None)
        if family == args.problem and isinstance(n, int) and n > 0:
            terms.append((f"--{option}", per * n))
    if terms:
        generated_file(terms)
        size = sum(b for _, b in terms)
        if size >= _NOTE_BYTES:    # a long generation says so before it starts
            import sys

            print(f"note: generating {args.problem}: a document of at least {size / 2**20:,.0f} MiB, which takes "
                  "a while", file=sys.stderr, flush=True)


def cmd_generate(args: argparse.Namespace) -> int:
    spec = get_problem(args.problem)
    if args.output is not None:   # "" is refused, not read as "no file"
        check_output_path(args.output)
    _check_file_size(args)
    instance = spec.generate(args)
    doc = spec.instance_to_json(instance)
    if args.output is not None:
        with commit():  # the file lands whole, and from then on the command has succeeded
            write_json(args.output, doc, rows=("jobs", "table_regions"))
        print(f"wrote {args.output}")
    else:
        print(dumps_json(doc, rows=("jobs", "table_regions")))
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    """Solve, write ``-o`` (before anything is printed, so a closed stdout never costs the file), report.

    Exit codes: 0 for every status but ``error``; 1 for ``error``; 2 for bad input.
    """
    from .solving import solve_options

    if args.output is not None:
        check_output_path(args.output)
    option_dict(args.option)   # a repeated key is refused before the instance is read
    spec, instance = load_instance_file(args.instance)
    result = solve_options(instance, args.solver, args.time_limit, args.seed, option_dict(args.option))
    sol_json = spec.solution_to_json(instance, result.solution) if result.solution is not None else None
    report, broken = ({}, [])
    if result.solution is not None:
        report, broken = spec.evaluate_report(instance, result.solution)
    if args.output is not None:
        out = {"problem": spec.name, **result.to_dict(sol_json), "evaluation": report, "violations": broken}
        with commit():
            write_json(args.output, out)
    print(f"problem   {spec.name}")
    print(f"solver    {result.solver}")
    print(f"status    {result.status}")
    print(f"objective {result.objective}")
    if result.bound is not None:
        print(f"bound     {result.bound}  (gap {result.gap})")
    print(f"time      {result.wall_time_s:.3f} s")
    if result.message:
        print(f"message   {result.message}")
    if result.stats:
        _print_mapping("stats", {k: v for k, v in result.stats.items() if not isinstance(v, (list, dict))})
    if result.solution is not None:
        _print_mapping("evaluation (reference)", report)
        print(f"violations: {'; '.join(broken) if broken else 'none'}")
    if args.output is not None:
        print(f"wrote {args.output}")
    return 0 if result.status != "error" else 1


def cmd_evaluate(args: argparse.Namespace) -> int:
    spec, instance = load_instance_file(args.instance)
    doc = read_document(args.solution)
    named = doc.get("problem") if isinstance(doc, dict) else None
    if isinstance(named, str) and named != spec.name:
        raise InstanceError("solution.problem", f"is {named!r}, but {args.instance} is a {spec.name!r} "
                            f"instance: give a {spec.name} solution")
    solution = spec.load_solution(instance, doc)
    terms, broken = spec.evaluate_report(instance, solution)
    if spec.name == "trace":
        from .run import folder_checks

        broken = broken + folder_checks(args.instance, instance, solution)
    _print_mapping(f"{spec.name}: objective terms and measures", terms)
    if broken:
        print(f"violations ({len(broken)}):")
        for line in broken:
            print(f"  {line}")
        return 1
    print("violations: none")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.library or args.rebuild:
        from .bench.library_run import cmd_library

        return cmd_library(args)
    from .bench import run_bench

    return run_bench(problems_=args.problem, quick=args.quick, scale=args.scale, out_dir=args.out,
                     seed=args.seed)


def base_parser(description: str = "") -> tuple[argparse.ArgumentParser, Any]:
    """The parser of every command but ``sweep``: generate, solve, evaluate, bench, and what the
    families add (``simulate``, ``check-cells``). Returns (parser, its subparsers)."""
    parser = _OneLineParser(prog="placement", description=description)
    from .run import package_version

    parser.add_argument("--version", action="version", version=f"placement {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="generate a seeded instance")
    gsub = gen.add_subparsers(dest="problem", required=True)
    for spec in problems().values():
        if spec.generate is None:
            continue
        p = gsub.add_parser(spec.name, help=spec.description)
        if spec.add_generate_args is not None:
            spec.add_generate_args(p)
        p.add_argument("--seed", type=nonnegative_int, default=0)
        p.add_argument("-o", "--output", help="write the instance here (default: stdout)")
        p.set_defaults(func=cmd_generate)

    by_family = "\n".join(f"  {name:<8} {', '.join(spec.solvers)} (default {spec.exact_solver})"
                           for name, spec in problems().items())
    solve = sub.add_parser("solve", help="solve an instance file", epilog=f"solvers by family:\n{by_family}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    solve.add_argument("instance")
    solve.add_argument("--solver", help="solver name, one of the instance's family (listed below; "
                       "default: the exact model)")
    solve.add_argument("--time-limit", type=_positive_float, default=None, help="seconds")
    solve.add_argument("--seed", type=nonnegative_int, default=None)
    solve.add_argument("--option", action="append", type=key_value, metavar="KEY=VALUE",
                       help="a solver keyword argument, e.g. --option loops=discard (repeatable)")
    solve.add_argument("-o", "--output", help="write the result JSON here")
    solve.set_defaults(func=cmd_solve)

    ev = sub.add_parser("evaluate", help="objective terms and violations of a solution")
    ev.add_argument("instance")
    ev.add_argument("solution")
    ev.set_defaults(func=cmd_evaluate)

    bench = sub.add_parser("bench", help="exact vs heuristic on the embedded default instances")
    bench.add_argument("--problem", action="append", choices=sorted(problems()),
                       help="restrict to a problem family (repeatable)")
    bench.add_argument("--quick", action="store_true", help="smallest instances only")
    bench.add_argument("--scale", action="store_true", help="add the scale runs (minutes)")
    bench.add_argument("--out", default="bench-results", help="output folder (default: bench-results)")
    bench.add_argument("--seed", type=nonnegative_int, default=0)
    bench.add_argument("--library", nargs="?", const=True, default=False, metavar="DIR",
                       help="every chosen solver on the instance library (instances/library/), or on a folder DIR "
                            "of MPS files (with .solu values where known): solved count, failures, shifted "
                            "geometric mean time, primal gap, performance profile")
    bench.add_argument("--seeds", type=_positive_int, default=1,
                       help="--library: runs per solver and file with seeds 0..N-1 (variability; default 1)")
    bench.add_argument("--solvers", action="append", metavar="A,B",
                       help="--library: solver labels, e.g. highs,scip,cbc,hill-climb (default: "
                            "highs,scip,cbc,hill-climb,affinity,buddy)")
    bench.add_argument("--time-limit", type=_positive_float, default=None,
                       help="--library: seconds per solve (default 60; 10 with --quick)")
    bench.add_argument("--rebuild", action="store_true",
                       help="--library: regenerate the stored instances and re-prove the manifest's values")
    bench.add_argument("--only", action="append", metavar="NAME",
                       help="--library: only this library instance (repeatable)")
    bench.set_defaults(func=cmd_bench)

    for spec in problems().values():
        if spec.add_commands is not None:
            spec.add_commands(sub)
    return parser, sub
