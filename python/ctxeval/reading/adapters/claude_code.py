"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record per line: ``user``/``assistant`` messages (plus ``summary`` and bookkeeping
records). Each ``tool_use`` block of an assistant message is a step; its observation is the
``tool_result`` block with the same id in a later user message.

- ``Read``: the result is ``cat -n`` style (``   N→code``, older versions ``N<TAB>code``); the
  printed numbers win over ``offset``/``limit``. A Read that reached the end of the file
  (fewer lines than its ``limit``, 2,000 by default) numbers the empty string after the final
  newline too: that empty last line is not shown. An error result shows nothing.
- ``Grep``: ``content`` mode with line numbers shows ``path:N:text`` hits (views); the default
  ``files_with_matches`` mode and ``Glob``/``LS`` are listings, not views.
- ``Bash``: read by :func:`ctxeval.reading.shell.read_shell`.
- ``mcp__<server>__<tool>``: MCP tools, read by :mod:`ctxeval.reading.mcp` (the result's text,
  and its ``structuredContent`` where the record kept it in ``toolUseResult``); the readings of
  a run are settled together (:class:`~ctxeval.reading.mcp.McpRun`: several repositories), and
  their warnings reach the row.
- Subagents (the ``Task`` tool, ``Agent`` since Claude Code 2.1): records of a subagent's
  conversation written into the session file (``isSidechain``, older releases) are read in
  place, their steps marked with the subagent's ``agentId``; since 2.1 each subagent writes its
  own file, ``<session>/subagents/agent-<id>.jsonl`` beside this one, with
  ``agent-<id>.meta.json`` naming the ``Task`` call (``toolUseId``) and the subagent's type:
  its steps follow that call's step, marked ``<agentType>:<Task call id>`` (the label the
  stream-json and ATIF readers give the same subagent).
- ``Edit``/``MultiEdit``/``Write``/``NotebookEdit``: edits; the snippet an ``Edit`` result
  re-prints is in edited coordinates and is kept as a post-edit view.

Usage is per assistant message (Claude Code writes one record per content block, repeating the
message's usage, so it is counted once per message id); input tokens include cache reads and
writes. Paths under the session's ``cwd`` are made relative to it.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...linesets import line_runs
from ...model import Step, Trajectory, Usage, View
from ..mcp import McpReading, McpRun, split_tool_name
from ..shell import read_shell
from . import ReadOptions
from ._sessions import jsonl_objects, mark_views_after_edits
from ._sessions import nonempty_str as _str
from ._sessions import relative_to_cwd as _rel

FORMAT = "claude-code"
PRIORITY = 30

_TYPES = ("user", "assistant", "summary", "system", "file-history-snapshot")
_NUMBERED = re.compile(r"^\s*(\d+)(?:→|\t)")
_NUMBERED_PREFIX = re.compile(r"^\s*\d+(?:→|\t)")
_GREP_HIT = re.compile(r"^(.+?):(\d+):")
_GREP_CTX = re.compile(r"^(.+?)-(\d+)-")
_SESSION_KEY = re.compile(rb'(?<!\\)"sessionId"\s*:\s*"')
_TYPE_KEY = re.compile(rb'(?<!\\)"type"\s*:\s*"(user|assistant)"')
_EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
_LISTING_TOOLS = ("Glob", "LS")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir() or _part_of_a_session(path):
        return False
    records = _head_records(head)
    for obj in records:
        if obj.get("type") in _TYPES and any(k in obj for k in ("sessionId", "leafUuid")):
            return True
    if records:
        return False
    # The first record is longer than the head: look at its top-level keys as bytes.
    first = head.split(b"\n", 1)[0]
    return bool(first.startswith(b"{") and _SESSION_KEY.search(first) and _TYPE_KEY.search(first))


def _part_of_a_session(path: Path) -> bool:
    """A subagent's own log (``<session>/subagents/agent-<id>.jsonl`` beside
    ``<session>.jsonl``): read with its session, not as a run of its own."""
    folder = path.parent
    return folder.name == "subagents" and folder.parent.with_suffix(".jsonl").is_file()


def _head_records(head: bytes, limit: int = 8) -> list[dict[str, Any]]:
    out = []
    for raw in head.split(b"\n")[:limit]:
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeError):
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    records = _records(path)
    if not records:
        raise AdapterError("empty session log", path=str(path))
    mcp = McpRun()
    log = _read_log(records, path, mcp, None)
    steps = log.steps
    warnings: list[str] = []
    subagents = _subagent_logs(path, log, mcp, warnings)
    if subagents:
        steps = _with_subagents(steps, log, subagents, warnings)
    for k, s in enumerate(steps):
        s.index = k
    usage = Usage.total(list(log.usage_by_msg.values())
                        + [u for _, sub in subagents for u in sub.usage_by_msg.values()])
    if usage is not None:
        usage.api_calls = len(log.usage_by_msg) + sum(len(sub.usage_by_msg)
                                                      for _, sub in subagents)
    warnings = mcp.finish() + warnings
    mark_views_after_edits(steps)
    extra: dict[str, Any] = {"cwd": log.cwd} if log.cwd else {}
    if warnings:
        extra["read_warnings"] = warnings
    return [Trajectory(instance_id=options.instance_id or path.stem, steps=steps,
                       run=options.run, agent="claude-code", model=log.model, usage=usage,
                       source=str(path), extra=extra)]


