"""Gemini CLI chat recordings (``~/.gemini/tmp/<project hash>/chats/session-*.json[l]``), and
the API history its ``/chat save`` checkpoints and ``/chat share x.json`` exports hold.

Read from ``google-gemini/gemini-cli`` (mirror at 5411f113, 2026-08-21, version 0.56.0-nightly,
and its history): ``packages/core/src/services/chatRecordingService.ts`` and
``chatRecordingTypes.ts`` (the records), ``core/geminiChat.ts`` (``recordCompletedToolCalls``:
a tool call's ``result`` is the ``functionResponse`` parts sent to the model),
``utils/generateContentResponseUtilities.ts`` (``convertToFunctionResponse``: a tool's text is
``response.output``, a failure ``response.error``), ``scheduler/tool-executor.ts`` (shell and
MCP outputs cut to a threshold), ``utils/fileUtils.ts`` (``processSingleFileContent``,
``formatTruncatedToolOutput``) and the tools in ``packages/core/src/tools/``.

Files. Up to 0.38 (April 2026) one JSON document ``{sessionId, projectHash, startTime,
lastUpdated, messages: [...]}``; since 0.39 JSON lines: a metadata record, then message records
appended each time a message changes (the last version of a message wins, except that a tool
call keeps the first result recorded for it: a later ``<tool_output_masked>`` replacement is
not what the model was shown when it called), ``{"$set": {...}}`` metadata updates (a ``$set``
of ``messages`` rewrites the history after compression or masking; messages it drops were still
seen and stay) and ``{"$rewindTo": id}`` (the user rewound the conversation: the steps from there
on stay, with a read warning). The API history (``cli/ui/utils/historyExportUtils.ts``:
``JSON.stringify(history)``; ``core/logger.ts``: ``checkpoint-<tag>.json`` holding ``{history,
authType}``, a bare list before) is the list of ``Content`` sent to the model: a step is each
``functionCall`` part of a ``model`` turn, its result the ``functionResponse`` of the next ``user``
turn; it has no usage, and outputs masked before it was saved show nothing (an edit whose
result was masked was still made, unless the masked preview is of an error). Its first user turn
names the workspace directory. Paths on Windows (``C:\\...``, or relative with backslashes) are
read in forward-slash form. A recording does not name the project's root, but ``projectHash``
is the SHA-256 of its path: the directory among the paths the tools were given whose hash it
is, is the working directory, and paths under it are made relative to it.

Steps: each ``toolCalls`` entry of a ``gemini`` message; ``status: error`` or ``cancelled``, or a
``response.error``, shows nothing. What each tool's ``response.output`` shows:

- ``read_file`` (``file_path``, earlier ``absolute_path``): the file's lines without numbers;
  when only part was printed the output says so (``Status: Showing lines X-Y of Z total
  lines.``; before August 2025 ``[File content truncated: showing lines X-Y of Z total
  lines...]``), else the whole file was printed: line views either way. ``read_file`` splits
  the text on newlines (``fileUtils.ts``: ``content.split(/\r?\n/)``), so Z counts the empty
  string after a final newline, and a range reaching line Z prints it as an empty last line:
  not a line of the file. Appended project context
  (``--- Newly Discovered Project Context ---``) is not file text; ``Cannot display content of
  binary file`` and other binary notices show nothing;
- ``read_many_files``: one ``--- <path> ---`` section per file, the whole file (or, after a
  ``[WARNING: This file was truncated...]`` line, its first lines, counted);
- ``grep_search`` (``search_file_content`` before 2026): ``File: <path relative to the searched
  directory>`` then ``L<n>: text`` hits and ``L<n>- text`` context: line views; when the output
  was cut to the threshold (``... [N characters omitted] ...``), the hits after the cut whose
  ``File:`` line was cut away name no file that was shown and are not credited (a real session
  showed four such hits, which the file before the cut would otherwise have taken);
- ``glob``, ``list_directory``: listings, nothing credited;
- ``run_shell_command``: the ``Output:`` section (``Stdout:``/``Stderr:`` before September 2025)
  of ``Command:``/``Directory:``/``Error:``/``Exit Code:``/... lines, inside
  ``<untrusted_context>`` since June 2026, read by :func:`ctxeval.reading.shell.read_shell`;
  an output cut to the threshold (``Output too large. Showing first N and last M
  characters...``, ``... [K characters omitted] ...``) keeps its head and tail; a command moved
  to the background shows what it printed before;
- ``replace`` and ``write_file``: edits of ``file_path``; the ``Here is the updated code:``
  text that follows (a snippet around the change, or the whole file written) shows the file
  after the edit (a post-edit view);
- MCP tools, recognised by the ``displayName`` recorded with the call (``<tool> (<server> MCP
  Server)``), else by the name (``mcp_<server>_<tool>`` since March 2026, ``<server>__<tool>``
  when two servers' tools collided before): :func:`ctxeval.reading.mcp.read_call` with the
  text of the content blocks (``<untrusted_context>`` wrappers removed).

Usage is per ``gemini`` message (``tokens``): input tokens are ``input`` (the prompt, cached
tokens included) plus ``tool``; output tokens ``output`` plus ``thoughts``.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage, View
from ..mcp import McpRun, split_tool_name
from ..shell import read_shell
from . import ReadOptions
from ._sessions import (
    elided,
    first_record,
    infer_cwd,
    json_document,
    jsonl_objects,
    mark_views_after_edits,
    mcp_observe,
    numbered_views,
    relative_to,
)
from ._sessions import nonempty_str as _str
from ._sessions import relative_to_cwd as _rel

FORMAT = "gemini-cli"
PRIORITY = 30

_MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
#: The API history (``Content[]``) as ``/chat share x.json`` writes it, and as ``/chat save``
#: writes a checkpoint (``{"history": [...], "authType": ...}``; a bare list before).
_HISTORY_LIST = re.compile(rb'\A\s*\[\s*\{\s*"role"\s*:\s*"(?:user|model)"')
_HISTORY_DOC = re.compile(rb'\A\s*\{\s*"history"\s*:\s*\[\s*\{\s*"role"\s*:')
#: The working directories the first user message names (``getDirectoryContextString``): since
#: February 2026 ``- **Workspace Directories:**`` then ``  - <dir>`` lines; before, ``I'm
#: currently working in the directory: <dir>`` (or ``... the following directories:`` and a
#: list).
_WORKSPACE = re.compile(r"(?:- \*\*Workspace Directories:\*\*|I'm currently working in the "
                        r"following directories:)\n  - ([^\n]+)")
_WORKING_DIR = re.compile(r"I'm currently working in the directory: ([^\n]+)")
_WIN_ABS = re.compile(r"^[A-Za-z]:[\\/]")
_HASH_KEY = re.compile(rb'"projectHash"\s*:\s*"[0-9a-f]{64}"')
_SESSION_KEY = re.compile(rb'"sessionId"\s*:\s*"')
_READ = ("read_file",)
_GREP = ("grep_search", "search_file_content")
_LISTINGS = ("glob", "list_directory", "ls")
_SHELL = ("run_shell_command",)
_EDITS = ("replace", "write_file", "edit")
_NATIVE = frozenset((*_READ, "read_many_files", *_GREP, *_LISTINGS, *_SHELL, *_EDITS,
                     "google_web_search", "web_fetch", "write_todos", "save_memory",
                     "get_internal_docs", "activate_skill", "ask_user", "enter_plan_mode",
                     "exit_plan_mode", "update_topic", "complete_task", "read_mcp_resource",
                     "list_mcp_resources", "invoke_agent", "codebase_investigator"))
_MCP_DISPLAY = re.compile(r"^(?P<tool>.+) \((?P<server>.+) MCP Server\)$")
_MCP_PREFIXED = re.compile(r"^mcp_(?P<server>[^_]+)_(?P<tool>.+)$")
_JIT = "\n\n--- Newly Discovered Project Context ---\n"
_STATUS = re.compile(r"Status: Showing lines (\d+)-(\d+) of (\d+) total lines\.")
_OLD_STATUS = re.compile(
    r"^\[File content truncated: showing lines (\d+)-(\d+) of (\d+) total lines\.[^\n]*\]\n")
_OLD_PARTIAL = re.compile(r"^\[File content partially truncated: [^\n]*\]\n")
_CONTENT_MARK = "--- FILE CONTENT (truncated) ---\n"
_NOT_TEXT = ("Cannot display content of", "Binary content", "[SYSTEM: Binary content",
             "Could not read file")
_MANY_SEPARATOR = re.compile(r"^--- (?P<path>(?:[A-Za-z]:)?[/\\].*?|.*?/.*?) ---\n\n", re.M)
_MANY_END = "--- End of content ---"
_MANY_WARNING = ("[WARNING: This file was truncated. To view the full content, use the "
                 "'read_file' tool on this specific file.]\n\n")
_GREP_FILE = re.compile(r"^File: (.+)$")
_GREP_LINE = re.compile(r"^L(\d+)[:-] ")
_UNTRUSTED = re.compile(r"<untrusted_context>\n(.*?)\n</untrusted_context>", re.S)
_SHELL_CUT = re.compile(
    r"\AOutput too large\. Showing first [\d,.\s]+ and last [\d,.\s]+ characters\. "
    r"For full output see: [^\n]*\n")
_CHARS_OMITTED = re.compile(r"\n\n\.\.\. \[[\d,.\s]+ characters omitted\] \.\.\.\n\n")
_OMITTED_LINE = re.compile(r"^\.\.\. \[[\d,.\s]+ characters omitted\] \.\.\.$")
_TRAILER = re.compile(r"^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): ")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.M)
_BACKGROUND = re.compile(r"\ACommand (?:moved to background|is running in background)")
_CANCELLED = re.compile(r"\ACommand was (?:cancelled by user|automatically cancelled)[^\n]*?"
                        r"Below is the output before it was cancelled:\n")
_INITIAL = re.compile(r"\ACommand is running in background\. PID: \d+\. Initial output:\n")
_UPDATED_CODE = "Here is the updated code:"
_MASKED = "<tool_output_masked>"
#: A masked result keeps the head of ``JSON.stringify(response, null, 2)`` as its preview
#: (``context/toolOutputMaskingService.ts``): an edit refused has ``"error"`` as first key.
_MASKED_ERROR = re.compile(r'<tool_output_masked>\s*\{\s*"error"')


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return False
    if _HISTORY_LIST.match(head) or _HISTORY_DOC.match(head):
        return b'"parts"' in head
    stripped = head.lstrip()
    if not stripped.startswith(b"{"):
        return False
    obj = first_record(stripped)
    if isinstance(obj, dict):  # JSON lines: the metadata record comes first
        return isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"),
                                                                    str) \
            and obj.get("kind") != "subagent"
    # one JSON document (pretty-printed or not), or a first record longer than the head
    return bool(_SESSION_KEY.search(head[:4096]) and _HASH_KEY.search(head[:4096])
                and b'"kind": "subagent"' not in head[:4096]
                and b'"kind":"subagent"' not in head[:4096])


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    with path.open("rb") as fh:
        head = fh.read(4096)
    if _HISTORY_LIST.match(head) or _HISTORY_DOC.match(head):
        return [_read_history(path, options)]
    meta, messages, first_results, rewinds = _load(path)
    warnings: list[str] = []
    mcp = McpRun()
    if rewinds:
        warnings.append(f"the user rewound the conversation {rewinds} time(s); the steps "
                        "rewound stay (the agent had seen them)")
    calls = [(msg, tc) for msg in messages if msg.get("type") == "gemini"
             for tc in (msg.get("toolCalls") or []) if isinstance(tc, dict)]
    cwd = project_root(_str(meta.get("projectHash")),
                       [p for _, tc in calls for p in _paths_in(tc)],
                       meta.get("directories"))
    steps: list[Step] = []
    usage_parts: list[Usage | None] = []
    model: str | None = None
    for msg in messages:
        if msg.get("type") != "gemini":
            continue
        model = _str(msg.get("model")) or model
        u = _usage(msg.get("tokens"))
        usage_parts.append(u)
        for k, tc in enumerate(msg.get("toolCalls") or []):
            if not isinstance(tc, dict):
                continue
            cid = _str(tc.get("id"))
            result = first_results.get(cid) if cid else None
            if result is None:
                result = tc.get("result")
            step = call_step(_str(tc.get("name")) or "?", _args(tc.get("args")), len(steps),
                             cwd, _str(tc.get("displayName")))
            if k == 0:
                step.usage = u
            steps.append(step)
            text, failed = result_text(result)
            if tc.get("status") in ("error", "cancelled"):
                failed = True
            observe(step, _args(tc.get("args")), text or "", failed, cwd, warnings,
                    _str(tc.get("displayName")), mcp)
    if not messages and not meta:
        raise AdapterError("empty chat recording", path=str(path))
    usage = Usage.total(usage_parts)
    if usage is not None:
        usage.api_calls = sum(1 for u in usage_parts if u is not None) or None
    mark_views_after_edits(steps)
    warnings[:0] = mcp.finish()
    extra: dict[str, Any] = {}
    if cwd:
        extra["cwd"] = cwd
    if isinstance(meta.get("sessionId"), str):
        extra["session_id"] = meta["sessionId"]
    if warnings:
        extra["read_warnings"] = warnings
    return [Trajectory(instance_id=options.instance_id or path.stem, steps=steps,
                       run=options.run, agent="gemini-cli", model=model, usage=usage,
                       source=str(path), extra=extra)]


# --- the API history: /chat save checkpoints and /chat share JSON --------------------------------


def _read_history(path: Path, options: ReadOptions) -> Trajectory:
    """Steps of a ``Content[]`` history: each ``functionCall`` part of a ``model`` turn, its
    result the ``functionResponse`` part of the next ``user`` turn with the same ``id``, else the
    first one not yet taken with the same ``name`` (the calls recorded in the history carry no
    id). The history is the conversation as sent to the model when it was saved: outputs masked
    by then (``<tool_output_masked>``) show nothing, as in the recordings."""
    doc = json_document(path)
    raw = doc.get("history") if isinstance(doc, dict) else doc
    if not isinstance(raw, list):
        raise AdapterError("a Gemini CLI history is a list of Content objects",
                           path=str(path), field="history")
    history = [c for c in raw if isinstance(c, dict)]
    cwd = workspace_dir(history)
    warnings: list[str] = []
    mcp = McpRun()
    steps: list[Step] = []
    for k, content in enumerate(history):
        if content.get("role") != "model":
            continue
        calls = [p["functionCall"] for p in _parts(content)
                 if isinstance(p.get("functionCall"), dict)]
        if not calls:
            continue
        nxt = history[k + 1] if k + 1 < len(history) else {}
        responses = [p for p in _parts(nxt) if isinstance(p.get("functionResponse"), dict)] \
            if nxt.get("role") == "user" else []
        taken: set[int] = set()
        for call in calls:
            name = _str(call.get("name")) or "?"
            args = _args(call.get("args"))
            part = _response_for(call, name, responses, taken)
            step = call_step(name, args, len(steps), cwd)
            steps.append(step)
            if part is None:
                warnings.append(f"step {step.index} ({step.tool}): no response recorded")
                text, failed = None, True
            else:
                text, failed = result_text([part])
            observe(step, args, text or "", failed, cwd, warnings, mcp=mcp)
    if cwd is None and (cwd := infer_cwd(steps)) is not None:
        relative_to(steps, cwd)
    mark_views_after_edits(steps)
    warnings[:0] = mcp.finish()
    extra: dict[str, Any] = {}
    if cwd:
        extra["cwd"] = cwd
    if warnings:
        extra["read_warnings"] = warnings
    return Trajectory(instance_id=options.instance_id or path.stem, steps=steps,
                      run=options.run, agent="gemini-cli", model=None, usage=None,
                      source=str(path), extra=extra)


def _parts(content: Any) -> list[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _response_for(call: dict[str, Any], name: str, responses: list[dict[str, Any]],
                  taken: set[int]) -> dict[str, Any] | None:
    cid = _str(call.get("id"))
    for by_id in (True, False):
        for i, part in enumerate(responses):
            fr = part["functionResponse"]
            if i in taken or (by_id and (not cid or fr.get("id") != cid)) or \
                    (not by_id and fr.get("name") != name):
                continue
            taken.add(i)
            return part
    return None


def workspace_dir(history: list[dict[str, Any]]) -> str | None:
    """The (first) workspace directory the first user turn names, in POSIX form."""
    for content in history[:3]:
        if content.get("role") != "user":
            continue
        for part in _parts(content):
            text = part.get("text")
            if not isinstance(text, str):
                continue
            m = _WORKSPACE.search(text) or _WORKING_DIR.search(text)
            if m:
                return _posix(m.group(1).strip())
    return None


def _posix(p: str) -> str:
    """A path in POSIX form: a Windows path (``C:\\x\\y``, or relative with backslashes only)
    with forward slashes, so that one comparison serves both."""
    if _WIN_ABS.match(p) or ("\\" in p and "/" not in p):
        p = p.replace("\\", "/")
    return posixpath.normpath(p)


def _is_abs(p: str) -> bool:
    return p.startswith("/") or bool(_WIN_ABS.match(p))


# --- the recording --------------------------------------------------------------------------------


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], int]:
    """Metadata, messages in recorded order, the first result recorded for each tool call id,
    and how many rewinds the file records."""
    text = _read_text(path)
    first_line = text.lstrip().split("\n", 1)[0]
    try:
        whole = json.loads(text) if not _is_jsonl(first_line) else None
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):  # up to 0.38: one document
        msgs = whole.get("messages")
        if not isinstance(msgs, list):
            raise AdapterError("missing list 'messages'", path=str(path), field="messages")
        messages = [m for m in msgs if isinstance(m, dict)]
        meta = {k: v for k, v in whole.items() if k != "messages"}
        return meta, messages, _first_results(messages), 0
    if whole is not None or not _is_jsonl(first_line):
        json_document(path)  # raises the error naming the file and line
        raise AdapterError("a Gemini CLI chat recording is a JSON object or JSON lines",
                           path=str(path))
    meta: dict[str, Any] = {}
    order: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    first: dict[str, Any] = {}
    rewinds = 0
    for lineno, rec in jsonl_objects(path, text):
        if isinstance(rec.get("$rewindTo"), str):
            rewinds += 1
        elif isinstance(rec.get("$set"), dict):
            upd = rec["$set"]
            for m in upd.get("messages") or [] if isinstance(upd.get("messages"), list) else []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    _take(m, order, latest, first)
            meta.update({k: v for k, v in upd.items() if k != "messages"})
        elif rec.get("type") == "message_update" and isinstance(rec.get("id"), str):
            base = latest.get(rec["id"])
            if base is not None:
                merged = {**base, **{k: v for k, v in rec.items() if k not in ("type", "id")}}
                _take(merged, order, latest, first)
        elif isinstance(rec.get("id"), str) and rec.get("type") in _MESSAGE_TYPES:
            _take(rec, order, latest, first)
        elif isinstance(rec.get("sessionId"), str):
            if "messages" in rec and not isinstance(rec["messages"], list):
                raise AdapterError("'messages' must be a list", path=str(path), line=lineno,
                                   field="messages")
            meta.update({k: v for k, v in rec.items() if k != "messages"})
            for m in rec.get("messages") or [] if isinstance(rec.get("messages"), list) else []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    _take(m, order, latest, first)
    return meta, [latest[i] for i in order], first, rewinds


def _is_jsonl(first_line: str) -> bool:
    try:
        obj = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc


def _take(msg: dict[str, Any], order: list[str], latest: dict[str, dict[str, Any]],
          first: dict[str, Any]) -> None:
    mid = msg["id"]
    if mid not in latest:
        order.append(mid)
    latest[mid] = msg
    for cid, result in _first_results([msg]).items():
        first.setdefault(cid, result)


def _first_results(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The result recorded for each tool call id: a toolCalls entry's, else (newer versions)
    a later user message's ``functionResponse`` part with that id; masked copies are not
    taken."""
    out: dict[str, Any] = {}
    for msg in messages:
        for tc in msg.get("toolCalls") or [] if isinstance(msg.get("toolCalls"), list) else []:
            if isinstance(tc, dict) and isinstance(tc.get("id"), str) and tc.get("result"):
                text, _failed = result_text(tc["result"])
                if text is None or _MASKED not in text:
                    out.setdefault(tc["id"], tc["result"])
        content = msg.get("content")
        if msg.get("type") == "user" and isinstance(content, list):
            for part in content:
                fr = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(fr, dict) and isinstance(fr.get("id"), str):
                    text, _failed = result_text([part])
                    if text is None or _MASKED not in text:
                        out.setdefault(fr["id"], [part])
    return out


