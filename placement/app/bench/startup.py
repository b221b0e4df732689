"""How long the command line takes to start, as a ratio against the bare interpreter.

``python -m placement.app.bench.startup [--repeats N] [COMMAND ...]`` runs, N times side by
side in one process tree, ``python -c pass`` and the ``placement`` command (by default
``placement generate tetris -o OUT``, the smallest command that loads the registry, parses its
arguments and writes a file) and prints the median wall time of each and their ratio. The two
run alternately, so a machine's changing load falls on both; the ratio, not the absolute time, is
what compares across machines. The absolute median is printed beside it for the target a user
sees (a start under 0.6 s).

The command runs in a fresh temporary folder (``OUT`` there is ``x.json``), through the console
script installed beside the interpreter (``placement``), or ``python -m placement.app.cli`` when
there is none.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StartupTimes", "startup_ratio", "main", "DEFAULT_COMMAND"]

DEFAULT_COMMAND = ("generate", "tetris", "-o", "x.json")
MAX_REPEATS = 100


@dataclass(frozen=True)
class StartupTimes:
    """Wall times (s) of each repeat, the bare interpreter's and the command's, in run order."""

    command: tuple[str, ...]
    python_s: tuple[float, ...]
    placement_s: tuple[float, ...]

    @property
    def python_median_s(self) -> float:
        return statistics.median(self.python_s)

    @property
    def placement_median_s(self) -> float:
        return statistics.median(self.placement_s)

    @property
    def ratio(self) -> float:
        """Median command time over median bare-interpreter time."""
        return self.placement_median_s / self.python_median_s

    def lines(self) -> list[str]:
        """The result as printed: the two medians, the ratio and the spread over repeats."""
        cmd = " ".join(("placement", *self.command))
        return [f"{len(self.python_s)} repeats, side by side, medians:",
                f"  python -c pass   {self.python_median_s:.3f} s "
                f"(min {min(self.python_s):.3f}, max {max(self.python_s):.3f})",
                f"  {cmd}   {self.placement_median_s:.3f} s "
                f"(min {min(self.placement_s):.3f}, max {max(self.placement_s):.3f})",
                f"  ratio {self.ratio:.1f}x the bare interpreter"]


def _placement_argv() -> list[str]:
    script = Path(sys.executable).with_name("placement")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "placement.app.cli"]


def _wall(argv: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return elapsed


def startup_ratio(command: tuple[str, ...] = DEFAULT_COMMAND, repeats: int = 7) -> StartupTimes:
    """Run ``python -c pass`` and ``placement COMMAND`` alternately ``repeats`` times (after one
    unmeasured run of each, which fills the file cache) and return the wall times.

    Each run of the command gets a fresh temporary folder as its working directory, so ``-o x.json``
    never meets an existing file. Raises ``ValueError`` for a repeat count outside 1..100 and
    ``RuntimeError`` when the command fails.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"repeats: must be an integer in 1..{MAX_REPEATS}, got {repeats!r}")
    bare = [sys.executable, "-c", "pass"]
    cmd = [*_placement_argv(), *command]
    py, pl = [], []
    for i in range(repeats + 1):
        folder = tempfile.mkdtemp(prefix="placement-startup-")
        try:
            a, b = _wall(bare, folder), _wall(cmd, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if i:   # the first pair warms the file cache
            py.append(a)
            pl.append(b)
    return StartupTimes(tuple(command), tuple(py), tuple(pl))


def main(argv: list[str] | None = None) -> int:
    """``python -m placement.app.bench.startup``: print the side-by-side medians and the ratio."""
    p = argparse.ArgumentParser(prog="python -m placement.app.bench.startup",
                                description="placement's start time against python -c pass, side by side")
    p.add_argument("--repeats", type=int, default=7, help=f"measured pairs, 1..{MAX_REPEATS} (default 7)")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="the placement command to time (default: generate tetris -o x.json)")
    args = p.parse_args(argv)
    try:
        times = startup_ratio(tuple(args.command) or DEFAULT_COMMAND, args.repeats)
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(times.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
