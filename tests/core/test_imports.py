"""The package's house, checked by walking its imports: one name, one way, no circle.

**One name.** The folders ``models/``, ``solvers/`` and ``instances/`` stay at the top of the
repository but install as ``placement.models``, ``placement.solvers`` and
``placement.instances`` (``pyproject.toml``, ``[tool.setuptools.package-dir]``), so a user's own
``models.py`` never shadows ours: :func:`test_a_users_own_models_py_shadows_nothing` runs
``placement.solve`` and ``placement.simulate`` from a folder holding ``models.py``,
``solvers.py`` and ``instances.py``.

**The graph.** Every ``import`` statement of the package, read with :mod:`ast` -- at module
level *and inside functions* (a lazy import still runs, so it is still an arrow) -- and every
``importlib.import_module("literal")`` call, relative imports resolved, is an arrow from the
importing module to the imported one. Only imports under ``if TYPE_CHECKING:`` are left out:
they never run. A submodule's import runs its package's ``__init__`` first; that is Python's
order of loading, not an arrow, and is not counted.

**The order**, bottom to top (:data:`LAYERS`): a module imports its own layer and the layers
below it, never one above (:data:`NEVER` adds the pairs the order alone would allow but the
design forbids: generators never load models or solvers, and the reverse). The face
(``placement.app.api``) is near the top: the command line may call it; nothing below may.
``placement/__init__.py`` re-exports the face by name on first use (its one
``importlib.import_module``), so it is the top layer, and no module imports it back.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]


def _package_dirs(root: Path) -> dict[str, Path]:
    """Import name -> folder of each root of the install (``placement`` and what
    ``[tool.setuptools.package-dir]`` maps), read from ``pyproject.toml``."""
    conf = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {"placement": root / "placement"}
    dirs.update({name: root / folder for name, folder in conf.get("package-dir", {}).items()})
    return dirs


def _modules(root: Path | None = None) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (a package is its ``__init__``)."""
    root = ROOT if root is None else root
    out = {}
    for name, folder in _package_dirs(root).items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([name, *parts])] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules (``a.b.func`` -> ``a.b``)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in modules:
            return cand
    return None


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under an ``if TYPE_CHECKING:`` (they never run)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            out.update(id(c) for b in n.body for c in ast.walk(b) if isinstance(c, ast.Import | ast.ImportFrom))
    return out


