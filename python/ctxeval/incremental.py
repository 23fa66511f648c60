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

import bisect
import difflib
import itertools
from dataclasses import dataclass

from tree_sitter import Parser, Point, Query, Tree

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
    return list(itertools.accumulate(map(len, lines), initial=0))


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
                found = _far_anchor(a, b, i, j)
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


def _far_anchor(a: list[bytes], b: list[bytes], i: int, j: int) -> tuple[int, int] | None:
    """The nearest pair of equal lines (two in a row) past a long insertion or deletion:
    (lines skipped in ``a``, lines skipped in ``b``), or None."""
    where: dict[bytes, list[int]] = {}
    for jj in range(j, len(b) - 1):
        where.setdefault(b[jj], []).append(jj)
    best: tuple[int, int] | None = None
    for ii in range(i, len(a) - 1):
        if best is not None and ii - i >= best[0] + best[1]:
            break
        for jj in where.get(a[ii], ()):
            if a[ii + 1] == b[jj + 1]:
                cand = (ii - i, jj - j)
                if best is None or sum(cand) < sum(best):
                    best = cand
                break
    return best


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


def _reparse(parser: Parser, old_tree: Tree, old: bytes, new: bytes
             ) -> tuple[Tree, Tree | None]:
    """(tree of ``new``, the edited copy of ``old_tree`` it was parsed from, or None when it
    was parsed from scratch)."""
    edits = compute_edits(old, new)
    if not edits:
        return parser.parse(new), None  # same bytes: a fresh tree bound to `new`, cheap enough
    edited = edit_tree(old_tree, edits)
    tree = parser.parse(new, edited)
    if tree.root_node.has_error:
        return parser.parse(new), None
    return tree, edited


def reparse(parser: Parser, old_tree: Tree, old: bytes, new: bytes) -> Tree:
    """``new`` parsed from ``old_tree`` (the tree of ``old``), falling back to a fresh parse
    when the result has a syntax error, where incremental and fresh parses may differ."""
    return _reparse(parser, old_tree, old, new)[0]


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


def _shifted(d: Definition, dbyte: int, drow: int) -> Definition:
    return Definition(d.kind, d.name, d.qualified_name, d.start_line + drow, d.end_line + drow,
                      d.start_byte + dbyte, d.end_byte + dbyte)


def reuse_definitions(tree: Tree, edited: Tree, old_tree: Tree, old_defs: list[Definition],
                      query: Query, preset: str, counts: dict[str, int] | None = None
                      ) -> list[Definition]:
    """The definitions of ``tree``, re-using ``old_defs`` (of ``old_tree``) where they can be.

    ``tree`` was parsed from ``edited`` (``old_tree`` with the edits applied). A top-level node
    of ``tree`` that *is* a subtree of ``edited`` (same node id: tree-sitter re-used it because
    no edit touched it) has the same bytes as before, so its definitions are the old ones moved
    by its shift: names and qualified names depend only on the node and what it contains (a
    top-level node has no enclosing definition, and its own parent is the root). Only the other
    top-level nodes are queried. Definitions come out in :func:`ctxeval.symbols._build`'s
    order: the top-level nodes are disjoint and in document order, so the whole-file order is
    their concatenation.
    """
    old_children = old_tree.root_node.children
    edited_children = edited.root_node.children
    if len(old_children) != len(edited_children):  # editing never changes the structure
        return _build(_collect(query, tree.root_node), preset)
    index = {c.id: k for k, c in enumerate(edited_children)}
    starts = [d.start_byte for d in old_defs]
    out: list[Definition] = []
    reused = queried = 0
    for child in tree.root_node.children:
        k = index.get(child.id)
        if k is not None:
            o = old_children[k]
            if (o.end_byte - o.start_byte == child.end_byte - child.start_byte
                    and o.start_point[1] == child.start_point[1]):
                lo = bisect.bisect_left(starts, o.start_byte)
                hi = bisect.bisect_left(starts, o.end_byte, lo)
                dbyte = child.start_byte - o.start_byte
                drow = child.start_point[0] - o.start_point[0]
                if dbyte == 0 and drow == 0:
                    out.extend(old_defs[lo:hi])
                else:
                    out.extend(_shifted(d, dbyte, drow) for d in old_defs[lo:hi])
                reused += 1
                continue
        queried += 1
        out.extend(_build(_collect(query, child), preset))
    if counts is not None:
        counts["reused"] = counts.get("reused", 0) + reused
        counts["queried"] = counts.get("queried", 0) + queried
    return out


def extract_incremental(data: bytes, lang: str, preset: str,
                        previous: tuple[bytes, Tree] | None = None,
                        previous_defs: list[Definition] | None = None,
                        counts: dict[str, int] | None = None,
                        ) -> tuple[list[Definition], Tree] | None:
    """(definitions, tree) of ``data``, re-parsed from ``previous`` = (bytes, tree) when given,
    and re-using ``previous_defs`` (that version's definitions under ``preset``) for the
    top-level nodes the edits left alone. ``counts`` gets ``reused``/``queried`` top-level
    nodes added."""
    grammar = _load(lang)
    if grammar is None:
        return None
    parser = _parser(lang, grammar.language)
    query = grammar.queries[preset]
    if previous is None:
        tree = parser.parse(data)
        return _build(_collect(query, tree.root_node), preset), tree
    tree, edited = _reparse(parser, previous[1], previous[0], data)
    if edited is None or previous_defs is None:
        return _build(_collect(query, tree.root_node), preset), tree
    return reuse_definitions(tree, edited, previous[1], previous_defs, query, preset,
                             counts), tree
