"""``ctxeval view``: one self-contained HTML page per instance of what each agent looked at.

Each page holds, drawn as inline SVG (no script or style from anywhere else; a few lines of
inline script make strips clickable):

- the per-step coverage curves of every run on one plot, line (solid) and symbol (dashed)
  granularity, with each run's first gold step marked;
- per gold file, a strip of the file's lines: the gold ranges and the file's definitions along
  the top, then per run one row per step (time runs down) with the lines that step showed,
  gold lines it showed in the run's dark shade, and under it the final context and the gold
  lines seen but dropped from it;
- per run, a summary (final coverage, first gold step, evidence dropped) and the timeline of
  its steps: tool, the action cut short, tokens when known, what it viewed and edited, and
  whether it showed gold.

``index.html`` lists the instances with each run's final line coverage. Data: result rows and
their views sidecar (:mod:`ctxeval.analysis.reports.viewer_data`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import _core
from ..._core import __version__
from .viewer_data import (
    GoldFile,
    InstancePage,
    Ranges,
    RunView,
    build_pages,
    measure,
    page_name,
    ranges,
    run_anchor,
    slug,
)

#: Run colours (light shade for lines shown, dark for gold lines shown), colour-blind safe.
PALETTE = [("#0072b2", "#9ecae1"), ("#d55e00", "#fdbe85"), ("#009e73", "#a1d99b"),
           ("#cc79a7", "#f4c2e0"), ("#e69f00", "#fee391"), ("#56b4e9", "#c6e5f7"),
           ("#7a5195", "#cbb7dc"), ("#444444", "#bbbbbb")]
GOLD = "#f2b600"
DROP = "#c4001a"
STRIP_W = 900
LEFT = 190
#: Longest run label drawn in a figure (the whole label is in its tooltip).
LABEL_CHARS = 28

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem 2rem;color:#1d1d1f;
     max-width:1200px}
h1{font-size:1.4rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
     border-bottom:1px solid #ddd}h3{font-size:1rem;margin:1.2rem 0 .3rem}
.meta{color:#666;font-size:.85rem}
table.v{border-collapse:collapse;font-size:.82rem;margin:.4rem 0}
table.v th,table.v td{padding:.2rem .45rem;border-bottom:1px solid #e8e8e8;text-align:left;
     vertical-align:top}
table.v th{background:#f5f5f7}
table.summary td,table.summary th,table.index td,table.index th{white-space:nowrap}
table.v td.num{text-align:right;font-variant-numeric:tabular-nums}
td.act{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.78rem;max-width:34rem;
     overflow-wrap:anywhere}
td.views{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.75rem;max-width:24rem;
     overflow-wrap:anywhere}
.gold{background:#fff3c4;font-weight:600}.swatch{display:inline-block;width:.8rem;height:.8rem;
     vertical-align:middle;margin-right:.25rem;border-radius:2px}
tr.hit td{background:#e3f0ff}
svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}
svg [data-goto]{cursor:pointer}
details summary{cursor:pointer;font-weight:600;margin:.4rem 0}
.note{color:#555;font-size:.82rem}.scroll{overflow-x:auto}
"""

