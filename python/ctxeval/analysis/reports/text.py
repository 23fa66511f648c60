"""Console view: aligned plain-text tables, numbers right-aligned."""

from __future__ import annotations

from .table import Report, Table, format_value, null_notes


def render_table(table: Table, *, ci: bool = False) -> str:
    header = [label for _, label in table.label_keys] + [c.label for c in table.columns]
    body = [[r.labels.get(k, "") for k, _ in table.label_keys]
            + [format_value(r.cells.get(c.key), c, ci=ci) for c in table.columns]
            for r in table.rows]
    nlab = len(table.label_keys)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < nlab else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [table.title, line(header), line(["-" * w for w in widths])]
    out += [line(row) for row in body]
    out += [f"  {n}" for n in [*table.notes, *null_notes(table)]]
    return "\n".join(out) + "\n"


def render(report: Report, *, ci: bool = False) -> str:
    parts = [render_table(t, ci=ci) for t in report.tables]
    return "\n".join(parts) + "".join(f"({n})\n" for n in report.notes)
