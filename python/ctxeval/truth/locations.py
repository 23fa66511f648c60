"""Gold at three levels: the files, modules and functions a patch (or a gold context) touches.

Localisation is scored at three levels (LocAgent, Loc-Bench, Agentless): the **file**
(``path``), the **module**, a top-level class or function (``path:Name``), and the
**function** (``path:Class.method``, ``path:func``). Where a dataset carries its gold at those
levels, the gold loaders read it (:class:`ctxeval.model.GoldLocations`); otherwise it is derived
here from the gold patch at the base commit, or from gold context lines, with the definitions
ctxeval already extracts (:mod:`ctxeval.truth.symbols`, strict queries).

The naming rules (``docs/metrics.md``, "Ranked localisation metrics"):

- A line belongs to the definitions whose lines contain it. Its **module** is the outermost of
  them, named by its own name. Its **function** is the outermost *function* among them
  (functions, methods, constructors, of any language), named through the classes around it by
  its qualified name: ``C.m``; a nested function counts as the function it is nested in, a
  method of a nested class as ``Outer.Inner.m``. A line in a class body outside any method has
  a module but no function; a line outside every definition (imports, globals) has neither.
- ``__init__`` is a method like any other (``C.__init__``), not merged into its class.
- Python decorators belong to the definition they decorate (tree-sitter's definition node
  starts at ``def``/``class``; the decorator lines above it are added to it).
- Patch lines: a removed line is located in the base file; an added line in the patched file.
  An added line whose module (or function) does not exist at the base commit is a **pure
  addition** at that level and is not gold there (a new method makes its class gold at module
  level but is not gold at function level itself; a new top-level function is gold at file
  level only). A deleted definition is gold: its removed lines are in it.
- Lines holding only whitespace are not edits of a definition (as in LocAgent).
- Files: every file the patch modifies or deletes that exists at the base commit; a file the
  patch creates cannot be found in the repository and is not gold.

Pure: the callers read files and definitions (the evaluation stage, which has them cached).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from .. import _core
from .patches import EditLocations, FileEdit, Hunk
from .symbols import Definition

__all__ = [
    "FileNames",
    "Locations",
    "apply_hunks",
    "context_locations",
    "file_lines",
    "is_function_kind",
    "patch_locations",
    "place_hunks",
    "placed_locations",
]

_DECORATED = (".py", ".pyi")
_CLOSERS = re.compile(r"^[)\]}]+,?\s*$")


@functools.cache  # a file has thousands of definitions of a few kinds
def is_function_kind(kind: str) -> bool:
    """Whether a definition kind (a tree-sitter node type) is a function, method or
    constructor in some language (``function_definition``, ``method_declaration``,
    ``arrow_function``, ``constructor_declaration``, Swift's ``init_declaration``, ...)."""
    return "function" in kind or "method" in kind or "constructor" in kind \
        or kind == "init_declaration"


@dataclass(frozen=True, slots=True)
class Locations:
    """Gold items per level, in first-met order, each once."""

    files: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)


