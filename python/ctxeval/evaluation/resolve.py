"""Resolving a trajectory against its repository at the base commit (``ctxeval convert``).

Some views cannot be placed without the source: a path written as a suffix, a definition shown
by name without line numbers, lines printed without their numbers (``grep`` without ``-n``, the
tail of an output truncated in the middle: ``View.text``, placed by :mod:`ctxeval.reading.placing`).
With the repository at hand they become plain repo paths and line views, so the neutral file
that ``convert`` writes can be evaluated without the repository's symbols; what cannot be
resolved is kept as it was and listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..model import Step, SymbolRef, Trajectory, View
from ..reading.moatless_spans.expansion import is_mark
from ..reading.placing import file_lines, place_view
from ..truth.extraction import SymbolExtractor
from ..truth.repo import RepoSnapshot
from ..truth.symbols import Definition, resolve_name
from .prepare.preparer import LruCache, moatless_step_shown


@dataclass(slots=True)
class Resolution:
    """What could not be resolved in one trajectory."""

    unresolved_paths: list[str] = field(default_factory=list)
    unresolved_symbols: list[str] = field(default_factory=list)
    #: repo path -> [printed chunks left unplaced, printed chunks in all]
    unplaced_text: dict[str, list[int]] = field(default_factory=dict)

    def messages(self) -> list[str]:
        out = [f"path not in the repository: {p}" for p in sorted(set(self.unresolved_paths))]
        out += [f"definition not found: {s}" for s in sorted(set(self.unresolved_symbols))]
        out += [f"printed lines not placed in {p}: {k} of {n} runs fit more than one place "
                "or none" for p, (k, n) in sorted(self.unplaced_text.items()) if k]
        return out


def definitions(snap: RepoSnapshot, symbols: SymbolExtractor, path: str,
                preset: str = "strict") -> list[Definition]:
    """Definitions of a repo file at the snapshot's commit (parsed once per blob)."""
    data = snap.read(path)
    if data is None:
        return []
    blob = snap.blob_id(path) or f"path:{path}"
    return symbols.get(blob, data, path, preset) or []


def resolve_symbol(snap: RepoSnapshot, symbols: SymbolExtractor, ref: SymbolRef,
                   preset: str = "strict") -> tuple[str | None, list[Definition]]:
    """The repo path a symbol view names and the definitions its name resolves to."""
    path = snap.resolve(ref.file)
    if path is None:
        return None, []
    style = "contextbench" if preset == "contextbench" else "qualified"
    return path, resolve_name(definitions(snap, symbols, path, preset), ref.name, style=style)


class TrajectoryResolver:
    """Rewrites trajectories in repo coordinates; one per repository snapshot."""

    def __init__(self, snap: RepoSnapshot, symbols: SymbolExtractor,
                 preset: str = "strict") -> None:
        self.snap = snap
        self.symbols = symbols
        self.preset = preset
        self.lines_cache = LruCache(256)

    def _views(self, views: list[View], res: Resolution) -> list[View]:
        out: list[View] = []
        for v in views:
            path = self.snap.resolve(v.file)
            if path is None:
                res.unresolved_paths.append(v.file)
                out.append(v)
                continue
            v = replace(v, file=path)
            found = None
            if v.text is not None and self.preset != "contextbench":
                found = file_lines(self.snap, path, self.lines_cache)
            if found is None or v.text is None:
                out.append(v)
                continue
            placed, missing = place_view(v, found)
            out.extend(placed)
            count = res.unplaced_text.setdefault(path, [0, 0])
            count[0] += missing
            count[1] += len(v.text)
        return out

    def _symbols(self, refs: list[SymbolRef], res: Resolution
                 ) -> tuple[list[View], list[SymbolRef]]:
        views: list[View] = []
        kept: list[SymbolRef] = []
        moatless: dict[str, list[SymbolRef]] = {}
        for ref in refs:
            path = self.snap.resolve(ref.file) if ref.moatless else None
            if path is not None:
                moatless.setdefault(path, []).append(ref)
        step_shown = moatless_step_shown(self.snap, self.lines_cache, moatless)
        for path, group in moatless.items():
            shown = step_shown.get(path)
            if shown is None:
                continue
            views.extend(View(path, a, b) for a, b in shown.lines)
            res.unresolved_symbols.extend(f"{path}:{n}" for n in shown.unknown)
            refs = [r for r in refs if r not in group]
        for ref in refs:
            if is_mark(ref.name):
                continue
            path, defs = resolve_symbol(self.snap, self.symbols, ref, self.preset)
            if path is None:
                res.unresolved_paths.append(ref.file)
                kept.append(ref)
            elif not defs:
                res.unresolved_symbols.append(f"{path}:{ref.name}")
                kept.append(SymbolRef(path, ref.name, ref.signature))
            else:  # a signature-only reference: the header line, never the body
                views.extend(View(path, d.start_line, d.start_line if ref.signature
                                  else d.end_line) for d in defs)
        return views, kept

    def resolve(self, traj: Trajectory) -> tuple[Trajectory, Resolution]:
        res = Resolution()
        steps = []
        for s in traj.steps:
            extra_views, kept = self._symbols(s.symbols, res)
            steps.append(Step(index=s.index, action=s.action, tool=s.tool,
                              views=self._views(s.views, res) + extra_views, symbols=kept,
                              edits=[self.snap.resolve(e) or e for e in s.edits],
                              usage=s.usage))
        final = final_symbols = None
        if traj.final_context is not None or traj.final_symbols is not None:
            extra_views, kept = self._symbols(traj.final_symbols or [], res)
            final = self._views(traj.final_context or [], res) + extra_views
            final_symbols = kept or None
        out = replace(traj, steps=steps, final_context=final, final_symbols=final_symbols,
                      repo=traj.repo or self.snap.repo,
                      base_commit=traj.base_commit or self.snap.commit)
        return out, res
