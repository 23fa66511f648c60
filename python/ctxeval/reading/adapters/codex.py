"""Codex CLI rollout files (``~/.codex/sessions/.../rollout-*.jsonl``).

Current rollouts wrap every record as ``{"timestamp", "type", "payload"}`` (``session_meta``,
``turn_context``, ``response_item``, ``event_msg``); early ones put the response items directly on
the line after a ``{"id", "timestamp", "instructions"}`` header. Each tool call response item is a
step, its output the ``*_output`` item with the same ``call_id``:

- shell calls (``shell``/``container.exec`` with an argv list, ``exec_command``/``shell_command``
  with a string, ``local_shell_call``) are read by :func:`ctxeval.reading.shell.read_shell`;
  ``bash -lc SCRIPT`` is unwrapped to ``SCRIPT``;
- ``apply_patch`` (a custom tool, an argv ``["apply_patch", PATCH]`` or a script starting with
  ``apply_patch``) is an edit of the files its ``*** Update/Add/Delete File:`` lines name.

Usage comes from ``token_count`` events: ``last_token_usage`` is charged to the first step of the
model response it follows; the run's usage is the last ``total_token_usage``.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..shell import read_shell
from . import ReadOptions
from ._sessions import jsonl_objects, mark_views_after_edits
from ._sessions import nonempty_str as _str
from ._sessions import relative_to_cwd as _rel

FORMAT = "codex"
PRIORITY = 30

_WRAPPED = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_ITEMS = ("message", "function_call", "function_call_output", "reasoning", "local_shell_call",
          "custom_tool_call", "custom_tool_call_output")
_WRAPPED_HEAD = re.compile(
    rb'\{"timestamp":\s*"[^"]*",\s*"type":\s*"(session_meta|response_item|event_msg|turn_context)"')
_SHELL_NAMES = ("shell", "container.exec", "exec_command", "shell_command", "local_shell")
_PATCH_FILE = re.compile(
    r"^\*\*\* (?:Update|Add|Delete) File:\s*(.+?)\s*$|^\*\*\* Move to:\s*(.+?)\s*$", re.M)
_EXIT = re.compile(r"(?:Exit code|Process exited with code):?\s*(-?\d+)")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    objs = []
    for raw in head.split(b"\n")[:6]:
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeError):
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    if not objs:  # the first record is longer than the head
        return bool(_WRAPPED_HEAD.match(head))
    first = objs[0]
    if first.get("type") in _WRAPPED and isinstance(first.get("payload"), dict):
        return True
    # Early rollouts: a header line, then bare response items.
    return ("instructions" in first and "id" in first and "timestamp" in first
            and any(o.get("type") in _ITEMS or "record_type" in o for o in objs[1:]))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    items = _items(path)
    cwd: str | None = None
    model: str | None = None
    steps: list[Step] = []
    pending: dict[str, tuple[Step, str | None, str | None]] = {}
    since_usage: list[Step] = []
    per_call: list[Usage | None] = []
    total: Usage | None = None
    for _lineno, kind, p in items:
        if kind in ("session_meta", "turn_context", "header"):
            cwd = _str(p.get("cwd")) or cwd
            model = _str(p.get("model")) or model
            continue
        if kind == "event_msg":
            if p.get("type") == "token_count":
                last, tot = _token_usage(p)
                if tot is not None and tot == total:
                    continue  # the same count re-emitted: no new model call
                per_call.append(last)
                total = tot or total
                if since_usage and last is not None:
                    since_usage[0].usage = last
                since_usage = []
            continue
        if kind != "response_item":
            continue
        t = p.get("type")
        if t in ("function_call", "custom_tool_call", "local_shell_call"):
            step, cmd, workdir = call_step(p, len(steps))
            steps.append(step)
            since_usage.append(step)
            cid = _str(p.get("call_id")) or _str(p.get("id"))
            if cid:
                pending[cid] = (step, cmd, workdir)
        elif t in ("function_call_output", "custom_tool_call_output"):
            cid = _str(p.get("call_id"))
            if cid and cid in pending:
                step, cmd, workdir = pending.pop(cid)
                if cmd is not None:
                    observe(step, cmd, p.get("output"), workdir or cwd, cwd or workdir)
    if not items:
        raise AdapterError("empty rollout", path=str(path))
    usage = total or Usage.total(per_call)
    calls = sum(1 for u in per_call if u is not None)
    if usage is not None and calls:
        usage.api_calls = calls
    mark_views_after_edits(steps)
    return [Trajectory(instance_id=options.instance_id or path.stem, steps=steps,
                       run=options.run, agent="codex", model=model, usage=usage,
                       source=str(path), extra={"cwd": cwd} if cwd else {})]


def _items(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """``(line, kind, payload)`` for every record, old and new layouts alike."""
    out: list[tuple[int, str, dict[str, Any]]] = []
    for lineno, obj in jsonl_objects(path):
        if obj.get("type") in _WRAPPED:
            payload = obj.get("payload")
            if not isinstance(payload, dict):
                raise AdapterError("'payload' must be an object", path=str(path), line=lineno,
                                   field="payload")
            out.append((lineno, obj["type"], payload))
        elif obj.get("type") in _ITEMS:
            out.append((lineno, "response_item", obj))
        elif "instructions" in obj and "id" in obj:
            out.append((lineno, "header", obj))
    return out


def call_step(p: dict[str, Any], index: int) -> tuple[Step, str | None, str | None]:
    """The step for a tool call response item, the shell script to read its output with, and
    its workdir. Shared with the ATIF reader, which rebuilds the item from an ATIF tool call."""
    t = p.get("type")
    if t == "local_shell_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        argv = action.get("command")
        return (*_shell_step("local_shell", argv, index), _str(action.get("working_directory")))
    name = _str(p.get("name")) or "?"
    if t == "custom_tool_call":
        body = p.get("input") if isinstance(p.get("input"), str) else ""
        step = Step(index=index, tool=name, action=body)
        if name == "apply_patch":
            step.edits = _patch_files(body)
        return step, None, None
    raw = p.get("arguments")
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            args = {}
    if not isinstance(args, dict):
        args = {}
    if name in _SHELL_NAMES:
        cmd = args.get("command", args.get("cmd"))
        return (*_shell_step(name, cmd, index), _str(args.get("workdir")))
    if name == "apply_patch":
        body = _str(args.get("input")) or _str(args.get("patch")) or ""
        return Step(index=index, tool=name, action=body, edits=_patch_files(body)), None, None
    try:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = ""
    return Step(index=index, tool=name, action=f"{name} {shown}".strip()), None, None


def _shell_step(tool: str, cmd: Any, index: int) -> tuple[Step, str | None]:
    script = _script(cmd)
    if script is None:
        return Step(index=index, tool=tool, action=""), None
    stripped = script.lstrip()
    if stripped.startswith("apply_patch"):
        return Step(index=index, tool="apply_patch", action=script,
                    edits=_patch_files(script)), None
    return Step(index=index, tool=tool, action=script), script


def _script(cmd: Any) -> str | None:
    if isinstance(cmd, str):
        return cmd
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd):
        return None
    if len(cmd) == 3 and Path(cmd[0]).name in ("bash", "sh", "zsh") and cmd[1] in ("-lc", "-c"):
        return cmd[2]
    if cmd[0] == "apply_patch" and len(cmd) == 2:
        return "apply_patch " + cmd[1]
    return shlex.join(cmd)


def observe(step: Step, script: str, output: Any, workdir: str | None, cwd: str | None
            ) -> None:
    """Views and edits of a shell call run in ``workdir``, made relative to ``cwd`` (the
    session's, else the call's own workdir)."""
    text, code = _output(output)
    reading = read_shell(script, text, cwd=workdir, returncode=code)
    step.views = [replace(v, file=_rel(v.file, cwd)) for v in reading.views]
    step.edits = list(dict.fromkeys([*step.edits, *(_rel(e, cwd) for e in reading.edits)]))


def _output(output: Any) -> tuple[str, int | None]:
    """The text a shell call printed, and its exit code when recorded."""
    if isinstance(output, dict):
        meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        return (output.get("output") if isinstance(output.get("output"), str) else "",
                code if isinstance(code, int) else None)
    if not isinstance(output, str):
        return "", None
    try:
        obj = json.loads(output)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and "output" in obj:
        return _output(obj)
    # Newer rollouts: "Exit code: 0\nWall time: ...\nOutput:\n<text>".
    head, sep, rest = output.partition("\nOutput:\n")
    if sep:
        m = _EXIT.search(head)
        return rest, int(m.group(1)) if m else None
    return output, None


def _patch_files(body: str) -> list[str]:
    return list(dict.fromkeys(a or b for a, b in _PATCH_FILE.findall(body)))


def _token_usage(p: dict[str, Any]) -> tuple[Usage | None, Usage | None]:
    info = p.get("info")
    if isinstance(info, dict):
        return _usage(info.get("last_token_usage")), _usage(info.get("total_token_usage"))
    return _usage(p), None  # early rollouts put the counts on the event itself


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    return Usage.from_json({"input_tokens": u.get("input_tokens"),
                            "output_tokens": u.get("output_tokens")})
