"""Moatless Tools trajectories, three format generations.

- v0.0.1 (``{"name": "moatless", "steps": [{"actions": [...]}]}``): ``search`` actions return a
  ``file_context`` of span ids, which Moatless shows the model in the *next* prompt; that code
  belongs to the search (symbol views). ``request_for_change`` brings a span's code in for the
  following ``search_replace``, whose ``start_line``/``end_line`` say which lines those were.
- v0.0.2 (``{"transitions": [{"name", "state", "actions": [{"action", "output"}]}]}``, or from
  August 2024 ``properties`` and ``actions: [{"request", "response": {"output"}}]``):
  ``SearchCode`` -> ``ranked_spans`` (symbol views, shown in the IdentifyCode prompt);
  ``PlanToCode``/``ClarifyCodeChange`` -> ``start_line``/``end_line`` shown in the EditCode
  prompt (line views); ``EditCode`` edits the planned file, and the diff it applied (``diff``,
  or the ``Applied change`` message) maps later line numbers of that file back to base lines.
- v0.4 (``{"nodes": [...]}``, a tree): each node after the root is a step; its observation is the
  tool result with ``cat -n`` style ``N<TAB>code`` lines, read from the printed numbers. Edit
  observations re-print the edited file: those views are marked post-edit.

Span ids stay :class:`SymbolRef`. In v0.0.x they are marked as Moatless spans of their release
(``SymbolRef.moatless``, with the token budget a 0.0.1 search recorded): what the model read is
Moatless's rendering of them, which :mod:`ctxeval.reading.moatless_spans` re-derives from the
file at the base commit (class headers above methods, comments and docstrings dropped, budgets
applied). An identify step shows what the next prompt shows: the identified spans and the spans
Moatless adds to them (marked ``moatless_spans.expansion.IMPORT_SPANS``); in 0.0.2 the file
context is shared, so a later IdentifyCode shows the earlier ones' spans as well, all expanded
again. The declared context is the union of ``identify`` spans (v0.0.x) or the last node's
``file_context`` (v0.4, whose span ids are read as names).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...linesets import line_runs
from ...model import Step, SymbolRef, Trajectory, Usage, View
from ..moatless_spans.expansion import SIGNATURES, expansion_mark
from . import ReadOptions
from .swe_agent import CATN_HEADER, EditTracker, hunks_from_diff

FORMAT = "moatless"
PRIORITY = 20

_V1 = re.compile(rb'(?<!\\)"name"\s*:\s*"moatless"')
_STEPS = re.compile(rb'(?<!\\)"steps"\s*:')
_V2 = re.compile(rb'(?<!\\)"transitions"\s*:')
_V2_NAME = re.compile(rb'(?<!\\)"(initial_message|AgenticLoop)"')
_V4 = re.compile(rb'(?<!\\)"agent_class"\s*:\s*"moatless\.')
_NODES = re.compile(rb'(?<!\\)"nodes"\s*:')
_NODE_CTX = re.compile(rb'(?<!\\)"(file_context|action_args_class)"')

_NUMBERED = re.compile(r"^\s*(\d+)\t")
_GAP = re.compile(r"^\s*#\s*\.\.\.\s*$")
_PATH = re.compile(r"^[\w./@+-][^\s`]*$")
_EDIT_COMMANDS = ("str_replace", "create", "insert", "undo_edit", "append")
# recorded 0.0.2 prompts: a file is its path, then its code fenced
_PROMPT_FILE = re.compile(r"^([^\s`<][^\n`]*)\n```[^\n]*\n(.*?)^```", re.M | re.S)
_PROMPT_NUMBERED = re.compile(r"^(\d+)(?: (.*))?$")
_PLACEHOLDER = re.compile(r"^\s*#\s*\.\.\.(?: (?:other|rest of the) code)?\s*$")
_SPAN_TAG = re.compile(r"^<span id='([^']+)'>$", re.M)


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir() or not head.lstrip().startswith(b"{"):
        return False
    if _V1.search(head) and _STEPS.search(head):
        return True
    if _V2.search(head) and _V2_NAME.search(head):
        return True
    return bool(_NODES.search(head) and (_V4.search(head) or _NODE_CTX.search(head)))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    except (json.JSONDecodeError, UnicodeError) as exc:
        raise AdapterError(f"invalid JSON: {exc}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise AdapterError("a Moatless trajectory is a JSON object", path=str(path))
    if isinstance(data.get("nodes"), list):
        traj = _read_v4(data, path)
    elif isinstance(data.get("transitions"), list):
        traj = _read_v2(data, path)
    elif isinstance(data.get("steps"), list):
        traj = _read_v1(data, path)
    else:
        raise AdapterError("no 'steps', 'transitions' or 'nodes'", path=str(path))
    info = data.get("info") if isinstance(data.get("info"), dict) else \
        data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    iid = info.get("instance_id") if isinstance(info.get("instance_id"), str) else None
    iid = iid or options.instance_id
    if not iid:
        raise AdapterError("no instance id", path=str(path), field="info.instance_id")
    traj.instance_id = iid
    traj.agent = "moatless"
    traj.run = options.run or _str(info.get("evaluation_name"))
    traj.source = str(path)
    if traj.model_patch is None:
        traj.model_patch = _str(info.get("submission"))
    if traj.usage is None and isinstance(info.get("total_cost"), (int, float)):
        traj.usage = Usage(cost=float(info["total_cost"]))
    return [traj]


# -- v0.0.1 -----------------------------------------------------------------------------------

#: The coding loop's states (the recorded step names): the prompt of a new state shows the
#: loop's file context again, for the action that brought the loop there.
_PENDING, _CHANGE, _CLARIFY = "CodeLoop_Pending", "CodeLoop_CodeChange", "CodeLoop_Clarification"


def _read_v1(data: dict[str, Any], path: Path) -> Trajectory:
    """Every recorded step is one call of the model, named for the loop's state at that call
    (``SearchLoop_Searching``, ``CodeLoop_Pending``, ``CodeLoop_CodeChange``,
    ``CodeLoop_Clarification``); its actions are ctxeval's steps. What a call's prompt shows
    belongs to the action that led to it:

    - a ``search``: its result, in the next search prompt (spans within their recorded
      budgets; a span a later search of the same call found again is shown with that one);
    - an ``identify``: the coding loop's first prompt, its file context (the identified spans
      and what Moatless adds to them), without comments;
    - a coding action whose next call is in a new state: that state's prompt. ``CodeChange``
      (after ``request_for_change`` or ``specify_lines``): the file context with its comments,
      and the ``<search>`` block (the lines the following ``search_replace`` names);
      ``Clarification`` (after a ``request_for_change`` of a span too large to edit): the span
      with its comments and the signatures beside it; ``Pending`` (after an applied
      ``search_replace`` or a ``reject``): the file context, without comments, of the files as
      edited (the refs carry the diffs the run recorded, to be applied to the base file before
      rendering; the spans an edit made are added, as Moatless adds them; what an edit wrote
      is post-edit);
    - a result no later call showed (the run stopped there) shows nothing.
    """
    flat: list[tuple[dict[str, Any], Usage | None, int]] = []  # (action, usage, its call)
    states: list[str] = []
    for i, st in enumerate(data["steps"]):
        st = _obj(st, path, f"steps[{i}]")
        states.append(_str(st.get("name")) or "")
        actions = st.get("actions") or []
        if not isinstance(actions, list):
            raise AdapterError("'actions' must be a list", path=str(path),
                               field=f"steps[{i}].actions")
        cost = Usage.from_json({"cost": st.get("completion_cost")})
        for j, a in enumerate(actions):
            flat.append((_obj(a, path, f"steps[{i}].actions[{j}]"), cost if j == 0 else None, i))

    steps: list[Step] = []
    declared: list[SymbolRef] | None = None
    context: list[SymbolRef] = []  # the coding loop's file context: identified spans, marks
    changing: str | None = None  # the file of the last change asked for
    edits = EditTracker()
    diffs: dict[str, list[str]] = {}  # the recorded diffs of each edited file, in order
    for k, (a, usage, call) in enumerate(flat):
        name = _str(a.get("name")) or "?"
        inp = a.get("input") if isinstance(a.get("input"), dict) else {}
        out = a.get("output") if isinstance(a.get("output"), dict) else {}
        step = Step(index=k, tool=name, action=_action(name, inp), usage=usage)
        nxt = states[call + 1] if call + 1 < len(states) else None
        last = k + 1 == len(flat) or flat[k + 1][2] != call
        # the state of the next call, when this action brought the loop to a new one
        new = nxt if last and nxt is not None and nxt != states[call] else None
        after = flat[k + 1][0] if k + 1 < len(flat) else {}
        if name == "search":
            if nxt is not None and nxt.startswith("SearchLoop"):
                later = {(r.file, r.name) for b, _, c in flat[k + 1:]
                         if c == call and b.get("name") == "search"
                         for r in _spans(_out(b).get("file_context"), "spans", "0.0.1")}
                step.symbols = [r for r in _spans(out.get("file_context"), "spans", "0.0.1")
                                if (r.file, r.name) not in later]
        elif name == "identify":
            found = _spans(inp.get("files_with_spans"), "span_ids", "0.0.1")
            declared = (declared or []) + found
            context = _shown_after_identify(found)
            if nxt is not None and nxt.startswith("CodeLoop"):
                step.symbols = list(context)
        elif name == "search_replace":
            f = _str(inp.get("file_path"))
            diff = _str(out.get("diff"))
            if f and out.get("updated") and diff and not out.get("error"):
                step.edits = [f]
                edits.record(edits.key(f, None), hunks_from_diff(diff))
                diffs.setdefault(f, []).append(diff)
                # the spans the edit made join the context (new_span_ids)
                made = out.get("new_span_ids") if isinstance(out.get("new_span_ids"), list) \
                    else []
                context = _dedup([*context, *(SymbolRef(f, s, moatless="0.0.1")
                                              for s in made if _str(s))])
        if name == "request_for_change":
            changing = _str(inp.get("file_path"))
        if name not in ("search", "identify") and new is not None:
            f = _str(inp.get("file_path"))
            if new == _CLARIFY and name == "request_for_change" and f \
                    and _str(inp.get("span_id")):
                step.views, step.symbols = _rendered(
                    [SymbolRef(f, inp["span_id"], moatless="0.0.1"),
                     SymbolRef(f, SIGNATURES, moatless="0.0.1")], diffs, True)
            elif new == _CHANGE and name in ("request_for_change", "specify_lines"):
                target = f or changing  # specify_lines names no file: the Clarification's
                lines = _lines_of(after.get("input"), target, None) \
                    if after.get("name") == "search_replace" else None
                if lines is None and name == "specify_lines":
                    lines = _lines_of(inp, target, None)
                step.views, step.symbols = _rendered(context, diffs, True)
                if target and lines:
                    step.views = _dedup([*edits.views(target, [lines], None), *step.views])
                elif target and _str(inp.get("span_id")):
                    more = _rendered([*step.symbols,
                                      SymbolRef(target, inp["span_id"], moatless="0.0.1")],
                                     diffs, True)[1]
                    step.symbols = more
            elif new == _PENDING:
                step.views, step.symbols = _rendered(context, diffs, False)
        steps.append(step)
    return Trajectory(instance_id="", steps=steps, final_context=_final(declared),
                      final_symbols=_dedup(declared) if declared is not None else None,
                      usage=Usage.total([s.usage for s in steps]))


def _out(a: dict[str, Any]) -> dict[str, Any]:
    return a.get("output") if isinstance(a.get("output"), dict) else {}


def _rendered(refs: list[SymbolRef], diffs: dict[str, list[str]], comments: bool
              ) -> tuple[list[View], list[SymbolRef]]:
    """Span refs as a coding prompt renders them from the files as edited so far: with or
    without comments; the first ref of an edited file carries the file's recorded diffs (the
    preparer renders the edited file and maps its lines back), and the file is also seen
    after its edit (post-edit)."""
    views: list[View] = []
    out: list[SymbolRef] = []
    for r in _dedup([SymbolRef(r.file, r.name, moatless=r.moatless, budget=r.budget)
                     for r in refs]):
        first = r.file in diffs and not any(o.file == r.file for o in out)
        if first:
            views.append(View(r.file, None, None, post_edit=True))
        out.append(SymbolRef(r.file, r.name, moatless=r.moatless, budget=r.budget,
                             comments=comments,
                             patches=tuple(diffs[r.file]) if first else ()))
    return _dedup(views), out


# -- v0.0.2 -----------------------------------------------------------------------------------

_APPLIED_DIFF = re.compile(r"```diff\n(.*?)```", re.S)


def _v2_record(a: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Usage | None]:
    """(request, output, usage) of a v0.0.2 action, in either of its two shapes.

    June 2024 runs write ``{"action", "output", "input_tokens", ...}``; August 2024 runs
    ``{"request", "response": {"trigger", "output"}, "completion": {"usage"}}``.
    """
    resp = a.get("response") if isinstance(a.get("response"), dict) else {}
    act = a.get("action") if isinstance(a.get("action"), dict) else \
        a.get("request") if isinstance(a.get("request"), dict) else {}
    out = a.get("output") if isinstance(a.get("output"), dict) else \
        resp.get("output") if isinstance(resp.get("output"), dict) else {}
    usage = Usage.from_json({"input_tokens": a.get("input_tokens"),
                             "output_tokens": a.get("output_tokens"),
                             "cost": a.get("completion_cost")})
    completion = a.get("completion") if isinstance(a.get("completion"), dict) else {}
    used = completion.get("usage") if isinstance(completion.get("usage"), dict) else None
    if usage is None and used is not None:
        usage = Usage.from_json({"input_tokens": used.get("prompt_tokens"),
                                 "output_tokens": used.get("completion_tokens"),
                                 "cost": used.get("completion_cost")})
    return act, out, usage


def _applied_diff(out: dict[str, Any]) -> str | None:
    """The diff an EditCode applied: ``diff``, or the ``Applied change`` message's block."""
    diff = _str(out.get("diff"))
    if diff:
        return diff
    m = _APPLIED_DIFF.search(_str(out.get("message")) or "")
    return m.group(1) if m and "Applied change" in (out.get("message") or "") else None


