"""Plots (the optional ``ctxeval[plot]`` extra): coverage against step, quality against cost with
the Pareto front, a metric per language, and, where rows record resolution, the outcome view's
resolution rate by metric bin and AUROC per metric (:mod:`.outcome_plots`). The series are pure
functions of the rows; matplotlib is imported only to draw them, without pyplot (no global
backend state)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import CtxevalError
from ..outcome import OutcomeTable, outcome_table
from . import outcome_plots
from .leaderboard import GRANS, CostOptions, build_leaderboard
from .outcome import has_resolved
from .rows import field_value, group_rows, number, scored_rows


class PlotError(CtxevalError):
    """Plots were asked for and cannot be drawn (matplotlib missing)."""


def _matplotlib() -> Any:
    try:
        return importlib.import_module("matplotlib")
    except ImportError as exc:
        raise PlotError("plots need matplotlib: pip install 'ctxeval[plot]'") from exc


def have_matplotlib() -> bool:
    try:
        _matplotlib()
    except PlotError:
        return False
    return True


# ----------------------------------------------------------------------------- series


def coverage_curve(rows: Sequence[dict[str, Any]], gran: str) -> list[float]:
    """Mean cumulative coverage at steps 1..T (T: the longest trajectory), each trajectory's last
    value carried forward; a trajectory with no steps counts 0. Instances whose coverage is null
    at ``gran`` (empty gold) are left out."""
    series: list[list[float]] = []
    for r in rows:
        steps = field_value(r, "trajectory.steps") or []
        if not isinstance(steps, list):
            continue
        covs = [number(field_value(s, f"coverage.{gran}")) for s in steps]
        if any(c is None for c in covs):
            continue
        if not covs and number(field_value(r, f"final.{gran}.coverage")) is None:
            continue
        series.append([c for c in covs if c is not None])
    if not series:
        return []
    length = max(len(s) for s in series)
    if length == 0:
        return []
    padded = [s + [s[-1] if s else 0.0] * (length - len(s)) for s in series]
    return [sum(col) / len(padded) for col in zip(*padded, strict=True)]


def coverage_curves(rows: Sequence[dict[str, Any]], gran: str) -> dict[str, list[float]]:
    """:func:`coverage_curve` per run, runs in order of appearance, errors left out."""
    return {run: coverage_curve(scored_rows(members)[0], gran)
            for (run, _), members in group_rows(rows, None).items()}


@dataclass(frozen=True, slots=True)
class CostPoint:
    run: str
    quality: float
    cost: float
    rank: int | None


def cost_points(rows: Sequence[dict[str, Any]], cost: CostOptions
                ) -> tuple[list[CostPoint], str]:
    """(quality, cost, Pareto rank) per run, from the leaderboard's statistics."""
    rep = build_leaderboard(rows, metrics=["mean_score", "cost", "input_tokens", "pareto"],
                            cost=cost)
    cost_key = str(rep.meta.get("pareto_cost") or "cost")
    pts = []
    for row in rep.tables[0].rows:
        q, c = row.cells["mean_score"].value, row.cells[cost_key].value
        if q is not None and c is not None:
            pts.append(CostPoint(row.labels["run"], float(q), float(c),
                                 row.cells["pareto"].value))  # type: ignore[arg-type]
    return pts, cost_key


def by_language(rows: Sequence[dict[str, Any]], metric: str, field: str = "language"
                ) -> dict[str, dict[str, float | None]]:
    """{group: {run: macro mean of metric}}, for grouped bars."""
    rep = build_leaderboard(rows, by=field, metrics=[metric])
    out: dict[str, dict[str, float | None]] = {}
    for row in rep.tables[0].rows:
        v = row.cells[metric].value
        out.setdefault(row.labels[field], {})[row.labels["run"]] = v  # type: ignore[assignment]
    return out


# ----------------------------------------------------------------------------- figures


def _figure(width: float = 6.4, height: float = 4.0) -> Any:
    figure = importlib.import_module("matplotlib.figure")
    return figure.Figure(figsize=(width, height), layout="constrained")


def coverage_figure(rows: Sequence[dict[str, Any]]) -> Any:
    ticker = importlib.import_module("matplotlib.ticker")
    fig = _figure(9.0, 6.0)
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    for ax, g in zip(axes.flat, GRANS, strict=True):
        for run, curve in coverage_curves(rows, g).items():
            if curve:
                ax.plot(range(1, len(curve) + 1), curve, label=run, linewidth=1.5)
        ax.set_title(f"{g} coverage")
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("step")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean cumulative coverage")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    return fig


