"""Gold loaders: neutral JSONL, ContextBench (parquet, JSON/JSONL, ``annot.json`` trees),
LocAgent / Loc-Bench localisation gold and SWE-bench records, each detected from its content.

Gold is what every number is measured against, so loading is strict about what it keeps and
loud about what it drops: a bad item or instance becomes a :class:`~ctxeval.errors.Problem`
naming file, row and field, and the rest loads. Only a path that is not gold at all raises
:class:`~ctxeval.errors.GoldError`.

Rows are numbered by their JSONL line, or 1-based record number in a JSON array or a parquet
file; a single-object file (``gold.json``, ``annot.json``) has no row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import lfs
from ...errors import GoldError, Problem
from ...filekinds import special_problem
from ...model import GoldInstance
from .common import BAD, DUPLICATE, RowCtx
from .contextbench import is_contextbench, parse_contextbench
from .locagent import is_locagent, parse_locagent
from .neutral import is_neutral, parse_neutral
from .swebench import is_swebench, parse_swebench

__all__ = ["GoldInstance", "GoldSet", "load_gold"]

_PARQUET_MAGIC = b"PAR1"
_DIR_GOLD_NAMES = ("annot.json", "gold.json")


@dataclass
class GoldSet:
    """Loaded gold: instances in file order, what was dropped or changed, and the inputs' hashes
    (so results can say exactly which gold they were scored against)."""

    instances: list[GoldInstance] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)
    _index: dict[str, GoldInstance] = field(default_factory=dict, init=False, repr=False,
                                            compare=False)
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)

    def get(self, instance_id: str) -> GoldInstance | None:
        """The instance with this id or alias (a ContextBench id or its upstream id)."""
        if self._indexed != len(self.instances):
            self._index = {}
            for inst in self.instances:
                for key in inst.ids():
                    self._index.setdefault(key, inst)
            self._indexed = len(self.instances)
        return self._index.get(instance_id)


def load_gold(paths: Sequence[str | Path]) -> GoldSet:
    """Load every gold path (file or directory) into one :class:`GoldSet`.

    An instance whose id (or alias) was already loaded is a duplicate: the first one wins and
    the later one is reported. Raises :class:`GoldError` only for a path that cannot be read or
    holds no gold record at all.
    """
    out = GoldSet()
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        label = str(given)
        if path.is_dir():
            files = _dir_gold_files(path)
            if not files:
                raise GoldError("directory holds no annot.json or gold.json file", path=label)
            digest = _dir_sha256(path, files)
            records = []
            pointers: list[GoldError] = []
            for f in files:
                try:  # one broken file of a tree costs only itself
                    records += list(_file_records(f, str(f), out.problems))
                except GoldError as exc:
                    out.problems.append(exc.to_problem())
                    if exc.kind == lfs.KIND:
                        pointers.append(exc)
            if not records and pointers:  # say why the tree holds nothing
                raise pointers[0]
        elif path.is_file():
            digest = _file_sha256(path, label)
            records = list(_file_records(path, label, out.problems))
        elif path.exists():  # a FIFO or a device: reading it would wait for a writer
            raise GoldError(special_problem(path) or "not a file", path=label)
        else:
            raise GoldError("no such file or directory", path=label)
        out.sources.append((label, digest))
        kept = 0
        for ctx, rec in records:
            try:
                inst = _parse_record(rec, ctx)
            except RecursionError:  # a value nested too deeply for the parsers' walk
                ctx.report(BAD, "not a gold record: a value is nested too deeply; skipped")
                inst = None
            out.problems += ctx.problems
            if inst is None:
                continue
            kept += 1
            dup = [i for i in inst.ids() if i in seen]
            if dup:
                first = out.get(dup[0])
                where = first.origin if first is not None else "?"
                out.problems.append(Problem(DUPLICATE, f"{dup[0]} is already loaded from "
                                            f"{where}; this copy is ignored", ctx.path, ctx.row,
                                            "instance_id"))
                continue
            seen.update(inst.ids())
            out.instances.append(inst)
        if not records or (kept == 0 and not any(_parseable(rec) for _, rec in records)):
            raise GoldError("not a gold file: no record in a known gold format "
                            "(neutral, ContextBench, LocAgent or SWE-bench)", path=label)
    return out


def _parseable(rec: Any) -> bool:
    return isinstance(rec, dict) and (is_contextbench(rec) or is_neutral(rec)
                                      or is_locagent(rec) or is_swebench(rec))


def _parse_record(rec: Any, ctx: RowCtx) -> GoldInstance | None:
    if not isinstance(rec, dict):
        ctx.report(BAD, "a gold record must be a JSON object; skipped")
        return None
    if is_contextbench(rec):
        return parse_contextbench(rec, ctx)
    if is_neutral(rec):
        return parse_neutral(rec, ctx)
    if is_locagent(rec):
        return parse_locagent(rec, ctx)
    if is_swebench(rec):
        return parse_swebench(rec, ctx)
    ctx.report(BAD, "not a gold record (no gold_context, gold_ctx, init_ctx, edit_functions, "
               "file_changes or patch); skipped")
    return None


# --- reading records -------------------------------------------------------------------------

def _read_bytes(path: Path, label: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise GoldError(f"cannot read: {exc.strerror}", path=label) from exc


def _file_records(path: Path, label: str,
                  problems: list[Problem]) -> Iterator[tuple[RowCtx, Any]]:
    """(where, record) for every record of a parquet, JSON (array or object) or JSONL file."""
    data = _read_bytes(path, label)
    if not data or data.isspace():
        raise GoldError("the file is empty: no gold record in it", path=label)
    if lfs.is_pointer(data[:1024]):
        raise GoldError(lfs.message(data, "gold file"), path=label, kind=lfs.KIND)
    if data[:4] == _PARQUET_MAGIC:
        yield from _parquet_records(path, label)
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GoldError(f"not UTF-8 text nor parquet ({exc.reason} at byte {exc.start})",
                        path=label) from exc
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        try:
            whole = json.loads(text)
        except ValueError:
            whole = None  # several objects, one a line
        except RecursionError:  # nested past Python's limit: no gold record looks like that
            raise GoldError("not a gold file: its JSON is nested too deeply to be gold "
                            f"(more than {sys.getrecursionlimit()} levels)", path=label) \
                from None
        if isinstance(whole, list):
            for k, rec in enumerate(whole, start=1):
                yield RowCtx(label, k), rec
            return
        if isinstance(whole, dict):
            yield RowCtx(label, None), whole
            return
    found = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            problems.append(Problem(BAD, f"not a JSON line ({exc}); skipped", label, lineno))
            continue
        except RecursionError:
            problems.append(Problem(BAD, "not a gold record: its JSON is nested too deeply; "
                                    "skipped", label, lineno))
            continue
        found = True
        yield RowCtx(label, lineno), rec
    if not found:
        raise GoldError("not a gold file: neither parquet, JSON nor JSON lines", path=label)


def _parquet_records(path: Path, label: str) -> Iterator[tuple[RowCtx, Any]]:
    try:
        import pyarrow.parquet as pq
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises many types for a broken file
        raise GoldError(f"cannot read parquet: {exc}", path=label) from exc
    for k, rec in enumerate(table.to_pylist(), start=1):
        yield RowCtx(label, k), rec


def _dir_gold_files(root: Path) -> list[Path]:
    """``annot.json`` files under ``root`` (ContextBench's tree), else ``gold.json`` ones."""
    for name in _DIR_GOLD_NAMES:
        found = sorted(Path(d) / name for d, _, files in os.walk(root) if name in files)
        if found:
            return found
    return []


def _file_sha256(path: Path, label: str) -> str:
    return hashlib.sha256(_read_bytes(path, label)).hexdigest()


def _dir_sha256(root: Path, files: list[Path]) -> str:
    """sha256 over the sorted ``relpath NUL sha256 LF`` lines of the gold files read."""
    h = hashlib.sha256()
    pairs = sorted((f.relative_to(root).as_posix(), _file_sha256(f, str(f))) for f in files)
    for rel, digest in pairs:
        h.update(f"{rel}\0{digest}\n".encode())
    return h.hexdigest()
