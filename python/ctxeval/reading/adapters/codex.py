"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, and ``.jsonl.zst``).

Read from the source of ``openai/codex`` (``codex-rs``), last at upstream commit 608b8b1c
(2026-06-09): ``protocol/src/protocol.rs`` (``RolloutLine``, ``RolloutItem``, ``EventMsg``,
``McpToolCallEndEvent``, ``TokenCountEvent``), ``protocol/src/models.rs`` (``ResponseItem``,
``FunctionCallOutputPayload``, ``CallToolResult::as_function_call_output_payload``),
``rollout/src/policy.rs`` (which records are written), ``core/src/tools/context.rs`` (what a tool
output shows the model), ``core/src/tools/mod.rs`` (``format_exec_output_for_model``),
``utils/string/src/truncate.rs`` (the truncation marker), ``codex-mcp/src/tools.rs`` (MCP tool
names), and, for tools since removed, ``core/src/tools/handlers/read_file.rs`` (last at
14c35a16a^, March 2026), ``list_dir.rs`` and ``grep_files.rs``.

Layout. Since mid-2025 every record is ``{"timestamp", "type", "payload"}`` (``session_meta``,
``turn_context``, ``response_item``, ``event_msg``, ``compacted``); early rollouts put the
response items directly on the line after a ``{"id", "timestamp", "instructions"}`` header. Codex
compresses cold rollouts to ``.jsonl.zst`` (``rollout/src/compression.rs``): read when the
``zstandard`` package is installed, else reported with the command that decompresses them.

Steps. Each tool call response item is a step; its output is the ``*_output`` item with the same
``call_id`` (the text the model was shown):

- shell calls (``shell``/``container.exec`` with an argv list, ``exec_command``/``shell_command``
  with a string, ``local_shell_call``) are read by :func:`ctxeval.reading.shell.read_shell`;
  ``bash -lc SCRIPT`` is unwrapped to ``SCRIPT``. The output's header (``Exit code: N`` or
  ``Process exited with code N``, ``Wall time``, ``Total output lines``, ``Chunk ID``, ``Original
  token count``) is not printed text. A cut output (``…N tokens truncated…`` or ``…N chars
  truncated…`` since November 2025, cut inside a line; ``[... omitted N of M lines ...]``
  before) keeps its head and tail. An ``exec_command`` still running when it answered
  (``Process running with session ID N``) showed its output so far; what a later
  ``write_stdin`` poll returns is not read (noted in the read warnings);
- ``apply_patch`` (a custom tool, an argv ``["apply_patch", PATCH]`` or a script starting with
  ``apply_patch``) is an edit of the files its ``*** Update/Add/Delete File:`` lines name;
- ``read_file`` (experimental, October 2025 to March 2026) prints ``L<n>: <line>``: line views;
  its errors print no numbered line. ``list_dir`` and ``grep_files`` (file names only) are
  listings: nothing is credited;
- MCP tool calls go to :func:`ctxeval.reading.mcp.read_call`. The call is named, by version:
  ``<server>__OAI_CODEX_MCP__<tool>`` (mid-2025), ``<server>__<tool>`` (to January 2026),
  ``mcp__<server>__<tool>`` (February to April 2026), and since May 2026 a ``function_call``
  whose ``namespace`` is ``mcp__<server>`` and whose ``name`` is the tool. Since May 2026 the
  rollout also keeps an ``mcp_tool_call_end`` event with the server and tool as configured, the
  arguments and the result (``{"Ok": CallToolResult}`` or ``{"Err": message}``), which gives the
  server's own names, the error flag and the ``structuredContent``. What the model saw is the
  output item: since April 2026 ``Wall time: … seconds\\nOutput:\\n`` then the JSON of the
  result's content blocks (of its ``structuredContent`` when there is one), or a list of content
  items when an image came back; ``err: …`` on a failure. The text handed to the reader is the
  text of those blocks, joined with newlines; a result that failed shows nothing.

Usage comes from ``token_count`` events: ``last_token_usage`` is charged to the first step of the
model response it follows; the run's usage is the last ``total_token_usage``.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..mcp import McpRun, split_tool_name
from ..shell import read_shell
from . import ReadOptions
from ._sessions import elided, jsonl_objects, mark_views_after_edits, mcp_observe, numbered_views
from ._sessions import nonempty_str as _str
from ._sessions import relative_to_cwd as _rel

