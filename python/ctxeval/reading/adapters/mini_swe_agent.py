"""mini-swe-agent trajectories (``<instance_id>.traj.json``), both message formats.

- v1 (``trajectory_format: mini-swe-agent-1``): each assistant message holds exactly one
  ```` ```bash ```` block, the action; the next user message is the observation
  (``<returncode>N</returncode><output>…</output>``, long outputs as ``<output_head>`` /
  ``<elided_chars>`` / ``<output_tail>``, a timeout as "The last command … timed out"). A message
  with no block or several gets a format error back: that is a step with no views. An
  assistant message nobody answered (plain talk at the end, or an action the run stopped before
  executing) is not a step.
- v2 (``mini-swe-agent-1.1``): assistant ``tool_calls`` to ``bash`` with a JSON ``command``
  argument (also recorded in ``extra.actions``), ``role: tool`` observations matched by
  ``tool_call_id``, and a final ``role: exit`` message carrying the submission. Every executed
  action is a step; the message's token usage goes to its first one.

Views come from :func:`ctxeval.reading.shell.read_shell`, run in ``info.config.environment.cwd``
(mini-swe-agent runs every command in a fresh shell there, so ``cd`` never carries over). The
submission command (``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT …``) is a step whose output the
model never saw: it views nothing.

Under preset ``contextbench`` the file is read as ContextBench's evaluator reads it: steps from
lower-case ``<explore_context>`` blocks in any message, or, when there are none, from its own
bash-command rules; the final context from the last ``<PATCH_CONTEXT>`` block of any message.
Under ``strict`` the last ``<PATCH_CONTEXT>`` block an assistant wrote is the declared context.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..shell import read_shell, split_commands
from . import HEAD_BYTES, ReadOptions
from ._fields import FieldNotes
from ._sessions import json_document
from .contextbench import CbStep, cb_trajectory, is_contextbench, strict_patch_context

FORMAT = "mini-swe-agent"
PRIORITY = 30

_SUFFIX = ".traj.json"
_DEFAULT_ACTION_RE = r"```bash\s*\n(.*?)\n```"
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_RC_RE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TIMEOUT_RE = re.compile(r"The last command <command>.*?</command> timed out", re.S)
_PATCH_CONTEXT_RE = re.compile(r"<PATCH_CONTEXT>(.*?)</PATCH_CONTEXT>", re.S)


def detect(path: Path, head: bytes) -> bool:
    """A JSON file declaring a mini-swe-agent format, or a ``.traj.json`` with ``messages``.

    A directory only in mini-swe-agent's own run layout (``<id>/<id>.traj.json``), so that a
    folder mixing several agents' files is left to the other adapters.
    """
    if path.is_dir():
        return any(_detect_file(p) for p in _files(path)[:3])
    return _detect_head(path, head)


_FORMAT_KEY_RE = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')
#: Bytes read from the end of a file whose head says nothing (see :func:`_detect_tail`).
_TAIL_BYTES = 4096


def _detect_head(path: Path, head: bytes) -> bool:
    if not head.lstrip().startswith(b"{"):
        return False
    if _FORMAT_KEY_RE.search(head) or b'"mini_version"' in head:
        return True
    if path.name.endswith(_SUFFIX) and b'"messages"' in head and b'"trajectory"' not in head:
        return True
    return len(head) >= HEAD_BYTES and path.name.endswith(".json") and _detect_tail(path)


def _detect_tail(path: Path) -> bool:
    """Whether the file ends with mini-swe-agent's format key. mini-swe-agent writes ``info``
    first, its ``submission`` included, and ``trajectory_format`` last: a long submission (a
    patch that adds generated files) pushes every other mark past the head detection reads."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - _TAIL_BYTES))
            return _FORMAT_KEY_RE.search(fh.read()) is not None
    except OSError:
        return False


def _detect_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return _detect_head(path, fh.read(HEAD_BYTES))
    except OSError:
        return False


