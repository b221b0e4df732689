"""Shared pytest configuration: hypothesis profiles.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) selects a derandomized profile
with no deadline (solver calls exceed the default 200 ms) and bounded examples.
"""

import os
import signal
import sys

from hypothesis import HealthCheck, settings

# A test run started in the background by a non-interactive shell inherits SIGINT ignored (and
# Python then installs no KeyboardInterrupt handler, in this process or in the commands it starts);
# the interrupt tests need the handler a terminal gives, so the session restores it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Some environments set PYTHONDONTWRITEBYTECODE; every Python process the tests start (each page
# command, the CLI and sweep tests, the notebook kernels, dask workers) then compiles the package
# from source again, about 0.45 s a process. The session lets them cache bytecode in the usual
# __pycache__ folders (git-ignored): what runs and what the tests assert is the same.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# ci: 15 examples a property test (20 until the suite, at 20, took 376-380 s of the README's 6 minutes on
# this 2-core machine on 2026-11-27, when the same commit had taken 347 s three hours before: the machine's
# speed drifts by ~20%; a test's own @settings(max_examples=...) still applies)
settings.register_profile(
    "ci", max_examples=15, deadline=None, derandomize=True, database=None, print_blob=True,
    stateful_step_count=20, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "dev", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The longest tests (measured with --durations on 2 cores) run first, so that pytest-xdist's two
# workers do not finish on one of them alone; the order changes nothing else (every test is
# independent; the same order in every worker, as xdist requires). pyproject's addopts select
# xdist's worksteal scheduling: each worker starts on half of this order and an idle one takes
# the not-yet-started end of the other's queue, so a module's tests mostly stay on one worker
# (its module fixture runs once) and neither worker waits on the other's queue.
LONG_FIRST = ("tests/docs/test_readme_commands.py", "tests/app/test_reproduce_parallel.py",
              "tests/app/test_bench_figures.py", "tests/docs/test_notebooks.py",
              "tests/cassini/test_cassini_reproduce.py", "tests/sim/test_sim_cli.py",
              "tests/hived/test_reproduce_hived.py", "tests/app/test_fuzz_sim.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.split("::")[0]
        return LONG_FIRST.index(path) if path in LONG_FIRST else len(LONG_FIRST)
    items.sort(key=rank)  # stable: the collection order within each group
