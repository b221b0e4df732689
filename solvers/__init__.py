"""Heuristics, one module per algorithm (instance -> :class:`~placement.result.SolveResult`).

Static solvers here: :mod:`.hill_climb` and :mod:`.lns` (Tetris), :mod:`.replicas` (Tetris
§3.5), :mod:`.rotation` and :mod:`.affinity` (CASSINI), :mod:`.buddy` and :mod:`.quota` (HiveD).
Online policies the simulator runs live in :mod:`placement.solvers.online`.

They import ``placement/``, and ``models/`` only where they solve a sub-problem exactly
(LNS neighbourhoods, VC fits); ``models/`` never imports ``solvers/``.
"""
