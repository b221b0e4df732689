"""The GMS queue of :mod:`placement.solvers.online.mast_admission` in four arrays, merged instead of re-sorted.

:class:`RecordGmsQueue` behaves exactly as :class:`placement.solvers.online.mast_admission.GmsQueue` (same
fields, same ``extend`` / ``take`` / ``sort`` results, element for element) with less work at a
week's scale (MAST §5.1: tens of thousands of workloads a day, thousands pending):

- the fields live in four arrays (the integer ones as rows of one array, the floats of another,
  ``within``, ``ids``), so ``take`` (after a pass places workloads, after a GMS-scan) moves them in
  four operations instead of one per field;
- one more integer row, ``feas``, is free for the pass (:meth:`placement.solvers.online.mast_placement.RmsPlacement._fast_pass`):
  whether the row could be placed under the usable table of the last pass's start (0 / 1), or
  :data:`UNKNOWN` for a new row and for every row when a GMS-scan sets new priorities;
- ``sort`` after ``extend`` merges the new rows into a queue already in order instead of sorting
  it all again. The order is ascending ``(eff, -credit, since, seq)``; ``seq`` is unique and grows
  with every ``extend``, so a new row goes after every queued row whose first three keys are <=
  its own. The queue is known to be in that order after a ``sort`` and after a ``take`` of
  increasing positions; after any other ``take`` (a GMS-scan's order, whose last tie-break is
  the position, not ``seq``) the next ``sort`` sorts it all, as the base class always does.
"""

from __future__ import annotations

import numpy as np
from placement.solvers.online.mast_admission import GmsQueue

__all__ = ["RecordGmsQueue"]

MERGE_MAX = 64   # more new rows than this at once: sort everything
INTS = ("n", "g", "eff", "prio", "tenant", "holder", "elig", "seq", "feas")
UNKNOWN = 2      # ``feas`` of a row not yet judged (new, or its priority changed)
FLOATS = ("since", "credit")


class RecordGmsQueue(GmsQueue):
    """:class:`GmsQueue` in three blocks (module docstring): integer fields as the rows of one
    int64 array, float fields of one float array, plus ``within`` and ``ids``."""

    def __init__(self):
        self._i = np.zeros((len(INTS), 0), dtype=np.int64)
        self._f = np.zeros((len(FLOATS), 0), dtype=float)
        self._w = np.zeros(0, dtype=bool)
        self._o = np.zeros(0, dtype=object)
        self._next = 0
        self._ordered = True     # the rows before the last extend are in (eff, -credit, since, seq) order
        self._tail = 0           # rows appended by extend since then

    @property
    def size(self) -> int:
        return len(self._w)

    def extend(self, rows: list[tuple]) -> None:
        k = len(rows)
        cols = dict(zip(self.FIELDS, zip(*rows, strict=True), strict=True))
        ids = np.empty(k, dtype=object)
        ids[:] = list(cols["ids"])
        ints = np.empty((len(INTS), k), dtype=np.int64)
        for r, f in enumerate(INTS[:-2]):
            ints[r] = cols[f]
        ints[-2] = np.arange(self._next, self._next + k)
        ints[-1] = UNKNOWN
        self._next += k
        self._i = np.concatenate([self._i, ints], axis=1)
        self._f = np.concatenate([self._f, np.array([cols[f] for f in FLOATS], dtype=float)], axis=1)
        self._w = np.concatenate([self._w, np.array(cols["within"], dtype=bool)])
        self._o = np.concatenate([self._o, ids])
        self._tail += k

    def take(self, idx: np.ndarray) -> None:
        idx = np.asarray(idx)
        increasing = idx.dtype != bool and (len(idx) < 2 or bool((idx[1:] > idx[:-1]).all()))
        if self._tail or not increasing:
            self._ordered = False
            self._tail = 0
        self._i, self._f = np.take(self._i, idx, axis=1), np.take(self._f, idx, axis=1)
        self._w, self._o = self._w[idx], self._o[idx]

    def drop(self, positions: list[int]) -> None:
        """Remove the rows at ``positions`` (increasing), keeping the others in order: ``take`` of
        the complement, by slices (a pass places few workloads)."""
        if self._tail:
            self._ordered = False
            self._tail = 0
        cuts = [0, *[x for p in positions for x in (p, p + 1)], self.size]
        spans = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True) if b > a]
        self._i = np.concatenate([self._i[:, a:b] for a, b in spans], axis=1) if spans else self._i[:, :0]
        self._f = np.concatenate([self._f[:, a:b] for a, b in spans], axis=1) if spans else self._f[:, :0]
        self._w = np.concatenate([self._w[a:b] for a, b in spans]) if spans else self._w[:0]
        self._o = np.concatenate([self._o[a:b] for a, b in spans]) if spans else self._o[:0]

    def sort(self) -> None:
        k = self._tail
        self._tail = 0
        eff, seq, since, cr = self._i[2], self._i[7], self._f[0], self._f[1]
        if not (self._ordered and k <= MERGE_MAX):
            self.take(np.lexsort((seq, since, -cr, eff)))
            self._ordered = True
            return
        if k == 0:
            return
        n = self.size - k
        tail = n + np.lexsort((seq[n:], since[n:], -cr[n:], eff[n:]))
        # each new row goes after the queued rows whose (eff, -credit, since) is <= its own: the
        # queued rows are in that order, so the count is found by binary searches (the block of
        # its eff, inside it the credits above and equal to its own, inside those the since <=)
        e = eff[:n]
        lo = np.searchsorted(e, eff[tail], side="left").tolist()
        hi = np.searchsorted(e, eff[tail], side="right").tolist()
        pos = []
        for a, b, tc, ts in zip(lo, hi, cr[tail].tolist(), since[tail].tolist(), strict=True):
            if a == b:
                pos.append(a)
                continue
            nc = -cr[a:b]
            c0 = a + int(np.searchsorted(nc, -tc, side="left"))
            c1 = a + int(np.searchsorted(nc, -tc, side="right"))
            pos.append(c0 + int(np.searchsorted(since[c0:c1], ts, side="right")) if c1 > c0 else c0)
        idx = np.insert(np.arange(n), pos, tail)
        self._i, self._f = np.take(self._i, idx, axis=1), np.take(self._f, idx, axis=1)
        self._w, self._o = self._w[idx], self._o[idx]


def _field(block: str, row: int | None, name: str = "") -> property:
    def get(self):
        a = getattr(self, block)
        return a if row is None else a[row]

    def set_(self, value):
        a = getattr(self, block)
        if row is None:
            a[:] = value
        else:
            a[row] = value
        self._ordered = False    # keys may have changed (a GMS-scan's new priorities and credits)
        if name == "eff":
            self._i[INTS.index("feas")] = UNKNOWN

    return property(get, set_)


for _r, _f in enumerate(INTS):
    setattr(RecordGmsQueue, _f, _field("_i", _r, _f))
for _r, _f in enumerate(FLOATS):
    setattr(RecordGmsQueue, _f, _field("_f", _r))
RecordGmsQueue.within = _field("_w", None)
RecordGmsQueue.ids = _field("_o", None)
