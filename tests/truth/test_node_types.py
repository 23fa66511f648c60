"""The node kinds a walk may skip: the shipped ``.kinds`` files, how they are read, and that
the walk they prune finds what the whole walk finds.

(The pruned walk is also what ``test_definitions_oracle.py`` compares with the independent
py-tree-sitter oracle, on every source file and on random edits of them.)
"""

from __future__ import annotations

import importlib.resources

import pytest

from conftest import FIXTURES, SHARED
from ctxeval import _core
from ctxeval.truth import installed, node_types
from ctxeval.truth.grammars import GRAMMARS, PRESETS, register, resolve_lang

NODE_TYPES = [
    {"type": "_expression", "named": True,
     "subtypes": [{"type": "call", "named": True}, {"type": "_primary", "named": True}]},
    {"type": "_primary", "named": True, "subtypes": [{"type": "identifier", "named": True}]},
    {"type": "module", "named": True,
     "children": {"multiple": True, "required": False,
                  "types": [{"type": "function", "named": True},
                            {"type": "_expression", "named": True}]}},
    {"type": "function", "named": True,
     "fields": {"name": {"multiple": False, "required": True,
                         "types": [{"type": "identifier", "named": True}]},
                "body": {"multiple": False, "required": True,
                         "types": [{"type": "module", "named": True}, {"type": "{",
                                                                       "named": False}]}}},
    {"type": "call", "named": True,
     "children": {"multiple": True, "required": False,
                  "types": [{"type": "_expression", "named": True}]}},
    {"type": "identifier", "named": True},
    {"type": "comment", "named": True, "extra": True},
    {"type": "{", "named": False},
]


def test_compact_keeps_named_children_supertypes_and_extras() -> None:
    got = node_types.compact(NODE_TYPES, {"extras": [{"type": "SYMBOL", "name": "doc"},
                                                     {"type": "PATTERN", "value": "\\s"}]})
    assert got == {
        "kinds": {"module": ["_expression", "function"], "function": ["identifier", "module"],
                  "call": ["_expression"], "identifier": [], "comment": []},
        "supertypes": {"_expression": ["_primary", "call"], "_primary": ["identifier"]},
        "extras": ["comment", "doc"],
    }
    kinds, extras = node_types.resolved(got)
    assert dict(kinds)["module"] == ["call", "function", "identifier"]  # supertypes, nested
    assert dict(kinds)["call"] == ["call", "identifier"]
    assert extras == ["comment", "doc"]


def test_aliases_node_types_names_but_does_not_list_get_their_rules_children() -> None:
    """An alias of a listed kind holds what it holds; of a supertype, the supertype's kinds
    (the concrete node sits inside: Python's ``as_pattern_target``); of a token, nothing; of
    anything else it stays unlisted (the core then takes it to hold anything)."""
    def child(name: str) -> dict:
        return {"type": name, "named": True}

    types = [*NODE_TYPES, {"type": "holder", "named": True, "children": {
        "multiple": True, "required": False,
        "types": [child("renamed_call"), child("target"), child("word"), child("opaque")]}}]
    rules = {"holder": {"type": "SEQ", "members": [
        {"type": "ALIAS", "named": True, "value": "renamed_call",
         "content": {"type": "SYMBOL", "name": "call"}},
        {"type": "ALIAS", "named": True, "value": "target",
         "content": {"type": "SYMBOL", "name": "_expression"}},
        {"type": "ALIAS", "named": True, "value": "word",
         "content": {"type": "PATTERN", "value": "[a-z]+"}},
        {"type": "ALIAS", "named": True, "value": "opaque",
         "content": {"type": "SEQ", "members": []}},
        {"type": "ALIAS", "named": False, "value": "ignored",
         "content": {"type": "SYMBOL", "name": "call"}}]}}
    got = node_types.compact(types, {"extras": [], "rules": rules})["kinds"]
    assert got["renamed_call"] == ["_expression"]  # what a call holds
    assert got["target"] == ["_expression"]  # the concrete expression
    assert got["word"] == []
    assert "opaque" not in got and "ignored" not in got
    kinds = dict(node_types.resolved({"kinds": got, "supertypes": {
        "_expression": ["_primary", "call"], "_primary": ["identifier"]}, "extras": []})[0])
    assert kinds["target"] == ["call", "identifier"]


def test_a_kinds_file_reads_back_as_written() -> None:
    entry = node_types.compact(NODE_TYPES, {"extras": []})
    text = node_types.render("toy", "tree-sitter-toy", "1.2.3", entry)
    assert "kind identifier =\n" in text  # a leaf
    back = node_types.parse(text)
    assert back == {"package": "tree-sitter-toy", "version": "1.2.3", **entry}
    with pytest.raises(ValueError, match="not a line"):
        node_types.parse(text + "what is this\n")


