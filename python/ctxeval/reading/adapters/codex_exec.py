"""``codex exec --json`` event streams: the JSON lines Codex CLI prints in non-interactive runs.

Read from ``openai/codex`` (``codex-rs/exec/src/exec_events.rs`` and
``event_processor_with_jsonl_output.rs``, first at 344d4a1d6, September 2025, last at 608b8b1c,
June 2026). One event per line: ``thread.started`` (``thread_id``), ``turn.started``,
``item.started``/``item.updated``/``item.completed`` (``item {id, type, ...}``),
``turn.completed`` (``usage``), ``turn.failed``, ``error``. The completed items are the steps:

- ``command_execution``: ``command`` is the argv joined by ``shlex`` (``/bin/bash -lc 'cat
  a.py'``, unwrapped to ``cat a.py``), read with its ``aggregated_output`` and ``exit_code`` by
  :func:`ctxeval.reading.shell.read_shell`. The stream keeps the whole output, not the text the
  model was shown: an output longer than 10,000 bytes (the smallest budget Codex cuts model
  outputs to) is read whole, with a read warning that the model may have seen its head and tail
  only. A rollout file (``codex`` format) records what the model was shown;
- ``file_change``: ``changes [{path, kind}]`` are edits (a ``failed`` change is none);
- ``mcp_tool_call``: ``server``, ``tool``, ``arguments``, ``result {content,
  structured_content}`` or ``error {message}``: read by :func:`ctxeval.reading.mcp.read_call`
  with the text of the content blocks joined with newlines; a call with an ``error`` or a
  ``failed`` status shows nothing;
- ``agent_message``, ``reasoning``, ``todo_list``, ``web_search``, ``collab_tool_call`` and
  ``error`` items are not steps that view the repository (``web_search`` and
  ``collab_tool_call`` are steps without views).

``turn.completed`` carries the thread's running total (``last_total_token_usage`` in the
processor): the run's usage is the last one; each turn's growth is charged to its first step.
The working directory is not in the stream; it is inferred when an absolute path (file changes
are always absolute) and a relative one the commands wrote name the same file, and paths under
it are made relative to it (with a read warning); else paths stay as written.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..mcp import McpRun
from . import ReadOptions
from ._sessions import infer_cwd, jsonl_objects, mark_views_after_edits, mcp_observe, relative_to
from ._sessions import nonempty_str as _str
from .codex import _block_text, _script, observe

FORMAT = "codex-exec"
PRIORITY = 30

_EVENTS = ("thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
           "item.updated", "item.completed", "error")
_CUT_BUDGET = 10_000  # bytes: the smallest model budget Codex truncates tool outputs to


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    seen = 0
    for raw in head.split(b"\n")[:8]:
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeError):
            continue
        if not isinstance(obj, dict) or obj.get("type") not in _EVENTS:
            return False
        if obj["type"] == "thread.started" and isinstance(obj.get("thread_id"), str):
            return True
        if obj["type"].startswith("item.") and isinstance(obj.get("item"), dict) \
                and isinstance(obj["item"].get("id"), str):
            return True
        seen += 1
    return False


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    records = jsonl_objects(path)
    if not records:
        raise AdapterError("empty event stream", path=str(path))
    steps: list[Step] = []
    warnings: list[str] = []
    mcp = McpRun()
    thread: str | None = None
    turn_first: Step | None = None
    previous: Usage | None = None
    turns = 0
    for lineno, ev in records:
        kind = ev.get("type")
        if kind == "thread.started":
            thread = _str(ev.get("thread_id")) or thread
        elif kind == "turn.started":
            turn_first = None
        elif kind == "turn.completed":
            total = _usage(ev.get("usage"))
            if total is not None:
                turns += 1
                if turn_first is not None:
                    turn_first.usage = _minus(total, previous)
                previous = total
        elif kind == "item.completed":
            item = ev.get("item")
            if not isinstance(item, dict):
                raise AdapterError("'item' must be an object", path=str(path), line=lineno,
                                   field="item")
            step = _step(item, len(steps), warnings, mcp)
            if step is not None:
                steps.append(step)
                if turn_first is None:
                    turn_first = step
    usage = previous
    if usage is not None:
        usage.api_calls = None  # the stream counts turns, not model calls
    extra: dict[str, Any] = {"thread_id": thread} if thread else {}
    cwd = infer_cwd(steps)
    if cwd is not None:
        extra["cwd"] = cwd
        warnings.append(f"working directory {cwd!r} inferred from absolute and relative "
                        "paths naming the same files")
        relative_to(steps, cwd)
    mark_views_after_edits(steps)
    warnings[:0] = mcp.finish()
    if warnings:
        extra["read_warnings"] = warnings
    return [Trajectory(instance_id=options.instance_id or path.stem, steps=steps,
                       run=options.run, agent="codex", usage=usage, source=str(path),
                       extra=extra)]


def _step(item: dict[str, Any], index: int, warnings: list[str], mcp: McpRun) -> Step | None:
    t = item.get("type")
    if t == "command_execution":
        command = item.get("command") if isinstance(item.get("command"), str) else ""
        script = _unwrap(command)
        step = Step(index=index, tool="command_execution", action=script)
        if item.get("status") == "declined":
            return step
        output = item.get("aggregated_output")
        output = output if isinstance(output, str) else ""
        code = item.get("exit_code")
        observe(step, script, {"output": output,
                               "metadata": {"exit_code": code} if isinstance(code, int) else {}},
                None, None)
        if len(output.encode("utf-8", "replace")) > _CUT_BUDGET:
            warnings.append(f"step {index} (command_execution): the stream keeps the whole "
                            f"output ({len(output)} characters); the model may have been shown "
                            "its head and tail only")
        return step
    if t == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        files = [c["path"] for c in changes if isinstance(c, dict) and _str(c.get("path"))]
        step = Step(index=index, tool="apply_patch", action="apply_patch " + " ".join(files))
        if item.get("status") != "failed":
            step.edits = list(dict.fromkeys(files))
        return step
    if t == "mcp_tool_call":
        server = _str(item.get("server")) or "?"
        tool = _str(item.get("tool")) or "?"
        args = item.get("arguments") if isinstance(item.get("arguments"), dict) else {}
        step = Step(index=index, tool=f"mcp__{server}__{tool}",
                    action=f"mcp__{server}__{tool} "
                           + json.dumps(args, ensure_ascii=False, sort_keys=True))
        result = item.get("result") if isinstance(item.get("result"), dict) else None
        failed = item.get("error") is not None or item.get("status") == "failed" \
            or result is None
        content = result.get("content") if result and isinstance(result.get("content"),
                                                                   list) else []
        text = "\n".join(s for b in content if (s := _block_text(b)) is not None)
        structured = result.get("structured_content") if result else None
        mcp_observe(step, server, tool, args, text, is_error=failed, cwd=None,
                    structured=structured, warnings=warnings, run=mcp)
        return step
    if t in ("web_search", "collab_tool_call"):
        return Step(index=index, tool=t, action=json.dumps(
            {k: v for k, v in item.items() if k not in ("id", "type")}, ensure_ascii=False,
            sort_keys=True, default=str))
    return None


def _unwrap(command: str) -> str:
    """The script of a ``shlex``-joined argv (``/bin/bash -lc 'cat a.py'`` is ``cat a.py``)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    return _script(argv) or command


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    return Usage.from_json({"input_tokens": u.get("input_tokens"),
                            "output_tokens": u.get("output_tokens")})


def _minus(total: Usage, previous: Usage | None) -> Usage:
    if previous is None:
        return Usage(total.input_tokens, total.output_tokens)
    def d(a: int | None, b: int | None) -> int | None:
        return None if a is None else a - (b or 0)
    return Usage(d(total.input_tokens, previous.input_tokens),
                 d(total.output_tokens, previous.output_tokens))
