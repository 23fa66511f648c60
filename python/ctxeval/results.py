"""Result rows and the files that hold them (``spec/results-format.md``).

Rows are written as JSONL, one per (run, instance), at full precision and never with NaN or
Infinity, or as Parquet when the output's name ends in ``.parquet`` (:mod:`.results_parquet`:
the same fields as typed columns); ``<out>.meta.json`` beside them records what produced them.
Both formats are read by :func:`read_rows`.
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ._core import __version__
from .errors import InputError, Problem
from .results_parquet import ParquetRows, is_parquet, read_table, table_to_rows

ROW_STATUSES = ("ok", "agent_failure", "error")


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
    """One JSONL line. orjson already writes NaN/Infinity as null; :func:`finite` makes that
    explicit and independent of the serializer."""
    return orjson.dumps(finite(row)) + b"\n"


def error_row(instance_id: str, run: str | None, kind: str, message: str,
              **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"instance_id": instance_id, "run": run, "status": "error",
                           "error": {"kind": kind, "message": message}}
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


def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a results file, JSONL or Parquet; a bad line is an error naming the file and
    line, a Parquet file that cannot be read an error naming the file."""
    if is_parquet(path):
        try:
            table = read_table(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"cannot read: {exc}", path=str(path)) from exc
        if "instance_id" not in table.column_names:
            raise InputError("not a results table (no instance_id column)", path=str(path))
        yield from table_to_rows(table)
        return
    for lineno, row in json_lines(path):
        if not isinstance(row, dict) or "instance_id" not in row:
            raise InputError("not a result row (no instance_id)", path=str(path), line=lineno)
        yield row


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, or of a directory as sorted (relative path, file hash) pairs."""
    h = hashlib.sha256()
    if path.is_dir():
        for p in sorted(q for q in path.rglob("*") if q.is_file()):
            h.update(p.relative_to(path).as_posix().encode() + b"\0")
            h.update(sha256_of(p).encode() + b"\n")
        return h.hexdigest()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_meta(out: Path, *, preset: str, final_policy: str,
               gold_sources: Iterable[tuple[str, str]],
               grammars: dict[str, str], argv: list[str] | None = None,
               extra: dict[str, Any] | None = None) -> Path:
    """Write ``<out>.meta.json`` and return its path."""
    meta: dict[str, Any] = {
        "ctxeval_version": __version__,
        "preset": preset,
        "final_policy": final_policy,
        "grammars": grammars,
        "gold_sources": [{"path": p, "sha256": h} for p, h in gold_sources],
        "command": list(sys.argv if argv is None else argv),
    }
    if extra:
        meta.update(extra)
    path = out.with_name(out.name + ".meta.json")
    path.write_bytes(orjson.dumps(finite(meta), option=orjson.OPT_INDENT_2) + b"\n")
    return path


class RowWriter:
    """Streams rows to a JSONL file (or stdout), or to a Parquet file, and counts them by
    status."""

    def __init__(self, out: IO[bytes] | ParquetRows, owned: bool = False) -> None:
        self.out = out
        #: Whether :meth:`close` closes ``out`` (a file this writer opened).
        self.owned = owned
        self.counts = dict.fromkeys(ROW_STATUSES, 0)
        self.errors: list[Problem] = []

    @classmethod
    def to_path(cls, path: Path, *, resume: bool = False) -> RowWriter:
        """A writer of ``path``: Parquet when its suffix says so, else JSONL. ``resume`` keeps
        the rows already there (appended to for JSONL, written again for Parquet)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if is_parquet(path):
            keep = list(read_rows(path)) if resume and path.exists() else []
            return cls(ParquetRows(path, keep), owned=True)
        return cls(path.open("ab" if resume else "wb"), owned=True)

    def write(self, row: dict[str, Any], *, parsed: bool = False) -> None:
        """Write one row. ``parsed``: the row was just parsed from JSON (the Ray engine's
        rows), so it holds nothing JSON would not (no NaN, no tuples) as it stands."""
        if isinstance(self.out, ParquetRows):
            # The JSONL row exactly: orjson writes NaN/Infinity as null (see dumps_row).
            self.out.write(row if parsed else orjson.loads(orjson.dumps(row)))
        else:
            self.out.write(orjson.dumps(row) + b"\n" if parsed else dumps_row(row))
        status = row.get("status", "ok")
        self.counts[status] = self.counts.get(status, 0) + 1
        if status == "error":
            err = row.get("error") or {}
            self.errors.append(Problem(str(err.get("kind", "error")),
                                       f"{row.get('instance_id')}: {err.get('message', '')}"))

    def flush(self) -> None:
        if not isinstance(self.out, ParquetRows):
            self.out.flush()

    def close(self) -> None:
        """Close the file this writer opened (a Parquet file is complete only then)."""
        if self.owned:
            self.out.close()
