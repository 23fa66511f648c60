"""Incremental re-parsing gives exactly the definitions of a fresh parse.

The edits are checked on their own (applied to the bytes they reproduce the new version, and
every point they state is where that byte is), then the definitions of incrementally parsed
versions (the native core's :class:`ctxeval._core.DefinitionExtractor`, each version of a path
re-parsed from the tree of the one before and re-using its definitions) are compared with
:func:`ctxeval.truth.symbols.extract` over random line edits of real source files in several
languages (the parity suite's toy repositories) and of hand-written ones, through chains of
versions, under both presets.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PARITY, ROOT, requires_parity
from ctxeval import _core
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.grammars import register
from ctxeval.truth.symbols import PRESETS, Definition, definitions, extract, language_for_path

# Small sources for languages the parity repositories do not cover; bodies vary so that
# line edits move definitions in and out of each other.
_HANDWRITTEN: dict[str, bytes] = {
    "lib/bank.rb": b"""module Bank
  class Account
    def initialize(owner)
      @owner = owner
    end

    def deposit(amount)
      @balance += amount
    end
  end

  def self.open(name)
    Account.new(name)
  end
end
""",
    "src/Shapes.kt": b"""package shapes

interface Shape {
    fun area(): Double
}

class Circle(val r: Double) : Shape {
    override fun area(): Double = 3.14 * r * r
    fun scale(k: Double): Circle {
        return Circle(r * k)
    }
}

object Registry {
    fun all(): List<Shape> = listOf()
}
""",
    "app/models.py": b"""class Base:
    def save(self):
        return True

    class Meta:
        ordering = ["id"]


def helper(x):
    def inner(y):
        return y + 1
    return inner(x)


class Child(Base):
    def save(self):
        return super().save()
""",
    "web/main.js": b"""const add = (a, b) => a + b;

function Queue() {
  this.items = [];
}

Queue.prototype.push = function (x) {
  this.items.push(x);
};

class Stack {
  push(x) { return x; }
  pop() {
    return null;
  }
}