def test_the_command_writes_a_kinds_file_per_language(tmp_path, capsys) -> None:
    import json

    src = tmp_path / "src"
    src.mkdir()
    (src / "node-types.json").write_text(json.dumps(NODE_TYPES))
    (src / "grammar.json").write_text(json.dumps({"extras": [], "rules": {}}))
    out = tmp_path / "out"
    out.mkdir()
    assert node_types.main([str(out), f"toy:tree-sitter-toy:1.2.3:{src}"]) == 0
    assert capsys.readouterr().out == "toy.kinds\n"
    back = node_types.parse((out / "toy.kinds").read_text())
    assert back["package"] == "tree-sitter-toy" and back["version"] == "1.2.3"
    assert back["kinds"] == node_types.compact(NODE_TYPES, {"extras": []})["kinds"]
    assert node_types.main([str(out)]) == 2  # no grammar given: the usage


def _shipped() -> list[str]:
    queries = importlib.resources.files("ctxeval.truth") / "queries"
    return sorted(p.name[: -len(".kinds")] for p in queries.iterdir()
                  if p.name.endswith(".kinds"))


def test_a_kinds_file_for_every_language_of_its_grammar_package() -> None:
    assert _shipped() == sorted(GRAMMARS)
    for lang in _shipped():
        entry = node_types._entry(lang)
        assert entry is not None
        module = GRAMMARS[lang][0]
        assert installed._normal(entry["package"]) == installed._normal(module)
        assert entry["kinds"] and all(isinstance(v, list) for v in entry["kinds"].values())
        assert node_types.for_language(lang, entry["version"]) is not None
        assert node_types.for_language(lang, entry["version"] + ".post1") is None
        assert node_types.for_language(lang, None) is None


@pytest.mark.parametrize("lang", sorted(GRAMMARS))
def test_the_walk_is_pruned_where_the_installed_grammar_is_the_listed_one(lang: str) -> None:
    """Every language whose installed package is the version its file lists is walked pruned,
    but Ruby (its heredoc bodies, which may be in any node, hold code); a language of another
    version is walked whole (and would be found here)."""
    ex = _core.DefinitionExtractor(None)
    assert register(ex, lang)
    entry = node_types._entry(lang)
    assert entry is not None
    listed = installed.version(GRAMMARS[lang][0]) == entry["version"]
    for preset in PRESETS:
        assert ex.prunes(lang, preset) == (listed and lang != "ruby"), (lang, preset)
    whole = _core.DefinitionExtractor(None)
    assert register(whole, lang, prune=False)
    assert not any(whole.prunes(lang, p) for p in PRESETS)


def _sources() -> list[tuple[str, bytes]]:
    out = []
    for root in (FIXTURES, SHARED / "parity", SHARED / "corpus"):
        if root.is_dir():
            out += [(str(f), f.read_bytes()) for f in sorted(root.rglob("*"))
                    if f.is_file() and f.stat().st_size < 1 << 20
                    and any(resolve_lang(f.name, p, None) for p in PRESETS)]
    return out


def test_the_pruned_walk_finds_what_the_whole_walk_finds() -> None:
    """On every source file of the fixtures (and of ../shared when beside), and on copies of
    each with a slice cut out (syntax errors, where the walk goes into every subtree), both
    presets: the same definitions, whole or pruned."""
    pruned, whole = _core.DefinitionExtractor(None), _core.DefinitionExtractor(None)
    for lang in GRAMMARS:
        register(pruned, lang)
        register(whole, lang, prune=False)
    checked = 0
    met: set[str] = set()
    for path, data in _sources():
        cut = data[: len(data) // 3] + data[len(data) // 3 + 17:]
        for preset in PRESETS:
            lang = resolve_lang(path, preset, None)
            if lang is None:
                continue
            for src in (data, cut):
                assert pruned.extract(lang, preset, "", src) == \
                    whole.extract(lang, preset, "", src), (path, preset)
                checked += 1
            met.add(lang)
    assert checked > 60 and len(met) >= 14
    # every language met whose installed grammar is the listed version was walked pruned
    listed = {lang for lang in met if (e := node_types._entry(lang)) is not None
              and installed.version(GRAMMARS[lang][0]) == e["version"] and lang != "ruby"}
    assert all(pruned.prunes(lang, p) for lang in listed for p in PRESETS)
