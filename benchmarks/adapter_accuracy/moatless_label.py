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
- 0.0.2 ``IdentifyCode``: the identified spans as the next state (DecideRelevance) shows
  them: ``expand_context_with_init_spans``, ``expand_context_with_related_spans`` and
  ``expand_small_classes``, both with that state's recorded ``max_prompt_file_tokens``. The
  file context is the loop's, shared: a second IdentifyCode's prompt also shows the first
  one's spans and what its DecideRelevance added, and expands all of it again.

Each file is printed with ``show_line_numbers``; the label of a step is the set of numbered
lines that are not ``# ...`` placeholders. Moatless iterates Python sets of span ids while it
adds related spans; the order matters only when the token cap stops that expansion midway.
Steps are rendered with ``PYTHONHASHSEED=0``; a step where the cap was reached is rendered
again under other seeds (``SEEDS``), its ``lines`` are then those shown under every seed and
its ``maybe`` those shown under some only (the run's own seed is unknown). The labels come
from the rendered text only (ctxeval is not imported here); ``moatless_measure.py`` compares
ctxeval's reading with them.

Usage::

    python benchmarks/adapter_accuracy/moatless_label.py --python $MV/bin/python \\
        --site-0.0.1 $MV/lib/python3.11/site-packages --site-0.0.2 $M2 \\
        --moatless-git <moatless-tools git dir> --repos-git psf/requests=<git dir> \\
        --repos-git pallets/flask=<git dir> --scratch <dir>
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from moatless_spans import MOATLESS_PRELUDE  # noqa: E402 (benchmarks/, beside this folder)

MANIFEST = HERE / "moatless_manifest.json"
LABELS = HERE / "moatless_labels.json"

_PROGRAM = r'''
import json, os, re, sys, types
site, version, root, steps = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
''' + MOATLESS_PRELUDE + r'''from moatless.file_context import FileContext
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

def context(k, uncapped=False):
    # 0.0.2's file context is shared: the prompt after an IdentifyCode shows every earlier
    # one's spans too, each DecideRelevance having expanded the whole context in its turn
    step = steps[k]
    rounds = [s for s in steps[:k] if s["expand"] == "identify-0.0.2"] \
        if step["expand"] == "identify-0.0.2" else []
    fc = FileContext(FileRepository(root))
    for s in [*rounds, step]:
        cap = 10**9 if uncapped else s.get("cap")
        for f, spans in s["files"].items():
            for sid, tokens in spans.items():
                fc.add_span_to_context(f, sid, tokens)
        if s["expand"] == "identify-0.0.1":
            fc.expand_context_with_related_spans(cap)
            fc.expand_context_with_imports()
        elif s["expand"] == "identify-0.0.2":
            fc.expand_context_with_init_spans()
            fc.expand_context_with_related_spans(cap)
            fc.expand_small_classes(cap)
    return fc

result = []
for k, step in enumerate(steps):
    fc = context(k)
    text = fc.create_prompt(show_line_numbers=True, exclude_comments=True,
                            show_outcommented_code=True)
    # whether the cap stopped the expansion (then the spans kept depend on set order)
    free = context(k, uncapped=True) if step.get("cap") else fc
    capped = {f.file_path: sorted(f.span_ids) for f in fc.files} != \
        {f.file_path: sorted(f.span_ids) for f in free.files}
    result.append({"lines": numbered(text), "capped": capped,
                   "tokens": fc.context_size()})
print(json.dumps(result))
'''


#: Hash seeds a step is rendered under when the token cap stops its expansion midway.
SEEDS = 12


def _merge(label: dict, lines: dict[str, list[int]]) -> None:
    """Narrow ``label["lines"]`` to the lines ``lines`` also has; the others go to
    ``label["maybe"]`` (shown under some of the orders only)."""
    maybe = {(f, n) for f, nums in label.get("maybe", {}).items() for n in nums}
    old = {(f, n) for f, nums in label["lines"].items() for n in nums}
    new = {(f, n) for f, nums in lines.items() for n in nums}
    maybe |= old ^ new
    label["lines"] = _by_file(old & new)
    label["maybe"] = _by_file(maybe)


def _by_file(pairs: set[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f, n in sorted(pairs):
        out.setdefault(f, []).append(n)
    return out


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
                out.append({"step": k, "files": files, "expand": "identify-0.0.1",
                            "cap": 8000})
    else:
        k = 0
        for i, tr in enumerate(traj["transitions"]):
            for a in tr.get("actions") or []:
                act = a.get("action") or a.get("request") or {}
                if tr.get("name") == "IdentifyCode":
                    files = {}
                    for f in act.get("identified_spans") or []:
                        for s in f.get("span_ids") or []:
                            files.setdefault(f["file_path"], {})[s] = None
                    # the next DecideRelevance's settings (all runs here: expand, 12,000)
                    decide = next(t for t in traj["transitions"][i + 1:]
                                  if t.get("name") == "DecideRelevance")
                    props = decide.get("properties") or decide.get("state") or {}
                    assert props.get("expand_context", True)
                    out.append({"step": k, "files": files, "expand": "identify-0.0.2",
                                "cap": props.get("max_prompt_file_tokens", 4000)})
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
        # a fixed hash seed: Moatless iterates sets of span ids, an order that matters only
        # where the cap stops the expansion (reported: none of these runs reaches it)
        proc = subprocess.run([a.python, "-c", _PROGRAM, site, run["version"], str(root),
                               json.dumps(steps)], check=True, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
        shown = json.loads(proc.stdout)
        labels[run["id"]] = [{"step": s["step"], "kind": s["expand"], "lines": r["lines"]}
                             for s, r in zip(steps, shown, strict=True)]
        capped = [s["step"] for s, r in zip(steps, shown, strict=True) if r["capped"]]
        if capped:
            # the run's own hash seed is unknown: the label keeps the lines shown under every
            # seed tried, and marks as "maybe" those shown under some only
            for seed in range(1, SEEDS):
                proc = subprocess.run([a.python, "-c", _PROGRAM, site, run["version"],
                                       str(root), json.dumps(steps)], check=True,
                                      capture_output=True, text=True,
                                      env={**os.environ, "PYTHONHASHSEED": str(seed)})
                for lab, r in zip(labels[run["id"]], json.loads(proc.stdout), strict=True):
                    _merge(lab, r["lines"])
        most = max((r["tokens"] for s, r in zip(steps, shown, strict=True) if s.get("cap")),
                   default=0)
        print(run["id"], len(steps), "steps labelled; largest context after identify", most,
              "tokens;", f"cap reached at steps {capped}" if capped else "cap never reached")
    LABELS.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
