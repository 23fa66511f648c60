"""OpenHands ``output.jsonl``: one record per instance with its ``history`` of events.

Also a saved trajectory (a JSON array of events, as OpenHands' ``save_trajectory_path`` and its
replay files hold them): one instance, named by ``--instance-id`` or by the file's name.

Every agent action event is a step (``run``, ``read``, ``edit``, ``think``, ``finish``, ...), and so
is an ``error`` observation that answers no action (a tool call the framework rejected). The
assistant's plain messages, the system prompt and ``recall`` events are not steps. An action's
observation is the event whose ``cause`` is the action's ``id``.

``read`` observations are ``cat -n`` blocks and are read line number by line number; ``run``
commands go through the shell reader. An ``edit`` whose observation carries a unified ``diff``
is mapped back exactly; without one, a ``str_replace``/``insert`` is located from the snippet the
editor printed when that is unambiguous; any other successful edit makes later views of that file
post-edit.

Under preset ``contextbench`` the file is read as the ContextBench evaluator reads it
(``agents/openhands/extract.py``): steps only from ``read`` actions (the ``view_range`` when both
bounds are positive, else ``start``/``end``) and ``run`` commands matching its ``sed -n``,
``nl | sed``, ``head -n``, ``cat`` and ``grep`` patterns (commands containing ``rm ``, ``echo ``,
``mkdir``, ``sed -i``, ``git add``/``commit`` skipped); observations ignored; the final context is
every file and the merged spans of all steps; an unreadable history is an empty trajectory.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..._core import lines_merge_raw
from ...errors import AdapterError, Problem
from ...model import Step, Trajectory, Usage, View
from . import ReadOptions
from .contextbench import CbStep, cb_trajectory, is_contextbench
from .openhands_completions import clean_bash_output
from .swe_agent import (
    EditTracker,
    apply_shell,
    catn_blocks,
    editor_hunk,
    hunks_from_diff,
    instance_id_from_path,
)

FORMAT = "openhands"
PRIORITY = 40

_NOT_STEPS = {"system", "recall", "message", "change_agent_state", "null"}


_EVENT_SOURCE = re.compile(rb'"source"\s*:\s*"(?:agent|user|environment)"')
_EVENT_KIND = re.compile(rb'"(?:action|observation)"\s*:\s*"')


def detect(path: Path, head: bytes) -> bool:
    """JSON lines whose records carry ``instance_id`` and an event ``history`` (or metadata),
    or a JSON array of events."""
    if path.is_dir():
        return False
    if head.lstrip().startswith(b"["):
        return bool(_EVENT_SOURCE.search(head) and _EVENT_KIND.search(head))
    if not head.lstrip().startswith(b"{"):
        return False
    if b'"instance_id"' not in head or re.search(rb'"trajectory"\s*:\s*\[', head):
        return False
    if b'"traj_data"' in head or b'"ctxeval-trajectory/' in head:  # ContextBench / neutral
        return False
    if b'"history"' in head and (b'"source"' in head or b'"test_result"' in head):
        return True
    return b'"agent_class"' in head and b'"instruction"' in head


def _content(event: dict[str, Any]) -> str:
    c = event.get("content")
    if isinstance(c, str):
        return c
    m = event.get("message")
    return m if isinstance(m, str) else ""


def _metadata(obs: dict[str, Any] | None) -> dict[str, Any]:
    if not obs:
        return {}
    extras = obs.get("extras")
    md = extras.get("metadata") if isinstance(extras, dict) else None
    return md if isinstance(md, dict) else {}


_EDIT_OK = ("has been edited", "File created successfully", "undone successfully",
            "Last edit to")


def _edit_step(step: Step, tr: EditTracker, args: dict[str, Any], obs: dict[str, Any] | None,
               cwd: str | None) -> None:
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return
    text = _content(obs) if obs else ""
    # newer versions answer an edit with the unified diff it applied: the change, exactly
    shown_diff = text.startswith("--- ") and "\n+++ " in text and "\n@@ " in text
    if not shown_diff and (not any(s in text for s in _EDIT_OK)
                           or text.lstrip().startswith("ERROR")):
        return
    extras = obs.get("extras") if obs and isinstance(obs.get("extras"), dict) else {}
    diff = extras.get("diff") if isinstance(extras, dict) else None
    command = args.get("command")
    key = tr.key(path, cwd)
    if shown_diff:
        tr.record(key, hunks_from_diff(text))
        step.views.append(View(path, None, None, post_edit=True))  # the diff it showed
    elif command == "undo_edit":
        tr.undo(key)
    elif command in ("str_replace", "insert"):
        has_diff = isinstance(diff, str) and bool(diff.strip())
        tr.record(key, hunks_from_diff(diff) if has_diff else editor_hunk(command, args, text))
    else:
        tr.record(key, None)
    step.edits.append(path)
    for blk in catn_blocks(text, default_path=path):
        step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))


def _read_step(step: Step, tr: EditTracker, args: dict[str, Any], obs: dict[str, Any] | None,
               cwd: str | None) -> None:
    path = args.get("path")
    text = _content(obs) if obs else ""
    if not isinstance(path, str) or not text or text.lstrip().startswith("ERROR"):
        return
    if text.lstrip().startswith("Here's the files and directories"):
        return
    for blk in catn_blocks(text, default_path=path):
        step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))


#: Tool names (function calling, v0 and the V1 SDK) and the action kind each one performs.
TOOL_KINDS = {"execute_bash": "run", "terminal": "run", "bash": "run",
              "str_replace_editor": "edit", "file_editor": "edit"}


def tool_kind(tool: str, args: dict[str, Any]) -> str | None:
    """The action kind (``run``, ``read``, ``edit``) of an OpenHands tool call, as the v0
    event log would have recorded it: an editor ``view`` is a ``read``."""
    kind = TOOL_KINDS.get(tool)
    if kind == "edit" and args.get("command") == "view":
        return "read"
    return kind


def apply_action(step: Step, tr: EditTracker, kind: str, args: dict[str, Any],
                 obs: dict[str, Any] | None, cwd: str | None) -> str | None:
    """Fill ``step`` (its action, views, edits) from a ``run``/``read``/``edit`` action and its
    observation (``content`` and ``extras``, as the v0 event log has them); returns the working
    directory after it. Shared by the V1 event and ATIF readers, which build ``obs`` from
    their own observation records."""
    if kind == "run":
        command = args.get("command") if isinstance(args.get("command"), str) else ""
        step.action = command
        md = _metadata(obs)
        wd = md.get("working_dir") if isinstance(md.get("working_dir"), str) else None
        rc = md.get("exit_code") if isinstance(md.get("exit_code"), int) else None
        if command.strip() and obs is not None:
            out, rc2, _ = clean_bash_output(command, _content(obs))
            apply_shell(step, tr, command, out, cwd or wd, rc if rc is not None else rc2)
        return wd or cwd
    if kind == "read":
        step.action = f"read {args.get('path', '')}".strip()
        if args.get("view_range"):
            step.action += f" {args.get('view_range')}"
        _read_step(step, tr, args, obs, cwd)
    elif kind == "edit":
        step.action = f"{args.get('command') or 'edit'} {args.get('path', '')}".strip()
        _edit_step(step, tr, args, obs, cwd)
    return cwd


def _step_usage(action: dict[str, Any], prev: dict[str, int]) -> Usage | None:
    """Per-step tokens: growth of ``llm_metrics.accumulated_token_usage`` since the last step."""
    lm = action.get("llm_metrics")
    acc = lm.get("accumulated_token_usage") if isinstance(lm, dict) else None
    if not isinstance(acc, dict):
        return None
    p, c = acc.get("prompt_tokens"), acc.get("completion_tokens")
    if not isinstance(p, int) or not isinstance(c, int):
        return None
    dp, dc = p - prev.get("p", 0), c - prev.get("c", 0)
    prev["p"], prev["c"] = p, c
    if dp < 0 or dc < 0 or (dp == 0 and dc == 0):
        return None
    return Usage(input_tokens=dp, output_tokens=dc)


def _usage(metrics: Any) -> Usage | None:
    """Instance usage; a zero cost with no per-call costs recorded is unknown, not free."""
    if not isinstance(metrics, dict):
        return None
    acc = metrics.get("accumulated_token_usage")
    acc = acc if isinstance(acc, dict) else {}
    p, c = acc.get("prompt_tokens"), acc.get("completion_tokens")
    cost = metrics.get("accumulated_cost")
    costs = metrics.get("costs")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool) \
            or (cost == 0 and not costs):
        cost = None
    lat = metrics.get("response_latencies")
    calls = len(lat) if isinstance(lat, list) and lat else None
    u = Usage(p if isinstance(p, int) else None, c if isinstance(c, int) else None,
              float(cost) if cost is not None else None, calls)
    return None if u.is_empty() else u


def _ref(value: Any) -> int | str | None:
    """An event id or cause usable as a key (ints and strings only; anything else is no id)."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _pairs(history: list[Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Actions with their observations, in order; an ``error`` observation that answers no
    action stands alone (as ``(error, None)``). Old histories are lists of [action, obs] pairs."""
    out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    events: list[dict[str, Any]] = []
    for item in history:
        if isinstance(item, dict):
            events.append(item)
        elif isinstance(item, list) and len(item) == 2 and isinstance(item[0], dict):
            obs = item[1] if isinstance(item[1], dict) and "observation" in item[1] else None
            out.append((item[0], obs))
    if out:
        return out
    by_cause: dict[int | str, dict[str, Any]] = {}
    for e in events:
        cause = _ref(e.get("cause"))
        if "observation" in e and cause is not None:
            by_cause.setdefault(cause, e)
    action_ids = {_ref(e.get("id")) for e in events if "action" in e} - {None}
    for e in events:
        if "action" in e:
            ref = _ref(e.get("id"))
            out.append((e, by_cause.get(ref) if ref is not None else None))
        elif e.get("observation") == "error" and _ref(e.get("cause")) not in action_ids:
            out.append((e, None))
    return out


def trajectory_from_record(rec: dict[str, Any], where: str, line: int,
                           options: ReadOptions) -> Trajectory:
    """One ``output.jsonl`` record as a trajectory."""
    history = rec.get("history")
    if not isinstance(history, list):
        raise AdapterError("missing list 'history'", path=where, line=line, field="history")
    iid = rec.get("instance_id")
    if not isinstance(iid, str) or not iid:
        inst = rec.get("instance")
        iid = inst.get("instance_id") if isinstance(inst, dict) else None
    if not isinstance(iid, str) or not iid:
        raise AdapterError("missing 'instance_id'", path=where, line=line, field="instance_id")

    tr = EditTracker()
    steps: list[Step] = []
    cwd: str | None = None
    tokens: dict[str, int] = {}
    for e, obs in _pairs(history):
        if "action" not in e:
            steps.append(Step(index=len(steps), tool="error", action=_content(e)[:200]))
            continue
        kind = e.get("action")
        if not isinstance(kind, str) or kind in _NOT_STEPS \
                or e.get("source") not in ("agent", None):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        step = Step(index=len(steps), tool=str(kind), usage=_step_usage(e, tokens))
        if kind in ("run", "read", "edit"):
            cwd = apply_action(step, tr, kind, args, obs, cwd)
        else:
            msg = e.get("message")
            step.action = msg if isinstance(msg, str) else str(kind)
        steps.append(step)

    test_result = rec.get("test_result")
    patch = test_result.get("git_patch") if isinstance(test_result, dict) else None
    md = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    llm = md.get("llm_config") if isinstance(md.get("llm_config"), dict) else {}
    inst = rec.get("instance") if isinstance(rec.get("instance"), dict) else {}
    extra: dict[str, Any] = {}
    if rec.get("error"):
        extra["agent_error"] = str(rec["error"])
    return Trajectory(
        instance_id=iid,
        steps=steps,
        run=options.run,
        agent="openhands",
        model=llm.get("model") if isinstance(llm.get("model"), str) else None,
        repo=inst.get("repo") if isinstance(inst.get("repo"), str) else None,
        base_commit=inst.get("base_commit") if isinstance(inst.get("base_commit"), str) else None,
        model_patch=patch if isinstance(patch, str) and patch.strip() else None,
        usage=_usage(rec.get("metrics")),
        resolved=None,
        source=where,
        extra=extra,
    )


# --- preset contextbench: the reference's reading (agents/openhands/extract.py) -----------------

_CB_SKIP = ("git add", "git commit", "rm ", "mkdir", "echo ", "sed -i")
_CB_SED = re.compile(r"sed\s+-n\s+['\"]?(\d+),(\d+)p['\"]?\s+([^\s&|>;<]+)")
_CB_NL = re.compile(r"nl\s+[^|]+\s+([^\s|]+)\s*\|\s*sed\s+-n\s+['\"]?(\d+),(\d+)p")
_CB_HEAD = re.compile(r"\bhead\s+-n\s+(\d+)\s+([^\s&|>]+)")
_CB_CAT = re.compile(r"\bcat\s+(?:-n\s+)?([^\s&|>]+)")
_CB_GREP = re.compile(r"\bgrep\s+.*\s+([^\s&|>;<'\"]+\.(?:py|js|java|go|rs|c|cpp|h|hpp|ts|tsx|jsx"
                      r"|rb|php|cs|kt|scala|swift))(?:\s*(?:\||&|;|$))")


class _CbEmpty(Exception):
    """The reference's extractor raised inside ``_safe_extract_unified``: empty trajectory."""


