"""Tree-sitter definition extraction: fixtures in 15 languages, byte exactness, parity symbols."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, PARITY, requires_parity, requires_shared
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.symbols import (
    Definition,
    extract,
    format_symbols,
    grammar_versions,
    language_for_path,
    resolve_name,
    symbols_json,
)

SYM = FIXTURES / "symbols"


def _read(name: str) -> bytes:
    return (SYM / name).read_bytes()


def _table(defs: list[Definition]) -> list[tuple[str, str, int, int]]:
    return [(d.kind, d.qualified_name, d.start_line, d.end_line) for d in defs]


# ---------------------------------------------------------------------------------------------
# Languages and paths.

@pytest.mark.parametrize(("path", "lang"), [
    ("a/b.py", "python"), ("x.JS", "javascript"), ("x.jsx", "javascript"),
    ("x.mjs", "javascript"), ("x.cjs", "javascript"), ("x.ts", "typescript"),
    ("x.tsx", "tsx"), ("X.java", "java"), ("x.go", "go"), ("x.rs", "rust"), ("x.c", "c"),
    ("include/x.h", "c"), ("x.cpp", "cpp"), ("x.cc", "cpp"), ("x.cxx", "cpp"),
    ("x.hpp", "cpp"), ("x.hh", "cpp"), ("x.cs", "c_sharp"), ("x.php", "php"),
    ("x.rb", "ruby"), ("x.kt", "kotlin"), ("x.kts", "kotlin"), ("x.scala", "scala"),
    ("x.swift", "swift"),
    ("Makefile", None), ("config.json", None), ("README.md", None), ("x.pyc", None),
])
def test_language_for_path(path: str, lang: str | None) -> None:
    assert language_for_path(path) == lang


@pytest.mark.parametrize("ext", [".py", ".js", ".ts", ".tsx", ".java", ".go", ".rs", ".c",
                                 ".cpp", ".cs", ".php", ".rb", ".kt", ".scala", ".swift"])
@pytest.mark.parametrize("preset", ["strict", "contextbench"])
def test_every_grammar_loads_and_empty_file_has_no_definitions(ext: str, preset: str) -> None:
    assert extract(b"", f"empty{ext}", preset=preset) == []


def test_unknown_language_is_none_not_empty() -> None:
    assert extract(b"all: build\n", "Makefile") is None
    assert extract(b'{"a": 1}', "config.json", preset="contextbench") is None
    assert extract(b"def f(): pass\n", "x.py", lang="cobol") is None
    # `lang` overrides the extension; aliases are accepted.
    defs = extract(b"def f(): pass\n", "script", lang="py")
    assert defs is not None and [d.name for d in defs] == ["f"]


def test_contextbench_recognises_only_the_reference_extensions() -> None:
    src = b"function f() {}\n"
    assert extract(src, "m.mjs", preset="contextbench") is None
    assert [d.kind for d in extract(src, "m.mjs") or []] == ["function_declaration"]
    assert [d.kind for d in extract(src, "m.js", preset="contextbench") or []] == [
        "function_declaration"]


def test_unknown_preset_is_an_error() -> None:
    with pytest.raises(ValueError, match="preset"):
        extract(b"", "x.py", preset="loose")


# ---------------------------------------------------------------------------------------------
# Fixtures, preset strict: kinds, qualified names and lines read off the fixture files by hand;
# each definition's bytes must start with the given text and end with the given text.

STRICT = {
    "sample.py": [
        ("class_definition", "Account", 6, 20, "class Account:", 'return "meta"'),
        ("function_definition", "Account.__init__", 9, 10, "def __init__", "= owner"),
        ("function_definition", "Account.label", 13, 16, "def label", "fmt(self.owner)"),
        ("function_definition", "Account.label.fmt", 14, 15, "def fmt(x)", 'f"<{x}>"'),
        ("class_definition", "Account.Meta", 18, 20, "class Meta:", 'return "meta"'),
        ("function_definition", "Account.Meta.describe", 19, 20, "def describe", '"meta"'),
        ("function_definition", "fetch", 23, 24, "async def fetch", "basename(url)"),
        ("type_alias_statement", "Pair", 27, 27, "type Pair", "tuple[int, int]"),
    ],
    "sample.js": [
        ("function_declaration", "sleep", 2, 4, "function sleep", "ms));\n}"),
        ("class_declaration", "Queue", 6, 14, "class Queue", "(item);\n  }\n}"),
        ("method_definition", "Queue.constructor", 7, 9, "constructor()", "= [];\n  }"),
        ("method_definition", "Queue.push", 11, 13, "push(item)", "(item);\n  }"),
        ("arrow_function", "double", 16, 16, "(x) => x * 2", "x * 2"),
        ("function_expression", "triple", 17, 19, "function (x)", "x * 3;\n}"),
        ("arrow_function", "get", 21, 21, "() => 1", "=> 1"),
    ],
    "sample.ts": [
        ("interface_declaration", "Shape", 1, 3, "interface Shape", "number;\n}"),
        ("method_signature", "Shape.area", 2, 2, "area(): number", "number"),
        ("enum_declaration", "Color", 5, 5, "enum Color", "Green }"),
        ("type_alias_declaration", "Id", 7, 7, "type Id", "string;"),
        ("abstract_class_declaration", "Base", 9, 14, "abstract class Base", "}\n}"),
        ("abstract_method_signature", "Base.area", 10, 10, "abstract area()", "number"),
        ("method_definition", "Base.describe", 11, 13, "describe()", "`;\n  }"),
        ("arrow_function", "square", 16, 16, "(s: number)", "s * s"),
        ("internal_module", "Geometry", 18, 22, "namespace Geometry", "}\n}"),
        ("function_declaration", "Geometry.origin", 19, 21, "function origin", "0;\n  }"),
    ],
    "sample.tsx": [
        ("interface_declaration", "Props", 3, 5, "interface Props", "string;\n}"),
        ("function_declaration", "Hello", 7, 9, "function Hello", "</div>;\n}"),
        ("arrow_function", "Bye", 11, 11, "(props: Props)", "</span>"),
    ],
    "Sample.java": [
        ("class_declaration", "Sample", 3, 21, "public class Sample", "}\n}"),
        ("interface_declaration", "Sample.Visitor", 4, 6, "public interface Visitor",
         "x);\n    }"),
        ("method_declaration", "Sample.Visitor.visit", 5, 5, "void visit", "int x);"),
        ("enum_declaration", "Sample.Kind", 8, 8, "public enum Kind", "A, B }"),
        ("record_declaration", "Sample.Point", 10, 10, "public record Point", "y) {}"),
        ("constructor_declaration", "Sample.Sample", 14, 16, "public Sample(int size)",
         "= size;\n    }"),
        ("method_declaration", "Sample.size", 18, 20, "public int size()", "size;\n    }"),
    ],
    "sample.go": [
        ("type_spec", "Store", 4, 6, "Store struct", "string\n\t}"),
        ("type_alias", "ID", 7, 7, "ID = string", "string"),
        ("type_spec", "Getter", 10, 12, "Getter interface", "string\n}"),
        ("method_elem", "Getter.Get", 11, 11, "Get(key string)", ") string"),
        ("function_declaration", "New", 14, 16, "func New()", "{}}\n}"),
        ("method_declaration", "Store.Get", 18, 20, "func (s *Store) Get", "[key]\n}"),
    ],
    "sample.rs": [
        ("struct_item", "Vec2", 1, 3, "pub struct Vec2", "f64,\n}"),
        ("enum_item", "Shape", 5, 7, "pub enum Shape", "(f64),\n}"),
        ("trait_item", "Norm", 9, 11, "pub trait Norm", "f64;\n}"),
        ("function_signature_item", "Norm.norm", 10, 10, "fn norm(&self)", "-> f64;"),
        ("impl_item", "Vec2", 13, 17, "impl Norm for Vec2", "}\n}"),
        ("function_item", "Vec2.norm", 14, 16, "fn norm(&self)", "abs()\n    }"),
        ("mod_item", "util", 19, 23, "mod util", "}\n}"),
        ("function_item", "util.helper", 20, 22, "pub fn helper", "1\n    }"),
        ("type_item", "Meters", 25, 25, "type Meters", "= f64;"),
    ],
    "sample.c": [
        ("struct_specifier", "matrix", 3, 5, "struct matrix {", "rows;\n}"),
        ("type_definition", "point", 7, 9, "typedef struct", "} point;"),
        ("struct_specifier", "", 7, 9, "struct {", "int x;\n}"),
        ("enum_specifier", "color", 11, 11, "enum color", "GREEN }"),
        ("function_definition", "matrix_new", 13, 17, "struct matrix *matrix_new",
         "return m;\n}"),
        ("function_definition", "first", 19, 19, "int *(first)", "return xs; }"),
    ],
    "sample.cpp": [
        ("namespace_definition", "stats", 3, 17, "namespace stats", "}"),
        ("class_specifier", "stats.Histogram", 5, 11, "class Histogram", "= 0;\n}"),
        ("field_declaration", "stats.Histogram.add", 7, 7, "void add(int v);", "v);"),
        ("function_definition", "stats.Histogram.size", 8, 8, "int size() const", "n; }"),
        ("function_definition", "stats.Histogram.add", 13, 15, "void Histogram::add",
         "+= v;\n}"),
        ("alias_declaration", "Bins", 19, 19, "using Bins", "<int>;"),
    ],
    "sample.cs": [
        ("namespace_declaration", "Bank", 1, 21, "namespace Bank", "}\n}"),
        ("interface_declaration", "Bank.ILedger", 3, 6, "public interface ILedger",
         "amount);\n    }"),
        ("method_declaration", "Bank.ILedger.Post", 5, 5, "void Post", "amount);"),
        ("class_declaration", "Bank.Ledger", 8, 18, "public class Ledger", "set; }\n    }"),
        ("constructor_declaration", "Bank.Ledger.Ledger", 10, 10, "public Ledger()", "{ }"),
        ("method_declaration", "Bank.Ledger.Post", 12, 15, "public void Post",
         "amount;\n        }"),
        ("enum_declaration", "Bank.Kind", 20, 20, "public enum Kind", "Credit }"),
    ],
    "sample.php": [
        ("interface_declaration", "Greeter", 3, 6, "interface Greeter", "string;\n}"),
        ("method_declaration", "Greeter.greet", 5, 5, "public function greet", "string;"),
        ("class_declaration", "Hello", 8, 14, "class Hello", "}\n}"),
        ("method_declaration", "Hello.greet", 10, 13, "public function greet",
         "$name;\n    }"),
        ("function_definition", "shout", 16, 19, "function shout", "($s);\n}"),
    ],
    "sample.rb": [
        ("module", "Bank", 1, 11, "module Bank", "end\nend"),
        ("class", "Bank.Account", 2, 10, "class Account", "end\n  end"),
        ("method", "Bank.Account.initialize", 3, 5, "def initialize", "owner\n    end"),
        ("singleton_method", "Bank.Account.open", 7, 9, "def self.open", "(owner)\n    end"),
        ("method", "top_level", 13, 15, "def top_level", "1\nend"),
    ],
    "sample.kt": [
        ("class_declaration", "Account", 3, 11, "class Account", "}\n}"),
        ("function_declaration", "Account.label", 4, 6, "fun label()", '"\n    }'),
        ("companion_object", "", 8, 10, "companion object", "}"),
        ("function_declaration", "Account.open", 9, 9, "fun open", "Account(owner)"),
        ("object_declaration", "Registry", 13, 15, "object Registry", "0\n}"),
        ("function_declaration", "Registry.size", 14, 14, "fun size()", "= 0"),
        ("type_alias", "Owner", 17, 17, "typealias Owner", "String"),
    ],
    "sample.scala": [
        ("trait_definition", "Shape", 3, 5, "trait Shape", "Double\n}"),
        ("function_declaration", "Shape.area", 4, 4, "def area()", "Double"),
        ("class_definition", "Circle", 7, 9, "class Circle", "r * r\n}"),
        ("function_definition", "Circle.area", 8, 8, "def area()", "r * r"),
        ("object_definition", "Circle", 11, 13, "object Circle", "(1.0)\n}"),
        ("function_definition", "Circle.unit", 12, 12, "def unit", "(1.0)"),
    ],
    "sample.swift": [
        ("protocol_declaration", "Shape", 1, 3, "protocol Shape", "Double\n}"),
        ("protocol_function_declaration", "Shape.area", 2, 2, "func area()", "Double"),
        ("class_declaration", "Circle", 5, 15, "struct Circle", "}\n}"),
        ("init_declaration", "Circle.init", 8, 10, "init(r: Double)", "= r\n    }"),
        ("function_declaration", "Circle.area", 12, 14, "func area()", "r * r\n    }"),
        ("typealias_declaration", "Radius", 17, 17, "typealias Radius", "Double"),
    ],
}


@pytest.mark.parametrize("name", sorted(STRICT))
def test_fixture_definitions_strict(name: str) -> None:
    data = _read(name)
    defs = extract(data, name)
    assert defs is not None
    expected = STRICT[name]
    assert _table(defs) == [row[:4] for row in expected]
    for d, (_k, qual, _s, _e, head, tail) in zip(defs, expected, strict=True):
        text = data[d.start_byte:d.end_byte]
        assert text.startswith(head.encode()), (qual, text[:40])
        assert text.endswith(tail.encode()), (qual, text[-40:])
        # lines and bytes agree: the definition starts on its start line ...
        assert data.count(b"\n", 0, d.start_byte) + 1 == d.start_line
        # ... and its last byte is on its end line
        assert data.count(b"\n", 0, d.end_byte - 1) + 1 == d.end_line
        assert d.name == (qual.rsplit(".", 1)[-1] if qual else "")


def test_fixture_languages_cover_at_least_eight() -> None:
    langs = {language_for_path(n) for n in STRICT}
    assert len(langs) >= 8


def test_fixture_python_exact_bytes() -> None:
    data = _read("sample.py")
    defs = extract(data, "sample.py")
    assert defs is not None
    account = defs[0]
    # counted by hand: a 49-byte docstring line, "\n", "import os\n", "\n", "\n" -> 62
    assert (account.start_byte, account.end_byte) == (62, 347)
    assert account.end_byte == data.index(b'"meta"') + len(b'"meta"')
    pair = defs[-1]
    assert pair.end_byte == len(data) - len(b"\nhandler = lambda x: x\n")


# Preset contextbench: the reference's kinds only, every node of them, heuristic names.
CONTEXTBENCH = {
    "sample.py": [("class_definition", "Account"), ("function_definition", "__init__"),
                  ("function_definition", "label"), ("function_definition", "fmt"),
                  ("class_definition", "Meta"), ("function_definition", "describe"),
                  ("function_definition", "fetch")],
    # anonymous `(resolve) => ...` counts; `double`'s heuristic name is its parameter `x`;
    # the function expression `triple` is not a contextbench kind.
    "sample.js": [("function_declaration", "sleep"), ("arrow_function", "resolve"),
                  ("class_declaration", "Queue"), ("method_definition", "constructor"),
                  ("method_definition", "push"), ("arrow_function", "x"),
                  ("arrow_function", "")],
    "sample.ts": [("interface_declaration", "Shape"), ("method_definition", "describe"),
                  ("function_declaration", "origin")],
    "sample.go": [("type_declaration", "items"), ("type_declaration", "key"),
                  ("function_declaration", "New"), ("method_declaration", "Get")],
    # the impl is named after the first identifier inside it: the method `norm`
    "sample.rs": [("struct_item", "Vec2"), ("trait_item", "Norm"), ("impl_item", "norm"),
                  ("function_item", "norm"), ("function_item", "helper")],
    # struct specifiers naming a type in a signature count; the anonymous struct is named
    # after its first field
    "sample.c": [("struct_specifier", "matrix"), ("struct_specifier", "x"),
                 ("struct_specifier", "matrix"), ("function_definition", "matrix_new"),
                 ("struct_specifier", "matrix"), ("struct_specifier", "matrix"),
                 ("function_definition", "first")],
    "sample.cpp": [("class_specifier", "Histogram"), ("function_definition", "size"),
                   ("function_definition", "add")],
    "Sample.java": [("class_declaration", "Sample"), ("interface_declaration", "Visitor"),
                    ("method_declaration", "visit"), ("constructor_declaration", "Sample"),
                    ("method_declaration", "size")],
    "sample.rb": [("module", "Bank"), ("class", "Account"), ("method", "initialize"),
                  ("method", "top_level")],
}


@pytest.mark.parametrize("name", sorted(CONTEXTBENCH))
def test_fixture_definitions_contextbench(name: str) -> None:
    defs = extract(_read(name), name, preset="contextbench")
    assert defs is not None
    assert [(d.kind, d.name) for d in defs] == CONTEXTBENCH[name]


def test_contextbench_c_signature_struct_ranges() -> None:
    data = _read("sample.c")
    defs = extract(data, "sample.c", preset="contextbench")
    assert defs is not None
    sig = [d for d in defs if d.kind == "struct_specifier" and d.start_line == 13]
    assert [(d.start_byte, d.end_byte) for d in sig] == [(121, 134)]
    assert data[121:134] == b"struct matrix"


# ---------------------------------------------------------------------------------------------
# Byte exactness on CRLF and non-ASCII input, broken input.

def test_crlf_and_non_ascii_offsets_are_bytes() -> None:
    src = "# café\r\ndef naïve(x):\r\n    return 'é'\r\n\r\nclass Ünï:\r\n    pass\r\n".encode()
    defs = extract(src, "m.py")
    assert defs is not None
    assert [(d.name, d.start_line, d.end_line) for d in defs] == [("naïve", 2, 3), ("Ünï", 5, 6)]
    # "# café\r\n" is 9 bytes (é is two); the def ends before "\r\n" of line 3
    assert (defs[0].start_byte, defs[0].end_byte) == (9, 40)
    assert src[9:40] == "def naïve(x):\r\n    return 'é'".encode()
    assert src[defs[1].start_byte:defs[1].end_byte] == "class Ünï:\r\n    pass".encode()


@requires_parity
def test_crlf_parity_file() -> None:
    data = (PARITY / "repos/js_queue/src/retry.js").read_bytes()
    assert b"\r\n" in data
    defs = extract(data, "src/retry.js", preset="contextbench")
    assert defs is not None
    last = defs[-1]
    assert (last.kind, last.qualified_name, last.name) == ("arrow_function", "isRetryable", "err")
    assert data[last.start_byte:last.end_byte].startswith(b"(err) =>")
    assert last.start_line == 25 == data.count(b"\n", 0, last.start_byte) + 1


def test_broken_source_yields_recovered_definitions() -> None:
    src = b"class A:\n    def ok(self):\n        return 1\n\n    def broken(self:\n"
    defs = extract(src, "b.py")
    assert defs is not None
    assert ("function_definition", "A.ok", 2, 3) in _table(defs)
    js = b"function a() {\n  return 1;\n}\nclass B {\n  m() { if ( }\n}\nfunction c() {}\n"
    js_defs = extract(js, "b.js")
    assert js_defs is not None
    assert {d.qualified_name for d in js_defs} >= {"a", "c", "B"}


def test_invalid_utf8_does_not_crash() -> None:
    src = b"def f():\n    return '\xff\xfe'\n\ndef g():\n    pass\n"
    defs = extract(src, "bad.py")
    assert defs is not None
    assert [(d.name, d.start_byte) for d in defs] == [("f", 0), ("g", src.index(b"def g"))]


@pytest.mark.parametrize("preset", ["strict", "contextbench"])
def test_lines_are_the_lines_of_the_first_and_last_byte(preset: str) -> None:
    """start_line/end_line hold the definition's first and last byte, in every fixture.

    The project's own fixtures are always checked, each language's file yielding definitions; the
    parity repositories of ``../shared`` add over a hundred more where they are present (a fresh
    clone has no ``../shared``, and the bar must not depend on it).
    """
    own = sorted(SYM.iterdir())
    repos = PARITY / "repos"
    shared = sorted(p for p in repos.rglob("*") if p.is_file()) if repos.is_dir() else []
    checked: dict[Path, int] = {}
    for f in own + shared:
        data = f.read_bytes()
        checked[f] = 0
        for d in extract(data, f.name, preset=preset) or []:
            assert 0 <= d.start_byte < d.end_byte <= len(data)
            assert d.start_line == data.count(b"\n", 0, d.start_byte) + 1, (f, d)
            assert d.end_line == data.count(b"\n", 0, d.end_byte - 1) + 1, (f, d)
            checked[f] += 1
    assert [f.name for f in own if checked[f] == 0] == []
    if shared:
        assert sum(checked[f] for f in shared) > 100


# ---------------------------------------------------------------------------------------------
# Name resolution.

def test_resolve_name_qualified() -> None:
    defs = extract(_read("sample.py"), "sample.py") or []
    assert [d.qualified_name for d in resolve_name(defs, "Meta.describe")] == [
        "Account.Meta.describe"]
    assert [d.qualified_name for d in resolve_name(defs, "Account.Meta.describe")] == [
        "Account.Meta.describe"]
    assert resolve_name(defs, "eta.describe") == []  # components, not characters
    assert [d.qualified_name for d in resolve_name(defs, "fmt")] == ["Account.label.fmt"]
    assert resolve_name(defs, "nope") == [] and resolve_name(defs, "  ") == []
    cpp = extract(_read("sample.cpp"), "sample.cpp") or []
    # `::` is a separator; both the declaration and the out-of-line definition match
    assert [(d.kind, d.start_line) for d in resolve_name(cpp, "Histogram::add")] == [
        ("field_declaration", 7), ("function_definition", 13)]
    rs = extract(_read("sample.rs"), "sample.rs") or []
    assert [d.kind for d in resolve_name(rs, "Vec2.norm")] == ["function_item"]
    assert [d.kind for d in resolve_name(rs, "Vec2")] == ["struct_item", "impl_item"]


def test_resolve_name_contextbench_rule() -> None:
    rs = extract(_read("sample.rs"), "sample.rs", preset="contextbench") or []
    assert [d.kind for d in resolve_name(rs, "norm", style="contextbench")] == [
        "impl_item", "function_item"]
    # the part after the last dot is tried when the whole name matches nothing
    assert [d.kind for d in resolve_name(rs, "Vec2.norm", style="contextbench")] == [
        "impl_item", "function_item"]
    cpp = extract(_read("sample.cpp"), "sample.cpp", preset="contextbench") or []
    assert resolve_name(cpp, "Histogram::add", style="contextbench") == []
    assert [d.start_line for d in resolve_name(cpp, "add", style="contextbench")] == [13]
    with pytest.raises(ValueError):
        resolve_name(cpp, "add", style="fuzzy")


# ---------------------------------------------------------------------------------------------
# Extractor cache, CLI helpers, versions.

def test_symbol_extractor_caches_and_counts() -> None:
    ex = SymbolExtractor()
    data = _read("sample.go")
    first = ex.get("blob1", data, "store/sample.go")
    again = ex.get("blob1", data, "other/path.go")
    assert first is again and first is not None and len(first) == 6
    cb = ex.get("blob1", data, "store/sample.go", preset="contextbench")
    assert cb is not None and len(cb) == 4
    assert ex.get("blob2", b"x", "README.md") is None
    assert ex.stats == {"parsed": 2, "cached": 1, "unknown_language": 1, "parse_failed": 0}


def test_symbol_extractor_parses_once_across_threads() -> None:
    ex = SymbolExtractor()
    data = _read("sample.py")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: ex.get("b", data, "m.py"), range(16)))
    assert all(r is results[0] for r in results)
    assert ex.stats["parsed"] == 1 and ex.stats["cached"] == 15


def test_format_symbols_and_json() -> None:
    defs = extract(_read("sample.rb"), "sample.rb") or []
    table = format_symbols(defs)
    lines = table.splitlines()
    assert lines[0].split() == ["lines", "bytes", "kind", "qualified_name", "name"]
    assert lines[1].split() == ["1-11", "0-143", "module", "Bank", "Bank"]
    assert len(lines) == 1 + len(defs)
    objs = symbols_json(defs)
    assert json.loads(json.dumps(objs))[2] == {
        "kind": "method", "name": "initialize", "qualified_name": "Bank.Account.initialize",
        "start_line": 3, "end_line": 5, "start_byte": 32, "end_byte": 82}
    assert [line.split() for line in format_symbols([]).splitlines()] == [lines[0].split()]


def test_grammar_versions() -> None:
    versions = grammar_versions()
    assert re.fullmatch(r"\d+", versions["tree-sitter-abi"])
    assert re.fullmatch(r"\d+\.\d+.*", versions["tree-sitter-python"])
    assert "tree-sitter-python" in versions and "tree-sitter-swift" in versions


# ---------------------------------------------------------------------------------------------
# Parity: the reference's symbol sets for the toy repositories (expected/details.jsonl).

def _parity_rows() -> tuple[dict[str, dict], list[dict]]:
    gold = {}
    for line in (PARITY / "gold.jsonl").read_text().splitlines():
        row = json.loads(line)
        gold[row["instance_id"]] = row
    details = [json.loads(x) for x in (PARITY / "expected/details.jsonl").read_text().splitlines()]
    return gold, details


def _repo_dir(gold_row: dict) -> Path:
    return PARITY / "repos" / gold_row["repo"].split("/", 1)[1]


def _parse_symbol(s: str) -> tuple[str, str, int, int]:
    path, rest = s.rsplit(":", 1)
    kind, rng = rest.split("@")
    start, end = rng.split("-")
    return path, kind, int(start), int(end)


def _cb_defs(repo: Path, path: str) -> set[tuple[str, str, int, int]]:
    defs = extract((repo / path).read_bytes(), path, preset="contextbench") or []
    return {(path, d.kind, d.start_byte, d.end_byte) for d in defs}


@requires_parity
def test_parity_every_listed_symbol_is_found() -> None:
    gold, details = _parity_rows()
    checked = 0
    for row in details:
        repo = _repo_dir(gold[row["instance_id"]])
        for key in ("gold_symbols", "pred_symbols", "hit_symbols"):
            for sym in row[key]:
                path = _parse_symbol(sym)[0]
                assert _parse_symbol(sym) in _cb_defs(repo, path), (row["pred_file"], sym)
                checked += 1
    assert checked > 500


def _line_to_bytes(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """Inclusive byte range of lines start..end as the reference computes it."""
    if not data:
        return (0, 0)
    offsets = [0] + [m.end() for m in re.finditer(b"\n", data)]
    start = max(1, start)
    end = max(start, end)
    if start - 1 >= len(offsets):
        return None
    first = offsets[start - 1]
    last = offsets[end] - 1 if end < len(offsets) else len(data) - 1
    return first, max(first, last)


@requires_parity
def test_parity_gold_symbol_sets_are_exact() -> None:
    """Every definition overlapping a gold range, and no other, as the reference listed."""
    gold, details = _parity_rows()
    seen: set[str] = set()
    for row in details:
        iid = row["instance_id"]
        if iid in seen:
            continue
        seen.add(iid)
        g = gold[iid]
        repo = _repo_dir(g)
        got: set[tuple[str, str, int, int]] = set()
        for item in g["gold_context"]:
            f = repo / item["file"]
            if not f.is_file():
                continue
            span = _line_to_bytes(f.read_bytes(), item["start_line"], item["end_line"])
            if span is None:
                continue
            for d in _cb_defs(repo, item["file"]):
                # the reference's overlap test, with its exclusive end used as inclusive
                if not (d[3] < span[0] or d[2] > span[1]):
                    got.add(d)
        expected = {_parse_symbol(s) for s in row["gold_symbols"]}
        assert got == expected, iid
    assert len(seen) == 12


def _agentless_names(traj: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, items in (traj.get("4_related_elements") or {}).items():
        names = []
        for block in items:
            for line in block.splitlines():
                m = re.match(r"\s*(?:function|class|variable)\s*:\s*(.+)", line)
                if m:
                    names.append(m.group(1).strip())
        out[path] = names
    return out


@requires_parity
def test_parity_symbols_resolved_by_name() -> None:
    """Rows whose final context names symbols: resolution with the reference's rule."""
    gold, details = _parity_rows()
    cases = 0
    for row in details:
        pred_file = PARITY / row["pred_file"]
        if pred_file.name.endswith("_traj.json"):
            names = _agentless_names(json.loads(pred_file.read_text()))
        elif pred_file.name == "pred.json":
            names = json.loads(pred_file.read_text())["traj_data"].get("pred_symbols") or {}
        else:
            continue
        if not names:
            continue
        repo = _repo_dir(gold[row["instance_id"]])
        got: set[tuple[str, str, int, int]] = set()
        for path, syms in names.items():
            if not (repo / path).is_file():
                continue
            defs = extract((repo / path).read_bytes(), path, preset="contextbench") or []
            for sym in syms:
                for d in resolve_name(defs, sym, style="contextbench"):
                    got.add((path, d.kind, d.start_byte, d.end_byte))
        assert got == {_parse_symbol(s) for s in row["pred_symbols"]}, row["pred_file"]
        cases += 1
    assert cases == 8


