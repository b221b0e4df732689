"""Seeded instance generators and the stored default instances.

``generate_<problem>(sizes..., seed=...)`` is deterministic for a seed.
Stored instances live in ``instances/data/<problem>/*.json`` and are what
``placement bench`` and the tests use by default.
"""

from __future__ import annotations

from importlib import resources

from .cassini import generate_cassini
from .hived import generate_hived, hived_document, paper_cluster
from .tetris import generate_tetris, tetris_document

__all__ = ["generate_cassini", "generate_tetris", "tetris_document", "generate_hived", "hived_document", "paper_cluster", "stored", "stored_path"]


def stored_path(problem: str, name: str):
    """Path (a Traversable) of a stored instance file."""
    return resources.files(__name__).joinpath("data", problem, name)


def stored(problem: str) -> list[str]:
    """Names of the stored instance files of ``problem``, sorted."""
    folder = resources.files(__name__).joinpath("data", problem)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".json", ".yaml", ".yml")))
