"""An independent oracle of definition extraction: the first implementation, in Python.

ctxeval parses, queries and names definitions in its native core
(``rust/ctxeval-core/src/definitions``). This module is the pure-Python implementation the
project started with, through py-tree-sitter, kept here unchanged in its rules so that the tests
can check the native core against it on every fixture and on random edits
(``tests/truth/test_definitions_oracle.py``). It is never used by the package.

One rule differs on purpose: a JS/TS function bound to a key made only of quotes (``{'': f}``)
made this implementation raise (so the whole file had no definitions); the core names it ''.
"""

from __future__ import annotations

import threading

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from ctxeval.truth.grammars import GRAMMARS, query_sections, query_text

OracleDef = tuple[str, str, str, int, int, int, int]


class Definition(tuple):
    """(kind, name, qualified_name, start_line, end_line, start_byte, end_byte)."""

    def __new__(cls, *fields: object) -> Definition:
        return super().__new__(cls, fields)

    start_byte = property(lambda self: self[5])
    end_byte = property(lambda self: self[6])


_lock = threading.Lock()
_grammars: dict[str, tuple[Language, dict[str, Query]]] = {}


def _grammar(lang: str) -> tuple[Language, dict[str, Query]]:
    import importlib

    with _lock:
        if lang not in _grammars:
            module, func, _stem = GRAMMARS[lang]
            language = Language(getattr(importlib.import_module(module), func)())
            sections = query_sections(query_text(lang))
            _grammars[lang] = (language, {p: Query(language, s) for p, s in sections.items()})
        return _grammars[lang]


def extract(data: bytes, lang: str, preset: str) -> list[OracleDef]:
    """The definitions of ``data`` as tuples, sorted by bytes (from scratch)."""
    language, queries = _grammar(lang)
    tree = Parser(language).parse(data)
    return [tuple(d) for d in _build(_collect(queries[preset], tree.root_node), preset)]



_NAME_LEAVES = frozenset({
    "identifier", "field_identifier", "property_identifier", "type_identifier",
    "simple_identifier", "constant", "name", "namespace_identifier", "operator_name",
    "destructor_name", "qualified_identifier", "scope_resolution", "scoped_identifier",
    "scoped_type_identifier", "primitive_type", "user_type", "string", "package_identifier",
})


def _text(node: Node | None) -> str:
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", errors="replace").strip() if raw else ""


def _split_scope(text: str) -> list[str]:
    """``A::B::f`` / ``A.B`` -> components (C++ / Ruby / Rust scopes, Swift extensions)."""
    text = text.strip().strip("'\"`")
    parts = [p for p in text.replace("::", ".").split(".") if p]
    return parts or ([text] if text else [])


def _declarator_name(node: Node) -> Node | None:
    """Follow C/C++ ``declarator`` fields down to the declared name."""
    cur: Node | None = node
    for _ in range(32):
        if cur is None:
            return None
        if cur.type in _NAME_LEAVES:
            return cur
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            # parenthesized_declarator and friends have no field: take the first named child
            nxt = cur.named_children[0] if cur.named_child_count else None
        cur = nxt
    return None


def _type_name(node: Node | None) -> Node | None:
    """The bare type name of ``Foo<T>``, ``*Foo``, ``a::Foo``: for impls and Go receivers."""
    cur = node
    for _ in range(16):
        if cur is None or cur.type in ("type_identifier", "identifier", "primitive_type"):
            return cur
        if cur.type in ("scoped_type_identifier", "qualified_type"):
            return cur.child_by_field_name("name") or cur
        nxt = cur.child_by_field_name("type")
        if nxt is None:
            nxt = next((c for c in cur.named_children if c.type != "type_arguments"), None)
        cur = nxt
    return cur


_BOUND_KINDS = frozenset({
    "arrow_function", "function_expression", "function", "generator_function", "class",
})
_BINDING_FIELDS = {
    "variable_declarator": "name", "assignment_expression": "left", "pair": "key",
    "field_definition": "property", "public_field_definition": "name",
}


