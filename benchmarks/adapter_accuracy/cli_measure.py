"""Measure the readers of the 2026 CLI agents on their real sessions against hand annotations.

Usage::

    python benchmarks/adapter_accuracy/cli_measure.py DIR [--details] [--json OUT]

``DIR`` holds the files named by ``local_name`` in ``cli_annotations.json`` (``git show
<commit>:<path>`` of the repositories listed there; they are not part of this repository). A
file whose sha256 differs from the annotated one is skipped.

An entry whose ``input`` is ``native`` (Gemini CLI histories) is read as it is. An OpenCode
Markdown transcript (``input``: ``opencode-transcript``) is first turned back into the ``opencode
export`` document of its tool parts (``opencode_transcript.export``: one assistant message per
tool call, each output as the transcript prints it, the working directory the session's). Each
reading is compared with the annotations as ``measure.py`` compares native readings: line and
file precision and recall per trajectory, per format and tool, and in total. The files each
edit or write names are compared with the step's ``edits``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import HEADER, Counts, Result, compare, normalize, row, sha256_of
from opencode_transcript import export

from ctxeval.model import Trajectory
from ctxeval.reading import adapters

HERE = Path(__file__).resolve().parent
DEFAULT_ANNOTATIONS = HERE / "cli_annotations.json"


def read_entry(entry: dict[str, Any], path: Path, tmp: Path) -> tuple[str, Trajectory]:
    """The detected format and the reading of the session in ``path`` (rebuilt from an
    OpenCode transcript first)."""
    out = path
    if entry.get("input") == "opencode-transcript":
        doc = export(path.read_text(encoding="utf-8"), entry["cwd"])
        out = tmp / f"{path.stem}.json"
        out.write_text(json.dumps(doc), encoding="utf-8")
    mod = adapters.detect(out)
    (traj,) = adapters.read(out, mod.FORMAT)
    return mod.FORMAT, traj


def by_tool(entry: dict[str, Any], traj: Trajectory) -> dict[str, Result]:
    """The comparison restricted to the steps of each tool."""
    tools: dict[str, list[str]] = defaultdict(list)
    for k, tool in entry["tools"].items():
        tools[tool].append(k)
    out = {}
    for tool, keys in tools.items():
        sub = dict(entry, steps={k: entry["steps"][k] for k in keys if k in entry["steps"]})
        res = compare(sub, traj, skip_ambiguous=False)
        res.name, res.fmt = f"tool {tool}", entry["format"]
        res.trajectories = res.step_matches = 0
        res.steps_expected = res.steps_got = 0
        out[tool] = res
    return out


def edits_counts(entry: dict[str, Any], traj: Trajectory, diffs: list[str]) -> Counts:
    """(step, file) pairs of edits: annotated against read."""
    counts = Counts()
    prefixes = entry.get("path_prefixes", [])
    for k in range(len(traj.steps)):
        want = {(k, f) for f in entry["edits"].get(str(k), [])}
        got = {(k, normalize(f, prefixes)) for f in traj.steps[k].edits}
        counts.add(want, got)
        if want != got:
            diffs.append(f"step {k}: edits expected {sorted(f for _, f in want)}, "
                         f"read {sorted(f for _, f in got)}")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--annotations", type=Path, default=DEFAULT_ANNOTATIONS)
    ap.add_argument("--details", action="store_true", help="list every disagreeing step")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    ann = json.loads(args.annotations.read_text())
    total = Result("TOTAL", "all", aggregate=True)
    tools: dict[tuple[str, str], Result] = {}
    edits = Counts()
    results: list[Result] = []
    print(HEADER)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in ann["trajectories"]:
            path = args.directory / entry["local_name"]
            if not path.exists() or sha256_of(path) != entry["sha256"]:
                print(f"skipped {entry['id']}: missing or other bytes", file=sys.stderr)
                continue
            fmt, traj = read_entry(entry, path, Path(tmp))
            res = compare(entry, traj, skip_ambiguous=False)
            if fmt != entry["format"]:
                res.diffs.insert(0, f"detected format {fmt!r}, annotated {entry['format']!r}")
            edits.merge(edits_counts(entry, traj, res.diffs))
            results.append(res)
            total.merge(res)
            for tool, r in by_tool(entry, traj).items():
                key = (entry["format"], tool)
                tools.setdefault(key, Result(f"tool {tool}", entry["format"], aggregate=True))
                tools[key].merge(r)
            print(row(res))
    print()
    for key in sorted(tools, key=lambda t: (t[0], -tools[t].annotated_steps)):
        print(row(tools[key]))
    print(row(total))
    print(f"edits: precision {edits.precision}, recall {edits.recall} "
          f"({edits.tp} files of {edits.tp + edits.fn} annotated, {edits.fp} more read)")
    if args.details:
        for r in results:
            if r.diffs:
                print(f"\n-- {r.name}")
                for d in r.diffs:
                    print(f"   {d}")
    if args.json:
        def figures(r: Result) -> dict[str, Any]:
            return {"name": r.name, "annotated_steps": r.annotated_steps,
                    "line": {"tp": r.lines.tp, "fp": r.lines.fp, "fn": r.lines.fn},
                    "file": {"tp": r.files.tp, "fp": r.files.fp, "fn": r.files.fn},
                    "disagreements": r.diffs}
        args.json.write_text(json.dumps({
            "trajectories": [figures(r) for r in results],
            "tools": [figures(t) for t in tools.values()], "total": figures(total),
            "edits": {"tp": edits.tp, "fp": edits.fp, "fn": edits.fn}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
