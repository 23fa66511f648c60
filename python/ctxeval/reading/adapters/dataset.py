"""Trajectory datasets: a Parquet file with one trajectory per row, the agent's raw record in
the column ``trajectory`` (RL rollouts stored as tables rather than files), or the same as
JSON lines (``{"trajectory": <record>, "instance_id": ..., "name": ...}``, no other keys).

Each record is read by the adapter of its own format (any supported one, or the neutral
format), through :class:`ctxeval.reading.records.RecordReader`: a dataset row and the same record as
a file give the same trajectory. Optional columns: ``instance_id`` (the gold instance, where the
record does not say) and ``name`` (the file name the record would have, for formats that take
the id from it). A row that cannot be read is that row's error (``line`` is the row number,
from 1), and the other rows are still read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...errors import AdapterError
from ...model import Trajectory

FORMAT = "dataset"
PRIORITY = -1  # before the neutral format, whose detection a wrapped neutral record passes
#: The column holding each row's raw record.
RECORD_COLUMN = "trajectory"
_SUFFIXES = (".parquet", ".pq")


#: The keys of a JSON-lines dataset's rows.
_KEYS = frozenset((RECORD_COLUMN, "instance_id", "name"))
_JSONL = (".jsonl", ".ndjson")


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and RECORD_COLUMN in value and set(value) <= _KEYS


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    suffix = path.suffix.lower()
    if suffix in _JSONL and head.lstrip().startswith(b"{"):
        try:
            with path.open("rb") as fh:
                return _is_row(orjson.loads(fh.readline()))
        except (OSError, orjson.JSONDecodeError):
            return False
    if suffix not in _SUFFIXES or not head.startswith(b"PAR1"):
        return False
    import pyarrow.parquet as pq

    try:
        return RECORD_COLUMN in pq.read_schema(path).names
    except (OSError, ValueError):
        return False


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | AdapterError]]:
    """(row from 0, row) of a dataset, a row that is not one being its error; a JSON-lines
    file's row is its line (less one), blank lines counted."""
    if path.suffix.lower() in _JSONL:
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    yield lineno - 1, AdapterError(f"not valid JSON: {exc}", path=str(path),
                                                   line=lineno)
                    continue
                yield lineno - 1, rec if _is_row(rec) else AdapterError(
                    f"a dataset row is an object with {RECORD_COLUMN!r} (and optionally "
                    "'instance_id', 'name')", path=str(path), line=lineno)
        return
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = set(pf.schema_arrow.names)
    columns = [c for c in (RECORD_COLUMN, "instance_id", "name") if c in names]
    row = 0
    for group in range(pf.metadata.num_row_groups):
        for rec in pf.read_row_group(group, columns=columns).to_pylist():
            yield row, rec
            row += 1


def row_trajectories(reader: Any, rec: dict[str, Any], row: int, where: str, options: Any,
                     column: str = RECORD_COLUMN) -> list[Trajectory] | AdapterError:
    """The trajectories of one dataset row (``row`` from 0), or the error naming it."""
    raw = rec.get(column)
    got = reader.read(raw if raw is not None else b"", instance_id=rec.get("instance_id"),
                      name=rec.get("name"), options=options)
    if got.problem is not None:
        return AdapterError(got.problem.message, path=where, line=row + 1,
                            field=column, kind=got.problem.kind)
    return got.trajectories


def iter_read(path: Path, options: Any = None) -> Iterator[Trajectory | AdapterError]:
    """Row by row (a Parquet file one row group in memory at a time); a row that cannot be
    read is its error, naming the row (from 1: the line of a JSON-lines file)."""
    from ..records import RecordReader

    reader = RecordReader()
    skip = options.skip if options is not None else frozenset()
    try:
        for row, rec in _rows(path):
            iid = rec.get("instance_id") if isinstance(rec, dict) else None
            if skip and isinstance(iid, str) and iid in skip:  # kept by --resume: not read
                yield Trajectory(instance_id=iid)
                continue
            got = rec if isinstance(rec, AdapterError) else \
                row_trajectories(reader, rec, row, str(path), options)
            if isinstance(got, AdapterError):
                yield got
            else:
                yield from got
    except (OSError, ValueError) as exc:  # pyarrow's errors are ValueErrors
        yield AdapterError(f"cannot read the dataset: {exc}", path=str(path))
    finally:
        reader.close()


def read(path: Path, options: Any = None) -> list[Trajectory]:
    out = []
    for rec in iter_read(path, options):
        if isinstance(rec, AdapterError):
            raise rec
        out.append(rec)
    return out
