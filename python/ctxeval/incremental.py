"""Incremental re-parsing: a new version of a file parsed from an earlier version's tree.

The instances of a benchmark sit at many commits of few repositories, so the same path is met
again and again in versions that differ by a few lines. Tree-sitter can re-parse such a version
from the previous tree, reusing every subtree the edits did not touch, if it is told where the
bytes changed. The edits come from a line diff of the two blobs (a greedy scan that resyncs
within a few lines, :class:`difflib.SequenceMatcher` where it cannot), so each edit starts and
ends on a line boundary and its points are easy to state exactly.

The definitions must be identical to a from-scratch :func:`ctxeval.symbols.extract` (the
tests check that on random edit chains and on version chains of realistic files). Given the
previous version's definitions, only the nodes the edits changed are searched again, with
the same query and naming code; the definitions inside untouched nodes are taken over, moved
and re-qualified (:func:`reuse_definitions`). Tree-sitter's error recovery is the one place
where an incremental parse may settle on another tree than a fresh one, so when the re-parsed
tree has an error it is parsed again from scratch, and searched whole.
"""

from __future__ import annotations

import bisect
import difflib
import importlib.resources
import itertools
import re
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node, Parser, Point, Query, QueryCursor, Tree

from .symbols import (
    _GRAMMARS,
    Definition,
    _build,
    _collect,
    _load,
    _parser,
    _query_sections,
    make_definition,
)


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
             ) -> tuple[Tree, Tree | None, list[Edit]]:
    """(tree of ``new``, the edited copy of ``old_tree`` it was parsed from or None when it
    was parsed from scratch, the edits)."""
    edits = compute_edits(old, new)
    if not edits:
        return parser.parse(new), None, edits  # same bytes: a fresh tree, cheap enough
    edited = edit_tree(old_tree, edits)
    tree = parser.parse(new, edited)
    if tree.root_node.has_error:
        return parser.parse(new), None, edits
    return tree, edited, edits


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


def _locals(old_defs: list[Definition]) -> list[str | None]:
    """Per definition (in ``old_defs`` order): its qualified name without the qualified name of
    its innermost named enclosing definition (None for an anonymous one) -- what
    :func:`ctxeval.symbols._build` prefixed, recovered by replaying its scope stack."""
    order = sorted(range(len(old_defs)),
                   key=lambda k: (old_defs[k].start_byte, -old_defs[k].end_byte))
    out: list[str | None] = [None] * len(old_defs)
    stack: list[tuple[int, str]] = []
    for k in order:
        d = old_defs[k]
        while stack and (d.start_byte >= stack[-1][0] or d.end_byte > stack[-1][0]):
            stack.pop()
        if d.qualified_name:
            parent = stack[-1][1] if stack else None
            out[k] = d.qualified_name[len(parent) + 1:] if parent else d.qualified_name
            stack.append((d.end_byte, d.qualified_name))
    return out


_capturable_cache: dict[tuple[str, str], frozenset[str]] = {}


def _capturable(lang: str, preset: str) -> frozenset[str]:
    """Every node type named in the preset's query (a superset of the types it captures): a
    node of another type is no definition by a pattern of its own."""
    key = (lang, preset)
    got = _capturable_cache.get(key)
    if got is None:
        stem = _GRAMMARS[lang][2]
        text = (importlib.resources.files("ctxeval") / "queries" / f"{stem}.scm").read_text(
            encoding="utf-8")
        source = re.sub(r";[^\n]*", "", _query_sections(text).get(preset, ""))
        got = frozenset(re.findall(r"\(\s*([A-Za-z_][A-Za-z0-9_]*)", source))
        _capturable_cache[key] = got
    return got


def _top_captures(query: Query, node: Node) -> list[Node]:
    """Captures of the patterns rooted at ``node`` itself (the query walks no deeper than its
    children): ``node`` when it is a definition, and children captured through it."""
    cursor = QueryCursor(query)
    cursor.set_max_start_depth(0)
    return cursor.captures(node).get("definition", [])


class _AnyType(frozenset):
    """A set holding every node type."""

    def __contains__(self, item: object) -> bool:
        return True


def _changed_intervals(tree: Tree, edited: Tree, edits: list[Edit]) -> list[tuple[int, int]]:
    """Merged byte intervals of ``tree`` (new coordinates) where anything may differ from the
    old version: the edited bytes and the ranges whose syntactic structure changed, each
    widened by a byte so that nodes merely touching them count as changed."""
    spans = [(e.start_byte - 1, e.new_end_byte + 1) for e in edits]
    spans.extend((r.start_byte - 1, r.end_byte + 1) for r in edited.changed_ranges(tree))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


