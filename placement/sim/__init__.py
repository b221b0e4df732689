"""The trace-driven simulator: traces, clusters, performance models, the event loop, the replay check.

Modules: :mod:`.trace` (jobs, traces, loaders), :mod:`.cluster`, :mod:`.perf`, :mod:`.policy`
(the seam policies implement), :mod:`.engine` (:func:`simulate`), :mod:`.log`, :mod:`.replay`
(:func:`replay_check`, the reference evaluation), :mod:`.placement` (shared placement helpers),
:mod:`.policies` (the ``placement.policies`` entry-point registry), :mod:`.instance` (a simulation
input as a document), :mod:`.table1` (Dally Table 1). The policies themselves live in
``solvers/online/``; the reference page is ``placement/sim/README.md``.
"""

from .cluster import TIERS, Cluster
from .engine import SimResult, simulate
from .log import EventLog, LogRow, read_log
from .perf import DallyPerf, IdealPerf, PerfModel
from .policy import Event, History, Policy, PolicyError, Preempt, Running, SimView, Start, Timer
from .replay import replay_check
from .trace import Job, Trace, load_philly, load_trace_csv, synthetic_trace, write_trace_csv

__all__ = ["Cluster", "TIERS", "simulate", "SimResult", "EventLog", "LogRow", "read_log",
           "DallyPerf", "IdealPerf", "PerfModel", "Event", "History", "Policy", "PolicyError",
           "Preempt", "Running", "SimView", "Start", "Timer", "replay_check", "Job", "Trace",
           "load_philly", "load_trace_csv", "synthetic_trace", "write_trace_csv"]