def result_text(result: Any) -> tuple[str | None, bool]:
    """The text a tool call's result showed the model (its ``functionResponse``'s ``output``,
    or, when the response passed an MCP result through, the text of its content blocks), and
    whether it reported a failure."""
    parts = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    for part in parts:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(fr, dict):
            continue
        resp = fr.get("response") if isinstance(fr.get("response"), dict) else {}
        if resp.get("error") is not None and "output" not in resp:
            return None, True
        out = resp.get("output")
        if isinstance(out, str):
            return out, False
        content = resp.get("content")
        if isinstance(content, list):  # an MCP response passed through (mid-2025)
            return "\n".join(b["text"] for b in content if isinstance(b, dict)
                             and b.get("type") == "text" and isinstance(b.get("text"), str)), \
                resp.get("isError") is True
        return "", False
    return None, False


def project_root(project_hash: str | None, paths: list[str], directories: Any = None
                 ) -> str | None:
    """The directory, among the ancestors of the absolute ``paths`` (and the recorded workspace
    ``directories``), whose SHA-256 is ``project_hash`` (Gemini CLI's ``getProjectHash``)."""
    if not project_hash:
        return None
    candidates: list[str] = []
    if isinstance(directories, list):
        candidates.extend(d for d in directories if isinstance(d, str))
    for p in paths:
        if not p.startswith("/"):
            continue
        d = p.rstrip("/")
        while d:
            candidates.append(d)
            d = d.rsplit("/", 1)[0]
        candidates.append("/")
    candidates.extend(("/testbed", "/app", "/workspace", "/repo"))
    for c in dict.fromkeys(candidates):
        if hashlib.sha256(c.encode("utf-8")).hexdigest() == project_hash:
            return c
    return None


