"""Context and outcome: does what an agent saw go with whether it resolved the task?

For each run and each context metric (final coverage, precision and F1 per granularity,
AUC-coverage, redundancy, EditLoc, the step of the first gold view, steps, tokens, cost, and
the ranking metrics where the rows have them), over the run's instances that record a resolved
status and a value of the metric:

- ``n`` and ``n_pass`` (instances, resolved ones) and the resolution ``rate``;
- ``n_labelled``: the run's scored rows with a resolved status, with a value or not (the issue's
  n): ``n + n_null``, except for an ``absent`` metric (``n = n_null = 0``);
- the metric's mean over resolved and over unresolved instances;
- ``auroc``: the probability that a resolved instance has the higher value, ties counted half
  (Mann–Whitney), with a stratified percentile bootstrap interval ``auroc_ci``;
- ``r``: the point-biserial correlation with resolution, its two-sided p-value ``r_p`` and
  ``r_p_holm``, Holm-adjusted over every (run, metric) of the view;
- ``bins``: the resolution rate per quantile bin of the metric (ties never split).

Rows without a resolved status are left out and counted (``n_unlabelled``), never taken as
unresolved; labelled rows whose value is null are left out and counted (``n_null``: e.g. the
first gold step of an instance whose gold was never shown). Evaluator error rows are left out;
agent failures are scored rows like any other. When the association statistics are undefined
they are null with a ``reason``: ``"absent"`` (no row has the metric), ``"n < 5"``, ``"all
resolved"``, ``"none resolved"``, ``"constant metric"``.

Which metrics measure the same thing is :mod:`ctxeval.analysis.correlations`'. The arithmetic
is the native core's (:mod:`ctxeval.analysis.stats`, ``docs/statistics.md``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..evaluation.rows import field_value, has_path
from ..model import PAPER_RANKING
from . import stats

__all__ = [
    "DEFAULT_METRICS",
    "OutcomeEntry",
    "OutcomeTable",
    "RunCounts",
    "numeric_leaves",
    "outcome_table",
    "resolve_metrics",
]

GRANS = ("file", "symbol", "span", "line")

#: The metrics of the view by default, each kept when some row has it: the context metrics,
#: and of the ranking block (ranked localisation) the localisation papers' table, the steps and
#: input tokens spent before the first gold file, and the recall of the first lines shown.
DEFAULT_METRICS: tuple[str, ...] = (
    *(f"final.{g}.{s}" for g in GRANS for s in ("coverage", "precision", "f1")),
    *(f"trajectory.auc_coverage.{g}" for g in GRANS),
    *(f"trajectory.redundancy.{g}" for g in GRANS),
    "editloc.recall", "editloc.precision", "editloc.f1",
    "editloc.file.recall", "editloc.file.precision", "editloc.file.f1",
    *(f"trajectory.first_gold_step.{g}" for g in GRANS),
    "num_steps", "usage.input_tokens", "usage.output_tokens", "usage.cost",
    *(f"ranking.{level}.{key}" for level, key in PAPER_RANKING),
    "ranking.before_first_gold.file.steps_before", "ranking.before_first_gold.file.input_tokens",
    "ranking.budget.line",
)

#: Minimum instances for the association statistics (the core's rule, repeated for the docs).
MIN_N = 5

_PATTERN_CHARS = frozenset("*?[")


def _is_pattern(metric: str) -> bool:
    return bool(_PATTERN_CHARS & set(metric))


def number(v: Any) -> float | None:
    """A finite number as float; None, booleans, text and non-finite values are not values."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def is_error(row: Mapping[str, Any]) -> bool:
    """An evaluator error row (``status: error``, or an ``error`` key in a row of the
    ContextBench evaluator, which has no status): left out of every statistic."""
    status = row.get("status")
    return status == "error" or (status is None and row.get("error") is not None)


def numeric_leaves(row: Mapping[str, Any], prefix: str = "") -> Iterable[str]:
    """The dotted paths of a row's numeric (or null) leaves, per-step lists left out."""
    for k, v in row.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping):
            yield from numeric_leaves(v, path + ".")
        elif v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)):
            yield path


def resolve_metrics(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str] | None
                    ) -> tuple[list[str], list[str]]:
    """(the metric paths of the view, the requested items that named nothing).

    ``metrics=None`` takes :data:`DEFAULT_METRICS`, keeping the exact paths some row has.
    Patterns expand to the numeric leaves of the rows, in sorted order. Exact paths the user
    names are kept even when no row has them (their entries say ``absent``).
    """
    default = metrics is None
    items = list(DEFAULT_METRICS if default else metrics or ())
    leaves: list[str] | None = None
    out: list[str] = []
    unmatched: list[str] = []
    for item in items:
        if _is_pattern(item):
            if leaves is None:
                found: dict[str, None] = {}
                for r in rows:
                    if not is_error(r):
                        found.update(dict.fromkeys(numeric_leaves(r)))
                leaves = sorted(found)
            hits = [p for p in leaves if fnmatch.fnmatchcase(p, item) and p not in out]
            if not hits:
                unmatched.append(item)
            out += hits
        elif item not in out:
            if default and not any(has_path(r, item) for r in rows if not is_error(r)):
                unmatched.append(item)
                continue
            out.append(item)
    return out, unmatched


