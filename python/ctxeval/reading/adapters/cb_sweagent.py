"""SWE-agent ``<id>.checkpoints.jsonl`` from ContextBench's modified SWE-agent.

One JSON object per context tool call (``action``, ``observation``, ``tool``), plus
``{"type": "patch_context", "patch_context": "File: …\\nLines: a-b"}`` records that declare the
context. Preset ``contextbench`` reads the *commands* as the reference does (only
``str_replace_editor view <path> --view_range a b`` with two positive integers is a step); preset
``strict`` reads the *observations* (every record is a step; a view is what was printed with line
numbers, so a rejected command shows nothing).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...linesets import line_runs
from ...model import Step, Trajectory, View
from . import ReadOptions
from .contextbench import (
    CbStep,
    cb_patch_context,
    cb_trajectory,
    is_contextbench,
    parse_json,
    plain_trajectory,
    read_text,
    strict_patch_context,
    swapped,
    sweagent_norm,
)

FORMAT = "sweagent-checkpoints"
PRIORITY = 10
SUFFIX = ".checkpoints.jsonl"

# The reference's view command: the range only counts as two unsigned integers.
_CB_VIEW = re.compile(r"str_replace_editor view\s+(\S+)(?:\s+--view_range\s+(\d+)\s+(\d+))?")


def detect(path: Path, head: bytes) -> bool:
    """A ``*.checkpoints.jsonl`` file: the reference routes on this suffix alone."""
    return path.is_file() and path.name.endswith(SUFFIX)


def instance_id_of(path: Path) -> str:
    return path.name.replace(SUFFIX, "")


def records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; AdapterError on bad JSON or a non-object."""
    out = []
    for no, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        obj = parse_json(line, path=path, line=no)
        if not isinstance(obj, dict):
            raise AdapterError("a checkpoint must be a JSON object", path=str(path), line=no)
        out.append((no, obj))
    return out


def _text(obj: dict[str, Any], key: str, *, path: Path, line: int) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AdapterError(f"must be a string, got {type(value).__name__}", path=str(path),
                           line=line, field=key)
    return value


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    recs = records(path)
    if is_contextbench(options):
        return [_read_cb(path, recs, options)]
    return [_read_strict(path, recs, options)]


# --- preset contextbench ----------------------------------------------------------------------


def _read_cb(path: Path, recs: list[tuple[int, dict[str, Any]]],
             options: ReadOptions) -> Trajectory:
    steps: list[CbStep] = []
    final: CbStep | None = None
    for no, rec in recs:
        if rec.get("type") == "patch_context":
            text = rec.get("patch_context", "")
            if text:
                if not isinstance(text, str):
                    raise AdapterError("must be a string", path=str(path), line=no,
                                       field="patch_context")
                parsed = cb_patch_context(text, path=path, line=no)
                final = CbStep(files=list(parsed),
                               spans=[(f, a, b) for f, rs in parsed.items() for a, b in rs])
            continue
        action = _text(rec, "action", path=path, line=no)
        if "str_replace_editor view" not in action:
            continue
        m = _CB_VIEW.search(action)
        if not m or not (m.group(2) and m.group(3)):
            continue  # no range, or a range the pattern cannot read: the reference drops it
        start, end = int(m.group(2)), int(m.group(3))
        if start > 0 and end > 0:
            f = sweagent_norm(m.group(1))
            tool = rec.get("tool")
            steps.append(CbStep(files=[f], spans=[(f, start, end)], action=action,
                                tool=tool if isinstance(tool, str) else None))
    if final is None:
        last = steps[-1] if steps else CbStep()
        final = CbStep(files=list(last.files), spans=list(last.spans))
    return cb_trajectory(instance_id_of(path), steps, final, options=options, source=path,
                         agent="swe-agent")


# --- preset strict: the observation is the truth ----------------------------------------------

