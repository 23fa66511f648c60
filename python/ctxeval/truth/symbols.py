"""Definitions (symbols) found by tree-sitter: the unit of the ``symbol`` granularity.

A definition is identified by (file, kind, start_byte, end_byte), where ``kind`` is the
tree-sitter node type, so the byte range must be exactly the node's. Which node types count is
written as one query file per language (``queries/<lang>.scm``), in two sections:

* ``strict`` (default): what a reader would call a definition -- functions, methods (also
  bodiless interface/trait methods), classes, interfaces, structs/unions/enums with a body,
  records, type aliases, Go type specs, Rust impls/traits/enums/modules, namespaces, objects.
* ``contextbench``: exactly the node types the ContextBench reference evaluator counts
  (``contextbench/extractors/treesitter.py``), every node of those types: anonymous JS arrow
  functions, C ``struct x`` specifiers inside signatures, one Go ``type_declaration`` per
  ``type ( ... )`` group. Only the reference's file extensions are recognised (``.h`` is C,
  ``.mjs``/``.cjs``/``.cxx``/``.hh``/``.kts`` are unknown). ``name`` is the reference's
  heuristic name (the ``name`` field, else the first identifier of the declarator or the node:
  a C++ method declared as ``void add(int v)`` inside a class is named ``v``), which is what its
  name matching compares (``resolve_name(defs, name, style="contextbench")`` applies that rule);
  ``qualified_name`` is still built from the real names, through the enclosing definitions of
  the same preset.

Parsing, the query pass and the naming rules run in the native core
(``rust/ctxeval-core/src/definitions``, with the GIL released); :mod:`ctxeval.truth.grammars` gives
it the grammar packages' languages and the query files. :func:`extract` parses from scratch;
:class:`ctxeval.truth.extraction.SymbolExtractor` adds caching and incremental re-parsing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import _core
from .grammars import (
    PRESETS,
    grammar_versions,
    language_for_path,
    load_error,
    register,
    resolve_lang,
)

__all__ = [
    "PRESETS", "Definition", "extract", "format_symbols", "grammar_versions",
    "language_for_path", "load_error", "resolve_name", "symbols_json",
]


class Definition(NamedTuple):
    """One definition node; lines are 1-based inclusive, bytes 0-based half-open.

    A named tuple rather than a frozen dataclass: an evaluation makes one per definition of
    every file it reads (18,000 on the real-history benchmark, from the core or the disk
    cache), and a tuple is made in a third of the time, with the same fields, equality by
    value and immutability."""

    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "qualified_name": self.qualified_name,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
        }


def definitions(found: list[tuple[str, str, str, int, int, int, int]] | None
                ) -> list[Definition] | None:
    """The native core's definition tuples as :class:`Definition` objects."""
    if found is None:
        return None
    return list(map(Definition._make, found))


#: From-scratch extraction (no trees kept), shared by every thread of the process.
_SCRATCH = _core.DefinitionExtractor()


def extract(data: bytes, path: str, *, preset: str = "strict",
            lang: str | None = None) -> list[Definition] | None:
    """The definitions in one file's bytes, sorted by (start_byte, end_byte).

    None when the language is unknown (by ``lang`` or the path's extension) or its grammar
    cannot be used; [] for a file without definitions. Broken source yields whatever
    tree-sitter's error recovery keeps as definition nodes.
    """
    language = resolve_lang(path, preset, lang)
    if language is None or not register(_SCRATCH, language):
        return None
    return definitions(_SCRATCH.extract(language, preset, "", data))


def _normalise_query_name(name: str) -> str:
    name = name.strip()
    if name.endswith("()"):
        name = name[:-2]
    return name.replace("::", ".").replace("#", ".")


def resolve_name(defs: Sequence[Definition], name: str, *,
                 style: str = "qualified") -> list[Definition]:
    """The definitions a symbol name refers to, in ``defs`` order.

    ``style="qualified"``: a dotted name (``::`` and ``#`` count as dots) matches definitions
    whose qualified name ends with those components (``C.m`` matches ``Outer.C.m``); a bare
    name matches every definition with that name.

    ``style="contextbench"`` (the reference rule, for definitions from preset contextbench):
    the stripped name is compared with ``name``; when nothing matches and it contains a dot,
    the part after the last dot is tried. ``::`` is not a separator there, so
    ``Histogram::add`` matches nothing.
    """
    if style == "contextbench":
        sym = name.strip()
        if not sym:
            return []
        for cand in ([sym, sym.split(".")[-1]] if "." in sym else [sym]):
            hits = [d for d in defs if d.name == cand]
            if hits:
                return hits
        return []
    if style != "qualified":
        raise ValueError(f"unknown name style {style!r}")
    query = _normalise_query_name(name)
    parts = [p for p in query.split(".") if p]
    if not parts:
        return []
    if len(parts) == 1:
        return [d for d in defs if d.name == parts[0]]
    n = len(parts)
    return [d for d in defs if d.qualified_name.split(".")[-n:] == parts]


def format_symbols(defs: Sequence[Definition]) -> str:
    """A plain-text table for ``ctxeval symbols``: lines, bytes, kind and names."""
    header = ("lines", "bytes", "kind", "qualified_name", "name")
    rows = [(f"{d.start_line}-{d.end_line}", f"{d.start_byte}-{d.end_byte}", d.kind,
             d.qualified_name or "-", d.name or "-") for d in defs]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]
    return "\n".join(lines) + "\n"


def symbols_json(defs: Sequence[Definition]) -> list[dict[str, Any]]:
    """The ``--json`` form: one object per definition, keys as in :class:`Definition`."""
    return [d.to_json() for d in defs]
