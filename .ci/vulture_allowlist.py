"""Dead-code allow-list for vulture (run by ``.ci/run`` at 80% confidence over placement, models,
solvers and instances): names vulture reports that an interface requires, each used here once with
the reason. A finding not listed here is dead code to remove."""

from types import SimpleNamespace

_ = SimpleNamespace()
ALLOWED = (
    _.frame,     # signal.signal handlers take (signum, frame): placement/io.py, placement/app/run.py
    _.cluster_,  # replay-check hooks take (trace, cluster, log): placement/sim/goodput.py's goodput_check
)