FORMAT = "codex"
PRIORITY = 30

_WRAPPED = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_ITEMS = ("message", "function_call", "function_call_output", "reasoning", "local_shell_call",
          "custom_tool_call", "custom_tool_call_output")
_WRAPPED_HEAD = re.compile(
    rb'\{"timestamp":\s*"[^"]*",\s*"type":\s*"(session_meta|response_item|event_msg|turn_context)"')
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SHELL_NAMES = ("shell", "container.exec", "exec_command", "shell_command", "local_shell")
#: Codex's own tools that are not shell calls: never taken for an MCP ``server__tool`` name.
_NATIVE = frozenset((*_SHELL_NAMES, "apply_patch", "write_stdin", "read_file", "list_dir",
                     "grep_files", "update_plan", "view_image", "web_search", "tool_search"))
_LISTINGS = ("list_dir", "grep_files")
_PATCH_FILE = re.compile(
    r"^\*\*\* (?:Update|Add|Delete) File:\s*(.+?)\s*$|^\*\*\* Move to:\s*(.+?)\s*$", re.M)
_EXIT = re.compile(r"(?:Exit code|Process exited with code):?\s*(-?\d+)")
_RUNNING = re.compile(r"^Process running with session ID (\d+)$", re.M)
#: The marker Codex puts where it dropped the middle of an output (since November 2025).
_INLINE_CUT = re.compile(r"…\d+ (?:tokens|chars) truncated…")
_TOTAL_LINES = re.compile(r"\ATotal output lines: \d+\n\n")
_READ_FILE_LINE = re.compile(r"^L(\d+): ")
_WALL_TIME = re.compile(r"\AWall time: [\d.]+ seconds\nOutput:(?:\n|\Z)")
_LEGACY_MCP_DELIMITER = "__OAI_CODEX_MCP__"


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    if head.startswith(_ZSTD_MAGIC):
        return path.name.endswith(".jsonl.zst") and path.name.startswith("rollout-")
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
    warnings: list[str] = []
    mcp = McpRun()
    mcp_ends = {cid: p for _, kind, p in items if kind == "event_msg"
                and p.get("type") == "mcp_tool_call_end" and (cid := _str(p.get("call_id")))}
    steps: list[Step] = []
    pending: dict[str, Call] = {}
    sessions: dict[str, str] = {}  # exec_command sessions still running: id -> script
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
            c = call(p, len(steps))
            steps.append(c.step)
            since_usage.append(c.step)
            cid = _str(p.get("call_id")) or _str(p.get("id"))
            if cid:
                pending[cid] = c
        elif t in ("function_call_output", "custom_tool_call_output"):
            cid = _str(p.get("call_id"))
            if cid and cid in pending:
                c = pending.pop(cid)
                observe_call(c, p.get("output"), cwd, warnings, mcp_end=mcp_ends.get(cid),
                             sessions=sessions, mcp=mcp)
    if not items:
        raise AdapterError("empty rollout", path=str(path))
    usage = total or Usage.total(per_call)
    calls = sum(1 for u in per_call if u is not None)
    if usage is not None and calls:
        usage.api_calls = calls
    mark_views_after_edits(steps)
    warnings[:0] = mcp.finish()
    extra: dict[str, Any] = {"cwd": cwd} if cwd else {}
    if warnings:
        extra["read_warnings"] = warnings
    return [Trajectory(instance_id=options.instance_id or _instance_id(path), steps=steps,
                       run=options.run, agent="codex", model=model, usage=usage,
                       source=str(path), extra=extra)]


def _instance_id(path: Path) -> str:
    name = path.name
    return name[:-len(".jsonl.zst")] if name.endswith(".jsonl.zst") else path.stem