# ---------------------------------------------------------------------------------------------
# Real code: ContextBench gold snippets (`content` lines carry a "N\t" prefix, which is
# stripped here to get the source back; indentation was already lost in the data).

def _contextbench_item(instance_id: str, suffix: str) -> dict:
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(CORPUS / "contextbench/contextbench_verified_test.parquet")
    for row in table.to_pylist():
        if row["instance_id"] == instance_id:
            for item in json.loads(row["gold_context"]):
                if item["file"].endswith(suffix) and item["start_line"] == 1:
                    return item
    raise AssertionError(f"{instance_id}: no whole-file item for {suffix}")


def _unnumbered(content: str) -> bytes:
    return re.sub(r"(?m)^\d+\t", "", content).encode()


@requires_shared
def test_real_rust_file_from_contextbench() -> None:
    item = _contextbench_item("Multi-SWE-Bench__rust__maintenance__bugfix__1b6e3d94", "vec.rs")
    src = _unnumbered(item["content"])
    defs = extract(src, item["file"]) or []
    by_line = {(d.start_line, d.kind): d for d in defs}
    # line 51: `impl<T: Send> ParallelIterator for IntoIter<T> {` with drive_unindexed at 54
    assert by_line[(51, "impl_item")].qualified_name == "IntoIter"
    assert by_line[(54, "function_item")].qualified_name == "IntoIter.drive_unindexed"
    # line 87: `impl<'data, T: Send> ParallelDrainRange<usize> for &'data mut Vec<T> {`
    assert by_line[(87, "impl_item")].qualified_name == "Vec"
    assert by_line[(91, "function_item")].qualified_name == "Vec.par_drain"
    # line 152: `impl<'data, T: Send> Drop for Drain<'data, T> {`, `fn drop` on 153
    assert by_line[(153, "function_item")].qualified_name == "Drain.drop"
    assert by_line[(177, "struct_item")].qualified_name == "DrainProducer"
    d = by_line[(38, "struct_item")]
    assert src[d.start_byte:d.end_byte] == b"pub struct IntoIter<T: Send> {\nvec: Vec<T>,\n}"


