"""OpenHands ``llm_completions/<instance>/``: one JSON per LLM call, with OpenAI tool calls.

The last call's ``messages`` plus its ``response`` hold the whole conversation. Every tool call is
a step (``execute_bash``, ``str_replace_editor``, ``finish``, ...), its result the ``role: tool``
message with the same ``tool_call_id``. Per-call usage is each file's ``response.usage`` and
``cost``, attached to the first step of the assistant message that call produced.

Edits are located from the editor's snippet where that is unambiguous (see
:func:`~ctxeval.reading.adapters.swe_agent.editor_hunk`); otherwise later views of the file are
post-edit.

These files carry no patch: it is read from an infer log next to the directory (the text after
``Got git diff for instance <id>:`` between two ``--------`` lines); without a log it is None.
A directory of such instance directories (``llm_completions/`` itself) gives one trajectory each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from . import ReadOptions
from .swe_agent import (
    EditTracker,
    apply_shell,
    catn_blocks,
    editor_hunk,
    instance_id_from_path,
)

FORMAT = "openhands-completions"
PRIORITY = 40

_KEYS = (b'"messages"', b'"response"', b'"kwargs"')


def _completion_files(d: Path) -> list[Path]:
    """The per-call JSONs of one instance directory, oldest first (by the timestamp suffix)."""
    def when(p: Path) -> tuple[float, str]:
        m = re.search(r"-(\d+(?:\.\d+)?)\.json$", p.name)
        return (float(m.group(1)) if m else 0.0, p.name)

    return sorted((p for p in d.glob("*.json") if p.is_file()), key=when)


def _looks_like_completion(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and all(k in head for k in _KEYS)


def _instance_dirs(path: Path) -> list[Path]:
    files = _completion_files(path)
    if files:
        return [path] if _looks_like_completion(files[0]) else []
    return [d for d in sorted(path.iterdir()) if d.is_dir() and _completion_files(d)
            and _looks_like_completion(_completion_files(d)[0])]


def detect(path: Path, head: bytes) -> bool:
    """A directory of LLM-call JSONs (``messages``/``response``/``kwargs``), or one of those."""
    if not path.is_dir():
        return False
    try:
        return bool(_instance_dirs(path))
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------

_TRAILERS = (
    re.compile(r"(?:\r?\n)?\[Command finished with exit code (?P<rc>-?\d+)\]\s*$"),
    re.compile(r"(?:\r?\n)?\[The command completed with exit code (?P<rc>-?\d+)\.\]\s*$"),
    re.compile(r"(?:\r?\n)?[^\n]*@[^\n]*:(?P<cwd>/[^\n#$]*?) ?[#$] ?\s*$"),
    re.compile(r"\[Python Interpreter: [^\]\n]*\]\s*$"),
)


def clean_bash_output(command: str, text: str) -> tuple[str, int | None, str | None]:
    """Command output without OpenHands' echo and prompt trailer; with exit code and new cwd."""
    out = text.replace("\r\n", "\n")
    rc: int | None = None
    cwd: str | None = None
    for pat in _TRAILERS:
        m = pat.search(out)
        if m:
            if "rc" in pat.groupindex and m.group("rc") is not None:
                rc = int(m.group("rc"))
            if "cwd" in pat.groupindex:
                cwd = m.group("cwd").strip()
            out = out[:m.start()]
    cmd = command.replace("\r\n", "\n").strip()
    if cmd and out.startswith(cmd):
        out = out[len(cmd):]
        out = out[1:] if out.startswith("\n") else out
    return out, rc, cwd


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content
                       if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _args(call: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = fn.get("name") if isinstance(fn.get("name"), str) else ""
    raw = fn.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    return name, args if isinstance(args, dict) else {}


_EDIT_OK = ("has been edited", "File created successfully", "undone successfully",
            "Last edit to")


def _editor(step: Step, tr: EditTracker, args: dict[str, Any], result: str,
            cwd: str | None) -> None:
    cmd = args.get("command")
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return
    step.action = f"str_replace_editor {cmd} {path}"
    if args.get("view_range"):
        step.action += f" {args['view_range']}"
    if result.lstrip().startswith("ERROR"):
        return
    if cmd == "view":
        if result.lstrip().startswith("Here's the files and directories"):
            return
        for blk in catn_blocks(result, default_path=path):
            step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))
    elif cmd in ("create", "str_replace", "insert", "undo_edit") \
            and any(s in result for s in _EDIT_OK):
        key = tr.key(path, cwd)
        if cmd == "undo_edit":
            tr.undo(key)
        else:
            tr.record(key, editor_hunk(cmd, args, result) if cmd != "create" else None)
        step.edits.append(path)
        for blk in catn_blocks(result, default_path=path):
            step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))


def _call_usage(doc: dict[str, Any]) -> Usage | None:
    resp = doc.get("response") if isinstance(doc.get("response"), dict) else {}
    u = resp.get("usage") if isinstance(resp.get("usage"), dict) else {}
    p, c = u.get("prompt_tokens"), u.get("completion_tokens")
    cost = doc.get("cost")
    usage = Usage(p if isinstance(p, int) else None, c if isinstance(c, int) else None,
                  float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool)
                  else None, 1)
    return usage