def _paths_in(tc: dict[str, Any]) -> list[str]:
    args = _args(tc.get("args"))
    out = [v for k in ("file_path", "absolute_path", "path", "dir_path", "directory")
           if isinstance(v := args.get(k), str)]
    for k in ("paths", "include"):
        if isinstance(args.get(k), list):
            out.extend(x for x in args[k] if isinstance(x, str))
    return out


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = json.loads(raw)
        except json.JSONDecodeError:
            return {}
        return v if isinstance(v, dict) else {}
    return {}


def _usage(t: Any) -> Usage | None:
    if not isinstance(t, dict):
        return None

    def num(k: str) -> int:
        v = t.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    if not any(isinstance(t.get(k), int) for k in ("input", "output")):
        return None
    return Usage(num("input") + num("tool"), num("output") + num("thoughts"))


# --- one tool call --------------------------------------------------------------------------------


def mcp_name(name: str, display_name: str | None = None) -> tuple[str, str] | None:
    """``(server, tool)`` of an MCP call (module docstring); None for a native tool."""
    if display_name and (m := _MCP_DISPLAY.match(display_name)):
        return m.group("server"), m.group("tool")
    if name in _NATIVE:
        return None
    if (m := _MCP_PREFIXED.match(name)):
        return m.group("server"), m.group("tool")
    if name.startswith("mcp__"):
        return split_tool_name(name)
    if "__" in name.strip("_"):
        server, _, tool = name.partition("__")
        return server, tool
    return None