def _text_of(path: Path) -> str:
    """The rollout's text; a ``.jsonl.zst`` rollout is decompressed when ``zstandard`` is
    installed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    if raw.startswith(_ZSTD_MAGIC):
        try:
            import zstandard  # type: ignore[import-not-found]
        except ImportError:
            raise AdapterError(
                "a zstd-compressed Codex rollout: install the 'zstandard' package, or "
                f"decompress it first (zstd -d {path.name})", path=str(path)) from None
        try:
            with zstandard.ZstdDecompressor().stream_reader(raw) as fh:
                raw = fh.read()
        except zstandard.ZstdError as exc:
            raise AdapterError(f"cannot decompress: {exc}", path=str(path)) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeError as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc


def _items(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """``(line, kind, payload)`` for every record, old and new layouts alike."""
    out: list[tuple[int, str, dict[str, Any]]] = []
    for lineno, obj in jsonl_objects(path, _text_of(path)):
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


# --- calls --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Call:
    """One tool call: its step, and what its output is read with.

    ``kind``: ``shell`` (``script`` run in ``workdir``), ``mcp`` (``mcp`` is ``(server,
    tool)``), ``read_file``, ``stdin`` (a ``write_stdin`` poll of session ``session``),
    ``listing`` or ``other`` (nothing to read)."""

    step: Step
    kind: str = "other"
    script: str | None = None
    workdir: str | None = None
    mcp: tuple[str, str] | None = None
    args: dict[str, Any] = field(default_factory=dict)
    session: str | None = None


def call(p: dict[str, Any], index: int) -> Call:
    """The step of a tool call response item and how to read its output. Shared with the ATIF
    reader, which rebuilds the item from an ATIF tool call."""
    t = p.get("type")
    if t == "local_shell_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        return _shell_call("local_shell", action.get("command"), index,
                           _str(action.get("working_directory")))
    name = _str(p.get("name")) or "?"
    if t == "custom_tool_call":
        body = p.get("input") if isinstance(p.get("input"), str) else ""
        step = Step(index=index, tool=name, action=body)
        if name == "apply_patch":
            step.edits = _patch_files(body)
        return Call(step)
    args = _arguments(p.get("arguments"))
    mcp = mcp_name(name, _str(p.get("namespace")))
    if mcp is not None:
        return Call(Step(index=index, tool=f"mcp__{mcp[0]}__{mcp[1]}",
                         action=_shown(f"mcp__{mcp[0]}__{mcp[1]}", args)), "mcp", mcp=mcp,
                    args=args)
    if name in _SHELL_NAMES:
        cmd = args.get("command", args.get("cmd"))
        return _shell_call(name, cmd, index, _str(args.get("workdir")))
    if name == "apply_patch":
        body = _str(args.get("input")) or _str(args.get("patch")) or ""
        return Call(Step(index=index, tool=name, action=body, edits=_patch_files(body)))
    if name == "write_stdin":
        sid = args.get("session_id")
        chars = args.get("chars") if isinstance(args.get("chars"), str) else ""
        return Call(Step(index=index, tool=name, action=chars), "stdin",
                    session=str(sid) if isinstance(sid, (int, str)) else None)
    kind = "read_file" if name == "read_file" else "listing" if name in _LISTINGS else "other"
    return Call(Step(index=index, tool=name, action=_shown(name, args)), kind, args=args)


def call_step(p: dict[str, Any], index: int) -> tuple[Step, str | None, str | None]:
    """The step of a tool call, the shell script to read its output with, and its workdir."""
    c = call(p, index)
    return c.step, c.script, c.workdir


def mcp_name(name: str, namespace: str | None = None) -> tuple[str, str] | None:
    """``(server, tool)`` of an MCP call as each Codex version names it (module docstring);
    None for Codex's own tools and any other name."""
    if namespace is not None:
        if namespace.startswith("mcp__"):
            server = namespace[len("mcp__"):].rstrip("_")
            return (server, name) if server and name else None
        return None
    if name.startswith("mcp__"):
        return split_tool_name(name)
    if _LEGACY_MCP_DELIMITER in name:
        server, _, tool = name.partition(_LEGACY_MCP_DELIMITER)
        return (server, tool) if server and tool else None
    if name not in _NATIVE and "__" in name.strip("_"):
        server, _, tool = name.partition("__")
        return (server, tool) if server and tool else None
    return None


def _arguments(raw: Any) -> dict[str, Any]:
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            args = {}
    return args if isinstance(args, dict) else {}


def _shown(name: str, args: dict[str, Any]) -> str:
    try:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = ""
    return f"{name} {shown}".strip()


def _shell_call(tool: str, cmd: Any, index: int, workdir: str | None) -> Call:
    script = _script(cmd)
    if script is None:
        return Call(Step(index=index, tool=tool, action=""))
    stripped = script.lstrip()
    if stripped.startswith("apply_patch"):
        return Call(Step(index=index, tool="apply_patch", action=script,
                         edits=_patch_files(script)))
    return Call(Step(index=index, tool=tool, action=script), "shell", script, workdir)


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


