"""Measure ctxeval on real Claude Code runs with and without an MCP code-search server against
hand annotations (CodeContextBench, Claude Code 2.1.63 under Harbor).

Usage::

    python benchmarks/adapter_accuracy/mcp_measure.py DIR [--annotations FILE] [--details]
                                                          [--json OUT]

``DIR`` holds the runs' files under the paths named by ``local_name`` in
``mcp_annotations.json`` (the path in ``sourcegraph/CodeContextBench`` after
``runs/analysis/``, so each trial keeps its ``<task>/<task>_1/agent/`` folders). A file that is
missing, or whose sha256 differs from the annotated one, is skipped with a note.

One annotation per run serves every file of that run: the ATIF file and the stream-json log
carry the same observations (the same tool calls, the same results), and a step is one tool
call in the order the agent made it. Each file is read three ways where it can be:

- ``claude-code-stream``: the stream-json log (``agent/claude-code.txt``) alone;
- ``atif``: the ATIF file alone, copied to a trial folder of its own, as a user holding only
  ``trajectory.json`` would read it;
- ``atif+twin``: the ATIF file where it lies, beside its stream-json twin, which the ATIF
  reader then uses for the exact result text.

Figures (as ``measure.py``: lines are (step, file, line), files are (step, file)) are printed
per file, per tool, per format, per arm and in total.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import (
    Counts,
    compare,
    expected_sets,
    extracted_sets,
    fmt_ratio,
    sha256_of,
)

from ctxeval.errors import CtxevalError
from ctxeval.model import Trajectory
from ctxeval.reading import adapters

HERE = Path(__file__).resolve().parent
DEFAULT_ANNOTATIONS = HERE / "mcp_annotations.json"


def short_tool(name: str) -> str:
    """``mcp__sourcegraph__sg_read_file`` -> ``sg_read_file``; local tools as they are."""
    return name.split("__", 2)[2] if name.startswith("mcp__") and name.count("__") >= 2 else name


class Tally:
    """Line and file counts of one slice (a file, a tool, a format, an arm)."""

    def __init__(self) -> None:
        self.lines = Counts()
        self.files = Counts()
        self.steps = 0
        self.files_read = 0

    def row(self, name: str) -> str:
        files = str(self.files_read) if self.files_read else ""
        return (f"{name:<70} {files:>5} {self.steps:>5} {self.lines.tp + self.lines.fn:>6} "
                f"{fmt_ratio(self.lines.precision):>7} {fmt_ratio(self.lines.recall):>7} "
                f"{fmt_ratio(self.files.precision):>7} {fmt_ratio(self.files.recall):>7}")

    def as_dict(self) -> dict[str, Any]:
        return {"files_read": self.files_read, "steps": self.steps,
                "line": {"tp": self.lines.tp, "fp": self.lines.fp, "fn": self.lines.fn,
                         "precision": self.lines.precision, "recall": self.lines.recall},
                "file": {"tp": self.files.tp, "fp": self.files.fp, "fn": self.files.fn,
                         "precision": self.files.precision, "recall": self.files.recall}}


HEADER = (f"{'':<70} {'files':>5} {'steps':>5} {'lines':>6} "
          f"{'line P':>7} {'line R':>7} {'file P':>7} {'file R':>7}")


def read_as(path: Path, fmt: str, alone: bool, tmp: Path) -> Trajectory:
    """Read ``path`` in format ``fmt`` (the format detection must agree); ``alone`` copies it
    first to a trial folder of its own, so that no file beside it is read."""
    if alone:
        trial = tmp / path.parent.parent.parent.name / path.parent.parent.name / "agent"
        if trial.exists():
            shutil.rmtree(trial)
        trial.mkdir(parents=True)
        shutil.copy(path, trial / path.name)
        path = trial / path.name
    mod = adapters.detect(path)
    if fmt != mod.FORMAT:
        raise CtxevalError(f"detected {mod.FORMAT!r}, annotated {fmt!r}")
    trajs = adapters.read(path, fmt)
    if len(trajs) != 1:
        raise CtxevalError(f"expected one trajectory, the adapter returned {len(trajs)}")
    return trajs[0]


def ways(file: dict[str, Any], path: Path) -> list[tuple[str, bool]]:
    """The readings of one annotated file: (label, alone)."""
    if file["format"] == "atif":
        out = [("atif", True)]
        if (path.parent / "claude-code.txt").exists():
            out.append(("atif+twin", False))
        return out
    return [(file["format"], False)]


def measure(directory: Path, ann: dict[str, Any], details: bool) -> dict[str, Any]:
    by_file: dict[str, Tally] = {}
    by_tool: dict[str, Tally] = defaultdict(Tally)
    by_tool_way: dict[str, Tally] = defaultdict(Tally)
    by_way: dict[str, Tally] = defaultdict(Tally)
    by_arm: dict[str, Tally] = defaultdict(Tally)
    skipped: list[str] = []
    disagreements: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for run in ann["runs"]:
            for file in run["files"]:
                path = directory / file["local_name"]
                if not path.exists():
                    skipped.append(f"{run['id']} {file['format']}: missing ({file['local_name']})")
                    continue
                digest = sha256_of(path)
                if digest != file["sha256"]:
                    skipped.append(f"{run['id']} {file['format']}: sha256 {digest[:12]} != "
                                   f"{file['sha256'][:12]}; the annotations describe other bytes")
                    continue
                for way, alone in ways(file, path):
                    name = f"{run['id']} [{way}]"
                    try:
                        traj = read_as(path, file["format"], alone, tmp)
                    except CtxevalError as exc:
                        skipped.append(f"{name}: ctxeval could not read it: {exc}")
                        continue
                    entry = {"id": name, "format": way, "expected_steps": run["expected_steps"],
                             "steps": run["steps"], "path_prefixes": run.get("path_prefixes", []),
                             "file_lines": run.get("file_lines", {})}
                    res = compare(entry, traj, skip_ambiguous=False)
                    diffs = list(res.diffs)
                    tally = by_file[name] = Tally()
                    tally.files_read = 1
                    for key, items in run["steps"].items():
                        k = int(key)
                        tool = run["tools"][key]
                        step = traj.steps[k] if k < len(traj.steps) else None
                        if step is not None and step.tool != tool:
                            diffs.append(f"step {k}: tool {step.tool!r}, annotated {tool!r}")
                        e_lines, e_files, _ = expected_sets(k, items)
                        g_lines, g_files = set(), set()
                        if step is not None:
                            g_lines, g_files, _ = extracted_sets(
                                k, step, entry["path_prefixes"], entry["file_lines"], [])
                        for t in (tally, by_tool[short_tool(tool)],
                                  by_tool_way[f"{short_tool(tool)} [{way}]"], by_way[way],
                                  by_arm[f"{run['arm']} [{way}]"]):
                            t.lines.add(e_lines, g_lines)
                            t.files.add(e_files, g_files)
                            t.steps += 1
                    for t in (by_way[way], by_arm[f"{run['arm']} [{way}]"]):
                        t.files_read += 1
                    if diffs:
                        disagreements[name] = diffs

    total = Tally()
    for t in by_way.values():
        total.lines.merge(t.lines)
        total.files.merge(t.files)
        total.steps += t.steps
        total.files_read += t.files_read

    def table(title: str, rows: dict[str, Tally]) -> None:
        print(f"\n== {title}")
        print(HEADER)
        for name in sorted(rows):
            print(rows[name].row(name))

    table("per file (run [reading])", by_file)
    table("per tool, all readings", by_tool)
    table("per tool and reading", by_tool_way)
    table("per reading (format)", by_way)
    table("per arm and reading", by_arm)
    print()
    print(total.row("TOTAL"))
    for note in skipped:
        print(f"skipped: {note}")
    if details:
        for name, diffs in disagreements.items():
            print(f"\n-- {name}")
            for d in diffs:
                print(f"   {d}")
    return {
        "files": {k: v.as_dict() for k, v in sorted(by_file.items())},
        "tools": {k: v.as_dict() for k, v in sorted(by_tool.items())},
        "tools_by_reading": {k: v.as_dict() for k, v in sorted(by_tool_way.items())},
        "readings": {k: v.as_dict() for k, v in sorted(by_way.items())},
        "arms": {k: v.as_dict() for k, v in sorted(by_arm.items())},
        "total": total.as_dict(),
        "skipped": skipped,
        "disagreements": disagreements,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path, help="directory holding the fetched runs")
    ap.add_argument("--annotations", type=Path, default=DEFAULT_ANNOTATIONS)
    ap.add_argument("--details", action="store_true", help="list every disagreeing step")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    out = measure(args.directory, json.loads(args.annotations.read_text()), args.details)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
