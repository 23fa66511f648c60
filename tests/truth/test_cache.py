"""The on-disk caches (definitions, commits' file lists): round trips, damaged entries, version
keys, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval.truth.cache as cache_mod
from conftest import PARITY, requires_parity
from ctxeval.truth.cache import (
    SymbolCache,
    decode_definitions,
    default_cache_dir,
    encode_definitions,
    is_blob_id,
    namespace,
)
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import git_blob_id
from ctxeval.truth.symbols import Definition, extract

PY = b'''class Account:
    """Ein Konto: W\xc3\xa4hrung \xe2\x82\xac."""

    def deposit(self, amount):
        self.balance += amount


def money(amount, currency="EUR"):
    return f"{amount:,.2f}"
'''
PY_ID = git_blob_id(PY)


def _defs() -> list[Definition]:
    defs = extract(PY, "bank/account.py")
    assert defs is not None
    return defs


# ---------------------------------------------------------------------------------------------
# Encoding.

_text = st.text(max_size=12)
_def = st.builds(
    lambda kind, name, qn, sl, span, sb, blen: Definition(kind, name, qn, sl, sl + span, sb,
                                                          sb + blen),
    st.sampled_from(["function_definition", "class_definition", "méthode"]), _text, _text,
    st.integers(1, 10**6), st.integers(0, 10**4), st.integers(0, 10**8), st.integers(0, 10**6))


@settings(max_examples=200, deadline=None)
@given(defs=st.lists(_def, max_size=20))
def test_encoding_round_trips_any_definitions(defs: list[Definition]) -> None:
    assert decode_definitions(encode_definitions(defs)) == defs


def test_encoding_of_real_definitions() -> None:
    defs = _defs()
    assert [(d.kind, d.qualified_name, d.start_line, d.end_line) for d in defs] == [
        ("class_definition", "Account", 1, 5),
        ("function_definition", "Account.deposit", 4, 5),
        ("function_definition", "money", 8, 9),
    ]
    assert decode_definitions(encode_definitions(defs)) == defs
    assert decode_definitions(encode_definitions([])) == []


# ---------------------------------------------------------------------------------------------
# Store and load.

def test_round_trip_and_layout(tmp_path: Path) -> None:
    c = SymbolCache(tmp_path)
    assert c.get(PY_ID, "python", "strict") is None
    assert c.put(PY_ID, "python", "strict", _defs())
    assert c.get(PY_ID, "python", "strict") == _defs()
    p = c.path(PY_ID, "python", "strict")
    assert p.is_file() and p.parent.name == PY_ID[:2] and p.name == PY_ID[2:]
    assert p.is_relative_to(tmp_path / "symbols")
    # Other preset, other language: other entries.
    assert c.get(PY_ID, "python", "contextbench") is None
    assert c.path(PY_ID, "ruby", "strict") != p
    assert [n for n in os.listdir(p.parent) if ".tmp-" in n] == []
    assert c.stats == {"hits": 1, "misses": 2, "corrupt": 0, "writes": 1, "write_failed": 0}


def test_only_blob_ids_are_cached(tmp_path: Path) -> None:
    c = SymbolCache(tmp_path)
    assert is_blob_id(PY_ID) and is_blob_id("a" * 64)
    for key in ("path:bank/account.py", "blob1", PY_ID.upper(), "../" + PY_ID[3:]):
        assert not is_blob_id(key)
        assert not c.put(key, "python", "strict", _defs())
        assert c.get(key, "python", "strict") is None
    assert not (tmp_path / "symbols").exists()


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "bad-json"])
def test_damaged_entries_are_misses_and_get_rewritten(tmp_path: Path, damage: str) -> None:
    c = SymbolCache(tmp_path)
    c.put(PY_ID, "python", "strict", _defs())
    p = c.path(PY_ID, "python", "strict")
    raw = p.read_bytes()
    if damage == "truncate":
        p.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        p.write_bytes(raw[:-3] + bytes([raw[-3] ^ 0x40]) + raw[-2:])
    elif damage == "garbage":
        p.write_bytes(os.urandom(200))
    elif damage == "empty":
        p.write_bytes(b"")
    else:  # a well-sealed entry whose payload is not definitions
        key = c._key(PY_ID, "python", "strict")
        p.write_bytes(cache_mod._seal(key, b'["x", [[1]]]'))
    assert c.get(PY_ID, "python", "strict") is None
    assert c.stats["corrupt"] == 1
    ex = SymbolExtractor(cache_dir=tmp_path)
    assert ex.get(PY_ID, PY, "bank/account.py") == _defs()
    assert ex.stats["parsed"] == 1 and ex.stats["disk_cached"] == 0
    assert SymbolCache(tmp_path).get(PY_ID, "python", "strict") == _defs()


def test_an_entry_moved_to_another_key_is_rejected(tmp_path: Path) -> None:
    c = SymbolCache(tmp_path)
    c.put(PY_ID, "python", "strict", _defs())
    other = "0" * 40
    dest = c.path(other, "python", "strict")
    dest.parent.mkdir(parents=True)
    dest.write_bytes(c.path(PY_ID, "python", "strict").read_bytes())
    assert c.get(other, "python", "strict") is None
    assert c.stats["corrupt"] == 1


def test_version_changes_invalidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = SymbolCache(tmp_path)
    c.put(PY_ID, "python", "strict", _defs())
    before = namespace("python", "strict")
    assert before.startswith("python-strict-")

    def fresh_namespace() -> str:
        cache_mod._namespaces.clear()
        return namespace("python", "strict")

    try:
        monkeypatch.setattr(cache_mod, "FORMAT_VERSION", cache_mod.FORMAT_VERSION + 1)
        assert fresh_namespace() != before
        assert c.get(PY_ID, "python", "strict") is None
        monkeypatch.undo()
        assert fresh_namespace() == before
        assert c.get(PY_ID, "python", "strict") == _defs()
        real = cache_mod._version
        monkeypatch.setattr(cache_mod, "_version",
                            lambda d: "99.0" if d == "tree-sitter-python" else real(d))
        assert fresh_namespace() != before
        assert c.get(PY_ID, "python", "strict") is None
        monkeypatch.undo()
        # The native runtime is fixed by the ctxeval version, which the namespace holds.
        monkeypatch.setattr(cache_mod, "_ctxeval_version", lambda: "99.0")
        assert fresh_namespace() != before
        monkeypatch.undo()
        monkeypatch.setattr(cache_mod, "TREE_SITTER_LANGUAGE_VERSION", 99)
        assert fresh_namespace() != before
        monkeypatch.undo()
        monkeypatch.setattr(cache_mod, "_version",
                            lambda d: "99.0" if d == "tree-sitter-ruby" else real(d))
        assert fresh_namespace() == before  # another grammar's version does not matter
    finally:
        monkeypatch.undo()
        cache_mod._namespaces.clear()


def test_unwritable_directory_only_stops_writes(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    ex = SymbolExtractor(cache_dir=blocker)
    assert ex.get(PY_ID, PY, "bank/account.py") == _defs()
    assert ex.disk.stats["write_failed"] == 1
    assert ex.stats["parsed"] == 1


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXEVAL_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CTXEVAL_CACHE_DIR")
    if sys.platform in ("win32", "darwin"):
        assert default_cache_dir().name in ("ctxeval", "Cache")
        return
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ctxeval"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "ctxeval"


# ---------------------------------------------------------------------------------------------
# The extractor over the disk cache.

def test_extractor_reads_what_another_extractor_wrote(tmp_path: Path) -> None:
    first = SymbolExtractor(cache_dir=tmp_path)
    assert first.get(PY_ID, PY, "bank/account.py") == _defs()
    assert first.stats == {"parsed": 1, "cached": 0, "unknown_language": 0, "parse_failed": 0,
                           "disk_cached": 0}
    second = SymbolExtractor(cache_dir=tmp_path)
    # Bytes are not even looked at on a disk hit: the blob id is the content.
    assert second.get(PY_ID, b"", "elsewhere/account.py") == _defs()
    assert second.get(PY_ID, b"", "elsewhere/account.py") == _defs()
    assert second.stats == {"parsed": 0, "cached": 1, "unknown_language": 0,
                            "parse_failed": 0, "disk_cached": 1}
    # A non-blob key is parsed, never stored.
    third = SymbolExtractor(cache_dir=tmp_path)
    assert third.get("path:x.py", PY, "x.py") == _defs()
    assert third.disk.stats["writes"] == 0


@requires_parity
def test_real_files_round_trip_through_the_cache(tmp_path: Path) -> None:
    """Every source file of the parity repositories, both presets, from a fresh extractor."""
    repos = PARITY / "repos"
    files = [p for p in sorted(repos.rglob("*")) if p.is_file()]
    writer = SymbolExtractor(cache_dir=tmp_path)
    expected = {}
    for p in files:
        data = p.read_bytes()
        for preset in ("strict", "contextbench"):
            expected[(p, preset)] = writer.get(git_blob_id(data), data, p.name, preset)
    reader = SymbolExtractor(cache_dir=tmp_path)
    for (p, preset), defs in expected.items():
        data = p.read_bytes()
        assert reader.get(git_blob_id(data), data, p.name, preset) == defs
    assert reader.stats["parsed"] == 0 and reader.stats["disk_cached"] == writer.stats["parsed"]
    # fmt.py: money (lines 7-9), label (12-14), table (17-22), read from disk.
    fmt = (repos / "py_ledger" / "ledger" / "fmt.py").read_bytes()
    got = reader.get(git_blob_id(fmt), fmt, "fmt.py")
    assert [(d.name, d.start_line, d.end_line) for d in got or []] == [
        ("money", 7, 9), ("label", 12, 14), ("table", 17, 22)]


# ---------------------------------------------------------------------------------------------
# Concurrent writers.

_VARIANTS = [
    [Definition("function_definition", f"f{i}", f"m.f{i}", i + 1, i + 2, i * 10, i * 10 + 9)
     for i in range(n)]
    for n in (1, 50, 400)
]
_KEY = "c" * 40


def _hammer(root: str, rounds: int, seed: int) -> tuple[int, int]:
    """Write one of several values under one key and read it back, many times: every read
    must be a miss or one of the values, never anything else. Returns (bad reads, hits)."""
    c = SymbolCache(root)
    bad = hits = 0
    for i in range(rounds):
        c.put(_KEY, "python", "strict", _VARIANTS[(i + seed) % len(_VARIANTS)])
        got = c.get(_KEY, "python", "strict")
        if got is not None:
            hits += 1
            if got not in _VARIANTS:
                bad += 1
        elif c.stats["corrupt"]:
            bad += 1
    return bad, hits


def test_concurrent_thread_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    results: list[tuple[int, int]] = []
    lock = threading.Lock()

    def run(seed: int) -> None:
        r = _hammer(str(tmp_path), 150, seed)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    assert sum(b for b, _ in results) == 0
    assert sum(h for _, h in results) == 6 * 150
    leftovers = [n for n in os.listdir(SymbolCache(tmp_path).path(_KEY, "python", "strict")
                                       .parent) if ".tmp-" in n]
    assert leftovers == []


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs the fork start method")
def test_concurrent_process_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=4, mp_context=ctx) as pool:
        results = list(pool.map(_hammer, [str(tmp_path)] * 4, [150] * 4, range(4)))
    assert sum(b for b, _ in results) == 0
    assert sum(h for _, h in results) == 4 * 150
    assert SymbolCache(tmp_path).get(_KEY, "python", "strict") in _VARIANTS


def test_bounded_memory_falls_back_to_the_disk_cache(tmp_path: Path) -> None:
    ex = SymbolExtractor(cache_dir=tmp_path, memory_entries=2)
    blobs = [PY + b"\n# %d\n" % i for i in range(4)]
    ids = [git_blob_id(b) for b in blobs]
    for b, oid in zip(blobs, ids, strict=True):
        assert ex.get(oid, b, "bank/account.py") == _defs()
    assert len(ex._cache) == 2
    assert ex.get(ids[3], blobs[3], "bank/account.py") == _defs()  # still in memory
    assert ex.get(ids[0], blobs[0], "bank/account.py") == _defs()  # dropped: read from disk
    assert ex.stats == {"parsed": 4, "cached": 1, "unknown_language": 0, "parse_failed": 0,
                        "disk_cached": 1}


# ---------------------------------------------------------------------------------------------
# Listings (commits' file lists).

COMMIT = "3f" + "a" * 38
LISTING = ({"pkg/a.py": "1" * 40, "caf\\xe9.txt": "2" * 40, "n\u00e9.py": "3" * 40},
           ["1 symbolic link left out"])


def test_a_listing_round_trips_by_commit_id(tmp_path: Path) -> None:
    c = cache_mod.ListingCache(tmp_path)
    assert c.get(COMMIT) is None and c.stats["misses"] == 1
    assert c.put(COMMIT, *LISTING)
    p = c.path(COMMIT)
    assert p.parent.parent.parent == tmp_path / "listings" and p.name == COMMIT[2:]
    assert cache_mod.ListingCache(tmp_path).get(COMMIT) == LISTING
    # a revision that is not an object id names nothing for good: never kept
    assert not c.put("HEAD", *LISTING) and c.get("HEAD") is None
    assert not list((tmp_path / "listings").rglob("*.tmp-*"))


def test_a_listing_moved_to_another_commit_or_damaged_is_a_miss(tmp_path: Path) -> None:
    c = cache_mod.ListingCache(tmp_path)
    c.put(COMMIT, *LISTING)
    other = "4e" + "b" * 38
    c.path(other).parent.mkdir(parents=True)
    c.path(other).write_bytes(c.path(COMMIT).read_bytes())
    assert c.get(other) is None and c.stats["corrupt"] == 1
    # sealed, but not a listing (a damaged writer): a miss too, and rewritten by the next put
    c._write(c.path(COMMIT), c._key(COMMIT), b'{"not": "a listing"}')
    assert c.get(COMMIT) is None and c.stats["corrupt"] == 2
    assert c.put(COMMIT, *LISTING) and c.get(COMMIT) == LISTING


def test_a_listing_is_kept_per_ctxeval_version(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """How ctxeval reads a listing (which files, which warnings) may change with ctxeval, so
    listings of another version are never read."""
    cache_mod.ListingCache(tmp_path).put(COMMIT, *LISTING)
    monkeypatch.setattr(cache_mod, "_ctxeval_version", lambda: "99.0")
    assert cache_mod.ListingCache(tmp_path).get(COMMIT) is None
    monkeypatch.undo()
    assert cache_mod.ListingCache(tmp_path).get(COMMIT) == LISTING
    monkeypatch.setattr(cache_mod, "LISTING_VERSION", cache_mod.LISTING_VERSION + 1)
    assert cache_mod.ListingCache(tmp_path).get(COMMIT) is None
