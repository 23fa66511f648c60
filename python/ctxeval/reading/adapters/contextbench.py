"""Shared reading of ContextBench's own trajectory formats (no ``FORMAT``: not an adapter itself).

The adapters ``cb_sweagent``, ``cb_sweagent_context_json``, ``cb_sweagent_patch_context``,
``cb_prometheus`` and ``cb_unified`` read the formats that the published ContextBench evaluator
(``anonymousUser2026/ContextBench``) reads itself. Under preset ``contextbench`` they reproduce the
reference's reading exactly, *before* its path resolution: every format is first turned into the
reference's intermediate "step" (``files``, line ``spans``, symbol ``names``), then mapped onto
:mod:`ctxeval.model`. ``docs/contextbench-reading.md`` describes the mapping and the ``extra`` keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, SymbolRef, Trajectory, View
from . import ReadOptions

PRESET = "contextbench"
LFS_POINTER = "version https://git-lfs.github.com/spec/v1"


def is_contextbench(options: ReadOptions) -> bool:
    """Whether to read as the reference evaluator does."""
    return options.preset == PRESET


@dataclass(slots=True)
class CbStep:
    """The reference's step before path resolution: file list, line spans and symbol names.

    ``spans`` keep the numbers exactly as the reference carries them (reversed ranges included);
    ``files`` is the step's own file list, which the reference uses alone at file level.
    """

    files: list[str] = field(default_factory=list)
    spans: list[tuple[str, int, int]] = field(default_factory=list)
    symbols: dict[str, list[str]] = field(default_factory=dict)
    action: str = ""
    tool: str | None = None

    def is_empty(self) -> bool:
        return not self.files and not self.spans


def strict_int(value: Any, *, path: Path, field_name: str, line: int | None = None) -> int:
    """An integer line number, or AdapterError: the reference crashes on anything else."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AdapterError(f"line number must be an integer, got {value!r}", path=str(path),
                           line=line, field=field_name)
    return value


def py_int(text: str, *, path: Path, field_name: str, line: int | None = None) -> int:
    """Python's ``int()`` on a text fragment (the reference's parsing), as AdapterError."""
    try:
        return int(text)
    except ValueError as exc:
        raise AdapterError(f"not a line number: {text!r}", path=str(path), line=line,
                           field=field_name) from exc


def views_of(files: Iterable[str], spans: Iterable[tuple[str, int, int]]) -> list[View]:
    """Spans as views (numbers as given), then every listed file without a span as file-only."""
    views = [View(f, s, e) for f, s, e in spans]
    seen = {v.file for v in views}
    for f in files:
        if f not in seen:
            seen.add(f)
            views.append(View(f, None, None))
    return views


def symbols_of(symbols: dict[str, list[str]]) -> list[SymbolRef]:
    return [SymbolRef(f, n) for f, names in symbols.items() for n in names]


def files_differ(step: CbStep) -> bool:
    """True when a span names a file missing from the step's own ``files`` (file level differs)."""
    listed = set(step.files)
    return any(f not in listed for f, _, _ in step.spans)


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def cb_trajectory(instance_id: str, steps: list[CbStep], final: CbStep, *,
                  options: ReadOptions, source: Path, agent: str | None,
                  model_patch: str | None = None, final_symbols: bool = False) -> Trajectory:
    """A trajectory as the reference evaluates it (its ``parse_trajectory`` step fallback applied).

    ``final_symbols``: whether the format carries final symbol names (``pred_symbols``).
    """
    extra: dict[str, Any] = {}
    if not steps:
        steps = [CbStep(list(final.files), list(final.spans), dict(final.symbols))]
        extra["cb_steps_from_final"] = True
    out_steps: list[Step] = []
    step_files: list[list[str] | None] = []
    for i, s in enumerate(steps):
        out_steps.append(Step(index=i, action=s.action, tool=s.tool,
                              views=views_of(s.files, s.spans), symbols=symbols_of(s.symbols)))
        step_files.append(unique(s.files) if files_differ(s) else None)
    if any(f is not None for f in step_files):
        extra["cb_step_files"] = step_files
    if files_differ(final):
        extra["cb_final_files"] = unique(final.files)
    if final.is_empty():
        extra["cb_no_context"] = True
    return Trajectory(
        instance_id=options.instance_id or instance_id,
        steps=out_steps,
        run=options.run,
        agent=agent,
        final_context=views_of(final.files, final.spans),
        final_symbols=symbols_of(final.symbols) if final_symbols and final.symbols else None,
        model_patch=model_patch or None,
        source=str(source),
        extra=extra,
    )


