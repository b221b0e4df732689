"""The app layer: command line, benchmark harness, report helpers.

The only part of ``placement`` that resolves solvers (``models/`` and
``solvers/``) by name. Imports run one way: core (errors, io, validate,
registry, result) → families (tetris/, cassini/, hived/, sim/) → app.
"""