@requires_shared
def test_real_go_file_from_contextbench() -> None:
    item = _contextbench_item("Multi-SWE-Bench__go__maintenance__bugfix__4d9664f3", "enable.go")
    src = _unnumbered(item["content"])
    defs = extract(src, item["file"]) or []
    assert _table(defs) == [("type_spec", "EnableOptions", 16, 23),
                            ("function_declaration", "NewCmdEnable", 25, 56),
                            ("function_declaration", "runEnable", 58, 93)]
    cb = extract(src, item["file"], preset="contextbench") or []
    assert [d.kind for d in cb][:1] == ["type_declaration"]  # `type EnableOptions struct`
    assert cb[0].start_line == 16 and src[cb[0].start_byte:].startswith(b"type EnableOptions")


@requires_shared
def test_every_real_snippet_extracts_without_crashing() -> None:
    """All 50 instances' gold snippets, raw (numbered, so mostly broken) and unnumbered."""
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(CORPUS / "contextbench/contextbench_verified_test.parquet")
    parsed = found = 0
    for row in table.to_pylist():
        for item in json.loads(row["gold_context"]):
            if language_for_path(item["file"]) is None:
                continue
            for src in (item["content"].encode(), _unnumbered(item["content"])):
                for preset in ("strict", "contextbench"):
                    defs = extract(src, item["file"], preset=preset)
                    assert defs is not None, item["file"]
                    for d in defs:
                        assert 0 <= d.start_byte < d.end_byte <= len(src)
                        assert d.start_line <= d.end_line
                    parsed += 1
                    found += len(defs)
    assert parsed > 400 and found > 1000
