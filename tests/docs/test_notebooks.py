"""Every notebook draws its figures inline.

Each notebook is executed once with nbclient (the same engine ``pytest --nbmake`` uses, with
the kernel's default backend: ipykernel's ``matplotlib_inline``), and every code cell that
creates a figure must have produced an ``image/png`` output. A notebook that forces a
non-interactive backend (``matplotlib.use('Agg')``) or closes its figures before the end of
the cell shows no plot in Jupyter and fails here.

This is the notebooks' only execution in the README's test command (``pytest -n 2 tests``):
``pytest --nbmake notebooks`` executes them with the same engine but discards the outputs this
check needs, so running both would execute each notebook twice (about 50 s of CI time).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))

# A cell creates a figure when it calls one of pyplot's figure constructors or plot functions.
FIGURE = re.compile(r"\bplt\.(subplots|figure|subplot|plot|bar|barh|scatter|imshow|hist|step)\(")


def plotting_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and FIGURE.search(c.source)]


def images(cell) -> int:
    return sum(1 for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))


def test_figure_detector_sees_real_plot_calls():
    """The detector is not vacuous: it finds plotting cells and ignores a bare import."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import matplotlib.pyplot as plt"),
                                         nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nax.plot([1, 2])")])
    assert plotting_cells(nb) == [1]
    assert sum(len(plotting_cells(nbformat.read(p, as_version=4))) for p in NOTEBOOKS) >= 3


def _execute(path: Path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_plots_inline(path: Path):
    src = path.read_text()
    assert "matplotlib.use(" not in src, "a notebook must not force a matplotlib backend (plots would not show)"
    nb = _execute(path)  # one execution per notebook; raises CellExecutionError on any failing cell
    cells = plotting_cells(nb)
    missing = [i for i in cells if images(nb.cells[i]) == 0]
    assert not missing, f"{path.name}: plotting cells {missing} produced no image/png output"
