"""What ``ctxeval view`` draws, read from result rows and their views sidecar.

Rows give the scores (per-step coverage, first gold step, evidence drop); the sidecar
(:mod:`ctxeval.evaluation.output.views_sidecar`) gives the ranges. They are joined on (run, preset,
instance). Range arithmetic for display (what a step showed of the gold, what was seen and dropped)
goes through the native core, like every other interval computation.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import _core
from ...errors import InputError
from ...evaluation.output.results import json_lines
from ...evaluation.output.views_sidecar import VIEWS_FORMAT, sidecar_files, sidecar_path
from .rows import is_error, load_rows

Ranges = list[tuple[int, int]]


def slug(text: str) -> str:
    """A file-name and anchor-safe form of an id; a short hash keeps distinct ids distinct
    when characters had to be replaced."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"
    if safe != text:
        safe += "-" + hashlib.sha1(text.encode()).hexdigest()[:8]
    return safe


def page_name(instance_id: str) -> str:
    """The file name of an instance's page inside the output directory."""
    return slug(instance_id) + ".html"


def run_anchor(run_label: str) -> str:
    """The element id of a run's section on a page (and its column on the index)."""
    return "run-" + slug(run_label)


def ranges(obj: Any) -> Ranges:
    """``[[a, b], ...]`` from a record as a list of tuples (bad entries dropped)."""
    out: Ranges = []
    for r in obj or ():
        if isinstance(r, (list, tuple)) and len(r) == 2 and all(isinstance(x, int) for x in r):
            out.append((r[0], r[1]))
    return out


def measure(rs: Ranges) -> int:
    return _core.lines_measure(rs)


@dataclass(slots=True)
class RunView:
    """One run on one instance: its row and (when recorded) its views record."""

    label: str
    row: dict[str, Any]
    record: dict[str, Any] | None

    @property
    def status(self) -> str:
        return "error" if is_error(self.row) else str(self.row.get("status") or "ok")

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.record.get("steps") or []) if self.record else []

    def row_steps(self) -> list[dict[str, Any]]:
        traj = self.row.get("trajectory")
        steps = traj.get("steps") if isinstance(traj, dict) else None
        return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []

    def curve(self, gran: str) -> list[float | None]:
        """Cumulative coverage after each step (None where undefined, e.g. empty gold)."""
        out: list[float | None] = []
        for s in self.row_steps():
            cov = s.get("coverage")
            v = cov.get(gran) if isinstance(cov, dict) else None
            out.append(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                       else None)
        return out

    def traj_value(self, key: str, gran: str) -> Any:
        traj = self.row.get("trajectory")
        d = traj.get(key) if isinstance(traj, dict) else None
        return d.get(gran) if isinstance(d, dict) else None

    def step_lines(self, k: int, path: str) -> Ranges:
        return ranges((self.steps[k].get("lines") or {}).get(path))

    def seen(self, path: str) -> Ranges:
        """Every line of ``path`` any step showed."""
        acc: Ranges = []
        for s in self.steps:
            acc = _core.lines_union(acc, ranges((s.get("lines") or {}).get(path)))
        return acc

    def final(self, path: str) -> Ranges:
        fin = self.record.get("final") if self.record else None
        return ranges((fin.get("lines") or {}).get(path)) if isinstance(fin, dict) else []

    def dropped(self, path: str, gold: Ranges) -> Ranges:
        """Gold lines of ``path`` seen at some step but not in the final context."""
        return _core.lines_difference(_core.lines_intersection(self.seen(path), gold),
                                      self.final(path))

    def first_step(self, path: str) -> int | None:
        """1-based step that first showed any line (or the whole) of ``path``."""
        for k, s in enumerate(self.steps):
            if (s.get("lines") or {}).get(path) or path in (s.get("files") or ()):
                return k + 1
        return None


@dataclass(slots=True)
class GoldFile:
    """A gold file of an instance: its length, gold lines and definitions (name, kind, lines)."""

    path: str
    line_count: int
    gold: Ranges
    definitions: list[tuple[str, str, int, int]] = field(default_factory=list)


@dataclass(slots=True)
class InstancePage:
    """Everything on one instance's page."""

    instance_id: str
    runs: list[RunView] = field(default_factory=list)
    files: list[GoldFile] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)

    @property
    def row(self) -> dict[str, Any]:
        return self.runs[0].row if self.runs else {}