@dataclass(slots=True)
class _Log:
    """The steps of one session file (the agent's, or a subagent's)."""

    steps: list[Step] = field(default_factory=list)
    cwd: str | None = None
    model: str | None = None
    usage_by_msg: dict[str, Usage | None] = field(default_factory=dict)
    step_of_call: dict[str, Step] = field(default_factory=dict)
    agent_of_call: dict[str, str] = field(default_factory=dict)  # Task call -> its agentId
    agent_id: str | None = None


def _read_log(records: list[tuple[int, dict[str, Any]]], path: Path, mcp: McpRun,
              cwd: str | None) -> _Log:
    log = _Log(cwd=cwd)
    calls: dict[str, dict[str, Any]] = {}
    ran_in: dict[str, str | None] = {}  # the directory each call ran in (a record's cwd)
    charged: set[str] = set()  # messages whose usage is already on a step
    for lineno, rec in records:
        if log.cwd is None and isinstance(rec.get("cwd"), str):
            log.cwd = rec["cwd"]
        if log.agent_id is None and isinstance(rec.get("agentId"), str):
            log.agent_id = rec["agentId"]
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if rec.get("type") == "assistant":
            m = msg.get("model")
            if log.model is None and isinstance(m, str) and m and not m.startswith("<"):
                log.model = m  # "<synthetic>" marks messages Claude Code wrote itself
            mid = msg.get("id") if isinstance(msg.get("id"), str) else f"line{lineno}"
            synthetic = isinstance(m, str) and m.startswith("<")  # no model call behind it
            if mid not in log.usage_by_msg and not synthetic:
                log.usage_by_msg[mid] = _usage(msg.get("usage"))
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                tid = block.get("id")
                name = block.get("name")
                if not isinstance(tid, str) or not isinstance(name, str):
                    raise AdapterError("a tool_use needs string 'id' and 'name'", path=str(path),
                                       line=lineno, field="message.content.tool_use")
                inp = block.get("input") if isinstance(block.get("input"), dict) else {}
                # a cd in a Bash call moves the record's cwd: relative paths are that
                # directory's, views stay relative to the session's first one
                ran_in[tid] = _str(rec.get("cwd")) or log.cwd
                step = call_step(name, inp, len(log.steps), ran_in[tid], root=log.cwd)
                if rec.get("isSidechain") is True:
                    step.subagent = _str(rec.get("agentId")) or "sidechain"
                if mid not in charged and mid in log.usage_by_msg:
                    step.usage = log.usage_by_msg[mid]
                    charged.add(mid)
                log.steps.append(step)
                log.step_of_call[tid] = step
                calls[tid] = inp
        elif rec.get("type") == "user" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                tid = block.get("tool_use_id")
                step = log.step_of_call.get(tid) if isinstance(tid, str) else None
                if step is None:
                    continue
                tur = rec.get("toolUseResult")
                if isinstance(tur, dict) and isinstance(tur.get("agentId"), str):
                    log.agent_of_call[tid] = tur["agentId"]
                observe(step, calls[tid], _result_text(block.get("content")),
                        bool(block.get("is_error")), ran_in.get(tid, log.cwd), mcp=mcp,
                        structured=structured_content(tur), root=log.cwd)
    return log


def _subagent_logs(path: Path, log: _Log, mcp: McpRun, warnings: list[str]
                   ) -> list[tuple[str | None, _Log]]:
    """The subagents' own session files (Claude Code 2.1: ``<session>/subagents/agent-<id>
    .jsonl``, and ``agent-<id>.meta.json`` naming the ``Task`` call that started it), each with
    that call's id where it is known."""
    folder = path.parent / path.stem / "subagents"
    if not folder.is_dir():
        return []
    out: list[tuple[str | None, _Log]] = []
    call_of_agent = {a: c for c, a in log.agent_of_call.items()}
    for f in sorted(folder.glob("agent-*.jsonl")):
        try:
            sub = _read_log(jsonl_objects(f), f, mcp, log.cwd)
        except AdapterError as exc:
            warnings.append(f"subagent log {f.name} not read: {exc.message}")
            continue
        meta: Any = None
        with contextlib.suppress(OSError, UnicodeError, ValueError):
            meta = json.loads(f.with_name(f.stem + ".meta.json").read_text(encoding="utf-8"))
        meta = meta if isinstance(meta, dict) else {}
        agent = sub.agent_id or f.stem[len("agent-"):]
        call = _str(meta.get("toolUseId")) or call_of_agent.get(agent)
        kind = _str(meta.get("agentType"))
        if kind is None and call is not None and call in log.step_of_call:
            kind = _str(_call_input(log.step_of_call[call]).get("subagent_type"))
        label = f"{kind}:{call}" if kind and call else (call or agent)
        for s in sub.steps:
            s.subagent = label
        out.append((call, sub))
    return out