def read_text(path: Path, *, errors: str = "strict") -> str:
    """The file as Python's text mode reads it (UTF-8, universal newlines), or AdapterError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    try:
        text = raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise AdapterError(f"not UTF-8 ({exc.reason} at byte {exc.start})",
                           path=str(path)) from exc
    if text.split("\n", 1)[0].strip() == LFS_POINTER:
        raise AdapterError("this is a Git LFS pointer, not the trajectory (run `git lfs pull`); "
                           "the reference loads no prediction from it", path=str(path))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_json(text: str, *, path: Path, line: int | None = None) -> Any:
    """``json.loads`` with failures (also absurd nesting) as AdapterError naming the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdapterError(f"invalid JSON: {exc.msg}", path=str(path),
                           line=line if line is not None else exc.lineno) from exc
    except RecursionError as exc:
        raise AdapterError("invalid JSON: nested too deeply", path=str(path), line=line) from exc


def load_json(path: Path) -> Any:
    """One JSON document, or AdapterError naming the line."""
    return parse_json(read_text(path), path=path)


# --- SWE-agent ``patch_context`` text (``File:`` / ``Lines: a-b``) -------------------------------


def sweagent_norm(p: str) -> str:
    """The reference SWE-agent extractor's path normalisation: ``/testbed/`` or one ``/``."""
    if p.startswith("/testbed/"):
        return p[len("/testbed/"):]
    if p.startswith("/"):
        return p[1:]
    return p


def cb_patch_context(text: str, *, path: Path, line: int | None = None,
                     field_name: str = "patch_context") -> dict[str, list[tuple[int, int]]]:
    """``File:``/``Lines:`` blocks as the reference parses them: ranges by file, in order.

    A ``Lines:`` value without ``-`` is ignored; one that does not split into exactly two integers
    around ``-`` (a comma-separated multi-range, ``-5``, ``a-b``) makes the reference raise, so it
    raises AdapterError here. Files with an empty name are dropped (they resolve to nothing).
    """
    files: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for raw in text.strip().split("\n"):
        s = raw.strip()
        if s.startswith("File:"):
            current = sweagent_norm(s.replace("File:", "").strip())
            if current:
                files.setdefault(current, [])
        elif s.startswith("Lines:") and current:
            value = s.replace("Lines:", "").strip()
            if "-" not in value:
                continue
            parts = value.split("-")
            if len(parts) != 2:
                raise AdapterError(
                    f"'Lines: {value}' is not one 'start-end' range (the reference raises "
                    f"ValueError: too many values to unpack)", path=str(path), line=line,
                    field=field_name)
            a = py_int(parts[0], path=path, line=line, field_name=field_name)
            b = py_int(parts[1], path=path, line=line, field_name=field_name)
            files[current].append((a, b))
    return files


def strict_patch_context(text: str, warnings: list[str]) -> list[View]:
    """``File:``/``Lines:`` blocks read leniently: multi-ranges split, reversed ranges swapped.

    ``Lines: N`` is line N; a file without ``Lines:`` is file-only; unreadable values are skipped
    with a warning.
    """
    by_file: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for raw in text.split("\n"):
        s = raw.strip()
        if s.startswith("File:"):
            current = s[len("File:"):].strip() or None
            if current:
                by_file.setdefault(current, [])
        elif s.startswith("Lines:") and current:
            for piece in s[len("Lines:"):].split(","):
                rng = parse_range(piece)
                if rng is None:
                    if piece.strip():
                        warnings.append(f"patch_context: unreadable range {piece.strip()!r} "
                                        f"for {current}")
                    continue
                by_file[current].append(rng)
    views: list[View] = []
    for f, ranges in by_file.items():
        views.extend(View(f, a, b) for a, b in ranges)
        if not ranges:
            views.append(View(f, None, None))
    return views


def parse_range(piece: str) -> tuple[int, int] | None:
    """``a-b`` (either order) or ``a`` as a 1-based inclusive range; None if unreadable."""
    s = piece.strip()
    if not s:
        return None
    a_txt, sep, b_txt = s.partition("-")
    try:
        a = int(a_txt)
        b = int(b_txt) if sep else a
    except ValueError:
        return None
    if a < 1 or b < 1:
        return None
    return (min(a, b), max(a, b))


def swapped(views: Iterable[View]) -> list[View]:
    """Views with reversed ranges put in order (the strict reading of declared ranges)."""
    out = []
    for v in views:
        if v.start_line is not None and v.end_line is not None and v.end_line < v.start_line:
            v = View(v.file, v.end_line, v.start_line, v.post_edit)
        out.append(v)
    return out


def plain_trajectory(instance_id: str, steps: list[Step], final: list[View] | None, *,
                     options: ReadOptions, source: Path, agent: str | None,
                     model_patch: str | None = None,
                     final_symbols: list[SymbolRef] | None = None,
                     warnings: list[str] | None = None) -> Trajectory:
    """A trajectory read under preset ``strict``."""
    extra: dict[str, Any] = {}
    if warnings:
        extra["read_warnings"] = list(warnings)
    return Trajectory(
        instance_id=options.instance_id or instance_id,
        steps=steps,
        run=options.run,
        agent=agent,
        final_context=final,
        final_symbols=final_symbols,
        model_patch=model_patch or None,
        source=str(source),
        extra=extra,
    )
