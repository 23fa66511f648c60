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

from .outfile import is_parquet, partial_path, parts

__all__ = ["RESULTS_COLUMNS", "is_parquet", "is_results_schema", "partial_path", "read_schema",
           "read_table", "rows_to_table", "table_to_rows"]

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
#: A level of the ranking block at the default cut-offs (rows made with other ``--k`` keep
#: their other keys in ``_extra``).
_RANK_KEYS = [f"{m}@{k}" for k in (1, 3, 5, 10)
              for m in ("acc", "recall", "precision", "ndcg", "map")]
_RANK_LEVEL = pa.struct([*((key, _F) for key in _RANK_KEYS), ("mrr", _F), ("gold_size", _I),
                         ("pred_size", _I)])
_BEFORE_GOLD = pa.struct([("step", _I), ("steps_before", _I), ("input_tokens", _I),
                          ("output_tokens", _I), ("cost", _F)])
_RANKING = pa.struct([
    ("source", _S), ("gold", _S), ("excluded", _S),
    ("file", _RANK_LEVEL), ("module", _RANK_LEVEL), ("function", _RANK_LEVEL),
    ("before_first_gold", pa.struct([(lvl, _BEFORE_GOLD)
                                     for lvl in ("file", "module", "function")])),
    ("budget", pa.struct([("lines", _I), ("used", _I), ("line", _F), ("file", _F)])),
    ("repository", pa.bool_()),
])
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
    ("ranking", _RANKING),
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


def _kinds(t: pa.StructType) -> list[tuple[str, str, Any]]:
    """Each field of a struct as (name, kind, detail): kind "struct" (detail: its fields'
    kinds), "rows" (a list of structs; detail: the element's checker), or "leaf"."""
    out: list[tuple[str, str, Any]] = []
    for f in t:
        if pa.types.is_struct(f.type):
            out.append((f.name, "struct", _kinds(f.type)))
        elif pa.types.is_list(f.type) and pa.types.is_struct(f.type.value_type):
            out.append((f.name, "rows", _whole(f.type.value_type)))
        else:
            out.append((f.name, "leaf", None))
    return out


def _whole(t: pa.StructType) -> Any:
    """A checker of list elements: exactly the struct's keys, at every level (absences are
    recorded only outside lists)."""
    keys = frozenset(f.name for f in t)
    subs = [(f.name, _whole(f.type)) for f in t if pa.types.is_struct(f.type)]

    def check(obj: Any) -> bool:
        if not isinstance(obj, dict) or obj.keys() != keys:
            return False
        for name, sub in subs:
            v = obj[name]
            if v is not None and not sub(v):
                return False
        return True

    return check


def _shape(obj: dict[str, Any], kinds: list[tuple[str, str, Any]], prefix: str,
           absent: list[str], null: list[str]) -> bool:
    """The bookkeeping of one object against its struct's fields, looking at keys only (the
    values' types are checked by Arrow's conversion); False where the row needs the slow path
    (a key outside the schema, a non-object where an object belongs, a list element of
    another shape)."""
    seen = 0
    for name, kind, detail in kinds:
        if name not in obj:
            absent.append(prefix + name)
            continue
        seen += 1
        value = obj[name]
        if kind == "struct":
            if value is None:
                null.append(prefix + name)
            elif not isinstance(value, dict) or not _shape(value, detail, prefix + name + ".",
                                                          absent, null):
                return False
        elif kind == "rows" and value is not None and not (
                isinstance(value, list) and all(detail(v) for v in value)):
            return False
    return seen == len(obj)


_ROW_KINDS = _kinds(ROW_TYPE)


def _flattened(table: pa.Table) -> pa.Table:
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def rows_to_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """Rows (as JSONL holds them, without NaN) as a table of :data:`SCHEMA`.

    Rows of the usual shape are converted by Arrow in one call; a batch with anything else
    (a foreign key, a value of another type) goes row by row through :func:`flat_row`."""
    rows = list(rows)
    absents: list[list[str]] = []
    nulls: list[list[str]] = []
    for row in rows:
        absent: list[str] = []
        null: list[str] = []
        if not _shape(row, _ROW_KINDS, "", absent, null):
            break
        absents.append(absent)
        nulls.append(null)
    else:
        try:
            nested = pa.Table.from_struct_array(pa.array(rows, type=ROW_TYPE))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            pass
        else:
            flat = _flattened(nested)
            return pa.Table.from_arrays(
                [*flat.columns, pa.array(absents, pa.list_(_S)), pa.array(nulls, pa.list_(_S)),
                 pa.nulls(len(rows), _S)], schema=SCHEMA)
    return pa.Table.from_pylist([flat_row(r) for r in rows], schema=SCHEMA)


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


def _nested(columns: dict[str, pa.Array], t: pa.StructType, prefix: str) -> pa.StructArray:
    arrays = [_nested(columns, f.type, prefix + f.name + ".") if pa.types.is_struct(f.type)
              else columns[prefix + f.name] for f in t]
    return pa.StructArray.from_arrays(arrays, fields=list(t))


def table_to_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """The JSONL rows a table of :data:`SCHEMA` holds, key for key, in order."""
    table = table.cast(SCHEMA)
    for batch in table.to_batches(max_chunksize=4096):
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        nested = _nested(columns, ROW_TYPE, "").to_pylist()
        books = zip(columns["_absent"].to_pylist(), columns["_null"].to_pylist(),
                    columns["_extra"].to_pylist(), strict=True)
        for row, (absent, null, extra) in zip(nested, books, strict=True):
            for path in null or ():
                _set(row, path, None)
            for path in absent or ():
                _drop(row, path)
            if extra:
                for path, value in orjson.loads(extra).items():
                    _set(row, path, value)
            yield row


#: Columns only a results table written by ctxeval has: gold annotations are Parquet too, and
#: have an ``instance_id`` column.
RESULTS_COLUMNS = frozenset({"instance_id", "_absent", "_null", "_extra"})


def is_results_schema(names: Iterable[str]) -> bool:
    """Whether a Parquet table with these columns is a results table written by ctxeval."""
    return set(names) >= RESULTS_COLUMNS


def read_schema(path: str | Path) -> pa.Schema:
    """The schema of a Parquet file (its footer only); of a dataset directory, the schema its
    parts are written with."""
    if Path(path).is_dir():
        return SCHEMA
    return pq.read_schema(path)


def read_table(path: str | Path) -> pa.Table:
    """A Parquet results file as written (flattened columns and bookkeeping), or the parts of
    a dataset directory (the Ray engine's output, :mod:`.results_dataset`) in order."""
    if Path(path).is_dir():
        return read_dataset(path)
    return pq.read_table(path)


def read_dataset(path: str | Path) -> pa.Table:
    """The parts of a results dataset directory as one table, in order (none: empty)."""
    tables = []
    for part in parts(path):
        table = pq.read_table(part)
        if not is_results_schema(table.column_names):
            raise ValueError(f"{part.name}: not a results table (no bookkeeping columns)")
        tables.append(table.cast(SCHEMA))
    return pa.concat_tables(tables) if tables else SCHEMA.empty_table()
