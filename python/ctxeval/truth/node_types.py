"""Which node kinds of a grammar may hold which: lets the native core's walk of a tree skip the
subtrees no definition can be in.

A from-scratch extraction walks every node of the tree to find the definition kinds (see
``rust/ctxeval-core/src/definitions``): on the real-history benchmark that is 3.2 million
nodes, a ninth of the parse. Definitions sit in a few kinds of nodes (a Python
``function_definition`` is a statement: under a ``module``, a ``block``, a
``decorated_definition``, never under a ``call`` or a ``string``), and a grammar says which: its
``node-types.json`` lists, for every named node kind, the kinds its children can have. From
that the core works out, for each preset's definition kinds, the kinds whose subtrees may hold
one (``Grammar::set_node_types``); it goes down into the others only when the subtree has a
syntax error (error recovery puts anything anywhere). The definitions found are the same
(tested on every source file of the fixtures and the corpus, in every language); the walk
visits an eighth of the nodes on the real history.

Grammar packages on PyPI do not ship ``node-types.json``; ``queries/<language>.kinds`` holds
what the walk needs of it for the grammar version ctxeval is tested with, taken from the
grammar crate of the same version (its ``parser.c`` is byte-identical to the PyPI package's):
the package and version, every named kind with the named kinds its children may have
(supertypes as their own lines; an alias that ``node-types.json`` names as a child but does
not list, such as Python's ``as_pattern_target``, gets the children of the rule it renames,
from ``grammar.json``), and the grammar's extras (a comment may sit in any node;
``grammar.json``'s ``extras`` as well as ``node-types.json``'s flags, which older grammars
lack). A language whose installed package has another version is walked whole, as before; so
is one whose extras may hold a definition (Ruby's heredoc bodies hold interpolated code).

    python -m ctxeval.truth.node_types OUT_DIR LANG:PACKAGE:VERSION:SRC_DIR ...

rebuilds the files from grammar source directories (``src/`` of each crate, holding
``node-types.json`` and ``grammar.json``).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

#: Where the query (``.scm``) and node-kind (``.kinds``) files are installed: the package is
#: always a directory (its native module cannot be imported from a zip), so a plain path
#: does, without importing :mod:`importlib.resources` (and ``zipfile``) at every start.
QUERIES = Path(__file__).resolve().parent / "queries"


def compact(node_types: list[dict[str, Any]], grammar: dict[str, Any]) -> dict[str, Any]:
    """What the walk needs of a grammar's ``node-types.json`` and ``grammar.json``:
    ``kinds`` (every named kind and the named kinds its children may have, sorted),
    ``supertypes`` (each supertype's subtypes) and ``extras`` (named kinds that may appear
    in any node)."""
    kinds: dict[str, list[str]] = {}
    supertypes: dict[str, list[str]] = {}
    extras = {t["type"] for t in node_types if t.get("extra") and t.get("named")}
    for t in node_types:
        if not t.get("named"):
            continue
        if "subtypes" in t:
            supertypes[t["type"]] = sorted({s["type"] for s in t["subtypes"] if s["named"]})
            continue
        children = {c["type"] for f in (t.get("fields") or {}).values() for c in f["types"]
                    if c["named"]}
        children |= {c["type"] for c in (t.get("children") or {}).get("types", [])
                     if c["named"]}
        kinds[t["type"]] = sorted(set(kinds.get(t["type"], [])) | children)
    for e in grammar.get("extras", []):
        if e.get("type") == "SYMBOL":
            extras.add(e["name"])
    named = {c for kids in [*kinds.values(), *supertypes.values()] for c in kids}
    for alias, children in _aliases(grammar, named - kinds.keys() - supertypes.keys(),
                                    kinds, supertypes).items():
        kinds[alias] = children
    return {"kinds": kinds, "supertypes": supertypes, "extras": sorted(extras)}


def _aliases(grammar: dict[str, Any], missing: set[str], kinds: dict[str, list[str]],
             supertypes: dict[str, list[str]]) -> dict[str, list[str]]:
    """The children of named kinds that ``node-types.json`` names as children but does not
    list: aliases of other rules (Python's ``as_pattern_target`` is ``expression`` renamed).
    An alias of a listed kind has its children; of a supertype (a hidden rule), the
    supertype's kinds (the node holds the concrete one: ``as_pattern_target`` holds an
    ``attribute``); of a token, none. An alias of anything else (a hidden rule's sequence) is
    left out, and then the core takes it to hold anything."""
    found: dict[str, set[str] | None] = {}

    def visit(rule: Any) -> None:
        if isinstance(rule, list):
            for r in rule:
                visit(r)
            return
        if not isinstance(rule, dict):
            return
        if rule.get("type") == "ALIAS" and rule.get("named") and rule.get("value") in missing:
            content, name = rule.get("content") or {}, rule["value"]
            kind, target = content.get("type"), content.get("name")
            if kind == "SYMBOL" and target in kinds:
                got: set[str] | None = set(kinds[target])
            elif kind == "SYMBOL" and target in supertypes:
                got = {target}
            elif kind in ("STRING", "PATTERN", "TOKEN", "IMMEDIATE_TOKEN"):
                got = set()
            else:
                got = None
            prev = found.get(name, set())
            found[name] = None if got is None or prev is None else prev | got
        for value in rule.values():
            visit(value)

    visit(grammar.get("rules", {}))
    return {name: sorted(kids) for name, kids in found.items() if kids is not None}


def resolved(entry: dict[str, Any]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``(kind, the concrete kinds its children may have)`` for every kind of a table entry
    (supertypes replaced by their subtypes, recursively), and its extras: what the native
    core takes."""
    supers: dict[str, list[str]] = entry["supertypes"]

    @functools.cache
    def concrete(kind: str) -> frozenset[str]:
        if kind not in supers:
            return frozenset([kind])
        out: set[str] = set()
        for sub in supers[kind]:
            out |= concrete(sub)
        return frozenset(out)

    kinds = [(k, sorted({c for child in kids for c in concrete(child)}))
             for k, kids in entry["kinds"].items()]
    extras = sorted({c for e in entry["extras"] for c in concrete(e)})
    return kinds, extras


def render(lang: str, package: str, version: str, entry: dict[str, Any]) -> str:
    """The ``.kinds`` file of a language: a line per kind, so that a new grammar version
    reads as a diff."""
    lines = [f"; Node kinds of {lang} ({package} {version}): the named kinds the children of",
             "; each kind may have, from that version's node-types.json and grammar.json",
             "; (ctxeval.truth.node_types).",
             f"package {package} {version}",
             "extras " + " ".join(entry["extras"])]
    lines += [f"supertype {k} = " + " ".join(v) for k, v in sorted(entry["supertypes"].items())]
    lines += [f"kind {k} = " + " ".join(v) for k, v in sorted(entry["kinds"].items())]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def parse(text: str) -> dict[str, Any]:
    """A ``.kinds`` file read back: ``package``, ``version`` and the entry of
    :func:`compact`."""
    out: dict[str, Any] = {"kinds": {}, "supertypes": {}, "extras": []}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "package":
            out["package"], out["version"] = rest.split()
        elif word == "extras":
            out["extras"] = rest.split()
        elif word in ("kind", "supertype"):
            name, _, kids = rest.partition("=")
            out["kinds" if word == "kind" else "supertypes"][name.strip()] = kids.split()
        elif line.strip() and not line.startswith(";"):
            raise ValueError(f"not a line of a .kinds file: {line!r}")
    return out


@functools.cache
def _entry(lang: str) -> dict[str, Any] | None:
    try:
        text = (QUERIES / f"{lang}.kinds").read_text(encoding="utf-8")
    except OSError:
        return None
    return parse(text)


def for_language(lang: str, version: str | None
                 ) -> tuple[list[tuple[str, list[str]]], list[str]] | None:
    """The node kinds of ``lang`` (:func:`resolved`) when its file is for the installed
    package ``version``; None otherwise (the walk then visits every node)."""
    entry = _entry(lang)
    if entry is None or version is None or entry.get("version") != version:
        return None
    return resolved(entry)


def build(out_dir: Path, specs: list[str]) -> list[Path]:
    """Writes the ``.kinds`` file of each ``LANG:PACKAGE:VERSION:SRC_DIR`` spec."""
    written = []
    for spec in specs:
        lang, package, version, src = spec.split(":", 3)
        root = Path(src)
        entry = compact(json.loads((root / "node-types.json").read_text(encoding="utf-8")),
                        json.loads((root / "grammar.json").read_text(encoding="utf-8")))
        path = out_dir / f"{lang}.kinds"
        path.write_text(render(lang, package, version, entry), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: python -m ctxeval.truth.node_types OUT_DIR LANG:PACKAGE:VERSION:SRC_DIR ...",
              file=sys.stderr)
        return 2
    for path in build(Path(args[0]), args[1:]):
        print(path.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
