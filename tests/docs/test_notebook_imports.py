"""Notebooks use the package's public face only.

No notebook imports ``placement.app`` (the command line's internals: bench helpers, adapters,
the policy-data builder); each opens with the lines a user would type, starting with
``import placement`` and a call of one of its public functions (``placement.simulate``,
``placement.solve``, ``placement.sweep``, ``placement.reproduce``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
APP_IMPORT = re.compile(r"^\s*(from\s+placement\.app\b|import\s+placement\.app\b|from\s+placement\s+import\s+.*\bapp\b)"
                        r"|\bimportlib\.import_module\(\s*['\"]placement\.app", re.M)
PUBLIC_CALL = re.compile(r"\bplacement\.(simulate|solve|sweep|reproduce|bench|export)\(")


def app_imports(source: str) -> list[str]:
    return [m.group(0).strip() for m in APP_IMPORT.finditer(source)]


def test_the_detector_sees_every_form_of_app_import():
    assert app_imports("from placement.app.bench.dally import run_case") != []
    assert app_imports("import numpy as np\nimport placement.app.api as api") != []
    assert app_imports("from placement import app") != []
    assert app_imports("x = importlib.import_module('placement.app.cli')") != []
    assert app_imports("import placement\nfrom placement.sim.trace import load_philly\nplacement.simulate('x')") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_uses_the_public_face(path: Path):
    nb = nbformat.read(path, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    bad = [imp for src in code for imp in app_imports(src)]
    assert bad == [], f"{path.name} imports the app layer: {bad}"
    first = code[0].strip().splitlines()
    assert first[0] == "import placement", f"{path.name}: the first code cell must start with `import placement`"
    assert len(first) <= 5 and PUBLIC_CALL.search(code[0]), \
        f"{path.name}: the first code cell must be the few lines a user types, calling placement.simulate/solve/..."
