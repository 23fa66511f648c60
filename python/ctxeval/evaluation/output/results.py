"""Result rows and the files that hold them (``spec/results-format.md``).

Rows are written as JSONL, one per (run, instance), at full precision and never with NaN or
Infinity, or as Parquet when the output's name ends in ``.parquet`` (:mod:`.results_parquet`:
the same fields as typed columns); ``<out>.meta.json`` beside them records what produced them.
Both formats are read by :func:`read_rows`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson

from ..._core import __version__
from ...errors import InputError, Problem, excerpt
from .outfile import is_parquet
from .row_ranges import in_range, kind_of, range_message, relaxed

# Parquet (pyarrow) is imported where it is used: importing it costs every command a tenth of
# a second, and most never read or write Parquet.

ROW_STATUSES = ("ok", "agent_failure", "error")
GRANULARITIES = ("file", "symbol", "span", "line")


def finite(obj: Any) -> Any:
    """The same structure with every non-finite float replaced by None (JSON has no NaN)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps_row(row: dict[str, Any]) -> bytes:
    """One JSONL line. orjson writes NaN and the infinities as null (JSON has no NaN), as
    :func:`finite` would (tested): copying every row through it first cost a warm evaluation
    of the real-history benchmark 8% of its CPU, for the same bytes."""
    return orjson.dumps(row) + b"\n"


#: Longest error message a row holds: messages quote their values in excerpts
#: (:func:`ctxeval.errors.excerpt`); this bounds one built from anything else (an OS error's
#: file name).
MESSAGE_LIMIT = 2000


def error_row(instance_id: str, run: str | None, kind: str, message: str,
              **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"instance_id": instance_id, "run": run, "status": "error",
                           "error": {"kind": kind, "message": excerpt(message, MESSAGE_LIMIT)}}
    row.update(extra)
    return row


def json_lines(path: str | Path, unreadable: str = "cannot read"
               ) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSON-lines file, read line by line;
    a file that cannot be opened (``unreadable`` says what to do then) or a line that is not
    JSON is an error naming the file and line."""
    p = Path(path)
    try:
        fh = p.open("rb")
    except OSError as exc:
        raise InputError(f"{unreadable}: {exc.strerror}", path=str(path)) from exc
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield lineno, orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc}", path=str(path), line=lineno) from exc


#: Sections of a row that hold metrics: every value inside is a number or null, except the
#: named leaves below (a step's tool, the exact-match flag of the text metrics) and the one
#: list, ``trajectory.steps``.
METRIC_SECTIONS = ("final", "trajectory", "editloc", "text", "usage")
_TEXT_LEAVES = frozenset({"tool"})
_BOOL_LEAVES = frozenset({"patch_exact_match"})


_NUMBERS = (int, float)
#: Deepest a metric section nests (``trajectory.steps[k].coverage.line`` is 4): anything deeper
#: is not a metric, and walking it would exhaust Python's stack (a row nested 10,000 levels).
MAX_DEPTH = 16


def _metrics_ok(value: Any, leaf: str = "", steps: bool = False, parent: str = "",
                loose: bool = False, depth: int = 0) -> bool:
    """Whether a metric section is well formed: what :func:`_metric_problem` checks, without
    building a path per value (a report reads thousands of rows of ~50 steps each). ``steps``:
    ``value`` is ``trajectory`` or its ``steps``, where the one list may be; ``parent``: the
    name of the object holding ``value``; ``loose``: the row follows the ContextBench
    evaluator's conventions (:mod:`.row_ranges`)."""
    t = type(value)
    if value is None:
        return True
    if t is int or t is float:
        return in_range(value, kind_of(leaf, parent), loose)
    if (t is dict or t is list) and depth > MAX_DEPTH:
        return False
    if t is dict:
        for k, v in value.items():
            tv = type(v)
            if tv is int or tv is float:
                if not in_range(v, kind_of(k, leaf), loose):
                    return False
            elif v is not None and not _metrics_ok(v, k, steps and k == "steps", leaf, loose,
                                                   depth + 1):
                return False
        return True
    if t is list:
        return steps and all(type(v) is dict and _metrics_ok(v, "", False, leaf, loose,
                                                             depth + 1) for v in value)
    if t is str:
        return leaf in _TEXT_LEAVES
    return t is bool and leaf in _BOOL_LEAVES


