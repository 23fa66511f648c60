"""The outcome view's pictures (the optional ``ctxeval[plot]`` extra): the resolution rate
against metric bins per run, calibration-style, and AUROC per metric with its interval.

The series are read from an :class:`~ctxeval.analysis.outcome.OutcomeTable`; matplotlib is
imported only to draw them, without pyplot."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from ..outcome import OutcomeEntry, OutcomeTable

#: The metrics drawn against their bins, those the table has, in this order (at most six).
BIN_PLOT_METRICS: tuple[str, ...] = (
    "final.line.coverage", "final.line.precision", "final.file.coverage",
    "trajectory.auc_coverage.line", "editloc.f1", "usage.input_tokens",
)


def _figure(width: float, height: float) -> Any:
    figure = importlib.import_module("matplotlib.figure")
    return figure.Figure(figsize=(width, height), layout="constrained")


def bin_series(table: OutcomeTable, metric: str) -> dict[str, list[tuple[float, float, int]]]:
    """{run: [(mean value in the bin, resolution rate, instances)]} of one metric."""
    out: dict[str, list[tuple[float, float, int]]] = {}
    for e in table.entries:
        if e.metric == metric and e.bins:
            out[e.run] = [(b["mean"], b["rate"], b["n"]) for b in e.bins]
    return out


def bin_figure(table: OutcomeTable, metrics: Sequence[str] = BIN_PLOT_METRICS) -> Any:
    """Small multiples, one per metric: per run, the resolution rate of each quantile bin at the
    bin's mean value (marker area grows with the bin's instances), and the run's overall rate
    dashed."""
    shown = [m for m in metrics if any(e.metric == m and e.bins for e in table.entries)][:6]
    if not shown:  # nothing in the preferred list: the table's first metrics with bins
        shown = list(dict.fromkeys(e.metric for e in table.entries if e.bins))[:6]
    cols = min(3, max(1, len(shown)))
    nrows = max(1, -(-len(shown) // cols))
    fig = _figure(3.6 * cols, 3.0 * nrows + 0.6)
    axes = fig.subplots(nrows, cols, squeeze=False)
    colors: dict[str, str] = {}
    for ax, metric in zip(axes.flat, shown, strict=False):
        for run, points in bin_series(table, metric).items():
            color = colors.setdefault(run, f"C{len(colors) % 10}")
            xs, ys, ns = zip(*points, strict=True)
            ax.plot(xs, ys, linewidth=1.2, color=color, label=run)
            ax.scatter(xs, ys, s=[10 + 6 * n ** 0.5 for n in ns], color=color, zorder=3)
            rate = next((e.rate for e in table.entries if e.run == run and e.metric == metric),
                        None)
            if rate is not None:
                ax.axhline(rate, color=color, linestyle="--", linewidth=0.8, alpha=0.6)
        ax.set_title(metric, fontsize=9)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.set_xlabel("mean value in bin", fontsize=8)
        ax.set_ylabel("resolution rate", fontsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    fig.suptitle("resolution rate by metric bin (dashed: the run's rate)", fontsize=10)
    return fig


def _auroc_entries(table: OutcomeTable) -> list[OutcomeEntry]:
    return [e for e in table.entries if e.auroc is not None]


def auroc_figure(table: OutcomeTable) -> Any:
    """AUROC per metric (rows) with its interval, one marker per run, 0.5 marked."""
    entries = _auroc_entries(table)
    metrics = list(dict.fromkeys(e.metric for e in table.entries))
    runs = list(dict.fromkeys(e.run for e in table.entries))
    fig = _figure(7.0, 0.28 * max(len(metrics), 4) + 1.4)
    ax = fig.subplots()
    step = 0.7 / max(len(runs), 1)
    for k, run in enumerate(runs):
        ys, xs, lo, hi = [], [], [], []
        for e in entries:
            if e.run != run:
                continue
            y = metrics.index(e.metric) + (k - (len(runs) - 1) / 2) * step
            ys.append(y)
            xs.append(e.auroc)
            ci = e.auroc_ci or (e.auroc, e.auroc)
            lo.append(e.auroc - ci[0])
            hi.append(ci[1] - e.auroc)
        if ys:
            ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", markersize=3.5, capsize=2,
                        linewidth=1, label=run)
    ax.axvline(0.5, color="gray", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(metrics)), metrics, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"AUROC against resolved ({table.level:.0%} bootstrap interval)")
    ax.grid(axis="x", alpha=0.3)
    if len(runs) > 1 and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    if not entries:
        ax.text(0.5, 0.5, "no AUROC: every metric has n < 5, one class only or no variation",
                transform=ax.transAxes, ha="center", va="center", fontsize=8)
    ax.set_title("AUROC per metric (0.5: no signal; below: lower values go with resolution)",
                 fontsize=9)
    return fig


def figures(table: OutcomeTable) -> dict[str, Any]:
    """The outcome figures by name."""
    return {"outcome_by_bin": bin_figure(table), "auroc_by_metric": auroc_figure(table)}