def call_step(name: str, args: dict[str, Any], index: int, cwd: str | None,
              display_name: str | None = None) -> Step:
    """The step of one tool call, before its result is known (edit tools name their file).
    Shared with the ATIF reader."""
    mcp = mcp_name(name, display_name)
    tool = f"mcp__{mcp[0]}__{mcp[1]}" if mcp else name
    if name in _SHELL and isinstance(args.get("command"), str):
        action = args["command"]
    else:
        shown = {k: v for k, v in args.items() if k not in ("content", "old_string",
                                                           "new_string")}
        action = f"{tool} {json.dumps(shown, ensure_ascii=False, sort_keys=True, default=str)}"
    step = Step(index=index, tool=tool, action=action)
    if name in _EDITS and mcp is None:
        f = _file(args, cwd)
        if f:
            step.edits = [f]
    return step


def observe(step: Step, args: dict[str, Any], text: str, failed: bool, cwd: str | None,
            warnings: list[str], display_name: str | None = None,
            mcp: McpRun | None = None) -> None:
    """Views (and edit outcome) of one call from the text its result showed the model."""
    name = step.tool or ""
    if _MASKED in text:
        warnings.append(f"step {step.index} ({name}): only a masked copy of the result was "
                        "recorded; nothing credited")
        if name in _EDITS and not _MASKED_ERROR.search(text):
            return  # masked later: the edit was made (its preview is no error), shown nothing
        failed = True
    names = mcp_name(name, display_name) if not name.startswith("mcp__") else \
        split_tool_name(name)
    if names is not None:
        mcp_observe(step, names[0], names[1], args, _unwrap(text), is_error=failed, cwd=cwd,
                    warnings=warnings, run=mcp)
        return
    if failed:
        if name in _EDITS:
            step.edits = []  # the edit was refused
        return
    if name in _READ:
        f = _file(args, cwd)
        if f:
            step.views = read_file_views(f, text)
    elif name == "read_many_files":
        step.views = read_many_files_views(text, cwd)
    elif name in _GREP:
        step.views = grep_views(text, _search_dir(args, cwd))
    elif name in _SHELL:
        _observe_shell(step, args, text, cwd)
    elif name in ("replace", "write_file") and step.edits and _UPDATED_CODE in text:
        step.views = [View(step.edits[0], None, None, post_edit=True)]


