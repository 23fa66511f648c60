"""ContextBench's generic prediction file (JSON object, JSON list, or JSONL of records).

A record is ``{"instance_id" | "original_inst_id", "traj_data": {"pred_steps": [{"files": [...],
"spans": {file: [{"start", "end"}]}, "symbols": {file: [names]}}], "pred_files": [...],
"pred_spans": {...}, "pred_symbols": {...}}, "model_patch": "..."}``. Several records may name the
same instance; each is evaluated on its own. Preset ``contextbench`` keeps ranges exactly as given
and, like the reference, uses the final context as the only step of a record without
``pred_steps``; records without an id are skipped (the reference skips them silently).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, SymbolRef, Trajectory, View
from . import ReadOptions
from .contextbench import (
    CbStep,
    cb_trajectory,
    is_contextbench,
    parse_json,
    plain_trajectory,
    read_text,
    strict_int,
    swapped,
    views_of,
)

FORMAT = "contextbench-pred"
PRIORITY = 50

# Names the reference routes to another reader before its generic JSON loading.
_OTHER_SUFFIXES = (".traj.json", "_traj.json", ".checkpoints.jsonl", ".context.json",
                   "patch_context.txt", ".traj", ".log", "output.jsonl")
_TRAJ_DATA = re.compile(rb'"traj_data"\s*:')


def detect(path: Path, head: bytes) -> bool:
    """A ``.json``/``.jsonl`` prediction file whose first record carries ``traj_data``."""
    name = path.name
    if not path.is_file() or not name.endswith((".json", ".jsonl")) \
            or name.endswith(_OTHER_SUFFIXES):
        return False
    start = head.lstrip()[:1]
    if start not in (b"{", b"["):
        return False
    first = head.split(b"\n", 1)[0] if name.endswith(".jsonl") else head
    return bool(_TRAJ_DATA.search(first))


def records(path: Path) -> list[tuple[int | None, Any]]:
    """(JSONL line number or None, record) as the reference loads them."""
    text = read_text(path)
    if path.name.endswith(".jsonl"):
        out: list[tuple[int | None, Any]] = []
        for no, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            out.append((no, parse_json(line, path=path, line=no)))
        return out
    obj = parse_json(text, path=path)
    if isinstance(obj, list):
        return [(None, r) for r in obj]
    return [(None, obj)]


class _Where:
    """Where a record came from, for error messages."""

    def __init__(self, path: Path, line: int | None, index: int) -> None:
        self.path, self.line, self.index = path, line, index

    def error(self, message: str, field_name: str) -> AdapterError:
        prefix = "" if self.line is not None else f"record {self.index}: "
        return AdapterError(prefix + message, path=str(self.path), line=self.line,
                            field=field_name)


def _dict(value: Any, where: _Where, field_name: str, *, null_ok: bool = True
          ) -> dict[str, Any]:
    """An object; ``null`` counts as empty only where the reference tolerates it."""
    if value is None and null_ok:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"must be an object, got {type(value).__name__}", field_name)
    return value


def _list(value: Any, where: _Where, field_name: str, *, null_ok: bool = True) -> list[Any]:
    if value is None and null_ok:
        return []
    if not isinstance(value, list):
        raise where.error(f"must be a list, got {type(value).__name__}", field_name)
    return value


def _files(value: Any, where: _Where, field_name: str) -> list[str]:
    files = _list(value or None, where, field_name)  # the reference reads any falsy value as []
    for f in files:
        if not isinstance(f, str):
            raise where.error(f"a file must be a string, got {f!r}", field_name)
    return files


def _spans(value: Any, where: _Where, field_name: str) -> list[tuple[str, int, int]]:
    """``{file: [{"start", "end"}]}`` in order; missing or non-integer bounds are errors."""
    out = []
    for f, items in _dict(value, where, field_name, null_ok=False).items():
        for item in _list(items, where, f"{field_name}.{f}", null_ok=False):
            if not isinstance(item, dict) or "start" not in item or "end" not in item:
                raise where.error("a span needs 'start' and 'end'", f"{field_name}.{f}")
            kw = {"path": where.path, "line": where.line, "field_name": f"{field_name}.{f}"}
            out.append((f, strict_int(item["start"], **kw), strict_int(item["end"], **kw)))
    return out


def _symbols(value: Any, where: _Where, field_name: str, *, exact: bool
             ) -> dict[str, list[str]]:
    """Names by file. ``exact``: an entry the reference keeps but cannot read (a non-list value,
    non-string names) becomes the empty name, which keeps the step in name mode and matches
    nothing; otherwise such entries are dropped."""
    out: dict[str, list[str]] = {}
    for f, names in _dict(value or None, where, field_name).items():  # falsy: no symbols
        if not names:
            continue
        kept = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
        if kept or exact:
            out[f] = kept or [""]
    return out


def _cb_step(data: dict[str, Any], where: _Where, prefix: str, keys: tuple[str, str, str],
             exact: bool) -> CbStep:
    files_key, spans_key, symbols_key = keys
    return CbStep(files=_files(data.get(files_key), where, prefix + files_key),
                  spans=_spans(data.get(spans_key, {}), where, prefix + spans_key),
                  symbols=_symbols(data.get(symbols_key), where, prefix + symbols_key,
                                   exact=exact))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    out = []
    for index, (line, rec) in enumerate(records(path)):
        where = _Where(path, line, index)
        if not isinstance(rec, dict):
            raise where.error("a prediction record must be an object", "")
        iid = rec.get("instance_id") or rec.get("original_inst_id")
        rec_options = replace(options, instance_id=None)  # a record's own id wins
        if not iid:
            if is_contextbench(options):
                continue
            if not options.instance_id:
                raise where.error("record has no instance_id or original_inst_id",
                                  "instance_id")
            iid = options.instance_id
        if not isinstance(iid, str):
            raise where.error("must be a string", "instance_id")
        out.append(_read_record(rec, iid, where, rec_options))
    return out


def _read_record(rec: dict[str, Any], iid: str, where: _Where,
                 options: ReadOptions) -> Trajectory:
    exact = is_contextbench(options)
    data = _dict(rec.get("traj_data", {}), where, "traj_data", null_ok=False)
    raw_steps = _list(data.get("pred_steps", []), where, "traj_data.pred_steps", null_ok=False)
    steps = []
    for i, s in enumerate(raw_steps):
        prefix = f"traj_data.pred_steps[{i}]."
        steps.append(_cb_step(_dict(s, where, prefix[:-1], null_ok=False), where, prefix,
                              ("files", "spans", "symbols"), exact))
    final = _cb_step(data, where, "traj_data.", ("pred_files", "pred_spans", "pred_symbols"),
                     exact)
    patch = rec.get("model_patch")
    if patch is not None and not isinstance(patch, str):
        raise where.error("must be a string", "model_patch")
    if is_contextbench(options):
        traj = cb_trajectory(iid, steps, final, options=options, source=where.path, agent=None,
                             model_patch=patch, final_symbols=True)
    else:
        has_final = any(k in data for k in ("pred_files", "pred_spans", "pred_symbols"))
        traj = plain_trajectory(
            iid,
            [Step(index=i, views=swapped(views_of(s.files, s.spans)),
                  symbols=[SymbolRef(f, n) for f, ns in s.symbols.items() for n in ns])
             for i, s in enumerate(steps)],
            _strict_final(final) if has_final else None,
            options=options, source=where.path, agent=None, model_patch=patch,
            final_symbols=[SymbolRef(f, n) for f, ns in final.symbols.items() for n in ns]
            or None)
    _carry_repo(rec, traj, where)
    return traj


def _strict_final(final: CbStep) -> list[View]:
    return swapped(views_of(final.files, final.spans))


def _carry_repo(rec: dict[str, Any], traj: Trajectory, where: _Where) -> None:
    """A record's own ``repo_url``/``commit`` take precedence over the gold's in the reference."""
    commit, url = rec.get("commit"), rec.get("repo_url")
    if commit:
        if not isinstance(commit, str):
            raise where.error("must be a string", "commit")
        traj.base_commit = commit
        traj.extra["cb_commit"] = commit
    if url:
        if not isinstance(url, str):
            raise where.error("must be a string", "repo_url")
        traj.extra["cb_repo_url"] = url
