"""Heuristics, one module per algorithm; they import placement/, never models/."""