def reuse_definitions(tree: Tree, edited: Tree, edits: list[Edit], old_defs: list[Definition],
                      query: Query, preset: str, counts: dict[str, int] | None = None,
                      capturable: frozenset[str] | None = None) -> list[Definition]:
    """The definitions of ``tree``, re-using ``old_defs`` (of the old version) where they can be.

    ``tree`` was parsed from ``edited`` (the old tree with ``edits`` applied). Tree-sitter
    reports the ranges whose syntactic structure changed; a node of ``tree`` that meets
    neither them nor an edit has the same structure and bytes as the node at its old place
    (its bytes shifted by the edits before it, its lines by whole lines, since edits are whole
    lines). Each query pattern captures its root node or a child of it (every
    ``queries/*.scm`` is so), so the definitions strictly inside such a node C are the old ones
    there, moved, with the same names; only their qualified names are rebuilt (an enclosing
    definition outside C may have changed). Whether C itself is a definition, and its name, may
    depend on its parent (``const f = () => ...``), so that is found again, from the patterns
    rooted at C and at its parent. The changed nodes are searched with their own patterns
    only, each without walking its subtree.

    The result is in :func:`ctxeval.symbols._build`'s order; where that order would rest on
    the order of captures (two definitions of one byte range, one found again and one re-used)
    the whole tree is queried instead.
    """
    if capturable is None:  # unknown: every node may be a definition by its own pattern
        capturable = _AnyType()
    changed = _changed_intervals(tree, edited, edits)
    lows = [lo for lo, _hi in changed]
    # new position -> (bytes, rows) to subtract for the old position, past each edit
    marks = [e.new_end_byte for e in edits]
    shifts: list[tuple[int, int]] = []
    db = dr = 0
    for e in edits:
        db += e.new_end_byte - e.old_end_byte
        dr += e.new_end_point[0] - e.old_end_point[0]
        shifts.append((db, dr))
    starts = [d.start_byte for d in old_defs]
    local = _locals(old_defs)
    fresh: list[tuple[int, int, int, int, Node]] = []  # (start, -end, source, seq, node)
    reused: list[tuple[int, int, int, int, Definition, str | None]] = []
    n_reused = n_changed = 0
    seq = 0
    pending = [tree.root_node]
    while pending:
        node = pending.pop()
        n_changed += 1
        for c in _top_captures(query, node):
            fresh.append((c.start_byte, -c.end_byte, 0, seq, c))
            seq += 1
        for child in node.children:
            s, e = child.start_byte, child.end_byte
            k = bisect.bisect_right(lows, e) - 1  # the last interval starting at or before e
            if k >= 0 and changed[k][1] >= s:
                if child.child_count:
                    pending.append(child)  # changed: search it and look at its children
                else:
                    for c in _top_captures(query, child):
                        fresh.append((c.start_byte, -c.end_byte, 0, seq, c))
                        seq += 1
                continue
            n_reused += 1
            if child.type in capturable:
                for c in _top_captures(query, child):
                    if c.id == child.id:
                        fresh.append((c.start_byte, -c.end_byte, 0, seq, c))
                        seq += 1
            j = bisect.bisect_right(marks, s) - 1
            dbyte, drow = shifts[j] if j >= 0 else (0, 0)
            os_, oe = s - dbyte, e - dbyte
            lo = bisect.bisect_left(starts, os_)
            hi = bisect.bisect_left(starts, oe, lo)
            for i in range(lo, hi):
                d = old_defs[i]
                if d.end_byte > oe or (d.end_byte == oe and d.start_byte == os_
                                       and d.kind == child.type):
                    continue  # an ancestor starting at the same byte; or the node itself
                reused.append((d.start_byte + dbyte, -(d.end_byte + dbyte), 1, seq,
                               Definition(d.kind, d.name, d.qualified_name,
                                          d.start_line + drow, d.end_line + drow,
                                          d.start_byte + dbyte, d.end_byte + dbyte),
                               local[i]))
                seq += 1
    if counts is not None:
        counts["reused"] = counts.get("reused", 0) + n_reused
        counts["queried"] = counts.get("queried", 0) + n_changed
    entries: list[tuple[int, int, int, int, Any, Any]] = [
        (s, ne, src, q, n, None) for s, ne, src, q, n in fresh]
    entries.extend(reused)
    entries.sort(key=lambda x: (x[0], x[1], x[2], x[3]))
    for a, b in itertools.pairwise(entries):
        if a[0] == b[0] and a[1] == b[1] and (a[2] != b[2] or (
                a[2] == 0 and a[4].id != b[4].id)):
            return _build(_collect(query, tree.root_node), preset)
    return _assemble(entries, preset)


def _assemble(entries: list[tuple[int, int, int, int, Any, Any]], preset: str
              ) -> list[Definition]:
    """:func:`ctxeval.symbols._build` over found nodes and re-used definitions in order."""
    out: list[Definition] = []
    stack: list[tuple[int, str]] = []
    heuristic = preset == "contextbench"
    prev_start = prev_end = -1
    last_id = -1
    nested_at_start = False
    for start, neg_end, src, _q, item, loc in entries:
        end = -neg_end
        if start == prev_start:
            if end == prev_end:
                if src == 0 and item.id == last_id:
                    continue  # two patterns captured the same node
            else:
                nested_at_start = True
                prev_end = end
        else:
            prev_start, prev_end = start, end
        if src == 0:
            last_id = item.id
        while stack and (start >= stack[-1][0] or end > stack[-1][0]):
            stack.pop()
        if src == 1:
            d: Definition = item
            if loc is not None:
                qualified = stack[-1][1] + "." + loc if stack else loc
                stack.append((end, qualified))
                if qualified != d.qualified_name:
                    d = Definition(d.kind, d.name, qualified, d.start_line, d.end_line,
                                   d.start_byte, d.end_byte)
            out.append(d)
            continue
        out.append(make_definition(item, start, end, stack, heuristic))
    if nested_at_start:
        out.sort(key=lambda d: (d.start_byte, d.end_byte))
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
    tree, edited, edits = _reparse(parser, previous[1], previous[0], data)
    if edited is None or previous_defs is None:
        return _build(_collect(query, tree.root_node), preset), tree
    return reuse_definitions(tree, edited, edits, previous_defs, query, preset, counts,
                             _capturable(lang, preset)), tree
