"""Run Moatless 0.0.x's own code-block parser and file-context renderer on fixture files.

Usage (never in CI; a separate environment with Moatless's pinned parser dependencies)::

    python3.11 -m venv $MV
    $MV/bin/pip install --no-deps moatless==0.0.1
    $MV/bin/pip install tree-sitter==0.22.3 tree-sitter-python==0.21.0 \\
        tree-sitter-java==0.21.0 networkx==3.3 pydantic llama-index-core==0.10.45 bpe-openai
    $MV/bin/pip install --no-deps --target $M2 moatless==0.0.2
    $MV/bin/python benchmarks/moatless_spans.py --python $MV/bin/python \\
        --site-0.0.1 $MV/lib/python3.11/site-packages --site-0.0.2 $M2

(``$MV``: a scratch venv, ``$M2``: a scratch directory.)

For each release and each ``fixtures/moatless/*.py`` file it writes, to
``fixtures/moatless/expected.json``: every span (id, tokens) as Moatless's ``PythonParser``
cuts it (cl100k counts from ``bpe_openai``, the same vocabulary as the ``tiktoken`` Moatless
used), each span's related spans (``Module.find_related_span_ids``: its reference graph), and
the line numbers that ``ContextFile._to_prompt`` prints (``show_line_numbers``,
``exclude_comments``, placeholders left out, and a number printed alone where the file's
line is not blank: the end of a block's own text, ``x = \\``) for a list of span
selections, some with token budgets, and again with the comments (``rendered_comments``:
the 0.0.1 coding prompts that show code to change), some (marked ``<signatures>``) with
the signatures 0.0.1's Clarification adds beside a class (its loop over the class's
children, as Moatless writes it), some (marked ``<imports>``) expanded as after an
identify by Moatless's own ``FileContext`` (0.0.1: ``expand_context_with_related_spans`` then
``expand_context_with_imports``; 0.0.2: ``expand_context_with_init_spans``, the related
spans, ``expand_small_classes``). ``tests/reading/test_moatless_spans.py`` checks ctxeval's
own implementation against it.
The top-level ``moatless`` package is not imported (its ``__init__`` pulls the whole agent):
a namespace stand-in lets ``moatless.codeblocks`` and ``moatless.file_context`` load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "moatless"

#: Span selections rendered for every file (ids missing from a file render nothing).
SELECTIONS: list[dict[str, int | None]] = [
    {"imports": None}, {"docstring": None}, {"impl": None}, {"impl:5": None},
    {"Invoice": None}, {"Invoice.__init__": None}, {"Invoice.total": None},
    {"Invoice.total": 20}, {"Invoice.total": 60}, {"Invoice.empty": None},
    {"Invoice.Line": None}, {"Invoice.Line.__init__": None}, {"Invoice.Line.describe": None},
    {"Invoice.add": None}, {"Invoice.add_3": None}, {"Invoice:5": None}, {"parse": None},
    {"parse": 15}, {"Invoice.total": None, "imports": None, "Invoice.Line.describe": None},
    {"Invoice": 30, "parse": None}, {"Invoice.add_3": 10, "impl:5": None, "docstring": 40},
    # the Moatless 0.0.1 run of psf__requests-2317 in ../shared/corpus: its search (the span
    # within 4000 tokens) and what its coding loop showed after identify
    {"Session.request": 4000}, {"Session.request": None, "<imports>": None},
    # what an identify shows ("<imports>": Moatless's expansion, with its token cap or the
    # default 8,000): related spans through references, class initiation spans, imports, a
    # small class shown whole (0.0.2), a cap the context already passes (nothing added)
    {"Label.text": None, "<imports>": None}, {"quote": None, "<imports>": None},
    {"Parcel": None, "<imports>": None}, {"Box": None, "<imports>": None},
    {"rate": None, "zone": None, "<imports>": None}, {"quote": None, "<imports>": 30},
    {"Invoice.total": None, "<imports>": None}, {"Invoice.Line": None, "<imports>": None},
    {"Session": None, "Session.send": None, "<imports>": None},
    # two identify rounds sharing one context (0.0.2 expands the whole of it again)
    {"quote": None, "<imports>": None, "Box.open": None, "<imports>#1": None},
    # 0.0.1's Clarification: a span that starts a class, with the signatures of the classes
    # and functions directly in it (each within one token); a span that starts none
    {"Invoice": None, "<signatures>": None}, {"Invoice.Line": None, "<signatures>": None},
    {"Session": None, "<signatures>": None}, {"Parcel": None, "<signatures>": None},
    {"Invoice.total": None, "<signatures>": None},
    # a budget that ends inside a chain of continued assignments (billing.py's last lines)
    {"impl:5": 36}, {"impl:5": 45},
]
#: Files of other fixtures rendered too (the requests file the corpus runs read, cut).
OTHER_FILES = [ROOT / "fixtures" / "adapters" / "autocoderover" / "repos"
               / "psf__requests@091991be0da19de9108dbe5e3752917fea3d7fdc" / "requests"
               / "sessions.py"]

#: The start of a program run in Moatless's environment, ``site`` set to its source: Moatless's
#: package imported without running its ``__init__`` (which loads its LLM clients), and cl100k
#: from ``bpe-openai`` as its tokenizer (shared with ``adapter_accuracy/moatless_label.py``).
MOATLESS_PRELUDE = r'''sys.path.insert(0, site)
stub = types.ModuleType("moatless")
stub.__path__ = [os.path.join(site, "moatless")]
sys.modules["moatless"] = stub
import bpe_openai
enc = bpe_openai.get_encoding("cl100k_base")
import moatless.codeblocks.parser.parser as parser_module
parser_module.get_tokenizer = lambda: (lambda s: enc.encode(s, allowed_special="all"))
'''

_PROGRAM = r'''
import json, os, re, sys, tempfile, types
site, files, selections = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
version = sys.argv[4]
''' + MOATLESS_PRELUDE + r'''from moatless.codeblocks.parser.python import PythonParser
from moatless.codeblocks.codeblocks import CodeBlockType, CodeBlockTypeGroup
from moatless.file_context import ContextFile, FileContext
from moatless.repository import FileRepository

class View:
    show_all_spans = False
    _find_span = ContextFile._find_span
    _to_prompt = ContextFile._to_prompt
    def __init__(self, spans):
        self.spans = spans
    @property
    def span_ids(self):
        return {s.span_id for s in self.spans}

FILE = []  # the lines of the file being rendered

def numbers(text):
    # a number printed alone where the file's line is not blank showed nothing of that line
    # (the end of a block's own text: ``x = \\`` and its line break)
    return sorted({int(m.group(1)) for line in text.split("\n")
                   if (m := re.match(r"^(\d+)\s*(.*)$", line))
                   and m.group(2).strip() != "# ..."
                   and (m.group(2).strip() or not FILE[int(m.group(1)) - 1].strip())})

def expanded(path, sel):
    # what Moatless shows after an identify, by its own FileContext: 0.0.1's coding loop
    # (related spans, then imports), 0.0.2's DecideRelevance (init spans, related spans,
    # small classes); each "<imports>..." key closes a round (its value: the cap), the
    # context shared between rounds
    fc = FileContext(FileRepository(os.path.dirname(path)))
    name = os.path.basename(path)
    for sid, value in sel.items():
        if not sid.startswith("<imports>"):
            # unknown ids too: the file enters the context (and gets its imports) all the same
            fc.add_span_to_context(name, sid)
            continue
        cap = value or 8000
        if version == "0.0.1":
            fc.expand_context_with_related_spans(cap)
            fc.expand_context_with_imports()
        else:
            fc.expand_context_with_init_spans()
            fc.expand_context_with_related_spans(cap)
            fc.expand_small_classes(cap)
    return [fc.create_prompt(show_line_numbers=True, exclude_comments=exclude,
                             show_outcommented_code=True) for exclude in (True, False)]

out = {}
for name, path in files.items():
    FILE[:] = open(path).read().split("\n")
    module = PythonParser(tokenizer=lambda s: enc.encode(s, allowed_special="all")).parse(
        open(path).read())
    rendered, with_comments = [], []
    for sel in selections:
        sel = dict(sel)
        if "<imports>" in sel:
            without, with_ = expanded(path, sel)
            rendered.append(numbers(without))
            with_comments.append(numbers(with_))
            continue
        signatures = sel.pop("<signatures>", False) is None
        pairs = {s: t for s, t in sel.items() if s in module.spans_by_id}
        for sid in list(pairs) if signatures else []:
            # as 0.0.1's Clarification: the signatures of a class's structure children
            span = module.find_span_by_id(sid)
            if span.initiating_block.type == CodeBlockType.CLASS:
                for child in span.initiating_block.children:
                    if (child.type.group == CodeBlockTypeGroup.STRUCTURE
                            and child.belongs_to_span
                            and child.belongs_to_span.span_id != sid):
                        pairs[child.belongs_to_span.span_id] = 1
        spans = [types.SimpleNamespace(span_id=s, tokens=t) for s, t in pairs.items()]
        for exclude, into in ((True, rendered), (False, with_comments)):
            text = View(spans)._to_prompt(code_block=module, show_line_numbers=True,
                                          exclude_comments=exclude,
                                          show_outcommented_code=True,
                                          outcomment_code_comment="...") if spans else ""
            into.append(numbers(text))
    out[name] = {"spans": {i: s.tokens for i, s in module.spans_by_id.items()},
                 "related": {i: sorted(module.find_related_span_ids(i))
                             for i in module.spans_by_id},
                 "rendered": rendered, "rendered_comments": with_comments}
print(json.dumps(out))
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable, help="the Python of Moatless's venv")
    ap.add_argument("--site-0.0.1", dest="site1", required=True,
                    help="site-packages holding moatless 0.0.1")
    ap.add_argument("--site-0.0.2", dest="site2", required=True,
                    help="a directory holding moatless 0.0.2")
    a = ap.parse_args(argv)
    files = {p.name: str(p) for p in [*sorted(CASES.glob("*.py")), *OTHER_FILES]}
    result = {"selections": SELECTIONS}
    for version, site in (("0.0.1", a.site1), ("0.0.2", a.site2)):
        # a fixed hash seed: Moatless iterates sets of span ids (the selections above never
        # reach the cap midway, where that order would matter)
        proc = subprocess.run([a.python, "-c", _PROGRAM, site, json.dumps(files),
                               json.dumps(SELECTIONS), version], check=True, capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        result[version] = json.loads(proc.stdout)
    dest = CASES / "expected.json"
    dest.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{len(files)} files, {len(SELECTIONS)} selections written to "
          f"{dest.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
