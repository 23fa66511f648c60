"""The views sidecar: what each step of a (run, instance) displayed, for ``ctxeval view``.

Result rows hold per-step *counts* (coverage, lines viewed, new lines); a page that draws where
an agent read needs the *ranges*. They go beside the rows, in ``<out>.views.jsonl``
(``results.jsonl`` → ``results.views.jsonl``), one record per scored row, so that the rows keep
their size. ``ctxeval evaluate --views`` writes it; ``docs/viewer.md`` documents each field.

:func:`views_record` is a pure function of what the pipeline already has after preparing an
instance (gold, trajectory, engine input, notes): ranges are the engine input's, clipped to the
file and merged by the native core, keyed by repository path. Definitions are listed for the gold
files only (their names come from the preparer's definition cache, through
:func:`definitions_from`), which is what the page labels along each gold file's strip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ... import _core
from ...model import GoldInstance, Step, Trajectory
from ...paths import normalise_path
from ...truth.symbols import Definition
from ..prepare.preparer import Notes, indexed_file
from .outfile import LineFile, is_dataset, views_parts
from .results import dumps_row

#: ``format`` of every record; bumped when a field changes meaning.
VIEWS_FORMAT = "ctxeval-views/1"
#: Key under which a row carries its record from the evaluator to the writer (never written).
ROW_KEY = "_views_record"
#: Longest action text kept per step (the page shows it cut; the trajectory has it whole).
ACTION_CHARS = 160

Ranges = list[list[int]]
DefinitionsOf = Callable[[str], Sequence[Definition]]


def sidecar_path(results: str | Path) -> Path:
    """Where the views of a results file are: ``results.jsonl`` → ``results.views.jsonl``
    (any other name gets ``.views.jsonl`` appended)."""
    p = Path(results)
    stem = p.name[:-len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    return p.with_name(stem + ".views.jsonl")


def sidecar_files(results: str | Path) -> list[Path] | None:
    """The views files of a results output, in row order: the sidecar beside a file, or the
    views parts of a dataset directory (the Ray engine's); None when there is none."""
    if is_dataset(results):
        found = views_parts(results)
        return found or None
    side = sidecar_path(results)
    return [side] if side.is_file() else None


def short_action(action: str, limit: int = ACTION_CHARS) -> str:
    """The action on one line, whitespace collapsed, cut to ``limit`` characters with "…"."""
    text = " ".join(action.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def definitions_from(snap: Any, preparer: Any) -> DefinitionsOf:
    """Definitions of a repository path as the preparer indexed them for this instance (a
    cache hit: the preparer has just read the file), so that names match the engine's symbols
    position for position."""
    def of(path: str) -> Sequence[Definition]:
        if not snap.exists(path):
            return []
        return indexed_file(snap, preparer.symbols, preparer.index_cache, path,
                            preparer.preset)[1]
    return of


class _Files:
    """Maps an engine view set's (file id, start, end) triples to merged ranges per path."""

    def __init__(self, inst: dict[str, Any], paths: list[str]) -> None:
        self.files = inst.get("files") or []
        self.paths = paths

    def path(self, fid: int) -> str:
        return self.paths[fid] if 0 <= fid < len(self.paths) else f"#{fid}"

    def index(self, fid: int) -> Any:
        return self.files[fid].get("index") if 0 <= fid < len(self.files) else None

    def clip(self, fid: int, start: int, end: int | None) -> tuple[int, int] | None:
        """A range clipped to its file; a file absent at the base commit keeps the range as
        given (``end`` None: the start line only, nothing is known of its length)."""
        ix = self.index(fid)
        if ix is not None:
            return ix.clip(start, end)
        return (start, end if end is not None else start) if start >= 1 else None

    def symbol_lines(self, fid: int, k: int) -> tuple[int, int] | None:
        """Lines of definition ``k`` of a file (its byte range through the line index)."""
        ix = self.index(fid)
        syms = self.files[fid].get("symbols") if 0 <= fid < len(self.files) else None
        if ix is None or not syms or not 0 <= k < len(syms):
            return None
        start, end = syms[k]
        a, b = ix.line_of(start), ix.line_of(max(start, end - 1))
        return (a, b) if a is not None and b is not None else None

    def ranges(self, view_set: dict[str, Any] | None) -> dict[str, Ranges]:
        """Lines of a view set (line views and definitions shown by name), merged per path."""
        if not view_set:
            return {}
        raw: dict[int, list[tuple[int, int]]] = {}
        for fid, start, end in view_set.get("lines") or ():
            r = self.clip(fid, start, end)
            if r is not None:
                raw.setdefault(fid, []).append(r)
        for fid, k in view_set.get("symbols") or ():
            r = self.symbol_lines(fid, k)
            if r is not None:
                raw.setdefault(fid, []).append(r)
        return {self.path(fid): [list(r) for r in _core.lines_normalize(rs)]
                for fid, rs in sorted(raw.items())}

    def file_list(self, fids: Iterable[int]) -> list[str]:
        return sorted({self.path(f) for f in fids})


def _step(step: Step | None, view_set: dict[str, Any], files: _Files, repo: str | None
          ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if step is not None:
        out["tool"] = step.tool
        out["action"] = short_action(step.action)
        u = step.usage
        if u is not None and (u.input_tokens is not None or u.output_tokens is not None):
            out["tokens"] = {"input": u.input_tokens, "output": u.output_tokens}
    out["lines"] = files.ranges(view_set)
    only = files.file_list(view_set.get("files") or ())
    if only:
        out["files"] = only
    if step is not None and step.edits:
        out["edits"] = sorted({normalise_path(e, repo) for e in step.edits})
    return out


def _union(sets: Iterable[dict[str, Ranges]]) -> dict[str, Ranges]:
    acc: dict[str, list[tuple[int, int]]] = {}
    for s in sets:
        for path, rs in s.items():
            acc[path] = _core.lines_union(acc.get(path, []), [tuple(r) for r in rs])
    return {p: [list(r) for r in rs] for p, rs in sorted(acc.items())}


def views_record(gold: GoldInstance, traj: Trajectory | None, inst: dict[str, Any],
                 notes: Notes, *, run: str, preset: str, status: str,
                 definitions: DefinitionsOf | None = None) -> dict[str, Any]:
    """The sidecar record of one prepared (run, instance): per step what it displayed and
    edited, the gold ranges, the final context, and the gold files' lengths and definitions.

    ``inst``/``notes`` are the preparer's output for (``gold``, ``traj``); steps line up with
    ``traj.steps`` (the preparers keep one view set per step). Nothing here scores: the page
    reads coverage from the row and only intersects ranges for display.
    """
    files = _Files(inst, notes.paths)
    trajectory_steps: list[Step | None] = list(traj.steps) if traj is not None else []
    view_sets = inst.get("steps") or []
    if len(trajectory_steps) != len(view_sets):
        trajectory_steps = [None] * len(view_sets)
    steps = [_step(s, vs, files, gold.repo) for s, vs in zip(trajectory_steps, view_sets,
                                                             strict=True)]
    gold_set = inst.get("gold") or {}
    gold_lines = files.ranges(gold_set)
    gold_paths = sorted(set(gold_lines) | set(files.file_list(gold_set.get("files") or ())))
    gold_files: dict[str, Any] = {}
    for path in gold_paths:
        fid = notes.paths.index(path) if path in notes.paths else -1
        ix = files.index(fid)
        entry: dict[str, Any] = {"line_count": ix.line_count if ix is not None else None}
        defs = definitions(path) if definitions is not None and ix is not None else []
        entry["definitions"] = [[d.qualified_name or d.name, d.kind, d.start_line, d.end_line]
                                for d in defs]
        gold_files[path] = entry
    final_set = inst.get("final")
    if final_set is None:  # the union of the steps, as the engine reads it
        final = {"lines": _union(s["lines"] for s in steps),
                 "files": sorted({f for s in steps for f in s.get("files", ())})}
    else:
        final = {"lines": files.ranges(final_set),
                 "files": files.file_list(final_set.get("files") or ())}
    record: dict[str, Any] = {
        "format": VIEWS_FORMAT,
        "instance_id": traj.instance_id if traj is not None else gold.instance_id,
        "run": run,
        "preset": preset,
        "status": status,
        "gold": gold_lines,
        "gold_files": gold_files,
        "steps": steps,
        "final_source": notes.final_source,
        "final": final,
    }
    if notes.gold_missing_files:
        record["gold_missing_files"] = list(notes.gold_missing_files)
    return record


class ViewsSidecar:
    """Writes the records that rows carry under :data:`ROW_KEY` to the sidecar of ``out``,
    taking them off the rows (the rows are written without them).

    The sidecar is held and written as the rows are
    (:class:`ctxeval.evaluation.output.outfile.LineFile`): locked for the run, whole lines only, a
    torn last line dropped by ``--resume``."""

    def __init__(self, out: Path) -> None:
        self.path = sidecar_path(out)
        self.file = LineFile(self.path)
        self.count = 0

    def begin(self, *, resume: bool) -> int:
        return self.file.begin(resume=resume)

    def take(self, row: dict[str, Any]) -> None:
        record = row.pop(ROW_KEY, None)
        if record is not None:
            self.file.write(dumps_row(record))
            self.count += 1

    def close(self) -> None:
        self.file.close()
