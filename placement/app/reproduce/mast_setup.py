"""The busy hours' set-up of ``placement reproduce mast`` (:mod:`.mast`): the runs, the configuration
(full and ``--quick``), the cluster of unequal regions, the regime-map points, the latency readings'
overheads, the Wilson interval and the per-seed lookup shared with :mod:`.mast_sections`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["H", "POLICIES", "RUNS", "VIEWS", "run_options", "Config", "FULL", "QUICK", "GUARANTEED", "LOWEST",
           "KNOBS", "VIEW_KNOB", "wilson", "cluster_of", "points", "overheads", "per_seed"]

H = 3600.0
POLICIES = ("mast", "federated")
RUNS = (*POLICIES, "mast-earlier")      # mast-earlier: MAST with the earlier readings of (11) and the quota scan
VIEWS = ("V1", "V0")                    # Tetris's placement (judged) and the starting homes (regime map)


def run_options(run: str) -> tuple[str, dict]:
    """(policy, extra options) of a run name in :data:`RUNS`."""
    if run == "mast-earlier":
        from placement.solvers.online.gms import GmsParams

        return "mast", {"gms": GmsParams(fair_share="mean-active", quota_used="within")}
    return run, {}


@dataclass(frozen=True)
class Config:
    region_machines: tuple[int, ...] = (384, 256, 192, 128, 64)   # 8-GPU machines per region (8,192 GPUs)
    hours: float = 8.0
    load: float = 1.5                      # all priorities x supply; the excess waits at time 0
    imbalance: float = 1.0                 # the backlogs' spread: 0 even, 1 with the low-priority work
    high_scale: float = 1.0                # all high-priority demand x this
    amplitude: float = 0.5                 # the daily peak's amplitude (arrival rate 1 +- amplitude)
    peak_hour: float = 4.0
    warm_fill: float = 1.0                 # §3.2: demand above supply keeps every region full
    tenants: int = 80
    worst_region: int = -2                 # the worst region (index into region_machines)
    imbalances: tuple[float, ...] = (0.0, 0.33, 0.67, 1.0)       # regime map knobs (4 values each)
    loads: tuple[float, ...] = (1.0, 1.25, 1.5, 2.0)
    high_scales: tuple[float, ...] = (0.8, 1.0, 1.25, 1.5)
    min_events: int = 1                    # hourly windows (an empty hour joins the next)
    setup_p50_s: float = 150.0             # §5.5: container set-up P50 / P90
    setup_p90_s: float = 278.0
    preempt_s: float = 60.0                # ours: §5.5 counts preemption time, gives no figure
    slo_limits_min: tuple[float, ...] = (2.0, 5.0, 10.0, 30.0, 60.0)   # the regime map's limit knob (levels 0-1)
    judged_limits_min: tuple[float, ...] = (5.0, 10.0, 30.0)          # levels 0-1's limit: readings judged
    sweep_region_gpus: int = 512
    sweep_backlog: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0)
    sweep_protected: tuple[float, ...] = (0.5, 1.0)
    sweep_hours: float = 4.0
    sweep_load: float = 0.75


FULL = Config()
QUICK = Config(region_machines=(192, 128, 96, 64, 32), tenants=40, sweep_region_gpus=256,
               sweep_backlog=(0.0, 0.5, 1.0, 2.0), sweep_protected=(1.0,))
GUARANTEED = (0, 1, 2, 3, 4, 5)     # levels whose within-quota work carries the latency guarantee
LOWEST = 6                          # the lowest level: over-quota and unprioritised work run here
# regime-map knobs: (Config field of the default, Config field of the values, knob name)
KNOBS = (("imbalance", "imbalances", "low-priority backlog imbalance (0 even, 1 with low-priority work)"),
         ("load", "loads", "offered load, all priorities (x supply)"),
         ("high_scale", "high_scales", "high-priority share (x every region's high-priority demand)"))
VIEW_KNOB = "Tetris view of the busy hours' worst region (V1 hill climbing, V0 starting homes)"


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a rate of ``k`` in ``n``; (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)


def cluster_of(cfg: Config):
    """Regions of unequal size, 8 machines per rack, one dynamic cluster per region."""
    from placement.sim.cluster import Cluster, MachineSpec

    ms = []
    for r, n in enumerate(cfg.region_machines):
        for m in range(n):
            k = m // 8
            ms.append(MachineSpec(f"r{r}-c0-k{k}-m{m % 8}", f"r{r}-c0-k{k}", f"r{r}-c0", f"r{r}", 8, "H100", 64))
    return Cluster.from_machines(ms, name="meta-" + "-".join(map(str, cfg.region_machines)))


def points(cfg: Config) -> list[tuple[str, Any]]:
    """The busy-hours settings run: ("view", "V1") and ("view", "V0"), then each knob's other values."""
    out: list[tuple[str, Any]] = [("view", v) for v in VIEWS]
    for field, values, _ in KNOBS:
        out += [(field, float(v)) for v in getattr(cfg, values) if v != getattr(cfg, field)]
    return out


def overheads(cfg: Config):
    """(§5.5's latency: queueing plus the preemption charge; the same plus container set-up)."""
    from placement.sim.slo import Overhead

    return Overhead(0.0, 0.0, cfg.preempt_s), Overhead(cfg.setup_p50_s, cfg.setup_p90_s, cfg.preempt_s)


def per_seed(per, kind, v, seeds, pol, *path):
    """The value at ``path`` of the run (kind, v, seed, pol) for each seed."""
    out = []
    for s in seeds:
        x = per[(kind, v, s, pol)]
        for k in path:
            x = x[k]
        out.append(x)
    return out
