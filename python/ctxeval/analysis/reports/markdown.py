"""Markdown view: GitHub pipe tables, the best value per column in bold."""

from __future__ import annotations

from .table import Report, Table, best_rows, format_value, null_notes


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def render_table(table: Table, *, ci: bool = False) -> str:
    header = [label for _, label in table.label_keys] + [c.label for c in table.columns]
    nlab = len(table.label_keys)
    best = {c.key: best_rows(table, c) for c in table.columns}
    lines = [f"### {_esc(table.title)}", "",
             "| " + " | ".join(_esc(h) for h in header) + " |",
             "|" + "|".join("---" if i < nlab else "---:" for i in range(len(header))) + "|"]
    for i, r in enumerate(table.rows):
        cells = [_esc(r.labels.get(k, "")) for k, _ in table.label_keys]
        for c in table.columns:
            text = _esc(format_value(r.cells.get(c.key), c, ci=ci))
            cells.append(f"**{text}**" if i in best[c.key] else text)
        lines.append("| " + " | ".join(cells) + " |")
    notes = [*table.notes, *null_notes(table)]
    if notes:
        lines.append("")
        lines += [f"- {_esc(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def render(report: Report, *, ci: bool = False) -> str:
    parts = [render_table(t, ci=ci) for t in report.tables]
    tail = "".join(f"*{_esc(n)}*\n\n" for n in report.notes)
    return "\n".join(parts) + ("\n" + tail if tail else "")
