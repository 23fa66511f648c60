"""Resolved status from benchmark results files (SWE-bench harness reports and run summaries).

Three shapes are read, detected from the content:

- a per-instance harness report, ``{"<id>": {"resolved": true, ...}}``, or the same object without
  the id level, in a file named ``<id>.report.json``;
- a run-level summary listing ids: ``{"resolved": [ids]}`` (SWE-agent's ``final_report.json``) or
  ``{"resolved_ids": [...], "unresolved_ids": [...], ...}`` (the SWE-bench harness). An instance
  of the run that the summary does not list as resolved is taken as not resolved;
- a directory of either, read file by file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError

_REPORT_SUFFIXES = (".report.json", ".json")


@dataclass(slots=True)
class ResolvedTable:
    """Resolved status per instance id, with what to assume for ids a summary does not list."""

    status: dict[str, bool] = field(default_factory=dict)
    #: True once a run-level summary was read: unlisted instances of the run are unresolved.
    lists_resolved: bool = False

    def get(self, instance_id: str) -> bool | None:
        if instance_id in self.status:
            return self.status[instance_id]
        return False if self.lists_resolved else None

    def update(self, other: ResolvedTable) -> None:
        self.status.update(other.status)
        self.lists_resolved = self.lists_resolved or other.lists_resolved


def _id_from_name(path: Path) -> str:
    name = path.name
    for suf in _REPORT_SUFFIXES:
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


def parse_results(obj: Any, path: Path) -> ResolvedTable:
    """One parsed results file → :class:`ResolvedTable`; InputError if it has none of the shapes."""
    if not isinstance(obj, dict):
        raise InputError("a results file must hold a JSON object", path=str(path))
    table = ResolvedTable()
    ids_key = "resolved_ids" if isinstance(obj.get("resolved_ids"), list) else (
        "resolved" if isinstance(obj.get("resolved"), list) else None)
    if ids_key is not None:
        table.lists_resolved = True
        for key in ("unresolved_ids", "completed_ids", "submitted_ids", "error_ids",
                    "empty_patch_ids"):
            for iid in obj.get(key) or []:
                if isinstance(iid, str):
                    table.status[iid] = False
        for iid in obj[ids_key]:
            if not isinstance(iid, str):
                raise InputError("resolved ids must be strings", path=str(path), field=ids_key)
            table.status[iid] = True
        return table
    if isinstance(obj.get("resolved"), bool):
        iid = obj.get("instance_id") if isinstance(obj.get("instance_id"), str) \
            else _id_from_name(path)
        table.status[iid] = obj["resolved"]
        return table
    found = False
    for iid, rep in obj.items():
        if isinstance(rep, dict) and isinstance(rep.get("resolved"), bool):
            table.status[iid] = rep["resolved"]
            found = True
    if not found:
        raise InputError("no resolved status found (expected a SWE-bench report or a run "
                         "summary with resolved ids)", path=str(path))
    return table


def load_resolved(path: str | Path) -> ResolvedTable:
    """Read a results file or a directory of them."""
    p = Path(path)
    files = sorted(q for q in p.rglob("*.json") if q.is_file()) if p.is_dir() else [p]
    if p.is_dir() and not files:
        raise InputError("no .json results files in this directory", path=str(path))
    table = ResolvedTable()
    for f in files:
        try:
            obj = orjson.loads(f.read_bytes())
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=str(f)) from exc
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=str(f)) from exc
        table.update(parse_results(obj, f))
    return table
