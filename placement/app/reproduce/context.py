"""What a reproduction records and how ``report.md`` is written (app layer).

A paper's module calls, on the :class:`Context` it receives:

- :meth:`Context.simulate` to run a policy on a :class:`~placement.sim.instance.SimInstance`;
  the run's ``instance.json``, ``log.json``, ``jobs.csv`` and ``summary.json`` go to
  ``logs/<name>/`` and the log is checked with ``replay_check`` at once;
- :meth:`Context.row` for every number a claim is computed from (one row per run and seed;
  they become ``results.parquet`` / ``results.csv``);
- :meth:`Context.judge` once per claim of the paper's :class:`~.claims.PaperSpec`, with ours as one
  value per seed and each of the claim's preconditions measured per seed: the verdict is
  :func:`~.claims.verdict`'s, one of seven categories (see :mod:`.claims`), never the module's own;
  :meth:`Context.report_measure` for a number the paper does not report (shown, not judged);
- :meth:`Context.regime` for each point of a regime map (one claim, knob, value and seed; see
  :mod:`.regimes`), which becomes ``regimes.csv``, one figure per knob and the report's
  "Regime map" section; :meth:`Context.crossover` says where a claim flips along a knob;
- :meth:`Context.calibrate` for each knob fitted to the paper's *baseline* or *set-up* numbers (one
  row of ``calibration.csv``: parameter, value, target, paper, ours, the relative error ours/paper - 1,
  the absolute difference, the knob's tolerance and the row's status: ``converged``, ``not
  converged`` or ``at the grid's edge``; the report's "Calibration" section);
- the spec's choices become ``choices.csv`` (choice, value, how chosen, the claims it affects), and
  the report lists, per claim, the ``ours, not fitted`` choices it depends on;
- :meth:`Context.figure` for a matplotlib figure, :meth:`Context.section` for a free-form
  markdown section (a table of the set-up, a sensitivity), :meth:`Context.note` for a
  set-up line shown at the top.

``claims.json`` carries, per claim, its verdict, the paper's range, source, role, the
preconditions with their measured values and what it depends on; ``placement reproduce`` prints
the counts per category.
"""

from __future__ import annotations

import io
import json
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...io import write_bytes, write_text
from ..report import markdown_table
from .claims import PaperSpec, calibration_status, count_verdicts, judge_preconditions, verdict
from .regimes import RegimeRow, check_row, crossover, regime_figures, regime_section, regimes_csv

__all__ = ["Claim", "Context", "spread", "fmt_spread", "write_calibration", "CALIBRATION_COLUMNS",
           "CHOICE_COLUMNS", "choices_csv", "SpeculativePass"]

CALIBRATION_COLUMNS = ("parameter", "value", "target", "paper", "ours", "error", "abs_error", "tolerance",
                       "status")
CHOICE_COLUMNS = ("choice", "value", "how", "affects", "derived_from")


def write_calibration(out: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``out/calibration.csv`` (:data:`CALIBRATION_COLUMNS`, one row per fitted knob, target
    and seed: the value chosen, the baseline number it was fitted to, the paper's and ours, the
    relative error ours/paper - 1, the absolute difference, the tolerance and the status); atomic."""
    import csv

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CALIBRATION_COLUMNS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({c: _cell(r.get(c)) for c in CALIBRATION_COLUMNS})
    write_text(out / "calibration.csv", buf.getvalue())


def part_of(run_name: str) -> str:
    """The part of a run for "Time per part": the run name's first ``-``-separated token, the
    second when the first is a seed (``s3-fig8-private`` -> ``fig8``)."""
    tokens = run_name.split("-")
    if len(tokens) > 1 and tokens[0][:1] == "s" and tokens[0][1:].isdigit():
        return tokens[1]
    return tokens[0]


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


def choices_csv(spec: PaperSpec | None) -> str:
    """The text of ``choices.csv``: one row per unpublished choice of the paper's spec."""
    import csv

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CHOICE_COLUMNS)
    for ch in spec.choices if spec is not None else ():
        w.writerow([ch.name, json.dumps(ch.value) if not isinstance(ch.value, str) else ch.value, ch.how,
                    " ".join(ch.affects), " ".join(ch.derived_from)])
    return buf.getvalue()


