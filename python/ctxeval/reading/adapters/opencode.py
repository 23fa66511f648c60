"""OpenCode sessions: ``opencode export`` documents, ``opencode run --format json`` event streams,
the JSON storage tree (before 1.2) and the SQLite database ``opencode.db`` (1.2 on).

Read from ``anomalyco/opencode`` (formerly ``sst/opencode``) as stored in the search index, file
by file: ``packages/opencode/src/session/message-v2.ts`` (messages and parts: ``ToolPart`` with
``state {status, input, output, error, metadata, time}``, ``StepFinishPart`` with ``tokens`` and
``cost``; ``toModelMessages``: a completed tool shows the model its ``state.output``, a failed
one its ``state.error``, an interrupted one the output it had), ``session/session.sql.ts``
(tables ``session``, ``message``, ``part``, each row's ``data`` the JSON of the object without
its ids), ``tool/read.ts``, ``tool/grep.ts``, ``tool/bash.ts``, ``tool/truncation.ts``,
``mcp/index.ts`` (MCP tools named ``<server>_<tool>``, each part of the name sanitised to
``[a-zA-Z0-9_-]``), ``session/prompt.ts`` (an MCP result's text blocks and embedded resources
joined with blank lines); and Harbor's ``agents/installed/opencode.py`` for the event stream.

Steps: every ``tool`` part of an assistant message, in order. What each shows:

- ``read``: numbered lines between ``<file>`` and ``</file>`` (``00042| text``, 2025) or in
  ``<content>`` (``42: text``, 2026), up to the closing note (``(End of file - total N
  lines)``, ``(File has more lines...)``, ``(Showing lines...)``); what follows the block
  (instructions OpenCode attaches, ``<system-reminder>``) is not the file's. Until early 2026
  ``read`` split the file's text on ``"\n"`` (``read.ts``: ``text.split("\n")``), so a read
  reaching the end of a file that ends with a newline printed one more, empty, line numbered
  past the file's last (``00745| `` then ``(End of file - total 745 lines)`` for a file of
  744 lines; every such read in the real sessions measured): that printed empty last line
  before ``(End of file`` is not a line of the file. (Some ``00042|`` versions read lines
  with ``readline``, without that extra line; there a file's real empty last line is lost,
  one line.) The ``42:`` versions read with ``readline`` and print no such line. A directory
  read (``<type>directory</type>``) is a listing; an image or PDF read shows no line;
- ``grep``: ``<path>:`` then ``  Line N: text`` hits: line views;
- ``glob``, ``list``/``ls``: listings, nothing credited;
- ``bash``: :func:`ctxeval.reading.shell.read_shell` on the output, its exit code
  ``metadata.exit``. OpenCode's notes are not printed text: ``<bash_metadata>`` blocks and the
  older ``(Command timed out ...)``, ``(Output was truncated due to length limit)`` lines (the
  output stopped early), the truncation hint ``...N lines truncated...`` / ``...N bytes
  truncated...`` with ``Full output saved to`` (the head kept, or, when the hint comes first,
  the tail; either way whole lines);
- ``edit``, ``multiedit``, ``write``, ``patch``/``apply_patch`` (``*** Update File:`` lines):
  edits; a later view of the file is after the edit;
- ``task`` runs a subagent in a child session: in the storage tree and the database the child's
  steps follow the step that started it (``Step.subagent`` naming the child session);
- MCP tools (any other name with an underscore): :func:`ctxeval.reading.mcp.read_call`, the
  server the part before the first ``_`` (OpenCode joins the two sanitised names with one
  underscore, so a server name holding one is split wrongly; recorded in the read warnings);
- a failed call (``state.status == "error"``) shows nothing, except a command the user
  interrupted, whose output so far the model saw (``metadata.interrupted``).

Usage: each ``step-finish`` part is one model call: its tokens (``input`` plus ``cache.read``
and ``cache.write``; ``output`` plus ``reasoning``) and ``cost`` go to the first tool step of
that model call; messages without step parts are charged their own ``tokens``. The working
directory is the assistant message's ``path.cwd``, else the session's ``directory``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage, View
from ..mcp import McpRun
from ..shell import read_shell
from . import ReadOptions
from ._sessions import (
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
from .codex import _patch_files

FORMAT = "opencode"
PRIORITY = 30

_EVENTS = ("step_start", "step_finish", "text", "reasoning", "tool_use", "error", "user")
_SES_ID = re.compile(rb'"id"\s*:\s*"ses_[0-9A-Za-z]+"')
_SQLITE = b"SQLite format 3\x00"
_READ = ("read", "view")
_GREP = ("grep",)
_LISTINGS = ("glob", "list", "ls")
_SHELL = ("bash",)
_EDITS = ("edit", "multiedit", "write")
_PATCHES = ("patch", "apply_patch")
_NATIVE = frozenset((*_READ, *_GREP, *_LISTINGS, *_SHELL, *_EDITS, *_PATCHES, "task", "batch",
                     "todowrite", "todoread", "webfetch", "websearch", "codesearch",
                     "question", "skill", "invalid", "plan_enter", "plan_exit", "lsp",
                     "lsp_diagnostics", "lsp_hover"))
_OLD_LINE = re.compile(r"^(\d{5,})\| ")
_NEW_LINE = re.compile(r"^(\d+): ")
_READ_END = ("(End of file", "(File has more lines", "(Showing lines", "(Output capped",
             "(Output truncated")
_GREP_HIT = re.compile(r"^  Line (\d+): ")
_GREP_FILE = re.compile(r"^(\S.*):$")
_BASH_META = re.compile(r"\n*<bash_metadata>\n(.*?)\n</bash_metadata>\s*\Z", re.S)
_OLD_NOTES = re.compile(r"(?:\n\n\((?:Output was truncated due to length limit|Command timed "
                        r"out after \d+ ms|Command was aborted)\))+\s*\Z")
#: OpenCode's truncation: ``...N lines truncated...`` then a hint of non-blank lines (``The tool
#: call succeeded but the output was truncated. Full output saved to: ...``) after the kept head,
#: or before the kept tail (``...output truncated...`` and ``Full output saved to:`` in 2026).
_HEAD_CUT = re.compile(r"\n\n\.\.\.\d+ (?:lines|bytes|chars) truncated\.\.\.\n\n"
                       r"[^\n]+(?:\n[^\n]+)*\Z")
_TAIL_CUT = re.compile(r"\A\.\.\.(?:\d+ (?:lines|bytes|chars) truncated|output truncated)\.\.\.\n\n"
                       r"[^\n]+(?:\n[^\n]+)*\n\n")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return _storage_root(path) is not None or (path / "opencode.db").is_file()
    if head.startswith(_SQLITE):
        return all(t in head for t in (b"message", b"part", b"session")) \
            and path.suffix == ".db"
    stripped = head.lstrip()
    if not stripped.startswith(b"{"):
        return False
    obj = first_record(stripped)
    if isinstance(obj, dict) and obj.get("type") in _EVENTS:
        return isinstance(obj.get("sessionID"), str)
    # an export document: {"info": {"id": "ses_..."}, "messages": [{"info", "parts"}]}
    return bool(_SES_ID.search(head[:4096])) and b'"messages"' in head \
        and b'"parts"' in head and b'"sessionID"' in head


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    sessions = _sessions_of(path)
    roots = [s for s in sessions.values() if not s.parent or s.parent not in sessions]
    if not roots:
        raise AdapterError("no OpenCode session found", path=str(path))
    single = len(roots) == 1
    return [_trajectory(s, sessions, path, options, single) for s in roots]


# --- sessions from each kind of input -----------------------------------------------------------


@dataclass(slots=True)
class _Session:
    id: str
    info: dict[str, Any]
    messages: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)

    @property
    def parent(self) -> str | None:
        return _str(self.info.get("parentID"))


def _sessions_of(path: Path) -> dict[str, _Session]:
    if path.is_dir():
        db = path / "opencode.db"
        root = _storage_root(path)
        if root is None and db.is_file():
            return _from_db(db)
        assert root is not None
        return _from_storage(root)
    with path.open("rb") as fh:
        magic = fh.read(16)
    if magic.startswith(_SQLITE):
        return _from_db(path)
    text = _read_text(path)
    first = text.lstrip().split("\n", 1)[0]
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict) and obj.get("type") in _EVENTS:
        return _from_events(path, text)
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise AdapterError("an OpenCode export is an object with a list 'messages'",
                           path=str(path), field="messages")
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    sid = _str(info.get("id")) or path.stem
    s = _Session(sid, info)
    for k, m in enumerate(doc["messages"]):
        if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
            raise AdapterError("a message needs an object 'info'", path=str(path),
                               field=f"messages[{k}].info")
        parts = m.get("parts") if isinstance(m.get("parts"), list) else []
        s.messages.append((m["info"], [p for p in parts if isinstance(p, dict)]))
    return {sid: s}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc


def _from_events(path: Path, text: str) -> dict[str, _Session]:
    """``opencode run --format json``: each event carries its part; a message is the run of
    parts with the same ``messageID``."""
    sessions: dict[str, _Session] = {}
    by_msg: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for lineno, ev in jsonl_objects(path, text):
        part = ev.get("part")
        sid = _str(ev.get("sessionID"))
        if not sid or not isinstance(part, dict):
            if ev.get("type") in ("step_start", "step_finish", "text", "reasoning", "tool_use"):
                raise AdapterError("an event needs 'sessionID' and an object 'part'",
                                   path=str(path), line=lineno, field="part")
            continue
        s = sessions.setdefault(sid, _Session(sid, {"id": sid}))
        mid = _str(part.get("messageID")) or f"line{lineno}"
        if mid not in by_msg:
            by_msg[mid] = ({"id": mid, "role": "assistant"}, [])
            s.messages.append(by_msg[mid])
        by_msg[mid][1].append(part)
    return sessions


def _storage_root(path: Path) -> Path | None:
    for root in (path, path / "storage"):
        if (root / "session").is_dir() and (root / "message").is_dir() \
                and (root / "part").is_dir():
            return root
    return None


def _load_json(f: Path) -> dict[str, Any] | None:
    try:
        v = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError):
        return None
    return v if isinstance(v, dict) else None


def _from_storage(root: Path) -> dict[str, _Session]:
    """``storage/session/<project>/<session>.json``, ``storage/message/<session>/<msg>.json``,
    ``storage/part/<msg>/<part>.json`` (ids sort in creation order)."""
    sessions: dict[str, _Session] = {}
    for f in sorted((root / "session").rglob("*.json")):
        info = _load_json(f)
        if info and isinstance(info.get("id"), str):
            sessions[info["id"]] = _Session(info["id"], info)
    for sid, s in sessions.items():
        for mf in sorted((root / "message" / sid).glob("*.json")):
            info = _load_json(mf)
            if not info:
                continue
            mid = _str(info.get("id")) or mf.stem
            pdir = root / "part" / mid
            if not pdir.is_dir():
                pdir = root / "part" / sid / mid
            parts = [p for pf in sorted(pdir.glob("*.json")) if (p := _load_json(pf))]
            s.messages.append((info, parts))
    return sessions


def _from_db(db: Path) -> dict[str, _Session]:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise AdapterError(f"cannot open the database: {exc}", path=str(db)) from exc
    try:
        con.row_factory = sqlite3.Row
        sessions: dict[str, _Session] = {}
        for row in con.execute("SELECT * FROM session"):
            r = dict(row)
            info = {"id": r["id"], "parentID": r.get("parent_id"),
                    "directory": r.get("directory"), "title": r.get("title"),
                    "version": r.get("version")}
            sessions[r["id"]] = _Session(r["id"], info)
        parts: dict[str, list[dict[str, Any]]] = {}
        for row in con.execute("SELECT id, message_id, data FROM part ORDER BY message_id, id"):
            data = _json_row(row["data"])
            if data is not None:
                parts.setdefault(row["message_id"], []).append(
                    {**data, "id": row["id"], "messageID": row["message_id"]})
        for row in con.execute("SELECT id, session_id, data FROM message "
                               "ORDER BY session_id, time_created, id"):
            data = _json_row(row["data"])
            s = sessions.get(row["session_id"])
            if data is None or s is None:
                continue
            s.messages.append(({**data, "id": row["id"]}, parts.get(row["id"], [])))
    except sqlite3.Error as exc:
        raise AdapterError(f"not an OpenCode database ({exc})", path=str(db)) from exc
    finally:
        con.close()
    return sessions


def _json_row(raw: Any) -> dict[str, Any] | None:
    try:
        v = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


# --- one session --------------------------------------------------------------------------------


def _trajectory(s: _Session, sessions: dict[str, _Session], path: Path, options: ReadOptions,
                single: bool) -> Trajectory:
    warnings: list[str] = []
    children: dict[str, list[_Session]] = {}
    for other in sessions.values():
        if other.parent:
            children.setdefault(other.parent, []).append(other)
    mcp = McpRun()
    steps, usage, model, cwd = _steps(s, children, warnings, 0, mcp)
    for k, st in enumerate(steps):
        st.index = k
    if cwd is None:  # an event stream keeps no working directory
        cwd = infer_cwd(steps)
        if cwd is not None:
            warnings.append(f"working directory {cwd!r} inferred from absolute and relative "
                            "paths naming the same files")
            relative_to(steps, cwd)
    mark_views_after_edits(steps)
    warnings[:0] = mcp.finish()
    extra: dict[str, Any] = {"session_id": s.id}
    if cwd:
        extra["cwd"] = cwd
    if isinstance(s.info.get("version"), str):
        extra["agent_version"] = s.info["version"]
    if warnings:
        extra["read_warnings"] = list(dict.fromkeys(warnings))
    if not single:
        iid = s.id  # a store of many sessions: each is named by its id
    elif options.instance_id:
        iid = options.instance_id
    else:
        iid = path.stem if path.is_file() and path.suffix != ".db" else s.id
    return Trajectory(instance_id=iid, steps=steps, run=options.run, agent="opencode",
                      model=model, usage=usage, source=str(path), extra=extra)


def _steps(s: _Session, children: dict[str, list[_Session]], warnings: list[str], depth: int,
           mcp: McpRun) -> tuple[list[Step], Usage | None, str | None, str | None]:
    steps: list[Step] = []
    parts_usage: list[Usage | None] = []
    model: str | None = None
    cwd = _str(s.info.get("directory"))
    used_children: set[str] = set()
    for info, parts in s.messages:
        if info.get("role") != "assistant":
            continue
        path = info.get("path") if isinstance(info.get("path"), dict) else {}
        cwd = _str(path.get("cwd")) or _str(path.get("root")) or cwd
        model = _str(info.get("modelID")) or model
        pending: list[Step] = []  # the tool steps of the current model call
        own: list[Step] = []  # the message's own tool steps
        charged = False
        for part in parts:
            t = part.get("type")
            if t == "step-start":
                pending = []
            elif t == "step-finish":
                u = _usage(part.get("tokens"), part.get("cost"))
                parts_usage.append(u)
                charged = True
                if pending and u is not None:
                    pending[0].usage = u
                pending = []
            elif t == "tool":
                step = call_step(_str(part.get("tool")) or "?", _input(part), len(steps), cwd)
                state = part.get("state") if isinstance(part.get("state"), dict) else {}
                observe(step, state, cwd, warnings, mcp)
                steps.append(step)
                pending.append(step)
                own.append(step)
                child = _child_of(step, state, children.get(s.id, []), used_children)
                if child is not None and depth < 8:
                    used_children.add(child.id)
                    sub, sub_usage, _m, _c = _steps(child, children, warnings, depth + 1, mcp)
                    for x in sub:
                        x.subagent = x.subagent or child.id
                    steps.extend(sub)
                    parts_usage.append(sub_usage)
        if not charged:  # no step parts: the message's own tokens
            u = _usage(info.get("tokens"), info.get("cost"))
            parts_usage.append(u)
            if u is not None and own:
                own[0].usage = u
    for child in children.get(s.id, []):  # subagents not matched to a task call
        if child.id not in used_children and depth < 8:
            sub, sub_usage, _m, _c = _steps(child, children, warnings, depth + 1, mcp)
            for x in sub:
                x.subagent = x.subagent or child.id
            steps.extend(sub)
            parts_usage.append(sub_usage)
    usage = Usage.total([u if u is None or u.api_calls is not None
                         else replace(u, api_calls=1) for u in parts_usage])
    return steps, usage, model, cwd


def _child_of(step: Step, state: dict[str, Any], children: list[_Session], used: set[str]
              ) -> _Session | None:
    if step.tool != "task" or not children:
        return None
    meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    sid = _str(meta.get("sessionId")) or _str(meta.get("sessionID"))
    for c in children:
        if c.id == sid:
            return c
    return None


def _input(part: dict[str, Any]) -> dict[str, Any]:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    inp = state.get("input")
    return inp if isinstance(inp, dict) else {}


def _usage(tokens: Any, cost: Any) -> Usage | None:
    if not isinstance(tokens, dict):
        return None

    def num(v: Any) -> int:
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    u = Usage(num(tokens.get("input")) + num(cache.get("read")) + num(cache.get("write")),
              num(tokens.get("output")) + num(tokens.get("reasoning")),
              float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool)
              else None)
    return None if (u.input_tokens, u.output_tokens) == (0, 0) and u.cost is None else u


# --- one tool call ------------------------------------------------------------------------------


def mcp_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of a tool OpenCode named ``<server>_<tool>``; None for its own tools."""
    if name in _NATIVE or "_" not in name.strip("_"):
        return None
    server, _, tool = name.partition("_")
    return (server, tool) if server and tool else None


