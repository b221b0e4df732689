"""placement: exact models and fast heuristics for placing ML-training work in GPU datacenters.

Core contract (README.md, "The contract every problem follows"): every problem family has an immutable instance type
loaded with validation (:class:`InstanceError`), a reference evaluation, exact
models in ``models/``, heuristics in ``solvers/``, and every solver returns a
:class:`SolveResult`.
"""

from .errors import InstanceError
from .result import SolveResult, Status

__all__ = ["InstanceError", "SolveResult", "Status"]
__version__ = "0.1.0"