def _import_module_literal(node: ast.AST) -> str | None:
    """``importlib.import_module("x.y")`` / ``import_module("x.y")`` -> ``"x.y"``."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return node.args[0].value if name == "import_module" else None


def _edges(modules: dict[str, Path]):
    """(importer, imported, line) for every import of one of our modules that can run."""
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            targets: list[str] = []
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # `from pkg import sub` imports the submodule when `sub` is one
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix
                           for a in node.names]
            elif (lit := _import_module_literal(node)) is not None:
                targets = [lit]
            for t in targets:
                r = _resolve(t, modules)
                if r is not None and r != mod:
                    yield mod, r, node.lineno


# Bottom to top. A prefix names a module and everything below it; a name ending in "=" only that
# module (the package's __init__).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("placement.errors", "placement.result", "placement.io", "placement.validate",
              "placement.options", "placement.registry")),
    ("families", ("placement.tetris", "placement.cassini", "placement.hived")),
    ("simulator", ("placement.sim",)),
    ("models", ("placement.models",)),
    ("solvers", ("placement.solvers",)),
    ("instances", ("placement.instances",)),
    # the app: helpers, then the run module (one simulation run and its files; solving by name),
    # the commands and their family adapters and bench sections, sweeps, reproductions, the face,
    # the command line's entry, and the package's front door
    ("app helpers", ("placement.app=", "placement.app.options", "placement.app.report",
                     "placement.app.shipped", "placement.app.policy_data")),
    ("run", ("placement.app.run", "placement.app.solving")),
    ("commands", ("placement.app.commands", "placement.app.simulate", "placement.app.families",
                  "placement.app.bench", "placement.app.export", "placement.app.pages")),
    ("sweep", ("placement.app.sweep",)),
    ("reproduce", ("placement.app.reproduce",)),
    ("face", ("placement.app.api", "placement.app.library_api")),
    ("command line", ("placement.app.cli",)),
    ("front door", ("placement=",)),
]
NEVER = {("instances", "models"), ("instances", "solvers")}
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def _layer(mod: str) -> str:
    best, length = None, -1
    for name, prefixes in LAYERS:
        for p in prefixes:
            hit = mod == p[:-1] if p.endswith("=") else (mod == p or mod.startswith(p + "."))
            if hit and len(p) > length:
                best, length = name, len(p)
    assert best is not None, f"{mod} is in no layer of LAYERS: place it"
    return best


def _wrong_arrows(edges) -> list[str]:
    out = []
    for a, b, line in edges:
        la, lb = _layer(a), _layer(b)
        if RANK[lb] > RANK[la] or (la, lb) in NEVER:
            out.append(f"{a} ({la}) -> {b} ({lb}), line {line}")
    return out


def _cycles(edges) -> list[list[str]]:
    graph = nx.DiGraph((a, b) for a, b, _ in edges)
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_no_import_circle_and_no_arrow_back_up():
    modules = _modules()
    assert "placement.sim.engine" in modules and "placement.solvers.online.fifo" in modules
    assert "placement.models.tetris" in modules and "placement.instances.traces" in modules
    edges = list(_edges(modules))
    assert any(a == "placement.app.cli" for a, *_ in edges)  # the walk sees imports at all
    assert ("placement", "placement.app.api") in {(a, b) for a, b, _ in edges}  # and importlib's
    for mod in modules:
        _layer(mod)
    cycles = _cycles(edges)
    assert not cycles, "import circles (lazy imports count): " + "; ".join(" <-> ".join(c) for c in cycles)
    wrong = _wrong_arrows(edges)
    assert not wrong, "imports against the order of LAYERS: " + "; ".join(wrong)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.package-dir]\n"placement.models" = "models"\n')
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return tmp_path


def test_the_walk_catches_a_lazy_circle_an_importlib_circle_and_a_wrong_arrow(tmp_path):
    # a throwaway tree: a circle closed only inside a function, one closed by importlib, and a
    # core module importing the app lazily (the mapped folder models/ is placement.models)
    root = _tree(tmp_path, {
        "placement/__init__.py": "",
        "placement/sim/__init__.py": "",
        "placement/sim/a.py": "from . import b\n",
        "placement/sim/b.py": "def f():\n    from .a import x\n",
        "placement/sim/c.py": "import importlib\n\ndef g():\n    importlib.import_module('placement.sim.d')\n",
        "placement/sim/d.py": "from placement.sim import c\n",
        "placement/errors.py": "def f():\n    from .app import cli\n",
        "placement/app/__init__.py": "",
        "placement/app/cli.py": "from placement.models.m import y\n",
        "models/__init__.py": "",
        "models/m.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from placement.app import cli\n",
    })
    modules = _modules(root)
    assert "placement.models.m" in modules and "placement.sim.a" in modules
    edges = list(_edges(modules))
    assert sorted(_cycles(edges)) == [["placement.sim.a", "placement.sim.b"], ["placement.sim.c", "placement.sim.d"]]
    assert [w.split(",")[0] for w in _wrong_arrows(edges)] == ["placement.errors (core) -> placement.app.cli (command line)"]
    # the TYPE_CHECKING import never runs: no arrow models.m -> app.cli
    assert not any(a == "placement.models.m" for a, *_ in edges)


def test_the_package_list_is_every_folder_with_an_init():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = {name for name, path in _modules().items() if path.name == "__init__.py"}
    assert listed == found
    assert all(p == "placement" or p.startswith("placement.") for p in listed)  # one import name


def test_importing_the_core_loads_no_solver_model_instance_or_app_module():
    code = """
import importlib, json, pkgutil, sys
import placement

def walk(pkg):
    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        if info.name in ("placement.app", "placement.models", "placement.solvers", "placement.instances"):
            continue
        mod = importlib.import_module(info.name)
        if info.ispkg:
            walk(mod)

walk(placement)
print(json.dumps(sorted(sys.modules)))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert "placement.sim.engine" in loaded and "placement.tetris.evaluation" in loaded
    above = ("placement.solvers", "placement.models", "placement.instances", "placement.app")
    bad = [m for m in loaded if any(m == p or m.startswith(p + ".") for p in above)
           or m.split(".")[0] in ("solvers", "models", "instances")]
    assert bad == []


def test_a_users_own_models_py_shadows_nothing(tmp_path):
    # a notebook folder with its own models.py, solvers.py and instances.py, first on sys.path
    for name in ("models", "solvers", "instances"):
        (tmp_path / f"{name}.py").write_text(f"MINE = {name!r}\n")
    code = """
import models, solvers, instances, placement
from placement.instances import generate_tetris
assert (models.MINE, solvers.MINE, instances.MINE) == ("models", "solvers", "instances")
inst = generate_tetris(6, 10, 3, seed=1)
exact = placement.solve(inst, time_limit=60)
hc = placement.solve(inst, solver="hill-climb", seed=0)
assert str(exact.status) == "optimal" and hc.objective >= exact.objective - 1e-6 * abs(exact.objective)
run = placement.simulate("philly", cluster="1x1x2x4x8", policy="fifo", start=1200, hours=1)
assert len(run.jobs) > 0 and run.violations == []
import sys
print(sorted(m for m in sys.modules if m.split(".")[0] in ("models", "solvers", "instances")))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["['instances',", "'models',", "'solvers']"]  # the user's three, nothing of ours
