"""What a reproduction records and how ``report.md`` is written (app layer).

A paper's module calls, on the :class:`Context` it receives:

- :meth:`Context.simulate` to run a policy on a :class:`~placement.sim.instance.SimInstance`;
  the run's ``instance.json``, ``log.json``, ``jobs.csv`` and ``summary.json`` go to
  ``logs/<name>/`` and the log is checked with ``replay_check`` at once;
- :meth:`Context.row` for every number a claim is computed from (one row per run and seed;
  they become ``results.parquet`` / ``results.csv``);
- :meth:`Context.claim` once per claim of the paper, with ours as one value per seed;
- :meth:`Context.regime` for each point of a regime map (one claim, knob, value and seed; see
  :mod:`.regimes`), which becomes ``regimes.csv``, one figure per knob and the report's
  "Regime map" section; :meth:`Context.crossover` says where a claim flips along a knob;
- :meth:`Context.calibrate` for each parameter fitted to the paper's *baseline* numbers (one row of
  ``calibration.csv``: parameter, value, target, paper, ours, error; the report's "Calibration"
  section; :func:`write_calibration` writes the file);
- :meth:`Context.figure` for a matplotlib figure, :meth:`Context.section` for a free-form
  markdown section (a table of the set-up, a sensitivity), :meth:`Context.note` for a
  set-up line shown at the top.

A claim *holds* when the reproduction's own rule, stated in the claim's ``rule`` text, says
so (for instance "ours' median is at least half the paper's reduction"); ``None`` means the
claim is reported, not judged (no comparable number exists).
"""

from __future__ import annotations

import io
import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...io import write_bytes, write_text
from ..report import markdown_table
from .regimes import RegimeRow, check_row, crossover, regime_figures, regime_section, regimes_csv

__all__ = ["Claim", "Context", "spread", "fmt_spread", "write_calibration", "CALIBRATION_COLUMNS"]

CALIBRATION_COLUMNS = ("parameter", "value", "target", "paper", "ours", "error")