def _file(args: dict[str, Any], cwd: str | None) -> str | None:
    p = _str(args.get("file_path")) or _str(args.get("absolute_path")) or _str(args.get("path"))
    return _rel(_posix(p), cwd) if p else None


def read_file_views(f: str, text: str) -> list[View]:
    """The lines ``read_file`` printed of ``f`` (module docstring)."""
    text = text.split(_JIT, 1)[0]
    if not text or text.startswith(_NOT_TEXT):
        return []
    m = _STATUS.search(text)
    if m and _CONTENT_MARK in text:
        body = text.split(_CONTENT_MARK, 1)[1]
        return _range(f, *(int(g) for g in m.groups()), body)
    if (m := _OLD_STATUS.match(text)):
        return _range(f, *(int(g) for g in m.groups()), text[m.end():])
    return [View(f, 1, None)]


def _range(f: str, start: int, end: int, total: int, body: str) -> list[View]:
    printed = body.split("\n")
    end = min(end, start + len(printed) - 1)
    if end == total and printed[end - start] == "":
        # read_file splits the text on newlines: the empty string after a final newline is
        # counted in the total and printed as the last line; it is not a line of the file
        end -= 1
    return [View(f, start, end)] if start >= 1 and end >= start else []


def read_many_files_views(text: str, cwd: str | None) -> list[View]:
    text = text.split(_JIT, 1)[0]
    seps = [m for m in _MANY_SEPARATOR.finditer(text)
            if m.group("path") not in (_MANY_END.strip("- "),)]
    views: list[View] = []
    for k, m in enumerate(seps):
        last = k + 1 == len(seps)
        end = text.find(_MANY_END, m.end()) if last else seps[k + 1].start()
        body = text[m.end(): end if end >= 0 else len(text)]
        # each section ends "\n\n", sections are joined with "\n", the end mark starts "\n"
        tail = "\n\n\n\n" if last and end >= 0 else "\n\n\n"
        body = body[:-len(tail)] if body.endswith(tail) else body.rstrip("\n")
        f = _rel(_posix(m.group("path")), cwd) or m.group("path")
        if body.startswith(_MANY_WARNING):
            body = body[len(_MANY_WARNING):]
            views.append(View(f, 1, len(body.split("\n"))))
        else:
            views.append(View(f, 1, None))
    return views


