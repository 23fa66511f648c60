"""Result rows as Parquet: the JSONL rows' fields as typed, flattened columns.

One row per (run, instance), as in JSONL. Nested objects are flattened into one typed column
per leaf, named by its dotted path (``final.line.f1``: double, ``usage.input_tokens``: int64);
the per-step data stays one list column (``trajectory.steps``, a list of structs). The schema
is fixed (:data:`ROW_TYPE`, documented in ``docs/results-parquet.md``), so that files written
by different processes (the Ray engine's workers) concatenate.

A Parquet table cannot say what a JSON object leaves out, so three bookkeeping columns keep
the round trip exact, and reading a Parquet file gives back the JSONL rows key for key:

* ``_absent``: dotted paths of the schema's fields the row does not have (``editloc_reason``
  on a row that has an EditLoc score);
* ``_null``: dotted paths of objects that are null as a whole (``editloc`` without a gold
  patch), which flattening would turn into a run of null leaves;
* ``_extra``: anything outside the schema or not of its type, as a JSON object keyed by
  dotted path (null for every row ctxeval writes today): nothing is ever dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

GRANULARITIES = ("file", "symbol", "span", "line")

_F = pa.float64()
_I = pa.int64()
_S = pa.string()


def _per_granularity(t: pa.DataType) -> pa.StructType:
    return pa.struct([(g, t) for g in GRANULARITIES])


_SCORE = pa.struct([("coverage", _F), ("precision", _F), ("f1", _F),
                    ("intersection", _I), ("gold_size", _I), ("pred_size", _I)])
_EDIT = [("recall", _F), ("precision", _F), ("f1", _F),
         ("intersection", _I), ("gold_size", _I), ("pred_size", _I)]
STEP_TYPE = pa.struct([("step", _I), ("coverage", _per_granularity(_F)),
                       ("viewed", _per_granularity(_I)), ("new", _per_granularity(_I)),
                       ("tool", _S)])

#: The row as nested types, in the JSONL rows' key order; the file holds it flattened.
ROW_TYPE = pa.struct([
    ("instance_id", _S), ("run", _S), ("preset", _S), ("final_policy", _S),
    ("final_source", _S), ("gold_kind", _S), ("gold_missing_files", pa.list_(_S)),
    ("status", _S), ("reason", _S),
    ("error", pa.struct([("kind", _S), ("message", _S)])),
    ("language", _S), ("source", _S), ("repo", _S), ("num_steps", _I),
    ("final", pa.struct([(g, _SCORE) for g in GRANULARITIES])),
    ("trajectory", pa.struct([
        ("steps", pa.list_(STEP_TYPE)),
        ("auc_coverage", _per_granularity(_F)), ("redundancy", _per_granularity(_F)),
        ("first_gold_step", _per_granularity(_I)), ("seen_gold", _per_granularity(_I)),
        ("evidence_drop", _per_granularity(_I))])),
    ("editloc", pa.struct([*_EDIT, ("file", pa.struct(_EDIT))])),
    ("editloc_reason", _S),
    ("usage", pa.struct([("input_tokens", _I), ("output_tokens", _I), ("cost", _F),
                         ("api_calls", _I)])),
    ("resolved", pa.bool_()),
    ("unresolved_paths", pa.list_(_S)), ("unresolved_symbols", pa.list_(_S)),
    ("unplaced_lines", _I), ("warnings", pa.list_(_S)), ("pred_file", _S),
    ("gold_instance_id", _S),
    ("text", pa.struct([("context_token_precision", _F), ("context_token_recall", _F),
                        ("context_token_f1", _F), ("patch_exact_match", _F),
                        ("patch_token_f1", _F)])),
])
_BOOKKEEPING = [pa.field("_absent", pa.list_(_S)), pa.field("_null", pa.list_(_S)),
                pa.field("_extra", _S)]


def _leaves(t: pa.StructType, prefix: str = "") -> Iterator[pa.Field]:
    for f in t:
        name = prefix + f.name
        if pa.types.is_struct(f.type):
            yield from _leaves(f.type, name + ".")
        else:
            yield pa.field(name, f.type)


#: The file's schema: one column per leaf of :data:`ROW_TYPE`, then the bookkeeping columns.
SCHEMA = pa.schema([*_leaves(ROW_TYPE), *_BOOKKEEPING])


def _fits(value: Any, t: pa.DataType, whole: bool = False) -> bool:
    """Whether ``value`` is stored by type ``t`` without loss. ``whole``: a struct inside a
    list, where no field may be missing (absences are only recorded outside lists)."""
    if value is None:
        return True
    if pa.types.is_struct(t):
        if not isinstance(value, dict):
            return False
        names = {f.name for f in t}
        if not set(value) <= names or (whole and set(value) != names):
            return False
        return all(_fits(value.get(f.name), f.type, whole) for f in t)
    if pa.types.is_list(t):
        return isinstance(value, list) and all(_fits(v, t.value_type, True) for v in value)
    if isinstance(value, bool):
        return pa.types.is_boolean(t)
    if isinstance(value, int):
        return (pa.types.is_integer(t) and -(1 << 63) <= value < (1 << 63)) \
            or (pa.types.is_floating(t) and abs(value) <= 1 << 53)
    if isinstance(value, float):
        return pa.types.is_floating(t)
    return isinstance(value, str) and pa.types.is_string(t)


def _flatten(obj: dict[str, Any], t: pa.StructType, prefix: str, out: dict[str, Any],
             absent: list[str], null: list[str], extra: dict[str, Any]) -> None:
    names = {f.name for f in t}
    for key, value in obj.items():
        if key not in names:
            extra[prefix + key] = value
    for f in t:
        path = prefix + f.name
        if f.name not in obj:
            absent.append(path)
            continue
        value = obj[f.name]
        if pa.types.is_struct(f.type):
            if value is None:
                null.append(path)
            elif isinstance(value, dict):
                _flatten(value, f.type, path + ".", out, absent, null, extra)
            else:
                extra[path] = value
                null.append(path)
        elif _fits(value, f.type):
            out[path] = value
        else:
            extra[path] = value


def flat_row(row: dict[str, Any]) -> dict[str, Any]:
    """One row as the file's columns (a dict keyed by column name)."""
    out: dict[str, Any] = {}
    absent: list[str] = []
    null: list[str] = []
    extra: dict[str, Any] = {}
    _flatten(row, ROW_TYPE, "", out, absent, null, extra)
    out["_absent"] = absent
    out["_null"] = null
    out["_extra"] = orjson.dumps(extra).decode() if extra else None
    return out


