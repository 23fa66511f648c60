"""The statistics of a report, computed once: tables of cells that every format renders.

A :class:`Cell` keeps, beside its value, how many instances it averages and how many were left out
as null, so that any view (console, LaTeX, CSV, JSON, HTML) can say what a number stands on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

Better = Literal["higher", "lower"] | None


@dataclass(frozen=True, slots=True)
class Column:
    """One statistic of a table. ``better`` drives best-in-column marks (None: no best)."""

    key: str
    label: str
    better: Better = None
    digits: int = 3
    help: str = ""


@dataclass(slots=True)
class Cell:
    """An aggregate: its value, the instances it stands on (``n``), the nulls left out, and an
    optional confidence interval. ``flag`` names a special value (``no_pass``: infinite)."""

    value: float | int | str | None
    n: int = 0
    nulls: int = 0
    ci: tuple[float, float] | None = None
    flag: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": _finite(self.value), "n": self.n, "nulls": self.nulls}
        if self.ci is not None:
            out["ci"] = [_finite(self.ci[0]), _finite(self.ci[1])]
        if self.flag:
            out[self.flag] = True
        return out


@dataclass(slots=True)
class Row:
    """A table row: its labels (run, group, instance...) and one cell per column key."""

    labels: dict[str, str]
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass(slots=True)
class Table:
    """A titled table: label columns first (``label_keys``), then statistic columns."""

    name: str
    title: str
    label_keys: list[tuple[str, str]]
    columns: list[Column]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    #: label key whose value separates blocks for best-in-column marks (e.g. the --by group).
    block_key: str | None = None
    #: whether formats mark the best value per column (not in per-instance listings).
    mark_best: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "labels": [k for k, _ in self.label_keys],
            "columns": [{"key": c.key, "label": c.label, "better": c.better}
                        for c in self.columns],
            "rows": [{**r.labels, "values": {k: c.to_json() for k, c in r.cells.items()}}
                     for r in self.rows],
            "notes": list(self.notes),
        }


@dataclass(slots=True)
class Report:
    """Everything a view shows: the tables (the first is the primary one) and general notes."""

    view: str
    tables: list[Table]
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view, **self.meta, "notes": list(self.notes),
                "tables": [t.to_json() for t in self.tables]}


def _finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def format_value(cell: Cell | None, col: Column, *, ci: bool = False) -> str:
    """The text of a cell: ``-`` for null, ``inf`` for no pass, fixed digits per column."""
    if cell is None:
        return ""
    if cell.flag == "no_pass":
        return "inf"
    v = cell.value
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    text = f"{v:.{col.digits}f}"
    if ci and cell.ci is not None:
        text += f" [{cell.ci[0]:.{col.digits}f}, {cell.ci[1]:.{col.digits}f}]"
    return text


def best_rows(table: Table, col: Column) -> set[int]:
    """Indexes of the rows holding the best value of a column, per block, compared at the
    displayed precision (so that ties on paper are all marked). Empty when no direction."""
    if col.better is None or not table.mark_best:
        return set()
    blocks: dict[str, list[tuple[int, float]]] = {}
    for i, row in enumerate(table.rows):
        cell = row.cells.get(col.key)
        if cell is None or cell.flag or not isinstance(cell.value, (int, float)):
            continue
        if isinstance(cell.value, float) and not math.isfinite(cell.value):
            continue
        block = row.labels.get(table.block_key, "") if table.block_key else ""
        blocks.setdefault(block, []).append((i, round(float(cell.value), col.digits)))
    out: set[int] = set()
    for members in blocks.values():
        if len(members) < 2:
            continue
        pick = max if col.better == "higher" else min
        best = pick(v for _, v in members)
        out.update(i for i, v in members if v == best)
    return out


def null_notes(table: Table) -> list[str]:
    """Lines naming, per row, the columns that left instances out as null."""
    lines = []
    for row in table.rows:
        parts = [f"{c.label} {row.cells[c.key].nulls}" for c in table.columns
                 if c.key in row.cells and row.cells[c.key].nulls]
        if parts:
            who = " / ".join(row.labels[k] for k, _ in table.label_keys if row.labels.get(k))
            lines.append(f"{who}: nulls left out: " + ", ".join(parts))
    return lines
