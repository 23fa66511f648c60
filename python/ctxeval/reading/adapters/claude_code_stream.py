"""Claude Code's ``claude -p --output-format stream-json`` log (Harbor keeps it as
``<trial>/agent/claude-code.txt``).

One JSON record per line, written as the run goes: ``{"type": "system", "subtype": "init",
"cwd", "session_id", "tools", "mcp_servers", "model", "claude_code_version"}`` first, then
``assistant`` and ``user`` records whose ``message`` is the API message (as in a session log),
``rate_limit_event`` records, and a closing ``{"type": "result", "usage", "total_cost_usd",
"num_turns", ...}``. Every record carries ``session_id`` and ``parent_tool_use_id``.

- Each ``tool_use`` block of an assistant message is a step; its observation is the
  ``tool_result`` block with the same id in a later user message, read with Claude Code's
  tool semantics (:func:`ctxeval.reading.adapters.claude_code.call_step`/``observe``, MCP tools
  by :mod:`ctxeval.reading.mcp` with the record's ``tool_use_result.structuredContent``).
- **Subagents** (the ``Task`` tool, ``Agent`` since Claude Code 2.1): the subagent's own
  messages are written inline, in the order they happened, with ``parent_tool_use_id`` naming
  the ``Task`` call; their steps follow the steps before them and are marked with the subagent
  (``<subagent_type>:<Task call id>``). The ``Task`` call itself shows the subagent's report,
  which is prose, not a view.
- **Working directory.** The log keeps no directory per call (a session log's records and
  Harbor's ATIF steps do): the reader follows Claude Code's Bash tool, whose shell keeps the
  directory a command ends in for the next call (:func:`ctxeval.reading.shell.cwd_after`: the
  command's top-level ``cd``/``pushd``, taken to succeed unless the output says ``cd: …: No
  such file or directory``; ``Shell cwd was reset to <dir>`` in a result puts it back). A
  call's relative paths are its directory's; views stay relative to the session's ``cwd``
  (the repository), as the ATIF and session-log readers have them. A ``cd`` to a directory
  the command does not name leaves the directory as it was, with a warning.
- Usage: per assistant message, once per message id (a message is written once per content
  block); the run's usage is the ``result`` record's (input counting cache reads and writes,
  ``total_cost_usd``), else the sum of the messages'.
- The instance is the Harbor trial's task (``<trial>/result.json``), else the session id, else
  the file's name. In a Harbor trial the ATIF ``trajectory.json`` beside this log is the same
  run: the ATIF reader reads this log with it (``adapters/atif.py``), and a directory holding
  both is read once.

A line that is not JSON (a client writing to the same stream) is skipped with a warning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..mcp import McpRun
from ..shell import cwd_after
from . import ReadOptions
from ._sessions import harbor_task, mark_views_after_edits
from ._sessions import nonempty_str as _str
from .claude_code import _result_text, _usage, call_step, observe, structured_content

FORMAT = "claude-code-stream"
PRIORITY = 29

#: The name Harbor gives the log in a trial's ``agent/`` folder.
HARBOR_LOG = "claude-code.txt"

_TYPES = ("system", "assistant", "user", "result")
_FIRST = re.compile(rb'^\{"type":"(system|assistant|user|result)"')
_SUBAGENT_TOOLS = ("Task", "Agent")
_RESET = re.compile(r"^Shell cwd was reset to (/\S*)\s*$", re.M)
_CD_FAILED = re.compile(r"\bcd: .*: (?:No such file or directory|Not a directory)")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    for raw in head.split(b"\n")[:8]:
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeError):
            # a first record longer than the head: its opening keys as bytes
            return bool(_FIRST.match(raw) and b'"session_id":"' in raw)
        return isinstance(obj, dict) and obj.get("type") in _TYPES and "session_id" in obj \
            and "sessionId" not in obj and ("parent_tool_use_id" in obj
                                             or obj.get("subtype") == "init")
    return False


@dataclass(frozen=True, slots=True)
class RawCall:
    """A tool call of a subagent as the log wrote it, for a reader that builds its own steps
    (the ATIF reader, which finds subagents only here)."""

    call_id: str
    name: str
    args: dict[str, Any]
    result: tuple[str, bool, Any] | None
    usage: Usage | None


@dataclass(slots=True)
class StreamRun:
    """A stream-json log read into steps: the agent's, and each subagent's under the id of the
    ``Task`` call that started it."""

    steps: list[Step] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    version: str | None = None
    usage: Usage | None = None
    warnings: list[str] = field(default_factory=list)
    #: tool_use id -> (text shown, is_error, structuredContent), every call with a result
    results: dict[str, tuple[str, bool, Any]] = field(default_factory=dict)
    #: Task call id -> the subagent's calls, in order
    subagents: dict[str, list[RawCall]] = field(default_factory=dict)
    #: Task call id -> the subagent's label (``<subagent_type>:<call id>``)
    labels: dict[str, str] = field(default_factory=dict)


def read_stream(path: Path) -> StreamRun:
    """Read a stream-json log (see the module docstring); raises AdapterError only when the
    file cannot be read or holds no record."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc
    run = StreamRun()
    records: list[tuple[int, dict[str, Any]]] = []
    bad = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        if isinstance(obj, dict):
            records.append((lineno, obj))
    if not records:
        raise AdapterError("no stream-json record", path=str(path))
    if bad:
        run.warnings.append(f"claude-code stream: {bad} lines that are not JSON skipped")
    mcp = McpRun()
    by_id: dict[str, Step] = {}
    calls: dict[str, dict[str, Any]] = {}
    labels = run.labels
    sub_ids: dict[str, tuple[str, int]] = {}  # subagent call id -> (Task id, position)
    usage_by_msg: dict[str, Usage | None] = {}
    charged: set[str] = set()
    final: dict[str, Any] | None = None
    shell_cwd: str | None = None  # Bash's directory now (the log keeps none per call)
    ran_in: dict[str, str | None] = {}  # the directory each call ran in
    unknown_cd = 0
    for lineno, rec in records:
        kind = rec.get("type")
        if run.session_id is None and isinstance(rec.get("session_id"), str):
            run.session_id = rec["session_id"]
        if kind == "system" and rec.get("subtype") == "init":
            run.cwd = run.cwd or _str(rec.get("cwd"))
            run.version = run.version or _str(rec.get("claude_code_version"))
            m = _str(rec.get("model"))
            run.model = run.model or (m if m and not m.startswith("<") else None)
            continue
        if kind == "result":
            final = rec
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        parent = _str(rec.get("parent_tool_use_id"))
        if kind == "assistant":
            m = msg.get("model")
            synthetic = isinstance(m, str) and m.startswith("<")
            if run.model is None and isinstance(m, str) and m and not synthetic:
                run.model = m
            mid = msg.get("id") if isinstance(msg.get("id"), str) else f"line{lineno}"
            if mid not in usage_by_msg and not synthetic:
                usage_by_msg[mid] = _usage(msg.get("usage"))
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                tid, name = block.get("id"), block.get("name")
                if not isinstance(tid, str) or not isinstance(name, str):
                    raise AdapterError("a tool_use needs string 'id' and 'name'",
                                       path=str(path), line=lineno,
                                       field="message.content.tool_use")
                inp = block.get("input") if isinstance(block.get("input"), dict) else {}
                ran_in[tid] = shell_cwd or run.cwd
                step = call_step(name, inp, 0, ran_in[tid], root=run.cwd)
                if mid not in charged and mid in usage_by_msg:
                    step.usage = usage_by_msg[mid]
                    charged.add(mid)
                if name in _SUBAGENT_TOOLS:
                    labels[tid] = subagent_label(tid, inp.get("subagent_type"))
                if parent is not None:
                    labels.setdefault(parent, subagent_label(parent, rec.get("subagent_type")))
                    step.subagent = labels[parent]
                    group = run.subagents.setdefault(parent, [])
                    sub_ids[tid] = (parent, len(group))
                    group.append(RawCall(tid, name, inp, None, step.usage))
                run.steps.append(step)
                by_id[tid] = step
                calls[tid] = inp
        elif kind == "user" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                tid = block.get("tool_use_id")
                step = by_id.get(tid) if isinstance(tid, str) else None
                if step is None:
                    continue
                shown = _result_text(block.get("content"))
                failed = bool(block.get("is_error"))
                structured = structured_content(rec.get("tool_use_result"))
                run.results[tid] = (shown, failed, structured)
                if tid in sub_ids:
                    parent, at = sub_ids[tid]
                    raw_call = run.subagents[parent][at]
                    run.subagents[parent][at] = RawCall(raw_call.call_id, raw_call.name,
                                                        raw_call.args, run.results[tid],
                                                        raw_call.usage)
                observe(step, calls[tid], shown, failed, ran_in.get(tid, run.cwd), mcp=mcp,
                        structured=structured, root=run.cwd)
                command = calls[tid].get("command") if step.tool == "Bash" else None
                if isinstance(command, str) and (shell_cwd or run.cwd):
                    reset = _RESET.findall(shown)
                    if reset:
                        shell_cwd = reset[-1]
                    elif not _CD_FAILED.search(shown):
                        moved = cwd_after(command, ran_in.get(tid) or run.cwd or "")
                        if moved is None:
                            unknown_cd += 1
                        else:
                            shell_cwd = moved
    run.warnings.extend(mcp.finish())
    if unknown_cd:
        run.warnings.append(f"claude-code stream: {unknown_cd} Bash calls changed to a directory "
                            "the command does not name; later calls kept the one before")
    for k, s in enumerate(run.steps):
        s.index = k
    run.usage = _final_usage(final, usage_by_msg)
    return run


