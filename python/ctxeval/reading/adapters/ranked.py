"""The neutral ranked record (``ctxeval-ranking/1``, JSONL): any localiser's ranked output.

One JSON object per instance (``docs/ranked-record.md``)::

    {"format": "ctxeval-ranking/1", "instance_id": "psf__requests-2317",
     "files": ["requests/sessions.py", "requests/models.py"],
     "modules": ["requests/sessions.py:Session"],
     "functions": ["requests/sessions.py:Session.request", "requests/utils.py:to_native_string"],
     "lines": [{"file": "requests/sessions.py", "start_line": 420, "end_line": 440}],
     "run": "my-localiser", "model": "m", "usage": {"input_tokens": 1200, "output_tokens": 80}}

``format`` and ``instance_id`` are required, every other key optional; each list is in rank
order, kept as given. A level left out is filled from a finer one (modules and files from
functions, files from modules). The record becomes a trajectory with that ranking and one step,
also its final context: the files as file-level views, the modules and functions as symbol
views, the lines as line views. Unknown keys are kept in ``Trajectory.extra``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import AdapterError, InputError
from ...model import Ranking, Step, SymbolRef, Trajectory, Usage, View
from . import ReadOptions
from ._sessions import jsonl_objects

FORMAT = "ranked"
PRIORITY = 0
RANKING_FORMAT = "ctxeval-ranking/1"

_KNOWN = {"format", "instance_id", "files", "modules", "functions", "lines", "run", "agent",
          "model", "repo", "base_commit", "usage"}


def detect(path: Path, head: bytes) -> bool:
    if not head:
        return False
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"format"' in first and RANKING_FORMAT.encode() in first


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    out: list[Trajectory] = []
    for lineno, obj in jsonl_objects(path, complete=True):
        try:
            out.append(parse_record(obj, str(path), lineno, options))
        except InputError as exc:
            raise AdapterError(exc.message, path=str(path), line=lineno,
                               field=exc.field) from exc
    return out


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def parse_record(obj: Any, origin: str, line: int, options: ReadOptions) -> Trajectory:
    """One ranked record -> a trajectory with its :class:`~ctxeval.model.Ranking`."""
    if not isinstance(obj, dict):
        raise AdapterError("a record must be a JSON object", path=origin, line=line)
    if obj.get("format") != RANKING_FORMAT:
        raise AdapterError(f"unsupported format {obj.get('format')!r} (expected "
                           f"{RANKING_FORMAT!r})", path=origin, line=line, field="format")
    iid = obj.get("instance_id") or options.instance_id
    if not isinstance(iid, str) or not iid:
        raise AdapterError("missing or empty instance_id", path=origin, line=line,
                           field="instance_id")
    ranking = Ranking.from_json(obj, path=origin, line=line, field_name="record")
    levels = ranking.levels()
    views = [View(f, None, None) for f in dict.fromkeys(levels["file"] or [])]
    views += list(ranking.lines or [])
    symbols = list(dict.fromkeys(
        SymbolRef(item.split(":", 1)[0], item.split(":", 1)[1])
        for item in [*(levels["module"] or []), *(levels["function"] or [])] if ":" in item))
    usage = Usage.from_json(obj.get("usage"))
    step = Step(index=0, tool="localize", action="ranked localisation", views=views,
                symbols=symbols, usage=usage)
    return Trajectory(
        instance_id=iid, steps=[step], run=_opt_str(obj.get("run")) or options.run,
        agent=_opt_str(obj.get("agent")), model=_opt_str(obj.get("model")),
        repo=_opt_str(obj.get("repo")), base_commit=_opt_str(obj.get("base_commit")),
        final_context=list(views), final_symbols=list(symbols), usage=usage,
        source=f"{origin}:{line}", extra={k: v for k, v in obj.items() if k not in _KNOWN},
        ranking=ranking,
    )
