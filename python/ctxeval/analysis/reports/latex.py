"""LaTeX view: booktabs tables for papers, the best value per column in bold (direction-aware),
run names escaped, a caption that says how the numbers were aggregated."""

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


def _header_groups(columns: list[Column]) -> list[tuple[str, list[str]]]:
    """Consecutive columns sharing a label prefix ("File cov", "File F1") under one header."""
    groups: list[tuple[str, list[str]]] = []
    for c in columns:
        head, _, sub = c.label.rpartition(" ")
        if head and groups and groups[-1][0] == head:
            groups[-1][1].append(sub)
        else:
            groups.append((head, [sub]) if head else ("", [c.label]))
    # A "group" of one keeps its full label on the lower line.
    return [(h, s) if len(s) > 1 or not h else ("", [f"{h} {s[0]}"]) for h, s in groups]


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
    out = [r"\begin{table}[t]", r"\centering", r"\small",
           r"\begin{tabular}{" + "l" * nlab + "r" * len(table.columns) + "}", r"\toprule"]
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
    notes = [*table.notes, *null_notes(table)]
    if notes:
        out.append(r"\par\smallskip{\footnotesize " + escape("; ".join(notes)) + "}")
    text = escape(table.title) + (". " + escape(caption) if caption else "")
    if table.mark_best and any(c.better for c in table.columns):
        text += " Best value per column in bold."
    out += [rf"\caption{{{text}}}", rf"\label{{tab:ctxeval-{table.name}}}", r"\end{table}"]
    return "\n".join(out) + "\n"


def render(report: Report, *, ci: bool = False) -> str:
    caption = " ".join(n[0].upper() + n[1:] + "." for n in report.notes if n)
    head = ("% ctxeval report (" + report.view + "); needs \\usepackage{booktabs}\n")
    return head + "\n".join(render_table(t, caption=caption, ci=ci) for t in report.tables)
