"""``placement sweep``: a grid of solves or simulations as a Dask task graph, resumable (app layer).

A *sweep spec* (YAML or JSON) names a grid; every point of the grid is a *cell*, run as
one task. Two kinds:

``kind: solve``::

    kind: solve
    family: tetris                       # a registered problem family
    solvers: [exact, hill-climb, hill-climb-ils]
    sizes:                               # `placement generate <family>` options, one mapping per size
      - {tables: 10, jobs: 15, regions: 3}
      - {tables: 20, jobs: 40, regions: 4}
    seeds: [0, 1, 2]                     # generator seed (the solver gets the same seed)
    time_limit: 30                       # seconds per solve (optional)
    options: {hill-climb: {max_passes: 1}}   # per-solver keyword arguments (optional)

``kind: simulate``::

    kind: simulate
    policies: [fifo, dally, tiresias]
    traces:                              # `placement simulate` inputs: a file or a shipped name, window options
      - {trace: philly, hours: 6, sample: 200}
    clusters: [1x1x2x8x8, 1x1x4x8x8]     # `--cluster` values
    seeds: [0, 1]
    options: {dally: {}}                 # per-policy constructor arguments (optional)

Cells reuse the command line's own parsers and loaders (``generate``, ``solve``,
``simulate``), so a spec is validated exactly like the equivalent commands: before any
cell runs, every size is parsed and generated once (seed of the first cell), every
solver or policy and its options checked, every trace and cluster loaded; the first
problem is one line naming the field (``sizes[1].tables: must be a positive integer``).

**Results.** One row per cell: its inputs, ``status``, ``objective``, ``bound``, ``gap``
(the solver's own gap to its bound), ``gap_to_best`` (to the exact solver's objective on
the same instance, or the best bound when the exact solver did not prove optimality),
``wall_time_s``, the solver statistics or simulation metrics (flattened, numbers only),
``error``, and what made the row: ``options`` (as the spec gives them, JSON), ``version`` (the
package's) and, for a simulation, ``resolved_options`` (the policy's options with its
defaults, JSON), ``perf`` and ``command`` (the ``placement simulate`` line that reruns the
cell alone). Written to ``results.parquet`` (pyarrow) and ``results.csv``, with
``summary.md`` and ``gap_vs_size.png`` / ``metric_vs_cluster.png``.

**Resumable.** Each finished cell is written at once, atomically, to
``DIR/cells/<key>.json``; ``key`` is a SHA-256 of the cell's canonical inputs and the
package version. Rerunning the same spec into the same folder runs only the missing
cells (a changed package version reruns everything). A cell whose solver raises is
recorded with ``status: error`` and the message, and the sweep goes on.

**Execution.** ``--workers 0`` runs the cells one after another in this process, no
Dask. Otherwise a Dask ``LocalCluster`` (``--workers N`` processes, one thread each,
default 2) or the scheduler at ``--scheduler ADDRESS``. One task per cell; results are
stored by this process as tasks finish.

**Faults.** A worker process that dies mid-cell (killed, out of memory) is detected by
the scheduler, which reruns the cell on another worker, up to Dask's
``distributed.scheduler.allowed-failures`` (3) times; the cell then lands once. What is
*not* retried: a cell that raises (recorded as an error row, since a solver bug would
fail again), and the sweep process itself — if it is killed, rerun the same command:
finished cells are on disk and only the missing ones run.

**Interrupts.** The result files (``results.csv``, ``results.parquet``, ``summary.md``, the
plot) are written into a staging folder and moved into ``DIR`` as one set
(:func:`placement.io.staged_folder`): an interrupt leaves the earlier set or the new one,
never a mixture. ``DIR/cells/`` is the resume store and keeps every cell that finished.

**Determinism.** Every cell is seeded and the exact models run single-threaded, so the
same spec gives the same rows serially, on a LocalCluster or resumed, apart from wall
times and time-based statistics, as long as no cell stops at its time limit (a time limit
cuts work at a wall-clock moment).
"""

from __future__ import annotations

import argparse

from ...errors import InstanceError
from ...io import check_output_folder, write_json
from .run import compare_serial, run_cell, run_sweep
from .spec import MAX_CELLS, cell_key, expand_cells, load_spec, validate_cells

__all__ = ["add_parser", "cmd_sweep", "load_spec", "expand_cells", "validate_cells", "run_cell", "run_sweep",
           "cell_key", "compare_serial", "MAX_CELLS"]


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help="run a grid of solves or simulations (Dask; resumable)")
    p.add_argument("spec", help="sweep spec (YAML or JSON)")
    p.add_argument("-o", "--output", default="sweep-results", help="output folder (default: sweep-results)")
    p.add_argument("--scheduler", default=None, help="address of a running Dask scheduler (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes; 0 = serial, no Dask")
    p.add_argument("--compare-serial", action="store_true",
                   help="benchmark: run the grid serially and on the LocalCluster side by side (fresh folders)")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.workers < 0 or args.workers > 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    out = check_output_folder(args.output, "-o", ("results.csv", "results.parquet", "summary.md", "speedup.json",
                                                  "metric_vs_cluster.png", "gap_vs_size.png"))
    if (out / "cells").exists() and not (out / "cells").is_dir():
        raise InstanceError("-o", f"{str(out / 'cells')!r} is a file where the finished cells go")
    spec = load_spec(args.spec)
    if args.compare_serial:
        if args.workers < 1 or args.scheduler:
            raise InstanceError("--compare-serial", "needs a LocalCluster (--workers N >= 1, no --scheduler)")
        cmp_ = compare_serial(spec, out, workers=args.workers)
        write_json(out / "speedup.json", cmp_)
        print(f"{cmp_['cells']} cells: serial {cmp_['serial_s']:.2f} s, {args.workers} workers "
              f"{cmp_['cluster_s']:.2f} s, speed-up {cmp_['speedup']:.2f}x, scheduler overhead "
              f"{1000 * cmp_['overhead_per_task_s']:.0f} ms per cell, rows equal: {cmp_['rows_equal']}")
        return 0
    stats = run_sweep(spec, out, workers=args.workers, scheduler=args.scheduler)
    errors = sum(r.get("status") == "error" for r in stats["rows"])
    print(f"{stats['cells']} cells: {stats['ran']} ran, {stats['cached']} from earlier runs, {errors} errors "
          f"({stats['elapsed_s']:.1f} s)")
    print((out / "summary.md").read_text().rstrip())
    print(f"wrote {', '.join(str(out / f) for f in stats['files'])}")
    return 0