def _read_v2(data: dict[str, Any], path: Path) -> Trajectory:
    steps: list[Step] = []
    declared: list[SymbolRef] | None = None
    rounds: list[list[SymbolRef]] = []  # each IdentifyCode's spans and marks, in order
    model = None
    planned: str | None = None
    # line numbers after an applied EditCode are the edited file's: mapped back through its diff
    edits = EditTracker()
    for i, tr in enumerate(data["transitions"]):
        tr = _obj(tr, path, f"transitions[{i}]")
        state = tr.get("state") if isinstance(tr.get("state"), dict) else \
            tr.get("properties") if isinstance(tr.get("properties"), dict) else {}
        model = model or _str(state.get("model"))
        tname = _str(tr.get("name")) or "?"
        actions = tr.get("actions") or []
        if not isinstance(actions, list):
            raise AdapterError("'actions' must be a list", path=str(path),
                               field=f"transitions[{i}].actions")
        for j, a in enumerate(actions):
            act, out, usage = _v2_record(_obj(a, path, f"transitions[{i}].actions[{j}]"))
            step = Step(index=len(steps), tool=tname, action=_action(tname, act), usage=usage)
            if tname == "SearchCode":
                step.symbols = _ranked(out.get("ranked_spans"))
            elif tname == "IdentifyCode":
                found = _spans(act.get("identified_spans"), "span_ids", "0.0.2")
                declared = (declared or []) + found
                if found:
                    # the file context is shared: the next prompt shows the spans of every
                    # identify so far, and each DecideRelevance expands all of it again
                    expand, cap = _decide_expansion(data["transitions"], i)
                    rounds.append(_shown_after_identify(found, cap, len(rounds)) if expand
                                  else found)
                step.symbols = _dedup([r for rnd in rounds for r in rnd])
            elif tname in ("PlanToCode", "ClarifyCodeChange"):
                f = _str(out.get("file_path")) or _str(act.get("file_path")) \
                    or _str(state.get("file_path"))
                lines = _lines_of(out, f, None)
                # a span without lines goes to ClarifyCodeChange, whose prompt (when the run
                # recorded it) prints the span with its line numbers: those lines were shown
                shown = _prompt_code_lines(_next_prompt(data["transitions"], i,
                                                        "ClarifyCodeChange"), f)
                if f and lines:
                    step.views = edits.views(f, [lines], None)
                    planned = f
                elif f and _str(out.get("span_id")):
                    if edits.edited(edits.key(f, None)):  # a span of the edited file
                        step.views = [View(f, None, None, post_edit=True)]
                    elif shown:
                        step.views = edits.views(f, shown, None)
                    else:
                        step.symbols = [SymbolRef(f, out["span_id"], moatless="0.0.2")]
                    planned = f
            elif tname == "EditCode":
                f = _str(state.get("file_path")) or planned
                diff = _applied_diff(out)
                if f and diff and not out.get("errors"):
                    step.edits = [f]
                    edits.record(edits.key(f, None), hunks_from_diff(diff))
                    # the diff shown back to the model is a view of the file as edited, as
                    # a ``git diff`` in a shell is
                    step.views = [View(f, None, None, post_edit=True)]
            if tname != "PlanToCode" and j == len(actions) - 1:
                # the coding prompt that follows (when recorded) shows the shared file context
                # by span id: its spans are this step's, as a search's are the search's
                spans = _prompt_context_spans(_next_prompt(data["transitions"], i, "PlanToCode"))
                if spans and not any(edits.edited(edits.key(r.file, None)) for r in spans):
                    step.symbols = _dedup([*step.symbols, *spans])
            steps.append(step)
    return Trajectory(instance_id="", steps=steps, model=model, final_context=_final(declared),
                      final_symbols=_dedup(declared) if declared is not None else None,
                      usage=Usage.total([s.usage for s in steps]))