export default { add, Queue, Stack };
""",
}


def _parity_sources() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    repos = PARITY / "repos"
    if not repos.is_dir():
        return out
    for p in sorted(repos.rglob("*")):
        rel = p.relative_to(repos).as_posix()
        if p.is_file() and language_for_path(rel) is not None:
            out[rel] = p.read_bytes()
    return out


_PARITY = _parity_sources()
_ALL = {**_HANDWRITTEN, **_PARITY}
_COUNTS: dict[str, int] = {}  # definitions re-used, changed ranges queried, over the chains


class Edit(NamedTuple):
    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


def compute_edits(old: bytes, new: bytes) -> list[Edit]:
    return [Edit(*e) for e in _core.line_edits(old, new)]


class Chain:
    """Versions of one file through the native core's incremental extraction: each re-parsed
    from the tree of the one before, re-using its definitions (``scratch_fraction``: past that
    share of changed bytes a version is parsed from scratch; by default never)."""

    def __init__(self, path: str, preset: str, scratch_fraction: float = float("inf")) -> None:
        lang = language_for_path(path)
        assert lang is not None
        self.path, self.lang, self.preset = path, lang, preset
        self.native = _core.DefinitionExtractor(1 << 40, scratch_fraction, 1 << 40)
        assert register(self.native, lang)

    def next(self, data: bytes) -> list[Definition] | None:
        return definitions(self.native.extract(self.lang, self.preset, self.path, data))

    def counts(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.native.stats().items()}


def _point(doc: bytes, offset: int) -> tuple[int, int]:
    row = doc.count(b"\n", 0, offset)
    return (row, offset - (doc.rfind(b"\n", 0, offset) + 1))


# ---------------------------------------------------------------------------------------------
# The edits themselves.

def _check_edits(old: bytes, new: bytes) -> None:
    doc = old
    for e in compute_edits(old, new):
        assert e.start_point == _point(doc, e.start_byte)
        assert e.old_end_point == _point(doc, e.old_end_byte)
        doc = doc[:e.start_byte] + new[e.start_byte:e.new_end_byte] + doc[e.old_end_byte:]
        assert e.new_end_point == _point(doc, e.new_end_byte)
    assert doc == new


_chunks = st.lists(st.sampled_from([b"a", b"b\n", b"\r\n", b"\n", b"x = 1\n", b"\xc3\xa9",
                                    b"def f():\n", b"  ", b"}"]), max_size=80).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(old=_chunks, new=_chunks)
def test_edits_reproduce_the_new_bytes_with_exact_points(old: bytes, new: bytes) -> None:
    _check_edits(old, new)


def test_edits_of_known_changes() -> None:
    old = b"a\nb\nc\nd\n"
    assert compute_edits(old, old) == []
    (e,) = compute_edits(old, b"a\nB\nc\nd\n")
    assert (e.start_byte, e.old_end_byte, e.new_end_byte) == (2, 4, 4)
    assert (e.start_point, e.old_end_point, e.new_end_point) == ((1, 0), (2, 0), (2, 0))
    # Two separate changes: the second is stated after the first (a line longer) is applied.
    first, second = compute_edits(old + b"e\nf\n", b"a\nbb\nc\nd\nE\nf\n")
    assert (first.start_byte, first.old_end_byte, first.new_end_byte) == (2, 4, 5)
    assert (second.start_byte, second.old_end_byte, second.new_end_byte) == (9, 11, 11)
    assert (second.start_point, second.old_end_point, second.new_end_point) == (
        (4, 0), (5, 0), (5, 0))
    # A change too far from any resynchronisation point still yields exact edits.
    far_old = b"".join(b"line %d\n" % i for i in range(200))
    far_new = b"".join(b"other %d\n" % i for i in range(50)) + far_old[far_old.index(b"line 60"):]
    _check_edits(far_old, far_new)
    assert len(compute_edits(far_old, far_new)) >= 1
    # No final newline: the end point is on the last line.
    (e,) = compute_edits(b"a\nb", b"a\nbc")
    assert (e.start_point, e.old_end_point, e.new_end_point) == ((1, 0), (1, 1), (1, 2))


# ---------------------------------------------------------------------------------------------
# Definitions of incrementally parsed versions.

@st.composite
def _versions(draw: st.DrawFn, sources: dict[str, bytes]) -> tuple[str, list[bytes]]:
    """A file and 2-4 versions of it, each a few line edits away from the one before."""
    path = draw(st.sampled_from(sorted(sources)))
    lines = sources[path].splitlines(keepends=True)
    pool = [*list(dict.fromkeys(lines)), b"\n", b"// note\n", b"# note\n", b"}\n", b"    x\n"]
    versions = [b"".join(lines)]
    for _ in range(draw(st.integers(1, 3))):
        cur = list(lines)
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(["insert", "delete", "replace", "rename", "move"]))
            i = draw(st.integers(0, max(len(cur) - 1, 0)))
            if op == "insert" or not cur:
                cur.insert(i, draw(st.sampled_from(pool)))
            elif op == "delete":
                del cur[i]
            elif op == "replace":
                cur[i] = draw(st.sampled_from(pool))
            elif op == "rename":  # an identifier changes: names and byte ranges move
                cur[i] = cur[i].replace(b"a", b"aa", 1).replace(b"e", b"E", 1)
            else:
                j = draw(st.integers(0, len(cur) - 1))
                cur.insert(j, cur.pop(i))
        lines = cur
        versions.append(b"".join(lines))
    return path, versions


def _check_chain(path: str, versions: list[bytes]) -> None:
    for preset in PRESETS:
        chain = Chain(path, preset)
        for k, new in enumerate(versions):
            if k:
                _check_edits(versions[k - 1], new)
            assert chain.next(new) == extract(new, path, preset=preset), (path, preset, k)
        for key, v in chain.counts().items():
            _COUNTS[key] = _COUNTS.get(key, 0) + v


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_versions(_HANDWRITTEN))
def test_incremental_equals_fresh_on_handwritten_sources(case: tuple[str, list[bytes]]) -> None:
    _check_chain(*case)


@requires_parity
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_versions(_PARITY or {"none.py": b""}))
def test_incremental_equals_fresh_on_parity_sources(case: tuple[str, list[bytes]]) -> None:
    _check_chain(*case)


@requires_parity
def test_parity_sources_cover_the_target_languages() -> None:
    langs = {language_for_path(p) for p in _PARITY}
    assert {"python", "javascript", "typescript", "java", "go", "rust", "c", "cpp"} <= langs


@requires_parity
def test_real_edit_reuses_the_tree_and_keeps_definitions() -> None:
    """A real change to py_ledger/ledger/fmt.py: `money` gains a parameter and `label` a line."""
    path = "py_ledger/ledger/fmt.py"
    old = _PARITY[path]
    assert b"def money(amount, currency=\"EUR\"):" in old
    new = old.replace(b'def money(amount, currency="EUR"):',
                      b'def money(amount, currency="EUR", places=2):')
    new = new.replace(b"    return name.strip().title()\n",
                      b"    name = name.strip()\n    return name.title()\n")
    assert len(compute_edits(old, new)) == 2
    chain = Chain(path, "strict")
    assert chain.next(old) == extract(old, path)
    defs = chain.next(new)
    assert defs == extract(new, path)
    # The query ran over the two changed intervals only (the edited lines of money and
    # label); table, untouched, was carried over from the old definitions, a line lower.
    counts = chain.counts()
    assert (counts["incremental"], counts["reused"], counts["queried"]) == (1, 1, 2)
    # fmt.py defines money (lines 7-9), label (12-14) and table (17-22); label is now one
    # line longer and table moves down by one.
    assert [(d.name, d.start_line, d.end_line) for d in defs or []] == [
        ("money", 7, 9), ("label", 12, 15), ("table", 18, 23)]


def test_broken_version_falls_back_to_a_fresh_parse() -> None:
    old = _HANDWRITTEN["app/models.py"]
    new = old.replace(b"def helper(x):", b"def helper(x:")
    chain = Chain("app/models.py", "strict")
    chain.next(old)
    assert chain.next(new) == extract(new, "app/models.py")
    assert chain.counts()["reused"] == 0  # an error in the re-parsed tree: searched whole


def test_extractor_reuses_trees_per_path(tmp_path: Path) -> None:
    ex = SymbolExtractor(incremental=True)
    path = "app/models.py"
    v1 = _HANDWRITTEN[path]
    v2 = v1.replace(b"return y + 1", b"return y + 2")
    v3 = v2 + b"\n\ndef extra():\n    pass\n"
    for i, data in enumerate((v1, v2, v3)):
        assert ex.get(f"{i:040x}", data, path) == extract(data, path)
    assert ex.stats["parsed"] == 3 and ex.stats["incremental"] == 2
    # Same bytes again under a known id: the memory cache answers, no parse.
    assert ex.get(f"{2:040x}", v3, path) == extract(v3, path)
    assert ex.stats["cached"] == 1
    assert [d.name for d in ex.get(f"{3:040x}", v3, path) or []][-1] == "extra"


def test_extractor_tree_memory_is_bounded() -> None:
    ex = SymbolExtractor(incremental=True, tree_bytes=600)
    sizes = []
    for i, path in enumerate(sorted(_HANDWRITTEN)):
        ex.get(f"{i:040x}", _HANDWRITTEN[path], path)
        sizes.append(ex._native.stats()["kept_bytes"])
    assert max(sizes) <= 600
    assert sizes[-1] < sum(len(v) for v in _HANDWRITTEN.values() if len(v) <= 600)


@pytest.mark.parametrize("path", sorted(_HANDWRITTEN))
def test_unchanged_bytes_give_the_same_definitions(path: str) -> None:
    data = _ALL[path]
    chain = Chain(path, "strict")
    assert chain.next(data) == chain.next(data) == extract(data, path)


def test_random_chains_mostly_exercise_reuse() -> None:
    """Guard against a generator that only ever produces broken code (then only the fresh
    fallback would be compared)."""
    reused, incremental = _COUNTS.get("reused", 0), _COUNTS.get("incremental", 0)
    test_incremental_equals_fresh_on_handwritten_sources()
    assert _COUNTS["incremental"] - incremental >= 100
    assert _COUNTS["reused"] - reused >= 50  # earlier definitions were really re-used


def _capture_depths(source: str) -> list[int]:
    """For each ``@definition`` in a query source, how deep below its pattern's root the
    captured node is (0: the root itself; comments and strings ignored)."""
    depths = []
    depth = 0
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == ";":
            i = source.find("\n", i)
            if i < 0:
                break
            continue
        if ch == '"':
            i = source.index('"', i + 1) + 1
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif source.startswith("@definition", i):
            depths.append(depth)
        i += 1
    return depths


def test_query_patterns_capture_their_root_or_a_child() -> None:
    """What re-using definitions relies on: a capture depends on its node, or on its parent."""
    qdir = ROOT / "python" / "ctxeval" / "truth" / "queries"
    files = sorted(qdir.glob("*.scm"))
    assert len(files) >= 14
    for f in files:
        depths = _capture_depths(f.read_text(encoding="utf-8"))
        assert depths, f.name
        assert max(depths) <= 1, f.name
    js = _capture_depths((qdir / "javascript.scm").read_text(encoding="utf-8"))
    assert 1 in js and 0 in js  # `(variable_declarator ... value: [...] @definition)`


def _workload_module():
    """benchmarks/workload.py: realistic files in eight languages and small version edits."""
    import importlib.util
    import sys

    name = "ctxeval_bench_workload"
    if name in sys.modules:
        return sys.modules[name]
    path = ROOT / "benchmarks" / "workload.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_incremental_equals_fresh_on_versions_of_realistic_files() -> None:
    """Chains of versions of 300-900 line files (classes, methods, functions), as between the
    commits of a repository: definitions re-used across versions stay exact."""
    import random

    wl = _workload_module()
    rng = random.Random(7)
    counts: dict[str, int] = {}
    checked = 0
    for lang in sorted(wl._LANGS):
        f = wl.make_file(f"src/m/mod_{lang}{wl._LANGS[lang].ext}", lang, rng.randrange(300, 900),
                         rng)
        chains = {p: Chain(f.path, p) for p in PRESETS}
        for p, chain in chains.items():
            assert chain.next(b"".join(f.lines)) == extract(b"".join(f.lines), f.path, preset=p)
        for _ in range(6):
            wl.mutate(f, rng)
            new = b"".join(f.lines)
            for preset, chain in chains.items():
                assert chain.next(new) == extract(new, f.path, preset=preset), (lang, preset)
                checked += 1
        for chain in chains.values():
            for key, v in chain.counts().items():
                counts[key] = counts.get(key, 0) + v
    assert checked == 8 * 6 * 2
    assert counts["reused"] > counts["queried"]  # most of each file was not searched again


def test_function_bound_by_its_parent_survives_an_edit_next_to_the_parent() -> None:
    """A blank line inserted just before ``Queue.prototype.push = function ...``: the
    function expression is untouched, but it is a definition (and named) only through the
    assignment around it, which meets the change; it must be found again, not dropped."""
    old = _HANDWRITTEN["web/main.js"]
    new = old.replace(b"}\n\nQueue.prototype", b"}\n\n\nQueue.prototype")
    chain = Chain("web/main.js", "strict")
    chain.next(old)
    got = chain.next(new)
    assert got == extract(new, "web/main.js")
    assert chain.counts()["reused"] > 0
    assert ("function_expression", "push", 8) in {(d.kind, d.name, d.start_line) for d in got}


def test_a_rewritten_file_is_parsed_from_scratch() -> None:
    """Past the scratch fraction of changed bytes nothing is re-used (it would cost more than
    a fresh parse); below it the same pair re-uses definitions. The default is 0.3 (measured
    on real histories, docs/performance.md)."""
    old = _HANDWRITTEN["app/models.py"]
    new = old.replace(b"class Child(Base):", b"class Kid(Base):")
    changed = sum((e.old_end_byte - e.start_byte) + (e.new_end_byte - e.start_byte)
                  for e in compute_edits(old, new)) / len(new)
    assert changed < 0.3
    for fraction, reused in ((0.3, True), (changed / 2, False)):
        chain = Chain("app/models.py", "strict", fraction)
        chain.next(old)
        assert chain.next(new) == extract(new, "app/models.py")
        assert bool(chain.counts()["reused"]) is reused
