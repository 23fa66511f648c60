"""AutoCodeRover task directories (``tool_call_sequence.json`` + ``conversation_round_*.json``).

Every entry of ``tool_call_sequence.json`` is a step, in order. Its observation is found in the
conversation: explicit search calls are answered in user messages as ``Result of f(args):`` blocks;
the lookups ACR makes itself to resolve the model's "bug locations" are shown (when they succeed)
in the ``Here are the code in buggy locations:`` message, one ``Found ...`` block per lookup.
Failed lookups (``call_ok: false``) that have no block showed the model nothing.

ACR prints results as ``<file>f</file> <class>C</class> <func>m</func> <code>...</code>``
without line numbers. What the model read is the printed code, not the definitions named: a
``search_class`` result is a class *skeleton* (the header, assignments and method signature lines,
comment lines dropped: ACR's ``get_class_signature``), a ``search_code*`` result a few lines around
the match, a ``search_method*``/``search_class_in_file`` result the definition's code. The code
becomes the text of a file-level view (``View.text``), placed in the file at the base commit by
:mod:`ctxeval.reading.placing` (``convert --repos``, ``evaluate``): one block of consecutive lines,
or for a skeleton, whose gaps are not shown, each line on its own. A definition result also names
its definition, whose header was printed: a signature-only symbol view (``SymbolRef.signature``), so
a name whose text cannot be placed still credits the header line, never the whole body. A
``search_code*`` result names the enclosing definition, whose header it may not show: no symbol.
File lists ("They appeared in the following files") are listings, not views.
``developer_patch.diff`` is the GOLD patch and is never read; the model patch is the last
``extracted_patch_*.diff``.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, SymbolRef, Trajectory, Usage, View
from . import ReadOptions

FORMAT = "autocoderover"
PRIORITY = 20

_ROUND = re.compile(r"^conversation_round_(\d+)\.json$")
_PATCH = re.compile(r"^extracted_patch_(\d+)\.diff$")
_RESULT_HEAD = re.compile(r"^Result of (\w+)\((.*)\):\s*$")
_BUGGY_HEAD = "Here are the code in buggy locations:"
_FOUND = re.compile(r"^(Found \d+ |Could not find |The method |There is no |No )")
_HIT = re.compile(r"Search result \d+:\s*<file>(.*?)</file>(.*?)<code>(.*?)(?:</code>|\Z)", re.S)
_TAG = re.compile(r"<(class|func)>(.*?)</\1>", re.S)
_DIFF_FILE = re.compile(r"^\+\+\+ b/(.+)$", re.M)
_SEARCH_TOOLS = ("search_", "get_code_around_line")


def detect(path: Path, head: bytes) -> bool:
    """A directory holding ``tool_call_sequence.json`` and a conversation round."""
    if not path.is_dir():
        return False
    return (path / "tool_call_sequence.json").is_file() and any(
        _ROUND.match(p.name) for p in path.iterdir())


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    if not path.is_dir():
        raise AdapterError("an AutoCodeRover run is a task directory", path=str(path))
    seq_path = path / "tool_call_sequence.json"
    seq = _load(seq_path)
    if not isinstance(seq, list):
        raise AdapterError("must be a list of calls", path=str(seq_path))
    messages = _conversation(path)
    explicit, buggy = _result_blocks(messages)

    steps: list[Step] = []
    for i, call in enumerate(seq):
        if not isinstance(call, dict) or not isinstance(call.get("func_name"), str):
            raise AdapterError("a call needs a string 'func_name'", path=str(seq_path),
                               field=f"[{i}].func_name")
        name = call["func_name"]
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        step = Step(index=i, tool=name, action=_action(name, args))
        body: str | None = None
        if explicit and _same_call(explicit[0], name, args):
            body = explicit.pop(0).body
        elif call.get("call_ok") is True and name.startswith(_SEARCH_TOOLS) and buggy:
            body = buggy.pop(0)
        if body is not None:
            step.views, step.symbols = _views(body, name)
        steps.append(step)

    model_patch = _model_patch(path)
    if model_patch:
        for step in reversed(steps):
            if step.tool == "write_patch":
                step.edits = list(dict.fromkeys(_DIFF_FILE.findall(model_patch)))
                break

    meta = _optional(path / "meta.json")
    cost = _optional(path / "cost.json")
    iid = None
    task_info = ""
    if isinstance(meta, dict):
        iid = meta.get("task_id") if isinstance(meta.get("task_id"), str) else None
        task_info = str(meta.get("task_info") or "")
    iid = iid or _info_field(task_info, "instance_id") or options.instance_id
    if not iid:
        raise AdapterError("no instance id (meta.json task_id)", path=str(path),
                           field="task_id")
    usage = None
    model = None
    if isinstance(cost, dict):
        usage = Usage.from_json({"input_tokens": cost.get("total_input_tokens"),
                                 "output_tokens": cost.get("total_output_tokens"),
                                 "cost": cost.get("total_cost")})
        model = cost.get("model") if isinstance(cost.get("model"), str) else None
    return [Trajectory(
        instance_id=iid, steps=steps, run=options.run, agent="autocoderover", model=model,
        repo=_info_field(task_info, "repo"), base_commit=_info_field(task_info, "base_commit"),
        final_context=None, model_patch=model_patch, usage=usage, source=str(path),
    )]


@dataclass(slots=True)
class _Block:
    func: str
    args: list[str] = field(default_factory=list)
    body: str = ""


def _load(p: Path) -> Any:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(p)) from exc
    except (json.JSONDecodeError, UnicodeError) as exc:
        raise AdapterError(f"invalid JSON: {exc}", path=str(p)) from exc


def _optional(p: Path) -> Any:
    return _load(p) if p.is_file() else None


def _conversation(path: Path) -> list[dict[str, Any]]:
    """The messages of the last round: each round file repeats the whole conversation so far."""
    rounds = sorted((int(m.group(1)), p) for p in path.iterdir()
                    if (m := _ROUND.match(p.name)))
    if not rounds:
        raise AdapterError("no conversation_round_*.json", path=str(path))
    best: list[dict[str, Any]] = []
    for _, p in rounds:
        msgs = _load(p)
        if not isinstance(msgs, list):
            raise AdapterError("a conversation round must be a list of messages", path=str(p))
        for j, m in enumerate(msgs):
            if not isinstance(m, dict) or not isinstance(m.get("content", ""), (str, list)):
                raise AdapterError("a message needs 'role' and 'content'", path=str(p),
                                   field=f"[{j}]")
        if len(msgs) >= len(best):
            best = msgs
    return best


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content
                         if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _result_blocks(messages: list[dict[str, Any]]) -> tuple[list[_Block], list[str]]:
    """Explicit ``Result of`` blocks, and the per-lookup blocks of buggy-location messages."""
    explicit: list[_Block] = []
    buggy: list[str] = []
    for m in messages:
        if m.get("role") != "user":
            continue
        text = _text(m.get("content"))
        if text.startswith(_BUGGY_HEAD):
            buggy.extend(_split_found(text[len(_BUGGY_HEAD):]))
            continue
        current: _Block | None = None
        body: list[str] = []
        in_code = False
        for line in text.splitlines():
            head = None if in_code else _RESULT_HEAD.match(line)
            if head:
                if current is not None:
                    current.body = "\n".join(body)
                    explicit.append(current)
                current = _Block(head.group(1), _call_args(head.group(2)))
                body = []
                continue
            in_code = _code_state(line, in_code)
            body.append(line)
        if current is not None:
            current.body = "\n".join(body)
            explicit.append(current)
    return explicit, buggy


def _code_state(line: str, in_code: bool) -> bool:
    """Whether we are inside ``<code>...</code>`` after ``line``."""
    for tag in re.findall(r"</?code>", line):
        in_code = tag == "<code>"
    return in_code


def _split_found(text: str) -> list[str]:
    """Split a buggy-locations message into one block per successful lookup."""
    blocks: list[list[str]] = []
    in_code = False
    for line in text.splitlines():
        if not in_code and _FOUND.match(line):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
        in_code = _code_state(line, in_code)
    return ["\n".join(b) for b in blocks]


def _call_args(raw: str) -> list[str]:
    """The argument values of ``f("a", "b")`` as printed (best effort, never raises)."""
    try:
        node = ast.parse(f"f({raw})", mode="eval").body
    except SyntaxError:
        return re.findall(r'"((?:[^"\\]|\\.)*)"', raw)
    if not isinstance(node, ast.Call):
        return []
    vals = [*node.args, *(k.value for k in node.keywords)]
    return [str(v.value) if isinstance(v, ast.Constant) else ast.unparse(v) for v in vals]


def _same_call(block: _Block, name: str, args: dict[str, Any]) -> bool:
    """Whether a ``Result of`` block answers this call.

    The printed arguments are not always the recorded ones: ACR records a ``code_str`` it cut
    at an unbalanced quote (``"%(message)s`` printed as ``"%(message)s"``), so an argument may
    be printed with a few more characters than recorded, or fewer.
    """
    if block.func != name:
        return False
    if not block.args:
        return True
    want = sorted(str(v) for v in args.values())
    got = sorted(block.args)
    if got == want:
        return True
    return len(got) == len(want) and all(
        a == b or (a and b and (a.startswith(b) or b.startswith(a)))
        for a, b in zip(sorted(got, key=_key), sorted(want, key=_key), strict=True))


def _key(arg: str) -> str:
    return arg[:8]


def _action(name: str, args: dict[str, Any]) -> str:
    return f"{name}({', '.join(json.dumps(v, ensure_ascii=False) for v in args.values())})"


#: Tools whose results print a definition found by name (its header line among the printed ones).
_DEFINITION_TOOLS = ("search_class", "search_class_in_file", "search_method",
                     "search_method_in_file", "search_method_in_class")


def _views(body: str, tool: str) -> tuple[list[View], list[SymbolRef]]:
    """A text view per printed snippet; a signature-only symbol per definition found by name."""
    views: list[View] = []
    symbols: list[SymbolRef] = []
    for m in _HIT.finditer(body):
        f = m.group(1).strip()
        if not f:
            continue
        tags = dict((k, v.strip()) for k, v in _TAG.findall(m.group(2)))
        name = ".".join(x for x in (tags.get("class"), tags.get("func")) if x)
        text = _code_text(m.group(3), skeleton=tool == "search_class")
        views.append(View(f, None, None, text=text))
        if name and tool in _DEFINITION_TOOLS:
            symbols.append(SymbolRef(f, name, signature=True))
    return list(dict.fromkeys(views)), list(dict.fromkeys(symbols))


def _code_text(code: str, *, skeleton: bool) -> tuple[tuple[str, ...], ...] | None:
    """The printed lines of a ``<code>`` block as ``View.text`` chunks.

    ``search_code`` regions start at the newline before their first line (ACR slices the file
    from a newline): that newline is not a line. A skeleton's lines are separate chunks (the
    method bodies between them are not printed, and where is not shown); any other result is
    one run of consecutive lines.
    """
    if code.startswith("\n"):
        code = code[1:]
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not any(ln.strip() for ln in lines):
        return None
    if skeleton:
        return tuple((ln,) for ln in lines)
    return (tuple(lines),)


def _model_patch(path: Path) -> str | None:
    """The patch ACR selected (``selected_patch.json``), else the last extracted one."""
    p: Path | None = None
    selected = _optional(path / "selected_patch.json")
    if isinstance(selected, dict) and isinstance(selected.get("selected_patch"), str):
        cand = path / selected["selected_patch"]
        if cand.is_file() and path.resolve() in cand.resolve().parents:
            p = cand
    if p is None:
        patches = sorted((int(m.group(1)), q) for q in path.iterdir()
                         if (m := _PATCH.match(q.name)))
        if not patches:
            return None
        p = patches[-1][1]
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise AdapterError(f"cannot read the model patch: {exc}", path=str(p)) from exc


def _info_field(task_info: str, key: str) -> str | None:
    """A string field of meta.json's ``task_info`` (a Python dict printed as text)."""
    m = re.search(rf"'{re.escape(key)}':\s*'([^']*)'", task_info)
    return m.group(1) if m else None
