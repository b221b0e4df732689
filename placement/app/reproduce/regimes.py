"""Regime maps of a reproduction: where each claim of a paper holds (app layer).

A *knob* is a set-up quantity that decides a claim (job length, offered load, jobs running at
once, oversubscription, the worst region's demand/supply, spare quota). A reproduction sweeps
each knob over several values and seeds and records one :class:`RegimeRow` per (claim, knob,
value, seed): ours, the paper's number and whether the paper's direction holds there. This
module turns those rows into

- ``regimes.csv`` (columns ``claim, knob, value, seed, ours, paper, holds``; ``holds`` is
  ``yes`` / ``no`` / empty for not judged), see ``../shared/DESIGN.md`` "Reproductions";
- one figure per knob (ours as the median over seeds with the min-max range, one line per
  claim; filled markers where the claim holds on a majority of seeds, hollow where it does
  not; the paper's number dashed when it is a number);
- the report's "Regime map" section: per (claim, knob) a table of values and the
  *crossover* sentence.

The verdict at one knob value is the majority over the seeds judged there: it holds when
more than half of the judged seeds hold, it does not when fewer than half do, and a tie is
``split``. The crossover names the values where the verdict holds, where it does not, and
every pair of neighbouring values (in knob order) between which it flips.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import dataclass
from typing import Any

from ...errors import InstanceError

__all__ = ["RegimeRow", "COLUMNS", "regimes_csv", "verdict_by_value", "crossover", "regime_section",
           "regime_figures", "check_row"]

COLUMNS = ("claim", "knob", "value", "seed", "ours", "paper", "holds")


@dataclass(frozen=True)
class RegimeRow:
    """One (claim, knob, value, seed) measurement of a regime map."""

    claim: str
    knob: str
    value: float | int | str
    seed: int
    ours: float | None
    paper: float | str | None = None
    holds: bool | None = None


def check_row(claim: Any, knob: Any, value: Any, seed: Any, ours: Any, paper: Any, holds: Any) -> RegimeRow:
    """Validate one row (a reproduction's own bug shows as one line naming the field)."""
    for name, v in (("claim", claim), ("knob", knob)):
        if not isinstance(v, str) or not v.strip():
            raise InstanceError(f"regime {name}", f"must be a non-empty string, got {v!r}")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InstanceError("regime value", f"must be a number or a label, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InstanceError("regime value", f"must be finite, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InstanceError("regime seed", f"must be an integer, got {seed!r}")
    if ours is not None and (isinstance(ours, bool) or not isinstance(ours, int | float)):
        raise InstanceError("regime ours", f"must be a number or None, got {ours!r}")
    if paper is not None and (isinstance(paper, bool) or not isinstance(paper, int | float | str)):
        raise InstanceError("regime paper", f"must be a number, a text or None, got {paper!r}")
    if holds is not None and not isinstance(holds, bool):
        raise InstanceError("regime holds", f"must be True, False or None, got {holds!r}")
    ours_f = None if ours is None or not math.isfinite(float(ours)) else float(ours)
    return RegimeRow(claim, knob, value, seed, ours_f, paper, holds)


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return repr(v)
    return v


def regimes_csv(rows: list[RegimeRow]) -> str:
    """The text of ``regimes.csv`` (a header alone when there are no rows)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(getattr(r, c)) for c in COLUMNS])
    return buf.getvalue()


def _pairs(rows: list[RegimeRow]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for r in rows:
        if (r.claim, r.knob) not in seen:
            seen.append((r.claim, r.knob))
    return seen


def _ordered_values(rows: list[RegimeRow]) -> list[Any]:
    """Knob values in knob order: ascending when all are numbers, else first-seen order."""
    vals: list[Any] = []
    for r in rows:
        if r.value not in vals:
            vals.append(r.value)
    if all(isinstance(v, int | float) for v in vals):
        vals.sort()
    return vals


def verdict_by_value(rows: list[RegimeRow], claim: str, knob: str) -> list[dict[str, Any]]:
    """Per knob value (in knob order): ``value``, ``median`` / ``lo`` / ``hi`` of ours over
    seeds, ``held`` and ``judged`` seed counts, and ``verdict`` (True, False, ``"split"``, or
    None when no seed was judged)."""
    sel = [r for r in rows if r.claim == claim and r.knob == knob]
    out = []
    for v in _ordered_values(sel):
        at = [r for r in sel if r.value == v]
        xs = [r.ours for r in at if r.ours is not None]
        judged = [r.holds for r in at if r.holds is not None]
        held = sum(judged)
        if not judged:
            verdict: bool | str | None = None
        elif 2 * held > len(judged):
            verdict = True
        elif 2 * held < len(judged):
            verdict = False
        else:
            verdict = "split"
        out.append({"value": v, "median": statistics.median(xs) if xs else None,
                    "lo": min(xs) if xs else None, "hi": max(xs) if xs else None,
                    "held": held, "judged": len(judged), "seeds": len(at), "verdict": verdict})
    return out


def _v(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def crossover(rows: list[RegimeRow], claim: str, knob: str) -> str:
    """One sentence: where the paper's direction holds along ``knob`` and where it flips."""
    per = verdict_by_value(rows, claim, knob)
    if not per:
        return f"{knob}: not mapped"
    yes = [_v(p["value"]) for p in per if p["verdict"] is True]
    no = [_v(p["value"]) for p in per if p["verdict"] is False]
    split = [_v(p["value"]) for p in per if p["verdict"] == "split"]
    judged = [p for p in per if p["verdict"] is not None]
    if not judged:
        return f"{knob}: not judged at any value"
    parts = []
    if yes and not no and not split:
        parts.append(f"holds at every {knob} mapped ({', '.join(yes)})")
    elif no and not yes and not split:
        parts.append(f"holds at no {knob} mapped ({', '.join(no)})")
    else:
        if yes:
            parts.append(f"holds at {knob} = {', '.join(yes)}")
        if no:
            parts.append(f"not at {', '.join(no)}")
        if split:
            parts.append(f"split seeds at {', '.join(split)}")
        flips = [f"{_v(a['value'])} and {_v(b['value'])}" for a, b in zip(judged, judged[1:], strict=False)
                 if a["verdict"] != b["verdict"]]
        if flips:
            parts.append("flips between " + "; ".join(flips))
    return "; ".join(parts)


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def regime_section(rows: list[RegimeRow]) -> str:
    """The report's "Regime map" markdown: per (claim, knob) a table and its crossover."""
    from ..report import markdown_table

    if not rows:
        return ""
    lines = ["`regimes.csv` holds one row per (claim, knob, value, seed). At each value the "
             "verdict is the majority of the seeds judged there.", ""]
    for claim, knob in _pairs(rows):
        per = verdict_by_value(rows, claim, knob)
        paper = next((r.paper for r in rows if r.claim == claim and r.knob == knob and r.paper is not None), None)
        lines += [f"**{claim}** over **{knob}**" + (f" (paper: {_v(paper)})" if paper is not None else "")
                  + f": {crossover(rows, claim, knob)}.", ""]
        table = [{knob: _v(p["value"]),
                  "ours (median, min-max)": (f"{_num(p['median'])} ({_num(p['lo'])} to {_num(p['hi'])})"
                                             if p["median"] is not None else "-"),
                  "holds": (f"{p['held']} of {p['judged']} seeds" if p["judged"] else "not judged")}
                 for p in per]
        lines += [markdown_table(table, [knob, "ours (median, min-max)", "holds"]), ""]
    return "\n".join(lines)


def regime_figures(rows: list[RegimeRow]):
    """One matplotlib figure per knob: ``[(figure, name, caption)]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    knobs: list[str] = []
    for r in rows:
        if r.knob not in knobs:
            knobs.append(r.knob)
    for knob in knobs:
        sel = [r for r in rows if r.knob == knob]
        values = _ordered_values(sel)
        numeric = all(isinstance(v, int | float) for v in values)
        pos = {v: (float(v) if numeric else float(i)) for i, v in enumerate(values)}
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        for i, claim in enumerate(dict.fromkeys(r.claim for r in sel)):
            per = [p for p in verdict_by_value(sel, claim, knob) if p["median"] is not None]
            if not per:
                continue
            color = f"C{i % 10}"
            xs = [pos[p["value"]] for p in per]
            ys = [p["median"] for p in per]
            err = [[p["median"] - p["lo"] for p in per], [p["hi"] - p["median"] for p in per]]
            ax.errorbar(xs, ys, yerr=err, color=color, capsize=3, lw=1.2, label=claim[:60])
            for p, x, y in zip(per, xs, ys, strict=True):
                ax.plot([x], [y], "o", color=color, mfc=color if p["verdict"] is True else "white", ms=6)
            paper = next((r.paper for r in sel if r.claim == claim and isinstance(r.paper, int | float)), None)
            if paper is not None:
                ax.axhline(float(paper), color=color, ls="--", lw=0.8)
        if not numeric:
            ax.set_xticks([pos[v] for v in values], [str(v) for v in values])
        ax.set_xlabel(knob)
        ax.set_ylabel("ours (median, min-max over seeds)")
        ax.set_title(f"regime map: {knob} (filled: the paper's direction holds)", fontsize=9)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        slug = "".join(c if c.isalnum() else "-" for c in knob.lower()).strip("-") or "knob"
        figs.append((fig, f"regime-{slug}",
                     f"Regime map over {knob}: ours per claim (median, min-max over seeds); filled "
                     "markers where the paper's direction holds on most seeds, dashed the paper's number."))
    return figs