def subagent_label(call_id: str, subagent_type: Any) -> str:
    """How a subagent's steps are marked (``Step.subagent``): ``<subagent_type>:<Task call
    id>``, or the call id alone when the type is not known."""
    kind = _str(subagent_type)
    return f"{kind}:{call_id}" if kind else call_id


def _final_usage(final: dict[str, Any] | None, by_msg: dict[str, Usage | None]
                 ) -> Usage | None:
    usage = _usage(final.get("usage")) if final else None
    if usage is not None:
        cost = final.get("total_cost_usd") if final else None
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            usage.cost = float(cost)
    else:
        usage = Usage.total(list(by_msg.values()))
    if usage is not None and by_msg:
        usage.api_calls = len(by_msg)
    return usage


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    run = read_stream(path)
    mark_views_after_edits(run.steps)
    extra: dict[str, Any] = {}
    if run.cwd:
        extra["cwd"] = run.cwd
    if run.version:
        extra["agent_version"] = run.version
    if run.warnings:
        extra["read_warnings"] = run.warnings
    instance = options.instance_id or harbor_task(path) or run.session_id or path.stem
    return [Trajectory(instance_id=instance, steps=run.steps, run=options.run,
                       agent="claude-code", model=run.model, usage=run.usage,
                       source=str(path), extra=extra)]