def rows_to_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """Rows (as JSONL holds them, without NaN) as a table of :data:`SCHEMA`."""
    flat = [flat_row(r) for r in rows]
    return pa.Table.from_pylist(flat, schema=SCHEMA)


def _set(row: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    cur = row
    for p in parents:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = cur[p] = {}
        cur = nxt
    cur[last] = value


def _drop(row: dict[str, Any], path: str) -> None:
    *parents, last = path.split(".")
    cur: Any = row
    for p in parents:
        cur = cur.get(p) if isinstance(cur, dict) else None
    if isinstance(cur, dict):
        cur.pop(last, None)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name, value in flat.items():
        if not name.startswith("_"):
            _set(row, name, value)
    for path in flat.get("_null") or ():
        _set(row, path, None)
    for path in flat.get("_absent") or ():
        _drop(row, path)
    if flat.get("_extra"):
        for path, value in orjson.loads(flat["_extra"]).items():
            _set(row, path, value)
    return row


def table_to_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """The JSONL rows a table of :data:`SCHEMA` holds, key for key, in order."""
    for batch in table.to_batches(max_chunksize=4096):
        for flat in batch.to_pylist():
            yield _nest(flat)


def is_parquet(path: str | Path) -> bool:
    """Whether a results path is (or is to be) Parquet: by its suffix, else by its magic."""
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        return True
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson") or not p.is_file():
        return False
    try:
        with p.open("rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError:
        return False


class ParquetRows:
    """Rows streamed to a Parquet file, a row group every :attr:`group` rows.

    The file is written under a temporary name and takes its own at :meth:`close`, so that a
    reader never sees a half-written footer. ``keep`` are rows to write first (``--resume``:
    a Parquet file cannot be appended to, so the rows kept are written again).
    """

    def __init__(self, path: Path, keep: Iterable[dict[str, Any]] = (), group: int = 2048
                 ) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        self.group = group
        self._buf: list[dict[str, Any]] = []
        self._writer = pq.ParquetWriter(self.partial, SCHEMA, compression="zstd")
        for row in keep:
            self.write(row)

    def write(self, row: dict[str, Any]) -> None:
        self._buf.append(row)
        if len(self._buf) >= self.group:
            self.flush()

    def write_table(self, table: pa.Table) -> None:
        """Rows already made a table of :data:`SCHEMA` (the Ray engine's blocks)."""
        self.flush()
        self._writer.write_table(table)

    def flush(self) -> None:
        if self._buf:
            self._writer.write_table(rows_to_table(self._buf))
            self._buf = []

    def close(self) -> None:
        self.flush()
        self._writer.close()
        self.partial.replace(self.path)


def read_table(path: str | Path) -> pa.Table:
    """A Parquet results file as written (flattened columns and bookkeeping)."""
    return pq.read_table(path)