def _bound_name(node: Node) -> str:
    """``f`` of ``const f = () => ...``, ``x.f = function ...``, ``{f: () => ...}``; else ''."""
    own = node.child_by_field_name("name")  # a named function/class expression
    parent = node.parent
    field = _BINDING_FIELDS.get(parent.type) if parent is not None else None
    if field is not None and parent is not None:
        target = parent.child_by_field_name(field)
        if target is not None and target.id != node.id:
            if target.type == "member_expression":
                target = target.child_by_field_name("property")
            if target is not None and target.type in _NAME_LEAVES | {"property_identifier"}:
                return _split_scope(_text(target))[-1] if _text(target) else ""
    return _text(own)


def _proper_name(node: Node) -> tuple[list[str], list[str]]:
    """(scope components written in the name itself, e.g. ``H`` of ``H::add``; the name)."""
    kind = node.type
    if kind == "impl_item":  # Rust: an impl is named after its type; `impl T for Foo` -> Foo
        parts = _split_scope(_text(_type_name(node.child_by_field_name("type"))))
        return parts[:-1], parts[-1:] or [""]
    if kind == "method_declaration" and node.child_by_field_name("receiver") is not None:
        receiver = node.child_by_field_name("receiver")  # Go: func (s *Store) Delete -> Store
        param = next((c for c in receiver.named_children
                      if c.type == "parameter_declaration"), None) if receiver else None
        owner = _text(_type_name(param.child_by_field_name("type"))) if param else ""
        return ([owner] if owner else []), [_text(node.child_by_field_name("name"))]
    if kind in _BOUND_KINDS:  # JS/TS function and class expressions: named by their binding
        return [], [_bound_name(node)]
    if kind == "type_alias_statement":  # Python `type X[T] = ...`
        left = node.child_by_field_name("left")
        ident = next((c for c in left.named_children if c.type == "identifier"), left) \
            if left is not None else None
        return [], [_text(ident)]
    if kind == "type_declaration":  # Go `type X ...` (one spec): named after the spec
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        return [], [_text(specs[0].child_by_field_name("name")) if len(specs) == 1 else ""]
    name_node = node.child_by_field_name("name")
    if name_node is None:
        declarator = node.child_by_field_name("declarator")
        if declarator is not None:
            name_node = _declarator_name(declarator)
    if name_node is None and kind == "init_declaration":
        return [], ["init"]
    if name_node is None:
        name_node = next((c for c in node.named_children if c.type in _NAME_LEAVES), None)
    if name_node is not None and name_node.type == "destructor_name":
        return [], ["~" + _text(name_node).lstrip("~").strip()]
    parts = _split_scope(_text(name_node))
    if not parts:
        return [], [""]
    return parts[:-1], parts[-1:]


# The reference ranks identifier node types when a definition has no `name` field: it walks
# the definition (or its `declarator`) in document order and keeps the first node of the best
# rank, stopping at the first plain `identifier`.
_HEURISTIC_RANK = {
    "identifier": 0, "field_identifier": 1, "property_identifier": 2, "method_identifier": 3,
    "type_identifier": 100, "scoped_identifier": 100, "namespace_identifier": 100,
    "constant_identifier": 100,
}


def heuristic_name(node: Node) -> str:
    """The name ContextBench gives a definition node (what its name matching compares).

    The ``name`` field when there is one; otherwise, searching the ``declarator`` field (or the
    node itself) in document order, the first ``identifier`` -- or failing that the first node
    of the best remaining identifier type. So a Rust impl is named after the first identifier
    inside it (often its first method or a parameter), a JS arrow function after its first
    parameter, and a C++ method declared as ``void add(int v)`` inside a class after ``v``.
    Empty when no identifier is found (the reference then cannot match it by name).
    """
    name_node = node.child_by_field_name("name")
    if name_node is not None:
        name = _text(name_node)
        if name:
            return name
    root = node.child_by_field_name("declarator") or node
    best, best_rank = "", None
    stack = [root]
    while stack:
        cur = stack.pop()
        rank = _HEURISTIC_RANK.get(cur.type)
        if rank is not None and cur.is_named and (best_rank is None or rank < best_rank):
            text = _text(cur)
            if text:
                best, best_rank = text, rank
                if rank == 0:
                    break
        if cur.child_count:
            stack.extend(reversed(cur.children))
    return best


