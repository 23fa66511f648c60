"""CSV view: the primary table, machine-readable: labels, then per statistic its value, the
instances it stands on and the nulls left out (and the interval bounds with --ci)."""

from __future__ import annotations

import csv
import io
import math

from .table import Report, Table


def _num(v: object) -> object:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return v


def render_table(table: Table, *, ci: bool = False) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = [k for k, _ in table.label_keys]
    for c in table.columns:
        header += [c.key, f"{c.key}.n", f"{c.key}.nulls"]
        if ci:
            header += [f"{c.key}.ci_lo", f"{c.key}.ci_hi"]
    w.writerow(header)
    for r in table.rows:
        line: list[object] = [r.labels.get(k, "") for k, _ in table.label_keys]
        for c in table.columns:
            cell = r.cells.get(c.key)
            if cell is None:
                line += ["", "", ""] + (["", ""] if ci else [])
                continue
            value = "inf" if cell.flag == "no_pass" else _num(cell.value)
            line += [value, cell.n, cell.nulls]
            if ci:
                line += [_num(cell.ci[0]), _num(cell.ci[1])] if cell.ci else ["", ""]
        w.writerow(line)
    return buf.getvalue()


def render(report: Report, *, ci: bool = False) -> str:
    return render_table(report.tables[0], ci=ci)
