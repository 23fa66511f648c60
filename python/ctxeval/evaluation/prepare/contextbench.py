"""Engine input for preset ``contextbench``: the published ContextBench evaluator's reading.

:class:`ContextBenchPreparer` has the interface of
:class:`ctxeval.evaluation.prepare.preparer.Preparer` but follows the reference
(``anonymousUser2026/ContextBench``, ``contextbench/evaluate.py``) step by step where it decides
*what* is counted; the arithmetic itself stays in the native engine's ``contextbench`` branches.
What it reproduces (``docs/presets.md`` lists every difference from ``strict``):

- predicted paths are resolved by stripping leading components until a regular file of the
  checkout is found (``_resolve_repo_relpath``); the step stays even when nothing resolves;
- a step's file set is its own listed files (``Trajectory.extra["cb_step_files"]``), never
  derived from symbols; spans are passed with their numbers untouched;
- a step naming symbols is scored by those names alone (the reference's name matching);
- gold paths get the reference's gold normalisation, no existence check, and gold files
  missing from the checkout still count at file and line level;
- EditLoc uses the removed lines of the model patch, or of the gold patch when the model patch
  is missing or empty;
- nothing usable in the final context is the reference's ``no_context_extracted`` error row.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...errors import InstanceError
from ...model import GoldInstance, SymbolRef, Trajectory, View
from ...truth.extraction import SymbolExtractor
from ...truth.gold.contextbench import contextbench_normalize_path
from ...truth.patches import contextbench_removed_lines
from ...truth.repo import RepoSnapshot
from ...truth.symbols import resolve_name
from .preparer import FileTable, LruCache, Notes, Planned, PreparerBase

LineTuple = tuple[int, int, int | None]


def repo_path(path: str) -> str | None:
    """The checkout path a reference path string opens (``os.path.join(repo, p)``), or None
    when it would leave the checkout. ``a/./b`` opens ``a/b``; the string itself stays the
    file's identity, as in the reference."""
    if not path or path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


class CbFileTable(FileTable):
    """Dense file ids keyed by the reference's path *strings*, each naming the repo file the
    reference would open (or none)."""

    def __init__(self, snap: RepoSnapshot, symbols: SymbolExtractor,
                 cache: dict[tuple[str, str], Any] | LruCache) -> None:
        super().__init__(snap, symbols, "contextbench", cache)

    def is_file(self, key: str) -> bool:
        """The reference's ``_is_repo_file`` (which strips the candidate before looking)."""
        real = repo_path(key.strip())
        return real is not None and self.snap.exists(real)

    def id(self, key: str) -> int:
        fid = self.ids.get(key)
        return fid if fid is not None else self._add(key, repo_path(key))


def resolve_repo_relpath(table: CbFileTable, path: Any) -> str | None:
    """The reference's ``_resolve_repo_relpath``: the first suffix of the (cleaned) path that
    is a regular file inside the checkout, as that suffix string; None when none is."""
    if not path:
        return None
    p = str(path).strip().strip("'\"").replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    p = p.lstrip("/")
    parts = [x for x in p.split("/") if x]
    for i in range(len(parts)):
        cand = "/".join(parts[i:])
        if table.is_file(cand):
            return cand
    return None


def _listed_files(views: list[View], extra: Any, i: int | None) -> list[str]:
    """The reference step's ``files``: the adapter's explicit list when it differs from the
    views' files, else the files of the views."""
    if i is None:
        if isinstance(extra, list):
            return [str(f) for f in extra]
    elif isinstance(extra, list) and i < len(extra) and isinstance(extra[i], list):
        return [str(f) for f in extra[i]]
    return list(dict.fromkeys(v.file for v in views))