class FileNames:
    """The module and function names of a file's definitions, and of each of its lines.

    ``defs`` are the file's definitions (any order), ``spans`` their byte spans when the caller
    has them already; ``text`` its lines (or a function giving them), needed only to name
    lines: Python decorators are outside tree-sitter's definition node, and found in the text.
    The names of the definitions are computed at once (which definitions hold which: the
    native core's :func:`~ctxeval._core.definition_owners`), those of lines on the first
    :meth:`at_line` (the rankings of trajectories need only the former).
    """

    def __init__(self, path: str, defs: Sequence[Definition],
                 text: Sequence[str] | Callable[[], Sequence[str]] | None = None,
                 spans: Sequence[tuple[int, int]] | None = None) -> None:
        self.path = path
        self.defs = defs = list(defs)
        self._text = text
        if spans is None:
            spans = [(d.start_byte, d.end_byte) for d in defs]
        modules, functions = _core.definition_owners(
            spans, [is_function_kind(d.kind) for d in defs])
        #: Per definition (in ``defs`` order): its module name and function name (None: none).
        self.module: list[str | None] = [defs[k].name or None for k in modules]
        self.function: list[str | None] = [
            (defs[k].qualified_name or defs[k].name or None) if k >= 0 else None
            for k in functions]
        self._spans: tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]] | None = None

    def _line_spans(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        if self._spans is None:
            defs = self.defs
            text = self._text() if callable(self._text) else self._text
            starts = [d.start_line for d in defs]
            if text is not None and self.path.endswith(_DECORATED):
                starts = [_decorated_start(text, d) for d in defs]
            spans = [(starts[i], defs[i].end_line, i) for i in range(len(defs))]
            self._spans = (_outermost(spans),
                           _outermost([s for s in spans if is_function_kind(defs[s[2]].kind)]))
        return self._spans

    def at_line(self, line: int) -> tuple[str | None, str | None]:
        """(module name, function name) of a 1-based line: those of the outermost definition
        and the outermost function whose lines (decorators included) hold it."""
        mods, fns = self._line_spans()
        m = _find(mods, line)
        f = _find(fns, line)
        return (self.module[m] if m is not None else None,
                self.function[f] if f is not None else None)

    def in_lines(self, first: int, last: int) -> tuple[list[str], list[str]]:
        """The module and function names of the lines ``first``..``last``, in file order,
        each once: those of the outermost definitions and functions overlapping them."""
        mods, fns = self._line_spans()
        return (_names_over(mods, first, last, self.module),
                _names_over(fns, first, last, self.function))

    def module_names(self) -> set[str]:
        return {n for n in self.module if n}

    def function_names(self) -> set[str]:
        return {n for n in self.function if n}


def _outermost(spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The spans not inside another one, sorted by start (they do not overlap)."""
    out: list[tuple[int, int, int]] = []
    for s, e, i in sorted(spans, key=lambda x: (x[0], -x[1])):
        if out and s <= out[-1][1]:
            continue  # inside (or, for an extended start, overlapping) the one before
        out.append((s, e, i))
    return out


def _find(spans: list[tuple[int, int, int]], line: int) -> int | None:
    k = bisect.bisect_right(spans, (line, float("inf"), float("inf"))) - 1
    if k >= 0 and spans[k][0] <= line <= spans[k][1]:
        return spans[k][2]
    return None


def _names_over(spans: list[tuple[int, int, int]], first: int, last: int,
                names: list[str | None]) -> list[str]:
    """The names of the spans (sorted, disjoint) that overlap lines ``first``..``last``."""
    k = max(bisect.bisect_right(spans, (first, float("inf"), float("inf"))) - 1, 0)
    out: list[str] = []
    while k < len(spans) and spans[k][0] <= last:
        _start, e, i = spans[k]
        name = names[i]
        if e >= first and name and name not in out:
            out.append(name)
        k += 1
    return out


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" \t"))


def _decorated_start(text: Sequence[str], d: Definition) -> int:
    """The first line of ``d``'s decorators (its own first line when it has none): going up
    from the line above the definition over lines indented at least as deep, the topmost
    ``@`` line at the definition's indentation, stopping at a blank line or another statement
    at that indentation (a closing bracket of a decorator's arguments does not stop it)."""
    k = d.start_line - 1  # 1-based line above the definition
    if k < 1 or d.start_line > len(text):
        return d.start_line
    base = _indent(text[d.start_line - 1])
    top = d.start_line
    while k >= 1:
        line = text[k - 1]
        if not line.strip():
            break
        ind = _indent(line)
        if ind < base:
            break
        stripped = line.strip()
        if ind == base:
            if stripped.startswith("@"):
                top = k
            elif not _CLOSERS.match(stripped):
                break
        k -= 1
    return top


def file_lines(data: bytes) -> list[str]:
    """A file's lines as the line index counts them: split at ``\n`` only (``str.splitlines``
    also splits at form feeds and Unicode separators, which would shift every line after)."""
    text = data.decode("utf-8", errors="replace").split("\n")
    if text and text[-1] == "":
        text.pop()
    return text


def _blank(s: str) -> bool:
    return not s.strip()


def place_hunks(base: Sequence[str], hunks: Sequence[Hunk]) -> list[int]:
    """Where each hunk applies: the 1-based base line its old lines (context and removed)
    start at. As ``git apply`` and ``patch`` do, a hunk whose lines are not at the place its
    header says is looked for nearby (the offset of the hunk before carried over, then
    alternately below and above), first exactly, then ignoring trailing whitespace; one found
    nowhere stays at its header's place. Gold patches do apply with offsets: 10 of the 217
    hunks of the SWE-bench Lite patches whose repositories were checked."""
    out: list[int] = []
    offset = 0
    floor = 1
    for h in hunks:
        old = [b[1:] for b in h.body if b[:1] in (" ", "-", "")]
        stated = h.old_start + 1 if h.old_len == 0 else h.old_start
        want = stated + offset
        found = None
        if old:
            for same in (_exact, _loose):
                found = _search(base, old, want, floor, same)
                if found is not None:
                    break
        pos = found if found is not None else stated
        offset = pos - stated
        floor = pos + len(old)
        out.append(pos)
    return out


def placed_locations(locs: EditLocations, read: Callable[[str], bytes | None], *,
                     lines: Callable[[str], Sequence[str] | None] | None = None
                     ) -> EditLocations:
    """The edit locations where the patch applies to the base files (``read(path)``, None for a
    file that is not there): a hunk that :func:`place_hunks` finds at an offset moves its
    lines with it, as ``git apply`` would apply it. A gold patch made against another
    revision than its record's base commit states the lines of that revision; the base
    commit's are the ones it edits there. Files whose hunks all apply where their headers say,
    created files and unreadable ones are kept as they are (the same object, so nothing
    changes for the common case). ``lines(path)``: the file's lines (:func:`file_lines` of
    ``read(path)``), where the caller keeps them: placing splits every file a patch touches,
    and each run's patch of an instance touches the same ones."""
    files: dict[str, FileEdit] = {}
    changed = False
    for path, fe in locs.files.items():
        files[path] = fe
        if fe.created or not fe.hunks:
            continue
        if lines is not None:
            base = lines(fe.old_path or path)
        else:
            data = read(fe.old_path or path)
            base = None if data is None else file_lines(data)
        if base is None:
            continue
        hunks = sorted(fe.hunks, key=lambda h: h.old_start)
        shifts = [pos - (h.old_start + 1 if h.old_len == 0 else h.old_start)
                  for h, pos in zip(hunks, place_hunks(base, hunks), strict=True)]
        if not any(shifts):
            continue
        changed = True
        files[path] = replace(
            fe, lines=tuple(sorted({max(ln + d, 1) for h, d in zip(hunks, shifts, strict=True)
                                    for ln in h.lines})),
            removed=tuple(sorted({r + d for h, d in zip(hunks, shifts, strict=True)
                                  for r in h.removed})))
    return EditLocations(files) if changed else locs


def _exact(a: str, b: str) -> bool:
    return a == b


def _loose(a: str, b: str) -> bool:
    return a.rstrip() == b.rstrip()


def _search(base: Sequence[str], old: list[str], want: int, floor: int,
            same: Callable[[str, str], bool]) -> int | None:
    last = len(base) - len(old) + 1  # the last possible start

    def fits(pos: int) -> bool:
        return floor <= pos <= last and all(
            same(base[pos - 1 + k], line) for k, line in enumerate(old))

    for d in range(0, max(want - floor, last - want, 0) + 1):
        for pos in ((want,) if d == 0 else (want + d, want - d)):
            if fits(pos):
                return pos
    return None


def apply_hunks(base: Sequence[str], edit: FileEdit) -> tuple[list[str], list[int],
                                                              list[int]]:
    """The patched file's lines, and the (new) numbers of its added lines and the (base)
    numbers of its removed lines that hold more than whitespace. Each hunk applies where
    :func:`place_hunks` finds it; context lines are taken from the base."""
    new: list[str] = []
    added: list[int] = []
    removed: list[int] = []
    at = 1  # next base line to copy
    hunks = sorted(edit.hunks, key=lambda h: h.old_start)
    for h, first in zip(hunks, place_hunks(base, hunks), strict=True):
        while at < first and at <= len(base):
            new.append(base[at - 1])
            at += 1
        for body in h.body:
            tag, text = body[:1], body[1:]
            if tag in (" ", ""):
                if at <= len(base):
                    new.append(base[at - 1])
                at += 1
            elif tag == "-":
                if not _blank(text):
                    removed.append(at)
                at += 1
            elif tag == "+":
                new.append(text)
                if not _blank(text):
                    added.append(len(new))
    while at <= len(base):
        new.append(base[at - 1])
        at += 1
    return new, added, removed


class _Collect:
    """Items of each level in first-met order, each once."""

    def __init__(self) -> None:
        self.levels: tuple[dict[str, None], ...] = ({}, {}, {})

    def file(self, path: str) -> None:
        self.levels[0].setdefault(path)

    def names(self, path: str, module: str | None, function: str | None) -> None:
        if module:
            self.levels[1].setdefault(f"{path}:{module}")
        if function:
            self.levels[2].setdefault(f"{path}:{function}")

    def locations(self) -> Locations:
        return Locations(*(list(level) for level in self.levels))


def patch_locations(locs: EditLocations, read: Callable[[str], bytes | None],
                    definitions: Callable[[str, bytes], list[Definition] | None]
                    ) -> Locations:
    """The gold items of a patch's edit locations: ``read(path)`` gives a file at the base
    commit (None: absent), ``definitions(path, data)`` its definitions (None: not source)."""
    out = _Collect()
    for path, fe in locs.files.items():
        if fe.created:
            continue
        data = read(path)
        if data is None:
            continue
        out.file(path)
        base_defs = definitions(path, data)
        if not base_defs:
            continue
        base_text = file_lines(data)
        base = FileNames(path, base_defs, base_text)
        if fe.deleted:
            new_text, added, removed = [], [], [n for n, s in enumerate(base_text, 1)
                                               if not _blank(s)]
        else:
            new_text, added, removed = apply_hunks(base_text, fe)
        for line in removed:
            out.names(path, *base.at_line(line))
        if added:
            new_defs = definitions(path, ("\n".join(new_text) + "\n").encode()) or []
            after = FileNames(path, new_defs, new_text)
            known_m, known_f = base.module_names(), base.function_names()
            for line in added:
                m, f = after.at_line(line)
                out.names(path, m if m in known_m else None, f if f in known_f else None)
    return out.locations()


def context_locations(lines: Iterable[tuple[str, int, int]], names: Callable[[str],
                                                                            FileNames | None]
                      ) -> Locations:
    """The gold items of gold context ranges ``(path, first, last)``: each line's file,
    module and function (``names(path)``: the file's :class:`FileNames`, None: no
    definitions)."""
    out = _Collect()
    for path, first, last in lines:
        out.file(path)
        fn = names(path)
        if fn is None or last < first:
            continue
        modules, functions = fn.in_lines(first, last)
        for m in modules:
            out.names(path, m, None)
        for f in functions:
            out.names(path, None, f)
    return out.locations()