_JS = """
document.addEventListener('click',function(e){
  var t=e.target.closest?e.target.closest('[data-goto]'):null;if(!t)return;
  var r=document.getElementById(t.getAttribute('data-goto'));if(!r)return;
  var d=r.closest('details');if(d)d.open=true;
  r.scrollIntoView({block:'center'});r.classList.add('hit');
  setTimeout(function(){r.classList.remove('hit');},1600);
});
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fmt(v: object, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _ranges_text(rs: Ranges) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in rs)


def _colour(k: int) -> tuple[str, str]:
    return PALETTE[k % len(PALETTE)]


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def _step_id(run: RunView, k: int) -> str:
    return f"{run_anchor(run.label)}-step-{k + 1}"


# -- coverage curves ------------------------------------------------------------------------


def coverage_svg(page: InstancePage) -> str:
    """Cumulative coverage after each step, every run on one plot: line solid, symbol dashed;
    a dot at each run's first step that showed gold lines."""
    w, h, ml, mr, mt, mb = 820, 280, 48, 210, 12, 36
    pw, ph = w - ml - mr, h - mt - mb
    n = max([len(r.row_steps()) for r in page.runs] + [1])
    parts = [f'<svg class="curves" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
             'role="img" aria-label="coverage by step">']

    def x(step: float) -> float:
        return ml + (step / n) * pw

    def y(v: float) -> float:
        return mt + (1 - v) * ph

    for v in (0, .25, .5, .75, 1):
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#e5e5e5"/><text x="{ml - 6}" y="{y(v) + 4:.1f}" font-size="11" '
                     f'text-anchor="end">{v:g}</text>')
    every = max(1, n // 8)
    ticks = sorted({0, n, *(t for t in range(0, n, every) if n - t >= every / 2)})
    for t in ticks:
        parts.append(f'<text x="{x(t):.1f}" y="{mt + ph + 16}" font-size="11" '
                     f'text-anchor="middle">{t}</text>')
    parts.append(f'<text x="{ml + pw / 2}" y="{h - 4}" font-size="11" text-anchor="middle">'
                 'step</text>')
    parts.append(f'<line x1="{ml}" x2="{ml}" y1="{mt}" y2="{mt + ph}" stroke="#888"/>'
                 f'<line x1="{ml}" x2="{ml + pw}" y1="{mt + ph}" y2="{mt + ph}" stroke="#888"/>')
    for k, run in enumerate(page.runs):
        dark, _ = _colour(k)
        for gran, dash in (("line", ""), ("symbol", ' stroke-dasharray="5 3"')):
            pts = [(0, 0.0)] + [(i + 1, v) for i, v in enumerate(run.curve(gran))
                                if v is not None]
            if len(pts) < 2:
                continue
            d = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in pts)
            parts.append(f'<polyline class="curve" data-run="{_e(run.label)}" '
                         f'data-gran="{gran}" points="{d}" fill="none" stroke="{dark}" '
                         f'stroke-width="2"{dash}><title>{_e(run.label)}: {gran} coverage'
                         '</title></polyline>')
        first = run.traj_value("first_gold_step", "line")
        curve = run.curve("line")
        if isinstance(first, int) and 1 <= first <= len(curve) and curve[first - 1] is not None:
            parts.append(f'<circle cx="{x(first):.1f}" cy="{y(curve[first - 1] or 0):.1f}" '
                         f'r="4.5" fill="{dark}" data-goto="{_step_id(run, first - 1)}">'
                         f'<title>{_e(run.label)}: first gold line at step {first}</title>'
                         '</circle>')
        ly = mt + 14 + 18 * k
        parts.append(f'<line x1="{w - mr + 12}" x2="{w - mr + 34}" y1="{ly - 4}" y2="{ly - 4}" '
                     f'stroke="{dark}" stroke-width="3"/><text x="{w - mr + 40}" y="{ly}" '
                     f'font-size="11">{_e(_short(run.label))}<title>{_e(run.label)}</title>'
                     '</text>')
    ly = mt + 14 + 18 * len(page.runs) + 8
    parts.append(f'<text x="{w - mr + 12}" y="{ly}" font-size="10" fill="#555">solid: line, '
                 f'dashed: symbol</text><text x="{w - mr + 12}" y="{ly + 13}" font-size="10" '
                 'fill="#555">dot: first gold line</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- gold file strips ----------------------------------------------------------------------


class _Scale:
    def __init__(self, line_count: int) -> None:
        self.n = max(line_count, 1)

    def x(self, line: int) -> float:
        return LEFT + (min(max(line, 1), self.n + 1) - 1) / self.n * STRIP_W

    def span(self, a: int, b: int, least: float = 1.5) -> tuple[float, float]:
        """Left edge and width of lines a..b, at least ``least`` pixels wide (a line of a
        long file stays visible)."""
        x0 = self.x(a)
        return x0, max(self.x(b + 1) - x0, least)


def _definition_rows(f: GoldFile, sc: _Scale, y0: int) -> tuple[list[str], int]:
    """Definition ticks under the gold band, names labelled where they fit (definitions that
    overlap gold first), nested definitions one level lower."""
    parts: list[str] = []
    if not f.definitions:
        return parts, y0
    gold = f.gold
    defs = sorted(f.definitions, key=lambda d: (d[2], -d[3]))
    depth: list[int] = []
    stack: list[int] = []
    for _, _, a, b in defs:
        while stack and stack[-1] < a:
            stack.pop()
        depth.append(min(len(stack), 2))
        stack.append(b)
    used: dict[int, list[tuple[float, float]]] = {}
    order = sorted(range(len(defs)), key=lambda i: (
        not _core.lines_intersection([(defs[i][2], defs[i][3])], gold), defs[i][2]))
    labels: dict[int, float] = {}
    for i in order:
        name, _, a, _ = defs[i]
        tx = sc.x(a) + 2
        width = 6.2 * len(name.rsplit(".", 1)[-1]) + 6
        row = depth[i]
        if all(tx + width <= s or tx >= e for s, e in used.get(row, [])) \
                and tx + width <= LEFT + STRIP_W + 60:
            used.setdefault(row, []).append((tx, tx + width))
            labels[i] = tx
    for i, (name, kind, a, b) in enumerate(defs):
        x0, wd = sc.span(a, b)
        yy = y0 + depth[i] * 16
        hits_gold = bool(_core.lines_intersection([(a, b)], gold))
        parts.append(f'<rect class="def" x="{x0:.1f}" y="{yy}" width="{wd:.1f}" height="3" '
                     f'fill="{"#7a5c00" if hits_gold else "#9a9a9a"}"><title>{_e(name)} '
                     f'({_e(kind)}), lines {a}-{b}</title></rect>')
        if i in labels:
            short = name.rsplit(".", 1)[-1]
            weight = ' font-weight="600"' if hits_gold else ""
            parts.append(f'<text x="{labels[i]:.1f}" y="{yy + 13}" font-size="10"{weight} '
                         f'fill="{"#5a4300" if hits_gold else "#666"}">{_e(short)}'
                         f'<title>{_e(name)}</title></text>')
    return parts, y0 + (max(depth) + 1) * 16 + 4


def strip_svg(f: GoldFile, page: InstancePage) -> str:
    """The strip of one gold file: gold ranges and definitions on top, then per run its steps
    (one row each, time running down), its final context and the gold lines it dropped."""
    sc = _Scale(f.line_count)
    parts: list[str] = []
    y = 4
    parts.append(f'<text x="{LEFT - 8}" y="{y + 12}" font-size="11" text-anchor="end" '
                 f'font-weight="600">gold</text>')
    parts.append(f'<rect x="{LEFT}" y="{y}" width="{STRIP_W}" height="16" fill="#f3f3f3"/>')
    for a, b in f.gold:
        x0, wd = sc.span(a, b, 3.0)
        parts.append(f'<rect class="gold" x="{x0:.1f}" y="{y}" width="{wd:.1f}" height="16" '
                     f'fill="{GOLD}"><title>gold lines {a}-{b}</title></rect>')
    n, every = f.line_count, max(1, f.line_count // 8)
    for t in sorted({1, n, *(t for t in range(every, n, every) if n - t >= every / 2)}):
        parts.append(f'<text x="{sc.x(t):.1f}" y="{y + 28}" font-size="9" fill="#888" '
                     f'text-anchor="middle">{t}</text>')
    defs, y = _definition_rows(f, sc, y + 32)
    parts += defs
    y += 6
    for k, run in enumerate(page.runs):
        dark, light = _colour(k)
        parts.append(f'<g class="strip" data-run="{_e(run.label)}" data-file="{_e(f.path)}">')
        steps = run.steps
        n = len(steps)
        row_h = max(2.0, min(10.0, 160 / max(n, 1)))
        height = max(n * row_h, 26.0)
        parts.append(f'<text x="{LEFT - 16}" y="{y + 11}" font-size="11" text-anchor="end" '
                     f'fill="{dark}" font-weight="600">{_e(_short(run.label))}'
                     f'<title>{_e(run.label)}</title></text>')
        if run.record is None:
            parts.append(f'<text x="{LEFT}" y="{y + 11}" font-size="11" fill="#777">no views '
                         f'recorded ({_e(run.status)})</text></g>')
            y += 22
            continue
        parts.append(f'<text x="{LEFT - 16}" y="{y + 23}" font-size="9" text-anchor="end" '
                     f'fill="#777">{n} step{"s" * (n != 1)} ↓</text>')
        parts.append(f'<rect x="{LEFT}" y="{y}" width="{STRIP_W}" height="{height:.1f}" '
                     f'fill="#fafafa" stroke="#eee"/>')
        for a, b in f.gold:  # gold columns, faint, behind the steps
            x0, wd = sc.span(a, b)
            parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{wd:.1f}" height="{height:.1f}" '
                         f'fill="{GOLD}" opacity="0.18"/>')
        touched = False
        for i, s in enumerate(steps):
            yy = y + i * row_h
            sid = _step_id(run, i)
            shown = ranges((s.get("lines") or {}).get(f.path))
            if row_h >= 8:
                parts.append(f'<text x="{LEFT - 3}" y="{yy + row_h - 1:.1f}" font-size="8" '
                             f'fill="#999" text-anchor="end">{i + 1}</text>')
            if f.path in (s.get("files") or ()):
                touched = True
                parts.append(f'<rect x="{LEFT}" y="{yy:.1f}" width="{STRIP_W}" '
                             f'height="{row_h:.1f}" fill="{light}" opacity="0.35" '
                             f'data-goto="{sid}"><title>step {i + 1}: the file, no lines'
                             '</title></rect>')
            for a, b in shown:
                touched = True
                x0, wd = sc.span(a, b)
                parts.append(f'<rect class="view" x="{x0:.1f}" y="{yy:.1f}" width="{wd:.1f}" '
                             f'height="{row_h:.1f}" fill="{light}" data-goto="{sid}">'
                             f'<title>step {i + 1}: lines {a}-{b}</title></rect>')
            for a, b in _core.lines_intersection(shown, f.gold):
                x0, wd = sc.span(a, b)
                parts.append(f'<rect class="view-gold" x="{x0:.1f}" y="{yy:.1f}" '
                             f'width="{wd:.1f}" height="{row_h:.1f}" fill="{dark}" '
                             f'data-goto="{sid}"><title>step {i + 1}: gold lines {a}-{b}'
                             '</title></rect>')
        if not touched:
            parts.append(f'<text x="{LEFT + STRIP_W / 2}" y="{y + min(height, 24) / 2 + 4:.1f}" '
                         'font-size="11" fill="#999" text-anchor="middle">never shown</text>')
        y += height + 3
        parts.append(f'<text x="{LEFT - 8}" y="{y + 8}" font-size="9" text-anchor="end" '
                     f'fill="#555">final</text>')
        for a, b in run.final(f.path):
            x0, wd = sc.span(a, b)
            parts.append(f'<rect class="final" x="{x0:.1f}" y="{y}" width="{wd:.1f}" '
                         f'height="8" fill="{dark}" opacity="0.55"><title>final context: lines '
                         f'{a}-{b}</title></rect>')
        for a, b in run.dropped(f.path, f.gold):
            x0, wd = sc.span(a, b)
            parts.append(f'<rect class="dropped" x="{x0:.1f}" y="{y + 9}" width="{wd:.1f}" '
                         f'height="4" fill="{DROP}"><title>gold lines {a}-{b} seen, dropped '
                         'from the final context</title></rect>')
        y += 22
        parts.append("</g>")
    total_w = LEFT + STRIP_W + 70
    return (f'<svg class="file-strip" data-file="{_e(f.path)}" viewBox="0 0 {total_w} '
            f'{y:.0f}" width="{total_w}" height="{y:.0f}" role="img" '
            f'aria-label="views of {_e(f.path)}">' + "".join(parts) + "</svg>")


# -- per run: summary and timeline ---------------------------------------------------------


def _summary(page: InstancePage) -> str:
    head = ("<tr><th>run</th><th>status</th><th>steps</th><th>line cov</th><th>line prec</th>"
            "<th>symbol cov</th><th>1st gold line</th><th>1st gold symbol</th>"
            "<th>gold lines dropped</th><th>EditLoc F1</th><th>tokens in / out</th></tr>")
    body = []
    for k, run in enumerate(page.runs):
        row = run.row
        final = row.get("final") if isinstance(row.get("final"), dict) else {}
        line = final.get("line") or {}
        sym = final.get("symbol") or {}
        ed = row.get("editloc") if isinstance(row.get("editloc"), dict) else {}
        usage = row.get("usage") if isinstance(row.get("usage"), dict) else {}
        tok = (f"{_fmt(usage.get('input_tokens'))} / {_fmt(usage.get('output_tokens'))}"
               if usage else "–")
        dark, _ = _colour(k)
        status = run.status
        if status == "error":
            err = row.get("error") or {}
            status = f"error: {err.get('kind', '')}"
        body.append(
            f'<tr><td><span class="swatch" style="background:{dark}"></span>'
            f'<a href="#{run_anchor(run.label)}">{_e(run.label)}</a></td><td>{_e(status)}</td>'
            f'<td class="num">{_fmt(row.get("num_steps"))}</td>'
            f'<td class="num">{_fmt(line.get("coverage"))}</td>'
            f'<td class="num">{_fmt(line.get("precision"))}</td>'
            f'<td class="num">{_fmt(sym.get("coverage"))}</td>'
            f'<td class="num">{_fmt(run.traj_value("first_gold_step", "line"))}</td>'
            f'<td class="num">{_fmt(run.traj_value("first_gold_step", "symbol"))}</td>'
            f'<td class="num">{_fmt(run.traj_value("evidence_drop", "line"))}</td>'
            f'<td class="num">{_fmt(ed.get("f1"))}</td><td class="num">{_e(tok)}</td></tr>')
    return (f'<div class="scroll"><table class="v summary"><thead>{head}</thead><tbody>'
            f'{"".join(body)}</tbody></table></div>')


def _views_cell(step: dict[str, Any], gold: dict[str, Ranges]) -> tuple[str, bool]:
    """What a step viewed, gold-touching entries highlighted, and whether it showed gold."""
    items = []
    touched = False
    lines = step.get("lines") if isinstance(step.get("lines"), dict) else {}
    for path, rs in lines.items():
        rr = ranges(rs)
        hit = _core.lines_intersection(rr, gold.get(path, []))
        touched = touched or bool(hit)
        cls = ' class="gold"' if hit else ""
        items.append(f"<span{cls}>{_e(path)}:{_e(_ranges_text(rr))}</span>")
    for path in step.get("files") or ():
        cls = ' class="gold"' if path in gold else ""
        items.append(f"<span{cls}>{_e(path)} (file)</span>")
    return "<br>".join(items), touched


def _timeline(run: RunView, k: int, gold: dict[str, Ranges]) -> str:
    dark, _ = _colour(k)
    row_steps = run.row_steps()
    out = [f'<section class="run" id="{run_anchor(run.label)}" data-run="{_e(run.label)}">',
           f'<h3><span class="swatch" style="background:{dark}"></span>{_e(run.label)}</h3>']
    if run.status == "error":
        err = run.row.get("error") or {}
        out.append(f'<p class="note">not scored: {_e(err.get("kind", "error"))}: '
                   f'{_e(err.get("message", ""))}</p></section>')
        return "".join(out)
    if run.row.get("reason"):
        out.append(f'<p class="note">{_e(run.status)}: {_e(run.row["reason"])}</p>')
    if run.record is None:
        out.append('<p class="note">no views recorded for this run (evaluate with --views)'
                   "</p></section>")
        return "".join(out)
    dropped = {f: run.dropped(f, g) for f, g in gold.items()}
    dropped = {f: d for f, d in dropped.items() if d}
    fin = run.record.get("final_source", "")
    out.append(f'<p class="note">final context: {_e(fin)}; gold lines seen then dropped from '
               "it: " + ("; ".join(f"{_e(f)}:{_e(_ranges_text(d))} ({measure(d)})"
                                   for f, d in dropped.items()) or "none") + "</p>")
    steps = run.steps
    out.append(f"<details{' open' if len(steps) <= 40 else ''}><summary>timeline: "
               f"{len(steps)} steps</summary>")
    out.append('<table class="v timeline"><thead><tr><th>#</th><th>tool</th><th>action</th>'
               "<th>tokens in/out</th><th>viewed</th><th>edited</th><th>gold</th>"
               "<th>line cov</th></tr></thead><tbody>")
    for i, s in enumerate(steps):
        views, touched = _views_cell(s, gold)
        tok = s.get("tokens") if isinstance(s.get("tokens"), dict) else None
        tok_text = f"{_fmt(tok.get('input'))} / {_fmt(tok.get('output'))}" if tok else ""
        cov = row_steps[i].get("coverage", {}).get("line") if i < len(row_steps) else None
        edits = "<br>".join(_e(p) + (" ★" if p in gold else "")
                            for p in s.get("edits") or ())
        mark = '<td class="gold">gold</td>' if touched else "<td></td>"
        out.append(f'<tr id="{_step_id(run, i)}"><td class="num">{i + 1}</td>'
                   f'<td>{_e(s.get("tool") or "")}</td><td class="act">'
                   f'{_e(s.get("action") or "")}</td><td class="num">{_e(tok_text)}</td>'
                   f'<td class="views">{views}</td><td class="views">{edits}</td>{mark}'
                   f'<td class="num">{_fmt(cov)}</td></tr>')
    out.append("</tbody></table></details></section>")
    return "".join(out)


# -- pages ---------------------------------------------------------------------------------


def _document(title: str, body: str, script: bool = True) -> str:
    js = f"<script>{_JS}</script>" if script else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{body}{js}"
            "</body></html>\n")