def _metric_problem(value: Any, path: str, leaf: str, parent: str = "",
                    loose: bool = False, depth: int = 0) -> tuple[str, str] | None:
    """(field, message) of the first value under ``path`` that a metric section cannot hold
    (a type, or a value out of its metric's range)."""
    if value is None:
        return None
    if depth > MAX_DEPTH and isinstance(value, (dict, list)):
        return path, f"a metric section nests at most {MAX_DEPTH} levels; this is deeper"
    if isinstance(value, dict):
        for k, v in value.items():
            bad = _metric_problem(v, f"{path}.{k}", str(k), leaf, loose, depth + 1)
            if bad is not None:
                return bad
        return None
    if isinstance(value, list):
        if path != "trajectory.steps":
            return path, "a metric must be a number or null, not a list"
        for i, v in enumerate(value):
            if not isinstance(v, dict):
                return f"{path}[{i}]", "a step must be an object"
            bad = _metric_problem(v, f"{path}[{i}]", "", leaf, loose, depth + 1)
            if bad is not None:
                return bad
        return None
    if leaf in _TEXT_LEAVES and isinstance(value, str):
        return None
    if isinstance(value, bool):
        return None if leaf in _BOOL_LEAVES else (path, f"a metric must be a number or null, "
                                                        f"not {orjson.dumps(value).decode()}")
    if isinstance(value, _NUMBERS):
        kind = kind_of(leaf, parent)
        return None if in_range(value, kind, loose) else \
            (path, range_message(value, kind, loose))
    shown = orjson.dumps(value).decode()
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return path, f"a metric must be a number or null, not {shown}"


def row_problem(row: Any) -> tuple[str | None, str] | None:
    """Why ``row`` is not a result row (``spec/results-format.md``), as (field, message); None
    when it is one. Rows of the ContextBench evaluator, whose shape ours keeps, are result rows
    too (they have no ``status``)."""
    if not isinstance(row, dict):
        return None, "a result row must be a JSON object"
    iid = row.get("instance_id")
    if not isinstance(iid, str) or not iid:
        return "instance_id", "a result row needs an instance id (a non-empty string)"
    status = row.get("status")
    if status is not None and status not in ROW_STATUSES:
        return "status", f"status must be one of {', '.join(ROW_STATUSES)}, not {status!r}"
    if status == "error" or (status is None and "error" in row and "final" not in row):
        err = row.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return None
        if status is None and isinstance(err, str):  # the ContextBench evaluator's error rows
            return None
        return "error", "an error row needs an error object with a message"
    if "format" in row:  # trajectories, views records: formats of their own
        return "format", f"a record of format {row['format']!r}, not a result row"
    final = row.get("final")
    if not isinstance(final, dict):
        return "final", "a result row needs its final-context metrics (an object)"
    for key, v in final.items():
        if key not in GRANULARITIES:
            return f"final.{key}", f"not a granularity ({', '.join(GRANULARITIES)})"
        if v is not None and not isinstance(v, dict):
            return f"final.{key}", "must be an object of metrics or null"
    for key in ("run", "preset"):
        if row.get(key) is not None and not isinstance(row[key], str):
            return key, "must be a string or null"
    for key in ("num_steps",):
        v = row.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            return key, f"must be a whole number, 0 or more, or null, not {v!r}"
    if row.get("resolved") is not None and not isinstance(row["resolved"], bool):
        return "resolved", "must be true, false or null"
    steps = (row.get("trajectory") or {}).get("steps")
    if steps is not None and not isinstance(steps, list):
        return "trajectory.steps", "must be a list"
    loose = relaxed(row)
    for key in METRIC_SECTIONS:
        v = row.get(key)
        if v is not None and not isinstance(v, dict):
            return key, "must be an object or null"
        # fast; the walk says where and why
        if not _metrics_ok(v, key, key == "trajectory", "", loose):
            bad = _metric_problem(v, key, key, "", loose)
            if bad is not None:
                return bad
    return None


