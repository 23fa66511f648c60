"""Measure how well ctxeval's adapters read real trajectories against hand annotations.

Usage::

    python benchmarks/adapter_accuracy/measure.py DIR [--annotations FILE] [--details]
                                                      [--json OUT]

``DIR`` holds the trajectories named by ``local_name`` in ``annotations.json`` (fetched from the
public repositories listed there; they are not part of this repository). A trajectory whose file
is missing, or whose sha256 differs from the annotated one, is skipped with a note: the
annotations describe those exact bytes.

What is compared, per annotated step (see docs/adapter-accuracy.md):

- step count: the adapter's number of steps must equal ``expected_steps``;
- lines: (step, file, line) pairs of line views; a view the adapter marks post-edit, or a
  file-only view, gives no lines; an open-ended view (``end_line: null``) is expanded with the
  annotation's ``file_lines``;
- files: (step, file) pairs of every view and symbol, so file-level (post-edit, no line
  numbers, diff) expectations are scored here;
- symbols: (step, file, name) triples for adapters that emit definitions by name.

Figures are printed with and without the steps the annotations mark ambiguous.

``--checkouts DIR`` (``DIR/<instance id>/`` a checkout of each trajectory's repository at its
base commit, as ``placing.py`` uses): a post-edit view that kept the lines it printed
(``View.checkable``: mini-swe-agent, after an edit whose shape is unknown) is checked against
the file there, as the evaluator does; without it such a view counts at file level only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxeval.errors import CtxevalError
from ctxeval.model import Step, Trajectory, View
from ctxeval.reading import adapters
from ctxeval.reading.placing import FileLines, place_view

HERE = Path(__file__).resolve().parent
DEFAULT_ANNOTATIONS = HERE / "annotations.json"

LineKey = tuple[int, str, int]
FileKey = tuple[int, str]
SymKey = tuple[int, str, str]


def sha256_of(path: Path) -> str:
    """sha256 of a file, or of a directory's manifest (relative path and sha256 of each file).

    A directory input (AutoCodeRover task directory) has no single byte stream, so the manifest
    pins every file in it.
    """
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            h.update(f.relative_to(path).as_posix().encode() + b"\0" + digest.encode() + b"\n")
        return h.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def normalize(path: str, prefixes: list[str]) -> str:
    """Repo-relative form of a path as written in a trajectory (strip sandbox roots and ./)."""
    for prefix in prefixes:
        if prefix and path.startswith(prefix):
            path = path[len(prefix):]
            break
    while path.startswith("./"):
        path = path[2:]
    return path


@dataclass
class Counts:
    """True positives, false positives and false negatives of one kind of item."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, expected: set[Any], got: set[Any]) -> None:
        self.tp += len(expected & got)
        self.fp += len(got - expected)
        self.fn += len(expected - got)

    def merge(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float | None:
        d = self.tp + self.fp
        return self.tp / d if d else None

    @property
    def recall(self) -> float | None:
        d = self.tp + self.fn
        return self.tp / d if d else None


@dataclass
class Result:
    """The comparison of one trajectory (or an aggregate of several)."""

    name: str
    fmt: str
    steps_expected: int = 0
    steps_got: int = 0
    step_matches: int = 0
    trajectories: int = 0
    annotated_steps: int = 0
    lines: Counts = field(default_factory=Counts)
    files: Counts = field(default_factory=Counts)
    symbols: Counts = field(default_factory=Counts)
    diffs: list[str] = field(default_factory=list)
    aggregate: bool = False

    def merge(self, other: Result) -> None:
        self.steps_expected += other.steps_expected
        self.steps_got += other.steps_got
        self.step_matches += other.step_matches
        self.trajectories += other.trajectories
        self.annotated_steps += other.annotated_steps
        self.lines.merge(other.lines)
        self.files.merge(other.files)
        self.symbols.merge(other.symbols)


def expected_sets(k: int, items: list[dict[str, Any]]
                  ) -> tuple[set[LineKey], set[FileKey], set[SymKey]]:
    """The annotated lines, files and symbols of step ``k``."""
    lines: set[LineKey] = set()
    files: set[FileKey] = set()
    syms: set[SymKey] = set()
    for item in items:
        f = item["file"]
        files.add((k, f))
        if "symbol" in item:
            syms.add((k, f, item["symbol"]))
        elif item.get("level") != "file":
            lines.update((k, f, n) for n in range(item["start_line"], item["end_line"] + 1))
    return lines, files, syms


def extracted_sets(k: int, step: Step, prefixes: list[str], file_lines: dict[str, int],
                   notes: list[str]) -> tuple[set[LineKey], set[FileKey], set[SymKey]]:
    """What the adapter extracted for step ``k``, in the same terms as the annotation."""
    lines: set[LineKey] = set()
    files: set[FileKey] = set()
    syms: set[SymKey] = set()
    for view in step.views:
        f = normalize(view.file, prefixes)
        files.add((k, f))
        if view.file_only or view.start_line is None:
            continue
        end = view.end_line
        if end is None:
            end = file_lines.get(f)
            if end is None:
                notes.append(f"step {k}: open-ended view of {f} with no file_lines; "
                             "counted as its first line only")
                end = view.start_line
        lines.update((k, f, n) for n in range(view.start_line, end + 1))
    for sym in step.symbols:
        f = normalize(sym.file, prefixes)
        files.add((k, f))
        syms.add((k, f, sym.name))
    return lines, files, syms


def describe(step: Step) -> str:
    """A short rendering of an extracted step, for the disagreement listing."""
    parts = []
    for v in step.views:
        tag = " post_edit" if v.post_edit else ""
        parts.append(f"{v.file}:{v.start_line}-{v.end_line}{tag}")
    parts += [f"{s.file}::{s.name}" for s in step.symbols]
    return ", ".join(parts) or "(nothing)"


def compare(entry: dict[str, Any], traj: Trajectory, skip_ambiguous: bool) -> Result:
    """Compare one adapter reading with its annotation."""
    res = Result(entry["id"], entry["format"], trajectories=1)
    res.steps_expected = entry["expected_steps"]
    res.steps_got = len(traj.steps)
    res.step_matches = int(res.steps_expected == res.steps_got)
    if not res.step_matches:
        res.diffs.append(f"step count: expected {res.steps_expected}, got {res.steps_got}")
    prefixes = list(entry.get("path_prefixes", []))
    file_lines = dict(entry.get("file_lines", {}))
    ambiguous = set(entry.get("ambiguous_steps", []))
    for key, items in entry["steps"].items():
        k = int(key)
        if skip_ambiguous and k in ambiguous:
            continue
        res.annotated_steps += 1
        e_lines, e_files, e_syms = expected_sets(k, items)
        if k < len(traj.steps):
            step = traj.steps[k]
            g_lines, g_files, g_syms = extracted_sets(k, step, prefixes, file_lines, res.diffs)
        else:
            step = None
            g_lines, g_files, g_syms = set(), set(), set()
        res.lines.add(e_lines, g_lines)
        res.files.add(e_files, g_files)
        res.symbols.add(e_syms, g_syms)
        if (e_lines, e_files, e_syms) != (g_lines, g_files, g_syms):
            got = describe(step) if step is not None else "(no such step)"
            want = ", ".join(
                f"{i['file']}::{i['symbol']}" if "symbol" in i
                else f"{i['file']} [{i['why']}]" if i.get("level") == "file"
                else f"{i['file']}:{i['start_line']}-{i['end_line']}" for i in items
            ) or "(nothing)"
            flag = " (ambiguous)" if k in ambiguous else ""
            res.diffs.append(f"step {k}{flag}: expected {want}; extracted {got}")
    return res


def read_one(path: Path) -> tuple[str, Trajectory]:
    """Detect the format and read the single trajectory in ``path``."""
    mod = adapters.detect(path)
    trajs = adapters.read(path, mod.FORMAT)
    if len(trajs) != 1:
        raise CtxevalError(f"expected one trajectory, the adapter returned {len(trajs)}")
    return mod.FORMAT, trajs[0]


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def row(r: Result) -> str:
    # one trajectory: steps read / expected; an aggregate: trajectories whose count matched
    steps = f"{r.step_matches}/{r.trajectories}" if r.aggregate else (
        f"{r.steps_got}/{r.steps_expected}")
    return (f"{r.name:<50} {r.fmt:<15} {steps:>9} {r.annotated_steps:>5} "
            f"{fmt_ratio(r.lines.precision):>7} {fmt_ratio(r.lines.recall):>7} "
            f"{fmt_ratio(r.files.precision):>7} {fmt_ratio(r.files.recall):>7} "
            f"{fmt_ratio(r.symbols.precision):>7} {fmt_ratio(r.symbols.recall):>7}")


HEADER = (f"{'trajectory':<50} {'format':<15} {'steps':>9} {'ann':>5} "
          f"{'line P':>7} {'line R':>7} {'file P':>7} {'file R':>7} {'sym P':>7} {'sym R':>7}")


def checked(traj: Trajectory, checkout: Path, prefixes: list[str]) -> Trajectory:
    """``traj`` with its checkable post-edit views checked against the files of ``checkout``
    (the base commit's), as the evaluator checks them."""
    for step in traj.steps:
        views: list[View] = []
        for v in step.views:
            path = checkout / normalize(v.file, prefixes)
            if v.checkable and path.is_file():
                views.extend(place_view(v, FileLines(path.read_bytes()))[0])
            else:
                views.append(v)
        step.views = views
    return traj


def measure(directory: Path, annotations: dict[str, Any], skip_ambiguous: bool,
            checkouts: Path | None = None) -> tuple[list[Result], list[str]]:
    """Compare every available trajectory; return the results and the skip notes."""
    results: list[Result] = []
    skipped: list[str] = []
    for entry in annotations["trajectories"]:
        path = directory / entry["local_name"]
        if not path.exists():
            skipped.append(f"{entry['id']}: missing ({entry['local_name']})")
            continue
        digest = sha256_of(path)
        if digest != entry["sha256"]:
            skipped.append(f"{entry['id']}: sha256 mismatch ({digest[:12]} != "
                           f"{entry['sha256'][:12]}); the annotations describe other bytes")
            continue
        try:
            fmt, traj = read_one(path)
        except CtxevalError as exc:
            skipped.append(f"{entry['id']}: ctxeval could not read it: {exc}")
            continue
        checkout = checkouts / entry["id"].split("/", 1)[-1] if checkouts else None
        if checkout is not None and checkout.is_dir():
            traj = checked(traj, checkout, list(entry.get("path_prefixes", [])))
        res = compare(entry, traj, skip_ambiguous)
        if fmt != entry["format"]:
            res.diffs.insert(0, f"detected format {fmt!r}, annotated {entry['format']!r}")
        results.append(res)
    return results, skipped


def report(results: list[Result], skipped: list[str], title: str, details: bool) -> dict[str, Any]:
    """Print the per-trajectory, per-format and total tables; return them as data."""
    print(f"\n== {title}")
    print(HEADER)
    for r in results:
        print(row(r))
    by_fmt: dict[str, Result] = defaultdict(lambda: Result("", "", aggregate=True))
    total = Result("TOTAL", "all", aggregate=True)
    for r in results:
        agg = by_fmt[r.fmt]
        agg.name, agg.fmt = f"format {r.fmt}", r.fmt
        agg.merge(r)
        total.merge(r)
    print()
    for agg in by_fmt.values():
        print(row(agg))
    print(row(total))
    for note in skipped:
        print(f"skipped: {note}")
    if details:
        for r in results:
            if r.diffs:
                print(f"\n-- {r.name}")
                for d in r.diffs:
                    print(f"   {d}")

    def as_dict(r: Result) -> dict[str, Any]:
        return {
            "name": r.name, "format": r.fmt, "trajectories": r.trajectories,
            "steps_expected": r.steps_expected, "steps_got": r.steps_got,
            "step_count_matches": r.step_matches, "annotated_steps": r.annotated_steps,
            "line": {"tp": r.lines.tp, "fp": r.lines.fp, "fn": r.lines.fn,
                     "precision": r.lines.precision, "recall": r.lines.recall},
            "file": {"tp": r.files.tp, "fp": r.files.fp, "fn": r.files.fn,
                     "precision": r.files.precision, "recall": r.files.recall},
            "symbol": {"tp": r.symbols.tp, "fp": r.symbols.fp, "fn": r.symbols.fn,
                       "precision": r.symbols.precision, "recall": r.symbols.recall},
            "disagreements": r.diffs,
        }

    return {
        "trajectories": [as_dict(r) for r in results],
        "formats": [as_dict(a) for a in by_fmt.values()],
        "total": as_dict(total),
        "skipped": skipped,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path, help="directory holding the fetched trajectories")
    ap.add_argument("--annotations", type=Path, default=DEFAULT_ANNOTATIONS)
    ap.add_argument("--details", action="store_true", help="list every disagreeing step")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument("--checkouts", type=Path,
                    help="checkouts at the base commits, DIR/<instance id>/ (see above)")
    args = ap.parse_args(argv)
    annotations = json.loads(args.annotations.read_text())
    out: dict[str, Any] = {}
    for skip_ambiguous, title in ((False, "all annotated steps"),
                                  (True, "without ambiguous steps")):
        results, skipped = measure(args.directory, annotations, skip_ambiguous,
                                   args.checkouts)
        out[title] = report(results, skipped, title, args.details and not skip_ambiguous)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
