"""The languages ctxeval reads, their grammar packages and their definition queries.

Parsing, querying and naming run in the native core (:class:`ctxeval._core.DefinitionExtractor`,
``rust/ctxeval-core/src/definitions``) with the GIL released; this module is what the core is
given: for each language, the ``language()`` of its grammar package (so the grammar versions
are the installed packages', as recorded in cache keys and result sidecars) and the query file
``queries/<lang>.scm``, split into one query per preset at its ``;; preset: <name>`` lines.

Only the reference's file extensions are recognised under ``contextbench`` (``.h`` is C,
``.mjs``/``.cjs``/``.cxx``/``.hh``/``.kts`` are unknown), as its evaluator does.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from typing import Any

from . import installed, node_types

PRESETS = ("strict", "contextbench")

# language -> (grammar module, function returning the language capsule, query file stem)
GRAMMARS: dict[str, tuple[str, str, str]] = {
    "python": ("tree_sitter_python", "language", "python"),
    "javascript": ("tree_sitter_javascript", "language", "javascript"),
    "typescript": ("tree_sitter_typescript", "language_typescript", "typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx", "typescript"),
    "java": ("tree_sitter_java", "language", "java"),
    "go": ("tree_sitter_go", "language", "go"),
    "rust": ("tree_sitter_rust", "language", "rust"),
    "c": ("tree_sitter_c", "language", "c"),
    "cpp": ("tree_sitter_cpp", "language", "cpp"),
    "c_sharp": ("tree_sitter_c_sharp", "language", "c_sharp"),
    "php": ("tree_sitter_php", "language_php", "php"),
    "ruby": ("tree_sitter_ruby", "language", "ruby"),
    "kotlin": ("tree_sitter_kotlin", "language", "kotlin"),
    "scala": ("tree_sitter_scala", "language", "scala"),
    "swift": ("tree_sitter_swift", "language", "swift"),
}

_LANG_ALIASES = {
    "jsx": "javascript", "js": "javascript", "ts": "typescript", "py": "python",
    "c++": "cpp", "csharp": "c_sharp", "c#": "c_sharp", "cs": "c_sharp", "kt": "kotlin",
    "rs": "rust", "rb": "ruby",
}

# The reference evaluator's extension map (its LANG_MAP); `.h` is C even when it holds C++.
CONTEXTBENCH_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".java": "java", ".go": "go", ".rs": "rust", ".c": "c", ".h": "c",
    ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp", ".cs": "c_sharp", ".php": "php",
    ".rb": "ruby", ".swift": "swift", ".kt": "kotlin", ".scala": "scala",
}

EXTENSIONS: dict[str, str] = {
    **CONTEXTBENCH_EXTENSIONS,
    ".mjs": "javascript", ".cjs": "javascript", ".cxx": "cpp", ".hh": "cpp", ".kts": "kotlin",
}

_GRAMMAR_PACKAGES = (
    "tree-sitter-python", "tree-sitter-javascript", "tree-sitter-typescript",
    "tree-sitter-java", "tree-sitter-go", "tree-sitter-rust", "tree-sitter-c",
    "tree-sitter-cpp", "tree-sitter-c-sharp", "tree-sitter-php", "tree-sitter-ruby",
    "tree-sitter-kotlin", "tree-sitter-scala", "tree-sitter-swift",
)


def language_for_path(path: str) -> str | None:
    """The language of a file by its (case-insensitive) extension, None when not source code."""
    return EXTENSIONS.get(os.path.splitext(path.lower())[1])


def normalise_lang(lang: str) -> str | None:
    """A language name or alias (``js``, ``c++``, ``rs``...) as a key of :data:`GRAMMARS`."""
    lang = lang.strip().lower()
    lang = _LANG_ALIASES.get(lang, lang)
    return lang if lang in GRAMMARS else None


def resolve_lang(path: str, preset: str, lang: str | None) -> str | None:
    """The language a file is read as under ``preset``: ``lang`` when given, else by the
    path's extension (the reference's extensions under ``contextbench``)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown symbol preset {preset!r} (expected one of {PRESETS})")
    if lang is not None:
        return normalise_lang(lang)
    if preset == "contextbench":
        return CONTEXTBENCH_EXTENSIONS.get(os.path.splitext(path.lower())[1])
    return language_for_path(path)