def _call_input(step: Step) -> dict[str, Any]:
    """The arguments a step's action shows (``Name {json}``)."""
    _, _, rest = step.action.partition(" ")
    try:
        got = json.loads(rest)
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def _with_subagents(steps: list[Step], log: _Log, subagents: list[tuple[str | None, _Log]],
                    warnings: list[str]) -> list[Step]:
    """The agent's steps with each subagent's steps after the ``Task`` call that started it
    (at the end, with a warning, when that call is not found)."""
    after: dict[int, list[Step]] = {}
    loose: list[Step] = []
    for call, sub in subagents:
        step = log.step_of_call.get(call) if call else None
        if step is None:
            loose.extend(sub.steps)
            warnings.append(f"subagent {sub.agent_id or '?'}: the call that started it is not "
                            "in the session; its steps are put last")
            continue
        after.setdefault(id(step), []).extend(sub.steps)
    out: list[Step] = []
    for s in steps:
        out.append(s)
        out.extend(after.get(id(s), []))
    return out + loose


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return jsonl_objects(path)


def call_step(name: str, inp: dict[str, Any], index: int, cwd: str | None, *,
              root: str | None = None) -> Step:
    """The step of one tool call, before its result is known (edit tools name their file).

    Shared with the ATIF reader, which replays Claude Code's calls through it. ``cwd`` is the
    directory the call ran in; ``root`` the one paths are made relative to (the session's
    starting directory, the repository; ``cwd`` when not given): after a ``cd`` the two
    differ."""
    step = Step(index=index, tool=name, action=_action(name, inp))
    if name in _EDIT_TOOLS:
        f = _rel(_under(cwd, _str(inp.get("file_path")) or _str(inp.get("notebook_path"))),
                 root or cwd)
        if f:
            step.edits = [f]
    return step


def observe(step: Step, inp: dict[str, Any], text: str, is_error: bool, cwd: str | None,
            *, mcp: McpRun | None = None, structured: Any = None, root: str | None = None
            ) -> McpReading | None:
    """Views (and edit outcome) of a call from the text its result showed the model.

    ``cwd`` is the directory the call ran in (relative paths of a command are its), ``root``
    the directory views are made relative to (see :func:`call_step`; ``cwd`` when not given).
    An MCP tool (``mcp__<server>__<tool>``) is read by :mod:`ctxeval.reading.mcp`, through the
    run's :class:`~ctxeval.reading.mcp.McpRun` when one is given (``structured``: the result's
    ``structuredContent``); its reading is returned. Other tools return None."""
    name = step.tool
    base = root or cwd
    split = split_tool_name(name or "")
    if split is not None:
        run = mcp if mcp is not None else McpRun()
        return run.observe(step, split[0], split[1], inp, text, is_error=is_error, cwd=base,
                           structured=structured)
    if is_error:
        if name in _EDIT_TOOLS:
            step.edits = []  # the edit was refused ("String to replace not found", ...)
        return
    if name in _LISTING_TOOLS:
        return
    if mcp is not None and mcp.saved and name in ("Bash", "Read", "Grep"):
        saved = mcp.saved_in(_str(inp.get("command")), _str(inp.get("file_path")),
                             _str(inp.get("path")))
        if saved is not None:
            # an MCP result Claude Code saved to a file: not a file of the repository; what
            # the command printed of it with the server's numbers is the file it came from
            if name == "Bash":
                return mcp.observe_saved(step, saved, text)
            return mcp.observe_saved(step, saved, _saved_json_text(text) if name == "Read"
                                     else "", whole=True)
    if name == "Read":
        f = _rel(_under(cwd, _str(inp.get("file_path"))), base)
        if f:
            step.views = _numbered(f, text, read_limit=_read_limit(inp))
    elif name == "Grep":
        step.views = _grep_views(inp, text, cwd, base)
    elif name == "Bash":
        reading = read_shell(_str(inp.get("command")) or "", text, cwd=cwd)
        step.views = [replace(v, file=_rel(v.file, base) or v.file) for v in reading.views]
        step.edits = list(dict.fromkeys([*step.edits,
                                         *(_rel(e, base) or e for e in reading.edits)]))
    elif name in ("Edit", "MultiEdit") and step.edits:
        step.views = [View(v.file, v.start_line, v.end_line, post_edit=True)
                      for v in _numbered(step.edits[0], text)]
    return None


