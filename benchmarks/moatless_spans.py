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
used), and the line numbers that ``ContextFile._to_prompt`` prints (``show_line_numbers``,
``exclude_comments``, placeholders left out) for a list of span selections, some with token
budgets. ``tests/reading/test_moatless_spans.py`` checks ctxeval's own implementation against it.
The top-level ``moatless`` package is not imported (its ``__init__`` pulls the whole agent):
a namespace stand-in lets ``moatless.codeblocks`` and ``moatless.file_context`` load.
"""

from __future__ import annotations

import argparse
import json
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
]
#: Files of other fixtures rendered too (the requests file the corpus runs read, cut).
OTHER_FILES = [ROOT / "fixtures" / "adapters" / "autocoderover" / "repos"
               / "psf__requests@091991be0da19de9108dbe5e3752917fea3d7fdc" / "requests"
               / "sessions.py"]

_PROGRAM = r'''
import json, os, re, sys, types
site, files, selections = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
version = sys.argv[4]
sys.path.insert(0, site)
stub = types.ModuleType("moatless")
stub.__path__ = [os.path.join(site, "moatless")]
sys.modules["moatless"] = stub
import bpe_openai
from moatless.codeblocks.parser.python import PythonParser
from moatless.file_context import ContextFile
enc = bpe_openai.get_encoding("cl100k_base")

class View:
    show_all_spans = False
    _find_span = ContextFile._find_span
    _to_prompt = ContextFile._to_prompt
    def __init__(self, spans):
        self.spans = spans
    @property
    def span_ids(self):
        return {s.span_id for s in self.spans}

out = {}
for name, path in files.items():
    module = PythonParser(tokenizer=lambda s: enc.encode(s, allowed_special="all")).parse(
        open(path).read())
    rendered = []
    for sel in selections:
        sel = dict(sel)
        if sel.pop("<imports>", 0) is None:
            # what Moatless adds to identified spans: its own rules, applied here by hand as
            # its ContextFile does (0.0.1 imports; 0.0.2 also a selected class's init spans)
            init = [c.belongs_to_span.span_id for c in module.children
                    if c.type.value == "Import" and c.belongs_to_span.span_type.value == "init"]
            if version != "0.0.1":
                for sid in list(sel):
                    sp = module.spans_by_id.get(sid)
                    if sp is not None and sp.initiating_block.type.value == "Class":
                        init += [c.belongs_to_span.span_id for c in sp.initiating_block.children
                                 if c.belongs_to_span
                                 and c.belongs_to_span.span_type.value == "init"]
            sel = {**{i: None for i in init}, **sel}
        spans = [types.SimpleNamespace(span_id=s, tokens=t) for s, t in sel.items()
                 if s in module.spans_by_id]
        text = View(spans)._to_prompt(code_block=module, show_line_numbers=True,
                                      exclude_comments=True, show_outcommented_code=True,
                                      outcomment_code_comment="...") if spans else ""
        nums = sorted({int(m.group(1)) for line in text.split("\n")
                       if (m := re.match(r"^(\d+)\s*(.*)$", line))
                       and m.group(2).strip() != "# ..."})
        rendered.append(nums)
    out[name] = {"spans": {i: s.tokens for i, s in module.spans_by_id.items()},
                 "rendered": rendered}
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
        proc = subprocess.run([a.python, "-c", _PROGRAM, site, json.dumps(files),
                               json.dumps(SELECTIONS), version], check=True, capture_output=True,
                              text=True)
        result[version] = json.loads(proc.stdout)
    dest = CASES / "expected.json"
    dest.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{len(files)} files, {len(SELECTIONS)} selections written to "
          f"{dest.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
