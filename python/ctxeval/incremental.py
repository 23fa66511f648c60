"""Incremental re-parsing: a new version of a file parsed from an earlier version's tree.

The instances of a benchmark sit at many commits of few repositories, so the same path is met
again and again in versions that differ by a few lines. Tree-sitter can re-parse such a version
from the previous tree, reusing every subtree the edits did not touch, if it is told where the
bytes changed. The edits come from a line diff of the two blobs (a greedy scan that resyncs
within a few lines, :class:`difflib.SequenceMatcher` where it cannot), so each edit starts and
ends on a line boundary and its points are easy to state exactly.

The definitions are then extracted with the same query and code as :func:`ctxeval.symbols.
extract`, and must be identical to a from-scratch extraction (the tests check that on random
edits). Tree-sitter's error recovery is the one place where an incremental parse may settle on
another tree than a fresh one, so when the re-parsed tree has an error it is parsed again from
scratch.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tree_sitter import Parser, Point, Tree

from .symbols import Definition, _build, _collect, _load, _parser


@dataclass(frozen=True, slots=True)
class Edit:
    """One ``Tree.edit`` call, in the coordinates of the document as edited so far."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


def _offsets(lines: list[bytes]) -> list[int]:
    out = [0]
    total = 0
    for line in lines:
        total += len(line)
        out.append(total)
    return out


def _point_at_line(lines: list[bytes], i: int) -> tuple[int, int]:
    """The point where line ``i`` starts (``i == len(lines)``: the end of the text)."""
    if i < len(lines) or not lines or lines[-1].endswith(b"\n"):
        return (i, 0)
    return (i - 1, len(lines[-1]))


def _advance(point: tuple[int, int], text: bytes) -> tuple[int, int]:
    """The point reached after ``text`` when starting at ``point``."""
    rows = text.count(b"\n")
    if rows == 0:
        return (point[0], point[1] + len(text))
    return (point[0] + rows, len(text) - text.rfind(b"\n") - 1)


_WINDOW = 12  # lines looked ahead on each side to resynchronise after a difference
_BLOCK = 32  # equal lines are skipped this many at a time (list slices compare in C)


def _line_ops(a: list[bytes], b: list[bytes]) -> list[tuple[int, int, int, int]]:
    """(i1, i2, j1, j2): ``a[i1:i2]`` becomes ``b[j1:j2]``, in order, everything else equal.

    Versions of one file differ by a few scattered lines, so a greedy scan is enough: skip
    equal lines, and at a difference take the nearest pair of equal lines (two in a row, or
    the ends) within a small window. A region where no such pair is found goes to
    :class:`difflib.SequenceMatcher`. Minimality is not needed, only exactness.
    """
    ops: list[tuple[int, int, int, int]] = []
    na, nb = len(a), len(b)
    i = j = 0
    while i < na and j < nb:
        if a[i] != b[j]:
            found = None
            for d in range(1, 2 * _WINDOW + 1):
                for x in range(max(0, d - _WINDOW), min(d, _WINDOW) + 1):
                    y = d - x
                    ii, jj = i + x, j + y
                    if ii > na or jj > nb:
                        continue
                    if ii == na or jj == nb:
                        if ii == na and jj == nb:
                            found = (x, y)
                            break
                        continue
                    if a[ii] == b[jj] and (ii + 1 == na or jj + 1 == nb
                                           or a[ii + 1] == b[jj + 1]):
                        found = (x, y)
                        break
                if found is not None:
                    break
            if found is None:
                matcher = difflib.SequenceMatcher(None, a[i:], b[j:], autojunk=True)
                ops.extend((i + i1, i + i2, j + j1, j + j2)
                           for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
                return ops
            ops.append((i, i + found[0], j, j + found[1]))
            i += found[0]
            j += found[1]
            continue
        while a[i:i + _BLOCK] == b[j:j + _BLOCK] and i + _BLOCK <= na and j + _BLOCK <= nb:
            i += _BLOCK
            j += _BLOCK
        while i < na and j < nb and a[i] == b[j]:
            i += 1
            j += 1
    if i < na or j < nb:
        ops.append((i, na, j, nb))
    return ops


def compute_edits(old: bytes, new: bytes) -> list[Edit]:
    """The edits turning ``old`` into ``new``, in order, each in the coordinates left by the
    ones before it (so they can be applied to a tree one after another)."""
    if old == new:
        return []
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    off_a, off_b = _offsets(a), _offsets(b)
    edits: list[Edit] = []
    for i1, i2, j1, j2 in _line_ops(a, b):
        # Everything before this edit is already in new coordinates.
        start = off_b[j1]
        start_point = _point_at_line(b, j1)
        removed = old[off_a[i1]:off_a[i2]]
        edits.append(Edit(
            start, start + len(removed), off_b[j2],
            start_point, _advance(start_point, removed), _point_at_line(b, j2),
        ))
    return edits


def edit_tree(tree: Tree, edits: list[Edit]) -> Tree:
    """A copy of ``tree`` with ``edits`` applied (the original is left as it was)."""
    out = tree.copy()
    for e in edits:
        out.edit(e.start_byte, e.old_end_byte, e.new_end_byte, Point(*e.start_point),
                 Point(*e.old_end_point), Point(*e.new_end_point))
    return out


def reparse(parser: Parser, old_tree: Tree, old: bytes, new: bytes) -> Tree:
    """``new`` parsed from ``old_tree`` (the tree of ``old``), falling back to a fresh parse
    when the result has a syntax error, where incremental and fresh parses may differ."""
    edits = compute_edits(old, new)
    if not edits:
        return parser.parse(new)  # same bytes: a fresh tree bound to `new`, cheap enough
    tree = parser.parse(new, edit_tree(old_tree, edits))
    if tree.root_node.has_error:
        tree = parser.parse(new)
    return tree


def parse(data: bytes, lang: str, previous: tuple[bytes, Tree] | None = None) -> Tree | None:
    """The tree of ``data`` in ``lang`` (a name of :mod:`ctxeval.symbols`' grammar table),
    incrementally from ``previous`` = (bytes, tree) of an earlier version when given; None when
    the grammar cannot be loaded."""
    grammar = _load(lang)
    if grammar is None:
        return None
    parser = _parser(lang, grammar.language)
    if previous is None:
        return parser.parse(data)
    return reparse(parser, previous[1], previous[0], data)


def definitions(tree: Tree, lang: str, preset: str) -> list[Definition] | None:
    """The definitions of a parsed tree, exactly as :func:`ctxeval.symbols.extract` finds them."""
    grammar = _load(lang)
    if grammar is None:
        return None
    return _build(_collect(grammar.queries[preset], tree.root_node), preset)


def extract_incremental(data: bytes, lang: str, preset: str,
                        previous: tuple[bytes, Tree] | None = None
                        ) -> tuple[list[Definition], Tree] | None:
    """(definitions, tree) of ``data``, re-parsed from ``previous`` when given."""
    tree = parse(data, lang, previous)
    if tree is None:
        return None
    defs = definitions(tree, lang, preset)
    return None if defs is None else (defs, tree)
