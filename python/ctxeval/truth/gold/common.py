"""What every gold format shares: where a record came from, and reading context items.

A bad item must cost only itself, and its report must say where it is (file, row, field), so
every parser works through a :class:`RowCtx` that collects :class:`~ctxeval.errors.Problem`s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import Problem
from ...model import View

BAD = "bad_gold"          # an item or an instance dropped
WARN = "gold_warning"     # kept, but changed or doubtful (reversed range swapped, ...)
DUPLICATE = "duplicate_gold"


@dataclass
class RowCtx:
    """One record of one gold file: where to point problems at, and the problems found."""

    path: str
    row: int | None
    problems: list[Problem] = field(default_factory=list)

    def report(self, kind: str, message: str, fld: str | None = None) -> None:
        self.problems.append(Problem(kind, message, self.path, self.row, fld))


def as_line(value: Any) -> int | None:
    """A line number from an int, an integral float or a decimal string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_items(items: Iterable[Any], ctx: RowCtx, fld: str,
                norm_path: Callable[[str, RowCtx, str], str | None] | None = None,
                ) -> tuple[list[View], list[str]]:
    """Views (and snippet texts) from ``{file, start_line, end_line[, content]}`` items.

    An item without a file or a line, or with a line below 1, is dropped and reported; a
    reversed range is swapped with a warning. Both lines explicitly null is a file-level item
    (what :meth:`GoldInstance.to_json` writes for a file a gold patch creates). ``norm_path``
    maps the annotated path to a repository-relative one (it may report, or return None to drop
    the item).
    """
    views: list[View] = []
    texts: list[str] = []
    for k, item in enumerate(items):
        where = f"{fld}[{k}]"
        if not isinstance(item, dict):
            ctx.report(BAD, "a gold context item must be an object; item dropped", where)
            continue
        f = item.get("file")
        if not isinstance(f, str) or not f.strip():
            ctx.report(BAD, "missing or empty 'file'; item dropped", f"{where}.file")
            continue
        if norm_path is not None:
            f = norm_path(f, ctx, f"{where}.file")
            if not f:
                continue
        if "start_line" in item and "end_line" in item and item["start_line"] is None \
                and item["end_line"] is None:
            views.append(View(f, None, None))  # explicitly file-level (a created file)
            continue
        bounds: list[int] = []
        for key in ("start_line", "end_line"):
            raw = item.get(key)
            value = as_line(raw)
            if raw is None:
                ctx.report(BAD, f"missing '{key}'; item dropped", f"{where}.{key}")
            elif value is None:
                ctx.report(BAD, f"'{key}' is not an integer ({raw!r}); item dropped",
                           f"{where}.{key}")
            elif value < 1:
                ctx.report(BAD, f"'{key}' is {value}, below line 1; item dropped",
                           f"{where}.{key}")
            else:
                bounds.append(value)
                continue
            break
        if len(bounds) != 2:
            continue
        start, end = bounds
        if start > end:
            ctx.report(WARN, f"reversed range {start}-{end} swapped to {end}-{start}",
                       f"{where}.start_line")
            start, end = end, start
        views.append(View(f, start, end))
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
    return views, texts
