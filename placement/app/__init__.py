"""The app layer: the run module, the commands and the family adapters, the bench, sweeps,
reproductions, the Python face and the command line.

The only part of ``placement`` that resolves solvers (``placement.models`` and
``placement.solvers``) by name. Imports run one way: the core (errors, io, validate, registry,
result) -> the families (tetris/, cassini/, hived/) -> the simulator (sim/) -> models, solvers,
instances -> the app, and inside the app from the run module up to the face (``api.py``) and
the command line (``cli.py``); ``tests/core/test_imports.py`` holds the order (``LAYERS``).
"""
