"""Pieces shared by the adapters of agent session logs (Claude Code, Codex CLI).

Views after edits: for adapters that cannot map edited coordinates back to base lines.

After the agent changes a file, what it is shown of that file is in edited coordinates. An
adapter that knows the exact shape of each edit maps views back (SWE-agent's ``EditTracker``);
one that does not marks them post-edit so that they count at file level only (spec
``metrics.md``, "What a trajectory contributes").
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step


def json_document(path: Path) -> Any:
    """The JSON value of a whole file; unreadable or invalid JSON is an AdapterError naming the
    file (and line)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc


def jsonl_objects(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of every record of a JSONL log. A cut last line (a log still being
    written) is dropped; any other bad line is an error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc
    out = []
    lines = text.splitlines()
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            if lineno == len(lines):  # a {what} still being written: the last line is cut
                break
            raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path), line=lineno) from exc
        if not isinstance(obj, dict):
            raise AdapterError("a record must be a JSON object", path=str(path), line=lineno)
        out.append((lineno, obj))
    return out


def mark_views_after_edits(steps: list[Step]) -> list[Step]:
    """Mark every view of a file edited by an earlier step ``post_edit`` (in place; returned)."""
    edited: set[str] = set()
    for step in steps:
        if edited:
            step.views = [replace(v, post_edit=True) if v.file in edited else v
                          for v in step.views]
        edited.update(step.edits)
    return steps


def relative_to_cwd(p: str | None, cwd: str | None) -> str | None:
    """``p`` relative to the session's ``cwd`` when it lies under it; else as written."""
    if not p:
        return None
    if cwd:
        base = cwd.rstrip("/") + "/"
        if p.startswith(base):
            return p[len(base):]
    return p


def nonempty_str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def harbor_task(file: Path) -> str | None:
    """The task of the Harbor trial a log sits in (``<trial>/agent/<log>``): the trial's
    ``result.json`` ``task_name``, else the trial directory's name without Harbor's
    ``__<7 chars>`` suffix, or without the ``_<n>`` of a trial kept in a folder named for its
    task (``<task>/<task>_1/``, as CodeContextBench keeps its runs); None when the file is not
    in an ``agent/`` folder."""
    agent_dir = file.parent
    if agent_dir.name != "agent":
        return None
    trial = agent_dir.parent
    try:
        res = json.loads((trial / "result.json").read_text(encoding="utf-8"))
        if isinstance(res, dict) and isinstance(res.get("task_name"), str) and res["task_name"]:
            return res["task_name"]
    except (OSError, UnicodeError, ValueError):
        pass
    m = re.fullmatch(r"(.+?)__[A-Za-z0-9]{7}", trial.name)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(.+)_\d+", trial.name)
    return m.group(1) if m and m.group(1) == trial.parent.name else None