class ContextBenchPreparer(PreparerBase):
    """Builds engine inputs under preset ``contextbench`` (same interface as ``Preparer``)."""

    default_preset = "contextbench"

    # -- one step --------------------------------------------------------------------------

    def _view_set(self, table: CbFileTable, views: list[View], listed: list[str],
                  syms: list[SymbolRef], notes: Notes) -> dict[str, Any]:
        """The reference's ``_filter_step_to_repo`` followed by its per-step reading."""
        resolved: dict[str, str | None] = {}

        def res(p: str) -> str | None:
            if p not in resolved:
                resolved[p] = resolve_repo_relpath(table, p)
                if resolved[p] is None:
                    notes.unresolved_paths.append(p)
            return resolved[p]

        files = sorted({r for r in map(res, listed) if r is not None})
        lines: list[LineTuple] = []
        for v in views:
            if v.start_line is None:
                continue
            r = res(v.file)
            if r is not None:
                lines.append((table.id(r), v.start_line, v.end_line))
        by_file: dict[str, list[str]] = {}
        for s in syms:
            r = res(s.file)
            if r is not None:
                by_file.setdefault(r, []).append(s.name)
        out = {
            "lines": lines,
            "files": [table.id(f) for f in files],
            "symbols": [],
            # A step naming symbols (in a file that resolves) is scored by those names only.
            "symbols_only": bool(by_file),
        }
        for path, names in by_file.items():
            table.symbol_refs.append((out, table.id(path), names, False))
        return out

    def _resolve_symbols(self, table: FileTable, notes: Notes) -> None:
        """The reference's name matching; each definition counted once per file and step."""
        for out, fid, names, _signature in table.symbol_refs:
            defs = table.files[fid].defs
            seen: set[int] = set()
            for name in names:
                hits = resolve_name(defs, name, style="contextbench") if name else []
                if not hits and name.strip():
                    notes.unresolved_symbols.append(f"{table.files[fid].path}:{name}")
                for d in hits:
                    k = defs.index(d)
                    if k not in seen:
                        seen.add(k)
                        out["symbols"].append((fid, k))

    # -- one instance ----------------------------------------------------------------------

    def _gold(self, table: CbFileTable, gold: GoldInstance, notes: Notes) -> dict[str, Any]:
        files: list[int] = []
        lines: list[LineTuple] = []
        for v in gold.context:
            path = contextbench_normalize_path(v.file)
            if not path:
                continue
            fid = table.id(path)
            if fid not in files:
                files.append(fid)
            if not table.files[fid].exists and v.file not in notes.gold_missing_files:
                notes.gold_missing_files.append(v.file)
            if v.start_line is not None:
                lines.append((fid, v.start_line, v.end_line))
        return {"lines": lines, "files": files}

    def _pred_edits(self, table: CbFileTable, gold: GoldInstance, traj: Trajectory
                    ) -> dict[str, Any] | None:
        patch = traj.model_patch or gold.patch or ""
        if not patch:
            return None
        lines: list[LineTuple] = []
        for path, ranges in contextbench_removed_lines(patch).items():
            fid = table.id(path)
            lines.extend((fid, a, b) for a, b in ranges)
        return {"files": [], "lines": lines}

    def plan(self, gold: GoldInstance, traj: Trajectory | None, snap: RepoSnapshot
             ) -> Planned:
        """Engine input and notes for one (gold, trajectory) pair, definitions aside.

        Raises :class:`InstanceError` where the reference writes an error row instead of
        scores (``no_context_extracted``), and for ``traj=None`` (``no_trajectory``): the
        reference only ever scores trajectories it could read.
        """
        if traj is None:
            raise InstanceError("no readable trajectory for this instance (the contextbench "
                                "preset scores only trajectories it read)", kind="no_trajectory")
        table = CbFileTable(snap, self.symbols, self.index_cache)
        notes = Notes()
        gold_set = self._gold(table, gold, notes)

        step_files = traj.extra.get("cb_step_files")
        steps = [self._view_set(table, s.views, _listed_files(s.views, step_files, i),
                                s.symbols, notes)
                 for i, s in enumerate(traj.steps)]

        declared = traj.final_context is not None or traj.final_symbols is not None
        final: dict[str, Any] | None = None
        if declared:
            views = traj.final_context or []
            final = self._view_set(table, views,
                                   _listed_files(views, traj.extra.get("cb_final_files"), None),
                                   traj.final_symbols or [], notes)
            checked = [final]
        else:
            checked = steps
        if traj.extra.get("cb_no_context") or not any(vs["files"] or vs["lines"]
                                                       for vs in checked):
            raise InstanceError("no context extracted from the trajectory (nothing in the final "
                                "context resolves to a file of the checkout)",
                                kind="no_context_extracted")
        if self.final_policy == "union" or not declared:
            final = None
            notes.final_source = "union"
        elif self.final_policy == "last" and steps:
            final = steps[-1]
            notes.final_source = "last"
        else:
            notes.final_source = "declared"

        inst = {
            "files": [],
            "gold": gold_set,
            "steps": steps,
            "final": final,
            "gold_edits": None,
            "pred_edits": self._pred_edits(table, gold, traj),
        }
        return Planned(inst, notes, table)
