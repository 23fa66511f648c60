"""OpenHands V1 conversations (the ``software-agent-sdk`` event store that replaced v0's
``output.jsonl`` records).

A conversation directory holds ``base_state.json`` and ``events/event-<index>-<id>.json``, one
typed event per file (``"kind": "ActionEvent"``, ``"ObservationEvent"``, ``"MessageEvent"``,
``"AgentErrorEvent"``, ``"ConversationStateUpdateEvent"``, ...). Accepted here: that directory,
its ``events/`` directory, or the same events as JSON lines or a JSON array.

Every ``ActionEvent`` is a step; its observation is the ``ObservationEvent`` whose ``action_id``
is the action's ``id`` (else the one with its ``tool_call_id``). A ``UserRejectObservation`` or
``AgentErrorEvent`` answering it shows nothing; an ``AgentErrorEvent`` answering no action (a
call the framework could not parse) is a step of its own, as in v0. The ``terminal``
(``execute_bash`` in early SDK versions) and ``file_editor`` (``str_replace_editor``) tools are
read by the v0 reader's :func:`ctxeval.reading.adapters.openhands.apply_action`: ``view`` results
are ``cat -n`` blocks, commands go through the shell reader, and an edit whose observation carries
the file's ``old_content``/``new_content`` is mapped back exactly from their difference. Other tools
(``task_tracker``, ``finish``, ``think``, browser tools) are steps without views.

Usage: ``ConversationStateUpdateEvent``s with key ``stats`` carry every LLM's accumulated usage
(``usage_to_metrics``); the growth since the previous update is charged to the next action, and
the run's usage is the last update (else ``base_state.json``'s ``stats``), summed over the LLMs
(the agent's and the condenser's).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from . import ReadOptions
from ._sessions import json_document
from .openhands import apply_action, tool_kind
from .swe_agent import EditTracker

FORMAT = "openhands-v1"
PRIORITY = 35

_EVENT_FILE = re.compile(r"^event-(\d{5,})-[0-9A-Za-z\-]+\.json$")
_KIND = re.compile(rb'"kind"\s*:\s*"(?:ActionEvent|ObservationEvent|MessageEvent|'
                   rb'SystemPromptEvent|ConversationStateUpdateEvent|AgentErrorEvent)"')


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return bool(_event_files(path))
    start = head.lstrip()[:1]
    return start in (b"{", b"[") and bool(_KIND.search(head))


def _event_files(path: Path) -> list[Path]:
    """The event files of a conversation directory or of its ``events/`` directory, in order."""
    d = path / "events" if (path / "events").is_dir() else path
    found = []
    try:
        for f in d.iterdir():
            m = _EVENT_FILE.match(f.name)
            if m and f.is_file():
                found.append((int(m.group(1)), f))
    except OSError:
        return []
    return [f for _, f in sorted(found)]


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    where = str(path)
    if path.is_dir():
        events = []
        for f in _event_files(path):
            events.append(_load(f))
        if not events:
            raise AdapterError("no events/event-*.json files", path=where)
        conv = path if (path / "events").is_dir() else path.parent
    else:
        events = _events_of_file(path)
        conv = path.parent
    state = _base_state(conv)
    iid = options.instance_id or _instance_id(path, conv)
    return [_trajectory(events, iid, where, options, state)]


def _load(f: Path) -> dict[str, Any]:
    obj = json_document(f)
    if not isinstance(obj, dict):
        raise AdapterError("an event must be a JSON object", path=str(f))
    return obj


def _events_of_file(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read: {exc}", path=str(path)) from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path),
                               line=exc.lineno) from exc
        if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
            raise AdapterError("an event list must be a JSON array of objects", path=str(path))
        return data
    out = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines):  # a log still being written: the last line is cut
                break
            raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path), line=n) from exc
        if not isinstance(obj, dict):
            raise AdapterError("an event must be a JSON object", path=str(path), line=n)
        out.append(obj)
    return out


def _base_state(conv: Path) -> dict[str, Any]:
    try:
        obj = json.loads((conv / "base_state.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _instance_id(path: Path, conv: Path) -> str:
    if path.is_dir():
        return conv.name
    return path.stem


def _obs_text(obs: dict[str, Any]) -> str:
    content = obs.get("content")
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content
                         if isinstance(c, dict) and isinstance(c.get("text"), str))
    if isinstance(content, str):
        return content
    out = obs.get("output")  # early SDK versions
    return out if isinstance(out, str) else ""


def _as_v0_observation(ev: dict[str, Any] | None) -> dict[str, Any] | None:
    """The observation in the v0 shape :func:`apply_action` reads (``content``, ``extras``)."""
    if ev is None or ev.get("kind") != "ObservationEvent":
        return None  # rejected or failed: nothing was shown
    obs = ev.get("observation") if isinstance(ev.get("observation"), dict) else {}
    text = _obs_text(obs)
    md = obs.get("metadata") if isinstance(obs.get("metadata"), dict) else {}
    metadata = {"exit_code": obs.get("exit_code") if isinstance(obs.get("exit_code"), int)
                else md.get("exit_code"), "working_dir": md.get("working_dir")}
    extras: dict[str, Any] = {"metadata": metadata}
    old, new = obs.get("old_content"), obs.get("new_content")
    if isinstance(old, str) and isinstance(new, str) and old != new:
        extras["diff"] = "".join(difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "a", "b", n=0))
    if obs.get("is_error") is True and "Terminal" not in str(obs.get("kind")) \
            and "Bash" not in str(obs.get("kind")):
        text = "ERROR: " + text  # an editor error shows no file
    return {"content": text, "extras": extras}


def _action_args(ev: dict[str, Any]) -> dict[str, Any]:
    action = ev.get("action")
    if isinstance(action, dict):
        return {k: v for k, v in action.items() if k != "kind"}
    call = ev.get("tool_call") if isinstance(ev.get("tool_call"), dict) else {}
    raw = call.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        args = None
    return args if isinstance(args, dict) else {}


def _stats_total(stats: Any) -> Usage | None:
    """Accumulated usage over every LLM of a ``stats`` value."""
    per = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(per, dict):
        return None
    parts = []
    for m in per.values():
        if not isinstance(m, dict):
            continue
        acc = m.get("accumulated_token_usage") if isinstance(m.get("accumulated_token_usage"),
                                                             dict) else {}
        cost = m.get("accumulated_cost")
        parts.append(Usage.from_json({"input_tokens": acc.get("prompt_tokens"),
                                      "output_tokens": acc.get("completion_tokens"),
                                      "cost": cost if cost else None}))
    return Usage.total(parts)


def _delta(cur: Usage | None, prev: Usage | None) -> Usage | None:
    if cur is None:
        return None
    d = Usage()
    for k in ("input_tokens", "output_tokens", "cost"):
        a, b = getattr(cur, k), getattr(prev, k) if prev is not None else None
        if a is not None:  # costs are floats: drop the noise of subtracting running sums
            setattr(d, k, round(a - (b or 0), 12) if k == "cost" else a - (b or 0))
    if any(v is not None and v < 0 for v in (d.input_tokens, d.output_tokens, d.cost)):
        return None
    return None if d.is_empty() or (not d.input_tokens and not d.output_tokens) else d


def _trajectory(events: list[dict[str, Any]], iid: str, where: str, options: ReadOptions,
                state: dict[str, Any]) -> Trajectory:
    by_action: dict[str, dict[str, Any]] = {}
    by_call: dict[str, dict[str, Any]] = {}
    call_ids = {e.get("tool_call_id") for e in events if e.get("kind") == "ActionEvent"}
    for e in events:
        if e.get("kind") in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            if isinstance(e.get("action_id"), str):
                by_action.setdefault(e["action_id"], e)
            if isinstance(e.get("tool_call_id"), str):
                by_call.setdefault(e["tool_call_id"], e)
    tr = EditTracker()
    cwd: str | None = None
    steps: list[Step] = []
    prev_total: Usage | None = None
    total: Usage | None = None
    pending: Usage | None = None
    responses: set[str] = set()
    for e in events:
        kind = e.get("kind")
        if kind == "ConversationStateUpdateEvent" and e.get("key") == "stats":
            cur = _stats_total(e.get("value"))
            if cur is not None:
                d = _delta(cur, prev_total)
                pending = d if pending is None else Usage.total([pending, d])
                prev_total = total = cur
            continue
        if kind == "AgentErrorEvent" and e.get("tool_call_id") not in call_ids:
            err = e.get("error")
            steps.append(Step(index=len(steps), tool="error",
                              action=err[:200] if isinstance(err, str) else ""))
            continue
        if kind != "ActionEvent":
            continue
        tool = e.get("tool_name") if isinstance(e.get("tool_name"), str) else "?"
        args = _action_args(e)
        step = Step(index=len(steps), tool=tool)
        rid = e.get("llm_response_id")
        if isinstance(rid, str) and rid not in responses:
            responses.add(rid)
            step.usage, pending = pending, None
        obs_ev = by_action.get(e.get("id")) if isinstance(e.get("id"), str) else None
        if obs_ev is None and isinstance(e.get("tool_call_id"), str):
            obs_ev = by_call.get(e["tool_call_id"])
        okind = tool_kind(tool, args) if isinstance(e.get("action"), dict) else None
        if okind is not None:
            cwd = apply_action(step, tr, okind, args, _as_v0_observation(obs_ev), cwd)
        else:
            shown = json.dumps(args, ensure_ascii=False, sort_keys=True) if args else ""
            step.action = f"{tool} {shown}".strip()
        steps.append(step)
    if not events:
        raise AdapterError("no events", path=where)
    if total is None:
        total = _stats_total(state.get("stats"))
    if total is not None and responses:
        total.api_calls = len(responses)
    agent = state.get("agent") if isinstance(state.get("agent"), dict) else {}
    llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
    model = llm.get("model") if isinstance(llm.get("model"), str) else None
    return Trajectory(instance_id=iid, steps=steps, run=options.run, agent="openhands",
                      model=model, usage=total, source=where,
                      extra={"openhands_format": "v1"})
