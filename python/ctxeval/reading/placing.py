"""Placing printed lines in their file: where text shown without line numbers came from.

Some outputs show a file's lines without saying which lines they are: ``grep`` without ``-n``,
``sed -n '/re/,/re/p'``, ``tail -n 20 f``, the tail of an output truncated in the middle. The
shell reader keeps what was printed on the view (``View.text``: chunks of consecutive file lines,
chunks in file order); with the file at the base commit this module finds where they are.

A chunk is credited only where the evidence leaves no choice. Chunks must sit in the file in the
printed order without overlapping; among all such placements, a chunk whose position is the same
in every one is placed, the others are not (a blank line or ``return None`` between two hits is
usually ambiguous and stays uncredited). The earliest and the latest feasible position of every
chunk are found by two greedy passes; a chunk is forced exactly when the two agree. When the
chunks cannot be placed in order at all, the text is not the file's (a later edit, another file)
and nothing is placed.

When the lines were selected by their content alone (``View.matches``: ``grep`` without
context), every line of the file equal to a printed line was printed too, or the first or last
ones of them where the output was cut: the k-th printed copy of a line is then the k-th (or k-th
from last) copy in the file, and repeated lines are placed as well. If the counts or the order
contradict that (the file is not what was searched), the general rule above applies.

Lines are compared without trailing whitespace (``\\r``, spaces some tools strip). A line
printed in part where an output was cut inside it (``View.partial``: the first line of the tail
of a truncated output, the last line before the elision) was shown all the same: it matches the
file lines that end (or start) with the part printed, and is placed with its chunk.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ..linesets import line_runs
from ..model import View
from ..truth.repo import RepoSnapshot

T = TypeVar("T")

__all__ = ["FileLines", "file_lines", "place", "place_view"]

Chunks = Sequence[Sequence[str]]


class FileLines:
    """A file's lines indexed by their text, to find where printed lines sit."""

    __slots__ = ("_where", "lines")

    def __init__(self, data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.lines = [ln.rstrip() for ln in lines]
        self._where: dict[str, list[int]] = {}
        for i, ln in enumerate(self.lines):
            self._where.setdefault(ln, []).append(i)

    def starts(self, chunk: Sequence[str], partial: str = "") -> list[int]:
        """0-based positions where ``chunk`` occurs as consecutive lines, ascending.

        ``partial`` (``View.partial``): the chunk's first line need only end a file line
        (``start``), its last line only begin one (``end``), or both.
        """
        if not partial:
            first = self._where.get(chunk[0].rstrip(), [])
            if len(chunk) == 1:
                return first
            rest = [ln.rstrip() for ln in chunk[1:]]
            n = len(rest)
            return [i for i in first if self.lines[i + 1:i + 1 + n] == rest]
        n = len(chunk)
        head = partial in ("start", "both")
        tail = partial in ("end", "both")
        whole = [ln.rstrip() for ln in chunk]
        exact = [k for k in range(n) if not (k == 0 and head) and not (k == n - 1 and tail)]
        if exact:  # anchor on a line printed whole
            k0 = exact[0]
            cands = [i - k0 for i in self._where.get(whole[k0], []) if i >= k0]
        else:
            cands = list(range(len(self.lines)))
        out = []
        for i in cands:
            if i + n > len(self.lines):
                continue
            got = self.lines[i:i + n]
            if all(got[k] == whole[k] for k in exact) and _ends_fit(got, chunk, head, tail):
                out.append(i)
        return out


def _ends_fit(got: list[str], chunk: Sequence[str], head: bool, tail: bool) -> bool:
    """Whether file lines ``got`` hold the printed parts of a chunk's first and last lines."""
    if len(chunk) == 1 and head and tail:  # a middle part of one line
        return chunk[0].strip() in got[0]
    if head and not got[0].endswith(chunk[0].rstrip()):
        return False
    return not tail or got[-1].startswith(chunk[-1].rstrip())


def of_blob(snap: RepoSnapshot, path: str, cache: MutableMapping[Any, Any],
            make: Callable[[bytes], T]) -> T | None:
    """``make(bytes)`` of a repo file at the snapshot's commit (None: no such file), cached by
    blob id and by what ``make`` is: each version of a file is read and made into it once."""
    key = (make, snap.blob_id(path) or f"path:{snap.commit}:{path}")
    found = cache.get(key)
    if found is None:
        data = snap.read(path)
        if data is None:
            return None
        found = cache[key] = make(data)
    return found


def file_lines(snap: RepoSnapshot, path: str, cache: MutableMapping[Any, Any]
               ) -> FileLines | None:
    """The indexed lines of a repo file at the snapshot's commit, cached by blob id."""
    return of_blob(snap, path, cache, FileLines)


def place(lines: FileLines, chunks: Chunks, matches: str | None = None,
          partial: Sequence[str] | None = None) -> list[tuple[int, int] | None] | None:
    """Per chunk, its 1-based inclusive line range where its position is forced, else None.

    The whole answer is None when the chunks do not fit in the file in order (the text is not
    this file's). ``matches`` is ``View.matches``, ``partial`` is ``View.partial``.
    """
    if matches is not None and not partial and all(len(c) == 1 for c in chunks):
        found = _place_matches(lines, [c[0] for c in chunks], matches)
        if found is not None:
            return found
    cuts = partial or [""] * len(chunks)
    starts = [lines.starts(c, p) for c, p in zip(chunks, cuts, strict=True)]
    earliest: list[int] = []
    pos = 0
    for chunk, cands in zip(chunks, starts, strict=True):
        i = bisect_left(cands, pos)
        if i == len(cands):
            return None
        earliest.append(cands[i])
        pos = cands[i] + len(chunk)
    out: list[tuple[int, int] | None] = []
    limit = len(lines.lines)
    for k in range(len(chunks) - 1, -1, -1):
        size = len(chunks[k])
        latest = starts[k][bisect_right(starts[k], limit - size) - 1]
        out.append((latest + 1, latest + size) if latest == earliest[k] else None)
        limit = latest
    out.reverse()
    return out


def _place_matches(lines: FileLines, printed: list[str], matches: str
                   ) -> list[tuple[int, int] | None] | None:
    """The k-th printed copy of a line is the k-th copy in the file (``all``/``first``) or the
    k-th of the last ones (``last``); None when the file contradicts that."""
    printed = [ln.rstrip() for ln in printed]
    count: dict[str, int] = {}
    for ln in printed:
        count[ln] = count.get(ln, 0) + 1
    seen: dict[str, int] = {}
    out: list[tuple[int, int] | None] = []
    last = -1
    for ln in printed:
        where = lines.starts((ln,))
        if len(where) < count[ln] or (matches == "all" and len(where) != count[ln]):
            return None
        k = seen.get(ln, 0)
        seen[ln] = k + 1
        pos = where[k] if matches != "last" else where[len(where) - count[ln] + k]
        if pos <= last:
            return None
        last = pos
        out.append((pos + 1, pos + 1))
    return out


#: The length (indentation aside) from which one printed line found once in the base file is
#: taken to be that line (``def _invoke_processors(self, ...):`` is, ``continue`` is not).
DISTINCT = 16


def checked_lines(view: View, lines: FileLines) -> list[View]:
    """A post-edit line view's base lines: each printed line whose text is the base file's
    line at its number; then, of the other printed lines, each run of consecutive ones that
    occurs in the base file at exactly one place (lines an edit moved without changing them):
    two or more lines, or one of at least :data:`DISTINCT` characters besides its indentation
    (a short line alone may be one the edit wrote that happens to be the base file's
    somewhere, as an indented ``continue`` is). Only runs that hold a line that is not blank
    count (a blank line proves nothing). The view stays, without its text, for the lines left
    (file level: what the edit wrote)."""
    assert view.checkable and view.text is not None and view.start_line is not None
    first = view.start_line
    printed = [ln.rstrip() for ln in view.text[0]]
    base = lines.lines
    # 1-based: the k-th printed line was printed for line first + k
    same = [first + k for k, ln in enumerate(printed)
            if 0 <= first + k - 1 < len(base) and base[first + k - 1] == ln]
    found: list[int] = []
    for a, b in line_runs(same):
        if any(printed[n - first] for n in range(a, b + 1)):
            found.extend(range(a, b + 1))
    done = set(found)
    rest = [first + k for k in range(len(printed)) if first + k not in done]
    for a, b in line_runs(rest):
        run = printed[a - first:b - first + 1]
        match = difflib.SequenceMatcher(None, base, run, autojunk=False)
        for i, j, size in match.get_matching_blocks():
            block = run[j:j + size]
            long_enough = size > 1 or (size == 1 and len(block[0].strip()) >= DISTINCT)
            if long_enough and any(block) and lines.starts(block) == [i]:
                found.extend(range(i + 1, i + size + 1))
    out = [View(view.file, a, b) for a, b in line_runs(found)]
    if len(set(found)) < len(printed):
        out.append(replace(view, text=None))
    return out


def place_view(view: View, lines: FileLines) -> tuple[list[View], int]:
    """Line views for the placed chunks of a text view, and how many chunks stayed unplaced.

    The unplaced chunks stay on a file-level view, as evidence another reading may still place.
    A view without text (a line view, or one shown after an edit: see ``View``) is returned as
    it is. A post-edit line view that kept its printed lines (``View.checkable``) is checked
    line by line instead (:func:`checked_lines`).
    """
    if view.checkable:
        return checked_lines(view, lines), 0
    if view.text is None or view.start_line is not None:
        return [view], 0
    spans = place(lines, view.text, view.matches, view.partial)
    if spans is None:
        return [view], len(view.text)
    numbers = [n for span in spans if span is not None for n in range(span[0], span[1] + 1)]
    out = [View(view.file, a, b) for a, b in line_runs(numbers)]
    cuts = view.partial or ("",) * len(view.text)
    left = [(c, p) for c, p, span in zip(view.text, cuts, spans, strict=True) if span is None]
    rest = tuple(c for c, _ in left)
    if rest or not out:
        out.append(replace(view, text=rest or None,
                           partial=tuple(p for _, p in left) if view.partial and rest else None))
    return out, len(rest)