def records(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSONL file, or (row number, row) of a Parquet results
    table, without the checks of :func:`read_rows` (a Parquet table that is not results is an
    error all the same)."""
    if Path(path).is_dir() and not is_parquet(path):
        raise InputError("a directory, not a results file (nor a results dataset: a directory "
                         "of part-*.parquet files written by 'ctxeval evaluate --engine ray')",
                         path=str(path))
    if not is_parquet(path):
        yield from json_lines(path)
        return
    from .results_parquet import is_results_schema, read_table, table_to_rows

    try:
        table = read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"cannot read: {exc}", path=str(path)) from exc
    if not is_results_schema(table.column_names):
        # Gold annotations are Parquet too, with an instance_id column: a results table is
        # told by the bookkeeping columns only ctxeval writes.
        _not_results(path, None)
        raise InputError("not a results table (no instance_id column)", path=str(path))
    try:
        rows = list(table_to_rows(table))
    except (ValueError, TypeError) as exc:  # a column of another type: cast refused
        raise InputError(f"not a results table ctxeval {__version__} reads: {exc}",
                         path=str(path)) from exc
    yield from enumerate(rows, start=1)


def read_rows(path: str | Path, *, allow_empty: bool = False) -> Iterator[dict[str, Any]]:
    """Rows of a results file, JSONL or Parquet, each checked against the results format: a
    line (row) that is not a result row is an error naming the file, line and field. A file
    with no result row at all is an error saying what the file looks like instead (gold,
    trajectories, a report...), unless ``allow_empty`` (an output the API reads back).

    Every reader of result rows (report, compare, view) reads through here, so that a
    malformed value is an error once, here, instead of a null in some table."""
    for _, row in numbered_rows(path, allow_empty=allow_empty):
        yield row


def repeats_allowed(row: dict[str, Any]) -> bool:
    """Whether a row may repeat a run and instance: the ContextBench evaluator scores every
    record it is given, a repeated one too, and counts both in its aggregate; its rows (no
    ``status``) and rows of the preset that reproduces it may therefore repeat. ctxeval's own
    ``strict`` rows never do (``docs/presets.md``)."""
    return row.get("preset") == "contextbench" or "status" not in row


def read_results(paths: Iterable[str | Path], *, unique: bool = True) -> list[dict[str, Any]]:
    """The rows of several results files, in order (:func:`read_rows`). ``unique``: a second
    row of one run, preset and instance is an error naming both places -- averaged in, it
    would count the instance twice (the same file given twice, files of one run put
    together) -- except where :func:`repeats_allowed`."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple[Any, Any, str], tuple[str, int]] = {}
    for path in paths:
        for lineno, row in numbered_rows(path):
            if unique and not repeats_allowed(row):
                key = (row.get("run"), row.get("preset"), row["instance_id"])
                first = seen.get(key)
                if first is None:
                    seen[key] = (str(path), lineno)
                else:
                    raise InputError(
                        f"a second row of run {key[0]}, instance {key[2]} (the first is at "
                        f"{first[0]}:{first[1]}): one row per run and instance is averaged; "
                        "is a file given twice, or are files of one run put together?",
                        path=str(path), line=lineno)
            out.append(row)
    return out


def numbered_rows(path: str | Path, *, allow_empty: bool = False
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) of :func:`read_rows`."""
    n = 0
    lines = records(path)
    while True:
        try:
            lineno, row = next(lines, (0, None))
        except InputError as exc:
            if n == 0 and exc.line is not None:  # the first record is not JSON
                _not_results(path, None)
            raise
        if lineno == 0:
            break
        bad = row_problem(row)
        if bad is not None:
            if n == 0:
                _not_results(path, row)
            raise InputError(f"not a result row: {bad[1]}", path=str(path), line=lineno,
                             field=bad[0])
        n += 1
        yield lineno, row
    if n == 0 and not allow_empty:
        raise InputError("no result rows: the file is empty; results files are written by "
                         "'ctxeval evaluate --out'", path=str(path))


def _not_results(path: str | Path, first: Any) -> None:
    """Raise, for a file whose first record is not a result row, an error saying what the file
    looks like (:func:`ctxeval.reading.identify.describe`); return when it looks like nothing known
    (the caller then names the line and field)."""
    from ...reading.identify import describe

    looks = describe(Path(path), first)
    if looks:
        raise InputError(f"not a results file (no result rows): it looks like {looks}; "
                         "results files are written by 'ctxeval evaluate --out'",
                         path=str(path))


class LineSink(Protocol):
    """Where a :class:`RowWriter` writes: a binary stream or a
    :class:`~ctxeval.evaluation.output.destination.Destination` (whole lines only)."""

    def write(self, data: bytes, /) -> Any: ...


class RowWriter:
    """Streams rows, a whole line each, to a line sink (a
    :class:`~ctxeval.evaluation.output.destination.Destination`, a binary stream), and counts
    them by status."""

    def __init__(self, out: LineSink) -> None:
        self.out = out
        self.counts = dict.fromkeys(ROW_STATUSES, 0)
        self.errors: list[Problem] = []

    def write(self, row: dict[str, Any], *, parsed: bool = False) -> None:
        """Write one row. ``parsed``: the row was just parsed from JSON (the Ray engine's
        rows), so it holds nothing JSON would not (no NaN, no tuples) as it stands."""
        self.out.write(orjson.dumps(row) + b"\n" if parsed else dumps_row(row))
        self.count(row)

    def count(self, row: dict[str, Any]) -> None:
        """Count a row written elsewhere (a part file an actor of the Ray engine wrote; ``row``
        needs only its instance id, status and error)."""
        status = row.get("status", "ok")
        self.counts[status] = self.counts.get(status, 0) + 1
        if status == "error":
            err = row.get("error") or {}
            self.errors.append(Problem(str(err.get("kind", "error")),
                                       f"{row.get('instance_id')}: {err.get('message', '')}"))

    def flush(self) -> None:
        flush = getattr(self.out, "flush", None)
        if flush is not None:
            flush()