def grammar_versions() -> dict[str, str]:
    """Versions of the native tree-sitter runtime's language ABI and of each installed grammar
    package: symbol offsets depend on them."""
    from .._core import TREE_SITTER_LANGUAGE_VERSION

    out: dict[str, str] = {"tree-sitter-abi": str(TREE_SITTER_LANGUAGE_VERSION)}
    for pkg in _GRAMMAR_PACKAGES:
        got = installed.version(pkg)
        if got is not None:
            out[pkg] = got
    return out


def query_text(lang: str) -> str:
    """The text of a language's query file (both presets)."""
    stem = GRAMMARS[lang][2]
    return (node_types.QUERIES / f"{stem}.scm").read_text(encoding="utf-8")


def query_sections(text: str) -> dict[str, str]:
    """Split a query file at its ``;; preset: <name>`` lines into one source per preset."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(";; preset:"):
            current = sections.setdefault(stripped.split(":", 1)[1].strip(), [])
            continue
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def parent_dependent(source: str) -> list[str]:
    """Node types whose being a definition may depend on their parent node: the types a
    pattern names below its root (a superset of the types it captures through a parent).
    Incremental re-parsing asks such a node again when its parent changed; the core adds the
    function and class expressions named by the binding they are assigned to."""
    source = re.sub(r";[^\n]*", "", source)
    source = re.sub(r'"(?:[^"\\]|\\.)*"', '""', source)
    inner: set[str] = set()
    depth = 0
    for m in re.finditer(r"\(\s*([A-Za-z_][A-Za-z0-9_]*)?|\)", source):
        if m.group(0) == ")":
            depth -= 1
            continue
        depth += 1
        if depth >= 2 and m.group(1):
            inner.add(m.group(1))
    return sorted(inner)


_lock = threading.Lock()
_errors: dict[str, str] = {}


def load_error(lang: str) -> str | None:
    """Why a language could not be loaded (after a failed attempt), for diagnostics."""
    return _errors.get(lang)


def register(native: Any, lang: str, *, prune: bool = True) -> bool:
    """Give ``native`` (a :class:`ctxeval._core.DefinitionExtractor`) the grammar and queries
    of ``lang`` unless it has them; False (the reason kept for :func:`load_error`) when the
    grammar package is missing, its ABI is not supported or a query does not compile: that
    language then has no definitions rather than failing the run. ``prune``: also its node
    kinds, when known for the installed version (:mod:`ctxeval.truth.node_types`), so that
    walks skip the subtrees no definition can be in (False: the tests' whole walk)."""
    if native.has_grammar(lang):
        return True
    with _lock:
        if native.has_grammar(lang):
            return True
        if lang in _errors:
            return False
        module_name, func, _stem = GRAMMARS[lang]
        try:
            capsule = getattr(importlib.import_module(module_name), func)()
            sections = query_sections(query_text(lang))
            missing = [p for p in PRESETS if p not in sections]
            if missing:
                raise ValueError(f"queries/{GRAMMARS[lang][2]}.scm has no section for {missing}")
            kinds = node_types.for_language(lang, installed.version(module_name)) \
                if prune else None
            native.add_grammar(lang, capsule, [
                (p, sections[p], p == "contextbench", parent_dependent(sections[p]))
                for p in PRESETS], kinds)
        except Exception as exc:  # grammar missing, ABI mismatch, bad query: language unusable
            _errors[lang] = f"{type(exc).__name__}: {exc}"
            return False
        return True
