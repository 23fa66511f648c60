"""Definitions of blobs, each found once: from memory, the on-disk cache, or a parse.

:class:`SymbolExtractor` is what the evaluation asks for the definitions of a file version. It
sits above the ways of getting them (the native core parses, from scratch or incrementally from
an earlier version of the same path, and names; :mod:`ctxeval.truth.grammars` gives it the grammars;
:mod:`ctxeval.truth.cache` remembers across processes and evaluations), so that none of those needs
another: imports go one way, from here down.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from .cache import SymbolCache
from .grammars import register, resolve_lang
from .symbols import Definition, definitions


class SymbolExtractor:
    """Parses each (blob id, language, preset) once per run; thread-safe; counts outcomes.

    ``stats`` counts ``parsed`` (files parsed), ``cached`` (answers served from the cache),
    ``unknown_language`` and ``parse_failed`` (grammar unusable or crashed; such files have
    no definitions rather than failing the run).

    ``cache_dir``: also consult and fill the on-disk cache there (:mod:`ctxeval.truth.cache`), so
    that other runs, processes and later evaluations parse each blob once; ``stats`` then also
    counts ``disk_cached`` (answers read from disk, not counted in ``cached`` or ``parsed``).
    Only git blob ids are stored on disk: other keys are not content addresses.

    ``incremental``: the native core keeps the last tree parsed for each path (up to
    ``tree_bytes`` of source in all, least recently used dropped first) and parses a new
    version of that path from it, re-using the definitions of the parts the edits left alone;
    the definitions are the same, the work is smaller when the versions differ little. A tree
    takes about 35 times its source in memory: the default 4 MiB of source is about 150 MB of
    trees. ``stats`` then also counts ``incremental`` (parses that started from a tree; they
    are counted in ``parsed`` too).

    ``memory_entries``: keep at most that many answers in memory (least recently used dropped
    first) so that memory stays flat over long evaluations; with ``cache_dir`` a dropped
    answer costs a disk read, without it a parse. None: keep everything.
    """

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None, *,
                 incremental: bool = False, tree_bytes: int = 4 << 20,
                 memory_entries: int | None = None) -> None:
        self._lock = threading.Lock()
        self._max_entries = memory_entries
        self._cache: dict[tuple[str, str, str], list[Definition] | None] = {}
        self._pending: dict[tuple[str, str, str], threading.Event] = {}
        self._counts: dict[str, int] = {
            "parsed": 0, "cached": 0, "unknown_language": 0, "parse_failed": 0,
        }
        self.disk: Any = None
        if cache_dir is not None:
            self.disk = SymbolCache(cache_dir)
            self._counts["disk_cached"] = 0
        self.incremental = incremental
        self._native = _core.DefinitionExtractor(tree_bytes if incremental else None)

    @property
    def stats(self) -> dict[str, int]:
        """The counts so far (a copy)."""
        with self._lock:
            out = dict(self._counts)
        if self.incremental:
            out["incremental"] = int(self._native.stats()["incremental"])
        return out

    def _count(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1

    @staticmethod
    def language(path: str, preset: str = "strict") -> str | None:
        """The language ``path`` is parsed as under ``preset`` (None: not source code)."""
        return resolve_lang(path, preset, None)

    def known(self, blob_id: str, lang: str, preset: str) -> bool:
        """Whether the answer for (blob, language, preset) is in memory (no parse, no I/O)."""
        with self._lock:
            return (blob_id, lang, preset) in self._cache

    def put(self, blob_id: str, lang: str, preset: str,
            defs: list[Definition] | None) -> None:
        """Remember an answer found elsewhere: later :meth:`get` calls for that blob are
        served from memory."""
        with self._lock:
            self._remember((blob_id, lang, preset), defs)

    def _remember(self, key: tuple[str, str, str], defs: list[Definition] | None) -> None:
        self._cache.pop(key, None)
        self._cache[key] = defs
        if self._max_entries is not None and len(self._cache) > self._max_entries:
            del self._cache[next(iter(self._cache))]

    def _claim(self, key: tuple[str, str, str]
               ) -> tuple[bool, list[Definition] | None, threading.Event | None]:
        """Under the lock: (True, answer, None) when the answer is in memory; (False, None,
        event) when this caller is now to find it (and must set the event); (False, None,
        None) when another thread is finding it."""
        if key in self._cache:
            self._counts["cached"] += 1
            if self._max_entries is None:
                return True, self._cache[key], None
            got = self._cache[key] = self._cache.pop(key)  # most recently used last
            return True, got, None
        if key in self._pending:
            return False, None, None
        event = self._pending[key] = threading.Event()
        return False, None, event

    def get(self, blob_id: str, data: bytes, path: str,
            preset: str = "strict") -> list[Definition] | None:
        """Definitions of a blob (None for unknown/failed languages); see :func:`extract`."""
        lang = resolve_lang(path, preset, None)
        if lang is None:
            self._count("unknown_language")
            return None
        key = (blob_id, lang, preset)
        while True:
            with self._lock:
                hit, got, event = self._claim(key)
                if hit:
                    return got
                if event is None:
                    waiting = self._pending[key]
            if event is not None:
                break
            waiting.wait()
        return self._find([(key, data, path)], [event])[0]

    def get_many(self, items: list[tuple[str, bytes, str, str]], threads: int = 1) -> None:
        """Find the definitions of many ``(blob id, bytes, path, preset)`` (the versions of a
        path in commit order) on ``threads`` native threads (different paths at once, the
        versions of one path in order; the GIL is released meanwhile), and remember them:
        later :meth:`get` calls are served from memory. Blobs in memory, or being found by
        another thread, are left to it."""
        mine: list[tuple[tuple[str, str, str], bytes, str]] = []
        events: list[threading.Event] = []
        for blob_id, data, path, preset in items:
            lang = resolve_lang(path, preset, None)
            if lang is None:
                self._count("unknown_language")
                continue
            key = (blob_id, lang, preset)
            with self._lock:
                _hit, _got, event = self._claim(key)
            if event is not None:
                mine.append((key, data, path))
                events.append(event)
        if mine:
            self._find(mine, events, threads)

    def _find(self, work: list[tuple[tuple[str, str, str], bytes, str]],
              events: list[threading.Event], threads: int = 1) -> list[list[Definition] | None]:
        """Answers for keys this caller claimed: the disk cache, else the native core (one
        call for all); every claimed key is remembered and its event set, whatever happens."""
        results: list[list[Definition] | None] = [None] * len(work)
        outcomes = ["parse_failed"] * len(work)
        try:
            parse: list[int] = []
            for k, ((blob_id, lang, preset), _data, _path) in enumerate(work):
                got = self.disk.get(blob_id, lang, preset) if self.disk is not None else None
                if got is not None:
                    results[k], outcomes[k] = got, "disk_cached"
                elif register(self._native, lang):
                    parse.append(k)
            found = self._native.extract_many(
                [(work[k][0][1], work[k][0][2], _tree_key(work[k][2], work[k][0][1]),
                  work[k][1]) for k in parse], threads)
            for k, got_tuples in zip(parse, found, strict=True):
                defs = definitions(got_tuples)
                if defs is None:
                    continue
                results[k], outcomes[k] = defs, "parsed"
                if self.disk is not None:
                    blob_id, lang, preset = work[k][0]
                    self.disk.put(blob_id, lang, preset, defs)
        finally:
            with self._lock:
                for ((key, _d, _p), defs, outcome) in zip(work, results, outcomes, strict=True):
                    self._remember(key, defs)
                    self._counts[outcome] += 1
                    del self._pending[key]
            for event in events:
                event.set()
        return results


def _tree_key(path: str, lang: str) -> str:
    """The native core's key of a path's kept tree: the versions of one path (in one
    language) are re-parsed from one another."""
    return f"{lang}\0{path}"


#: Parsed files whose definitions stay in memory per process (more come from the disk cache or
#: a re-parse).
MEMORY_ENTRIES = 4096
#: Source bytes whose trees are kept for incremental re-parsing, per evaluation (a tree takes
#: about 35 times its source).
TREE_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class SymbolSettings:
    """How definitions are found: the on-disk cache, incremental parsing and the memory
    kept."""

    cache_dir: str | Path | None = None
    incremental: bool = True
    memory_entries: int = MEMORY_ENTRIES
    tree_bytes: int = TREE_BYTES

    def extractor(self) -> SymbolExtractor:
        return SymbolExtractor(self.cache_dir, incremental=self.incremental,
                               tree_bytes=self.tree_bytes, memory_entries=self.memory_entries)