_JSON_CONTENT = re.compile(r'"content"\s*:\s*"')
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "b": "\b",
            "f": "\f"}


def _saved_json_text(text: str) -> str:
    """The text a Read of a saved MCP result showed of its ``content`` string: Read prints the
    JSON file (``N→{"content":"1: ...\\n2: ..."``, a long line cut by Read), so the string's
    escapes are undone up to where the printout stops."""
    body = "\n".join(_NUMBERED_PREFIX.sub("", line, count=1) for line in text.splitlines())
    m = _JSON_CONTENT.search(body)
    if m is None:
        return ""
    out: list[str] = []
    i = m.end()
    while i < len(body):
        c = body[i]
        if c == '"':
            break
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "u" and i + 6 <= len(body):
                code = body[i + 2:i + 6]
                if all(ch in "0123456789abcdefABCDEF" for ch in code):
                    out.append(chr(int(code, 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def structured_content(tool_use_result: Any) -> Any:
    """The ``structuredContent`` of an MCP result as Claude Code records it beside the
    message (``toolUseResult`` in session logs, ``tool_use_result`` in stream-json)."""
    if isinstance(tool_use_result, dict) and "structuredContent" in tool_use_result:
        return tool_use_result["structuredContent"]
    return None


#: the lines a Read without ``limit`` prints at most (Claude Code's default)
READ_DEFAULT_LIMIT = 2000


def _read_limit(inp: dict[str, Any]) -> int:
    limit = inp.get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return limit
    if isinstance(limit, str) and limit.strip().isdigit() and int(limit) > 0:
        return int(limit)
    return READ_DEFAULT_LIMIT


def _numbered(f: str, text: str, *, read_limit: int | None = None) -> list[View]:
    """Line views of ``N→text`` lines. For a Read (``read_limit``: the lines it could print),
    a printout that stopped before the limit reached the end of the file, and an empty last
    numbered line there is the empty string after the file's final newline, which Claude Code
    numbers too (``   47→`` after line 46; its ``totalLines`` counts it): not a line."""
    printed = [(int(m.group(1)), line[m.end():]) for line in text.splitlines()
               if (m := _NUMBERED.match(line)) and int(m.group(1)) >= 1]
    if read_limit is not None and printed and len(printed) < read_limit \
            and not printed[-1][1].strip() and (len(printed) == 1 or
                                                printed[-2][0] == printed[-1][0] - 1):
        printed.pop()
    nums = sorted({n for n, _ in printed})
    return [View(f, a, b) for a, b in line_runs(nums)]


def _under(cwd: str | None, path: str | None) -> str | None:
    """A path a tool was given, absolute: relative ones are the working directory's."""
    if not path or path.startswith("/") or not cwd:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _grep_views(inp: dict[str, Any], text: str, cwd: str | None,
                root: str | None = None) -> list[View]:
    if inp.get("output_mode") != "content":
        return []
    hits: dict[str, set[int]] = {}
    single = _str(inp.get("path"))
    for line in text.splitlines():
        m = _GREP_HIT.match(line)
        if m and not m.group(1).isdigit():
            hits.setdefault(m.group(1), set()).add(int(m.group(2)))
        elif single and (n := re.match(r"^(\d+)[:-]", line)):
            hits.setdefault(single, set()).add(int(n.group(1)))
    for line in text.splitlines():  # context lines (-A/-B/-C) of files that had hits
        m = _GREP_CTX.match(line)
        if m and m.group(1) in hits:
            hits[m.group(1)].add(int(m.group(2)))
    views = []
    for f, nums in hits.items():
        rel = _rel(_under(cwd, f), root or cwd) or f
        views.extend(View(rel, a, b) for a, b in line_runs(sorted(n for n in nums if n >= 1)))
    return views


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content
                         if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    ins = [u.get(k) for k in ("input_tokens", "cache_creation_input_tokens",
                              "cache_read_input_tokens")]
    nums = [v for v in ins if isinstance(v, int) and not isinstance(v, bool)]
    return Usage.from_json({"input_tokens": sum(nums) if nums else None,
                            "output_tokens": u.get("output_tokens")})


def _action(name: str, inp: dict[str, Any]) -> str:
    if name == "Bash" and isinstance(inp.get("command"), str):
        return inp["command"]
    shown = {k: v for k, v in inp.items() if k not in ("content", "old_string", "new_string",
                                                       "edits")}
    try:
        return f"{name} {json.dumps(shown, ensure_ascii=False, sort_keys=True)}"
    except (TypeError, ValueError):
        return name
