"""LocAgent localisation output (``loc_outputs.jsonl``, one JSON object per instance).

LocAgent (``gersteinlab/LocAgent``) writes, per instance, ranked ``found_files``,
``found_modules`` (``path:Class`` / ``path:func``) and ``found_entities`` (``path:Class.method``
/ ``path:func``), after merging its samples; ``raw_output_loc`` holds the model's answers and
``meta_data`` the instance (repo, base commit, patch, and the gold ``gt_file_changes``, which
the LocAgent gold loader reads). The lists may be Python-literal strings (``"['a.py']"``), as
tables exported through pandas write them.

Each record becomes a trajectory whose :attr:`~ctxeval.model.Trajectory.ranking` is the three
lists as given (repeats too: the ``locagent`` preset counts them as LocAgent does), with one
step, also the final context: the found files as file-level views and the found modules and
entities as symbol views (like an Agentless localisation). Outputs not merged (a list of
samples per level) are read from their first sample, with a read warning.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Ranking, Step, SymbolRef, Trajectory, View
from ...truth.gold.locagent import literal_list
from . import ReadOptions
from ._sessions import jsonl_objects

FORMAT = "locagent"
#: Before Agentless (20), whose detection (``found_files`` and ``instance_id``) also matches.
PRIORITY = 15

_LEVEL_KEY = re.compile(rb'(?<!\\)"found_(modules|entities)"\s*:')
_ID_KEY = re.compile(rb'(?<!\\)"instance_id"\s*:')
_KEYS = {"file": "found_files", "module": "found_modules", "function": "found_entities"}


def detect(path: Path, head: bytes) -> bool:
    """A JSON(L) file whose first record has ``instance_id`` and ``found_modules`` or
    ``found_entities``."""
    if path.is_dir() or not head.lstrip().startswith(b"{"):
        return False
    first = head.split(b"\n", 1)[0]
    return bool(_LEVEL_KEY.search(first) and _ID_KEY.search(first))


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    return [trajectory(rec, f"{path}:{lineno}", options, path=str(path), line=lineno)
            for lineno, rec in jsonl_objects(path, complete=True)]


def _level(rec: dict[str, Any], key: str, warnings: list[str], path: str | None,
           line: int | None) -> list[str] | None:
    value = rec.get(key)
    if value is None:
        return None
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        warnings.append(f"{key}: {len(value)} samples not merged; the first one is read")
        value = value[0]
    found = literal_list(value)
    if found is None:
        raise AdapterError("must be a list of strings (or its Python literal)", path=path,
                           line=line, field=key)
    return found


def trajectory(rec: dict[str, Any], source: str, options: ReadOptions, *,
               path: str | None = None, line: int | None = None) -> Trajectory:
    """One LocAgent record as a trajectory with its ranking."""
    iid = rec.get("instance_id") or options.instance_id
    if not isinstance(iid, str) or not iid:
        raise AdapterError("missing instance_id", path=path, line=line, field="instance_id")
    warnings: list[str] = []
    files, modules, functions = (_level(rec, _KEYS[k], warnings, path, line)
                                 for k in ("file", "module", "function"))
    ranking = Ranking(files, modules, functions)
    views = [View(f, None, None) for f in dict.fromkeys(files or [])]
    symbols = list(dict.fromkeys(
        SymbolRef(item.split(":", 1)[0], item.split(":", 1)[1])
        for item in [*(modules or []), *(functions or [])] if ":" in item))
    step = Step(index=0, tool="localize", action="LocAgent localisation", views=views,
                symbols=symbols)
    meta = rec.get("meta_data") if isinstance(rec.get("meta_data"), dict) else {}
    extra: dict[str, Any] = {"read_warnings": warnings} if warnings else {}
    return Trajectory(
        instance_id=iid, steps=[step], run=options.run, agent="locagent",
        repo=meta.get("repo") if isinstance(meta.get("repo"), str) else None,
        base_commit=meta.get("base_commit") if isinstance(meta.get("base_commit"), str)
        else None,
        final_context=list(views), final_symbols=list(symbols), source=source, extra=extra,
        ranking=ranking,
    )
