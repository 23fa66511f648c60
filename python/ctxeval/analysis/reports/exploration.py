"""The exploration view: how each agent explored — steps, what each step showed, re-reads, how
soon it reached the gold context and what it dropped — per instance and as distributions per run.

Everything is read from the rows' per-step counts (``trajectory.steps[*].viewed/new``): the sum
of ``new`` over the steps is the size of the union of views, the sum of ``viewed`` the total
viewing, their difference the re-reads. The tool mix needs a ``tool`` per step in the rows.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .rows import field_value, group_rows, number, numbers, scored_rows
from .table import Cell, Column, Report, Row, Table

#: per-instance quantities; ``better`` says which way is better, for readers of the JSON.
INSTANCE_COLUMNS: tuple[Column, ...] = (
    Column("steps", "steps", None, 0, "steps (actions)"),
    Column("lines_per_step", "lines/step", None, 1, "mean lines shown per step"),
    Column("viewed_lines", "viewed lines", None, 0, "Σ lines shown over the steps"),
    Column("distinct_files", "files", None, 0, "distinct files shown"),
    Column("distinct_lines", "lines", None, 0, "distinct lines shown"),
    Column("reread_lines", "re-read lines", "lower", 0, "lines shown again"),
    Column("redundancy_file", "red. file", "lower", 3, "file-level redundancy"),
    Column("redundancy_line", "red. line", "lower", 3, "line-level redundancy"),
    Column("idle_steps", "no-code steps", None, 0, "steps that showed no file"),
    Column("first_gold_file", "1st gold file", "lower", 0,
           "step of the first gold file (null: never)"),
    Column("first_gold_line", "1st gold line", "lower", 0,
           "step of the first gold line (null: never)"),
    Column("seen_gold_lines", "gold lines seen", "higher", 0, "gold lines ever shown"),
    Column("evidence_drop_line", "drop line", "lower", 0,
           "gold lines seen but not in the final context"),
)

_STATS: tuple[Column, ...] = (
    Column("n", "n", None, 0), Column("nulls", "nulls", None, 0),
    Column("mean", "mean", None, 2), Column("median", "median", None, 2),
    Column("std", "std", None, 2), Column("min", "min", None, 2),
    Column("q1", "q1", None, 2), Column("q3", "q3", None, 2), Column("max", "max", None, 2),
)


def _steps(row: dict[str, Any]) -> list[dict[str, Any]]:
    steps = field_value(row, "trajectory.steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _count(step: dict[str, Any], what: str, gran: str) -> int:
    v = number(field_value(step, f"{what}.{gran}"))
    return int(v) if v is not None else 0


def instance_metrics(row: dict[str, Any]) -> dict[str, Any]:
    """The exploration quantities of one row (None where undefined)."""
    steps = _steps(row)
    n = row.get("num_steps")
    n = len(steps) if not isinstance(n, int) else n
    viewed = [_count(s, "viewed", "line") for s in steps]
    new_lines = sum(_count(s, "new", "line") for s in steps)
    traj = row.get("trajectory") if isinstance(row.get("trajectory"), dict) else {}
    return {
        "steps": n,
        "lines_per_step": sum(viewed) / len(viewed) if viewed else None,
        "viewed_lines": sum(viewed),
        "distinct_files": sum(_count(s, "new", "file") for s in steps),
        "distinct_lines": new_lines,
        "reread_lines": sum(viewed) - new_lines,
        "redundancy_file": field_value(traj, "redundancy.file"),
        "redundancy_line": field_value(traj, "redundancy.line"),
        "idle_steps": sum(1 for s in steps if _count(s, "viewed", "file") == 0),
        "first_gold_file": field_value(traj, "first_gold_step.file"),
        "first_gold_line": field_value(traj, "first_gold_step.line"),
        "seen_gold_lines": field_value(traj, "seen_gold.line"),
        "evidence_drop_line": field_value(traj, "evidence_drop.line"),
    }


def step_lines(rows: Sequence[dict[str, Any]]) -> list[int]:
    """Lines shown per step, pooled over all steps of the rows."""
    return [_count(s, "viewed", "line") for r in rows for s in _steps(r)]


def tool_mix(rows: Sequence[dict[str, Any]]) -> Counter[str] | None:
    """Steps per tool name, when the rows' steps carry ``tool``; None when none do."""
    tools = [s.get("tool") for r in rows for s in _steps(r) if "tool" in s]
    if not tools:
        return None
    return Counter(str(t) if t else "-" for t in tools)


def _describe(values: list[Any]) -> dict[str, Cell]:
    stats = importlib.import_module("ctxeval.analysis.stats")
    vals, nulls = numbers(values)
    d = stats.describe(vals) if vals else {}
    cells = {k: Cell(d.get(k), len(vals)) for k in ("mean", "median", "std", "min", "q1", "q3",
                                                     "max")}
    cells["n"] = Cell(len(vals), len(vals))
    cells["nulls"] = Cell(nulls, len(values))
    return cells


def build_exploration(rows: Sequence[dict[str, Any]], *, by: str | None = None) -> Report:
    """Three tables: distributions per run (and group), the tool mix when recorded, and the
    per-instance quantities (the primary table of CSV output)."""
    dist_rows: list[Row] = []
    inst_rows: list[Row] = []
    mixes: dict[tuple[str, str], Counter[str]] = {}
    for (run, group), members in group_rows(rows, by).items():
        scored, _ = scored_rows(members)
        per = [(r, instance_metrics(r)) for r in scored]
        base = {"run": run, **({by: group} if by else {})}
        for r, m in per:
            inst_rows.append(Row({**base, "instance_id": str(r.get("instance_id"))},
                                 {k: Cell(v, 1 if v is not None else 0,
                                          0 if v is not None else 1) for k, v in m.items()}))
        for col in INSTANCE_COLUMNS:
            dist_rows.append(Row({**base, "quantity": col.label},
                                 _describe([m[col.key] for _, m in per])))
            if col.key == "lines_per_step":
                dist_rows.append(Row({**base, "quantity": "lines/step (all steps)"},
                                     _describe(list(step_lines(scored)))))
        mix = tool_mix(scored)
        if mix is not None:
            mixes[(run, group)] = mix
    label = [("run", "run")] + ([(by, by)] if by else [])
    inst = Table("instances", "Exploration per instance", [*label, ("instance_id", "instance")],
                 list(INSTANCE_COLUMNS), inst_rows, mark_best=False)
    dist = Table("distributions", "Exploration: distributions per run",
                 [*label, ("quantity", "quantity")], list(_STATS), dist_rows)
    tables = [inst, dist]
    if mixes:
        tools = sorted({t for m in mixes.values() for t in m})
        mix_rows = []
        for (run, group), m in mixes.items():
            total = sum(m.values())
            mix_rows.append(Row({"run": run, **({by: group} if by else {})},
                                {t: Cell(m[t] / total, total) for t in tools}))
        tables.append(Table("tools", "Tool mix (share of steps)", label,
                            [Column(t, t, None, 3) for t in tools], mix_rows))
    notes = ["per-instance values from the rows' per-step counts; 1st gold null: the gold "
             "context was never shown (or is empty), counted under nulls",
             "lines/step (all steps): every step of every instance pooled"]
    if not mixes:
        notes.append("tool mix: the rows carry no per-step 'tool'")
    return Report("exploration", tables, notes, meta={"by": by})