def render_page(page: InstancePage, *, index_href: str | None = "index.html") -> str:
    """The HTML of one instance's page."""
    row = page.row
    gold = {f.path: f.gold for f in page.files}
    meta = " · ".join(_e(x) for x in (row.get("repo"), row.get("language"), row.get("source"),
                                      f"gold: {row.get('gold_kind') or 'context'}",
                                      f"preset: {row.get('preset')}") if x)
    parts = [f"<h1>{_e(page.instance_id)}</h1>",
             f'<p class="meta">{meta} · ctxeval {_e(__version__)}'
             + (f' · <a href="{_e(index_href)}">all instances</a>' if index_href else "")
             + "</p>", "<h2>Runs</h2>", _summary(page),
             '<h2 id="curves">Coverage by step</h2>', '<figure>', coverage_svg(page),
             '<figcaption class="note">cumulative coverage of the gold context after each '
             "step (from the rows); click a dot for the step</figcaption></figure>",
             '<h2 id="strips">Gold files</h2>',
             '<p class="note">per gold file: gold lines '
             f'<span class="swatch" style="background:{GOLD}"></span> and definitions along the '
             "file (gold definitions in bold); per run one row per step, time running down: "
             "lines shown (light), gold lines shown (dark); under it the final context and the "
             f'gold lines seen but dropped <span class="swatch" style="background:{DROP}">'
             "</span>. Hover for lines, click for the step.</p>"]
    if not page.files:
        parts.append('<p class="note">no gold file with lines at the base commit</p>')
    for f in page.files:
        parts.append(f'<h3 id="file-{slug(f.path)}">{_e(f.path)} '
                     f'<span class="meta">({f.line_count} lines; gold '
                     f'{_e(_ranges_text(f.gold)) or "file only"})</span></h3>')
        parts.append(strip_svg(f, page))
    if page.missing_files:
        parts.append('<p class="note">gold files absent at the base commit: '
                     + ", ".join(_e(m) for m in page.missing_files) + "</p>")
    parts.append('<h2 id="timelines">Timelines</h2>')
    parts += [_timeline(run, k, gold) for k, run in enumerate(page.runs)]
    return _document(f"{page.instance_id}: ctxeval view", "\n".join(parts))


