"""HiveD Table 1 (OSDI'20 §5): the eleven tenants' job-size mix and production quotas.

Data, transcribed from ``papers/hived-osdi20.txt`` (Table 1: "Number of jobs with different GPU
demands and quota assignment of tenants"), and two deterministic rules that map a trace's
tenants onto its rows: :func:`identify_tenants` (once, over a whole trace, by absolute counts)
and :func:`map_tenants` (by job-size mix, for a trace too short to carry the counts).

Identification rule (ours; the paper names its tenants, the shipped Philly trace hashes them)
    Table 1 counts each tenant's jobs per size over the paper's whole two-month trace, so the
    counts themselves fingerprint a tenant (res-b: 18,319 1-GPU and 1,593 2-GPU jobs). Over a
    whole trace, each trace tenant's jobs per column are compared with each row's, and tenants
    are matched one to one to rows so that the summed L1 distance of the counts is least (an
    assignment problem, solved exactly; ties by the sorted names). Trace tenants left over have
    no row: no quota. On the shipped trace the match is the same when the counts are scaled to
    Table 1's total or compared on a log scale (:func:`identify_tenants` reports the margin).
Mix rule (ours)
    Each tenant's *job-size mix* is the share of its jobs asking for 1, 2, 3-4, 5-8 and 9 or more
    GPUs (Table 1's columns 1-GPU, 2-GPU, 4-GPU, 8-GPU, >=16-GPU; the trace's odd sizes go to the
    column above). Trace tenants are matched one to one to Table 1's rows so that the summed L1
    distance between mixes is least (an assignment problem, solved exactly); ties are broken by
    the sorted names. With more than eleven trace tenants, the ones left over join the row
    nearest their mix (then the lower row index) and share its quota; with fewer, the rows left
    without a tenant give up their share and the others' shares are scaled to sum to 1.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..errors import InstanceError

__all__ = ["TABLE1", "TABLE1_QUOTA", "SIZE_COLUMNS", "size_column", "mix", "counts", "identify_tenants", "identify_counts",
           "map_tenants", "row_shares"]

SIZE_COLUMNS = ("1-GPU", "2-GPU", "4-GPU", "8-GPU", ">=16-GPU")
# tenant: (jobs per size column), quota share of the cluster (Table 1)
TABLE1: dict[str, tuple[tuple[int, int, int, int, int], float]] = {
    "res-a": ((429, 14, 260, 625, 40), 0.0037),
    "res-b": ((18319, 1593, 931, 148, 238), 0.0073),
    "res-c": ((3285, 161, 716, 185, 0), 0.0073),
    "res-d": ((1754, 0, 0, 0, 0), 0.0147),
    "res-e": ((2682, 110, 3005, 0, 0), 0.0183),
    "res-f": ((8181, 88, 618, 1337, 559), 0.2857),
    "prod-a": ((227, 54, 23, 1132, 138), 0.0879),
    "prod-b": ((16446, 67, 605, 1344, 22), 0.1062),
    "prod-c": ((4692, 301, 1905, 4415, 1206), 0.1136),
    "prod-d": ((781, 6, 545, 650, 95), 0.1575),
    "prod-e": ((58407, 532, 2118, 959, 2), 0.1978),
}
TABLE1_QUOTA = {t: q for t, (_, q) in TABLE1.items()}


def size_column(gpus: int) -> int:
    """Table 1's column of a job of ``gpus`` GPUs (0: 1-GPU ... 4: >=16-GPU; 3 GPUs count as
    4-GPU, 5-8 as 8-GPU, 9-15 as >=16-GPU: the column at or above)."""
    if gpus < 1:
        raise InstanceError("gpus", f"must be at least 1, not {gpus}")
    return 0 if gpus == 1 else 1 if gpus == 2 else 2 if gpus <= 4 else 3 if gpus <= 8 else 4


def mix(counts: Iterable[int]) -> np.ndarray:
    """Shares of the five columns (sums to 1)."""
    c = np.asarray(list(counts), dtype=float)
    return c / c.sum()


def counts(jobs) -> dict[str, tuple[int, ...]]:
    """Per trace tenant, its jobs per Table 1 column (sorted by tenant)."""
    out: dict[str, list[int]] = {}
    for j in jobs:
        out.setdefault(j.tenant, [0] * 5)[size_column(j.gpus)] += 1
    return {t: tuple(c) for t, c in sorted(out.items())}


def _trace_mix(jobs) -> dict[str, np.ndarray]:
    return {t: mix(c) for t, c in counts(jobs).items()}


def identify_tenants(jobs) -> tuple[dict[str, str], list[dict]]:
    """Trace tenant -> Table 1 row by absolute job counts per size over ``jobs`` (a whole trace;
    module doc): :func:`identify_counts` on :func:`counts`. :class:`InstanceError` on no jobs."""
    got = counts(jobs)
    if not got:
        raise InstanceError("jobs", "no jobs to identify Table 1's tenants in")
    return identify_counts(got)


def identify_counts(got: dict[str, tuple[int, ...]]) -> tuple[dict[str, str], list[dict]]:
    """Tenant -> Table 1 row from each tenant's jobs per Table 1 column (module doc), and one row
    per matched Table 1 row saying how well it fits: ``row``, ``tenant``, ``trace`` and
    ``table1`` (jobs per column), ``distance`` (L1 of the counts) and ``margin`` (the least
    summed distance of an assignment that gives the row another tenant, minus the chosen one's:
    how decided the match is). Tenants left over map to no row."""
    from scipy.optimize import linear_sum_assignment

    if not got:
        raise InstanceError("counts", "no tenant to identify")
    names, rows = sorted(got), list(TABLE1)
    a = np.array([got[t] for t in names], dtype=float)
    if a.ndim != 2 or a.shape[1] != len(SIZE_COLUMNS) or (a < 0).any():
        raise InstanceError("counts", f"must give each tenant {len(SIZE_COLUMNS)} job counts >= 0")
    b = np.array([TABLE1[r][0] for r in rows], dtype=float)
    d = np.abs(a[:, None, :] - b[None, :, :]).sum(axis=2)
    ti, ri = linear_sum_assignment(d)
    best = float(d[ti, ri].sum())
    mapping = {names[x]: rows[y] for x, y in zip(ti, ri, strict=True)}
    fit = []
    for x, y in sorted(zip(ti, ri, strict=True), key=lambda p: p[1]):
        dd = d.copy()
        dd[x, y] = best + d.sum() + 1.0      # forbid this pair: the best other assignment
        ti2, ri2 = linear_sum_assignment(dd)
        other = float(dd[ti2, ri2].sum())
        fit.append({"row": rows[y], "tenant": names[x], "trace": tuple(int(v) for v in got[names[x]]),
                    "table1": TABLE1[rows[y]][0], "distance": float(d[x, y]),
                    "margin": other - best if dd[ti2, ri2].max() < best + d.sum() else None})
    return dict(sorted(mapping.items())), fit


def map_tenants(jobs) -> dict[str, str]:
    """Trace tenant -> Table 1 row by job-size mix (module doc: least summed L1 distance, one to
    one; left-over tenants join their nearest row). :class:`InstanceError` on no jobs."""
    from scipy.optimize import linear_sum_assignment

    mixes = _trace_mix(jobs)
    if not mixes:
        raise InstanceError("jobs", "no jobs to map onto Table 1's tenants")
    names, rows = list(mixes), list(TABLE1)
    d = np.array([[float(np.abs(mixes[t] - mix(TABLE1[r][0])).sum()) for r in rows] for t in names])
    ti, ri = linear_sum_assignment(d)
    out = {names[a]: rows[b] for a, b in zip(ti, ri, strict=True)}
    for a, t in enumerate(names):
        if t not in out:
            out[t] = rows[int(np.argmin(d[a]))]
    return dict(sorted(out.items()))


def row_shares(mapping: dict[str, str]) -> dict[str, float]:
    """Each mapped row's Table 1 share, scaled so that the rows with a tenant sum to 1."""
    used = sorted(set(mapping.values()), key=list(TABLE1).index)
    total = sum(TABLE1_QUOTA[r] for r in used)
    return {r: TABLE1_QUOTA[r] / total for r in used}
