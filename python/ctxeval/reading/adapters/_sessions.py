"""Pieces shared by the adapters of agent session logs (Claude Code, Codex CLI, Gemini CLI,
OpenCode).

Views after edits: for adapters that cannot map edited coordinates back to base lines.

After the agent changes a file, what it is shown of that file is in edited coordinates. An
adapter that knows the exact shape of each edit maps views back (SWE-agent's ``EditTracker``);
one that does not marks them post-edit so that they count at file level only (spec
``metrics.md``, "What a trajectory contributes").
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...linesets import line_runs
from ...model import Step, View
from ..mcp import McpRun, read_call


def json_document(path: Path) -> Any:
    """The JSON value of a whole file; unreadable or invalid JSON is an AdapterError naming the
    file (and line)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc


def first_record(head: bytes) -> Any:
    """The JSON value of the first line of a file's head (JSON lines: its first record); None
    when that line is not whole JSON (a pretty-printed document, or a record longer than the
    head)."""
    try:
        return json.loads(head.lstrip().split(b"\n", 1)[0])
    except (ValueError, UnicodeError):
        return None


def jsonl_objects(path: Path, text: str | None = None, *, complete: bool = False
                  ) -> list[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of every record of a JSONL log (``text``, else the file's). A cut last
    line (a log still being written) is dropped; any other bad line is an error naming it.
    ``complete``: the file is a finished output, not a log (localisation outputs, ranked
    records): a bad last line is an error too, and a file without records is one."""
    if text is None:
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
            if lineno == len(lines) and not complete:  # a log still being written: cut
                break
            raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path), line=lineno) from exc
        if not isinstance(obj, dict):
            raise AdapterError("a record must be a JSON object", path=str(path), line=lineno)
        out.append((lineno, obj))
    if complete and not out:
        raise AdapterError("no records", path=str(path))
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


def numbered_views(f: str, numbers: list[int]) -> list[View]:
    """Line views of ``f`` for the line numbers a tool printed beside its lines."""
    return [View(f, a, b) for a, b in line_runs(numbers)]


def elided(head: str, tail: str) -> str:
    """An output whose middle was cut inside a line, written as mini-swe-agent writes one, the
    shape :func:`ctxeval.reading.shell.read_shell` reads: ``head`` ends inside a line and
    ``tail`` starts inside one. Agents that cut by characters (Codex's ``…N tokens
    truncated…``, Gemini CLI's ``... [N characters omitted] ...``) are handed to the shell
    reader in this shape, so that one piece of code reads every such cut."""
    return (f"<output_head>\n{head}\n</output_head>\n<elided_chars>\n</elided_chars>\n"
            f"<output_tail>\n{tail}\n</output_tail>")


def mcp_observe(step: Step, server: str, tool: str, args: Any, text: str, *,
                is_error: bool, cwd: str | None, structured: Any = None,
                warnings: list[str] | None = None, run: McpRun | None = None) -> None:
    """Views (and edits) of an MCP tool call, read by :func:`ctxeval.reading.mcp.read_call` (one
    reader per server's tool, whatever the agent), through the run's
    :class:`~ctxeval.reading.mcp.McpRun` when one is given (it settles the repositories of the
    whole run and collects the readings' warnings; the adapter calls its ``finish``), else alone
    (the reading's warnings then go to ``warnings``, the trajectory's ``read_warnings``). Paths
    under ``cwd`` are made relative to it."""
    a = args if isinstance(args, dict) else {}
    if run is not None:
        reading = run.observe(step, server, tool, a, text, is_error=is_error, cwd=cwd,
                              structured=structured)
    else:
        reading = read_call(server, tool, a, text, is_error=is_error, cwd=cwd,
                            structured=structured)
        if warnings is not None:
            warnings.extend(f"step {step.index} ({step.tool}): {w}" for w in reading.warnings)
    # the views in the reading's order: McpRun.finish rewrites them by position
    step.views = [replace(v, file=relative_to_cwd(v.file, cwd) or v.file)
                  for v in reading.views]
    if reading.edits:
        step.edits = list(dict.fromkeys([*step.edits, *(relative_to_cwd(e, cwd) or e
                                                         for e in reading.edits)]))


def infer_cwd(steps: list[Step]) -> str | None:
    """A working directory a log does not record: the directory that most often turns an
    absolute path into a relative path written for the same file by another step (``/repo``
    for ``/repo/src/a.py`` and ``src/a.py``); None when no such pair exists."""
    files = {v.file for st in steps for v in st.views} | {e for st in steps for e in st.edits}
    absolute = [f for f in files if f.startswith("/")]
    relative = [f.removeprefix("./") for f in files
                if not f.startswith("/") and not f.startswith("../")]
    counts: Counter[str] = Counter()
    for a in absolute:
        for r in relative:
            if a.endswith("/" + r) and len(a) > len(r) + 1:
                counts[a[:-len(r) - 1]] += 1
    return counts.most_common(1)[0][0] if counts else None


def relative_to(steps: list[Step], cwd: str) -> None:
    """Make the views and edits of ``steps`` under ``cwd`` relative to it (in place)."""
    for st in steps:
        st.views = [replace(v, file=relative_to_cwd(v.file, cwd) or v.file) for v in st.views]
        st.edits = list(dict.fromkeys(relative_to_cwd(e, cwd) or e for e in st.edits))
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
