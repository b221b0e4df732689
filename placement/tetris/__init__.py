"""MAST's Tetris data placement (OSDI'24 §3): instance, solution, reference evaluation."""

from .evaluation import TetrisEvaluation, evaluate, job_regions, sigmoid, violations
from .instance import (
    App,
    Job,
    Region,
    Table,
    TetrisInstance,
    TetrisSolution,
    instance_to_json,
    load_instance,
    load_solution,
    solution_to_json,
)

__all__ = ["App", "Job", "Region", "Table", "TetrisInstance", "TetrisSolution", "TetrisEvaluation",
           "load_instance", "instance_to_json", "load_solution", "solution_to_json", "evaluate",
           "violations", "job_regions", "sigmoid"]