# --- outputs ------------------------------------------------------------------------------------


def observe_call(c: Call, output: Any, cwd: str | None, warnings: list[str], *,
                 mcp_end: dict[str, Any] | None = None,
                 sessions: dict[str, str] | None = None, mcp: McpRun | None = None) -> None:
    """Views (and edits) of a call from the output item that answered it."""
    step = c.step
    if c.kind == "shell" and c.script is not None:
        shown = _output(output)
        if shown.running is not None and sessions is not None:
            sessions[shown.running] = c.script
        _observe_shell(step, c.script, shown, c.workdir or cwd, cwd or c.workdir)
    elif c.kind == "mcp" and c.mcp is not None:
        _observe_mcp(c, output, cwd, warnings, mcp_end, mcp)
    elif c.kind == "read_file":
        f = _rel(_str(c.args.get("file_path")), cwd)
        text = _payload_text(output)
        if f:
            step.views = numbered_views(f, [int(m.group(1)) for ln in text.split("\n")
                                            if (m := _READ_FILE_LINE.match(ln))])
    elif c.kind == "stdin":
        text = _output(output).text
        if text.strip() and sessions is not None and c.session in sessions:
            warnings.append(f"step {step.index} (write_stdin): the output of session "
                            f"{c.session} ({sessions[c.session]!r}) read by a later poll is "
                            "not read")


def observe(step: Step, script: str, output: Any, workdir: str | None, cwd: str | None
            ) -> None:
    """Views and edits of a shell call run in ``workdir``, made relative to ``cwd`` (the
    session's, else the call's own workdir)."""
    _observe_shell(step, script, _output(output), workdir, cwd)


def _observe_shell(step: Step, script: str, shown: _Shown, workdir: str | None,
                   cwd: str | None) -> None:
    reading = read_shell(script, shown.text, cwd=workdir, returncode=shown.code,
                         truncated=shown.running is not None)
    step.views = [replace(v, file=_rel(v.file, cwd)) for v in reading.views]
    step.edits = list(dict.fromkeys([*step.edits, *(_rel(e, cwd) for e in reading.edits)]))


@dataclass(slots=True)
class _Shown:
    """What a shell call printed: its text (a cut one in the shape the shell reader reads), its
    exit code when recorded, and the session id of a process still running when it answered."""

    text: str
    code: int | None = None
    running: str | None = None


def _output(output: Any) -> _Shown:
    if isinstance(output, dict):
        meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        code = meta.get("exit_code")
        text = output.get("output") if isinstance(output.get("output"), str) else ""
        return _Shown(_cut(text), code if isinstance(code, int) else None)
    if isinstance(output, list):  # content items (an image came back)
        return _output(_items_text(output))
    if not isinstance(output, str):
        return _Shown("")
    try:
        obj = json.loads(output)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and "output" in obj:
        return _output(obj)
    # Since 2025: "Exit code: 0\nWall time: ...\nOutput:\n<text>" (shell), or
    # "Chunk ID: ...\nWall time: ...\nProcess exited with code 0\nOutput:\n<text>" (exec_command).
    head, sep, rest = output.partition("\nOutput:\n")
    if not sep and output.endswith("\nOutput:"):
        head, sep, rest = output[:-len("\nOutput:")], "\n", ""
    if sep:
        m = _EXIT.search(head)
        running = _RUNNING.search(head)
        return _Shown(_cut(rest), int(m.group(1)) if m else None,
                      running.group(1) if running and not m else None)
    return _Shown(_cut(output))


def _cut(text: str) -> str:
    """A text Codex cut in the middle with its inline marker, in the shell reader's shape."""
    m = _INLINE_CUT.search(text)
    if m is None:
        return text
    head = _TOTAL_LINES.sub("", text[:m.start()], count=1)
    return elided(head, text[m.end():])