def read_views(path: Path) -> Iterable[dict[str, Any]]:
    """Records of a sidecar; a bad line is an error naming the file, line and field."""
    for lineno, rec in json_lines(path, "cannot read the views sidecar (evaluate with --views "
                                        "to write it)"):
        if not isinstance(rec, dict) or rec.get("format") != VIEWS_FORMAT:
            raise InputError(f"not a views record (format is not {VIEWS_FORMAT!r})",
                             path=str(path), line=lineno, field="format")
        for key in ("instance_id", "steps", "gold"):
            if key not in rec:
                raise InputError("a views record needs this field", path=str(path),
                                 line=lineno, field=key)
        yield rec


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    return (str(obj.get("run") or "-"), str(obj.get("preset") or ""),
            str(obj.get("instance_id")))


def _gold_files(records: Sequence[dict[str, Any]]) -> tuple[list[GoldFile], list[str]]:
    files: dict[str, GoldFile] = {}
    missing: list[str] = []
    for rec in records:
        gold = rec.get("gold") or {}
        for path, meta in (rec.get("gold_files") or {}).items():
            if path in files:
                continue
            g = ranges(gold.get(path))
            count = meta.get("line_count") if isinstance(meta, dict) else None
            if not isinstance(count, int) or count < 1:  # absent at the base commit
                count = max([b for _, b in g], default=1)
            defs = [(str(d[0]), str(d[1]), int(d[2]), int(d[3]))
                    for d in (meta.get("definitions") or [] if isinstance(meta, dict) else [])
                    if isinstance(d, list) and len(d) == 4]
            files[path] = GoldFile(path, count, g, defs)
        missing += [m for m in rec.get("gold_missing_files") or () if m not in missing]
    return list(files.values()), missing


def _check_selected(rows: Sequence[dict[str, Any]], instances: Sequence[str],
                    runs: Sequence[str]) -> None:
    """Raise a :class:`ValueError` naming an ``--instance`` or ``--run`` that no row has (a
    typo would otherwise draw nothing, or draw the others and leave it out unsaid)."""
    for what, wanted, key in (("instance", instances, "instance_id"), ("run", runs, "run")):
        have = list(dict.fromkeys(str(r.get(key) or "-") for r in rows))
        unknown = [w for w in dict.fromkeys(wanted) if w not in have]
        if unknown:
            shown = ", ".join(have[:10]) + (f", ... ({len(have)} in all)" if len(have) > 10
                                             else "")
            raise ValueError(f"no {what} {', '.join(unknown)} in the results ({what}s: {shown})")


def build_pages(results: Sequence[str | Path], *, instances: Sequence[str] = (),
                runs: Sequence[str] = ()) -> list[InstancePage]:
    """Pages of the instances in ``results`` (rows joined with their sidecars), instances in
    order of first appearance; ``instances``/``runs`` keep only those named.

    Raises :class:`InputError` when no results file has a views sidecar (nothing to draw but
    the curves; the message says how to write one), :class:`ValueError` when an instance or a
    run asked for is in no row.
    """
    rows = load_rows(results, unique=False)  # a page draws both rows of a duplicate
    # a list per key: a run may hold the same instance twice (records follow row order)
    records: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    found = False
    for res in results:
        for side in sidecar_files(res) or ():
            found = True
            for rec in read_views(side):
                records.setdefault(_key(rec), []).append(rec)
    if not found:
        raise InputError("no views sidecar beside the results (looked for "
                         f"{sidecar_path(results[0]).name}); run 'ctxeval evaluate ... --views' "
                         "to write it", path=str(results[0]))
    presets = {r.get("preset") for r in rows if r.get("preset")}
    pages: dict[str, InstancePage] = {}
    want_i, want_r = set(instances), set(runs)
    _check_selected(rows, instances, runs)
    for row in rows:
        iid = str(row.get("instance_id"))
        run = str(row.get("run") or "-")
        if (want_i and iid not in want_i) or (want_r and run not in want_r):
            continue
        label = run + (f" [{row.get('preset') or '?'}]" if len(presets) > 1 else "")
        page = pages.setdefault(iid, InstancePage(iid))
        queue = records.get(_key(row)) if not is_error(row) else None
        record = queue.pop(0) if queue else None
        seen = sum(1 for rv in page.runs if rv.label == label or rv.label.startswith(label + " #"))
        page.runs.append(RunView(label + (f" #{seen + 1}" if seen else ""), row, record))
    for page in pages.values():
        page.files, page.missing_files = _gold_files(
            [rv.record for rv in page.runs if rv.record is not None])
    return list(pages.values())
