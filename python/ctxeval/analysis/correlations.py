"""Which metrics measure the same thing: Spearman's ρ between every two metrics, pooled over
result rows, each pair over the rows where both metrics are defined.

Used by ``ctxeval compare`` (the metrics it compares, pooled over the rows of every run) and by
the outcome view. A cell is null with a reason below five pairs or when a metric does not vary
in the pairs; the arithmetic (mid-ranks, Pearson on them, the t p-value) is the native core's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..evaluation.rows import field_value
from .outcome import MIN_N, is_error, number

__all__ = ["Correlations", "metric_correlations", "render_correlations"]


@dataclass(frozen=True, slots=True)
class Correlations:
    """Spearman's ρ between every two metrics: ``rho[i][j]``, its two-sided p-value
    ``p[i][j]``, the pairs ``n[i][j]`` and, where ρ is null, why (``reason[i][j]``: ``"n < 5"``,
    ``"constant metric"``); ``rows``: the rows pooled."""

    metrics: list[str]
    rho: list[list[float | None]]
    p: list[list[float | None]]
    n: list[list[int]]
    reason: list[list[str | None]]
    rows: int

    def to_json(self) -> dict[str, Any]:
        return {"method": "spearman", "pooled_rows": self.rows, "metrics": list(self.metrics),
                "rho": self.rho, "p": self.p, "n": self.n, "reason": self.reason}


def _value(row: Mapping[str, Any], metric: str) -> float | None:
    v = field_value(row, metric)  # type: ignore[arg-type]
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    return number(v)


def metric_correlations(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], *,
                        min_n: int = MIN_N) -> Correlations:
    """Spearman's ρ between every two of ``metrics`` over the scored rows of every run
    (evaluator errors left out; ``resolved`` counts as 0/1 when named)."""
    scored = [r for r in rows if not is_error(r)]
    columns = [[_value(r, m) for r in scored] for m in metrics]
    cells = _core.stats_spearman_matrix(columns, min_n)
    k = len(metrics)

    def grid(i: int) -> list[Any]:
        return [[cells[a * k + b][i] for b in range(k)] for a in range(k)]

    return Correlations(list(metrics), grid(0), grid(1), grid(2), grid(3), len(scored))


def _cell(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def note(c: Correlations) -> str:
    return (f"Spearman's rho between the metrics over the {c.rows} scored rows of every run, "
            "each pair over the rows where both are defined; '-': fewer than 5 pairs or a "
            "constant metric; columns are numbered as the rows.")


def render_correlations(c: Correlations, fmt: str) -> str:
    """The matrix as a text table, Markdown or LaTeX (booktabs); columns numbered as rows."""
    k = len(c.metrics)
    nums = [str(i + 1) for i in range(k)]
    labels = [f"{i + 1} {m}" for i, m in enumerate(c.metrics)]
    body = [[_cell(c.rho[i][j]) for j in range(k)] for i in range(k)]
    if fmt == "md":
        out = ["| metric | " + " | ".join(nums) + " |", "|---|" + "---:|" * k]
        out += [f"| `{labels[i]}` | " + " | ".join(body[i]) + " |" for i in range(k)]
        return "\n".join([*out, "", note(c)]) + "\n"
    if fmt == "latex":
        from .reports.latex import escape

        out = [r"\begin{tabular}{l" + "r" * k + "}", r"\toprule",
               "Metric & " + " & ".join(nums) + r" \\", r"\midrule"]
        out += [r"\texttt{" + escape(labels[i]) + "} & "
                + " & ".join(v.replace("-", "--") if v == "-" else f"${v}$" for v in body[i])
                + r" \\" for i in range(k)]
        return "\n".join([*out, r"\bottomrule", r"\end{tabular}", "", "% " + note(c)]) + "\n"
    widths = [max(len("metric"), *(len(x) for x in labels))] + [5] * k
    head = ["metric", *nums]
    lines = ["  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i])
                       for i, h in enumerate(head))]
    lines.append("  ".join("-" * w for w in widths))
    for i in range(k):
        cells = [labels[i].ljust(widths[0])] + [v.rjust(5) for v in body[i]]
        lines.append("  ".join(cells))
    return "\n".join([*lines, note(c)]) + "\n"
