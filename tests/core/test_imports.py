"""The package's layering, checked by walking its imports.

Imports run one way: core (``placement`` outside ``placement.app``) -> ``models`` / ``solvers``
-> the app. Two checks:

- importing the core (``placement`` and every module under it outside ``placement.app``) in a
  fresh interpreter loads no module of ``solvers``, ``models``, ``instances`` or
  ``placement.app``;
- every ``import`` statement under ``placement/``, ``solvers/``, ``models/`` and ``instances/``,
  read with :mod:`ast` (module level and inside functions, relative imports resolved), forms a
  graph with no cycle among module-level imports, and no arrow of any kind against the layering.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("placement", "solvers", "models", "instances")


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of the four packages (a package is its __init__)."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules (``a.b.func`` -> ``a.b``)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in modules:
            return cand
    return None


def _edges(modules: dict[str, Path]):
    """(importer, imported, module_level, line) for every import of one of our modules."""
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        # imports under `if TYPE_CHECKING:` at module level are not executed: lazy, like a function's
        top_level = set()
        for n in tree.body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                top_level.add(id(n))
            elif isinstance(n, (ast.Try, ast.If)) and not (
                    isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)):
                top_level.update(id(c) for c in ast.walk(n) if isinstance(c, (ast.Import, ast.ImportFrom)))
        for node in ast.walk(tree):
            targets: list[str] = []
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
            for t in targets:
                r = _resolve(t, modules)
                if r is not None and r != mod:
                    yield mod, r, id(node) in top_level, node.lineno


def _layer(mod: str) -> str:
    if mod == "placement.app" or mod.startswith("placement.app."):
        return "app"
    return mod.split(".")[0]  # placement (core), solvers, models, instances


# layer -> layers it must never import (lazily or not)
FORBIDDEN = {
    "placement": {"solvers", "models", "instances", "app"},
    "models": {"solvers", "app"},
    "solvers": {"app"},
    "instances": {"app"},
}


def test_no_import_cycles_and_imports_run_one_way():
    modules = _modules()
    assert "placement.sim.engine" in modules and "solvers.online.fifo" in modules
    edges = list(_edges(modules))
    assert any(a == "placement.app.cli" for a, *_ in edges)  # the walk sees imports at all
    graph = nx.DiGraph((a, b) for a, b, top, _ in edges if top)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "module-level import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles)
    wrong = [f"{a} -> {b} (line {line})" for a, b, _, line in edges
             if _layer(b) in FORBIDDEN.get(_layer(a), set())]
    assert not wrong, "imports against the layering: " + "; ".join(wrong)


def test_the_walk_catches_a_cycle_and_a_wrong_arrow(tmp_path, monkeypatch):
    # the checker itself, on a throwaway tree: a core module importing the app lazily, a cycle
    for pkg, files in {"placement": {"__init__.py": "", "a.py": "from . import b\n",
                                     "b.py": "from .a import x\n\ndef f():\n    from .app import cli\n"},
                       "placement/app": {"__init__.py": "", "cli.py": ""},
                       "solvers": {"__init__.py": ""}, "models": {"__init__.py": ""},
                       "instances": {"__init__.py": ""}}.items():
        (tmp_path / pkg).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (tmp_path / pkg / name).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    modules = _modules()
    edges = list(_edges(modules))
    graph = nx.DiGraph((a, b) for a, b, top, _ in edges if top)
    assert sorted(map(sorted, nx.simple_cycles(graph))) == [["placement.a", "placement.b"]]
    assert [(a, b, top) for a, b, top, _ in edges if _layer(b) == "app" and _layer(a) != "app"] == [
        ("placement.b", "placement.app.cli", False)]


def test_importing_the_core_loads_no_solver_model_instance_or_app_module():
    code = """
import importlib, json, pkgutil, sys
import placement

def walk(pkg):
    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        if info.name == "placement.app":
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
    bad = [m for m in loaded if m.split(".")[0] in ("solvers", "models", "instances")
           or m == "placement.app" or m.startswith("placement.app.")]
    assert bad == []