def grep_views(text: str, search_dir: str | None) -> list[View]:
    hits: dict[str, list[int]] = {}
    current: str | None = None
    for line in text.split("\n"):
        if (m := _GREP_FILE.match(line)):
            rel = _posix(m.group(1))
            current = posixpath.normpath(posixpath.join(search_dir, rel)) \
                if search_dir and not _is_abs(rel) else rel
            hits.setdefault(current, [])
        elif current is not None and (n := _GREP_LINE.match(line)):
            hits[current].append(int(n.group(1)))
        elif line == "---" or _OMITTED_LINE.match(line):
            # after the threshold's cut the hits are of a file whose "File:" line was cut
            current = None
    return [v for f, nums in hits.items() for v in numbered_views(f, nums)]


def _search_dir(args: dict[str, Any], cwd: str | None) -> str | None:
    d = _str(args.get("dir_path")) or _str(args.get("path"))
    if not d or d == ".":
        return None
    d = _posix(d)
    rel = _rel(d, cwd) if _is_abs(d) else d
    return None if rel in (cwd, ".") else rel


# --- run_shell_command --------------------------------------------------------------------------


def _observe_shell(step: Step, args: dict[str, Any], text: str, cwd: str | None) -> None:
    output, code, cut = shell_output(text)
    if output is None:
        return
    workdir = _str(args.get("dir_path")) or _str(args.get("directory"))
    if workdir and not workdir.startswith("/") and cwd:
        workdir = posixpath.join(cwd, workdir)
    reading = read_shell(_str(args.get("command")) or "", output, cwd=workdir or cwd,
                         returncode=code, truncated=cut)
    step.views = [replace(v, file=_rel(v.file, cwd) or v.file) for v in reading.views]
    step.edits = list(dict.fromkeys([*step.edits, *(_rel(e, cwd) or e for e in reading.edits)]))