def _next_prompt(transitions: list[Any], i: int, name: str) -> str | None:
    """The prompt of transition ``i + 1`` if it is a ``name`` state whose run recorded it
    (August 2024 runs keep ``completion.input``): its last user message."""
    if i + 1 >= len(transitions) or not isinstance(transitions[i + 1], dict) \
            or transitions[i + 1].get("name") != name:
        return None
    actions = transitions[i + 1].get("actions")
    for a in actions if isinstance(actions, list) else []:
        completion = a.get("completion") if isinstance(a, dict) else None
        messages = completion.get("input") if isinstance(completion, dict) else None
        if not isinstance(messages, list):
            continue
        users = [m.get("content") for m in messages
                 if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    return None


def _prompt_blocks(text: str | None, tag: str) -> list[tuple[str, str]]:
    """``(file path, body)`` of each fenced file inside ``<tag>...</tag>`` of a prompt."""
    out: list[tuple[str, str]] = []
    for m in re.finditer(rf"<{tag}>\n(.*?)</{tag}>", text or "", re.S):
        for b in _PROMPT_FILE.finditer(m.group(1)):
            out.append((b.group(1).strip(), b.group(2)))
    return out


def _prompt_code_lines(text: str | None, f: str | None) -> list[tuple[int, int]]:
    """Line runs ClarifyCodeChange's ``<code>`` printed of ``f``: every numbered line but the
    ``# ... other code`` placeholders (a signature above one was printed)."""
    numbers: list[int] = []
    for path, body in _prompt_blocks(text, "code"):
        if path != f:
            continue
        for line in body.split("\n"):
            m = _PROMPT_NUMBERED.match(line)
            if m and not _PLACEHOLDER.match(m.group(2) or ""):  # a bare number: a blank line
                numbers.append(int(m.group(1)))
    return line_runs(numbers)


def _prompt_context_spans(text: str | None) -> list[SymbolRef]:
    """The spans a ``<file_context>`` rendered with span ids shows (``<span id='...'>``)."""
    return _dedup([SymbolRef(path, sid, moatless="0.0.2")
                   for path, body in _prompt_blocks(text, "file_context")
                   for sid in _SPAN_TAG.findall(body)])


# -- v0.4 -------------------------------------------------------------------------------------

def _read_v4(data: dict[str, Any], path: Path) -> Trajectory:
    nodes: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    for i, n in enumerate(data["nodes"]):
        n = _obj(n, path, f"nodes[{i}]")
        nid = n.get("node_id")
        if not isinstance(nid, int) or isinstance(nid, bool):
            raise AdapterError("a node needs an integer 'node_id'", path=str(path),
                               field=f"nodes[{i}].node_id")
        nodes[nid] = n
        order.append(nid)
    if not order:
        raise AdapterError("no nodes", path=str(path), field="nodes")
    chain = _chain(nodes, order[-1], path)
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    completion = agent.get("completion") if isinstance(agent.get("completion"), dict) else {}
    model = _str(completion.get("model"))
    steps: list[Step] = []
    for n in chain:
        act = n.get("action")
        if not isinstance(act, dict):
            continue
        tool = _v4_tool(act)
        obs = n.get("observation") if isinstance(n.get("observation"), dict) else {}
        msg = _str(obs.get("message")) or ""
        step = Step(index=len(steps), tool=tool, action=_action(tool, act),
                    usage=_v4_usage(n, model))
        views = numbered_views(msg)
        if act.get("command") in _EDIT_COMMANDS:
            target = _str(act.get("path"))
            props = obs.get("properties") if isinstance(obs.get("properties"), dict) else {}
            ok = bool(target) and not props.get("fail_reason") and (
                "has been edited" in msg or "created successfully" in msg
                or "undone successfully" in msg
                or bool(props.get("diff")))
            if target and ok:
                step.edits = [target]
                views = [View(v.file, v.start_line, v.end_line, post_edit=True)
                         if v.file == target else v for v in views]
            elif not ok:
                views = []
        step.views = views
        steps.append(step)
    last = chain[-1]
    ctx = last.get("file_context") if isinstance(last.get("file_context"), dict) else None
    final_views, final_symbols, patch = _v4_context(ctx)
    return Trajectory(instance_id="", steps=steps, model=model,
                      final_context=final_views if ctx is not None else None,
                      final_symbols=final_symbols if ctx is not None else None,
                      model_patch=patch, usage=Usage.total([s.usage for s in steps]))


def _chain(nodes: dict[int, dict[str, Any]], leaf: int, path: Path) -> list[dict[str, Any]]:
    """Root-to-leaf path ending at ``leaf`` (the last node written)."""
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    cur: int | None = leaf
    while cur is not None:
        if cur in seen or cur not in nodes:
            raise AdapterError(f"broken parent chain at node {cur}", path=str(path),
                               field="nodes.parent_id")
        seen.add(cur)
        out.append(nodes[cur])
        parent = nodes[cur].get("parent_id")
        cur = parent if isinstance(parent, int) and not isinstance(parent, bool) else None
    return out[::-1]


def _v4_tool(act: dict[str, Any]) -> str:
    if isinstance(act.get("command"), str):
        return act["command"]
    cls = _str(act.get("action_args_class")) or "action"
    name = cls.rsplit(".", 1)[-1]
    for suffix in ("Arguments", "Args"):
        name = name.removesuffix(suffix)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() or "action"


def _v4_usage(node: dict[str, Any], model: str | None) -> Usage | None:
    """Sum the node's completions. Anthropic models report cache reads apart from prompt_tokens."""
    comps = node.get("completions")
    if not isinstance(comps, dict):
        return None
    parts = []
    for c in comps.values():
        u = c.get("usage") if isinstance(c, dict) else None
        if not isinstance(u, dict):
            continue
        prompt = u.get("prompt_tokens")
        cached = u.get("cached_tokens")
        if isinstance(prompt, int) and isinstance(cached, int) and "claude" in (model or ""):
            prompt += cached
        parts.append(Usage.from_json({"input_tokens": prompt,
                                      "output_tokens": u.get("completion_tokens"),
                                      "cost": u.get("completion_cost"), "api_calls": 1}))
    return Usage.total(parts)


def _v4_context(ctx: dict[str, Any] | None
                ) -> tuple[list[View], list[SymbolRef], str | None]:
    views: list[View] = []
    symbols: list[SymbolRef] = []
    patches: list[str] = []
    files = ctx.get("files") if isinstance(ctx, dict) else None
    for f in files if isinstance(files, list) else []:
        if not isinstance(f, dict) or not _str(f.get("file_path")):
            continue
        fp = f["file_path"]
        if f.get("show_all_spans"):
            views.append(View(fp, 1, None))
        for s in f.get("spans") or []:
            if isinstance(s, dict) and _str(s.get("span_id")):
                symbols.append(SymbolRef(fp, s["span_id"]))
        patch = _str(f.get("patch"))
        if patch:
            head = "" if patch.startswith("diff --git") else f"diff --git a/{fp} b/{fp}\n"
            patches.append(head + patch if patch.endswith("\n") else head + patch + "\n")
    return views, _dedup(symbols), "".join(patches) or None


def numbered_views(text: str) -> list[View]:
    """Line views from ``cat -n`` style ``N<TAB>code`` blocks under a file header.

    A header is ``Here's the result of running `cat -n` on [a snippet of] F:`` (the block runs
    while lines are numbered) or a bare path line followed by a ``````` fence (the block runs to
    the closing fence; ``# ...`` marks a gap). Numbers are taken as printed.
    """
    lines = text.splitlines()
    seen: dict[str, list[int]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = CATN_HEADER.search(line)
        if m:
            f = m.group("path").strip()
            i += 1
            while i < len(lines) and (nm := _NUMBERED.match(lines[i])):
                seen.setdefault(f, []).append(int(nm.group(1)))
                i += 1
            continue
        if _PATH.match(line) and i + 1 < len(lines) and lines[i + 1].strip() == "```":
            f = line.strip()
            i += 2
            while i < len(lines) and lines[i].strip() != "```":
                if nm := _NUMBERED.match(lines[i]):
                    seen.setdefault(f, []).append(int(nm.group(1)))
                i += 1
            i += 1
            continue
        i += 1
    views: list[View] = []
    for f, nums in seen.items():
        for a, b in line_runs(sorted(set(n for n in nums if n >= 1))):
            views.append(View(f, a, b))
    return views


# -- helpers ----------------------------------------------------------------------------------

def _obj(value: Any, path: Path, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AdapterError("must be an object", path=str(path), field=field)
    return value


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dedup(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _action(name: str, args: dict[str, Any]) -> str:
    shown = {k: v for k, v in args.items()
             if k not in ("scratch_pad", "reasoning", "action_args_class")}
    try:
        return f"{name} {json.dumps(shown, ensure_ascii=False, sort_keys=True)}"
    except (TypeError, ValueError):
        return name


def _spans(value: Any, key: str, release: str) -> list[SymbolRef]:
    """``[{file_path, spans|span_ids: [...]}]`` -> Moatless span refs; a span given as
    ``{span_id, tokens}`` (0.0.1 search results) was shown within that many tokens."""
    out: list[SymbolRef] = []
    for f in value if isinstance(value, list) else []:
        if not isinstance(f, dict) or not _str(f.get("file_path")):
            continue
        for s in f.get(key) or []:
            sid = s.get("span_id") if isinstance(s, dict) else s
            budget = s.get("tokens") if isinstance(s, dict) else None
            if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
                budget = None
            if _str(sid):
                out.append(SymbolRef(f["file_path"], sid, moatless=release, budget=budget))
    return _dedup(out)


def _shown_after_identify(found: list[SymbolRef], cap: int | None = None,
                          round_: int = 0) -> list[SymbolRef]:
    """What the next prompt shows after an identify: the identified spans and, per file, a
    mark for the spans Moatless adds to them (``moatless_spans.expansion.expand_identified``),
    with the token cap of that expansion when the run records one; ``round_``: the identify's
    rank among those sharing one file context."""
    mark = expansion_mark(round_)
    extra = [SymbolRef(r.file, mark, moatless=r.moatless, budget=cap) for r in found]
    return _dedup([*found, *extra])


def _decide_expansion(transitions: list[Any], i: int) -> tuple[bool, int]:
    """Whether the DecideRelevance state after IdentifyCode ``i`` expanded the context
    (``expand_context``) and its token cap (``max_prompt_file_tokens``; the state's defaults:
    yes, 4,000)."""
    for tr in transitions[i + 1:]:
        if not isinstance(tr, dict) or tr.get("name") == "IdentifyCode":
            break
        if tr.get("name") == "DecideRelevance":
            state = tr.get("state") if isinstance(tr.get("state"), dict) else \
                tr.get("properties") if isinstance(tr.get("properties"), dict) else {}
            cap = state.get("max_prompt_file_tokens")
            ok = isinstance(cap, int) and not isinstance(cap, bool) and cap > 0
            return state.get("expand_context") is not False, cap if ok else 4000
    return True, 4000


def _ranked(value: Any) -> list[SymbolRef]:
    """0.0.2 search results (their ``tokens`` is the span's size, not a budget)."""
    out = [SymbolRef(s["file_path"], s["span_id"], moatless="0.0.2")
           for s in (value if isinstance(value, list) else [])
           if isinstance(s, dict) and _str(s.get("file_path")) and _str(s.get("span_id"))]
    return _dedup(out)


def _lines_of(obj: Any, f: str | None, span: str | None) -> tuple[int, int] | None:
    """``(start_line, end_line)`` of an action naming the same file (and span, if given)."""
    if not isinstance(obj, dict) or not f:
        return None
    if obj.get("file_path") not in (None, f):
        return None
    if span is not None and obj.get("span_id") not in (None, span):
        return None
    a, b = obj.get("start_line"), obj.get("end_line")
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) \
            and not isinstance(b, bool) and 1 <= a <= b:
        return a, b
    return None


def _final(declared: list[SymbolRef] | None) -> list[View] | None:
    return None if declared is None else []

