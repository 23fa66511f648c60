"""Reports of result rows. The statistics are computed once per view into a :class:`Report`
(:func:`build_leaderboard`, :func:`build_exploration`, :func:`build_localization`,
:func:`build_outcome`); every format is a view of it
(:func:`render`, :func:`render_html`).

    rows = load_rows(["results.jsonl"])
    print(render(build_leaderboard(rows, by="language", ci=True), "md", ci=True))
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ...evaluation.output.results import finite
from . import csv, latex, markdown, text
from .exploration import build_exploration, instance_metrics
from .leaderboard import COLUMNS, DEFAULT_METRICS, CostOptions, build_leaderboard
from .localization import build_localization
from .outcome import OutcomeReport, build_outcome, has_resolved
from .rows import field_value, load_rows
from .table import Cell, Column, Report, Row, Table

__all__ = [
    "COLUMNS", "DEFAULT_METRICS", "FORMATS", "Cell", "Column", "CostOptions", "OutcomeReport",
    "Report", "Row", "Table", "build_exploration", "build_leaderboard", "build_localization",
    "build_outcome", "field_value", "instance_metrics", "load_rows", "render", "render_html",
    "render_report",
]

FORMATS = ("table", "md", "latex", "csv", "json", "html")


def render(report: Report, fmt: str = "table", *, ci: bool = False) -> str:
    """A report as text in one of the non-HTML formats."""
    if fmt == "json":
        return orjson.dumps(finite(report.to_json()), option=orjson.OPT_INDENT_2).decode() + "\n"
    module = {"table": text, "md": markdown, "latex": latex, "csv": csv}.get(fmt)
    if module is None:
        raise ValueError(f"unknown report format {fmt!r}; one of {', '.join(FORMATS)}")
    return module.render(report, ci=ci)


def render_html(rows: Sequence[dict[str, Any]], *, by: str | None = None,
                metrics: str | Sequence[str] | None = None, micro: bool = False,
                ci: bool = False, cost: CostOptions | None = None, plots: bool = True,
                sources: Sequence[str] = (), views: str | None = None) -> str:
    """One self-contained HTML page: leaderboard, exploration, the outcome view where the rows
    record resolution, and (with matplotlib) the plots. Without matplotlib the page says so
    instead of failing. ``views`` (the directory of
    ``ctxeval view`` pages, relative to the report) links runs and instances to them."""
    from . import html
    from . import plots as plotting

    reports = [build_leaderboard(rows, by=by, metrics=metrics, micro=micro, ci=ci, cost=cost),
               build_exploration(rows, by=by)]
    if any(isinstance(r.get("ranking"), dict) for r in rows):
        reports.append(build_localization(rows, by=by, ci=ci))
    outcome = build_outcome(rows) if has_resolved(rows) else None
    if outcome is not None:
        reports.append(outcome)
    svgs: dict[str, str] | None = None
    note = None
    if plots and plotting.have_matplotlib():
        svgs = {name: plotting.svg_text(fig, name)
                for name, fig in plotting.figures(
                    rows, cost, outcome=outcome.outcome if outcome else None).items()}
    elif plots:
        note = "plots need matplotlib: pip install 'ctxeval[plot]'"
    return html.render(reports, plots=svgs, plot_note=note, ci=ci, sources=sources,
                       views=views)


def render_report(paths: Sequence[str | Path], *, fmt: str = "table", micro: bool = False,
                  view: str = "leaderboard", **options: Any) -> str:
    """Read results files and render one view (the command's work, for use from Python)."""
    rows = load_rows(paths)
    if fmt == "html":
        return render_html(rows, micro=micro, sources=[str(p) for p in paths], **options)
    ci = bool(options.get("ci"))
    if view == "exploration":
        report = build_exploration(rows, by=options.get("by"))
    elif view == "outcome":
        keys = ("metrics", "resamples", "seed", "level", "bins")
        return render(build_outcome(rows, **{k: v for k, v in options.items() if k in keys}),
                      fmt, ci=True)
    elif view == "localization":
        report = build_localization(rows, by=options.get("by"), ci=ci)
    else:
        report = build_leaderboard(rows, micro=micro, **options)
    return render(report, fmt, ci=ci)