def render_index(pages: Sequence[InstancePage]) -> str:
    """The index: one row per instance, one column per run (final line coverage, first gold
    step), each cell linking to the run on the instance's page."""
    labels: list[str] = []
    for p in pages:
        for r in p.runs:
            if r.label not in labels:
                labels.append(r.label)
    head = "<tr><th>instance</th>" + "".join(
        f'<th id="{run_anchor(lb)}">{_e(lb)}</th>' for lb in labels) + "</tr>"
    body = []
    for p in pages:
        by = {r.label: r for r in p.runs}
        cells = [f'<td><a href="{_e(page_name(p.instance_id))}">{_e(p.instance_id)}</a></td>']
        for lb in labels:
            r = by.get(lb)
            if r is None:
                cells.append("<td></td>")
                continue
            final = r.row.get("final") if isinstance(r.row.get("final"), dict) else {}
            cov = (final.get("line") or {}).get("coverage")
            first = r.traj_value("first_gold_step", "line")
            text = "error" if r.status == "error" else \
                f"{_fmt(cov)} (" + (f"step {first}" if first is not None else "never") + ")"
            cells.append(f'<td><a href="{_e(page_name(p.instance_id))}#{run_anchor(lb)}">'
                         f"{_e(text)}</a></td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    parts = ["<h1>ctxeval view</h1>",
             f'<p class="meta">ctxeval {_e(__version__)} · {len(pages)} instances · cells: '
             "final line coverage (step of the first gold line, or never)</p>",
             f'<div class="scroll"><table class="v index"><thead>{head}</thead><tbody>'
             f'{"".join(body)}</tbody></table></div>']
    return _document("ctxeval view", "\n".join(parts), script=False)


def write_view(results: Sequence[str | Path], out: str | Path, *,
               instances: Sequence[str] = (), runs: Sequence[str] = ()) -> list[Path]:
    """Write the pages: into directory ``out`` (``index.html`` plus one page per instance), or,
    when ``out`` ends in ``.html``, the single selected instance's page. Returns the files.

    Raises :class:`ValueError` when nothing is selected, or a single page is asked for
    several instances; :class:`~ctxeval.errors.InputError` for unreadable inputs.
    """
    pages = build_pages(results, instances=instances, runs=runs)
    if not pages:
        raise ValueError("no result row matches the selected instances and runs")
    target = Path(out)
    if target.suffix == ".html":
        if len(pages) != 1:
            raise ValueError(f"{len(pages)} instances selected but --out names one page: give "
                             "a directory, or one --instance ID")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(pages[0], index_href=None), encoding="utf-8")
        return [target]
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for p in pages:
        path = target / page_name(p.instance_id)
        path.write_text(render_page(p), encoding="utf-8")
        written.append(path)
    index = target / "index.html"
    index.write_text(render_index(pages), encoding="utf-8")
    return [index, *written]
