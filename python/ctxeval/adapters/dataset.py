"""Trajectory datasets: a Parquet file with one trajectory per row, the agent's raw record in
the column ``trajectory`` (RL rollouts stored as tables rather than files).

Each record is read by the adapter of its own format (any supported one, or the neutral
format), through :class:`ctxeval.records.RecordReader`: a dataset row and the same record as a
file give the same trajectory. Optional columns: ``instance_id`` (the gold instance, where the
record does not say) and ``name`` (the file name the record would have, for formats that take
the id from it). A row that cannot be read is that row's error (``line`` is the row number,
from 1), and the other rows are still read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import AdapterError
from ..model import Trajectory

FORMAT = "dataset"
PRIORITY = 5
#: The column holding each row's raw record.
RECORD_COLUMN = "trajectory"
_SUFFIXES = (".parquet", ".pq")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir() or path.suffix.lower() not in _SUFFIXES or not head.startswith(b"PAR1"):
        return False
    import pyarrow.parquet as pq

    try:
        return RECORD_COLUMN in pq.read_schema(path).names
    except (OSError, ValueError):
        return False


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
    """Row by row, one row group in memory at a time."""
    import pyarrow.parquet as pq

    from ..records import RecordReader

    try:
        pf = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        yield AdapterError(f"cannot read the Parquet dataset: {exc}", path=str(path))
        return
    names = set(pf.schema_arrow.names)
    columns = [c for c in (RECORD_COLUMN, "instance_id", "name") if c in names]
    reader = RecordReader()
    try:
        row = 0
        for group in range(pf.metadata.num_row_groups):
            for rec in pf.read_row_group(group, columns=columns).to_pylist():
                got = row_trajectories(reader, rec, row, str(path), options)
                row += 1
                if isinstance(got, AdapterError):
                    yield got
                else:
                    yield from got
    finally:
        reader.close()


def read(path: Path, options: Any = None) -> list[Trajectory]:
    out = []
    for rec in iter_read(path, options):
        if isinstance(rec, AdapterError):
            raise rec
        out.append(rec)
    return out