def cost_figure(rows: Sequence[dict[str, Any]], cost: CostOptions) -> Any:
    pts, cost_key = cost_points(rows, cost)
    fig = _figure()
    ax = fig.subplots()
    for p in pts:
        ax.scatter([p.cost], [p.quality], s=40, zorder=3,
                   marker="o" if p.rank == 1 else "x")
        ax.annotate(p.run, (p.cost, p.quality), textcoords="offset points", xytext=(5, 5),
                    fontsize=8)
    front = sorted((p for p in pts if p.rank == 1), key=lambda p: p.cost)
    if len(front) > 1:
        ax.plot([p.cost for p in front], [p.quality for p in front], linestyle="--",
                color="gray", label="Pareto front")
        ax.legend()
    ax.set_xlabel(f"mean {cost_key.replace('_', ' ')}")
    ax.set_ylabel(f"mean {cost.score_field}")
    ax.set_title("quality against cost (o: Pareto front)")
    ax.grid(alpha=0.3)
    return fig


def language_figure(rows: Sequence[dict[str, Any]], metric: str = "line.f1") -> Any:
    data = by_language(rows, metric)
    runs = list(dict.fromkeys(r for per in data.values() for r in per))
    groups = list(data)
    fig = _figure(max(4.0, 1.2 * len(groups) + 2), 4.0)
    ax = fig.subplots()
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        xs = [j + i * width for j in range(len(groups))]
        ys = [data[g].get(run) or 0.0 for g in groups]
        ax.bar(xs, ys, width, label=run)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], groups)
    ax.set_ylabel(f"mean {metric}")
    ax.set_title(f"{metric} per language")
    ax.set_ylim(0, 1.02)
    if runs:
        ax.legend()
    return fig


def ranking_figure(rows: Sequence[dict[str, Any]]) -> Any:
    """The ranked metrics against k: a panel per metric (rows) and level (columns), a line
    per run."""
    from .localization import METRICS, metric_curves

    levels = ("file", "module", "function")
    fig = _figure(10.0, 11.0)
    axes = fig.subplots(len(METRICS), len(levels), sharex=True, sharey=True)
    names = {"acc": "Acc@k", "recall": "Recall@k", "precision": "Precision@k",
             "ndcg": "nDCG@k", "map": "MAP@k"}
    for i, metric in enumerate(METRICS):
        for j, level in enumerate(levels):
            ax = axes[i][j]
            for run, points in metric_curves(rows, level, metric).items():
                if points:
                    ax.plot([k for k, _ in points], [v for _, v in points], marker="o",
                            markersize=3, linewidth=1.5, label=run)
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(level)
            if j == 0:
                ax.set_ylabel(names[metric])
            if i == len(METRICS) - 1:
                ax.set_xlabel("k")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    return fig


def figures(rows: Sequence[dict[str, Any]], cost: CostOptions | None = None,
            outcome: OutcomeTable | None = None) -> dict[str, Any]:
    """The report's figures by name (needs matplotlib); the ranked metrics against k where
    the rows have them; the outcome view's two where the rows record resolution (from
    ``outcome`` when it is given, to compute it once)."""
    _matplotlib()
    cost = cost or CostOptions()
    out = {"coverage_by_step": coverage_figure(rows),
           "quality_vs_cost": cost_figure(rows, cost)}
    if any("language" in r for r in rows):  # rows kept without it (a projection) have no bars
        out["by_language"] = language_figure(rows)
    if any(isinstance(r.get("ranking"), dict) for r in rows):
        out["ranking_by_k"] = ranking_figure(rows)
    if outcome is None and has_resolved(rows):
        outcome = outcome_table(rows)
    if outcome is not None:
        out.update(outcome_plots.figures(outcome))
    return out


# ----------------------------------------------------------------------------- output

_SVG_CLEAN = [
    (re.compile(r"^.*?(?=<svg)", re.S), ""),  # XML declaration and DOCTYPE
    (re.compile(r"<metadata>.*?</metadata>", re.S), ""),  # RDF block with namespace URLs
    (re.compile(r'\s+xmlns(:\w+)?="[^"]*"'), ""),  # not needed inline in HTML5
]


def svg_text(fig: Any, name: str) -> str:
    """The figure as SVG markup for inline use: text kept as text, ids salted by ``name`` so that
    several figures in one page never share an id, no URLs."""
    import io

    mpl = _matplotlib()
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": name}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    for pattern, repl in _SVG_CLEAN:
        text = pattern.sub(repl, text)
    # matplotlib numbers its element ids per figure (axes_1, ...): prefix them with the plot's
    # name, and every reference to them, so that ids stay unique across the page.
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", text)
    return text.replace("<svg ", f'<svg class="plot" data-plot="{name}" ', 1)


def write_plots(rows: Sequence[dict[str, Any]], out_dir: str | Path,
                cost: CostOptions | None = None, outcome: OutcomeTable | None = None
                ) -> list[Path]:
    """Write every figure as PNG and SVG into ``out_dir``; returns the files written.
    ``outcome``: the outcome view already computed (its metrics and seed are drawn)."""
    mpl = _matplotlib()
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in figures(rows, cost, outcome=outcome).items():
        for ext in ("png", "svg"):
            path = d / f"{name}.{ext}"
            with mpl.rc_context({"svg.hashsalt": name}):
                fig.savefig(path, format=ext, dpi=150,
                            metadata={"Date": None} if ext == "svg" else {"Software": None})
            written.append(path)
    return written
