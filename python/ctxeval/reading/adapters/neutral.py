"""The neutral trajectory format itself (``ctxeval-trajectory/1``, JSONL): read and write.

Users whose agent has no adapter write this format; every adapter's output can be written in it
with :func:`write` (``ctxeval convert``). Unknown keys are kept in ``Trajectory.extra``; a missing
required key is an error naming the file, the line and the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ...errors import AdapterError, InputError
from ...model import TRAJECTORY_FORMAT, Ranking, Step, SymbolRef, Trajectory, Usage, View

FORMAT = "neutral"
PRIORITY = 0

_KNOWN = {"format", "instance_id", "run", "agent", "model", "repo", "base_commit", "steps",
          "final_context", "final_symbols", "model_patch", "usage", "resolved", "ranking"}


def detect(path: Path, head: bytes) -> bool:
    if not head:
        return False
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"format"' in first and TRAJECTORY_FORMAT.encode() in first


def read(path: Path, options: Any = None) -> list[Trajectory]:
    try:
        with path.open("rb") as fh:
            return list(iter_records(fh, str(path)))
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc


def iter_read(path: Path, options: Any = None) -> Iterator[Trajectory | AdapterError]:
    """The records one by one, so that a large file is never held whole; a bad record is
    yielded as its error (with the line) and the following ones are still read."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        yield AdapterError(f"cannot read: {exc.strerror}", path=str(path))
        return
    skip = options.skip if options is not None else frozenset()
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            if skip:
                done = _skipped(raw, skip)
                if done is not None:
                    yield done
                    continue
            try:
                yield next(iter_records([raw], str(path), first_line=lineno))
            except AdapterError as exc:
                yield exc


def _skipped(raw: bytes, skip: frozenset[str]) -> Trajectory | None:
    """The record's instance alone when ``--resume`` keeps its row (see ``ReadOptions``):
    its steps are not read."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    iid = obj.get("instance_id") if isinstance(obj, dict) else None
    return Trajectory(instance_id=iid) if isinstance(iid, str) and iid in skip else None


def iter_records(lines: Iterable[bytes], origin: str, first_line: int = 1
                 ) -> Iterator[Trajectory]:
    for lineno, raw in enumerate(lines, start=first_line):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise AdapterError(f"not valid JSON: {exc}", path=origin, line=lineno) from exc
        try:
            yield parse_record(obj, origin, lineno)
        except InputError as exc:
            raise AdapterError(exc.message, path=origin, line=lineno, field=exc.field) from exc


def _require(obj: dict, key: str, origin: str, line: int) -> Any:
    if key not in obj:
        raise AdapterError(f"missing required key {key!r}", path=origin, line=line, field=key)
    return obj[key]


def parse_record(obj: Any, origin: str, line: int) -> Trajectory:
    """One JSON object of the format → :class:`Trajectory`."""
    if not isinstance(obj, dict):
        raise AdapterError("a record must be a JSON object", path=origin, line=line)
    fmt = _require(obj, "format", origin, line)
    if fmt != TRAJECTORY_FORMAT:
        raise AdapterError(f"unsupported format {fmt!r} (expected {TRAJECTORY_FORMAT!r})",
                           path=origin, line=line, field="format")
    iid = _require(obj, "instance_id", origin, line)
    if not isinstance(iid, str) or not iid:
        raise AdapterError("must be a non-empty string", path=origin, line=line,
                           field="instance_id")
    raw_steps = _require(obj, "steps", origin, line)
    if not isinstance(raw_steps, list):
        raise AdapterError("must be a list", path=origin, line=line, field="steps")
    steps = []
    for k, s in enumerate(raw_steps):
        where = f"steps[{k}]"
        if not isinstance(s, dict):
            raise AdapterError("a step must be an object", path=origin, line=line, field=where)
        views = _require(s, "views", origin, line)
        if not isinstance(views, list):
            raise AdapterError("must be a list", path=origin, line=line, field=f"{where}.views")
        steps.append(Step(
            index=s.get("index", k) if isinstance(s.get("index", k), int) else k,
            action=str(s.get("action") or ""),
            tool=s.get("tool") if isinstance(s.get("tool"), str) else None,
            views=[View.from_json(v, path=origin, line=line, field_name=f"{where}.views")
                   for v in views],
            symbols=[SymbolRef.from_json(v, path=origin, line=line,
                                         field_name=f"{where}.symbols")
                     for v in _list(s, "symbols", origin, line, where)],
            edits=[e for e in _list(s, "edits", origin, line, where) if isinstance(e, str)],
            usage=Usage.from_json(s.get("usage")),
            subagent=s.get("subagent") if isinstance(s.get("subagent"), str) else None,
        ))
    final = obj.get("final_context")
    if final is not None and not isinstance(final, list):
        raise AdapterError("must be a list or null", path=origin, line=line,
                           field="final_context")
    final_symbols = obj.get("final_symbols")
    resolved = obj.get("resolved")
    patch = obj.get("model_patch")
    return Trajectory(
        instance_id=iid,
        steps=steps,
        run=_opt_str(obj.get("run")),
        agent=_opt_str(obj.get("agent")),
        model=_opt_str(obj.get("model")),
        repo=_opt_str(obj.get("repo")),
        base_commit=_opt_str(obj.get("base_commit")),
        final_context=None if final is None else [
            View.from_json(v, path=origin, line=line, field_name="final_context") for v in final],
        final_symbols=None if not isinstance(final_symbols, list) else [
            SymbolRef.from_json(v, path=origin, line=line, field_name="final_symbols")
            for v in final_symbols],
        model_patch=patch if isinstance(patch, str) else None,
        usage=Usage.from_json(obj.get("usage")),
        resolved=resolved if isinstance(resolved, bool) else None,
        source=f"{origin}:{line}",
        extra={k: v for k, v in obj.items() if k not in _KNOWN},
        ranking=None if obj.get("ranking") is None else Ranking.from_json(
            obj["ranking"], path=origin, line=line),
    )


def _list(obj: dict, key: str, origin: str, line: int, where: str) -> list:
    value = obj.get(key) or []
    if not isinstance(value, list):
        raise AdapterError("must be a list", path=origin, line=line, field=f"{where}.{key}")
    return value


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def dumps(traj: Trajectory) -> bytes:
    """One JSONL line (with its newline)."""
    return orjson.dumps(traj.to_json()) + b"\n"


def write(trajectories: Iterable[Trajectory], out: IO[bytes]) -> int:
    """Write trajectories as JSONL; returns how many were written."""
    n = 0
    for t in trajectories:
        out.write(dumps(t))
        n += 1
    return n