def _files(directory: Path) -> list[Path]:
    """The ``<id>/<id>.traj.json`` files of a run directory (or of one instance directory)."""
    own = directory / f"{directory.name}{_SUFFIX}"
    if own.is_file():
        return [own]
    return sorted(p for p in directory.glob(f"*/*{_SUFFIX}") if p.name == p.parent.name + _SUFFIX)


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    if path.is_dir():
        files = [p for p in _files(path) if _detect_file(p)]
        if not files:
            raise AdapterError("no mini-swe-agent .traj.json files in this directory",
                               path=str(path))
        return [read_file(p, ReadOptions(options.preset, None, options.run)) for p in files]
    return [read_file(path, options)]


def read_file(path: Path, options: ReadOptions) -> Trajectory:
    """One ``.traj.json`` file as a trajectory."""
    data = json_document(path)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise AdapterError("not a mini-swe-agent trajectory: no 'messages' list",
                           path=str(path), field="messages")
    if is_contextbench(options):
        return _read_contextbench(data, path, options)
    return _read_strict(data, path, options)


# --- strict reading ---------------------------------------------------------------------------


def _id_from_name(path: Path) -> str:
    name = path.name
    return name[: -len(_SUFFIX)] if name.endswith(_SUFFIX) else path.stem


def _get(obj: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "\n".join(parts)
    return ""


def _num(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return int(v)


def _money(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _message_usage(msg: dict[str, Any]) -> Usage | None:
    """Tokens (and cost, where recorded) of the API call that produced this message."""
    extra = msg.get("extra")
    usage = _get(extra, "response", "usage")
    u = Usage()
    if isinstance(usage, dict):
        u.input_tokens = _num(usage.get("prompt_tokens"))
        u.output_tokens = _num(usage.get("completion_tokens"))
        u.cost = _money(usage.get("cost"))
    if isinstance(extra, dict) and u.cost is None:
        u.cost = _money(extra.get("cost"))
    return None if u.is_empty() else u


def _observation(text: str) -> tuple[int | None, str, bool]:
    """(return code, output as shown, whether it stops early) of an observation message."""
    m = _RC_RE.search(text)
    rc = int(m.group(1)) if m else None
    head = text.find("<output_head>")
    if head >= 0:
        end = text.rfind("</output_tail>")
        return rc, text[head:] if end < 0 else text[head:end + len("</output_tail>")], True
    start = text.find("<output>")
    if start >= 0:
        end = text.rfind("</output>")
        body = text[start + len("<output>"):] if end < start else text[start + len("<output>"):end]
        if body.startswith("\n"):
            body = body[1:]
        timed_out = bool(_TIMEOUT_RE.search(text[:start]))
        return rc, body, timed_out
    if "<exception>" in text or _TIMEOUT_RE.search(text):
        return rc if rc is not None else -1, "", False
    return rc, text, False


class _Edits:
    """Files changed so far, whose later views are in edited coordinates.

    The shape of a ``sed -i`` or heredoc edit is unknown, so those views are ``post_edit``
    (file-level credit) until the file is put back as it was at the base commit: by git
    (``git checkout``/``git restore`` of it, from the index or ``HEAD``; ``git checkout .``,
    ``git reset --hard``, ``git stash``, undone by ``git stash pop``), or by copying back a
    backup taken before it was changed (``cp f f.backup`` ... ``cp f.backup f``, or ``mv``).
    A ``git checkout <revision> -- f`` of another revision changes ``f``.
    """

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.stash: list[set[str]] = []
        #: Script files the agent wrote (see ``read_shell``'s ``scripts``).
        self.scripts: dict[str, str] = {}
        #: backup path -> the file it is a copy of, taken while that file was unchanged
        self.copies: dict[str, str] = {}

    def after(self, command: str, edits: list[str], cwd: str | None) -> None:
        files = set(self.files)
        undone: set[str] = set()  # changed by this command, but back at base at its end
        for argv in split_commands(command):
            words = [a for a in argv if not a.startswith("-")]
            if not words:
                continue
            name = posixpath.basename(words[0])
            if name in ("cp", "mv") and len(words) == 3:
                src, dst = _path(cwd, words[1]), _path(cwd, words[2])
                # what src holds: a file as at the base commit (its own, or a backup's)
                origin = self.copies.get(src) or (src if src not in files else None)
                if origin == dst:
                    files.discard(dst)  # the backup copied back: the file as at the base
                    undone.add(dst)
                else:
                    files.add(dst)
                    undone.discard(dst)
                self.copies.pop(dst, None)
                if origin is not None and origin != dst:
                    self.copies[dst] = origin
                if name == "mv":
                    files.add(src)
                    self.copies.pop(src, None)
                continue
            changed = read_shell(shlex.join(argv), "", cwd=cwd).edits
            files.update(changed)
            undone.difference_update(changed)
            for e in changed:
                self.copies.pop(e, None)
            if len(words) < 2 or name != "git":
                continue
            sub, rest = words[1], words[2:]
            everything = (sub in ("checkout", "restore") and "." in rest) \
                or (sub == "reset" and "--hard" in argv)
            if everything:
                undone |= files | set(edits)
                files.clear()
            elif sub in ("checkout", "restore"):
                head = argv[argv.index("--") + 1:] if "--" in argv else []
                revision = [w for w in words[2:] if w not in head] if "--" in argv else []
                if any(r != "HEAD" for r in revision):
                    continue  # another revision's content: changed, not put back
                files.difference_update(changed)
                undone.update(changed)
            elif sub == "stash" and (not rest or rest[0] in ("push", "save")):
                self.stash.append(set(files))
                undone |= files | set(edits)
                files.clear()
            elif sub == "stash" and rest[0] in ("pop", "apply") and self.stash:
                back = self.stash.pop() if rest[0] == "pop" else self.stash[-1]
                files |= back
                undone -= back
        self.files = files | (set(edits) - undone)


def _path(cwd: str | None, path: str) -> str:
    """A path as the shell reader names it (joined with the working directory)."""
    if not path or cwd is None or path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _shell_step(index: int, command: str, observation: str, cwd: str | None,
                usage: Usage | None, edited: _Edits, rc_hint: int | None = None) -> Step:
    """A bash step: the command read against what its observation showed."""
    step = Step(index=index, action=command, tool="bash", usage=usage)
    rc, output, cut = _observation(observation)
    if rc is None:
        rc = rc_hint
    submitted = SUBMIT in command and not _RC_RE.search(observation)
    reading = read_shell(command, "" if submitted else output, cwd=cwd,
                         returncode=-1 if submitted else rc, truncated=cut,
                         scripts=edited.scripts, printed=True)
    if not submitted:
        # a view of a file changed before: post-edit, its printed lines kept to be checked
        # against the base file (those still as at the base are base lines); other line
        # views need no text
        step.views = [replace(v, post_edit=True) if v.file in edited.files and not v.post_edit
                      else v if v.post_edit or v.start_line is None else replace(v, text=None)
                      for v in reading.views]
    step.edits = reading.edits
    edited.after(command, reading.edits, cwd)
    return step


#: The roles mini-swe-agent writes; a message of another role is read as none of them.
_ROLES = frozenset({"system", "user", "assistant", "tool", "exit"})


def _checked_messages(raw: list[Any], notes: FieldNotes) -> list[dict[str, Any]]:
    """The message objects of a run, each defect the steps will skip told to ``notes``: a
    message that is not an object, a role that is missing or not one of mini-swe-agent's, a
    tool result whose ``tool_call_id`` is not a string."""
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            notes.note("messages[]", m, "the message is not read", f"messages[{i}]")
            continue
        role = m.get("role")
        if role not in _ROLES:
            notes.note("messages[].role", role, "the message is not read",
                       f"messages[{i}].role")
        elif role == "tool" and not isinstance(m.get("tool_call_id"), str):
            notes.note("messages[].tool_call_id", m.get("tool_call_id"),
                       "the result is matched to its call by position",
                       f"messages[{i}].tool_call_id")
        out.append(m)
    return out


def _note_usage(messages: list[dict[str, Any]], notes: FieldNotes) -> None:
    """Say which API calls recorded no usable token counts, where others did: the run's tokens
    then count only the calls that recorded them."""
    calls = [(i, m) for i, m in enumerate(messages) if m.get("role") == "assistant"]
    missing = []
    for i, m in calls:
        usage = _get(m.get("extra"), "response", "usage")
        if usage is None:
            missing.append(i)
        elif not isinstance(usage, dict):
            notes.note("messages[].extra.response.usage", usage,
                       "the call's tokens are not counted", f"messages[{i}].extra.response.usage")
        else:
            for key in ("prompt_tokens", "completion_tokens"):
                if key in usage and _num(usage[key]) is None:
                    notes.note(f"messages[].extra.response.usage.{key}", usage[key],
                               "the call's tokens are not counted",
                               f"messages[{i}].extra.response.usage.{key}")
    if missing and len(missing) < len(calls):
        for i in missing:
            notes.missing("messages[].extra.response.usage",
                          "tokens count only the API calls that recorded them",
                          f"messages[{i}].extra.response.usage")


def _read_strict(data: dict[str, Any], path: Path, options: ReadOptions) -> Trajectory:
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    notes = FieldNotes()
    messages = _checked_messages(data["messages"], notes)
    _note_usage(messages, notes)
    cwd = _get(info, "config", "environment", "cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    steps = message_steps(messages, cwd, str(data.get("trajectory_format") or ""),
                          _get(info, "config", "agent", "action_regex"))

    model_patch = info.get("submission") if isinstance(info.get("submission"), str) else None
    if not model_patch:
        exit_msg = next((m for m in reversed(messages) if m.get("role") == "exit"), None)
        if exit_msg is not None:
            sub = _get(exit_msg, "extra", "submission")
            model_patch = sub if isinstance(sub, str) else _text(exit_msg.get("content"))
    per_call = [_message_usage(m) for m in messages if m.get("role") == "assistant"]
    summed = Usage.total([Usage(u.input_tokens, u.output_tokens) if u else None
                          for u in per_call])
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    usage = Usage(summed.input_tokens if summed else None,
                  summed.output_tokens if summed else None,
                  _money(stats.get("instance_cost")), _num(stats.get("api_calls")))

    declared = [_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
    blocks = [b for text in declared for b in _PATCH_CONTEXT_RE.findall(text)]
    warnings: list[str] = []
    final = strict_patch_context(blocks[-1], warnings) if blocks else None

    instance_id = options.instance_id or (data.get("instance_id")
                                          if isinstance(data.get("instance_id"), str)
                                          and data.get("instance_id") else _id_from_name(path))
    model = _get(info, "config", "model", "model_name")
    extra: dict[str, Any] = {}
    if isinstance(info.get("mini_version"), str):
        extra["agent_version"] = info["mini_version"]
    if isinstance(info.get("exit_status"), str):
        extra["exit_status"] = info["exit_status"]
    if warnings:
        extra["read_warnings"] = warnings
    notes.extend_into(extra)
    return Trajectory(
        instance_id=instance_id,
        steps=steps,
        run=options.run,
        agent=FORMAT,
        model=model if isinstance(model, str) else None,
        final_context=final,
        model_patch=model_patch or None,
        usage=None if usage.is_empty() else usage,
        source=str(path),
        extra=extra,
    )


def message_steps(messages: list[dict[str, Any]], cwd: str | None, trajectory_format: str = "",
                  action_regex: Any = None) -> list[Step]:
    """The steps of a run's messages, in whichever of the two formats they are written.

    Shared with the ATIF reader, which turns an ATIF rendering back into these messages."""
    fmt = trajectory_format
    v2 = fmt.startswith("mini-swe-agent-1.1") or fmt.startswith("mini-swe-agent-2") or any(
        m.get("role") in ("tool", "exit") or m.get("tool_calls") for m in messages)
    try:
        pattern = re.compile(action_regex if isinstance(action_regex, str)
                             else _DEFAULT_ACTION_RE, re.S)
    except re.error:
        pattern = re.compile(_DEFAULT_ACTION_RE, re.S)
    return _steps_v2(messages, cwd) if v2 else _steps_v1(messages, cwd, pattern)


def _steps_v1(messages: list[dict[str, Any]], cwd: str | None,
              pattern: re.Pattern[str]) -> list[Step]:
    steps: list[Step] = []
    edited = _Edits()
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        reply = messages[i + 1] if i + 1 < len(messages) else None
        answered = reply is not None and reply.get("role") in ("user", "tool")
        blocks = [b.strip() for b in pattern.findall(_text(msg.get("content")))]
        usage = _message_usage(msg)
        if len(blocks) != 1:
            if answered:  # the framework rejected the message: a step that showed nothing
                steps.append(Step(index=len(steps), action="\n\n".join(blocks),
                                  tool="format_error", usage=usage))
            continue
        if not answered or reply is None:
            continue  # never executed: the run stopped before it
        steps.append(_shell_step(len(steps), blocks[0], _text(reply.get("content")), cwd, usage,
                                 edited))
    return steps


def _steps_v2(messages: list[dict[str, Any]], cwd: str | None) -> list[Step]:
    """Steps of the tool-call format: one per executed action, observations matched by id.

    The executed actions are ``extra.actions`` where recorded (what mini-swe-agent ran), else
    the message's ``bash`` tool calls; a message whose calls cannot be parsed was rejected as a
    whole, which is one step with no views.
    """
    steps: list[Step] = []
    edited = _Edits()
    by_call: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
            by_call.setdefault(m["tool_call_id"], m)
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        usage = _message_usage(msg)
        later = messages[i + 1:]
        nxt = next((k for k, m in enumerate(later) if m.get("role") == "assistant"), len(later))
        replies = [m for m in later[:nxt] if m.get("role") in ("tool", "user", "exit")]
        actions = _actions_of(msg)
        if not actions:
            if replies:  # rejected: the framework answered with an error
                steps.append(Step(index=len(steps), action=_text(msg.get("content"))[:2000],
                                  tool="format_error", usage=usage))
            continue
        for k, (command, call_id) in enumerate(actions):
            obs = by_call.get(call_id) if call_id else None
            if obs is None and k < len(replies) and not (
                    call_id and replies[k].get("role") == "tool"
                    and isinstance(replies[k].get("tool_call_id"), str)):
                obs = replies[k]  # by position: no ids, or the result's id is broken
            if obs is None:
                continue  # never executed: the run stopped before it
            steps.append(_shell_step(len(steps), command, _text(obs.get("content")), cwd,
                                     usage if k == 0 else None,  # one API call, counted once
                                     edited, _num(_get(obs, "extra", "returncode"))))
    return steps


def _actions_of(msg: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(command, tool call id) of each action of an assistant message; [] if rejected."""
    recorded = _get(msg, "extra", "actions")
    if isinstance(recorded, list) and recorded:
        out = [(a["command"], a.get("tool_call_id") if isinstance(a.get("tool_call_id"), str)
                else None) for a in recorded
               if isinstance(a, dict) and isinstance(a.get("command"), str)]
        if len(out) == len(recorded):
            return out
    raw_calls = msg.get("tool_calls")
    calls = [c for c in raw_calls if isinstance(c, dict)] if isinstance(raw_calls, list) else []
    out = []
    for c in calls:
        fn = c.get("function") if isinstance(c.get("function"), dict) else {}
        command = _command_of(fn)
        if command is None or fn.get("name") != "bash":
            return []
        out.append((command, c.get("id") if isinstance(c.get("id"), str) else None))
    return out


def _command_of(fn: dict[str, Any]) -> str | None:
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        return args["command"]
    return None


# --- ContextBench's reading -------------------------------------------------------------------

_CB_BASH_RE = re.compile(r"```bash\s*\r?\n([\s\S]*?)\r?\n```")
_CB_SKIP = ("sed -i", "echo ", "mkdir", "rm ", "git add", "git commit")
_CB_SOURCE_EXTS = (".py", ".js", ".java", ".go", ".rs", ".c", ".cpp", ".h", ".hpp", ".ts",
                   ".tsx", ".jsx", ".rb", ".php", ".cs", ".kt", ".scala", ".swift")


_CB_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nl_sed", re.compile(r"nl\s+[^|]+\s+([^\s|]+)\s*\|\s*sed\s+-n\s+['\"]?(\d+),(\d+)p")),
    ("sed", re.compile(r"sed\s+-n\s+['\"]?(\d+),(\d+)p['\"]?\s+([^\s&|>;<]+)")),
    ("head", re.compile(r"\bhead\s+-n\s+(\d+)\s+([^\s&|>]+)")),
    ("cat", re.compile(r"\bcat\s+([^\s&|>]+)")),
    ("grep", re.compile(r"\bgrep\s+.*?\s+([^\s&|>]+\.(?:py|js|java|go|rs|c|cpp|h|hpp|ts|tsx|jsx"
                       r"|rb|php|cs|kt|scala|swift))\b")),
)


def _cb_tag_blocks(text: str, tag: str) -> list[str]:
    """Inner text of ``<tag>…</tag>`` blocks (case-sensitive), trimmed as the reference does."""
    pat = re.compile(rf"<{re.escape(tag)}>\s*([\s\S]*?)\s*</{re.escape(tag)}>")
    return [m.group(1) for m in pat.finditer(text)]


def _cb_repo_dir(data: dict[str, Any]) -> str:
    image = _get(data, "info", "config", "environment", "image")
    if isinstance(image, str):
        m = re.search(r"_m_([A-Za-z0-9_.-]+)(?::|$)", image)
        if m:
            return m.group(1)
    return ""


def _cb_norm(path: str, repo_dir: str) -> str:
    """The reference's candidate repo-relative path (prefix rules only; suffix matching later)."""
    p = path.strip().strip("'\"")
    if not p:
        return ""
    if p.startswith("/testbed/"):
        p = p[len("/testbed/"):]
    if p.startswith("/home/"):
        first, sep, tail = p[len("/home/"):].partition("/")
        if not sep:
            return ""
        p = tail if repo_dir and first == repo_dir else p[len("/home/"):]
    p = p.lstrip("/")
    if p.startswith("./"):
        p = p[2:]
    return p


def _cb_pairs(text: str, repo_dir: str) -> dict[str, list[tuple[int, int]]]:
    """``File:`` / ``Lines: a-b`` pairs; a file counts only once it has a readable range."""
    out: dict[str, list[tuple[int, int]]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("File:"):
            current = _cb_norm(line[len("File:"):].strip(), repo_dir)
        elif line.startswith("Lines:") and current:
            m = re.match(r"(\d+)\s*-\s*(\d+)", line[len("Lines:"):].strip())
            if m:
                a, b = int(m.group(1)), int(m.group(2))
                out.setdefault(current, []).append((min(a, b), max(a, b)))
    return out


def _cb_strip_testbed(f: str) -> str:
    return f[len("/testbed/"):] if f.startswith("/testbed/") else f


def _cb_command_views(cmd: str) -> list[tuple[str, int | None, int | None]]:
    """The reference's fallback reading of one bash command: (file, start, end) triples.

    Chunks split at ``&&``/``||``/``;``; in each the first matching form wins: ``nl … | sed -n
    'a,bp'``, ``sed -n 'a,bp' f``, ``head -n N f`` (ranged), ``cat f``, ``grep … f.ext`` (file
    only); only source-file extensions count. Commands containing an edit-ish substring give none.
    """
    if not cmd or any(s in cmd for s in _CB_SKIP):
        return []
    found: list[tuple[str, int | None, int | None]] = []
    for chunk in re.split(r"\s*(?:&&|\|\||;)\s*", cmd):
        c = chunk.strip()
        if not c:
            continue
        for kind, rx in _CB_FORMS:
            m = rx.search(c)
            if not m:
                continue
            if kind == "nl_sed":
                f, a, b = m.group(1), int(m.group(2)), int(m.group(3))
            elif kind == "sed":
                f, a, b = m.group(3), int(m.group(1)), int(m.group(2))
            elif kind == "head":
                f, a, b = m.group(2), 1, int(m.group(1))
            else:
                f, a, b = m.group(1), None, None
            f = _cb_strip_testbed(f.strip("'\""))
            if f.endswith(_CB_SOURCE_EXTS):
                found.append((f, a, b))
            break  # the first form that matches decides, source file or not
    return list(dict.fromkeys(found))


def _read_contextbench(data: dict[str, Any], path: Path, options: ReadOptions) -> Trajectory:
    repo_dir = _cb_repo_dir(data)
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    for i, m in enumerate(messages):
        if not isinstance(m.get("content") or "", str):
            raise AdapterError("message content is not a string (the reference raises "
                               "TypeError)", path=str(path), field=f"messages[{i}].content")
    steps: list[CbStep] = []
    for m in messages:
        for block in _cb_tag_blocks(m.get("content") or "", "explore_context"):
            pairs = _cb_pairs(block, repo_dir)
            if pairs:
                steps.append(CbStep(files=sorted(pairs),
                                    spans=[(f, a, b) for f, rs in pairs.items() for a, b in rs],
                                    action=block, tool="explore_context"))
    if not steps:
        for m in messages:
            if m.get("role") != "assistant":
                continue
            match = _CB_BASH_RE.search(m.get("content") or "")
            if not match:
                continue
            cmd = match.group(1).strip()
            if "COMPLETE_TASK" in cmd:
                continue
            files: list[str] = []
            spans: list[tuple[str, int, int]] = []
            for f, a, b in _cb_command_views(cmd):
                fp = _cb_norm(f, repo_dir)
                if not fp:
                    continue
                files.append(fp)
                if a is not None and b is not None:
                    spans.append((fp, a, b))
            if files:
                steps.append(CbStep(files=sorted(set(files)), spans=_by_file(spans),
                                    action=cmd, tool="bash"))
    blocks = [b for m in messages for b in _cb_tag_blocks(m.get("content") or "",
                                                          "PATCH_CONTEXT")]
    final = CbStep()
    if blocks:
        pairs = _cb_pairs(blocks[-1], repo_dir)
        final = CbStep(files=sorted(pairs),
                       spans=[(f, a, b) for f, rs in pairs.items() for a, b in rs])
    sub = _get(data, "info", "submission")
    traj = cb_trajectory(_id_from_name(path), steps, final, options=options, source=path,
                         agent=FORMAT, model_patch=sub if isinstance(sub, str) else None)
    model = _get(data, "info", "config", "model", "model_name")
    traj.model = model if isinstance(model, str) else None
    return traj


def _by_file(spans: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Spans grouped by file in first-seen order, as the reference's per-file dict keeps them."""
    order: dict[str, list[tuple[str, int, int]]] = {}
    for s in spans:
        order.setdefault(s[0], []).append(s)
    return [s for group in order.values() for s in group]