def _payload_text(output: Any) -> str:
    """The text of a function output: a string, or the text of its content items."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _items_text(output)
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    return ""


def _items_text(items: list[Any]) -> str:
    return "\n".join(i["text"] for i in items if isinstance(i, dict)
                     and i.get("type") in ("input_text", "text", "output_text")
                     and isinstance(i.get("text"), str))


def _observe_mcp(c: Call, output: Any, cwd: str | None, warnings: list[str],
                 end: dict[str, Any] | None, run: McpRun | None) -> None:
    assert c.mcp is not None
    server, tool = c.mcp
    args: Any = c.args
    structured: Any = None
    is_error = False
    if end is not None:  # the server's own names, arguments, error flag and structured content
        inv = end.get("invocation") if isinstance(end.get("invocation"), dict) else {}
        server = _str(inv.get("server")) or server
        tool = _str(inv.get("tool")) or tool
        if isinstance(inv.get("arguments"), dict):
            args = inv["arguments"]
        result = end.get("result")
        if isinstance(result, dict) and "Err" in result:
            is_error = True
        ok = result.get("Ok") if isinstance(result, dict) else None
        if isinstance(ok, dict):
            is_error = is_error or ok.get("isError") is True
            structured = ok.get("structuredContent")
    text, failed, cut = _mcp_text(output)
    if structured is None and failed is None:
        structured = _json_object(text)
    if cut:
        warnings.append(f"step {c.step.index} ({c.step.tool}): Codex cut the middle of the "
                        "result (its text decoded as far as the cut allows)")
    mcp_observe(c.step, server, tool, args, text, is_error=is_error or bool(failed), cwd=cwd,
                structured=structured, warnings=warnings, run=run)


def _mcp_text(output: Any) -> tuple[str, str | None, bool]:
    """``(text, error, cut)`` of an MCP output item: the text of the result's content blocks
    (joined with newlines), the failure message when the call failed, whether Codex's
    truncation cut the JSON (its text then decoded in part, the marker kept where it cut)."""
    if isinstance(output, list):  # content items: the header, then the blocks' texts
        texts = [i["text"] for i in output if isinstance(i, dict)
                 and i.get("type") == "input_text" and isinstance(i.get("text"), str)]
        if texts and _WALL_TIME.match(texts[0] + "\n"):
            texts = texts[1:]
        return "\n".join(texts), None, False
    body = _payload_text(output)
    body = _WALL_TIME.sub("", body, count=1)
    if body.startswith("err: "):
        return "", body, False
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        value = None
        if _INLINE_CUT.search(body):
            return _decode_cut(body), None, True
        if body.strip():  # a plain string: an older Codex's error text, or the tool's own
            return body, None, False
    cut = bool(_INLINE_CUT.search(body))  # a cut inside one string leaves the JSON whole
    if isinstance(value, list):
        return "\n".join(t for b in value if (t := _block_text(b)) is not None), None, cut
    return body, None, cut  # structured content, shown as its JSON


def _block_text(block: Any) -> str | None:
    """The text of an MCP content block: a text block's, or an embedded resource's."""
    if not isinstance(block, dict):
        return None
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"]
    res = block.get("resource")
    if block.get("type") == "resource" and isinstance(res, dict) \
            and isinstance(res.get("text"), str):
        return res["text"]
    return None


def _json_object(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


_TEXT_FIELD = re.compile(r'"text"\s*:\s*"')


def _decode_cut(body: str) -> str:
    """The text of content blocks whose JSON Codex cut in the middle: each side decoded as far
    as its string escapes go, the marker kept where the cut fell."""
    m = _INLINE_CUT.search(body)
    assert m is not None
    left, right = body[:m.start()], body[m.end():]
    head = [_json_string(left, s.end())[0] for s in _TEXT_FIELD.finditer(left)]
    first, end = _json_string(right, 0)  # the tail starts inside a string
    after = len(right) if end is None else end
    rest = [_json_string(right, s.end())[0] for s in _TEXT_FIELD.finditer(right, after)]
    return "\n".join(head) + m.group(0) + "\n".join([first, *rest])


def _json_string(s: str, i: int) -> tuple[str, int | None]:
    """The JSON string body starting at ``s[i]``, decoded up to its closing quote (or the end of
    ``s``), and the position after that quote (None when the string runs to the end)."""
    out: list[str] = []
    simple = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
              "t": "\t"}
    while i < len(s):
        ch = s[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            nxt = s[i + 1] if i + 1 < len(s) else ""
            if nxt in simple and nxt:
                out.append(simple[nxt])
                i += 2
                continue
            if nxt == "u" and i + 6 <= len(s):
                try:
                    out.append(chr(int(s[i + 2:i + 6], 16)))
                except ValueError:
                    break
                i += 6
                continue
            break
        out.append(ch)
        i += 1
    return "".join(out), None


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
