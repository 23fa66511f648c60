"""Trajectories held in memory (a dict, JSON text, a dataset's row) read by the adapter
registry exactly as files are.

Adapters read paths: detection looks at a file's name and first bytes, and several formats
take the instance id from the file name. Rather than a second reading of every format, a
record is written to a scratch file under the name it would have had (``<instance_id>.traj.json``
unless told) and read there by :func:`ctxeval.reading.inputs.read_input`, so a record and a file in
the same format give the same trajectories. The scratch file lives only while it is read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from .adapters import ReadOptions
from .inputs import ReadResult, read_input

#: Raw record types a reader accepts: a parsed JSON value, or the text/bytes of a file.
Raw = dict[str, Any] | list[Any] | str | bytes


def record_bytes(raw: Raw) -> bytes:
    """The bytes a record's file would hold: text as is, a parsed value as one JSON line."""
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        return raw.encode()
    return orjson.dumps(raw)


def record_name(raw: Raw, instance_id: str | None = None, name: str | None = None) -> str:
    """The file name a record is read under: ``name`` (a base name) when given, else
    ``<instance id>.traj.json`` (from the argument, else the record's own ``instance_id``)."""
    if name:
        base = os.path.basename(name.rstrip("/"))
        if base and base not in (".", ".."):
            return base
    iid = instance_id or (raw.get("instance_id") if isinstance(raw, dict) else None)
    safe = "".join(ch if ch.isalnum() or ch in "-_.@" else "_" for ch in str(iid or "rollout"))
    return f"{safe.strip('.') or 'rollout'}.traj.json"


class RecordReader:
    """Reads records, each through a scratch directory of its own that is removed once it is
    read: nothing is left behind by a reader that is never closed (a Ray actor is ended
    without its clean-up running)."""

    def read(self, raw: Raw, *, instance_id: str | None = None, name: str | None = None,
             fmt: str | None = None, options: ReadOptions | None = None) -> ReadResult:
        """The trajectories of one record, or the problem that stopped it (as for a file; the
        problem names the record by ``name``, not the scratch file)."""
        fname = record_name(raw, instance_id, name)
        slot = Path(tempfile.mkdtemp(prefix="ctxeval-records-"))
        path = slot / fname
        try:
            path.write_bytes(record_bytes(raw))
            opts = options or ReadOptions()
            if instance_id and opts.instance_id is None:
                opts = ReadOptions(preset=opts.preset, instance_id=instance_id, run=opts.run)
            got = read_input(path, True, fmt=fmt, options=opts)
        finally:
            shutil.rmtree(slot, ignore_errors=True)
        assert got is not None  # explicit inputs always give a result
        shown = Path(name or fname)
        if got.problem is not None and got.problem.path is not None:
            got.problem = replace(got.problem, path=str(shown))
        got.path = shown
        return got

    def close(self) -> None:
        """Nothing to release (kept so that owners close what they open)."""