def _load(p: Path) -> dict[str, Any]:
    try:
        doc = json.loads(p.read_bytes())
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(p)) from exc
    except ValueError as exc:
        raise AdapterError(f"not valid JSON ({exc})", path=str(p)) from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise AdapterError("an LLM completion must be an object with a list 'messages'",
                           path=str(p), field="messages")
    return doc


# ---------------------------------------------------------------------------------------------

def _find_log(d: Path) -> list[Path]:
    """Infer logs that may hold this instance's diff: siblings sharing the directory's prefix,
    ``infer_logs/instance_<name>.log`` of the run, then any ``*.log`` beside the directory."""
    out: list[Path] = []
    prefix = d.name.split("llm_completions")[0]
    if prefix and prefix != d.name:
        out += sorted(d.parent.glob(f"{prefix}*.log"))
    for base in (d.parent.parent, d.parent):
        cand = base / "infer_logs" / f"instance_{d.name}.log"
        if cand.is_file():
            out.append(cand)
    out += [p for p in sorted(d.parent.glob("*.log")) if p not in out]
    return out


_DIFF_HEAD = re.compile(r"Got git diff for instance (?P<id>\S+?):\s*\n-{4,}\n")


def patch_from_log(text: str, instance_id: str | None) -> tuple[str | None, str | None]:
    """(instance id, patch) of the ``Got git diff`` block for ``instance_id`` (or the only one).

    Logging strips the single space of blank context lines; they are restored so the diff parses.
    """
    found = [(m.group("id"), m.end()) for m in _DIFF_HEAD.finditer(text)]
    if instance_id is not None:
        found = [f for f in found if f[0] == instance_id]
    if len(found) != 1:
        return None, None
    iid, start = found[0]
    end = text.find("\n--------", start - 1)
    body = text[start:end if end >= 0 else len(text)]
    if not body.strip():
        return iid, None
    lines = body.split("\n")
    in_hunk = False
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("diff --git"):
            in_hunk = False
        elif in_hunk and line == "":
            lines[i] = " "
    return iid, "\n".join(lines).rstrip("\n") + "\n"


def _read_dir(d: Path, options: ReadOptions) -> Trajectory:
    files = _completion_files(d)
    if not files:
        raise AdapterError("no LLM completion files", path=str(d))
    last = _load(files[-1])
    usages: list[Usage | None] = []
    for f in files:
        try:
            usages.append(_call_usage(_load(f)))
        except AdapterError:
            usages.append(None)

    messages: list[Any] = list(last["messages"])
    resp = last.get("response") if isinstance(last.get("response"), dict) else {}
    choices = resp.get("choices") if isinstance(resp.get("choices"), list) else []
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        messages.append(choices[0]["message"])

    results: dict[str, str] = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool":
            results.setdefault(str(m.get("tool_call_id")), _text(m.get("content")))

    tr = EditTracker()
    steps: list[Step] = []
    cwd: str | None = None
    n_assistant = 0
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        call_usage = usages[n_assistant] if n_assistant < len(usages) else None
        n_assistant += 1
        calls = m.get("tool_calls") if isinstance(m.get("tool_calls"), list) else []
        for k, call in enumerate(c for c in calls if isinstance(c, dict)):
            name, args = _args(call)
            result = results.get(str(call.get("id")))
            step = Step(index=len(steps), tool=name or None, action=name,
                        usage=call_usage if k == 0 else None)
            if name == "execute_bash":
                command = args.get("command") if isinstance(args.get("command"), str) else ""
                step.action = command
                if result is not None and command.strip():
                    out, rc, new_cwd = clean_bash_output(command, result)
                    apply_shell(step, tr, command, out, cwd or new_cwd, rc)
                    cwd = new_cwd or cwd
            elif name == "str_replace_editor":
                _editor(step, tr, args, result or "", cwd)
            steps.append(step)

    iid = options.instance_id
    patch = None
    for log in _find_log(d):
        try:
            text = log.read_text(errors="replace")
        except OSError:
            continue
        found_id, found_patch = patch_from_log(text, iid or instance_id_from_path(d))
        if found_id is None and iid is None:
            found_id, found_patch = patch_from_log(text, None)
        if found_id is not None:
            iid = iid or found_id
            patch = found_patch
            break
    iid = iid or instance_id_from_path(d) or d.name
    model = resp.get("model") if isinstance(resp.get("model"), str) else None
    return Trajectory(instance_id=iid, steps=steps, run=options.run, agent="openhands",
                      model=model, model_patch=patch, usage=Usage.total(usages), resolved=None,
                      source=str(d))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    """One trajectory per instance directory."""
    if not path.is_dir():
        raise AdapterError("expected an llm_completions directory", path=str(path))
    dirs = _instance_dirs(path)
    if not dirs:
        raise AdapterError("no LLM completion files in this directory", path=str(path))
    return [_read_dir(d, options) for d in dirs]
