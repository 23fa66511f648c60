"""Agentless ``<id>_traj.json`` as ContextBench ships it (one JSON object per instance).

The object holds Agentless's stages: ``1_model_selected_files``, ``2_embedding_selected_files``,
``3_final_combined_files``, ``4_related_elements`` (``{file: ["class: X\\nfunction: X.m", ...]}``),
``5_sampled_edit_locs_and_patches`` (``[{edit_locs: {file: ["line: 12", "lines: 3-9"]},
patches}]``) and ``6_final_selected_patch``. Agentless has no interactive views, so either
reading gives one step that is also the final context.

Preset ``contextbench`` (``agents/agentless/extract.py`` and ``parsers/trajectory.py:
load_traj_file`` of the reference): files = ``3_final_combined_files``, else
``2_embedding_selected_files`` (strings, sorted, deduplicated); symbol names per file from
``4_related_elements`` (``class:``/``function:``/``variable:`` lines, sorted, deduplicated);
spans from the *first* sample whose ``edit_locs`` mention ``line:``/``lines:``, reversed
``lines: a-b`` swapped, merged per file; spans do not add files. Id = the JSON ``instance_id``
when truthy, else the file name without ``_traj.json``; model patch = ``6_final_selected_patch``.

Preset ``strict``: files = ``3_final_combined_files``, else ``1_model_selected_files`` and
``2_embedding_selected_files`` together (what Agentless's combine stage produces); symbols from
``4_related_elements`` and the ``class:``/``function:`` entries of the edit locations; lines
from the edit locations of *every* sample (Agentless generated a patch from each of them), lines
below 1 dropped, reversed ranges swapped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..._core import lines_merge_raw, lines_normalize
from ...errors import AdapterError
from ...model import Step, SymbolRef, Trajectory, View
from . import ReadOptions
from .agentless import LINE_RE, LINES_RE, parse_location_blocks
from .contextbench import CbStep, cb_trajectory, is_contextbench, load_json, plain_trajectory

FORMAT = "agentless-traj"
PRIORITY = 15
SUFFIX = "_traj.json"

_STAGE_KEYS = (b'"3_final_combined_files"', b'"2_embedding_selected_files"',
               b'"1_model_selected_files"', b'"4_related_elements"',
               b'"5_sampled_edit_locs_and_patches"', b'"6_final_selected_patch"')
_KINDS = ("function:", "class:", "variable:")


def detect(path: Path, head: bytes) -> bool:
    """A ``*_traj.json`` file holding a JSON object with Agentless stage keys."""
    if path.is_dir() or not path.name.endswith(SUFFIX) or not head.lstrip().startswith(b"{"):
        return False
    return any(k in head for k in _STAGE_KEYS)


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    data = load_json(path)
    if is_contextbench(options):
        return [_read_contextbench(data, path, options)]
    if not isinstance(data, dict):
        raise AdapterError("an Agentless _traj.json must hold a JSON object", path=str(path))
    return [_read_strict(data, path, options)]


def _id_from_name(path: Path) -> str:
    # The reference uses str.replace, which removes every occurrence.
    return path.name.replace(SUFFIX, "")


# --- preset contextbench --------------------------------------------------------------------


def _cb_norm_symbol(s: str) -> str:
    """The reference's ``_norm_symbol``: the three prefixes removed one after the other."""
    s = s.strip()
    s = re.sub(r"^function\s*:\s*", "", s)
    s = re.sub(r"^class\s*:\s*", "", s)
    s = re.sub(r"^variable\s*:\s*", "", s)
    return s.strip()


