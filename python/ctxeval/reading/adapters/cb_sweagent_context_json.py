"""SWE-agent ``<id>.context.json`` (ContextBench's SWE-agent): the collected context of one run.

``file_line_ranges`` maps files to ``{start, end, type}`` ranges, ``viewed_files`` lists files
(those without ranges count at file level only), ``info.submission`` is the model patch. There is no
step order: preset ``contextbench`` makes it the single final step, as the reference does; preset
``strict`` makes it one step and the declared final context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Step, Trajectory, View
from . import ReadOptions
from .contextbench import (
    CbStep,
    cb_trajectory,
    is_contextbench,
    load_json,
    plain_trajectory,
    strict_int,
    swapped,
    sweagent_norm,
)

FORMAT = "sweagent-context-json"
PRIORITY = 10
SUFFIX = ".context.json"


def detect(path: Path, head: bytes) -> bool:
    """A ``*.context.json`` file: the reference routes on this suffix alone."""
    return path.is_file() and path.name.endswith(SUFFIX)


def _field(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    """``data[key]`` when of ``kind``, an empty ``kind`` when absent, AdapterError otherwise."""
    if key not in data:
        return kind()
    value = data[key]
    if not isinstance(value, kind):
        raise AdapterError(f"must be a {kind.__name__}, got {type(value).__name__}",
                           path=str(path), field=key)
    return value


def _iter(value: Any, path: Path, field_name: str) -> list[Any]:
    """Iterate as the reference's ``for`` loop would: lists, and (oddly) dict keys and chars."""
    if isinstance(value, (list, dict, str)):
        return list(value)
    raise AdapterError(f"must be a list, got {type(value).__name__}", path=str(path),
                       field=field_name)


def _path(value: Any, path: Path, field_name: str) -> str:
    if not isinstance(value, str):
        raise AdapterError(f"a file path must be a string, got {value!r}", path=str(path),
                           field=field_name)
    return value


def _submission(data: dict[str, Any], path: Path) -> str | None:
    info = data.get("info")
    sub = info.get("submission") if isinstance(info, dict) else None
    if sub and not isinstance(sub, str):
        raise AdapterError("must be a string", path=str(path), field="info.submission")
    return sub or None


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    data = load_json(path)
    if not isinstance(data, dict):
        raise AdapterError("a context.json must be a JSON object", path=str(path))
    ranges = _field(data, "file_line_ranges", dict, path)
    viewed = _iter(data.get("viewed_files", []), path, "viewed_files")
    patch = _submission(data, path)
    name_id = path.name.replace(SUFFIX, "")
    if is_contextbench(options):
        return [cb_trajectory(name_id, [], _cb_final(ranges, viewed, path), options=options,
                              source=path, agent="swe-agent", model_patch=patch)]
    warnings: list[str] = []
    views = _strict_views(ranges, viewed, path, warnings)
    own_id = data.get("instance_id")
    iid = own_id if isinstance(own_id, str) and own_id else name_id
    return [plain_trajectory(iid, [Step(index=0, action="context.json", views=views)],
                             list(views), options=options, source=path, agent="swe-agent",
                             model_patch=patch, warnings=warnings)]


def _cb_final(ranges: dict[str, Any], viewed: list[Any], path: Path) -> CbStep:
    """The reference's single step: every file (sorted), ranges as given, missing bounds = 1."""
    files: set[str] = set()
    spans: list[tuple[str, int, int]] = []
    for key, items in ranges.items():
        f = sweagent_norm(key)
        files.add(f)
        for item in _iter(items, path, f"file_line_ranges.{key}"):
            if isinstance(item, dict):
                where = f"file_line_ranges.{key}"
                spans.append((f, strict_int(item.get("start", 1), path=path, field_name=where),
                              strict_int(item.get("end", 1), path=path, field_name=where)))
    for i, v in enumerate(viewed):
        files.add(sweagent_norm(_path(v, path, f"viewed_files[{i}]")))
    return CbStep(files=sorted(files), spans=spans)


def _strict_views(ranges: dict[str, Any], viewed: list[Any], path: Path,
                  warnings: list[str]) -> list[View]:
    """Ranges swapped into order; a range with one bound is that line; files alone: file-only."""
    views: list[View] = []
    for key, items in ranges.items():
        for item in _iter(items, path, f"file_line_ranges.{key}"):
            if not isinstance(item, dict):
                continue
            start, end = item.get("start"), item.get("end")
            ok = [x for x in (start, end) if isinstance(x, int) and not isinstance(x, bool)]
            if not ok:
                warnings.append(f"file_line_ranges.{key}: range without line numbers")
                views.append(View(key, None, None))
                continue
            views.append(View(key, ok[0], ok[-1]))
    seen = {v.file for v in views}
    for i, v in enumerate(viewed):
        f = _path(v, path, f"viewed_files[{i}]")
        if f not in seen:
            seen.add(f)
            views.append(View(f, None, None))
    return swapped(views)
