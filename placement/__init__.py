"""placement: exact models and fast heuristics for placing ML-training work in GPU datacenters.

Core contract (README.md, "The contract every problem follows"): every problem family has an immutable instance type
loaded with validation (:class:`InstanceError`), a reference evaluation, exact
models in ``models/``, heuristics in ``solvers/``, and every solver returns a
:class:`SolveResult`.

The Python face (README.md, "Python"): :func:`simulate` (a policy on a trace, a :class:`Run`
with pandas DataFrames), :func:`solve` (any family's solver by name), :func:`sweep` and
:func:`reproduce` (a :class:`Report`), :func:`compare` (runs in one table and one JCT CDF), and
the listings :func:`list_policies`, :func:`list_solvers`, :func:`list_options` (types and
defaults) and :func:`list_metrics` (the glossary of a run's numbers; ``placement.solvers`` and
``placement.options`` are the package's modules of those names); for solver benchmarking,
:func:`export` (an instance as a frozen MPS file), :func:`bench` (the instance library or a folder of
MPS files, every solver on equal footing, failures scored) and :func:`load_solution` (an external
solver's ``.sol`` back into the reference evaluation), from :mod:`placement.app.library_api`. They live in the app layer
(:mod:`placement.app.api`) and are the functions the command line runs. The core never imports
the app, so these names are resolved lazily: the module ``__getattr__`` below loads
``placement.app.api`` by name the first time one of them is used, and ``import placement``
alone loads no app, solver or model code (``tests/core/test_imports.py``).
"""

from .errors import InstanceError
from .result import SolveResult, Status

__all__ = ["InstanceError", "SolveResult", "Status", "simulate", "Run", "solve", "sweep", "reproduce", "Report",
           "compare", "list_policies", "list_solvers", "list_options", "list_metrics", "export", "bench",
           "load_solution"]
__version__ = "0.1.0"

_API = frozenset({"simulate", "Run", "solve", "sweep", "reproduce", "Report", "compare", "list_policies",
                  "list_solvers", "list_options", "list_metrics"})
_LIBRARY_API = frozenset({"export", "bench", "load_solution"})


def __getattr__(name: str):
    if name in _API or name in _LIBRARY_API:
        import importlib

        if name in _API:
            module = importlib.import_module("placement.app.api")
        else:
            module = importlib.import_module("placement.app.library_api")
        value = getattr(module, name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'placement' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API | _LIBRARY_API)
