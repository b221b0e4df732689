"""Every command in the README and the reference pages runs as written.

The ```bash blocks of ``README.md``, ``instances/README.md`` and every page under ``placement/``
(its ``README.md`` files and the pages beside them, such as ``placement/tetris/BOUNDS.md``) are read line by line; each page's commands run in order (later ones read what
earlier ones wrote) in a fresh folder where ``instances/`` is the repository's, with the
installed ``placement`` on the path. A command must exit 0, or the code a trailing ``# exit N``
states (a plain ``placement ...`` runs as its console script in a child of a preloaded fork server,
anything with shell syntax through ``sh -c``). Not run: the set-up block (it installs the package), ``placement bench`` without
``--quick`` (minutes; CI's bench is command 1 of the README), the figures and fidelity updaters
(they need full bench or reproduction runs), ``--compare-serial`` and ``--scheduler`` sweeps (a benchmark and a remote
cluster), and a command whose comment starts with ``slow`` (it runs on another page too, or, for
a paper's ``placement reproduce --quick``, its own tests run it in a tiny configuration). A
simulation sweep a page runs must show its policies differing. The ```python blocks run too,
the Tetris file format example is solved and evaluated as its page says, and the links,
in-page anchors and repository paths the pages name must exist.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import run_placement

ROOT = Path(__file__).resolve().parents[2]
# every page under placement/ (README.md and the second pages beside one), not the measured fragments
PAGES = [ROOT / "README.md", ROOT / "instances" / "README.md",
         *sorted(p for p in (ROOT / "placement").rglob("*.md") if p.parent.name != "measured")]
# A word with one of these needs the shell (operators, redirections, globs, variables): such a command
# runs through ``sh -c``; a plain ``placement ...`` runs as its console script in a child forked from a
# preloaded server (tests.support.run_placement: the same ``main`` and exit code, ~0.45 s less a command).
SHELL = re.compile(r"[|&;<>$`*?\[\]{}~]")
SKIP = ("pip install", "--compare-serial", "--scheduler", "python -m placement.app.report",
        "python -m placement.app.reproduce.fidelity")


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
    if re.search(r"#\s*slow\b", cmd):
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
        words = shlex.split(cmd, comments=True)
        if words[0] == "placement" and not any(SHELL.search(w) for w in words):
            code, _, stderr = run_placement(words[1:], tmp_path, env, timeout=600)
        else:
            r = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            code, stderr = r.returncode, r.stderr
        if code != _expected(cmd):
            failures.append(f"{cmd!r}: exit {code}, stderr {stderr.strip()[-300:]!r}")
    return failures + _same_results_for_every_policy(tmp_path)


def _same_results_for_every_policy(folder: Path) -> list[str]:
    """Simulation sweeps the page ran: in every (trace, cluster, seed) cell group jobs must wait
    and every policy must give its own mean JCT, else the example shows nothing (on a thin window
    FIFO, Dally and Tiresias give identical logs)."""
    out = []
    for csv_path in folder.glob("*/results.csv"):
        with open(csv_path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("kind") == "simulate" and r.get("status") == "ok"]
        groups: dict[tuple, dict[str, str]] = {}
        for r in rows:
            groups.setdefault((r["trace"], r["cluster"], r["seed"]), {})[r["policy"]] = r
        for key, by_policy in groups.items():
            jcts = {p: r["mean_jct_s"] for p, r in by_policy.items()}
            if len(set(jcts.values())) < len(jcts):
                out.append(f"{csv_path.parent.name} {key}: policies share a mean JCT: {jcts}")
            if all(float(r["mean_queueing_delay_s"]) == 0 for r in by_policy.values()):
                out.append(f"{csv_path.parent.name} {key}: no job waits under any policy")
    return out


def _bare(cmd: str) -> str:
    return shlex.join(shlex.split(cmd, comments=True))


def test_every_page_has_commands_and_the_rule_keeps_most_of_them():
    """At least 75% of the pages' commands run; a command left out on one page because the same
    command runs on another ("# slow: also run from the README") counts as run only when its twin
    really runs."""
    cmds = [c for p in PAGES for c in _commands(p)]
    assert len(PAGES) >= 6 and len(cmds) >= 30
    ran = {_bare(c) for c in cmds if _runs(c)}
    exercised = [c for c in cmds if _bare(c) in ran]
    assert len(exercised) >= 0.75 * len(cmds), [c for c in cmds if _bare(c) not in ran]
    twins = [c for c in cmds if not _runs(c) and "also run from" in c]
    assert all(_bare(c) in ran for c in twins), [c for c in twins if _bare(c) not in ran]


# the README's simulation sweep takes about 30 s, the other pages 5-25 s each
@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p == ROOT / "README.md" else p
                                  for p in PAGES], ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_commands_run_as_written(page, tmp_path):
    assert _run_page(page, tmp_path) == []


def test_paths_the_pages_name_exist():
    missing = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"`((?:placement|solvers|models|instances|tests|notebooks)/[\w./<>-]*)`", text):
            path = m.group(1).split("<")[0].rstrip("/.")
            if re.search(r"(?<![A-Za-z0-9])(foo|bar)(?![A-Za-z0-9])", path):  # "how to add" examples name new files (foo_spec.py)
                continue
            if "*" not in path and not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {m.group(1)}")
        for m in re.finditer(r"\]\(([^)#]+)\)", text):
            target = m.group(1)
            if not target.startswith("http") and not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)}: link {target}")
    assert missing == []


def test_python_blocks_run():
    blocks = [(p, b) for p in PAGES for b in re.findall(r"```python\n(.*?)```", p.read_text(), re.S)]
    assert blocks
    for page, code in blocks:
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{page.relative_to(ROOT)}: {r.stderr.strip()[-500:]}"


def test_tetris_file_format_example_is_feasible_as_the_page_says(tmp_path):
    """The instance and solution of the Tetris page: solve finds the optimum, the solution has no
    violation, and a home threshold above the 40 high-priority GPU-hours is infeasible by (6)."""
    text = (ROOT / "placement" / "tetris" / "README.md").read_text()
    docs = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S)]
    inst = next(d for d in docs if "regions" in d)
    sol = next(d for d in docs if "home" in d and "regions" not in d)
    (tmp_path / "ex.json").write_text(json.dumps(inst))
    (tmp_path / "sol.json").write_text(json.dumps(sol))
    (tmp_path / "ex41.json").write_text(json.dumps({**inst, "home_threshold": 41}))
    exe = Path(sys.executable).parent / "placement"

    def run(*args):
        return subprocess.run([str(exe), *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)

    r = run("solve", "ex.json", "-o", "out.json")
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["status"] == "optimal" and out["violations"] == []
    assert out["solution"]["home"] == sol["home"]
    r = run("evaluate", "ex.json", "sol.json")
    assert r.returncode == 0 and "violations: none" in r.stdout, r.stdout + r.stderr
    r = run("solve", "ex41.json")
    assert r.returncode == 0 and "infeasible" in r.stdout and "(6)" in r.stdout, r.stdout


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_the_pages_link_exist():
    missing = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"\]\(([^)#\s]*)#([^)\s]+)\)", text):
            target = (page.parent / m.group(1)) if m.group(1) else page
            heads = {_slug(h) for h in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", target.read_text(), flags=re.S), re.M)}
            if m.group(2) not in heads:
                missing.append(f"{page.relative_to(ROOT)}: #{m.group(2)}")
    assert missing == []


def test_trace_csv_example_loads_and_round_trips(tmp_path):
    from placement.sim.trace import load_trace_csv, trace_to_csv

    text = (ROOT / "placement" / "sim" / "README.md").read_text()
    example = re.search(r"```\n(# placement-trace v1\n.*?)```", text, re.S).group(1)
    (tmp_path / "t.csv").write_text(example)
    trace = load_trace_csv(tmp_path / "t.csv")
    assert [(j.id, j.gpus, j.gpu_type) for j in trace.jobs] == [("j0", 8, "V100")]
    (tmp_path / "t2.csv").write_text(trace_to_csv(trace))
    assert trace_to_csv(load_trace_csv(tmp_path / "t2.csv")) == trace_to_csv(trace)
