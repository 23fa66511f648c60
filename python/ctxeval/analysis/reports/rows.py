"""Reading result rows for reports: field access by dotted path, grouping by run and field."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...evaluation.output.results import read_results, repeats_allowed
from ...evaluation.rows import field_value

NO_GROUP = "(none)"


def load_rows(paths: Iterable[str | Path], *, unique: bool = True) -> list[dict[str, Any]]:
    """All rows of the given results files, in order (a bad line raises an InputError, and so
    does a second row of one run and instance unless ``unique`` is False: see
    :func:`~ctxeval.evaluation.output.results.read_results`)."""
    return read_results(paths, unique=unique)


def group_label(row: dict[str, Any], by: str) -> str:
    """The --by label of a row: the field's value as text, ``(none)`` when absent."""
    v = field_value(row, by)
    if v is None or v == "":
        return NO_GROUP
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def has_field(row: dict[str, Any], path: str) -> bool:
    """Whether the row holds the dotted path (its value may be null)."""
    cur: Any = row
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    return True


def check_group_field(rows: Sequence[dict[str, Any]], by: str) -> None:
    """Raise an :class:`InputError` when no row has the ``--by`` field: a typo
    (``--by langauge``) would otherwise put every row in one group "(none)" and look like a
    result. The message lists the fields the rows have, the closest first."""
    if not rows or any(has_field(r, by) for r in rows):
        return
    fields = sorted({k for r in rows for k, v in r.items()
                     if not isinstance(v, (dict, list)) and not k.startswith("_")})
    close = difflib.get_close_matches(by, fields, n=1)
    raise InputError(f"--by {by}: no row has this field"
                     f"{f' (did you mean {close[0]}?)' if close else ''}; the rows' fields: "
                     f"{', '.join(fields)}, or a dotted path into them (usage.api_calls)")


def check_unique(rows: Sequence[dict[str, Any]]) -> None:
    """Raise an :class:`InputError` when two rows have one run, preset and instance (rows
    handed over in memory; files are checked as they are read, naming file and line), except
    rows that may repeat (:func:`~ctxeval.evaluation.output.results.repeats_allowed`)."""
    seen: dict[tuple[Any, Any, Any], int] = {}
    for k, r in enumerate(rows, start=1):
        if repeats_allowed(r):
            continue
        key = (r.get("run"), r.get("preset"), r.get("instance_id"))
        first = seen.setdefault(key, k)
        if first != k:
            raise InputError(f"rows {first} and {k} are both of run {key[0]}, instance "
                             f"{key[2]}: one row per run and instance is averaged")


def repeated(rows: Sequence[dict[str, Any]]) -> int:
    """Rows that repeat a run and instance already counted (allowed only where the ContextBench
    evaluator's convention is reproduced): a report says how many it averaged in."""
    keys = [(r.get("run"), r.get("preset"), r.get("instance_id")) for r in rows]
    return len(keys) - len(set(keys))


def group_rows(rows: Sequence[dict[str, Any]], by: str | None
               ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Rows keyed by (run, group): runs in order of first appearance, groups sorted in a run.
    When the rows come from several presets, the run label names the preset too (``run
    [contextbench]``): the same run scored two ways must not be pooled. A ``by`` field no row
    has is an error (:func:`check_group_field`), and so are two rows of one run and instance
    (:func:`check_unique`)."""
    if by:
        check_group_field(rows, by)
    check_unique(rows)
    presets = {r.get("preset") for r in rows if r.get("preset")}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in rows:
        run = str(r.get("run") or "-")
        if len(presets) > 1:
            run += f" [{r.get('preset') or '?'}]"
        group = group_label(r, by) if by else ""
        runs.setdefault(run, {}).setdefault(group, []).append(r)
    return {(run, g): groups[g] for run, groups in runs.items() for g in sorted(groups)}


def is_error(row: dict[str, Any]) -> bool:
    """An evaluator error: ``status: error``, or (rows of the ContextBench evaluator, which
    have no status) an ``error`` key."""
    status = row.get("status")
    return status == "error" or (status is None and row.get("error") is not None)


def scored_rows(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows that enter averages (ok and agent failures) and the count of evaluator errors,
    which are left out of every average."""
    scored = [r for r in rows if not is_error(r)]
    return scored, len(rows) - len(scored)


def number(v: Any) -> float | None:
    """A finite number as float; anything else (None, NaN, infinity, text, a bool) is None.
    Rows read from files never get here malformed
    (:func:`ctxeval.evaluation.output.results.read_rows` stops on them, naming file, line and
    field); rows handed over in memory through the API may, and then one bad value counts as a null
    instead of breaking a column."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def numbers(values: Iterable[Any]) -> tuple[list[float], int]:
    """The finite numbers among ``values`` and the count of the others (nulls)."""
    vals, nulls = [], 0
    for v in values:
        f = number(v)
        if f is None:
            nulls += 1
        else:
            vals.append(f)
    return vals, nulls
