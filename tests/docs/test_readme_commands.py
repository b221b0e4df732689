"""Every command in the README and the reference pages runs as written.

The ```bash blocks of ``README.md`` and of every ``README.md`` under ``placement/`` are read
line by line; each page's commands run in order (later ones read what earlier ones wrote) in
a fresh folder where ``instances/`` is the repository's, with the installed ``placement`` on
the path. A command must exit 0, or the code a trailing ``# exit N`` states. Not run: the
set-up block (it installs the package), ``placement bench`` without ``--quick`` (minutes; CI's
bench is command 1 of the README), the figures updater (it needs a full bench run),
``--compare-serial`` and ``--scheduler`` sweeps (a benchmark and a remote cluster). Links and
repository paths the pages name must exist.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "placement").rglob("README.md"))]
SKIP = ("pip install", "--compare-serial", "--scheduler", "python -m placement.app.report")


def _commands(page: Path) -> list[str]:
    out = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
        for line in block.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line.strip())
    return out


def _runs(cmd: str) -> bool:
    if any(s in cmd for s in SKIP):
        return False
    words = shlex.split(cmd, comments=True)
    return not (words[:2] == ["placement", "bench"] and "--quick" not in words)


def _expected(cmd: str) -> int:
    m = re.search(r"#.*\bexit (\d+)\s*$", cmd)
    return int(m.group(1)) if m else 0


def _run_page(page: Path, tmp_path: Path) -> list[str]:
    (tmp_path / "instances").symlink_to(ROOT / "instances")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    failures = []
    for cmd in _commands(page):
        if not _runs(cmd):
            continue
        r = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        if r.returncode != _expected(cmd):
            failures.append(f"{cmd!r}: exit {r.returncode}, stderr {r.stderr.strip()[-300:]!r}")
    return failures


def test_every_page_has_commands_and_the_rule_keeps_most_of_them():
    cmds = [c for p in PAGES for c in _commands(p)]
    assert len(PAGES) >= 6 and len(cmds) >= 30
    ran = [c for c in cmds if _runs(c)]
    assert len(ran) >= 0.75 * len(cmds), [c for c in cmds if not _runs(c)]


# the app page's Tetris sweep starts a Dask LocalCluster (about a minute on 2 cores)
@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p.parent.name == "app" else p
                                  for p in PAGES], ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_commands_run_as_written(page, tmp_path):
    assert _run_page(page, tmp_path) == []


def test_paths_the_pages_name_exist():
    missing = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"`((?:placement|solvers|models|instances|tests|notebooks)/[\w./<>-]*)`", text):
            path = m.group(1).split("<")[0].rstrip("/.")
            if re.search(r"\b(foo|bar)\b", path):  # the "how to add" examples name new files
                continue
            if "*" not in path and not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {m.group(1)}")
        for m in re.finditer(r"\]\(([^)#]+)\)", text):
            target = m.group(1)
            if not target.startswith("http") and not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)}: link {target}")
    assert missing == []
