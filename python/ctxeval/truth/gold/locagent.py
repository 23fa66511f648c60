"""LocAgent and Loc-Bench gold: localisation gold at the file, module and function levels.

Three spellings, each read the way LocAgent's ``evaluation/eval_metric.py`` reads the data it
stands for, so that the ``locagent`` preset reproduces its numbers:

- ``edit_functions`` (the ``czlll/SWE-bench_Lite`` and ``czlll/Loc-Bench_V1`` datasets, a list
  or a Python-literal string of ``path:Class.method`` / ``path:func``): the function gold as
  given; the files and the modules (``path:Class``) derived from it in first-met order, each
  once (``cal_metrics_w_dataset``);
- ``file_changes`` (LocAgent's ``gt_location.jsonl``): per changed file ``file``,
  ``changes.edited_modules`` and ``changes.edited_entities``, concatenated as given, repeats
  kept (``load_gt_dict``, read by ``cal_metrics_w_file``);
- ``meta_data.gt_file_changes`` (the gold LocAgent's released ``loc_outputs.jsonl`` carry per
  instance): the same structure, read as the ``edit_functions`` of the dataset the published
  table was made from: the functions are the ``edited_entities``, files and modules derived
  from them. (This reading reproduces all seven numbers of LocAgent's published SWE-bench Lite
  table; reading its ``edited_modules`` instead, which repeat a class once per changed method,
  gives module Acc@5 0.781 instead of 0.865: ``docs/presets.md``.)

The gold patch, where the record has one (``patch``, or ``meta_data.patch``), is the gold
context as for SWE-bench records; without one the gold files are file-level gold.
"""

from __future__ import annotations

import ast
from typing import Any

from ...errors import PatchError
from ...model import GoldInstance, GoldLocations, View
from .common import BAD, WARN, RowCtx, opt_str
from .swebench import _language, patch_views

_META = "meta_data"


def is_locagent(rec: dict[str, Any]) -> bool:
    meta = rec.get(_META)
    return "edit_functions" in rec or isinstance(rec.get("file_changes"), list) or (
        isinstance(meta, dict) and isinstance(meta.get("gt_file_changes"), list))


def literal_list(value: Any) -> list[str] | None:
    """A list of strings given as a list or as a Python literal (``"['a.py:f']"``, as
    datasets exported through pandas write them); None when it is neither."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip() or "[]")
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    return None


def from_functions(functions: list[str], origin: str) -> GoldLocations:
    """LocAgent's levels of an ``edit_functions`` list: files ``f.split(':')[0]`` and modules
    ``file:name.split('.')[0]``, each once in first-met order; functions as given."""
    files = list(dict.fromkeys(f.split(":")[0] for f in functions))
    modules = list(dict.fromkeys(
        f"{f.split(':')[0]}:{f.split(':')[-1].split('.')[0]}" for f in functions))
    return GoldLocations(tuple(files), tuple(modules), tuple(functions), origin)


def _file_changes(changes: list[Any], ctx: RowCtx, fld: str
                  ) -> tuple[list[str], list[str], list[str]] | None:
    files: list[str] = []
    modules: list[str] = []
    functions: list[str] = []
    for k, fc in enumerate(changes):
        where = f"{fld}[{k}]"
        if not isinstance(fc, dict) or not isinstance(fc.get("file"), str):
            ctx.report(BAD, "a file change must be an object with a string 'file'; gold "
                       "locations left out", where)
            return None
        files.append(fc["file"])
        inner = fc.get("changes") if isinstance(fc.get("changes"), dict) else {}
        for key, out in (("edited_modules", modules), ("edited_entities", functions)):
            found = literal_list(inner.get(key, []))
            if found is None:
                ctx.report(BAD, f"'{key}' must be a list of strings; gold locations left out",
                           f"{where}.changes.{key}")
                return None
            out.extend(found)
    return files, modules, functions


def _locations(rec: dict[str, Any], ctx: RowCtx) -> GoldLocations | None:
    if "edit_functions" in rec:
        functions = literal_list(rec["edit_functions"])
        if functions is None:
            ctx.report(BAD, "'edit_functions' must be a list of strings; instance left out",
                       "edit_functions")
            return None
        return from_functions(functions, "edit_functions")
    if isinstance(rec.get("file_changes"), list):
        found = _file_changes(rec["file_changes"], ctx, "file_changes")
        if found is None:
            return None
        return GoldLocations(*map(tuple, found), "file_changes")
    found = _file_changes(rec[_META]["gt_file_changes"], ctx, f"{_META}.gt_file_changes")
    if found is None:
        return None
    return from_functions(found[2], f"{_META}.gt_file_changes")


def parse_locagent(rec: dict[str, Any], ctx: RowCtx) -> GoldInstance | None:
    """One LocAgent / Loc-Bench record, or None (reported) without an id or readable
    locations."""
    iid = opt_str(rec.get("instance_id"))
    if iid is None:
        ctx.report(BAD, "missing or empty 'instance_id'; instance left out", "instance_id")
        return None
    locations = _locations(rec, ctx)
    if locations is None:
        return None
    meta = rec.get(_META) if isinstance(rec.get(_META), dict) else {}

    def field(key: str) -> str | None:
        return opt_str(rec.get(key)) or opt_str(meta.get(key))

    patch = field("patch")
    views: list[View] = []
    if patch:
        try:
            views = patch_views(patch, origin=ctx.path)
        except PatchError as exc:
            ctx.report(WARN, f"gold patch of {iid} cannot be read: {exc.message}; its gold "
                       "files are file-level gold", "patch")
            patch = None
    if not views:
        files = list(dict.fromkeys(locations.files))
        views = [View(f, None, None) for f in files]
    if not views:
        ctx.report(BAD, f"{iid} has no gold file and no gold patch; instance left out",
                   "edit_functions")
        return None
    for key in ("repo", "base_commit"):
        if field(key) is None:
            ctx.report(WARN, f"missing '{key}' for {iid}", key)
    return GoldInstance(
        instance_id=iid,
        repo=field("repo"),
        base_commit=field("base_commit"),
        context=views,
        patch=patch,
        language=field("language") or _language(views),
        source=field("source") or "LocAgent",
        gold_kind="patch" if patch else "context",
        origin=ctx.path,
        locations=locations,
    )
