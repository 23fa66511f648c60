"""What values each metric of a result row may take.

Types alone let impossible values through: a coverage of 1.5, an F1 of -0.3 or 1e308 are
numbers, and a report averaged them in. Every metric leaf of a row has a kind, told by its
name and its parent's (``final.line.f1`` is a ratio, ``trajectory.viewed.line`` a count,
``trajectory.auc_coverage.line`` a ratio), and each kind its range:

=========== ======================================== ==========================================
kind        leaves                                   range
=========== ======================================== ==========================================
ratio       coverage, precision, recall, f1; the     0 to 1 (a rounding error of 1e-9 allowed)
            per-granularity values of a step's
            ``coverage`` and of ``auc_coverage``;
            the text metrics
redundancy  ``redundancy.<g>``                       0 to 1
size        intersection, gold_size, pred_size       a whole number, 0 or more
count       ``viewed``/``new``/``seen_gold``/        a whole number, 0 or more
            ``evidence_drop`` values; tokens, API
            calls
step        a step's ``step``; ``first_gold_step``   a whole number, 1 or more
cost        ``usage.cost``                           a finite number, 0 or more
=========== ======================================== ==========================================

A leaf of no known kind (a metric added later) may be any finite number.

The ContextBench evaluator writes some values outside these ranges, quirks its preset
reproduces (``docs/presets.md``): a reversed prediction range is measured as a negative number
of lines, so ``pred_size`` can be negative (-3 in the parity suite), a step's ``viewed`` and
``new`` too (-9, -15), and redundancy can then fall below 0 (-0.2857). Rows of that convention
-- the evaluator's own (no ``status``) and ctxeval's ``contextbench`` rows -- may hold negative
sizes and counts and a redundancy below 0; ratios keep their range, and nothing else is
relaxed.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

#: Slack above 1 for a ratio computed in floating point.
EPSILON = 1e-9

_RATIO_LEAVES = frozenset({"coverage", "precision", "recall", "f1", "context_token_precision",
                           "context_token_recall", "context_token_f1", "patch_exact_match",
                           "patch_token_f1"})
_SIZE_LEAVES = frozenset({"intersection", "gold_size", "pred_size"})
_COUNT_LEAVES = frozenset({"input_tokens", "output_tokens", "api_calls"})
_RATIO_PARENTS = frozenset({"coverage", "auc_coverage"})
_COUNT_PARENTS = frozenset({"viewed", "new", "seen_gold", "evidence_drop"})


def relaxed(row: dict[str, Any]) -> bool:
    """Whether the row follows the ContextBench evaluator's conventions (see the module doc)."""
    return row.get("preset") == "contextbench" or "status" not in row


@cache
def kind_of(leaf: str, parent: str) -> str | None:
    """The kind of a metric leaf named ``leaf`` inside an object named ``parent``."""
    if parent in _RATIO_PARENTS:
        return "ratio"
    if parent == "redundancy":
        return "redundancy"
    if parent in _COUNT_PARENTS:
        return "count"
    if parent == "first_gold_step" or leaf == "step":
        return "step"
    if leaf in _RATIO_LEAVES:
        return "ratio"
    if leaf in _SIZE_LEAVES:
        return "size"
    if leaf in _COUNT_LEAVES:
        return "count"
    if leaf == "cost":
        return "cost"
    return None


def in_range(value: int | float, kind: str | None, loose: bool = False) -> bool:
    """Whether a number (not a bool) is a value its kind may take; ``loose``: the row follows
    the ContextBench evaluator's conventions."""
    if kind is None:
        return type(value) is int or math.isfinite(value)
    if kind == "ratio":
        return 0 <= value <= 1 + EPSILON
    if kind == "redundancy":
        return (loose or value >= 0) and value <= 1 + EPSILON and math.isfinite(value)
    if kind == "cost":
        return 0 <= value < math.inf
    if type(value) is not int:
        return False
    if kind == "step":
        return value >= 1
    return value >= 0 or (loose and kind in ("size", "count"))


def range_message(value: int | float, kind: str | None, loose: bool = False) -> str:
    """Why a value is outside its kind's range (:func:`in_range` is False)."""
    if kind is None or (kind != "ratio" and not math.isfinite(value)):
        return f"a metric must be a finite number, not {value!r}"
    if kind in ("ratio", "redundancy"):
        low = "at most 1" if loose and kind == "redundancy" else "between 0 and 1"
        return f"a {'ratio' if kind == 'ratio' else 'redundancy'} must be {low}, not {value!r}"
    if kind == "cost":
        return f"a cost must be 0 or more, not {value!r}"
    if type(value) is not int:
        return f"a {kind} must be a whole number, not {value!r}"
    least = 1 if kind == "step" else 0
    return f"a {kind} must be {least} or more, not {value!r}"
