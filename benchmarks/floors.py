"""The floors the evaluations are measured against, and the blobs they parse.

* :func:`touched_blobs`: every distinct blob a workload's runs make the evaluator read;
* :func:`parse_floor_times`: tree-sitter parsing each of them once, from scratch, with the
  grammar packages ctxeval uses, outside ctxeval (py-tree-sitter); no evaluator parsing from
  scratch can do less;
* :func:`incremental_floor`: each re-parsed from its path's previous version, the line diff
  included.

Used by ``benchmarks/evaluate.py`` and ``benchmarks/stages.py`` (a module of its own, so that
neither script imports the other).
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path

from tree_sitter import Language, Parser, Point

from ctxeval import _core
from ctxeval.truth.grammars import GRAMMARS, language_for_path
from ctxeval.truth.repo import RepoCache


def touched_blobs(wl: Path) -> list[tuple[str, str, bytes]]:
    """(blob id, path, bytes) of every distinct blob the runs touch, in first-touch order."""
    rows = [json.loads(line) for line in (wl / "touched.jsonl").open()]
    out: list[tuple[str, str, bytes]] = []
    seen: set[str] = set()
    with RepoCache(wl / "repos") as repos:
        for r in rows:
            snap = repos.open(instance_id=r["instance_id"], repo=r["repo"], commit=r["commit"])
            datas = snap.read_many(r["paths"])
            for p in r["paths"]:
                oid = snap.blob_id(p)
                if oid is None or oid in seen or language_for_path(p) is None:
                    continue
                seen.add(oid)
                out.append((oid, p, datas[p] or b""))
    return out


def _parsers(blobs: list[tuple[str, str, bytes]]) -> dict[str, Parser]:
    """A py-tree-sitter parser per language of ``blobs``: the floors are measured outside
    ctxeval, with the same grammar packages."""
    out: dict[str, Parser] = {}
    for _oid, p, _d in blobs:
        lang = language_for_path(p)
        if lang is not None and lang not in out:
            module, func, _stem = GRAMMARS[lang]
            out[lang] = Parser(Language(getattr(importlib.import_module(module), func)()))
    return out


def parse_floor(blobs: list[tuple[str, str, bytes]], repeat: int = 3) -> float:
    """Seconds to parse every blob once from scratch (best of ``repeat``)."""
    return parse_floor_times(blobs, repeat)[0]


def parse_floor_times(blobs: list[tuple[str, str, bytes]], repeat: int = 3
                      ) -> tuple[float, float]:
    """:func:`parse_floor`, and the least CPU seconds a pass took."""
    parsers = _parsers(blobs)
    best = best_cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        for _oid, p, data in blobs:
            parsers[language_for_path(p) or ""].parse(data)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best, best_cpu


#: ctxeval's bounds for re-parsing a version pair incrementally (the native core's defaults).
SCRATCH_FRACTION, SCRATCH_EDITS = 0.3, 100


def incremental_floor(blobs: list[tuple[str, str, bytes]], repeat: int = 3) -> float:
    """Seconds to parse every blob, each from the previous version of its path when there is
    one and the pair is within ctxeval's bounds (the line diff included)."""
    parsers = _parsers(blobs)
    best = float("inf")
    for _ in range(repeat):
        last: dict[str, tuple[bytes, object]] = {}
        t = time.perf_counter()
        for _oid, p, data in blobs:
            parser = parsers[language_for_path(p) or ""]
            prev = last.get(p)
            edits = None if prev is None else _core.line_edits_within(
                prev[0], data, int(SCRATCH_FRACTION * len(data)), SCRATCH_EDITS)
            if not edits:
                tree = parser.parse(data)
            else:
                edited = prev[1].copy()  # type: ignore[union-attr]
                for sb, ob, nb, sp, op, np_ in edits:
                    edited.edit(sb, ob, nb, Point(*sp), Point(*op), Point(*np_))
                tree = parser.parse(data, edited)
            last[p] = (data, tree)
        best = min(best, time.perf_counter() - t)
    return best