def _cb_norm(path: Any) -> str:
    if not isinstance(path, str):
        raise _CbEmpty
    p = path.strip().strip("'\"")
    if p.startswith("/testbed/"):
        p = p[len("/testbed/"):]
    if p.startswith("/"):
        p = p.lstrip("/")
    if p.startswith("./"):
        p = p[2:]
    return p


def _cb_int(value: Any) -> int:
    """Python's ``int()`` as the reference applies it to a ``view_range`` bound."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise _CbEmpty from None
    raise _CbEmpty


def _cb_number(value: Any) -> int:
    """A ``start``/``end`` argument compared and used as is (non-numbers make it raise)."""
    if isinstance(value, int):  # bool included, as Python compares it
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _CbEmpty


def _cb_read(args: dict[str, Any]) -> CbStep | None:
    path = args.get("path", "")
    if not path:
        return None
    f = _cb_norm(path)
    if not f:
        return None
    vr = args.get("view_range")
    if vr and isinstance(vr, list) and len(vr) >= 2:
        a, b = _cb_int(vr[0]), _cb_int(vr[1])
        if a > 0 and b > 0:
            return CbStep([f], [(f, a, b)], tool="read", action=f"read {f} {vr}")
    start, end = args.get("start"), args.get("end")
    spans: list[tuple[str, int, int]] = []
    if start is not None and end is not None:
        s, e = _cb_number(start), _cb_number(end)
        if s >= 0 and e > 0:
            spans.append((f, s if s > 0 else 1, e))
    return CbStep([f], spans, tool="read", action=f"read {f}")


def _cb_run(command: Any) -> CbStep | None:
    if not command:
        return None
    if not isinstance(command, str):
        raise _CbEmpty
    if any(kw in command for kw in _CB_SKIP):
        return None
    views: list[tuple[str, int | None, int | None]] = []
    for m in _CB_SED.finditer(command):
        views.append((_cb_norm(m.group(3)), int(m.group(1)), int(m.group(2))))
    for m in _CB_NL.finditer(command):
        views.append((_cb_norm(m.group(1).strip("'\"")), int(m.group(2)), int(m.group(3))))
    for m in _CB_HEAD.finditer(command):
        views.append((_cb_norm(m.group(2).strip("'\"")), 1, int(m.group(1))))
    for m in _CB_CAT.finditer(command):
        views.append((_cb_norm(m.group(1).strip("'\"")), None, None))
    g = _CB_GREP.search(command)
    if g:
        fp = g.group(1).strip("'\"")
        if "/" in fp or not any(c in fp for c in "*?\""):
            views.append((_cb_norm(fp), None, None))
    views = [v for v in dict.fromkeys(views) if v[0]]
    if not views:
        return None
    spans = [(f, a, b) for f, a, b in views if a is not None and b is not None]
    return CbStep(sorted({f for f, _, _ in views}), spans, tool="run", action=command)


def _cb_steps(rec: dict[str, Any]) -> list[CbStep]:
    """``extract_trajectory(record)``; any exception there empties the whole trajectory."""
    try:
        steps: list[CbStep] = []
        for item in rec.get("history") or []:
            if not isinstance(item, dict):
                raise _CbEmpty
            action = item.get("action")
            args = item.get("args", {})
            if not isinstance(args, dict):
                raise _CbEmpty
            step = None
            if action == "read":
                step = _cb_read(args)
            elif action == "run":
                step = _cb_run(args.get("command", ""))
            if step is not None and step.files:
                steps.append(step)
        return steps
    except (_CbEmpty, TypeError, ValueError):
        return []


def _cb_final(steps: list[CbStep]) -> CbStep:
    """``_aggregate_steps``: every file, and every span merged per file."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for s in steps:
        for f, a, b in s.spans:
            by_file.setdefault(f, []).append((a, b))
    spans: list[tuple[str, int, int]] = []
    for f, ranges in by_file.items():
        spans.extend((f, a, b) for a, b in lines_merge_raw(ranges))
    return CbStep(sorted({f for s in steps for f in s.files}), spans)


