"""Console view: aligned plain-text tables, numbers right-aligned; notes wrapped to fit a
terminal (:data:`WIDTH` columns)."""

from __future__ import annotations

import textwrap

from .table import Report, Table, format_value, null_notes

#: Columns the notes under a table are wrapped to (the default leaderboard fits it too).
WIDTH = 100


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False) or [first.rstrip()]


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
    for n in [*table.notes, *null_notes(table)]:
        out += _wrapped(n, "  ", "    ")
    return "\n".join(out) + "\n"


def render(report: Report, *, ci: bool = False) -> str:
    parts = [render_table(t, ci=ci) for t in report.tables]
    return "\n".join(parts) + "".join(
        "\n".join(_wrapped(f"({n})", "", " ")) + "\n" for n in report.notes)