def call_step(name: str, args: dict[str, Any], index: int, cwd: str | None) -> Step:
    """The step of one tool call, before its result is known (edit tools name their files).
    Shared with the ATIF reader."""
    mcp = mcp_name(name)
    tool = f"mcp__{mcp[0]}__{mcp[1]}" if mcp else name
    if name in _SHELL and isinstance(args.get("command"), str):
        action = args["command"]
    else:
        shown = {k: v for k, v in args.items() if k not in ("content", "oldString", "newString",
                                                           "edits", "patchText")}
        action = f"{tool} {json.dumps(shown, ensure_ascii=False, sort_keys=True, default=str)}"
    step = Step(index=index, tool=tool, action=action)
    if name in _EDITS:
        f = _rel(_str(args.get("filePath")), cwd)
        if f:
            step.edits = [f]
    elif name in _PATCHES:
        body = _str(args.get("patchText")) or _str(args.get("patch")) or ""
        step.edits = [_rel(f, cwd) or f for f in _patch_files(body)]
    return step


def observe(step: Step, state: dict[str, Any], cwd: str | None, warnings: list[str],
            mcp: McpRun | None = None) -> None:
    """Views (and edit outcome) of a call from its part's ``state`` (module docstring)."""
    status = state.get("status")
    meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    args = state.get("input") if isinstance(state.get("input"), dict) else {}
    name = step.tool or ""
    output = state.get("output") if isinstance(state.get("output"), str) else None
    interrupted = status == "error" and meta.get("interrupted") is True \
        and isinstance(meta.get("output"), str)
    if interrupted:
        output = meta["output"]
    failed = status != "completed" and not interrupted
    if name.startswith("mcp__"):
        server, _, tool = name[len("mcp__"):].partition("__")
        mcp_observe(step, server, tool, args, output or "", is_error=failed, cwd=cwd,
                    warnings=warnings, run=mcp)
        if "_" in server or "-" in server:
            warnings.append(f"step {step.index} ({name}): the server's name is a guess "
                            "(OpenCode joins server and tool with '_')")
        return
    if failed or output is None:
        if name in _EDITS or name in _PATCHES:
            step.edits = []
        return
    if name in _READ:
        f = _rel(_str(args.get("filePath")), cwd)
        if f:
            step.views = read_views(f, output)
    elif name in _GREP:
        step.views = [replace(v, file=_rel(v.file, cwd) or v.file) for v in grep_views(output)]
    elif name in _SHELL:
        text, cut = bash_output(output)
        code = meta.get("exit")
        workdir = _str(args.get("workdir")) or cwd
        reading = read_shell(_str(args.get("command")) or "", text, cwd=workdir,
                             returncode=code if isinstance(code, int) else None,
                             truncated=cut or interrupted)
        step.views = [replace(v, file=_rel(v.file, cwd) or v.file) for v in reading.views]
        step.edits = list(dict.fromkeys([*step.edits,
                                         *(_rel(e, cwd) or e for e in reading.edits)]))