@dataclass(frozen=True, slots=True)
class OutcomeEntry:
    """One metric of one run against resolution (see the module doc for each field)."""

    run: str
    metric: str
    n: int
    n_pass: int
    rate: float | None
    auroc: float | None
    auroc_ci: tuple[float, float] | None
    r: float | None
    r_p: float | None
    bins: list[dict[str, Any]]
    mean_pass: float | None = None
    mean_fail: float | None = None
    r_p_holm: float | None = None
    n_null: int = 0
    n_unlabelled: int = 0
    reason: str | None = None
    n_labelled: int = 0  # scored rows with a resolved status: n + n_null (not if absent)

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "metric": self.metric, "n": self.n, "n_pass": self.n_pass,
                "rate": self.rate, "auroc": self.auroc,
                "auroc_ci": list(self.auroc_ci) if self.auroc_ci is not None else None,
                "r": self.r, "r_p": self.r_p, "bins": [dict(b) for b in self.bins],
                "mean_pass": self.mean_pass, "mean_fail": self.mean_fail,
                "r_p_holm": self.r_p_holm, "n_labelled": self.n_labelled,
                "n_null": self.n_null, "n_unlabelled": self.n_unlabelled,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class RunCounts:
    """What a run's rows were, before any metric: scored rows, those with a resolved status
    and the resolved ones, and the evaluator errors left out."""

    run: str
    scored: int
    labelled: int
    resolved: int
    errors: int


@dataclass(slots=True)
class OutcomeTable:
    """The entries of the view (runs in order of appearance, then metrics in order) and what
    they were computed with."""

    entries: list[OutcomeEntry]
    runs: list[RunCounts]
    metrics: list[str]
    unmatched: list[str] = field(default_factory=list)
    resamples: int = 10000
    level: float = 0.95
    seed: int = 0
    bins: int = 5


def _run_label(row: Mapping[str, Any], several_presets: bool) -> str:
    run = str(row.get("run") or "-")
    return f"{run} [{row.get('preset') or '?'}]" if several_presets else run


def _by_run(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Rows per run in order of appearance; rows of several presets are never pooled (the run
    label names the preset then, as in the other reports)."""
    presets = {r.get("preset") for r in rows if r.get("preset")}
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(_run_label(r, len(presets) > 1), []).append(r)
    return out


def _label(row: Mapping[str, Any]) -> bool | None:
    v = row.get("resolved")
    return v if isinstance(v, bool) else None


def outcome_table(rows: Sequence[Mapping[str, Any]], *, metrics: Sequence[str] | None = None,
                  resamples: int = 10000, seed: int = 0, level: float = 0.95,
                  bins: int = 5) -> OutcomeTable:
    """The outcome view's statistics of result rows (see the module doc)."""
    if resamples < 1:
        raise ValueError(f"number of resamples must be at least 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")
    if bins < 1:
        raise ValueError(f"number of bins must be at least 1, got {bins}")
    paths, unmatched = resolve_metrics(rows, metrics)
    runs: list[RunCounts] = []
    # run, metric, n_labelled, n_null, n_unlabelled, absent
    pending: list[tuple[str, str, int, int, int, bool]] = []
    items: list[tuple[list[float], list[bool]]] = []
    for run, members in _by_run(rows).items():
        scored = [r for r in members if not is_error(r)]
        labelled = [(r, lab) for r in scored if (lab := _label(r)) is not None]
        runs.append(RunCounts(run, len(scored), len(labelled),
                              sum(1 for _, lab in labelled if lab), len(members) - len(scored)))
        for metric in paths:
            values: list[float] = []
            labels: list[bool] = []
            nulls = 0
            for r, lab in labelled:
                v = number(field_value(r, metric))  # type: ignore[arg-type]
                if v is None:
                    nulls += 1
                else:
                    values.append(v)
                    labels.append(lab)
            absent = not any(has_path(r, metric) for r in scored)
            pending.append((run, metric, len(labelled), nulls, len(scored) - len(labelled),
                            absent))
            items.append((values, labels))
    got = _core.stats_outcome_many(items, resamples, level, bins, stats.seed_key(seed))
    holm = stats.holm_bonferroni([g["r_p"] for g in got])
    entries = []
    for (run, metric, n_labelled, nulls, unlabelled, absent), g, ph in zip(pending, got, holm,
                                                                           strict=True):
        ci = g["auroc_ci"]
        entries.append(OutcomeEntry(
            run=run, metric=metric, n=g["n"], n_pass=g["n_pass"], rate=g["rate"],
            auroc=g["auroc"], auroc_ci=(ci[0], ci[1]) if ci is not None else None,
            r=g["r"], r_p=g["r_p"], bins=g["bins"], mean_pass=g["mean_pass"],
            mean_fail=g["mean_fail"], r_p_holm=ph, n_null=0 if absent else nulls,
            n_unlabelled=unlabelled, reason="absent" if absent else g["reason"],
            n_labelled=n_labelled))
    return OutcomeTable(entries, runs, paths, unmatched, resamples, level, seed, bins)