def write_calibration(out: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``out/calibration.csv`` (:data:`CALIBRATION_COLUMNS`, one row per fitted parameter
    and seed: the value chosen, the baseline number it was fitted to, the paper's and ours, and
    ours minus the paper's); atomic."""
    import csv

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CALIBRATION_COLUMNS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({c: _cell(r.get(c)) for c in CALIBRATION_COLUMNS})
    write_text(out / "calibration.csv", buf.getvalue())


def spread(values: Iterable[float | None]) -> tuple[float, float, float] | None:
    """(median, min, max) of the values that are numbers; ``None`` when there are none.
    The median of an even count is the mean of the middle two."""
    xs = [float(v) for v in values if v is not None and isinstance(v, int | float) and math.isfinite(v)]
    if not xs:
        return None
    return statistics.median(xs), min(xs), max(xs)


def _num(v: float, digits: int = 3) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{max(0, digits - 1 - int(math.floor(math.log10(a))))}f}" if a >= 1e-3 else f"{v:.2g}"


def fmt_spread(values: Sequence[float | None], unit: str = "", scale: float = 1.0) -> str:
    """``median (min-max)`` over seeds, e.g. ``-41.2% (-58.0 to -12.3)``; one value prints alone."""
    s = spread([None if v is None else v * scale for v in values])
    if s is None:
        return "-"
    med, lo, hi = s
    n = sum(v is not None for v in values)
    if n == 1 or lo == hi:
        return f"{_num(med)}{unit}" + (f" (all {n} seeds)" if n > 1 else "")
    return f"{_num(med)}{unit} ({_num(lo)} to {_num(hi)}, {n} seeds)"


@dataclass
class Claim:
    """One claim of the paper and ours beside it."""

    claim: str                     # what the paper says, in its words where possible
    source: str                    # figure / table / section
    paper: str                     # the paper's number, as text
    ours: list[float | None]       # one value per seed (None: not measured on that seed)
    unit: str = ""                 # printed after the number ("%", " h", "x")
    scale: float = 1.0             # multiply before printing (0.01 -> %: 100)
    holds: bool | None = None      # the rule's verdict; None: reported, not judged
    rule: str = ""                 # how `holds` is decided
    difference: str = ""           # the set-up difference that explains a gap
    decided_by: str = ""           # a single job or seed that decides the figure, when one does

    def ours_text(self) -> str:
        return fmt_spread(self.ours, self.unit, self.scale)


@dataclass
class Context:
    """The state of one ``placement reproduce`` run (see the module docstring)."""

    paper: str
    title: str
    out: Path
    quick: bool
    seeds: list[int]
    echo: Callable[[str], None] | None = None
    claims: list[Claim] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    broken: dict[str, list[str]] = field(default_factory=dict)
    logs: int = 0
    last_policy: Any = None
    last_links: Any = None      # the link model of the last run simulated here (None: --workers)
    regimes: list[RegimeRow] = field(default_factory=list)
    calibration: list[dict[str, Any]] = field(default_factory=list)
    runner: Callable[..., dict[str, Any]] | None = None   # computes simulate's outcome (.parallel)

    # -- recording ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        """A progress line (the command prints it; tests pass no echo)."""
        if self.echo is not None:
            self.echo(text)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def row(self, **values: Any) -> dict[str, Any]:
        self.rows.append(values)
        return values

    def claim(self, **kw: Any) -> Claim:
        """Record a claim (the fields of :class:`Claim`; ``ours`` holds one value per seed)."""
        c = Claim(**kw)
        self.claims.append(c)
        return c

    def regime(self, *, claim: str, knob: str, value: float | int | str, seed: int,
               ours: float | None, paper: float | str | None = None, holds: bool | None = None) -> RegimeRow:
        """Record one point of a regime map: ``ours`` for ``claim`` at ``knob = value`` on
        ``seed``, the paper's number and whether the paper's direction holds there."""
        r = check_row(claim, knob, value, seed, ours, paper, holds)
        self.regimes.append(r)
        return r

    def calibrate(self, *, parameter: str, value: Any, target: str, paper: float | None,
                  ours: float | None) -> dict[str, Any]:
        """Record a parameter fitted to a baseline number (``calibration.csv``; error = ours - paper)."""
        err = None if paper is None or ours is None else ours - paper
        r = {"parameter": parameter, "value": value, "target": target, "paper": paper, "ours": ours, "error": err}
        self.calibration.append(r)
        return r

    def crossover(self, claim: str, knob: str) -> str:
        """Where ``claim`` holds along ``knob`` and where it flips (from the rows so far)."""
        return crossover(self.regimes, claim, knob)

    def section(self, title: str, markdown: str) -> None:
        self.sections.append((title, markdown))

    def figure(self, fig, name: str, caption: str) -> str:
        """Save a matplotlib figure as ``figures/<name>.png`` and list it in the report."""
        import matplotlib.pyplot as plt

        rel = f"figures/{name}.png"
        if self._discarded():
            plt.close(fig)
            self.figures.append((rel, caption))
            return rel
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        (self.out / "figures").mkdir(exist_ok=True)
        write_bytes(self.out / rel, buf.getvalue())
        self.figures.append((rel, caption))
        return rel

    def simulate(self, inst, policy: str, seed: int, name: str, options: dict | None = None,
                 keep_log: bool = True, checks=None, agent: bool = False):
        """Run ``policy`` on ``inst`` (the ``placement simulate`` pipeline), write the run under
        ``logs/<name>/`` and check its log with ``replay_check`` (plus ``checks(policy)``, extra
        checks built from the policy object). Returns ``(result, per-job rows, summary)``; the
        policy object is ``self.last_policy``, the engine's link model (``agent``'s rule, its solved
        components cached) ``self.last_links`` (None with ``--workers``); a broken log is recorded (``report.md`` lists it,
        the command exits 1). ``agent``: links shared with CASSINI §4.2 step 3's agent (not with
        ``--workers``: those runs share links without it)."""
        from ..run import run_simulation, write_outputs

        self.say(f"  {name}: {policy} on {len(inst.trace)} jobs, {inst.cluster.n_gpus} GPUs, seed {seed}")
        command = f"placement reproduce {self.paper}: run {name}"
        if self.runner is not None:   # --workers: the outcome from a Dask task (see .parallel)
            out = self.runner(inst, policy, seed, name, options, checks, command)
            res, rows, summ, broken, record = out["res"], out["rows"], out["summ"], out["broken"], out["record"]
            self.last_policy, self.last_links = out["policy"], None
        else:
            built: list = []
            record: dict[str, Any] = {"command": command}
            res, rows, summ, broken = run_simulation(inst, policy, seed, options, checks=checks, built=built,
                                                     record=record, agent=agent)
            self.last_policy, self.last_links = built[0], res.link_model
        if broken:
            self.broken[name] = broken[:20]
        if keep_log and not self._discarded():  # summary.json's `run`: the policy's options as given and resolved, seed, version
            write_outputs(self.out / "logs" / name, inst, res, rows, summ, broken, plots=False, run=record)
            self.logs += 1
        return res, rows, summ

    def _discarded(self) -> bool:
        """A pass of ``--workers`` that stood in for an outcome: its files are not kept (.parallel)."""
        return self.runner is not None and getattr(self.runner, "stood_in", 0) > 0

    # -- writing -----------------------------------------------------------------------------
    def finish(self, elapsed_s: float, command: str) -> None:
        """Write ``report.md``, ``claims.json`` (what the README's fidelity table is generated
        from), ``results.csv``, ``results.parquet``, ``regimes.csv`` and the regime figures."""
        self._results()
        write_text(self.out / "regimes.csv", regimes_csv(self.regimes))
        if self.calibration:
            write_calibration(self.out, self.calibration)
        for fig, name, caption in regime_figures(self.regimes):
            self.figure(fig, name, caption)
        write_text(self.out / "report.md", self.report_markdown(elapsed_s, command))
        write_text(self.out / "claims.json", json.dumps(self.claims_document(elapsed_s, command), indent=1) + "\n")

    def claims_document(self, elapsed_s: float, command: str) -> dict[str, Any]:
        return {"paper": self.paper, "title": self.title, "command": command, "quick": self.quick,
                "seeds": len(self.seeds), "elapsed_s": round(elapsed_s, 1),
                "replay_ok": not self.broken, "logs": self.logs,
                "claims": [{"claim": c.claim, "source": c.source, "paper": c.paper, "ours": c.ours,
                            "ours_text": c.ours_text(), "holds": c.holds, "rule": c.rule,
                            "difference": c.difference, "decided_by": c.decided_by}
                           for c in self.claims],
                "regimes": [{"claim": c, "knob": k, "crossover": crossover(self.regimes, c, k)}
                            for c, k in dict.fromkeys((r.claim, r.knob) for r in self.regimes)]}

    def claims_table(self) -> str:
        rows = [{"claim": c.claim, "paper": f"{c.paper} ({c.source})", "ours": c.ours_text(),
                 "holds": {True: "yes", False: "no", None: "not judged"}[c.holds],
                 "set-up difference": "; ".join(x for x in (c.difference, c.decided_by) if x) or "-"}
                for c in self.claims]
        return markdown_table(rows, ["claim", "paper", "ours", "holds", "set-up difference"]) if rows else ""

    def report_markdown(self, elapsed_s: float, command: str) -> str:
        lines = [f"# {self.title}: the paper's claims, on its own terms", "",
                 f"Run: `{command}`, {elapsed_s:.0f} s, seeds {self.seeds[0]}-{self.seeds[-1]}"
                 f" ({len(self.seeds)}){', quick' if self.quick else ''}. Ours is the median over seeds "
                 "with min-max; every number below is recomputed from `results.csv` and the logs "
                 "under `logs/`.", ""]
        lines += [f"- {n}" for n in self.notes]
        lines += ["", "## Claims", "", self.claims_table(), ""]
        rules = [(i + 1, c) for i, c in enumerate(self.claims) if c.rule]
        if rules:
            lines += ["How each verdict is decided:", ""]
            lines += [f"{i}. {c.claim}: {c.rule}" for i, c in rules] + [""]
        if self.calibration:
            rows = [{c: ("-" if r.get(c) is None else _num(r[c]) if isinstance(r.get(c), float) else str(r[c]))
                     for c in CALIBRATION_COLUMNS} for r in self.calibration]
            lines += ["## Calibration", "", "Fitted to the paper's baseline numbers (`calibration.csv`):", "",
                      markdown_table(rows, list(CALIBRATION_COLUMNS)), ""]
        for title, md in self.sections:
            lines += [f"## {title}", "", md.rstrip(), ""]
        if self.regimes:
            lines += ["## Regime map", "", regime_section(self.regimes).rstrip(), ""]
        if self.figures:
            lines += ["## Figures", ""]
            lines += [f"![{cap}]({rel})\n\n{cap}\n" for rel, cap in self.figures]
        lines += ["## Logs", "",
                  f"{self.logs} simulation logs under `logs/`, each checked with `replay_check`: "
                  + ("no violation." if not self.broken else
                     f"{len(self.broken)} failing: " + "; ".join(f"{k}: {v[0]}" for k, v in self.broken.items())),
                  ""]
        return "\n".join(lines)

    def _results(self) -> None:
        import csv

        import pyarrow as pa
        import pyarrow.parquet as pq

        cols: list[str] = []
        for r in self.rows:
            cols += [k for k in r if k not in cols]
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({c: _cell(r.get(c)) for c in cols})
        write_text(self.out / "results.csv", buf.getvalue())
        table = pa.table({c: _column([r.get(c) for r in self.rows]) for c in cols}) if cols else pa.table({})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        write_bytes(self.out / "results.parquet", sink.getvalue().to_pybytes())


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list | dict):
        return json.dumps(v)
    return v


def _arrow(v: Any) -> Any:
    return json.dumps(v) if isinstance(v, list | dict) else v


def _column(values: list[Any]) -> list[Any]:
    """One Parquet column: lists and mappings as JSON; a column mixing text and numbers (a
    priority level or "all") as text throughout."""
    vals = [_arrow(v) for v in values]
    kinds = {str if isinstance(v, str) else float for v in vals if v is not None}
    return [None if v is None else str(v) for v in vals] if len(kinds) > 1 else vals