class SpeculativePass(Exception):
    """Raised by :meth:`Context.settle` to end a speculative ``--workers`` pass (:mod:`.parallel`
    runs another; serially it is never raised)."""


@dataclass
class Claim:
    """One claim of the paper and ours beside it, with the contract's verdict."""

    claim: str                     # what the paper says, in its words where possible
    source: str                    # figure / table / section
    paper: str                     # the paper's number, as text
    ours: list[float | None]       # one value per seed (None: not measured on that seed)
    unit: str = ""                 # printed after the number ("%", " h", "x")
    scale: float = 1.0             # multiply before printing (0.01 -> %: 100)
    verdict: str | None = None     # one of claims.VERDICTS; None only for a row recorded without a spec
    detail: str = ""               # why: the range it was judged against, the failed precondition...
    key: str = ""                  # the ClaimSpec's key
    range: tuple[float, float] | None = None   # the paper's range
    role: str = "claim"
    metric: str = ""
    baseline: str = ""
    regime: str = ""
    window: str = ""
    reading: str = ""              # which reading of a two-reading choice this row runs
    preconditions: list[dict[str, Any]] = field(default_factory=list)
    depends_on: list[dict[str, Any]] = field(default_factory=list)
    rule: str = ""                 # how the verdict is decided (the verdict function's terms)
    difference: str = ""           # the set-up difference that explains a gap
    decided_by: str = ""           # a single job or seed that decides the figure, when one does
    legacy_holds: bool | None = None   # a module's own rule, for rows recorded with Context.claim

    @property
    def holds(self) -> bool | None:
        """``True`` for ``holds``, ``False`` for ``no`` and ``direction only``, else ``None``."""
        if self.verdict is None:
            return self.legacy_holds
        return {"holds": True, "no": False, "direction only": False}.get(self.verdict)

    def ours_text(self) -> str:
        return fmt_spread(self.ours, self.unit, self.scale)

    def document(self) -> dict[str, Any]:
        """This claim's ``claims.json`` row."""
        return {"key": self.key, "claim": self.claim, "source": self.source, "paper": self.paper,
                "range": None if self.range is None else [_json_num(x) for x in self.range], "role": self.role,
                "metric": self.metric, "baseline": self.baseline, "regime": self.regime, "window": self.window,
                "reading": self.reading, "ours": self.ours, "ours_text": self.ours_text(), "verdict": self.verdict,
                "detail": self.detail, "holds": self.holds, "preconditions": self.preconditions,
                "depends_on": self.depends_on, "rule": self.rule, "difference": self.difference,
                "decided_by": self.decided_by}


