"""LaTeX view: booktabs tables for papers, the best value per column in bold (direction-aware),
run names escaped, a caption that says how the numbers were aggregated and what the column
labels abbreviate.

Fitting a page: labels that share a first word ("File cov", "File prec") or a last word
("File F1", "Sym F1") are grouped under one header, columns are set 4pt apart, a table of more
than :data:`WIDE` columns is a ``table*`` (the full page width of a two-column paper), and one of
more than :data:`SHRINK` columns is scaled to the text width (``\resizebox``, graphicx). The
default leaderboard is about 355pt wide at ``\\small``: less than a NeurIPS page (397pt)."""

from __future__ import annotations

import re

from .table import Column, Report, Table, best_rows, format_value, null_notes

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}", "Σ": r"$\Sigma$", "≥": r"$\geq$", "≤": r"$\leq$",
            "×": r"$\times$", "–": "--", "—": "---",
            # text-mode < and > print as ¡ and ¿ in LaTeX's default font encoding
            "<": r"\textless{}", ">": r"\textgreater{}"}
_SPECIAL_RE = re.compile("|".join(re.escape(k) for k in _SPECIAL))


def escape(text: str) -> str:
    """Text safe in a LaTeX document (special characters and a few symbols)."""
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(0)], text)


#: Statistic columns from which a table is a ``table*`` (two-column papers' full width).
WIDE = 10
#: Statistic columns from which a table is scaled to the text width.
SHRINK = 16


def _header_groups(columns: list[Column]) -> list[tuple[str, list[str]]]:
    """Consecutive columns under one header: those sharing all but their last word ("File
    cov", "File prec" under "File"), else their last word ("File F1", "Sym F1" under "F1");
    a column alone keeps its whole label on the lower line."""
    labels = [c.label for c in columns]
    split = [label.rpartition(" ") for label in labels]  # (head, " ", last word)
    groups: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(labels):
        head, last = split[i][0], split[i][2]
        j = i + 1
        while head and j < len(labels) and split[j][0] == head:
            j += 1
        if j - i > 1:
            groups.append((head, [split[k][2] for k in range(i, j)]))
            i = j
            continue
        while head and j < len(labels) and split[j][0] and split[j][2] == last:
            j += 1
        if j - i > 1:
            groups.append((last, [split[k][0] for k in range(i, j)]))
            i = j
            continue
        groups.append(("", [labels[i]]))
        i += 1
    return groups


def _cell(table: Table, i: int, col: Column, best: set[int], ci: bool) -> str:
    cell = table.rows[i].cells.get(col.key)
    text = format_value(cell, col)
    if text == "inf":
        text = r"$\infty$"
    elif text == "-":
        text = "--"
    else:
        text = escape(text)
    if i in best:
        text = rf"\textbf{{{text}}}"
    if ci and cell is not None and cell.ci is not None:
        lo, hi = cell.ci
        text += rf" {{\scriptsize [{lo:.{col.digits}f}, {hi:.{col.digits}f}]}}"
    return text


def render_table(table: Table, *, caption: str = "", ci: bool = False) -> str:
    nlab = len(table.label_keys)
    groups = _header_groups(table.columns)
    env = "table*" if len(table.columns) > WIDE else "table"
    shrink = len(table.columns) > SHRINK
    out = [rf"\begin{{{env}}}[t]", r"\centering", r"\small", r"\setlength{\tabcolsep}{4pt}"]
    if shrink:
        out.append(r"\resizebox{\textwidth}{!}{%")
    out += [r"\begin{tabular}{" + "l" * nlab + "r" * len(table.columns) + "}", r"\toprule"]
    if any(h for h, _ in groups):
        top, rules, col = [""] * nlab, [], nlab + 1
        for h, subs in groups:
            if h:
                top.append(rf"\multicolumn{{{len(subs)}}}{{c}}{{{escape(h)}}}")
                rules.append(rf"\cmidrule(lr){{{col}-{col + len(subs) - 1}}}")
            else:
                top.extend([""] * len(subs))
            col += len(subs)
        out.append(" & ".join(top) + r" \\")
        out.append(" ".join(rules))
    lower = [escape(label) for _, label in table.label_keys]
    lower += [escape(s) for _, subs in groups for s in subs]
    out += [" & ".join(lower) + r" \\", r"\midrule"]
    best = {c.key: best_rows(table, c) for c in table.columns}
    block = None
    for i, r in enumerate(table.rows):
        if table.block_key and block is not None and r.labels.get(table.block_key) != block:
            out.append(r"\midrule")
        block = r.labels.get(table.block_key) if table.block_key else None
        cells = [escape(r.labels.get(k, "")) for k, _ in table.label_keys]
        cells += [_cell(table, i, c, best[c.key], ci) for c in table.columns]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    if shrink:
        out.append("}")
    notes = [*table.notes, *null_notes(table)]
    if notes:
        out.append(r"\par\smallskip{\footnotesize " + escape("; ".join(notes)) + "}")
    text = escape(table.title) + (". " + escape(caption) if caption else "")
    if table.mark_best and any(c.better for c in table.columns):
        text += " Best value per column in bold."
    out += [rf"\caption{{{text}}}", rf"\label{{tab:ctxeval-{table.name}}}", rf"\end{{{env}}}"]
    return "\n".join(out) + "\n"


def render(report: Report, *, ci: bool = False) -> str:
    caption = " ".join(n[0].upper() + n[1:] + "." for n in report.notes if n)
    wide = any(len(t.columns) > SHRINK for t in report.tables)
    head = ("% ctxeval report (" + report.view + "); needs \\usepackage{booktabs}"
            + (" and \\usepackage{graphicx}" if wide else "") + "\n")
    return head + "\n".join(render_table(t, caption=caption, ci=ci) for t in report.tables)