_CAT_HEADER = re.compile(r"Here's the result of running `cat -n` on (a snippet of )?(.+?):\s*$")
_DIR_HEADER = re.compile(r"Here's the files and directories up to \d+ levels? deep in (.+?)"
                         r"(?:, excluding hidden items)?:?\s*$")
_ABBREVIATED = "<NOTE>This file is too large to display entirely"
_ABBREVIATED_END = "The above file has been abbreviated"
_CAT_LINE = re.compile(r"^ *(\d+)\t")
_ABBR_LINE = re.compile(r"^ *(\d+) (?!\.\.\. eliding lines)")
_VIEW_CMD = re.compile(r"str_replace_editor\s+view\s+(\S+)")
_EDIT_CMD = re.compile(r"str_replace_editor\s+(?:create|str_replace|insert|undo_edit)\s+(\S+)")
_EDIT_OK = ("has been edited", "File created successfully", "undone successfully")


def _unquote(p: str) -> str:
    return p.strip("'\"")


def observed_views(action: str, observation: str, edited: set[str]) -> list[View]:
    """The numbered lines the observation printed, as views grouped into contiguous runs.

    Sections start at a ``cat -n`` header (file named there), at the "too large … abbreviated"
    note (file taken from the next ``view`` command of the action) or at a directory listing (no
    views). Elided placeholder lines are not views. A post-edit snippet, and any view of a file the
    run already edited, is marked ``post_edit``.
    """
    pending = [_unquote(m.group(1)) for m in _VIEW_CMD.finditer(action)]
    seen: dict[tuple[str, bool], set[int]] = {}
    current: tuple[str, bool] | None = None
    line_re = _CAT_LINE

    def take(p: str | None) -> str | None:
        if p is not None and p in pending:
            pending.remove(p)
            return p
        return pending.pop(0) if p is None and pending else p

    for line in observation.split("\n"):
        m = _CAT_HEADER.search(line)
        if m:
            # a post-edit snippet may say "of the edited file": the edit command names it
            edit = _EDIT_CMD.search(action) if m.group(1) else None
            f = _unquote(edit.group(1)) if edit else take(m.group(2).strip())
            current = (f, bool(m.group(1)) or f in edited) if f else None
            line_re = _CAT_LINE
            continue
        m = _DIR_HEADER.search(line)
        if m:
            take(m.group(1).strip())
            current = None
            continue
        if _ABBREVIATED in line:
            f = take(None)
            current = (f, f in edited) if f else None
            line_re = _ABBR_LINE
            continue
        if _ABBREVIATED_END in line:
            current = None
            continue
        if current is not None:
            n = line_re.match(line)
            if n:
                seen.setdefault(current, set()).add(int(n.group(1)))
    views: list[View] = []
    for (f, post_edit), numbers in seen.items():
        views.extend(View(f, a, b, post_edit) for a, b in line_runs(numbers))
    return views


def _read_strict(path: Path, recs: list[tuple[int, dict[str, Any]]],
                 options: ReadOptions) -> Trajectory:
    steps: list[Step] = []
    final: list[View] | None = None
    warnings: list[str] = []
    edited: set[str] = set()
    for no, rec in recs:
        if rec.get("type") == "patch_context":
            text = _text(rec, "patch_context", path=path, line=no)
            if text:
                final = swapped(strict_patch_context(text, warnings))
            continue
        action = _text(rec, "action", path=path, line=no)
        observation = _text(rec, "observation", path=path, line=no)
        tool = rec.get("tool")
        views = observed_views(action, observation, edited)
        edits = []
        m = _EDIT_CMD.search(action)
        if m and any(ok in observation for ok in _EDIT_OK):
            edits.append(_unquote(m.group(1)))
            edited.add(edits[0])
        steps.append(Step(index=len(steps), action=action,
                          tool=tool if isinstance(tool, str) else None, views=views, edits=edits))
    return plain_trajectory(instance_id_of(path), steps, final, options=options, source=path,
                            agent="swe-agent", warnings=warnings)

