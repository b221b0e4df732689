"""Shared pytest configuration: hypothesis profiles.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) selects a derandomized profile
with no deadline (solver calls exceed the default 200 ms) and bounded examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=30, deadline=None, derandomize=True, database=None, print_blob=True,
    stateful_step_count=20, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "dev", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
