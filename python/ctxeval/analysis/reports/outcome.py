"""The outcome view (``ctxeval report --view outcome``): each context metric of each run against
whether its instances were resolved — AUROC with its interval, the point-biserial correlation,
the resolution rate per quantile bin, and Spearman's ρ between the metrics.

The statistics are :func:`ctxeval.analysis.outcome.outcome_table`'s; this module lays them out as
tables for every format, and as the JSON ``{"outcome": [{"run", "metric", "n", "n_pass", "rate",
"auroc", "auroc_ci", "r", "r_p", "bins", ...}], ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..correlations import Correlations, metric_correlations
from ..correlations import note as correlation_note
from ..outcome import OutcomeTable, outcome_table
from .table import Cell, Column, Report, Row, Table

COLUMNS: tuple[Column, ...] = (
    Column("n", "n", None, 0, "instances with a resolved status and a value"),
    Column("n_pass", "resolved", None, 0, "resolved instances among them"),
    Column("rate", "rate", None, 3, "resolution rate"),
    Column("mean_pass", "mean res.", None, 3, "mean of the metric over resolved instances"),
    Column("mean_fail", "mean unres.", None, 3, "mean over unresolved instances"),
    Column("auroc", "AUROC", None, 3,
           "P(a resolved instance has the higher value), ties counted half"),
    Column("r", "r", None, 3, "point-biserial correlation with resolution"),
    Column("r_p", "p", None, 4, "two-sided p-value of r"),
    Column("r_p_holm", "p Holm", None, 4, "p Holm-adjusted over every run and metric"),
    Column("n_null", "null", None, 0, "labelled instances whose value is null (left out)"),
    Column("reason", "note", None, 0, "why the association statistics are null"),
)

BIN_COLUMNS: tuple[Column, ...] = (
    Column("lo", "from", None, 3, "smallest value in the bin"),
    Column("hi", "to", None, 3, "largest value in the bin"),
    Column("mean", "mean", None, 3, "mean value in the bin"),
    Column("n", "n", None, 0, "instances"),
    Column("n_pass", "resolved", None, 0, "resolved instances"),
    Column("rate", "rate", None, 3, "resolution rate in the bin"),
)


@dataclass(slots=True)
class OutcomeReport(Report):
    """A report whose JSON is the outcome view's own document rather than its tables."""

    outcome: OutcomeTable | None = None
    correlations: Correlations | None = None

    def to_json(self) -> dict[str, Any]:
        t = self.outcome
        assert t is not None
        return {
            "view": "outcome",
            "outcome": [e.to_json() for e in t.entries],
            "runs": [{"run": r.run, "scored": r.scored, "labelled": r.labelled,
                      "resolved": r.resolved, "errors": r.errors} for r in t.runs],
            "metrics": list(t.metrics),
            "unmatched_metrics": list(t.unmatched),
            "correlations": self.correlations.to_json() if self.correlations else None,
            "resamples": t.resamples, "level": t.level, "seed": t.seed, "bins": t.bins,
            "notes": list(self.notes),
        }


def _outcome_rows(t: OutcomeTable) -> list[Row]:
    rows = []
    for e in t.entries:
        cells = {
            "n": Cell(e.n, e.n), "n_pass": Cell(e.n_pass, e.n),
            "rate": Cell(e.rate, e.n),
            "mean_pass": Cell(e.mean_pass, e.n_pass),
            "mean_fail": Cell(e.mean_fail, e.n - e.n_pass),
            "auroc": Cell(e.auroc, e.n, ci=e.auroc_ci),
            "r": Cell(e.r, e.n), "r_p": Cell(e.r_p, e.n), "r_p_holm": Cell(e.r_p_holm, e.n),
            "n_null": Cell(e.n_null, e.n_null), "reason": Cell(e.reason or "", e.n),
        }
        rows.append(Row({"run": e.run, "metric": e.metric}, cells))
    return rows


def _bin_rows(t: OutcomeTable) -> list[Row]:
    rows = []
    for e in t.entries:
        for b in e.bins:
            rows.append(Row({"run": e.run, "metric": e.metric, "bin": str(b["bin"] + 1)},
                            {k: Cell(b[k], b["n"]) for k in ("lo", "hi", "mean", "n",
                                                             "n_pass", "rate")}))
    return rows