# ---------------------------------------------------------------------------------------------
# Extraction.

def _collect(query: Query, root: Node) -> list[Node]:
    """One query-cursor pass over the tree: the captured definition nodes (may repeat)."""
    return QueryCursor(query).captures(root).get("definition", [])


# Kinds whose name is not simply their `name` field (see _proper_name).
_SPECIAL_KINDS = _BOUND_KINDS | {
    "impl_item", "method_declaration", "type_declaration", "init_declaration",
    "type_alias_statement",
}


def _local_name(node: Node, kind: str) -> tuple[list[str], str]:
    """(scope components written in the name, name) of a definition node; see _proper_name.

    The common case reads only the `name` field.
    """
    if kind not in _SPECIAL_KINDS:
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            raw = name_node.text
            name = raw.decode("utf-8", errors="replace").strip() if raw else ""
            if ":" in name or "." in name or name_node.type == "destructor_name":
                scope, (name,) = _proper_name(node)
                return scope, name
            return [], name
    scope, (name,) = _proper_name(node)
    return scope, name


def make_definition(node: Node, start: int, end: int, stack: list[tuple[int, str]],
                    heuristic: bool) -> Definition:
    """The definition of ``node`` (bytes ``start``-``end``), qualified through the enclosing
    definitions on ``stack``, which it joins when it is named. An anonymous definition has no
    qualified name; what it contains is qualified through its named ancestors."""
    kind = node.type
    scope, name = _local_name(node, kind)
    if name:
        qualified = ".".join([*scope, name]) if scope else name
        if stack:
            qualified = stack[-1][1] + "." + qualified
        stack.append((end, qualified))
    else:
        qualified = ""
    start_row = node.start_point[0]
    end_row, end_col = node.end_point
    return Definition(kind, heuristic_name(node) if heuristic else name, qualified,
                      start_row + 1,
                      end_row if end_col == 0 and end_row > start_row else end_row + 1,
                      start, end)


def _build(nodes: list[Node], preset: str) -> list[Definition]:
    """Definitions with qualified names from the nesting of the matched nodes.

    Written for speed (it runs once per definition of every file): the common case reads only
    the node's range, points, type and `name` field.
    """
    # Outer nodes first: by start, then longest; equal ranges keep the capture order.
    order = sorted([(n.start_byte, -n.end_byte, i, n) for i, n in enumerate(nodes)])
    out: list[Definition] = []
    stack: list[tuple[int, str]] = []  # (end_byte, qualified name) of the open named scopes
    heuristic = preset == "contextbench"
    prev_start = prev_end = -1
    same_range: list[int] = []  # node ids of the definitions with the current range
    nested_at_start = False  # some definition starts where its parent does: order differs
    for start, neg_end, _i, node in order:
        end = -neg_end
        if start == prev_start:
            if end == prev_end:  # two patterns may capture the same node
                if node.id in same_range:
                    continue
                same_range.append(node.id)
            else:
                nested_at_start = True
                prev_end, same_range = end, [node.id]
        else:
            prev_start, prev_end, same_range = start, end, [node.id]
        while stack and (start >= stack[-1][0] or end > stack[-1][0]):
            stack.pop()  # sorted by start, so an open scope contains us iff we end inside it
        out.append(make_definition(node, start, end, stack, heuristic))
    if nested_at_start:
        out.sort(key=_def_key)
    return out


def _def_key(d: Definition) -> tuple[int, int]:
    return (d.start_byte, d.end_byte)