def _cb_symbols_of_blocks(items: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(items, list):
        return out
    for it in items:
        if not it or not isinstance(it, str):
            continue
        for line in it.splitlines():
            line = line.strip()
            if line.startswith(_KINDS):
                sym = _cb_norm_symbol(line)
                if sym:
                    out.append(sym)
    return out


def _cb_related_symbols(rel: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if not isinstance(rel, dict):
        return out
    for f, items in rel.items():
        if not f:
            continue
        syms = _cb_symbols_of_blocks(items)
        if syms:
            out[f] = sorted(set(syms))
    return out


def _cb_match(raw: str) -> tuple[int, int] | None:
    if m := LINES_RE.match(raw):
        a, b = int(m.group(1)), int(m.group(2))
        return (b, a) if a > b else (a, b)
    if m := LINE_RE.match(raw):
        a = int(m.group(1))
        return (a, a)
    return None


def _cb_edit_loc_lines(loc_lines: list[Any], path: Path, f: str) -> list[tuple[int, int]]:
    """The reference's ``_parse_edit_loc_lines``: a whole entry first, then its lines."""
    spans: list[tuple[int, int]] = []
    for raw in loc_lines:
        raw = raw or ""
        if not isinstance(raw, str):
            raise AdapterError(f"edit location of {f!r} is not a string ({raw!r}); the "
                               "reference raises here", path=str(path),
                               field="5_sampled_edit_locs_and_patches")
        raw = raw.strip()
        if not raw:
            continue
        hit = _cb_match(raw)
        if hit is not None:
            spans.append(hit)
            continue
        for line in raw.splitlines():
            line = line.strip()
            if line and (hit := _cb_match(line)) is not None:
                spans.append(hit)
    return spans


def _has_line(edit_locs: dict[Any, Any]) -> bool:
    for loc_lines in edit_locs.values():
        if isinstance(loc_lines, list) and any(
                isinstance(r, str) and ("line:" in r or "lines:" in r) for r in loc_lines):
            return True
    return False


def _cb_spans(data: dict[str, Any], path: Path) -> list[tuple[str, int, int]]:
    samples = data.get("5_sampled_edit_locs_and_patches") or []
    if not isinstance(samples, list):
        return []
    chosen = next((s for s in samples if isinstance(s, dict)
                   and isinstance(s.get("edit_locs"), dict) and _has_line(s["edit_locs"])),
                  None)
    if chosen is None:
        return []
    spans: list[tuple[str, int, int]] = []
    for f, loc_lines in chosen["edit_locs"].items():
        if not f or not isinstance(loc_lines, list):
            continue
        spans.extend((f, a, b) for a, b in lines_merge_raw(_cb_edit_loc_lines(loc_lines, path, f)))
    return spans


def _cb_files(data: dict[str, Any], path: Path) -> list[str]:
    raw = data.get("3_final_combined_files") or data.get("2_embedding_selected_files") or []
    try:
        items = list(raw)
    except TypeError as exc:
        raise AdapterError("file list is not iterable; the reference raises here",
                           path=str(path), field="3_final_combined_files") from exc
    return sorted({f for f in items if isinstance(f, str) and f})


def _read_contextbench(data: Any, path: Path, options: ReadOptions) -> Trajectory:
    iid = _id_from_name(path)
    if not isinstance(data, dict):
        # The reference extracts nothing (-> no_context_extracted) and has no model patch.
        return cb_trajectory(iid, [CbStep()], CbStep(), options=options, source=path,
                             agent="agentless", final_symbols=True)
    if data.get("instance_id"):
        iid = str(data["instance_id"])
    patch = data.get("6_final_selected_patch", "")
    if patch is not None and not isinstance(patch, str):
        raise AdapterError("'6_final_selected_patch' is not a string", path=str(path),
                           field="6_final_selected_patch")
    step = CbStep(files=_cb_files(data, path), spans=_cb_spans(data, path),
                  symbols=_cb_related_symbols(data.get("4_related_elements")),
                  action="agentless localisation", tool="localize")
    final = CbStep(list(step.files), list(step.spans), dict(step.symbols))
    return cb_trajectory(iid, [step], final, options=options, source=path, agent="agentless",
                         model_patch=patch or None, final_symbols=True)


# --- preset strict --------------------------------------------------------------------------


def _str_list(value: Any, path: Path, fld: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AdapterError("must be a list of strings", path=str(path), field=fld)
    return [v for v in value if v]


def _blocks(value: Any, path: Path, fld: str) -> list[tuple[str, list[str]]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise AdapterError("must be an object {file: [location strings]}", path=str(path),
                           field=fld)
    out = []
    for f, blocks in value.items():
        if isinstance(blocks, str):
            blocks = [blocks]
        if not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks):
            raise AdapterError(f"locations of {f!r} must be a list of strings",
                               path=str(path), field=fld)
        if f:
            out.append((f, blocks))
    return out


def _read_strict(data: dict[str, Any], path: Path, options: ReadOptions) -> Trajectory:
    iid = data.get("instance_id")
    if not isinstance(iid, str) or not iid:
        iid = _id_from_name(path)
    files = _str_list(data.get("3_final_combined_files"), path, "3_final_combined_files")
    if not files:
        files = (_str_list(data.get("1_model_selected_files"), path, "1_model_selected_files")
                 + _str_list(data.get("2_embedding_selected_files"), path,
                             "2_embedding_selected_files"))
    symbols: list[SymbolRef] = []
    lines: dict[str, set[tuple[int, int]]] = {}
    for f, blocks in _blocks(data.get("4_related_elements"), path, "4_related_elements"):
        parse_location_blocks(f, blocks, symbols, lines)
    samples = data.get("5_sampled_edit_locs_and_patches") or []
    if not isinstance(samples, list):
        raise AdapterError("must be a list of samples", path=str(path),
                           field="5_sampled_edit_locs_and_patches")
    for k, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise AdapterError("a sample must be an object", path=str(path),
                               field=f"5_sampled_edit_locs_and_patches[{k}]")
        for f, blocks in _blocks(sample.get("edit_locs"), path,
                                 f"5_sampled_edit_locs_and_patches[{k}].edit_locs"):
            parse_location_blocks(f, blocks, symbols, lines)
    views: list[View] = [View(f, None, None) for f in dict.fromkeys(files)]
    for f in sorted(lines):
        views.extend(View(f, a, b) for a, b in lines_normalize(sorted(lines[f])))
    symbols = list(dict.fromkeys(symbols))
    patch = data.get("6_final_selected_patch")
    if patch is not None and not isinstance(patch, str):
        raise AdapterError("must be a string", path=str(path), field="6_final_selected_patch")
    step = Step(index=0, tool="localize", action="agentless localisation", views=views,
                symbols=symbols)
    return plain_trajectory(iid, [step], list(views), options=options, source=path,
                            agent="agentless", model_patch=patch or None,
                            final_symbols=list(symbols))
