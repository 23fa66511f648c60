"""Line-level accuracy of the AutoCodeRover reading, against the files at the base commits.

Usage::

    python benchmarks/adapter_accuracy/acr_lines.py MANIFEST RUNS_DIR REPOS_DIR [--details]
                                                    [--json OUT]

``MANIFEST`` is ``acr_manifest.json``: public AutoCodeRover task directories (fetched from
``nus-apr/auto-code-rover`` into ``RUNS_DIR/<local_name>/``, see ``docs/adapter-accuracy.md``)
with their repositories and base commits. ``REPOS_DIR/<owner>__<name>`` is a git clone (bare or
not) of each repository.

The truth is independent of ctxeval's placement: for every code block a step printed, the
annotator's rule is re-applied to the file at the base commit with Python's ``ast`` (AutoCodeRover
is Python-only) and the block is accepted only where that rendering reproduces the printed text
line for line:

- ``search_method*``: the named function (in the named class), lines ``lineno..end_lineno``;
- ``search_class_in_file``: the named class, lines ``lineno..end_lineno``;
- ``search_class``: the class *skeleton* as AutoCodeRover documents it: the header up to the first
  body statement, each method's decorators and signature up to its first body statement, each
  assignment (not ``__doc__`` ones) whole, comment lines left out;
- ``search_code*``: the run of consecutive file lines equal to the printed block that contains
  the searched string (the tool prints 3 lines of context either side of a match).

A block no rendering reproduces is reported (``unmatched``) and scored as showing nothing. Then
ctxeval's reading is resolved as ``convert --repos`` does (``TrajectoryResolver``: text placed by
``ctxeval.reading.placing``, signature-only symbols as their header line) and compared per (step,
file, line). ``--before`` also scores the reading of an older adapter module (a file path), which
credited whole definitions.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxeval.evaluation.resolve import TrajectoryResolver
from ctxeval.model import Trajectory
from ctxeval.reading.adapters import ReadOptions, autocoderover
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import RepoCache

Key = tuple[int, str, int]


def _git_show(repo: Path, commit: str, path: str) -> str | None:
    out = subprocess.run(["git", f"--git-dir={_git_dir(repo)}", "show", f"{commit}:{path}"],
                         capture_output=True)
    return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def _nodes(tree: ast.AST, kind: type | tuple[type, ...], name: str, cls: str | None
           ) -> list[ast.AST]:
    """Definitions named ``name`` (inside class ``cls`` when given)."""
    found = []
    for node in ast.walk(tree):
        if cls is not None:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                found += [n for n in node.body if isinstance(n, kind) and n.name == name]
        elif isinstance(node, kind) and node.name == name:  # type: ignore[attr-defined]
            found.append(node)
    return found


def _skeleton(node: ast.ClassDef, lines: list[str]) -> list[int]:
    """The line numbers of a class skeleton (see the module docstring)."""
    def head(n: ast.AST, with_decorators: bool) -> list[int]:
        start = n.lineno  # type: ignore[attr-defined]
        if with_decorators and getattr(n, "decorator_list", None):
            start = min([start, *(d.lineno for d in n.decorator_list)])  # type: ignore
        body = getattr(n, "body", None)
        end = body[0].lineno - 1 if body else n.end_lineno  # type: ignore[attr-defined]
        return list(range(start, end + 1))

    out = head(node, False)
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef):
            out += head(stmt, True)
        elif isinstance(stmt, ast.Assign) and "__doc__" not in ast.dump(stmt):
            out += list(range(stmt.lineno, stmt.end_lineno + 1))  # type: ignore[operator]
    return [n for n in out if not lines[n - 1].strip().startswith("#")]


def _runs(lines: list[str], block: list[str]) -> list[int]:
    """1-based starts where ``block`` is consecutive file lines (trailing blanks aside)."""
    want = [ln.rstrip() for ln in block]
    have = [ln.rstrip() for ln in lines]
    n = len(want)
    return [i + 1 for i in range(len(have) - n + 1) if have[i:i + n] == want]


def truth_of_block(tool: str, args: dict[str, Any], block: list[str], source: str
                   ) -> tuple[list[int] | None, str]:
    """The file lines a printed block is, by the tool's rule; (None, why) when none fits."""
    lines = source.split("\n")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, "unparsable source"
    want = [ln.rstrip() for ln in block]

    def same(numbers: list[int]) -> bool:
        return [lines[n - 1].rstrip() for n in numbers] == want

    if tool.startswith("search_method"):
        cands = _nodes(tree, (ast.FunctionDef, ast.AsyncFunctionDef),
                       args.get("method_name", ""), args.get("class_name"))
        for n in cands:
            nums = list(range(n.lineno, n.end_lineno + 1))  # type: ignore[attr-defined]
            if same(nums):
                return nums, "definition"
        # "Found N methods" over several classes: any class
        for n in _nodes(tree, (ast.FunctionDef, ast.AsyncFunctionDef),
                        args.get("method_name", ""), None):
            nums = list(range(n.lineno, n.end_lineno + 1))  # type: ignore[attr-defined]
            if same(nums):
                return nums, "definition"
        return None, "no definition renders the printed text"
    if tool == "search_class_in_file":
        for n in _nodes(tree, ast.ClassDef, args.get("class_name", ""), None):
            nums = list(range(n.lineno, n.end_lineno + 1))  # type: ignore[attr-defined]
            if same(nums):
                return nums, "definition"
        return None, "no class renders the printed text"
    if tool == "search_class":
        for n in _nodes(tree, ast.ClassDef, args.get("class_name", ""), None):
            nums = _skeleton(n, lines)  # type: ignore[arg-type]
            if same(nums):
                return nums, "skeleton"
        return None, "no skeleton renders the printed text"
    if tool.startswith("search_code"):
        code = str(args.get("code_str", "")).removesuffix(")") if tool.endswith("_file") \
            else str(args.get("code_str", ""))
        starts = [s for s in _runs(lines, block)
                  if code in "\n".join(lines[s - 1:s - 1 + len(block)])]
        if len(starts) == 1:
            return list(range(starts[0], starts[0] + len(block))), "window"
        return None, f"{len(starts)} windows hold the printed text and the string"
    return None, f"tool {tool} not modelled"