def shell_output(text: str) -> tuple[str | None, int | None, bool]:
    """``(printed text, exit code, stopped early)`` of a ``run_shell_command`` result; the text
    is None when the command printed nothing the model saw (moved to the background)."""
    head_cut = _SHELL_CUT.match(text)
    if head_cut:  # the whole result was cut to the threshold, head and tail kept
        rest = text[head_cut.end():]
        mid = _CHARS_OMITTED.search(rest)
        if mid is not None:
            head, _hc, _h = _sections(_strip_wrapper(rest[:mid.start()], head=True))
            tail_text = _strip_wrapper(rest[mid.end():], head=False)
            tail, code = _trailer(tail_text)
            return elided(head or "", tail), code, False
    text = _strip_wrapper(text, head=True)
    text = _strip_wrapper(text, head=False)
    if _BACKGROUND.match(text) and not _INITIAL.match(text):
        return None, None, False
    if (m := _INITIAL.match(text)) or (m := _CANCELLED.match(text)):
        return text[m.end():], None, True
    body, code, _has = _sections(text)
    return body, code, False


def _strip_wrapper(text: str, *, head: bool) -> str:
    """``text`` without the ``<untrusted_context>`` line that opens (``head``) or closes it."""
    if head and text.startswith("<untrusted_context>\n"):
        text = text[len("<untrusted_context>\n"):]
    if not head and text.endswith("\n</untrusted_context>"):
        text = text[:-len("\n</untrusted_context>")]
    return text.replace("&lt;/untrusted_context&gt;", "</untrusted_context>")


