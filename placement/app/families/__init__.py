"""Problem-family adapters for the command line and the bench: one ``ProblemSpec`` per family,
registered through the ``placement.problems`` entry-point group (``pyproject.toml``)."""
