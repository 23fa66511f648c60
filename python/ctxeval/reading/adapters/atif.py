"""ATIF, the Agent Trajectory Interchange Format (Harbor's RFC 0001, ``ATIF-v1.0`` … ``v1.7``).

One JSON document per trial (Harbor writes ``<trial>/agent/trajectory.json``): ``agent {name,
version, model_name, extra}``, ``steps [{step_id, source, message, tool_calls [{tool_call_id,
function_name, arguments}], observation {results [{source_call_id, content,
subagent_trajectory_ref}]}, metrics}]``, ``final_metrics``, ``continued_trajectory_ref`` and (v1.7)
embedded ``subagent_trajectories``.

ATIF only re-packages what the agent did, so the calls are read with the semantics of the agent
named by ``agent.name``, through that agent's own reader (one piece of code per tool):

- ``claude-code``: :func:`ctxeval.reading.adapters.claude_code.call_step`/``observe``. Harbor
appends
  the ``toolUseResult`` record to a result's text (``[stdout]``, ``[metadata]``, ...); the text the
  model saw is the raw ``tool_result`` block Harbor keeps in the result's
  ``extra.tool_result_metadata.raw_tool_result``, else the text before those sections.
- ``codex``: :func:`ctxeval.reading.adapters.codex.call`/``observe_call`` on the rebuilt
  ``function_call`` item; the exit code is the step's ``extra.tool_metadata.exit_code``. Harbor
  keeps the call's ``name`` but not its ``namespace``: an MCP call named ``mcp__<server>__<tool>``
  or ``<server>__<tool>`` reaches the MCP reader, one named by its tool alone (Codex since May
  2026) is a step without views.
- ``gemini-cli``: :func:`ctxeval.reading.adapters.gemini_cli.call_step`/``observe``; a call
  whose result has no content failed. The working directory (not in ATIF) is inferred where an
  absolute and a relative path name the same file.
- ``opencode``: :func:`ctxeval.reading.adapters.opencode.call_step`/``observe``, a result
  without content a failed call; the working directory inferred as for ``gemini-cli``.
- ``mini-swe-agent``: the messages are rebuilt (system, user, assistant with its ``tool_calls``,
  each result a ``tool`` message — or a ``user`` one when the step made no tool call) and read by
  :func:`ctxeval.reading.adapters.mini_swe_agent.message_steps`; ``agent.extra.original_format``
  picks the message format. Harbor drops the final ``exit`` message, so a last step that submits
  (``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) gets it back: it is a step that views nothing, as
  natively. ATIF keeps no working directory: when the agent's commands name ``/testbed`` (the
  SWE-bench images' working directory) it is taken as the working directory, so that a file
  edited by absolute path and viewed by relative path is one file; else paths stay as written.
- ``openhands`` / ``openhands-sdk``: ``execute_bash``/``terminal`` and
  ``str_replace_editor``/``file_editor`` calls through
  :func:`ctxeval.reading.adapters.openhands.apply_action`.
- ``terminus``/``terminus-2``: the keystroke batch of an agent step (``bash_command`` calls, or
  the ``commands`` of its JSON/XML reply) is one step per command. The observation is a terminal
  screen: each command's output is the text after the prompt line echoing it, up to the next
  prompt; a command whose echo is not on the screen (scrolled off, never run) shows nothing.
- any other agent: a call with a string ``command``/``cmd`` argument is read as a shell command;
  other calls are steps without views.

``source: "agent"`` steps with calls are steps; user and system steps and plain replies are not.
Steps marked ``is_copied_context`` (copied across a summarization boundary) are skipped: they were
read in the earlier segment. A ``continued_trajectory_ref`` (a file next to this one) is joined.
Subagent trajectories (``subagent_trajectory_ref`` of a result, found by ``trajectory_id`` among
the embedded ``subagent_trajectories`` or by ``trajectory_path`` next to this file) are read with
their own agent's semantics and inserted after the step that started them, each step's
``subagent`` naming the subagent trajectory.

Usage: a step's ``metrics`` (``prompt_tokens`` already includes cached tokens,
``completion_tokens``, ``cost_usd``) go to its first call; the run's usage is ``final_metrics``.
A continued run: Harbor's Terminus writes the whole run's totals in the last segment, so the last
segment's totals are taken when they reach its own steps' tokens plus the earlier segments'
totals, else the segments' totals are summed.

Claude Code under Harbor: the converter writes one step per content block of an API message
(thinking, text, each tool call), every one carrying the whole message's ``metrics``, and sums
them all into ``final_metrics`` (on CodeContextBench's runs 2.2 times the tokens the run used).
Consecutive steps with the same prompt, cached and cache-creation tokens are one message: it is
counted once, with its largest ``completion_tokens`` (the last block's), its input counting
cache writes as the session log's does, and charged to its first call. The run's usage is the
stream-json log's ``result`` record when the log is beside the file, else the sum of its
messages when the file has several blocks per message, else ``final_metrics``. The blocks of
a message come in the order their results came back (parallel calls), each stamped with the
time it was streamed: they are read in that time's order, the order of the stream-json log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, Usage
from ..mcp import McpRun
from ..shell import read_shell
from . import (
    ReadOptions,
    claude_code,
    claude_code_stream,
    codex,
    gemini_cli,
    mini_swe_agent,
    opencode,
    openhands,
)
from ._sessions import (
    harbor_task,
    infer_cwd,
    json_document,
    mark_views_after_edits,
    relative_to,
)
from .swe_agent import EditTracker

FORMAT = "atif"
PRIORITY = 25

_FILE = "trajectory.json"
_SCHEMA = re.compile(rb'"schema_version"\s*:\s*"(?:ATIF-)?v?1\.\d+"')
_SWEBENCH_ROOT = "/testbed"
_MAX_DEPTH = 8  # nested subagents and continuation chains deeper than this are refused


def detect(path: Path, head: bytes) -> bool:
    """A JSON object declaring an ATIF ``schema_version``; a directory holding one as
    ``trajectory.json`` (Harbor's ``agent/`` folder, which also holds continuation and subagent
    files that are parts of it, not runs of their own)."""
    if path.is_dir():
        f = path / _FILE
        if not f.is_file():
            return False
        try:
            with f.open("rb") as fh:
                head = fh.read(64 * 1024)
        except OSError:
            return False
    return head.lstrip().startswith(b"{") and bool(_SCHEMA.search(head)) \
        and b'"agent"' in head


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    file = path / _FILE if path.is_dir() else path
    doc = _load(file)
    warnings: list[str] = []
    reading = _Reading(file, doc, warnings)
    steps = reading.steps()
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    extra: dict[str, Any] = {"atif_schema_version": doc.get("schema_version")}
    if isinstance(agent.get("name"), str):
        extra["atif_agent"] = agent["name"]
    if isinstance(agent.get("version"), str):
        extra["agent_version"] = agent["version"]
    if len(reading.segments) > 1:
        extra["atif_segments"] = len(reading.segments)
    if warnings:
        extra["read_warnings"] = warnings
    return [Trajectory(
        instance_id=options.instance_id or _instance_id(file, doc),
        steps=steps,
        run=options.run,
        agent=_agent_name(doc),
        model=agent.get("model_name") if isinstance(agent.get("model_name"), str) else None,
        usage=reading.usage(),
        source=str(file),
        extra=extra,
    )]


# --- the document -----------------------------------------------------------------------------


def _load(file: Path) -> dict[str, Any]:
    doc = json_document(file)
    if not isinstance(doc, dict):
        raise AdapterError("an ATIF trajectory is a JSON object", path=str(file))
    if not isinstance(doc.get("steps"), list):
        raise AdapterError("missing list 'steps'", path=str(file), field="steps")
    if not isinstance(doc.get("agent"), dict):
        raise AdapterError("missing object 'agent'", path=str(file), field="agent")
    return doc


def _agent_name(doc: dict[str, Any]) -> str | None:
    name = doc.get("agent", {}).get("name")
    return name.strip().lower() if isinstance(name, str) and name.strip() else None


def _instance_id(file: Path, doc: dict[str, Any]) -> str:
    """The task of a Harbor trial (``<trial>/result.json``'s ``task_name``), else the trial
    directory's name without Harbor's ``__<7 chars>`` suffix, else the session id or file name."""
    task = harbor_task(file)
    if task:
        return task
    sid = doc.get("session_id")
    if file.name == _FILE and isinstance(sid, str) and sid:
        return sid
    return file.stem


def _text(content: Any) -> str:
    """A message or result: a string, or (v1.6+) a list of content parts of which the text ones
    count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _num(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _metrics_usage(m: Any) -> Usage | None:
    if not isinstance(m, dict):
        return None
    cost = m.get("cost_usd")
    return Usage.from_json({"input_tokens": _num(m.get("prompt_tokens")),
                            "output_tokens": _num(m.get("completion_tokens")),
                            "cost": cost if isinstance(cost, (int, float)) else None})


def _final_usage(fm: Any) -> Usage | None:
    if not isinstance(fm, dict):
        return None
    return _metrics_usage({"prompt_tokens": fm.get("total_prompt_tokens"),
                           "completion_tokens": fm.get("total_completion_tokens"),
                           "cost_usd": fm.get("total_cost_usd")})


def _cc_key(st: dict[str, Any]) -> tuple[Any, ...] | None:
    """What identifies the API message a Claude Code step came from in Harbor's rendering: the
    message's prompt, cached and cache-creation tokens (every block of it carries them)."""
    m = st.get("metrics")
    if not isinstance(m, dict) or _num(m.get("prompt_tokens")) is None:
        return None
    ex = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    side = (st.get("extra") or {}).get("is_sidechain") if isinstance(st.get("extra"), dict) \
        else None
    return (m.get("prompt_tokens"), m.get("cached_tokens"), ex.get("cache_creation_input_tokens"),
            ex.get("cache_read_input_tokens"), side)


def _cc_messages(steps: list[dict[str, Any]]) -> list[int]:
    """The message each agent step belongs to (consecutive steps with one key share one); a
    step without metrics is a message of its own."""
    out: list[int] = []
    prev: tuple[Any, ...] | None = None
    for st in steps:
        key = _cc_key(st)
        if out and key is not None and key == prev:
            out.append(out[-1])
        else:
            out.append(out[-1] + 1 if out else 0)
        prev = key
    return out


def _cc_usage(group: list[dict[str, Any]]) -> Usage | None:
    """One Claude Code message's usage from its steps: input with cache writes, the largest
    completion count."""
    ms = [st.get("metrics") for st in group if isinstance(st.get("metrics"), dict)]
    if not ms:
        return None
    m = ms[0]
    ex = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    ins = [_num(m.get("prompt_tokens")), _num(ex.get("cache_creation_input_tokens"))]
    outs = [o for o in (_num(x.get("completion_tokens")) for x in ms) if o is not None]
    costs = [x.get("cost_usd") for x in ms if isinstance(x.get("cost_usd"), (int, float))]
    return Usage.from_json({"input_tokens": sum(v for v in ins if v is not None)
                            if ins[0] is not None else None,
                            "output_tokens": max(outs) if outs else None,
                            "cost": max(costs) if costs else None})


# --- calls and their results ------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    """One tool call of an agent step, with the result that answered it (if any)."""

    call_id: str | None
    name: str
    args: dict[str, Any]
    result: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return _text(self.result.get("content")) if self.result else ""


@dataclass(slots=True)
class _Turn:
    """An agent step of the document: its calls, its step-level record and its usage."""

    step: dict[str, Any]
    calls: list[_Call]
    results: list[dict[str, Any]]
    usage: Usage | None
    subagent_refs: list[dict[str, Any]] = field(default_factory=list)


def _turn(st: dict[str, Any]) -> _Turn:
    obs = st.get("observation") if isinstance(st.get("observation"), dict) else {}
    results = [r for r in obs.get("results", []) if isinstance(r, dict)] \
        if isinstance(obs.get("results"), list) else []
    calls = []
    for tc in st.get("tool_calls") or []:
        if not isinstance(tc, dict):
            continue
        args = tc.get("arguments")
        calls.append(_Call(tc.get("tool_call_id") if isinstance(tc.get("tool_call_id"), str)
                           and tc.get("tool_call_id") else None,
                           tc.get("function_name") if isinstance(tc.get("function_name"), str)
                           else "", args if isinstance(args, dict) else {}))
    by_id = {c.call_id: c for c in calls if c.call_id}
    loose = []
    for r in results:
        sid = r.get("source_call_id")
        target = by_id.get(sid) if isinstance(sid, str) else None
        if target is not None and target.result is None:
            target.result = r
        elif r.get("content") is not None:
            loose.append(r)
    # results without an id answer the calls left unanswered, in order
    waiting = [c for c in calls if c.result is None]
    for c, r in zip(waiting, loose, strict=False):
        c.result = r
    refs = [ref for r in results for ref in (r.get("subagent_trajectory_ref") or [])
            if isinstance(ref, dict)]
    return _Turn(st, calls, results, _metrics_usage(st.get("metrics")), refs)


def _cwd(doc: dict[str, Any], st: dict[str, Any] | None) -> str | None:
    """The session's working directory where the converter kept it (Harbor's Claude Code
    rendering: a step's ``extra.cwd``, the agent's ``extra.cwds``)."""
    ex = st.get("extra") if st and isinstance(st.get("extra"), dict) else {}
    if isinstance(ex.get("cwd"), str) and ex["cwd"]:
        return ex["cwd"]
    aex = doc.get("agent", {}).get("extra")
    if isinstance(aex, dict):
        for key in ("cwd", "cwds"):
            v = aex.get(key)
            if isinstance(v, str) and v:
                return v
            if isinstance(v, list) and v and isinstance(v[0], str):
                return v[0]
    return None


# --- per-agent readers: (document, agent steps) -> [(turn position, Step)] ---------------------

_Placed = list[tuple[int, Step]]


_LOOK = object()


def _claude_code(doc: dict[str, Any], turns: list[_Turn], file: Path | None = None,
                 warnings: list[str] | None = None, twin: Any = _LOOK) -> _Placed:
    """Claude Code's calls, read with its own tool semantics; with Claude Code's stream-json
    log beside the file (Harbor's ``claude-code.txt``) for the same session, each result's text
    is the log's (Harbor strips it) and the subagents the ATIF leaves out are read from it."""
    if twin is _LOOK:
        twin = _stream_twin(doc, file, warnings)
    msg = _cc_messages([t.step for t in turns])
    msg_usage = {g: _cc_usage([t.step for t, h in zip(turns, msg, strict=True) if h == g])
                 for g in set(msg)}
    charged: set[int] = set()
    sidechains = any(t.step.get("extra", {}).get("is_sidechain") is True for t in turns
                     if isinstance(t.step.get("extra"), dict))
    mcp = McpRun()
    out: _Placed = []
    # paths are the repository's: relative to the session's starting directory, which a
    # ``cd`` in a Bash call does not move (the step's ``extra.cwd`` follows it)
    root = _cwd(doc, None) or next((_cwd(doc, t.step) for t in turns), None)
    for pos, i in _emission_order(turns, msg):
        t = turns[i]
        cwd = _cwd(doc, t.step)
        ex = t.step.get("extra") if isinstance(t.step.get("extra"), dict) else {}
        sub = (_str_or_none(ex.get("agent_id")) or "sidechain") \
            if ex.get("is_sidechain") is True else None
        for c in t.calls:
            step = claude_code.call_step(c.name, c.args, len(out), cwd, root=root)
            step.subagent = sub
            if msg[pos] not in charged:
                step.usage = msg_usage[msg[pos]]
                charged.add(msg[pos])
            out.append((pos, step))
            shown = twin.results.get(c.call_id) if twin and c.call_id else None
            if shown is not None:
                claude_code.observe(step, c.args, shown[0], shown[1], cwd, mcp=mcp,
                                    structured=shown[2], root=root)
            elif c.result is not None:
                text, is_error = _claude_result(c.result, ex if len(t.calls) == 1 else None)
                claude_code.observe(step, c.args, text, is_error, cwd, mcp=mcp, root=root)
            if twin and not sidechains and c.call_id in twin.subagents:
                label = twin.labels.get(c.call_id, c.call_id)
                for raw in twin.subagents[c.call_id]:
                    s = claude_code.call_step(raw.name, raw.args, len(out), cwd, root=root)
                    s.subagent, s.usage = label, raw.usage
                    if raw.result is not None:
                        claude_code.observe(s, raw.args, raw.result[0], raw.result[1], cwd,
                                            mcp=mcp, structured=raw.result[2], root=root)
                    out.append((pos, s))
    if warnings is not None:
        warnings.extend(mcp.finish())
    else:
        mcp.finish()
    if sidechains:
        out = _sidechains_in_time(turns, out)
    mark_views_after_edits([s for _, s in out])
    return out


def _emission_order(turns: list[_Turn], msg: list[int]) -> list[tuple[int, int]]:
    """(slot, turn) pairs: the turns in the order Claude Code made the calls.

    Harbor writes the blocks of one API message (thinking, text, parallel tool calls) as
    consecutive steps in the order their results came back, each stamped with the time its
    block was streamed: within a message the steps are put back in that order (a stable sort on
    the timestamps, only when every step of the message has one that parses), into the same
    slots, so that the ATIF file and the stream-json log of a run number its calls alike."""
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(turns):
        end = start
        while end + 1 < len(turns) and msg[end + 1] == msg[start]:
            end += 1
        slots = list(range(start, end + 1))
        stamps = [_timestamp(turns[k].step) for k in slots]
        known = [x for x in stamps if x is not None]
        order = slots
        if len(slots) > 1 and len(known) == len(slots):
            order = [k for _, k in sorted(zip(known, slots, strict=True), key=lambda p: p[0])]
        out.extend(zip(slots, order, strict=True))
        start = end + 1
    return out


def _timestamp(st: dict[str, Any]) -> datetime | None:
    v = st.get("timestamp")
    if not isinstance(v, str) or not v:
        return None
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _stream_twin(doc: dict[str, Any], file: Path | None, warnings: list[str] | None
                 ) -> claude_code_stream.StreamRun | None:
    """The stream-json log of the same session beside an ATIF file, read; None when there is
    none, it is of another session, or it cannot be read."""
    if file is None:
        return None
    twin = file.parent / claude_code_stream.HARBOR_LOG
    if not twin.is_file():
        return None
    try:
        run = claude_code_stream.read_stream(twin)
    except AdapterError as exc:
        if warnings is not None:
            warnings.append(f"{claude_code_stream.HARBOR_LOG} beside the ATIF not read: "
                            f"{exc.message}")
        return None
    if run.session_id != doc.get("session_id"):
        return None
    return run


def _sidechains_in_time(turns: list[_Turn], placed: _Placed) -> _Placed:
    """Harbor writes a session's sidechain (subagent) events before the others; put each
    sidechain step back after the last agent step that started before it."""
    stamp = [str(t.step.get("timestamp") or "") for t in turns]
    main = [(p, s) for p, s in placed if s.subagent is None]
    side = [(p, s) for p, s in placed if s.subagent is not None]
    out: _Placed = []
    k = 0
    for p, s in main:
        while k < len(side) and stamp[side[k][0]] and stamp[side[k][0]] < stamp[p]:
            out.append((p, side[k][1]))
            k += 1
        out.append((p, s))
    out.extend(side[k:])
    return out


_HARBOR_SECTIONS = re.compile(
    r"(?:\A|\n\n)\[(?:stdout|stderr)\]\n"
    r"|(?:\A|\n\n)\[(?:exit_code|interrupted|is_image|metadata)\] "
    r"|(?:\A|\n\n)\[error\] tool reported failure\Z")


def _claude_result(result: dict[str, Any], step_extra: dict[str, Any] | None = None
                   ) -> tuple[str, bool]:
    """The text the model was shown and whether the tool failed (see the module docstring).

    Harbor keeps the raw block and the error flag on the result's ``extra``, or (its renderings
    of early 2026, one call per step) on the step's: ``step_extra`` is that step's ``extra``
    when the step made this call alone."""
    ex = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    if not ex.get("tool_result_metadata") and step_extra \
            and isinstance(step_extra.get("tool_result_metadata"), dict):
        ex = step_extra
    md = ex.get("tool_result_metadata") if isinstance(ex.get("tool_result_metadata"), dict) \
        else {}
    raw = md.get("raw_tool_result")
    text = _text(result.get("content"))
    failed = ex.get("tool_result_is_error") is True \
        or text.endswith("[error] tool reported failure")
    if isinstance(raw, dict) and "content" in raw:
        content = raw["content"]
        if isinstance(content, list):
            content = "\n".join(c["text"] for c in content
                                if isinstance(c, dict) and isinstance(c.get("text"), str))
        return (content if isinstance(content, str) else ""), failed or raw.get("is_error") is True
    m = _HARBOR_SECTIONS.search(text)
    return (text[:m.start()] if m else text), failed


def _codex(doc: dict[str, Any], turns: list[_Turn], warnings: list[str]) -> _Placed:
    out: _Placed = []
    mcp = McpRun()
    for pos, t in enumerate(turns):
        cwd = _cwd(doc, t.step)
        ex = t.step.get("extra") if isinstance(t.step.get("extra"), dict) else {}
        meta = ex.get("tool_metadata") if isinstance(ex.get("tool_metadata"), dict) else None
        for k, c in enumerate(t.calls):
            item = {"type": "function_call", "name": c.name, "arguments": c.args,
                    "call_id": c.call_id}
            call = codex.call(item, len(out))
            if k == 0:
                call.step.usage = t.usage
            out.append((pos, call.step))
            if c.result is None:
                continue
            if call.kind == "shell":
                output: Any = {"output": c.text, **({"metadata": meta} if meta else {})}
            else:
                output = c.text
            codex.observe_call(call, output, cwd, warnings, mcp=mcp)
    mark_views_after_edits([s for _, s in out])
    warnings.extend(mcp.finish())
    return out


def _gemini_cli(doc: dict[str, Any], turns: list[_Turn], warnings: list[str]) -> _Placed:
    """Harbor's Gemini CLI rendering: each ``toolCalls`` entry a call (``function_name``,
    ``arguments``), its result the ``functionResponse``'s ``output`` (no content when the tool
    failed). ATIF keeps neither the project hash nor the display names: the working directory
    is inferred from the paths, and an MCP tool is known by its ``mcp_<server>_<tool>`` name."""
    out: _Placed = []
    mcp = McpRun()
    for pos, t in enumerate(turns):
        for k, c in enumerate(t.calls):
            step = gemini_cli.call_step(c.name, c.args, len(out), None)
            if k == 0:
                step.usage = t.usage
            out.append((pos, step))
            if c.result is not None:
                content = c.result.get("content")
                gemini_cli.observe(step, c.args, c.text, content is None, None, warnings,
                                   mcp=mcp)
    return _relative_run(doc, out, warnings, mcp)


def _relative_run(doc: dict[str, Any], out: _Placed, warnings: list[str], mcp: McpRun
                  ) -> _Placed:
    """The end of a run read without a working directory (Gemini CLI's and OpenCode's ATIF
    renderings keep none): paths made relative to the one the converter kept or the one the
    paths imply, views after edits marked, the run's MCP warnings collected."""
    steps = [s for _, s in out]
    cwd = _cwd(doc, None) or infer_cwd(steps)
    if cwd is not None:
        relative_to(steps, cwd)
    mark_views_after_edits(steps)
    warnings.extend(mcp.finish())
    return out


def _opencode(doc: dict[str, Any], turns: list[_Turn], warnings: list[str]) -> _Placed:
    """Harbor's OpenCode rendering (from ``opencode run --format json``): each tool part a call
    (``function_name`` the tool, ``arguments`` its input), its result the part's output (none
    when the call failed; the exit code is not kept)."""
    out: _Placed = []
    mcp = McpRun()
    for pos, t in enumerate(turns):
        for k, c in enumerate(t.calls):
            step = opencode.call_step(c.name, c.args, len(out), None)
            if k == 0:
                step.usage = t.usage
            out.append((pos, step))
            content = c.result.get("content") if c.result is not None else None
            state = {"status": "completed" if content is not None else "error",
                     "input": c.args, "output": c.text}
            opencode.observe(step, state, None, warnings, mcp)
    return _relative_run(doc, out, warnings, mcp)


def _mini_swe_agent(doc: dict[str, Any], turns_all: list[dict[str, Any]]) -> list[Step]:
    """Rebuild the run's messages and read them as mini-swe-agent's own files are read."""
    messages: list[dict[str, Any]] = []
    for st in turns_all:
        src = st.get("source")
        msg = _text(st.get("message"))
        if src in ("system", "user"):
            messages.append({"role": src, "content": msg})
            continue
        if src != "agent":
            continue
        t = _turn(st)
        m: dict[str, Any] = {"role": "assistant", "content": msg}
        if t.calls:
            m["tool_calls"] = [{"id": c.call_id, "type": "function",
                                "function": {"name": c.name, "arguments": c.args}}
                               for c in t.calls]
        metrics = st.get("metrics") if isinstance(st.get("metrics"), dict) else {}
        m["extra"] = {"response": {"usage": {"prompt_tokens": metrics.get("prompt_tokens"),
                                             "completion_tokens":
                                                 metrics.get("completion_tokens"),
                                             "cost": metrics.get("cost_usd")}}}
        messages.append(m)
        for k, r in enumerate(t.results):
            if r.get("content") is None:
                continue
            if t.calls:
                cid = r.get("source_call_id") if isinstance(r.get("source_call_id"), str) \
                    else (t.calls[k].call_id if k < len(t.calls) else None)
                messages.append({"role": "tool", "tool_call_id": cid,
                                 "content": _text(r.get("content"))})
            else:
                messages.append({"role": "user", "content": _text(r.get("content"))})
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and mini_swe_agent.SUBMIT in json.dumps(
            last.get("tool_calls") or last.get("content")):
        messages.append({"role": "exit", "content": ""})  # Harbor drops the exit message
    aex = doc.get("agent", {}).get("extra")
    aex = aex if isinstance(aex, dict) else {}
    cfg = aex.get("agent_config") if isinstance(aex.get("agent_config"), dict) else {}
    fmt = aex.get("original_format") if isinstance(aex.get("original_format"), str) else ""
    cwd = _cwd(doc, None)
    if cwd is None and any(_SWEBENCH_ROOT in json.dumps(m.get("tool_calls") or m["content"])
                           for m in messages if m.get("role") == "assistant"):
        cwd = _SWEBENCH_ROOT  # the commands name the SWE-bench image's working directory
    return mini_swe_agent.message_steps(messages, cwd, fmt, cfg.get("action_regex"))


def _openhands(doc: dict[str, Any], turns: list[_Turn]) -> _Placed:
    out: _Placed = []
    tr = EditTracker()
    cwd = _cwd(doc, None)
    for pos, t in enumerate(turns):
        for k, c in enumerate(t.calls):
            kind = openhands.tool_kind(c.name, c.args)
            step = Step(index=len(out), tool=kind or c.name, usage=t.usage if k == 0 else None)
            if kind is not None:
                obs = {"content": c.text} if c.result is not None else None
                cwd = openhands.apply_action(step, tr, kind, c.args, obs, cwd)
            else:
                step.action = _shown(c)
            out.append((pos, step))
    return out


_PROMPT_LINE = re.compile(r"^\S+@\S+?:[^\n]*?[#$] ?(.*)$", re.M)
_KEYS_XML = re.compile(r"<keystrokes[^>]*>(.*?)</keystrokes>", re.S)


def _terminus_commands(t: _Turn) -> list[str]:
    """The keystrokes of an agent step: its ``bash_command`` calls, else the ``commands`` of its
    JSON reply or the ``<keystrokes>`` of its XML reply."""
    keys = [c.args["keystrokes"] for c in t.calls if isinstance(c.args.get("keystrokes"), str)]
    if keys or t.calls:
        return keys
    msg = _text(t.step.get("message"))
    try:
        reply = json.loads(msg)
    except ValueError:
        reply = None
    if isinstance(reply, dict) and isinstance(reply.get("commands"), list):
        return [c["keystrokes"] for c in reply["commands"]
                if isinstance(c, dict) and isinstance(c.get("keystrokes"), str)]
    return [k for k in _KEYS_XML.findall(msg)]


def _terminal_outputs(commands: list[str], screen: str) -> list[str | None]:
    """Each command's output on the screen: the lines after the prompt line echoing it (and
    the ``> `` lines continuing a multi-line command) up to the next prompt line."""
    prompts = list(_PROMPT_LINE.finditer(screen))
    out: list[str | None] = []
    k = 0
    for cmd in commands:
        first = cmd.strip().splitlines()[0].strip() if cmd.strip() else ""
        found = None
        while first and k < len(prompts):
            m = prompts[k]
            k += 1
            if m.group(1).strip() == first:
                found = m
                break
        if found is None:
            out.append(None)
            continue
        end = prompts[k].start() if k < len(prompts) else len(screen)
        body = screen[found.end():end].split("\n")[1:]
        while body and body[0].startswith("> "):
            body.pop(0)
        out.append("\n".join(body))
    return out


def _terminus(doc: dict[str, Any], turns: list[_Turn]) -> _Placed:
    out: _Placed = []
    for pos, t in enumerate(turns):
        commands = _terminus_commands(t)
        screen = "\n".join(_text(r.get("content")) for r in t.results
                           if r.get("content") is not None)
        for k, (cmd, shown) in enumerate(zip(commands, _terminal_outputs(commands, screen),
                                             strict=True)):
            step = Step(index=len(out), tool="keystrokes", action=cmd.rstrip("\n"),
                        usage=t.usage if k == 0 else None)
            # keystrokes without a final newline were typed, not run (C-c, q, a partial line)
            if shown is not None and cmd.endswith("\n"):
                reading = read_shell(cmd.strip(), shown)
                step.views, step.edits = reading.views, reading.edits
            out.append((pos, step))
    mark_views_after_edits([s for _, s in out])
    return out


def _generic(doc: dict[str, Any], turns: list[_Turn]) -> _Placed:
    out: _Placed = []
    for pos, t in enumerate(turns):
        cwd = _cwd(doc, t.step)
        for k, c in enumerate(t.calls):
            cmd = c.args.get("command", c.args.get("cmd"))
            step = Step(index=len(out), tool=c.name, usage=t.usage if k == 0 else None)
            if isinstance(cmd, str):
                step.action = cmd
                if c.result is not None:
                    reading = read_shell(cmd, c.text, cwd=cwd)
                    step.views, step.edits = reading.views, reading.edits
            else:
                step.action = _shown(c)
            out.append((pos, step))
    mark_views_after_edits([s for _, s in out])
    return out


def _shown(c: _Call) -> str:
    try:
        return f"{c.name} {json.dumps(c.args, ensure_ascii=False, sort_keys=True)}"
    except (TypeError, ValueError):
        return c.name


_READERS: dict[str, Callable[..., _Placed]] = {
    "claude-code": _claude_code, "codex": _codex, "openhands": _openhands,
    "openhands-sdk": _openhands, "terminus": _terminus, "terminus-1": _terminus,
    "terminus-2": _terminus, "gemini-cli": _gemini_cli, "opencode": _opencode,
}
#: Readers that also take the run's read warnings (what they guessed or skipped).
_READERS_WITH_WARNINGS = frozenset({_codex, _gemini_cli, _opencode})


# --- joining segments and subagents -----------------------------------------------------------


class _Reading:
    """One ATIF run: its segments (the file and its continuations) and subagents."""

    def __init__(self, file: Path, doc: dict[str, Any], warnings: list[str], depth: int = 0,
                 root: dict[str, Any] | None = None) -> None:
        self.file, self.doc, self.warnings, self.depth = file, doc, warnings, depth
        self.root = root if root is not None else doc
        self.twin: claude_code_stream.StreamRun | None = None
        self.segments: list[tuple[Path, dict[str, Any]]] = [(file, doc)]
        seen = {file.resolve()}
        cur_file, cur = file, doc
        while isinstance(cur.get("continued_trajectory_ref"), str) and cur[
                "continued_trajectory_ref"]:
            nxt = (cur_file.parent / cur["continued_trajectory_ref"])
            if nxt.resolve() in seen or len(self.segments) > 64:
                self.warnings.append(f"continuation {cur['continued_trajectory_ref']!r} loops; "
                                     "ignored")
                break
            try:
                cur = _load(nxt)
            except AdapterError as exc:
                self.warnings.append(f"continuation {cur['continued_trajectory_ref']!r} not "
                                     f"read: {exc.message}")
                break
            cur_file = nxt
            seen.add(nxt.resolve())
            self.segments.append((nxt, cur))

    def _own_steps(self) -> list[dict[str, Any]]:
        return [st for _, d in self.segments for st in d["steps"]
                if isinstance(st, dict) and st.get("is_copied_context") is not True]

    def steps(self) -> list[Step]:
        raw = self._own_steps()
        name = _agent_name(self.doc) or ""
        agent_steps = [st for st in raw if st.get("source") == "agent"]
        turns = [_turn(st) for st in agent_steps]
        if name.startswith("mini-swe-agent"):
            placed = [(len(turns), s) for s in _mini_swe_agent(self.doc, raw)]
        else:
            reader = _READERS.get(name)
            if reader is None and name.startswith("terminus"):
                reader = _terminus
            if reader is _claude_code:
                self.twin = _stream_twin(self.doc, self.file, self.warnings)
                placed = _claude_code(self.doc, turns, self.file, self.warnings, twin=self.twin)
            elif reader in _READERS_WITH_WARNINGS:
                placed = reader(self.doc, turns, self.warnings)  # type: ignore[call-arg]
            else:
                placed = (reader or _generic)(self.doc, turns)
        subs: dict[int, list[Step]] = {}
        for pos, st in enumerate(raw):
            refs = _turn(st).subagent_refs
            if refs:
                # a system step's delegation counts after the agent steps before it
                at = sum(1 for s in raw[:pos + 1] if s.get("source") == "agent") - 1
                subs.setdefault(at, []).extend(self._subagent_steps(refs))
        steps: list[Step] = []
        by_pos: dict[int, list[Step]] = {}
        for pos, s in placed:
            by_pos.setdefault(pos, []).append(s)
        for pos in sorted(set(by_pos) | set(subs)):
            steps.extend(by_pos.get(pos, []))
            steps.extend(subs.get(pos, []))
        for k, s in enumerate(steps):
            s.index = k
        return steps

    def _subagent_steps(self, refs: list[dict[str, Any]]) -> list[Step]:
        out: list[Step] = []
        for ref in refs:
            found = self._resolve(ref)
            if found is None:
                continue
            file, doc, label = found
            if self.depth >= _MAX_DEPTH:
                self.warnings.append(f"subagent {label!r} nested too deep; ignored")
                continue
            sub = _Reading(file, doc, self.warnings, self.depth + 1, self.root)
            for s in sub.steps():
                s.subagent = label if s.subagent is None else f"{label}/{s.subagent}"
                out.append(s)
        return out

    def _resolve(self, ref: dict[str, Any]) -> tuple[Path, dict[str, Any], str] | None:
        tid = ref.get("trajectory_id")
        if isinstance(tid, str) and tid:
            for d in self.root.get("subagent_trajectories") or []:
                if isinstance(d, dict) and d.get("trajectory_id") == tid \
                        and isinstance(d.get("steps"), list) and isinstance(d.get("agent"), dict):
                    return self.file, d, tid
        path = ref.get("trajectory_path")
        label = tid or ref.get("session_id") or path
        if isinstance(path, str) and path and "://" not in path:
            f = self.file.parent / path
            try:
                return f, _load(f), str(label)
            except AdapterError as exc:
                self.warnings.append(f"subagent {label!r} not read: {exc.message}")
                return None
        self.warnings.append(f"subagent {label!r} not found")
        return None

    def _last_is_cumulative(self, finals: list[Usage | None]) -> bool:
        """Whether the last segment's totals cover the whole run: they reach its own steps'
        prompt tokens plus every earlier segment's total (Harbor's Terminus), which a
        segment counting only itself does not."""
        if len(finals) == 1:
            return True
        last = finals[-1]
        earlier = Usage.total(finals[:-1])
        own = sum(_num((st.get("metrics") or {}).get("prompt_tokens")) or 0
                  for st in self.segments[-1][1]["steps"]
                  if isinstance(st, dict) and st.get("is_copied_context") is not True
                  and isinstance(st.get("metrics"), dict))
        if last is None or last.input_tokens is None or earlier is None \
                or earlier.input_tokens is None:
            return False
        return last.input_tokens >= own + earlier.input_tokens

    def usage(self) -> Usage | None:
        if _agent_name(self.doc) == "claude-code":
            if self.twin is not None and self.twin.usage is not None:
                return self.twin.usage
            own = [st for st in self._own_steps() if st.get("source") == "agent"]
            msg = _cc_messages(own)
            if len(set(msg)) < len(msg):  # Harbor's one step per content block
                groups = [[st for st, h in zip(own, msg, strict=True) if h == g]
                          for g in sorted(set(msg))]
                per_msg = [u for u in (_cc_usage(g) for g in groups) if u is not None]
                total = Usage.total(per_msg)
                if total is not None:
                    total.api_calls = len(per_msg)
                    finals = [_final_usage(d.get("final_metrics")) for _, d in self.segments]
                    if total.cost is None and finals and finals[-1] is not None:
                        total.cost = finals[-1].cost
                return total
        per_step = [_metrics_usage(st.get("metrics")) for st in self._own_steps()
                    if st.get("source") == "agent"]
        calls = sum(1 for u in per_step if u is not None)
        finals = [_final_usage(d.get("final_metrics")) for _, d in self.segments]
        if finals and all(f is not None for f in finals):
            total = finals[-1] if self._last_is_cumulative(finals) else Usage.total(finals)
        else:
            total = Usage.total(per_step)
        if total is not None and calls:
            total.api_calls = calls
        return total
