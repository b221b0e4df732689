"""Report helpers of the app layer: number formatting, markdown tables, PNG figures."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ..io import write_bytes

__all__ = ["fmt", "markdown_table", "save_figure"]


def fmt(v: Any) -> str:
    """A table cell: ``-`` for missing values, 4 significant digits for floats."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A GitHub markdown table of ``rows`` restricted to ``columns`` (missing cells print ``-``)."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def save_figure(fig, out_dir: str | Path, name: str, dpi: int = 110) -> str:
    """Write a matplotlib figure as PNG atomically, close it, and return its file name."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    write_bytes(Path(out_dir) / name, buf.getvalue())
    return name
