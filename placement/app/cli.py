"""The ``placement`` command line (app layer).

Commands: ``generate``, ``solve``, ``evaluate``, ``bench`` (:mod:`.commands`), ``sweep``
(:mod:`.sweep`), ``reproduce`` (:mod:`.reproduce`), plus what problem families add through :attr:`ProblemSpec.add_commands`
(``simulate``, ``check-cells``). Bad input prints one line ``error: <field>: <what is wrong>``
and exits with code 2; nothing is written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from ..errors import InstanceError
from .commands import base_parser, load_instance_file
from .reproduce import add_parser as add_reproduce
from .sweep import add_parser as add_sweep

__all__ = ["main", "build_parser", "load_instance_file"]


def build_parser() -> argparse.ArgumentParser:
    parser, sub = base_parser(__doc__.splitlines()[0])
    add_sweep(sub)
    add_reproduce(sub)
    return parser


class _PipeSafeStream:
    """Standard output that outlives its reader.

    When the reader leaves (``placement solve ... | head -1``), the next write or
    flush raises ``BrokenPipeError``; from then on output goes to ``/dev/null`` and
    the command carries on, so files it promised (``-o``, bench results) are still
    written and the exit code is the command's own.
    """

    def __init__(self, stream):
        self._stream = stream
        self._gone = False

    def _leave(self) -> None:
        self._gone = True
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError):
            pass

    def write(self, text):
        if self._gone:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._leave()
            return len(text)

    def flush(self):
        if self._gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._leave()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    if not isinstance(sys.stdout, _PipeSafeStream) and sys.stdout is not None:
        sys.stdout = _PipeSafeStream(sys.stdout)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except InstanceError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