def _json_num(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


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
    spec: PaperSpec | None = None   # the paper's claims, numbers, knobs and choices (.claims)
    measures: list[Claim] = field(default_factory=list)   # numbers the paper does not report
    # part -> [runs, seconds simulating and replay-checking] (part: the run name up to its first "-")
    timings: dict[str, list[float]] = field(default_factory=dict)

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

    def claim(self, *, holds: bool | None = None, **kw: Any) -> Claim:
        """Record a claim judged by a module's own rule (``holds``), outside the contract: its
        verdict stays empty. Paper modules use :meth:`judge`; this serves throwaway reproductions."""
        c = Claim(legacy_holds=holds, **kw)
        self.claims.append(c)
        return c

    def _spec(self) -> PaperSpec:
        if self.spec is None:
            from ...errors import InstanceError

            raise InstanceError(f"reproduction {self.paper}", "declares no PaperSpec (Reproduction.spec)")
        return self.spec

    def knob_status(self, name: str) -> str:
        """A knob's calibration status over the rows recorded so far (:func:`.claims.calibration_status`)."""
        return calibration_status(r for r in self.calibration if r.get("knob") == name)

    def judge(self, key: str, ours: list[float | None], *, measured: dict[str, list[float | None]] | None = None,
              comparable: bool = True, not_comparable: str = "", reading: str = "", claim: str | None = None,
              difference: str = "", decided_by: str = "", depends_on: tuple[str, ...] | None = None) -> Claim:
        """Judge the spec's claim ``key`` on ours (one value per seed) with :func:`.claims.verdict`:
        ``measured`` holds each of its preconditions' values per seed; ``comparable=False`` when
        the compared policies coincide (``not_comparable`` says how); ``reading`` labels a row of a
        two-reading choice (``claim`` overrides the text, e.g. to name the reading); ``depends_on``
        replaces the claim's knobs and choices for this row (a reading that depends on one knob of
        two, each a knob or choice of the spec)."""
        import dataclasses

        from ...errors import InstanceError

        spec = self._spec()
        c = spec.claim(key)
        if depends_on is not None:
            names = {k.name for k in spec.knobs} | {ch.name for ch in spec.choices}
            bad = [d for d in depends_on if d not in names]
            if isinstance(depends_on, str) or bad:
                raise InstanceError(f"claim {key}: depends_on", f"must be knob or choice names of the spec, got {bad or depends_on!r}")
            c = dataclasses.replace(c, depends_on=tuple(depends_on))
        num = spec.by_key[c.number]
        ok, pre = judge_preconditions(c.preconditions, measured or {}, len(ours))
        failed = "; ".join(f"{p['name']} {p['rule']} measured "
                           + ", ".join("-" if v is None else f"{v:.3g}" for v in p["measured"])
                           for p in pre if p["held"] < p["of"])
        deps = []
        bad = []
        for d in c.depends_on:
            if any(k.name == d for k in spec.knobs):
                st = self.knob_status(d)
                deps.append({"name": d, "kind": "knob", "status": st})
                if st != "converged":
                    bad.append(f"{d} ({st})")
        for ch in spec.choices_for(key, c.depends_on):
            deps.append({"name": ch.name, "kind": "choice", "how": ch.how})
        v = verdict(ours, num.lo, num.hi, tolerance=spec.tolerance, null=c.null, kind=c.kind,
                    precondition_ok=ok if c.preconditions else None, failed=failed, comparable=comparable,
                    not_comparable=not_comparable, uncalibrated=bad)
        rule = (f"{c.kind} against {num.as_text()} ({num.source})"
                + (f", no effect at {c.null:g}" if c.kind == "effect" else "")
                + f", tolerance {spec.tolerance:g}")
        row = Claim(claim=claim or c.claim, source=num.source, paper=num.as_text(), ours=list(ours), unit=c.unit,
                    scale=c.scale, verdict=v.category, detail=v.detail, key=key, range=(num.lo, num.hi),
                    role=num.role, metric=c.metric, baseline=c.baseline, regime=c.regime, window=c.window,
                    reading=reading, preconditions=pre, depends_on=deps, rule=rule, difference=difference,
                    decided_by=decided_by)
        self.claims.append(row)
        return row

    def report_measure(self, key: str, ours: list[float | None], *, unit: str = "", scale: float = 1.0,
                       text: str | None = None, difference: str = "") -> Claim:
        """Record a number the paper does not report (the spec's :class:`~.claims.Measure` ``key``):
        shown in the report's "Reported measures", never judged."""
        m = self._spec().measure(key)
        row = Claim(claim=text or m.text, source="ours", paper="-", ours=list(ours), unit=unit, scale=scale,
                    key=key, role="measure", detail=m.why, difference=difference)
        self.measures.append(row)
        return row

    def regime(self, *, claim: str, knob: str, value: float | int | str, seed: int,
               ours: float | None, paper: float | str | None = None, holds: bool | None = None) -> RegimeRow:
        """Record one point of a regime map: ``ours`` for ``claim`` at ``knob = value`` on
        ``seed``, the paper's number and whether the paper's direction holds there."""
        r = check_row(claim, knob, value, seed, ours, paper, holds)
        self.regimes.append(r)
        return r

    def calibrate(self, *, knob: str, value: Any, target: str, ours: float | None, edge: bool = False,
                  label: str = "", paper: float | None = None) -> dict[str, Any]:
        """Record one target of the spec's knob ``knob`` (``calibration.csv``): ``target`` is the key
        of a baseline or set-up number (its middle is the paper's value unless ``paper`` gives the
        value the fit aimed at inside its range), ``ours`` what the fitted set-up gives, ``edge``
        that the value sits on the search grid's edge. The status is ``converged`` when
        ``|ours/paper - 1|`` is within the knob's tolerance, else ``at the grid's edge`` (``edge``)
        or ``not converged``; a target whose role is ``claim`` is an error (a leak)."""
        from ...errors import InstanceError

        spec = self._spec()
        k = spec.knob(knob)
        if target not in k.targets:
            raise InstanceError(f"knob {knob}: target", f"{target!r} is not one of its targets {list(k.targets)}")
        num = spec.by_key[target]
        if num.role == "claim":
            raise InstanceError(f"knob {knob}: target", f"{target!r} is a claim number: a knob is fitted to baselines")
        p = num.mid if paper is None else float(paper)
        rel = None if ours is None or p == 0 else ours / p - 1
        absd = None if ours is None else ours - p
        if ours is not None and p == 0:
            ok = abs(ours) <= k.tolerance
        else:
            ok = rel is not None and abs(rel) <= k.tolerance
        status = "converged" if ok else ("at the grid's edge" if edge else "not converged")
        r = {"parameter": knob + (f" ({label})" if label else ""), "knob": knob, "value": value,
             "target": f"{num.as_text()} ({num.source}; {target})", "paper": p, "ours": ours, "error": rel,
             "abs_error": absd, "tolerance": k.tolerance, "status": status}
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
        the command exits 1). ``agent``: links shared with CASSINI §4.2 step 3's agent (with
        ``--workers`` too: it is part of the task's call and of its key)."""
        from ..run import run_simulation, write_outputs

        self.say(f"  {name}: {policy} on {len(inst.trace)} jobs, {inst.cluster.n_gpus} GPUs, seed {seed}")
        command = f"placement reproduce {self.paper}: run {name}"
        if self.runner is not None:   # --workers: the outcome from a Dask task (see .parallel)
            out = self.runner(inst, policy, seed, name, options, checks, command, agent)
            res, rows, summ, broken, record = out["res"], out["rows"], out["summ"], out["broken"], out["record"]
            self.last_policy, self.last_links = out["policy"], None
            wall = float(out.get("wall_s", 0.0))
        else:
            built: list = []
            record: dict[str, Any] = {"command": command}
            t0 = time.perf_counter()
            res, rows, summ, broken = run_simulation(inst, policy, seed, options, checks=checks, built=built,
                                                     record=record, agent=agent)
            wall = time.perf_counter() - t0
            self.last_policy, self.last_links = built[0], res.link_model
        part = self.timings.setdefault(part_of(name), [0, 0.0])
        part[0] += 1
        part[1] += wall
        if broken:
            self.broken[name] = broken[:20]
        if keep_log and not self._discarded():  # summary.json's `run`: the policy's options as given and resolved, seed, version
            write_outputs(self.out / "logs" / name, inst, res, rows, summ, broken, plots=False, run=record)
            self.logs += 1
        return res, rows, summ

    def settle(self) -> None:
        """A barrier for ``--workers`` (:mod:`.parallel`): a speculative pass (one that stood in for
        an outcome) ends here, so that the calls after this point, whose arguments come from the
        outcomes before it (a load fitted by earlier runs), are announced only once those are
        real, instead of being submitted with stand-ins' arguments and queued ahead of the calls
        that matter. Serially, and in a pass whose outcomes are all real, a no-op."""
        if self._discarded():
            raise SpeculativePass("a speculative pass ends at ctx.settle()")

    def _discarded(self) -> bool:
        """A pass of ``--workers`` that stood in for an outcome: its files are not kept (.parallel)."""
        return self.runner is not None and getattr(self.runner, "stood_in", 0) > 0

    # -- writing -----------------------------------------------------------------------------
    def finish(self, elapsed_s: float, command: str) -> None:
        """Write ``report.md``, ``claims.json`` (what the README's fidelity table is generated
        from), ``results.csv``, ``results.parquet``, ``regimes.csv`` and the regime figures."""
        self._results()
        write_text(self.out / "regimes.csv", regimes_csv(self.regimes))
        if self.calibration or self.spec is not None:
            write_calibration(self.out, self.calibration)
        if self.spec is not None:
            write_text(self.out / "choices.csv", choices_csv(self.spec))
        for fig, name, caption in regime_figures(self.regimes):
            self.figure(fig, name, caption)
        write_text(self.out / "report.md", self.report_markdown(elapsed_s, command))
        (self.out / "measured").mkdir(exist_ok=True)
        # imported here: `python -m placement.app.reproduce.fidelity` imports this package first
        from .fidelity import measured_fragment

        doc = self.claims_document(elapsed_s, command)
        write_text(self.out / "measured" / f"{self.paper}-reproduce.md", measured_fragment(doc))
        write_text(self.out / "claims.json", json.dumps(doc, indent=1) + "\n")

    def verdict_counts(self) -> dict[str, int]:
        """Claims per verdict category (rows recorded outside the contract count as ``unjudged``)."""
        counts = count_verdicts(c.verdict for c in self.claims if c.verdict is not None)
        legacy = sum(c.verdict is None for c in self.claims)
        return counts | ({"unjudged": legacy} if legacy else {})

    def knob_statuses(self) -> dict[str, str]:
        names = [k.name for k in self.spec.knobs] if self.spec is not None else []
        return {n: self.knob_status(n) for n in names}

    def claims_document(self, elapsed_s: float, command: str) -> dict[str, Any]:
        return {"paper": self.paper, "title": self.title, "command": command, "quick": self.quick,
                "seeds": len(self.seeds), "elapsed_s": round(elapsed_s, 1),
                "replay_ok": not self.broken, "logs": self.logs,
                "tolerance": None if self.spec is None else self.spec.tolerance,
                "counts": self.verdict_counts(), "knobs": self.knob_statuses(),
                "claims": [c.document() for c in self.claims],
                "measures": [c.document() for c in self.measures],
                "time_per_part": {k: {"runs": int(n), "simulation_s": round(t, 1)} for k, (n, t) in self.timings.items()},
                "regimes": [{"claim": c, "knob": k, "crossover": crossover(self.regimes, c, k)}
                            for c, k in dict.fromkeys((r.claim, r.knob) for r in self.regimes)]}

    def claims_table(self) -> str:
        rows = [{"claim": c.claim + (f" [{c.reading}]" if c.reading else ""), "paper": f"{c.paper} ({c.source})",
                 "ours": c.ours_text(), "verdict": _verdict_text(c),
                 "why": "; ".join(x for x in (c.detail, c.difference, c.decided_by) if x) or "-"}
                for c in self.claims]
        return markdown_table(rows, ["claim", "paper", "ours", "verdict", "why"]) if rows else ""

    def counts_line(self) -> str:
        """``3 holds, 1 direction only, 2 off-regime`` (every category with a claim)."""
        return ", ".join(f"{n} {k}" for k, n in self.verdict_counts().items()) or "no claims"

    def report_markdown(self, elapsed_s: float, command: str) -> str:
        lines = [f"# {self.title}: the paper's claims, on its own terms", "",
                 f"Run: `{command}`, {elapsed_s:.0f} s, seeds {self.seeds[0]}-{self.seeds[-1]}"
                 f" ({len(self.seeds)}){', quick' if self.quick else ''}. Ours is the median over seeds "
                 "with min-max; every number below is recomputed from `results.csv` and the logs "
                 "under `logs/`.", ""]
        lines += [f"- {n}" for n in self.notes]
        lines += ["", "## Claims", "", f"Verdicts: {self.counts_line()}"
                  + (f" (one verdict function, tolerance {self.spec.tolerance:g}: see "
                     "`placement/app/reproduce/claims.py`)." if self.spec is not None else "."), "",
                  self.claims_table(), ""]
        rules = [(i + 1, c) for i, c in enumerate(self.claims) if c.rule]
        if rules:
            lines += ["How each verdict is decided:", ""]
            lines += [f"{i}. {c.claim}: {c.rule}" + _depends_text(c) for i, c in rules] + [""]
        if self.measures:
            rows = [{"measure": m.claim, "ours": m.ours_text(), "why reported": m.detail or "-"} for m in self.measures]
            lines += ["## Reported measures", "", "Numbers the paper does not report as claims: shown, not judged.",
                      "", markdown_table(rows, ["measure", "ours", "why reported"]), ""]
        if self.calibration:
            rows = [{c: ("-" if r.get(c) is None else _num(r[c]) if isinstance(r.get(c), float) else str(r[c]))
                     for c in CALIBRATION_COLUMNS} for r in self.calibration]
            knobs = self.knob_statuses()
            lines += ["## Calibration", "", "Fitted to the paper's baseline and set-up numbers (`calibration.csv`; "
                      "error = ours/paper - 1)" + (": " + "; ".join(f"{k}: {v}" for k, v in knobs.items())
                                                   if knobs else "") + ".", "",
                      markdown_table(rows, list(CALIBRATION_COLUMNS)), ""]
        if self.spec is not None and self.spec.choices:
            rows = [{"choice": ch.name, "value": str(ch.value), "how chosen": ch.how,
                     "claims": ", ".join(ch.affects) or "-"} for ch in self.spec.choices]
            lines += ["## Choices", "", "Every unpublished choice and how it was chosen (`choices.csv`):", "",
                      markdown_table(rows, ["choice", "value", "how chosen", "claims"]), ""]
        for title, md in self.sections:
            lines += [f"## {title}", "", md.rstrip(), ""]
        if self.regimes:
            lines += ["## Regime map", "", regime_section(self.regimes).rstrip(), ""]
        if self.figures:
            lines += ["## Figures", ""]
            lines += [f"![{cap}]({rel})\n\n{cap}\n" for rel, cap in self.figures]
        if self.timings:
            lines += ["## Time per part", "", self.timing_text(elapsed_s), ""]
        lines += ["## Logs", "",
                  f"{self.logs} simulation logs under `logs/`, each checked with `replay_check`: "
                  + ("no violation." if not self.broken else
                     f"{len(self.broken)} failing: " + "; ".join(f"{k}: {v[0]}" for k, v in self.broken.items())),
                  ""]
        return "\n".join(lines)

    def timing_text(self, elapsed_s: float) -> str:
        """Seconds spent simulating (and replay-checking) per part of the run (:func:`part_of`).
        With ``--workers`` the runs overlap, so their sum can pass the elapsed time."""
        total = sum(t for _n, t in self.timings.values())
        rows = [{"part": k, "runs": int(n), "simulation s": f"{t:,.1f}", "share": f"{t / total:.0%}" if total else "-"}
                for k, (n, t) in sorted(self.timings.items(), key=lambda kv: -kv[1][1])]
        return (f"Elapsed {elapsed_s:,.0f} s; {total:,.0f} s of it simulating and replay-checking, summed over runs "
                "(with `--workers` the runs overlap), the rest judging, writing, bounds and figures. A part is a "
                "run name's first `-`-separated token (its second after a seed's `s<n>`).\n\n" + markdown_table(rows, ["part", "runs", "simulation s", "share"]))

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


def _verdict_text(c: Claim) -> str:
    if c.verdict is None:
        return {True: "yes (own rule)", False: "no (own rule)", None: "not judged"}[c.legacy_holds]
    return c.verdict


def _depends_text(c: Claim) -> str:
    unfitted = [d["name"] for d in c.depends_on if d.get("kind") == "choice" and str(d.get("how", "")).startswith("ours")]
    knobs = [f"{d['name']} ({d['status']})" for d in c.depends_on if d.get("kind") == "knob"]
    parts = ([f"knobs: {', '.join(knobs)}"] if knobs else []) + ([f"ours, not fitted: {', '.join(unfitted)}"]
                                                               if unfitted else [])
    return (" -- " + "; ".join(parts)) if parts else ""


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
