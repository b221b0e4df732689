"""What a benchmark ran on: solver versions, CPU, the package's commit, the date (MIPLIB's reporting).

Every library row and every ``bench --library`` report carries this record, so a time or a
value can be traced to the software and machine that produced it.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import subprocess
from functools import lru_cache
from pathlib import Path

__all__ = ["environment", "environment_line", "commit_id", "today"]


def today() -> str:
    """The UTC date, ``YYYY-MM-DD``."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


@lru_cache(maxsize=1)
def commit_id() -> str:
    """The package checkout's git commit (12 hex digits, ``+dirty`` with uncommitted changes), or
    ``unknown`` outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=10)
        if sha.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return re.sub(r"\s+", " ", line.split(":", 1)[1]).strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """Solver versions (HiGHS, SCIP, CBC, Pyomo, PuLP), Python, CPU model and count, OS."""
    from placement.models import backends

    env = {"python": platform.python_version(), "os": f"{platform.system()} {platform.release()}",
           "cpu": _cpu_model(), "cpus": str(os.cpu_count())}
    try:
        import highspy

        env["highs"] = highspy.Highs().version()
    except Exception:  # noqa: BLE001 - a missing or broken solver is recorded as absent
        env["highs"] = "absent"
    try:
        import pyscipopt

        env["scip"] = f"{pyscipopt.Model().version()} (PySCIPOpt {pyscipopt.__version__})"
    except Exception:  # noqa: BLE001
        env["scip"] = "absent"
    cbc = backends.cbc_path()
    env["cbc"] = "absent"
    if cbc:
        try:
            out = subprocess.run([cbc, "-quit"], capture_output=True, text=True, timeout=20).stdout
            m = re.search(r"Version:\s*(\S+)", out)
            env["cbc"] = m.group(1) if m else "unknown"
        except (OSError, subprocess.SubprocessError):
            env["cbc"] = "unknown"
    for mod in ("pyomo", "pulp"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            env[mod] = "absent"
    return env


def environment_line() -> str:
    """:func:`environment` on one line (``key=value; ...``), for CSV cells and report headers."""
    return "; ".join(f"{k}={v}" for k, v in environment().items())
