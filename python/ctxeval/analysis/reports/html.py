"""HTML view: one self-contained page (inline CSS, plots as inline SVG, no external URL) holding
the leaderboard, the exploration tables, the outcome view (where rows record resolution) and the
plots."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ..._core import __version__
from .table import Report, Row, Table, best_rows, format_value, null_notes

#: The href of a table cell (table, row, label key), or None for plain text.
Linker = Callable[[Table, Row, str], str | None]


def view_linker(views: str) -> Linker:
    """Links into the pages ``ctxeval view`` wrote into directory ``views`` (as reached from
    the report page): a leaderboard run to its column of the index, an instance of the
    per-instance table to that run on the instance's page."""
    from .viewer_data import page_name, run_anchor

    base = views.rstrip("/") + "/"

    def link(table: Table, row: Row, key: str) -> str | None:
        run = row.labels.get("run")
        if run is None:
            return None
        if table.name == "leaderboard" and key == "run":
            return f"{base}index.html#{run_anchor(run)}"
        if table.name == "instances" and key == "instance_id":
            return f"{base}{page_name(row.labels[key])}#{run_anchor(run)}"
        return None
    return link

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem;color:#1d1d1f;
     max-width:1400px}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1rem}
.scroll{overflow-x:auto}
table.ctxeval{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
table.ctxeval th,table.ctxeval td{padding:.25rem .5rem;border-bottom:1px solid #e5e5e5;
     white-space:nowrap}
table.ctxeval th{background:#f5f5f7;position:sticky;top:0}
table.ctxeval td.num{text-align:right;font-variant-numeric:tabular-nums}
table.ctxeval td.best{font-weight:700}
table.ctxeval tr:hover td{background:#fafafa}
.ci{color:#777;font-size:.75rem}
ul.notes{color:#555;font-size:.8rem}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
figcaption{font-size:.85rem;color:#555}
p.notes{color:#555;font-size:.85rem}
"""


def _label_cell(table: Table, row: Row, key: str, link: Linker | None) -> str:
    text = html.escape(row.labels.get(key, ""))
    href = link(table, row, key) if link is not None else None
    return f'<td><a href="{html.escape(href)}">{text}</a></td>' if href else f"<td>{text}</td>"


def _table(table: Table, *, ci: bool, heading: bool = True, link: Linker | None = None) -> str:
    best = {c.key: best_rows(table, c) for c in table.columns}
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in table.label_keys)
    head += "".join(f'<th title="{html.escape(c.help or c.key)}">{html.escape(c.label)}</th>'
                    for c in table.columns)
    body = []
    for i, r in enumerate(table.rows):
        tds = [_label_cell(table, r, k, link) for k, _ in table.label_keys]
        for c in table.columns:
            cell = r.cells.get(c.key)
            text = html.escape(format_value(cell, c))
            if ci and cell is not None and cell.ci is not None:
                lo, hi = cell.ci
                text += f' <span class="ci">[{lo:.{c.digits}f}, {hi:.{c.digits}f}]</span>'
            cls = "num best" if i in best[c.key] else "num"
            tip = f"n={cell.n}, nulls={cell.nulls}" if cell is not None else ""
            tds.append(f'<td class="{cls}" data-key="{html.escape(c.key)}" '
                       f'title="{tip}">{text}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    notes = [*table.notes, *null_notes(table)]
    notes_html = ("<ul class=\"notes\">" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                  + "</ul>") if notes else ""
    title = f"<h3>{html.escape(table.title)}</h3>" if heading else ""
    return (f'{title}<div class="scroll">'
            f'<table class="ctxeval" id="table-{html.escape(table.name)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            + notes_html)


def render(reports: Sequence[Report], *, plots: dict[str, str] | None = None,
           plot_note: str | None = None, ci: bool = False, title: str = "ctxeval report",
           sources: Sequence[str] = (), views: str | None = None) -> str:
    """The page: each report under its own heading, then the plots (name → inline SVG).
    ``views``: the directory of ``ctxeval view`` pages that runs and instances link to."""
    link = view_linker(views) if views else None
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p>ctxeval {html.escape(__version__)}, "
             f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}"
             + (": " + ", ".join(html.escape(s) for s in sources) if sources else "")
             + "</p>"]
    if plot_note and not plots:
        # No plots: said at the top, and no empty "Plots" section at the end (a heading over
        # nothing looked like a page that failed to draw)
        parts.append(f'<p class="notes" id="plot-note">{html.escape(plot_note)}</p>')
    for rep in reports:
        parts.append(f'<section id="view-{html.escape(rep.view)}">'
                     f"<h2>{html.escape(rep.view.capitalize())}</h2>")
        if rep.notes:
            parts.append("<ul class=\"notes\">"
                         + "".join(f"<li>{html.escape(n)}</li>" for n in rep.notes) + "</ul>")
        # the outcome view's AUROC intervals are part of its numbers: always shown
        parts += [_table(t, ci=ci or rep.view == "outcome", heading=t.title.lower() != rep.view,
                         link=link) for t in rep.tables]
        parts.append("</section>")
    if plots:
        parts.append('<section id="plots"><h2>Plots</h2>')
        for name, svg in plots.items():
            parts.append(f'<figure id="plot-{html.escape(name)}">{svg}'
                         f"<figcaption>{html.escape(name.replace('_', ' '))}</figcaption>"
                         "</figure>")
        if plot_note:
            parts.append(f'<p class="notes">{html.escape(plot_note)}</p>')
        parts.append("</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")