def _read_contextbench(raw: bytes, path: Path, options: ReadOptions) -> list[Trajectory]:
    """The reference's ``_load_openhands_jsonl``: a bad line or record makes it raise (no row
    for the whole file), a record without an id is skipped, a record whose history cannot be
    read is an empty trajectory (``no_context_extracted``)."""
    where = str(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdapterError(f"not UTF-8 ({exc.reason} at byte {exc.start}); the reference "
                           "raises here", path=where) from exc
    out: list[Trajectory] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise AdapterError(f"invalid JSON ({exc}); the reference raises here", path=where,
                               line=n) from exc
        if not isinstance(rec, dict):
            raise AdapterError("a record must be a JSON object (the reference raises here)",
                               path=where, line=n)
        tr = rec.get("test_result", {})
        if not isinstance(tr, dict):
            raise AdapterError("'test_result' is not an object (the reference raises here)",
                               path=where, line=n, field="test_result")
        patch = tr.get("git_patch", "")
        if patch and not isinstance(patch, str):
            raise AdapterError("'git_patch' is not a string (the reference raises here)",
                               path=where, line=n, field="test_result.git_patch")
        iid = rec.get("instance_id") or rec.get("original_inst_id") or ""
        if not iid:
            continue  # the reference writes no row for it
        if options.instance_id and str(iid) != options.instance_id:
            continue
        steps = _cb_steps(rec)
        final = _cb_final(steps)
        t = cb_trajectory(str(iid), steps, final, options=options, source=path,
                          agent="openhands", model_patch=patch or None)
        t.source = f"{where}:{n}"
        out.append(t)
    if not out:
        raise AdapterError("no OpenHands record with an instance id", path=where)
    return out


def _read_event_list(raw: bytes, path: Path, options: ReadOptions) -> Trajectory:
    """A saved trajectory: the events of one run, without a record around them."""
    where = str(path)
    if is_contextbench(options):
        raise AdapterError("the ContextBench evaluator reads OpenHands output.jsonl records, "
                           "not saved event lists", path=where)
    try:
        events = json.loads(raw)
    except (ValueError, UnicodeError) as exc:
        raise AdapterError(f"not valid JSON ({exc})", path=where) from exc
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise AdapterError("a saved trajectory is a JSON array of event objects", path=where)
    iid = options.instance_id or instance_id_from_path(path) or path.stem
    return trajectory_from_record({"instance_id": iid, "history": events}, where, 1, options)


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    """Every readable record; bad records are reported on the first trajectory and skipped."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=where) from exc
    if raw.lstrip().startswith(b"["):
        return [_read_event_list(raw, path, options)]
    if is_contextbench(options):
        return _read_contextbench(raw, path, options)
    out: list[Trajectory] = []
    problems: list[Problem] = []
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise AdapterError("a record must be a JSON object", path=where, line=n)
            if options.instance_id and rec.get("instance_id") not in (None, options.instance_id):
                continue
            out.append(trajectory_from_record(rec, where, n, options))
        except AdapterError as exc:
            problems.append(exc.to_problem())
        except (ValueError, UnicodeError) as exc:
            problems.append(Problem("bad_trajectory", f"not valid JSON ({exc})", where, n))
    if not out:
        if problems:
            p = problems[0]
            raise AdapterError(p.message, path=p.path, line=p.line, field=p.field)
        raise AdapterError("no OpenHands records", path=where)
    if problems:
        out[0].extra["problems"] = [p.to_json() for p in problems]
    return out
