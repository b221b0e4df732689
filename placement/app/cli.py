"""The ``placement`` command line (app layer).

Commands: ``generate``, ``solve``, ``evaluate``, ``bench`` (:mod:`.commands`), ``sweep``
(:mod:`.sweep`), ``reproduce`` (:mod:`.reproduce`), ``export`` (:mod:`.export`), plus what problem families add through :attr:`ProblemSpec.add_commands`
(``simulate``, ``check-cells``). Bad input prints one line ``error: <field>: <what is wrong>``
and exits with code 2; nothing is written.

Interrupts (``Ctrl-C``): every command stages its outputs and puts them in place as one set
(:func:`placement.io.commit`). An interrupt before that leaves everything as it was and
exits 130 with the one line ``error: interrupted``; once the outputs are in place the
command has succeeded: an interrupt then only cuts what it still prints (exit 0, one
``note:`` line). The command modules are imported inside :func:`main`, so an interrupt
while they load is handled the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import sys

from ..errors import InstanceError

__all__ = ["main", "build_parser", "load_instance_file"]


def load_instance_file(path: str):
    """Load and validate an instance file of any registered family: ``(spec, instance)``."""
    from .commands import load_instance_file as load

    return load(path)


# The command main() is about to run (its first argument), while it builds the parser.
_RUNNING: contextvars.ContextVar[str | None] = contextvars.ContextVar("placement_cli_command", default=None)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command.

    While :func:`main` runs one of the commands of :func:`.commands.base_parser` (``generate``,
    ``solve``, ``evaluate``, ``bench``, ``simulate``, ``check-cells``), ``sweep``, ``reproduce``
    and ``export`` are left out: ``reproduce``'s parser lists the reproductions, whose modules
    import the simulator's link model and networkx, a fifth of a second of every start. Any other
    first argument (``--help``, a misspelt command, none) gets the whole parser.
    """
    from .commands import base_parser

    parser, sub = base_parser(__doc__.splitlines()[0])
    if _RUNNING.get() in sub.choices:
        return parser
    from .export import add_parser as add_export
    from .reproduce import add_parser as add_reproduce
    from .sweep import add_parser as add_sweep

    add_sweep(sub)
    add_reproduce(sub)
    add_export(sub)
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
    """Run one command; returns its exit code. As the process's entry point (``argv`` None) an
    interrupt after the command has returned is ignored: the interpreter's teardown (flushes,
    exit handlers) ends with the code the command gave, never by the default SIGINT handler."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # one that lands as the command returns
        from ..io import outputs_committed

        return 0 if outputs_committed() else 130
    finally:
        if argv is None:
            _hold_interrupts()


def _main(argv: list[str] | None) -> int:
    if not isinstance(sys.stdout, _PipeSafeStream) and sys.stdout is not None:
        sys.stdout = _PipeSafeStream(sys.stdout)
    held: list = []
    try:
        from ..io import outputs_committed, reset_commit
    except KeyboardInterrupt:  # while the core loads: nothing was written
        print("error: interrupted", file=sys.stderr)
        return 130
    reset_commit()
    args_ = sys.argv[1:] if argv is None else argv
    if list(args_) == ["--version"]:   # answered before the families' modules load
        from .run import package_version

        print(f"placement {package_version()}")
        return 0
    try:
        try:
            token = _RUNNING.set(args_[0] if args_ and not args_[0].startswith("-") else None)
            try:
                parser = build_parser()
            finally:
                _RUNNING.reset(token)
            args = parser.parse_args(argv)
            return int(args.func(args) or 0)
        except InstanceError as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            held.append(_hold_interrupts())  # one line, not a traceback from a second Ctrl-C
            if outputs_committed():
                print("note: interrupted after the outputs were in place; they are complete", file=sys.stderr)
                return 0
            print("error: interrupted", file=sys.stderr)
            return 130
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
    except KeyboardInterrupt:  # a second interrupt while the first was reported
        return 0 if outputs_committed() else 130
    finally:
        if held and held[0] is not None:  # in-process callers (tests) get their handler back
            import signal

            signal.signal(signal.SIGINT, held[0])


def _hold_interrupts():
    """Ignore ``SIGINT`` from now on (main thread only); returns the handler it replaced."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            return signal.signal(signal.SIGINT, signal.SIG_IGN)
    return None


if __name__ == "__main__":
    sys.exit(main())
