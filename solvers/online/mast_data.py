"""Where a workload may run: table locations from a Tetris solution (MAST §3, §4.3).

Terms
-----
data placement
    For every table of a Tetris instance, the regions holding it (its home and its
    replicas), as a bit mask over regions.
eligible regions (§4.3)
    A workload may run only in a region that holds all its tables and has its GPU type
    ("RMS consults a real-time component of Tetris ... if not, the RMS abandons the auction").

The data placement is data this policy receives (``data=``); how ``placement simulate``
builds one for a cluster from a generated Tetris instance is
:mod:`placement.app.policy_data`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DataPlacement"]


@dataclass
class DataPlacement:
    """Table locations and the mapping of trace jobs to tables (see the module docstring)."""

    regions: tuple[str, ...]
    gpu_types: tuple[str, ...]
    tables: tuple[str, ...]
    present: np.ndarray            # int64 bit mask of regions per table (mutable: replication)
    job_tables: list[np.ndarray]   # tables of each ML job of the Tetris instance
    jobs_of_type: dict[str, np.ndarray]
    all_jobs: np.ndarray
    variant: str
    seed: int = 0
    stats: dict = field(default_factory=dict)

    def tables_of(self, job_id: str, gpu_type: str | None, named: tuple[str, ...] = ()) -> np.ndarray:
        """Table indices a trace job reads (its own names when all are known, else the seeded map)."""
        if named:
            cached = self.__dict__.get("_index")
            if cached is None or cached[0] is not self.tables:   # built once, not per arrival
                cached = self.__dict__["_index"] = (self.tables, {t: i for i, t in enumerate(self.tables)})
            index = cached[1]
            if all(t in index for t in named):
                return np.array(sorted({index[t] for t in named}), dtype=np.int64)
        pool = self.jobs_of_type.get(gpu_type) if gpu_type is not None else None
        if pool is None or len(pool) == 0:
            pool = self.all_jobs
        if len(pool) == 0:
            return np.zeros(0, dtype=np.int64)
        h = zlib.crc32(f"{self.seed}:{job_id}".encode())
        return self.job_tables[int(pool[h % len(pool)])]

    def regions_holding(self, tables: np.ndarray) -> int:
        """Bit mask of the regions holding every one of ``tables``."""
        m = (1 << len(self.regions)) - 1
        for t in tables.tolist():
            m &= int(self.present[t])
        return m

    def replicate(self, tables: np.ndarray, region: int) -> None:
        """Copy ``tables`` to ``region`` (MAST starts replication when no region qualifies)."""
        self.present[tables] |= np.int64(1 << region)
