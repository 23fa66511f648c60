"""One instance, ready for the engine: paths resolved at the base commit, files indexed.

This is the only place that looks at the repository on behalf of the metrics. It turns a
:class:`GoldInstance` and a :class:`Trajectory` into the plain dict the native engine takes
(dense file ids, :class:`~ctxeval._core.LineIndex` objects, definition byte ranges) plus the
notes a result row carries (gold files missing at the base commit, paths and names that could
not be resolved). All arithmetic is left to the engine.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from ... import _core
from ...errors import PatchError
from ...linesets import line_runs
from ...model import GoldInstance, SymbolRef, Trajectory, View
from ...paths import normalise_path
from ...reading.moatless_spans.blocks import SpanTable
from ...reading.moatless_spans.expansion import (
    RELATED_SPANS_CAP,
    SIGNATURES,
    Expansion,
    expand_identified,
    is_mark,
    mark_round,
)
from ...reading.moatless_spans.parsing import parse_spans
from ...reading.moatless_spans.rendering import shown_lines
from ...reading.placing import file_lines, of_blob, place_view
from ...truth.extraction import SymbolExtractor
from ...truth.gold.swebench import location_views
from ...truth.locations import file_lines as split_lines
from ...truth.locations import placed_locations
from ...truth.patches import EditLocations, apply_diff, edit_locations, kept_edit_locations
from ...truth.repo import RepoSnapshot
from ...truth.symbols import Definition, resolve_name

FinalPolicy = Literal["declared", "union", "last"]
FINAL_POLICIES: tuple[str, ...] = ("declared", "union", "last")


class LruCache(OrderedDict):
    """A dict that forgets its least recently used entries beyond ``size``.

    Keeps memory flat over long runs: line indexes and definitions of files are reused across
    the instances and runs that share a blob, but not kept for the whole run.
    """

    def __init__(self, size: int = 4096) -> None:
        super().__init__()
        self.size = size

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


#: Source bytes whose lines are kept for placing patches (see ``PreparerBase.lines_cache``).
LINES_KEPT = 32 << 20


class SizedLru(LruCache):
    """An :class:`LruCache` of lists (a file's lines) that forgets its least recently used
    entries beyond ``limit`` characters in all: the files of an evaluation's patches may be
    large."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.held = 0

    def __setitem__(self, key: Any, value: list[str]) -> None:
        if key in self:
            self.held -= _size(self.pop(key))
        OrderedDict.__setitem__(self, key, value)
        self.held += _size(value)
        while self.held > self.limit and len(self) > 1:
            self.held -= _size(self.popitem(last=False)[1])


def _size(lines: list[str]) -> int:
    return sum(map(len, lines)) + len(lines)


@dataclass(slots=True)
class _File:
    path: str
    exists: bool
    #: The name the file's language is read from (the key it was asked under).
    lang_path: str = ""
    index: Any = None
    defs: list[Definition] = field(default_factory=list)
    #: The definitions' byte spans, shared by every instance at this blob (the engine's input).
    spans: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Notes:
    """What a row says about how its instance was read."""

    gold_missing_files: list[str] = field(default_factory=list)
    unresolved_paths: list[str] = field(default_factory=list)
    unresolved_symbols: list[str] = field(default_factory=list)
    #: Lines printed without numbers that could not be placed (credited at file level only).
    unplaced_lines: int = 0
    warnings: list[str] = field(default_factory=list)
    final_source: str = "union"
    #: Repo path of each file id of the engine input.
    paths: list[str] = field(default_factory=list)


def unique_definitions(defs: list[Definition]) -> list[Definition]:
    """One definition per (kind, start byte, end byte): a definition's identity (spec
    ``metrics.md``), while the engine counts list entries."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for d in defs:
        key = (d.kind, d.start_byte, d.end_byte)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def indexed_file(snap: RepoSnapshot, symbols: SymbolExtractor, cache: LruCache | dict,
                 path: str, preset: str, lang_path: str | None = None
                 ) -> tuple[Any, list, list[tuple[int, int]]]:
    """Line index, definitions and their byte spans (what the engine takes of them) of a repo
    file, cached by blob id and extension (the same bytes under another extension parse as
    another language). ``lang_path`` names the file for the language when it differs from
    ``path``."""
    name = (lang_path or path).rsplit("/", 1)[-1]
    blob = snap.blob_id(path) or f"path:{path}"
    key = (blob, name.rsplit(".", 1)[-1].lower() if "." in name else "")
    cached = cache.get(key)
    if cached is None:
        data = snap.read(path) or b""
        defs = unique_definitions(symbols.get(blob, data, lang_path or path, preset) or [])
        cached = (_core.LineIndex(data), defs, [(d.start_byte, d.end_byte) for d in defs])
        cache[key] = cached
    return cached


@dataclass(slots=True)
class MoatlessShown:
    """What Moatless 0.0.x showed of one file for a set of its span ids."""

    lines: list[tuple[int, int]]
    #: dotted names of the classes and functions the spans start (credited as signatures:
    #: their header is always printed)
    names: list[str]
    unknown: list[str]


def _moatless_table(snap: RepoSnapshot, cache: LruCache | dict, path: str,
                    version: str) -> SpanTable | None:
    if not path.endswith(".py"):
        return None
    key = ("moatless", snap.blob_id(path) or f"path:{path}", version)
    table = cache.get(key)
    if table is None:
        data = snap.read(path)
        if data is None:
            return None
        table = parse_spans(data, version)
        cache[key] = table
    return table


def _moatless_edited(snap: RepoSnapshot, cache: LruCache | dict, path: str, version: str,
                     patches: tuple[str, ...]) -> tuple[SpanTable, list[int | None]] | None:
    """The spans of ``path`` with ``patches`` applied in order, and for each of its lines the
    base line it is (None: written by an edit); None when a patch does not apply."""
    key = ("moatless-edited", snap.blob_id(path) or f"path:{path}", version, patches)
    found = cache.get(key)
    if found is None:
        data = snap.read(path)
        if data is None:
            return None
        lines = data.decode("utf-8", errors="replace").split("\n")
        back: list[int | None] = list(range(1, len(lines) + 1))
        for patch in patches:
            applied = apply_diff(lines, patch)
            if applied is None:
                cache[key] = False
                return None
            lines, step = applied
            back = [back[n - 1] if n is not None else None for n in step]
        found = cache[key] = (parse_spans("\n".join(lines).encode(), version), back)
    return found or None


def moatless_step_shown(snap: RepoSnapshot, cache: LruCache | dict,
                        groups: dict[str, list[SymbolRef]]) -> dict[str, MoatlessShown]:
    """Moatless's rendering of one step's span ids (``groups``: per file, in the order the
    step names the files) in the files at the snapshot's commit. Files marked with
    ``moatless_spans.expansion.IMPORT_SPANS`` (an identify step) show what Moatless added to them,
    expanded over all those files together (the token cap is on the whole context); marks
    of later rounds (``<imports>#1``: a 0.0.2 identify after an earlier one, whose spans
    its step lists first) expand the same context again, with that round's spans added.
    Files that are not Python or cannot be read are left out (Moatless 0.0.x cut only
    Python; their refs then resolve by name). A file whose refs say ``comments`` is rendered
    with its comments; :data:`SIGNATURES` adds the signatures beside a span that starts a
    class (one token each). A file whose refs carry ``patches`` (the run's recorded diffs of
    its earlier edits) is rendered as edited, the base file with them applied, and its printed
    lines that are base lines are mapped back (the others are post-edit); a diff that does not
    apply leaves the base file rendered."""
    tables: dict[str, SpanTable] = {}
    for path, refs in groups.items():
        if refs and (t := _moatless_table(snap, cache, path, refs[0].moatless or "0.0.1")):
            tables[path] = t
    # per file, the span ids of each identify round: those listed before its mark
    rounds: dict[str, dict[int, list[str]]] = {}
    caps: dict[int, int] = {}
    for path in tables:
        pending: list[str] = []
        for r in groups[path]:
            n = mark_round(r.name)
            if n is None:
                if r.name != SIGNATURES:
                    pending.append(r.name)
                continue
            rounds.setdefault(path, {})[n] = pending
            pending = []
            if r.budget and n not in caps:
                caps[n] = r.budget
    added: dict[str, list[str]] = {}
    exp: Expansion | None = None
    order: list[str] = []  # the files in the order they entered the context
    for n in sorted({n for per in rounds.values() for n in per}):
        order += [p for p in rounds if n in rounds[p] and p not in order]
        exp = expand_identified([(tables[p], rounds[p].get(n, [])) for p in order],
                                tables[order[0]].version, caps.get(n, RELATED_SPANS_CAP), exp)
    if exp is not None:
        added = dict(zip(order, exp.spans, strict=True))
    out: dict[str, MoatlessShown] = {}
    for path, table in tables.items():
        refs = groups[path]
        selected: dict[str, int | None] = {s: None for s in added.get(path, [])}
        for r in refs:
            if not is_mark(r.name):
                selected[r.name] = r.budget if selected.get(r.name, 0) is not None else None
        if any(r.name == SIGNATURES for r in refs):
            for sid in [s for s in selected]:
                for other in table.class_signature_spans(sid):
                    selected.setdefault(other, 1)
        patches = next((r.patches for r in refs if r.patches), ())
        edited = _moatless_edited(snap, cache, path, table.version, patches) if patches \
            else None
        shown = edited[0] if edited is not None else table
        names = [n for r in refs if (n := shown.definition_name(r.name))]
        unknown = [r.name for r in refs if not is_mark(r.name) and r.name not in shown.spans]
        lines = shown_lines(shown, selected, exclude_comments=not any(r.comments for r in refs))
        if edited is not None:  # the edited file's lines, mapped back to the base file's
            back = edited[1]
            lines = line_runs(b for a, z in lines for n in range(a, z + 1)
                              if n <= len(back) and (b := back[n - 1]) is not None)
        out[path] = MoatlessShown(lines, list(dict.fromkeys(names)), unknown)
    return out


class FileTable:
    """Dense file ids for one instance, with each existing file's line index and definitions.

    Files are named while the instance is planned (:meth:`id`) and loaded afterwards
    (:meth:`load`), once the definitions of every blob the plan listed (:meth:`needs`) have
    been extracted. Line indexes and definitions are cached across instances by blob id, so a
    file shared by many instances and runs at one commit is read, indexed and parsed once.
    """

    def __init__(self, snap: RepoSnapshot, symbols: SymbolExtractor, preset: str,
                 index_cache: LruCache | dict) -> None:
        self.snap = snap
        self.symbols = symbols
        self.preset = preset
        self.index_cache = index_cache
        self.files: list[_File] = []
        self.ids: dict[str, int] = {}
        #: Symbol names to resolve once definitions are loaded: (view set, file id, names,
        #: whether only the signature was shown).
        self.symbol_refs: list[tuple[dict[str, Any], int, list[str], bool]] = []

    def _add(self, key: str, path: str | None) -> int:
        """A new id for ``key``, naming the repo file ``path`` (None: no file)."""
        entry = _File(path or key, exists=path is not None and self.snap.exists(path),
                      lang_path=key)
        fid = len(self.files)
        self.files.append(entry)
        self.ids[key] = fid
        return fid

    def id(self, path: str) -> int:
        """The id of a repo-relative path (created on first use; absent files get no index)."""
        fid = self.ids.get(path)
        return fid if fid is not None else self._add(path, path)

    def exists(self, fid: int) -> bool:
        return self.files[fid].exists

    def needs(self) -> list[tuple[str, str]]:
        """(repo path, language path) of every existing file: what loading will parse."""
        return [(f.path, f.lang_path) for f in self.files if f.exists]

    def load(self) -> None:
        """Read, index and find the definitions of every existing file not loaded yet."""
        for f in self.files:
            if f.exists and f.index is None:
                f.index, f.defs, f.spans = indexed_file(
                    self.snap, self.symbols, self.index_cache, f.path, self.preset,
                    lang_path=f.lang_path)

    def to_core(self) -> list[dict[str, Any]]:
        return [
            {"index": f.index, "symbols": f.spans}
            for f in self.files
        ]


@dataclass(slots=True)
class Planned:
    """One instance planned: its engine input without definitions, the notes so far, and the
    file table that names what must be extracted before it can be finished."""

    inst: dict[str, Any]
    notes: Notes
    table: FileTable


def _line_tuple(fid: int, v: View) -> tuple[int, int, int | None]:
    return (fid, v.start_line if v.start_line is not None else 1, v.end_line)


class PreparerBase:
    """What a preset's preparer holds: the symbol extractor, the final-context policy and the
    cache of line indexes and definitions shared by all the instances it prepares."""

    #: The preset a preparer reads under when none is named.
    default_preset = "strict"

    def __init__(self, symbols: SymbolExtractor, preset: str | None = None,
                 final_policy: FinalPolicy = "declared") -> None:
        if final_policy not in FINAL_POLICIES:
            raise ValueError(f"unknown final policy {final_policy!r}")
        self.symbols = symbols
        self.preset = preset or self.default_preset
        #: The preset the rows name (``locagent`` reads and scores context as ``strict``,
        #: whose preparer it uses; only its ranking rules differ).
        self.name = self.preset
        self.final_policy = final_policy
        self.index_cache: LruCache = LruCache()
        #: The lines of the files patches were placed in, by blob (every run's patch of an
        #: instance is placed in the same files), up to :data:`LINES_KEPT` characters.
        self.lines_cache: SizedLru = SizedLru(LINES_KEPT)
        #: Builds each row's ranking block (:class:`ctxeval.evaluation.ranking.Ranker`);
        #: None: rows without one.
        self.ranker: Any = None

    # -- the two halves of preparing an instance ---------------------------------------------

    def plan(self, gold: GoldInstance, traj: Trajectory | None, snap: RepoSnapshot
             ) -> Planned:
        """Everything but the definitions: paths resolved, views placed, patches read."""
        raise NotImplementedError

    def _resolve_symbols(self, table: FileTable, notes: Notes) -> None:
        """Resolve the symbol names the plan left in ``table.symbol_refs``."""
        raise NotImplementedError

    def finish(self, planned: Planned) -> tuple[dict[str, Any], Notes]:
        """The engine input and notes of a planned instance, its files loaded (their
        definitions come from the extractor, which the extract stage has filled)."""
        table, notes, inst = planned.table, planned.notes, planned.inst
        table.load()
        self._resolve_symbols(table, notes)
        notes.paths = [f.path for f in table.files]
        inst["files"] = table.to_core()
        return inst, notes

    def prepare(self, gold: GoldInstance, traj: Trajectory | None, snap: RepoSnapshot
                ) -> tuple[dict[str, Any], Notes]:
        """Engine input and notes for one (gold, trajectory) pair in one go (plan, then
        finish); ``traj=None`` scores an agent that produced nothing."""
        return self.finish(self.plan(gold, traj, snap))


class Preparer(PreparerBase):
    """Builds engine inputs for the instances of one run (or several) under one preset."""

    # -- views -----------------------------------------------------------------------------

    def _view_set(self, table: FileTable, views: list[View], syms: list[SymbolRef],
                  notes: Notes) -> dict[str, Any]:
        lines: list[tuple[int, int, int | None]] = []
        files: list[int] = []
        symbols: list[tuple[int, int]] = []
        for v in views:
            path = table.snap.resolve(v.file)
            if path is None:
                notes.unresolved_paths.append(v.file)
                continue
            fid = table.id(path)
            placed = [v]
            if v.text is not None and table.exists(fid):
                found = file_lines(table.snap, path, self.index_cache)
                if found is not None:
                    placed = place_view(v, found)[0]
            for pv in placed:
                if pv.file_only:
                    files.append(fid)
                    if not pv.checkable:  # a post-edit view's lines, unchecked
                        notes.unplaced_lines += sum(len(c) for c in pv.text or ())
                else:
                    lines.append(_line_tuple(fid, pv))
        out = {"lines": lines, "files": files, "symbols": symbols}
        moatless: dict[str, list[SymbolRef]] = {}
        for s in syms:
            path = table.snap.resolve(s.file)
            if path is None:
                notes.unresolved_paths.append(s.file)
                continue
            if s.moatless:
                moatless.setdefault(path, []).append(s)
                continue
            table.symbol_refs.append((out, table.id(path), [s.name], s.signature))
        readable = {p: refs for p, refs in moatless.items() if table.exists(table.id(p))}
        shown = moatless_step_shown(table.snap, self.index_cache, readable)
        for path, refs in moatless.items():
            self._moatless_refs(table, out, path, refs, shown.get(path), notes)
        return out

    def _moatless_refs(self, table: FileTable, out: dict[str, Any], path: str,
                       refs: list[SymbolRef], shown: MoatlessShown | None,
                       notes: Notes) -> None:
        """Moatless 0.0.x span ids: the lines its renderer printed, the file (its path heads
        the printed block), and the definitions the spans start, by their signature."""
        fid = table.id(path)
        if shown is None:
            for r in refs:
                if not is_mark(r.name):
                    table.symbol_refs.append((out, fid, [r.name], r.signature))
            return
        out["files"].append(fid)
        out["lines"].extend((fid, a, b) for a, b in shown.lines)
        notes.unresolved_symbols.extend(f"{path}:{n}" for n in shown.unknown)
        for name in shown.names:
            table.symbol_refs.append((out, fid, [name], True))

    def _resolve_symbols(self, table: FileTable, notes: Notes) -> None:
        """A name credits every definition it resolves to, and that definition's lines."""
        for out, fid, names, signature in table.symbol_refs:
            defs = table.files[fid].defs
            for name in names:
                hits = resolve_name(defs, name)
                if not hits:
                    notes.unresolved_symbols.append(f"{table.files[fid].path}:{name}")
                    continue
                for d in hits:
                    out["symbols"].append((fid, defs.index(d)))
                    # a signature-only reference credits the header line, not the body
                    out["lines"].append((fid, d.start_line,
                                         d.start_line if signature else d.end_line))

    def _edits(self, table: FileTable, locs: EditLocations) -> dict[str, Any]:
        files: list[int] = []
        lines: list[tuple[int, int, int | None]] = []
        for path, edit in locs.files.items():
            fid = table.id(path)
            files.append(fid)
            if table.exists(fid):
                lines.extend((fid, ln, ln) for ln in edit.lines)
        return {"files": files, "lines": lines}

    def _gold_patch(self, gold: GoldInstance, snap: RepoSnapshot
                    ) -> tuple[tuple[EditLocations, EditLocations] | None, list[str]]:
        """The gold patch's edit locations as written and where they apply at the base commit
        (the same object when every hunk applies where its header says), with what the row's
        warnings must say: an unreadable patch, or hunks that apply at an offset.

        Placing reads and splits every file the patch touches; the same patch (each run's
        row of an instance) is parsed once, and placed once on the same file versions."""
        if not gold.patch:
            return None, []
        written = kept_edit_locations(self.index_cache, gold.patch, "gold patch")
        if isinstance(written, PatchError):
            return None, [f"gold patch: {written}"]
        key = ("goldplaced", gold.patch,
               tuple(snap.blob_id(p) for p in written.files))
        got = self.index_cache.get(key)
        if got is None:
            got = self.index_cache[key] = self._placed_gold(written, snap)
        return got[0], list(got[1])

    def _placed(self, locs: EditLocations, snap: RepoSnapshot) -> EditLocations:
        return placed_locations(locs, snap.read, lines=lambda path: of_blob(
            snap, path, self.lines_cache, split_lines))

    def _placed_gold(self, written: EditLocations, snap: RepoSnapshot
                     ) -> tuple[tuple[EditLocations, EditLocations], list[str]]:
        placed = self._placed(written, snap)
        if placed is written:
            return (written, placed), []
        moved = sorted(p for p, fe in placed.files.items() if fe is not written.files[p])
        return (written, placed), [f"gold patch: hunks apply at an offset at the base commit in "
                                   f"{', '.join(moved)}; its edit locations are taken where "
                                   "they apply"]

    # -- one instance ----------------------------------------------------------------------

    def plan(self, gold: GoldInstance, traj: Trajectory | None, snap: RepoSnapshot
             ) -> Planned:
        table = FileTable(snap, self.symbols, self.preset, self.index_cache)
        notes = Notes()

        gold_locs, gold_notes = self._gold_patch(gold, snap)
        gold_context = gold.context
        if gold_locs is not None and gold_locs[0] is not gold_locs[1]:
            as_written, placed = gold_locs
            if gold.gold_kind == "patch" and gold.context == location_views(as_written):
                gold_context = location_views(placed)  # the gold context is the patch's

        gold_lines = []
        for v in gold_context:
            # Gold paths are repo-relative already; normalising only removes spelling noise
            # (./, duplicate slashes). No suffix matching: gold must name its file exactly.
            path = normalise_path(v.file, gold.repo)
            if not snap.exists(path):
                if v.file not in notes.gold_missing_files:
                    notes.gold_missing_files.append(v.file)
                continue
            if v.file_only:
                continue
            gold_lines.append(_line_tuple(table.id(path), v))

        steps = []
        if traj is not None:
            for step in traj.steps:
                steps.append(self._view_set(table, step.views, step.symbols, notes))

        final = None
        declared = traj is not None and (traj.final_context is not None
                                         or traj.final_symbols is not None)
        if self.final_policy == "declared" and declared:
            assert traj is not None
            final = self._view_set(table, traj.final_context or [], traj.final_symbols or [],
                                   notes)
            notes.final_source = "declared"
        elif self.final_policy == "last" and steps:
            final = steps[-1]
            notes.final_source = "last"
        else:
            notes.final_source = "union"

        gold_edits = pred_edits = None
        notes.warnings.extend(gold_notes)
        if gold_locs is not None:
            gold_edits = self._edits(table, gold_locs[1])
        if gold_edits is not None and traj is not None and traj.model_patch:
            try:
                pred_edits = self._edits(table, self._placed(
                    edit_locations(traj.model_patch, origin="model patch"), snap))
            except PatchError as exc:
                notes.warnings.append(f"model patch: {exc}")

        inst = {
            "files": [],
            "gold": {"lines": gold_lines},
            "steps": steps,
            "final": final,
            "gold_edits": gold_edits,
            "pred_edits": pred_edits,
        }
        return Planned(inst, notes, table)


def context_text(inst: dict[str, Any], paths: list[str], snap: RepoSnapshot,
                 which: str = "final") -> str:
    """The source text of a view set of an engine input (``final``, or ``gold``), file by file.

    The final context defaults to the union of the steps, as the engine reads it. Lines are
    clipped and merged by the core; this only slices the bytes.
    """
    sets = [inst[which]] if inst.get(which) is not None else inst["steps"]
    ranges: dict[int, list[tuple[int, int]]] = {}
    files = inst["files"]
    for vs in sets:
        for fid, start, end in vs.get("lines", []):
            ix = files[fid]["index"]
            clipped = ix.clip(start, end) if ix is not None else None
            if clipped is not None:
                ranges.setdefault(fid, []).append(clipped)
    parts = []
    for fid in sorted(ranges):
        data = snap.read(paths[fid]) or b""
        ix = files[fid]["index"]
        for first, last in _core.lines_normalize(ranges[fid]):
            span = ix.lines_bytes(first, last)
            if span is not None:
                parts.append(data[span[0]:span[1]].decode("utf-8", errors="replace"))
    return "".join(parts)
