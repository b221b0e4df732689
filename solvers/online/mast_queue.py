"""The GMS queue of :mod:`solvers.online.mast_admission` in one record array, merged instead of re-sorted.

:class:`RecordGmsQueue` behaves exactly as :class:`solvers.online.mast_admission.GmsQueue` (same
fields, same ``extend`` / ``take`` / ``sort`` results, element for element) with less work at a
week's scale (MAST §5.1: tens of thousands of workloads a day, thousands pending):

- the fields live in one numpy record array, so ``take`` (after a pass places workloads, after
  a GMS-scan) moves every field in one operation instead of one per field;
- ``sort`` after ``extend`` merges the new rows into a queue already in order instead of sorting
  it all again. The order is ascending ``(eff, -credit, since, seq)``; ``seq`` is unique and grows
  with every ``extend``, so a new row goes after every queued row whose first three keys are <=
  its own. The queue is known to be in that order after a ``sort`` and after a ``take`` of
  increasing positions; after any other ``take`` (a GMS-scan's order, whose last tie-break is
  the position, not ``seq``) the next ``sort`` sorts it all, as the base class always does.
"""

from __future__ import annotations

import numpy as np

from solvers.online.mast_admission import GmsQueue

__all__ = ["RecordGmsQueue"]

MERGE_MAX = 64   # more new rows than this at once: sort everything


class RecordGmsQueue(GmsQueue):
    """:class:`GmsQueue` as one record array (module docstring)."""

    DTYPE = np.dtype([(f, d) for f, d in zip(GmsQueue.FIELDS, GmsQueue.DTYPES, strict=True)] + [("seq", np.int64)])

    def __init__(self):
        self._a = np.zeros(0, dtype=self.DTYPE)
        self._next = 0
        self._ordered = True     # the rows before the last extend are in (eff, -credit, since, seq) order
        self._tail = 0           # rows appended by extend since then

    @property
    def size(self) -> int:
        return len(self._a)

    def extend(self, rows: list[tuple]) -> None:
        new = np.zeros(len(rows), dtype=self.DTYPE)
        cols = list(zip(*rows, strict=True))
        ids = np.empty(len(rows), dtype=object)
        ids[:] = list(cols[0])
        new["ids"] = ids
        for f, d, c in zip(self.FIELDS[1:], self.DTYPES[1:], cols[1:], strict=True):
            new[f] = np.fromiter(c, dtype=d, count=len(c))
        new["seq"] = np.arange(self._next, self._next + len(rows))
        self._next += len(rows)
        self._a = np.concatenate([self._a, new])
        self._tail += len(rows)

    def take(self, idx: np.ndarray) -> None:
        idx = np.asarray(idx)
        increasing = idx.dtype != bool and (len(idx) < 2 or bool((idx[1:] > idx[:-1]).all()))
        if self._tail or not increasing:
            self._ordered = False
            self._tail = 0
        self._a = self._a[idx]

    def sort(self) -> None:
        a, k = self._a, self._tail
        self._tail = 0
        if not (self._ordered and k <= MERGE_MAX):
            self._a = a[np.lexsort((a["seq"], a["since"], -a["credit"], a["eff"]))]
            self._ordered = True
            return
        if k == 0:
            return
        head, tail = a[:-k], a[-k:]
        tail = tail[np.lexsort((tail["seq"], tail["since"], -tail["credit"], tail["eff"]))]
        e, c, s = head["eff"], head["credit"], head["since"]
        pos = [int(np.count_nonzero((e < te) | ((e == te) & ((c > tc) | ((c == tc) & (s <= ts))))))
               for te, tc, ts in zip(tail["eff"].tolist(), tail["credit"].tolist(), tail["since"].tolist(),
                                     strict=True)]
        self._a = np.insert(head, pos, tail)


def _field(name: str) -> property:
    def get(self):
        return self._a[name]

    def set_(self, value):
        self._a[name] = value
        self._ordered = False    # keys may have changed (a GMS-scan's new priorities and credits)

    return property(get, set_)


for _f in (*GmsQueue.FIELDS, "seq"):
    setattr(RecordGmsQueue, _f, _field(_f))
