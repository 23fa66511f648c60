"""Agentless localisation output (``loc_outputs.jsonl``, one JSON object per instance).

Agentless has no interactive tool views: its localisation *is* the declared context. Each record
becomes a trajectory with one step whose views are that context:

- ``found_files`` -> file-level views (``start_line=None``);
- ``found_related_locs`` (``class: X``, ``function: C.m``, ``variable: x``) -> symbol views;
- ``found_edit_locs`` (``line: N``, ``lines: a-b``) -> line views, the samples merged (union per
  file) as Agentless' own ``--merge`` step does; ``function:``/``class:`` entries there are symbols.

``found_related_locs`` and each sample of ``found_edit_locs`` are lists aligned with
``found_files`` (one entry per file, each a list of newline-separated location strings); the
``{file: [...]}`` dict shape of merged dumps is accepted as well.

The output is also a ranking (:attr:`~ctxeval.model.Trajectory.ranking`, for the ranked
metrics): the files in ``found_files`` order; the functions (``function: C.m`` ->
``path:C.m``) and modules (``class: C`` and ``function: C.m`` -> ``path:C``) in the order the
edit locations name them (sample by sample, file by file in ``found_files`` order), then those
only the related locations name; the ``line:``/``lines:`` locations, in the same order, are its
ranked lines (the budgeted recall).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..._core import lines_normalize
from ...errors import AdapterError
from ...model import Ranking, Step, SymbolRef, Trajectory, Usage, View
from . import ReadOptions
from ._fields import FieldNotes, is_number
from ._sessions import jsonl_objects

FORMAT = "agentless"
PRIORITY = 20

_KEY = re.compile(rb'(?<!\\)"found_files"\s*:')
_ID_KEY = re.compile(rb'(?<!\\)"instance_id"\s*:')
LINE_RE = re.compile(r"^line\s*:\s*(\d+)\s*$")
LINES_RE = re.compile(r"^lines\s*:\s*(\d+)\s*-\s*(\d+)\s*$")
SYMBOL_RE = re.compile(r"^(class|function|variable)\s*:\s*(\S.*?)\s*$")
_STAGES = ("file_traj", "related_loc_traj", "edit_loc_traj")


def detect(path: Path, head: bytes) -> bool:
    """A JSON(L) file whose first record has top-level ``found_files`` and ``instance_id``."""
    if path.is_dir() or not head.lstrip().startswith(b"{"):
        return False
    first = head.split(b"\n", 1)[0]
    return bool(_KEY.search(first) and _ID_KEY.search(first))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    return [_trajectory(rec, path, lineno, options)
            for lineno, rec in jsonl_objects(path, complete=True)]


def _trajectory(rec: dict[str, Any], path: Path, lineno: int, options: ReadOptions
                ) -> Trajectory:
    iid = rec.get("instance_id") or options.instance_id
    if not isinstance(iid, str) or not iid:
        raise AdapterError("missing instance_id", path=str(path), line=lineno,
                           field="instance_id")
    files = _str_list(rec.get("found_files"), path, lineno, "found_files")
    symbols: list[SymbolRef] = []
    lines: dict[str, set[tuple[int, int]]] = {}

    for f, blocks in _per_file(rec.get("found_related_locs"), files, path, lineno,
                               "found_related_locs"):
        parse_location_blocks(f, blocks, symbols, lines)
    edit_locs = rec.get("found_edit_locs")
    for sample in _samples(edit_locs):
        for f, blocks in _per_file(sample, files, path, lineno, "found_edit_locs"):
            parse_location_blocks(f, blocks, symbols, lines)

    views: list[View] = [View(f, None, None) for f in _unique(files)]
    for f in sorted(lines):
        views.extend(View(f, a, b) for a, b in lines_normalize(sorted(lines[f])))
    symbols = _unique(symbols)

    notes = FieldNotes()
    stage_usage = [_usage(rec.get(k), k, notes) for k in _STAGES]
    usage = Usage.total(stage_usage)
    step = Step(index=0, tool="localize", action="agentless localisation", views=views,
                symbols=symbols, usage=usage)
    extra: dict[str, Any] = {}
    per_stage = {k: u.to_json() for k, u in zip(_STAGES, stage_usage, strict=True) if u is not None}
    if per_stage:
        extra["stage_usage"] = per_stage
    notes.extend_into(extra)
    ranked = [pair for sample in _samples(edit_locs)
              for pair in _per_file(sample, files, path, lineno, "found_edit_locs")]
    ranked += _per_file(rec.get("found_related_locs"), files, path, lineno,
                        "found_related_locs")
    return Trajectory(
        instance_id=iid, steps=[step], run=options.run, agent="agentless",
        final_context=list(views), final_symbols=list(symbols), usage=usage,
        source=f"{path}:{lineno}", extra=extra, ranking=ranking_of(files, ranked),
    )


def ranking_of(files: list[str], located: list[tuple[str, list[str]]]) -> Ranking:
    """The ranking of an Agentless localisation: ``files`` as ranked, and the names and lines
    of ``located`` (``(file, location strings)`` in rank order)."""
    modules: list[str] = []
    functions: list[str] = []
    lines: list[View] = []
    for f, blocks in located:
        for block in blocks:
            for raw in block.splitlines():
                s = raw.strip()
                if m := LINE_RE.match(s):
                    if int(m.group(1)) >= 1:
                        lines.append(View(f, int(m.group(1)), int(m.group(1))))
                elif m := LINES_RE.match(s):
                    a, b = sorted((int(m.group(1)), int(m.group(2))))
                    if a >= 1:
                        lines.append(View(f, a, b))
                elif (m := SYMBOL_RE.match(s)) and m.group(1) != "variable":
                    name = m.group(2)
                    modules.append(f"{f}:{name.split('.')[0]}")
                    if m.group(1) == "function":
                        functions.append(f"{f}:{name}")
    return Ranking(list(dict.fromkeys(files)), list(dict.fromkeys(modules)),
                   list(dict.fromkeys(functions)), lines)


def _str_list(value: Any, path: Path, lineno: int, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AdapterError("must be a list of strings", path=str(path), line=lineno, field=field)
    return [v for v in value if v]


def _samples(edit_locs: Any) -> list[Any]:
    """The samples of ``found_edit_locs``: a list of per-file lists, or one dict/list."""
    if isinstance(edit_locs, dict):
        return [edit_locs]
    if not isinstance(edit_locs, list) or not edit_locs:
        return []
    # Sampled: [[["loc"], [""], ...], ...] -- each sample is a list of per-file lists of lists.
    first = edit_locs[0]
    if all(isinstance(x, dict) for x in edit_locs):  # merged dumps: one {file: [...]} per sample
        return list(edit_locs)
    if isinstance(first, list) and first and all(isinstance(x, list) for x in first):
        return list(edit_locs)
    return [edit_locs]


def _per_file(value: Any, files: list[str], path: Path, lineno: int, field: str
              ) -> list[tuple[str, list[str]]]:
    """``(file, location strings)`` pairs from a list aligned with ``files`` or a dict."""
    if value is None:
        return []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        if len(value) > len(files):
            raise AdapterError(f"{len(value)} entries for {len(files)} found_files",
                               path=str(path), line=lineno, field=field)
        items = list(zip(files, value, strict=False))
    else:
        raise AdapterError("must be a list or an object", path=str(path), line=lineno,
                           field=field)
    out = []
    for f, blocks in items:
        if isinstance(blocks, str):
            blocks = [blocks]
        if not isinstance(f, str) or not isinstance(blocks, list) \
                or not all(isinstance(b, str) for b in blocks):
            raise AdapterError("location entries must be lists of strings", path=str(path),
                               line=lineno, field=field)
        out.append((f, blocks))
    return out


def parse_location_blocks(f: str, blocks: list[str], symbols: list[SymbolRef],
                          lines: dict[str, set[tuple[int, int]]]) -> None:
    """Agentless location lines of one file (``line: N``, ``lines: a-b``, ``class: X``,
    ``function: C.m``, ``variable: v``) into symbol views and line ranges (both adapters of
    Agentless outputs read them this way under the strict preset)."""
    for block in blocks:
        for raw in block.splitlines():
            s = raw.strip()
            if not s:
                continue
            if m := LINE_RE.match(s):
                n = int(m.group(1))
                if n >= 1:
                    lines.setdefault(f, set()).add((n, n))
            elif m := LINES_RE.match(s):
                a, b = sorted((int(m.group(1)), int(m.group(2))))
                if a >= 1:
                    lines.setdefault(f, set()).add((a, b))
            elif m := SYMBOL_RE.match(s):
                symbols.append(SymbolRef(f, m.group(2)))


def _unique(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _usage(stage: Any, name: str, notes: FieldNotes) -> Usage | None:
    """A stage's ``usage``; a stage or usage block of another shape, or counters that are not
    numbers, are told to ``notes``: those tokens are not counted."""
    if stage is None:
        return None
    if not isinstance(stage, dict):
        notes.note(name, stage, "its tokens are not counted")
        return None
    u = stage.get("usage")
    if not isinstance(u, dict):
        if u is not None:
            notes.note(f"{name}.usage", u, "its tokens are not counted")
        return None
    for key in ("prompt_tokens", "completion_tokens"):
        v = u.get(key)
        if v is not None and not is_number(v):
            notes.note(f"{name}.usage.{key}", v, "it is not counted")
    return Usage.from_json({"input_tokens": u.get("prompt_tokens"),
                            "output_tokens": u.get("completion_tokens")})