def _correlation_table(c: Correlations) -> Table:
    cols = [Column(str(i + 1), str(i + 1), None, 2, m) for i, m in enumerate(c.metrics)]
    rows = []
    for i, m in enumerate(c.metrics):
        rows.append(Row({"metric": f"{i + 1} {m}"},
                        {str(j + 1): Cell(c.rho[i][j], c.n[i][j])
                         for j in range(len(c.metrics))}))
    return Table("correlations", "Spearman correlation between metrics", [("metric", "metric")],
                 cols, rows, mark_best=False, notes=[correlation_note(c)])


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _notes(t: OutcomeTable) -> list[str]:
    notes = []
    if not any(r.labelled for r in t.runs):
        notes.append("no row records a resolved status: give the benchmark's report to "
                     "'ctxeval evaluate --results' (SWE-bench harness or sb-cli reports, "
                     "run summaries with resolved ids)")
    for r in t.runs:
        line = (f"run {r.run}: {_plural(r.scored, 'scored row')}, {r.labelled} with a resolved "
                f"status ({r.resolved} resolved")
        line += f", rate {r.resolved / r.labelled:.3f})" if r.labelled else ")"
        left = r.scored - r.labelled
        if left:
            line += f"; {left} without a resolved status left out (never taken as unresolved)"
        if r.errors:
            line += f"; {_plural(r.errors, 'evaluator error')} left out"
        notes.append(line)
    notes.append(
        f"AUROC: the probability that a resolved instance has the higher value, ties counted "
        f"half (below 0.5: lower values go with resolution); [lo, hi]: {t.level:.0%} stratified "
        f"percentile bootstrap, {t.resamples} resamples, seed {t.seed}")
    notes.append("point-biserial correlation r with resolution; p: two-sided (Student's t, "
                 "n - 2 degrees of freedom); p Holm: adjusted over every run and metric shown")
    notes.append("null statistics: absent (no row has the metric), n < 5, all resolved, none "
                 "resolved, constant metric; null values (e.g. the first gold step when the gold "
                 "was never shown) are left out and counted under 'null'")
    notes.append(f"bins: {t.bins} quantile bins of each metric by its mid-distribution "
                 "function, ties never split; empty bins left out")
    if t.unmatched:
        notes.append("no row has " + ", ".join(t.unmatched)
                     + (" (ranking metrics are written by evaluations that rank)"
                        if any(m.startswith("ranking") for m in t.unmatched) else ""))
    return notes


def build_outcome(rows: Sequence[Mapping[str, Any]], *,
                  metrics: str | Sequence[str] | None = None, resamples: int = 10000,
                  seed: int = 0, level: float = 0.95, bins: int = 5,
                  correlations: bool = True) -> OutcomeReport:
    """The outcome view of result rows: the per-(run, metric) table, the bins and (with
    ``correlations``) Spearman's ρ between the metrics, pooled over the rows. ``metrics``: row
    paths or patterns (a list, or one comma-separated string); None for the defaults."""
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    t = outcome_table(rows, metrics=metrics, resamples=resamples, seed=seed, level=level,
                      bins=bins)
    main = Table("outcome", "Context and outcome", [("run", "run"), ("metric", "metric")],
                 list(COLUMNS), _outcome_rows(t), mark_best=False)
    binned = Table("outcome_bins", "Resolution rate by metric bin",
                   [("run", "run"), ("metric", "metric"), ("bin", "bin")], list(BIN_COLUMNS),
                   _bin_rows(t), mark_best=False)
    tables = [main, binned]
    corr = metric_correlations(rows, t.metrics) if correlations and t.metrics else None
    if corr is not None:
        tables.append(_correlation_table(corr))
    return OutcomeReport("outcome", tables, _notes(t),
                         meta={"resamples": resamples, "seed": seed, "level": level,
                               "bins": bins},
                         outcome=t, correlations=corr)


def has_resolved(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row records a resolved status (the outcome view has something to say)."""
    return any(isinstance(r.get("resolved"), bool) for r in rows)