def _load_old(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("ctxeval.reading.adapters._acr_before", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def _lines_of(traj: Trajectory, snap: Any, ex: SymbolExtractor) -> set[Key]:
    res, _ = TrajectoryResolver(snap, ex).resolve(traj)
    out: set[Key] = set()
    for s in res.steps:
        for v in s.views:
            if v.file_only or v.end_line is None:
                continue
            out.update((s.index, v.file, n) for n in range(v.start_line, v.end_line + 1))
    return out


def measure(manifest: Path, runs: Path, repos: Path, before: Path | None, details: bool
            ) -> dict[str, Any]:
    entries = json.loads(manifest.read_text())["runs"]
    cache = RepoCache(repos)
    ex = SymbolExtractor()
    old = _load_old(before) if before else None
    rows = []
    for e in entries:
        d = runs / e["local_name"]
        if not d.is_dir():
            print(f"skip {e['id']}: {d} missing", file=sys.stderr)
            continue
        (t,) = autocoderover.read(d, ReadOptions())
        snap = cache.open(instance_id=t.instance_id, repo=e["repo"], commit=e["base_commit"])
        seq = json.loads((d / "tool_call_sequence.json").read_text())
        truth: set[Key] = set()
        unmatched = []
        blocks = 0
        for s in t.steps:
            args = seq[s.index].get("arguments") or {}
            for v in s.views:
                if v.text is None:
                    continue
                blocks += 1
                src = _git_show(repos / e["repo"].replace("/", "__"), e["base_commit"], v.file)
                block = [ln for chunk in v.text for ln in chunk]
                nums, why = (None, "file missing") if src is None else \
                    truth_of_block(s.tool or "", args, block, src)
                if nums is None:
                    unmatched.append((s.index, v.file, why))
                    continue
                truth.update((s.index, v.file, n) for n in nums)
        got = _lines_of(t, snap, ex)
        row = {"id": e["id"], "steps": len(t.steps), "blocks": blocks, "truth": len(truth),
               "extracted": len(got), "correct": len(got & truth),
               "unmatched": [list(u) for u in unmatched]}
        if old is not None:
            (t0,) = old.read(d, ReadOptions())
            got0 = _lines_of(t0, snap, ex)
            row.update(before_extracted=len(got0), before_correct=len(got0 & truth))
        if details:
            row["false"] = sorted(got - truth)[:20]
            row["missed"] = sorted(truth - got)[:20]
        rows.append(row)
    tot = {k: sum(r[k] for r in rows) for k in ("blocks", "truth", "extracted", "correct")}
    out: dict[str, Any] = {"runs": rows, "total": tot,
                           "precision": _ratio(tot["correct"], tot["extracted"]),
                           "recall": _ratio(tot["correct"], tot["truth"])}
    if old is not None:
        be = sum(r["before_extracted"] for r in rows)
        bc = sum(r["before_correct"] for r in rows)
        out["before"] = {"precision": _ratio(bc, be), "recall": _ratio(bc, tot["truth"]),
                         "extracted": be, "correct": bc}
    return out


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("repos", type=Path)
    ap.add_argument("--before", type=Path, help="an older autocoderover.py to compare")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    out = measure(a.manifest, a.runs, a.repos, a.before, a.details)
    text = json.dumps(out, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