def read_views(f: str, output: str) -> list[View]:
    """The numbered lines ``read`` printed of ``f``: inside its ``<file>``/``<content>``
    block, up to the block's closing note."""
    if "<type>directory</type>" in output:
        return []
    start = min((i for i in (output.find("<content>"), output.find("<file>")) if i >= 0),
                default=-1)
    body = output[start:] if start >= 0 else output
    nums: list[int] = []
    last_empty_old = False  # the last numbered line was ``NNNNN| `` with nothing after it
    for k, line in enumerate(body.split("\n")):
        if k == 0 and start >= 0:
            line = line.removeprefix("<content>").removeprefix("<file>")
        if line.startswith(_READ_END) or line.startswith(("</content>", "</file>")):
            if line.startswith("(End of file") and last_empty_old:
                nums.pop()  # the empty string after the file's final newline
            break
        m = _OLD_LINE.match(line) or _NEW_LINE.match(line)
        if m:
            nums.append(int(m.group(1)))
            last_empty_old = m.re is _OLD_LINE and line == m.group(0)
    return numbered_views(f, nums)


def grep_views(output: str) -> list[View]:
    hits: dict[str, list[int]] = {}
    current: str | None = None
    for line in output.split("\n"):
        if (m := _GREP_HIT.match(line)) and current is not None:
            hits[current].append(int(m.group(1)))
        elif (m := _GREP_FILE.match(line)) and not line.startswith("Found "):
            current = m.group(1)
            hits.setdefault(current, [])
    return [v for f, nums in hits.items() for v in numbered_views(f, nums)]


def bash_output(output: str) -> tuple[str, bool]:
    """The text a ``bash`` call printed, without OpenCode's notes, in the shape the shell reader
    reads; and whether it stopped early (a timeout, an abort, a head kept)."""
    cut = False
    m = _BASH_META.search(output)
    if m is not None:
        output = output[:m.start()]
        cut = True
    m = _OLD_NOTES.search(output)
    if m is not None:
        output = output[:m.start()]
        cut = True
    m = _TAIL_CUT.match(output)
    if m is not None:  # the hint first, then the last lines: the head was dropped
        return f"\n[... omitted 0 of 0 lines ...]\n\n{output[m.end():]}", cut
    heads = list(_HEAD_CUT.finditer(output))
    if heads:  # the first lines, then the hint
        return output[:heads[-1].start()], True
    return ("" if output == "(no output)" else output), cut