def _sections(text: str) -> tuple[str | None, int | None, bool]:
    """The printed text of a result in any of its layouts, its exit code, whether it had one."""
    lines = text.split("\n")
    k = 0
    while k < len(lines) and (lines[k].startswith("Command: ")
                              or lines[k].startswith("Directory: ")):
        k += 1
    rest = "\n".join(lines[k:])
    if rest.startswith("Stdout: "):  # before September 2025
        body, code = _trailer(rest[len("Stdout: "):])
        out, sep, err = body.rpartition("\nStderr: ")
        if not sep:
            out, err = body, ""
        parts = [x for x in (out, err) if x != "(empty)" and x]
        return "\n".join(parts), code, True
    if rest.startswith("Output: "):
        body, code = _trailer(rest[len("Output: "):])
        return ("" if body == "(empty)" else body), code, True
    return rest, None, False


def _trailer(text: str) -> tuple[str, int | None]:
    """``text`` without the ``Error:``/``Exit Code:``/``Signal:``/``Background PIDs:``/``Process
    Group PGID:`` lines that end it, and the exit code they give."""
    lines = text.split("\n")
    end = len(lines)
    while end > 0 and _TRAILER.match(lines[end - 1]):
        end -= 1
    trailer = "\n".join(lines[end:])
    m = _EXIT_CODE.search(trailer)
    code = int(m.group(1)) if m else (0 if trailer else None)
    return "\n".join(lines[:end]), code


def _unwrap(text: str) -> str:
    """MCP text blocks without the ``<untrusted_context>`` wrapper each one is shown in."""
    return _UNTRUSTED.sub(lambda m: m.group(1), text).replace("&lt;/untrusted_context&gt;",
                                                             "</untrusted_context>")
