"""The native core's definitions against an independent oracle: the project's first,
pure-Python implementation of the same rules through py-tree-sitter (``symbols_oracle.py``).

Every source file the project and ``../shared`` hold is compared under both presets, byte
ranges, kinds, names and qualified names, and so are random line edits of them (the shapes a
repository's history produces: half-written definitions, moved methods, renamed classes).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symbols_oracle as oracle
from conftest import FIXTURES, SHARED
from ctxeval import _core
from ctxeval.truth.grammars import GRAMMARS, PRESETS, register, resolve_lang
from ctxeval.truth.symbols import Definition, extract


def _sources() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for root in (FIXTURES, SHARED / "parity", SHARED / "corpus"):
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*")):
            if f.is_file() and f.stat().st_size < 1 << 20 and any(
                    resolve_lang(f.name, p, None) for p in PRESETS):
                out[str(f.relative_to(root.parent))] = f.read_bytes()
    return out


_SOURCES = _sources()


def _tuples(defs: list[Definition] | None) -> list[tuple[object, ...]] | None:
    if defs is None:
        return None
    return [(d.kind, d.name, d.qualified_name, d.start_line, d.end_line, d.start_byte,
             d.end_byte) for d in defs]


def _check(path: str, data: bytes) -> int:
    checked = 0
    for preset in PRESETS:
        lang = resolve_lang(path, preset, None)
        if lang is None:
            continue
        assert _tuples(extract(data, path, preset=preset)) == oracle.extract(data, lang, preset), \
            (path, preset)
        checked += 1
    return checked


def test_every_source_file_matches_the_oracle() -> None:
    assert len(_SOURCES) >= 30  # the project's own fixtures alone hold that many
    langs = {resolve_lang(p, "strict", None) for p in _SOURCES}
    assert len(langs) >= 14
    assert sum(_check(p, d) for p, d in _SOURCES.items()) > len(_SOURCES)


@st.composite
def _edited(draw: st.DrawFn) -> tuple[str, bytes]:
    path = draw(st.sampled_from(sorted(_SOURCES)))
    lines = _SOURCES[path].splitlines(keepends=True)[:400]
    pool = [*lines[:60], b"\n", b"}\n", b"    x\n", b"def f(:\n", b"class\n", b"/*\n"]
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "delete", "move", "cut"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "insert" or not lines:
            lines.insert(i, draw(st.sampled_from(pool)))
        elif op == "delete":
            del lines[i]
        elif op == "move":
            lines.insert(draw(st.integers(0, len(lines) - 1)), lines.pop(i))
        else:  # a line cut in the middle, as a half-typed edit leaves it
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return path, b"".join(lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_edited())
def test_edited_sources_match_the_oracle(case: tuple[str, bytes]) -> None:
    _check(*case)


@pytest.mark.parametrize("source", [b"const o = {'': () => 1};\n", b'x = {"": function() {}}\n'])
def test_a_key_of_quotes_names_nothing(source: bytes) -> None:
    """The one rule where the core differs from the oracle on purpose: the oracle raised on a
    function bound to an empty quoted key (so the file had no definitions at all)."""
    defs = extract(source, "a.js")
    assert defs is not None and [(d.kind, d.name) for d in defs] == [
        (defs[0].kind, "")] and defs[0].kind in ("arrow_function", "function_expression")
    with pytest.raises(IndexError):
        oracle.extract(source, "javascript", "strict")


def test_every_language_is_searched_by_a_walk() -> None:
    """Whole trees are searched by comparing node kinds, the query running only where a
    pattern with constraints is rooted: a query file with a pattern of another shape would
    silently fall back to running the query over every node (a third of the parse)."""
    native = _core.DefinitionExtractor()
    for lang in GRAMMARS:
        assert register(native, lang), lang
        for preset in PRESETS:
            assert native.walks(lang, preset), (lang, preset)
