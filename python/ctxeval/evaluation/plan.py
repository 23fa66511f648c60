"""Stage 1, plan: each (run, instance) read and resolved at its base commit, definitions aside.

An :class:`Item` is one row to come, in input order: either already a row (an evaluator error:
the repository is missing, the reference preset has nothing to score) or a
:class:`~ctxeval.evaluation.prepare.preparer.Planned` engine input that lacks only the definitions
of its files.
:func:`needs` lists the distinct blobs whose definitions a batch of items will ask for, and
that the extract stage does not hold yet: that list is all the extract stage sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InstanceError, RepoError
from ..model import GoldInstance, Trajectory
from ..truth.extraction import SymbolExtractor
from ..truth.repo import RepoCache, RepoSnapshot
from .output.results import error_row
from .prepare.preparer import Planned, PreparerBase


@dataclass(slots=True)
class Item:
    """One row to come: planned for scoring (``planned``), or a row already (``row``)."""

    gold: GoldInstance | None
    traj: Trajectory | None
    status: str
    pred_file: str | None
    reason: str | None = None
    planned: Planned | None = None
    snap: RepoSnapshot | None = None
    row: dict[str, Any] | None = None

    @property
    def instance_id(self) -> str:
        if self.traj is not None:
            return self.traj.instance_id
        assert self.gold is not None
        return self.gold.instance_id


@dataclass(frozen=True, slots=True)
class Need:
    """One blob whose definitions are needed: the extractor's key (blob id, language,
    preset), the name its language is read from, where to read it, and its place in the
    history of its path (the commit time), by which versions of one path are parsed."""

    blob: str
    lang: str
    preset: str
    lang_path: str
    path: str
    repo: str
    order: int
    snap: RepoSnapshot = field(compare=False, hash=False, repr=False)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.blob, self.lang, self.preset)


def plan_item(preparer: PreparerBase, repos: RepoCache, gold: GoldInstance,
              traj: Trajectory | None, run: str, status: str, pred_file: str | None,
              reason: str | None = None) -> Item:
    """Open the repository at the base commit and plan the instance; a failure is the item's
    row (with the reason), never an exception: one bad instance does not stop a run."""
    item = Item(gold, traj, status, pred_file, reason)
    try:
        item.snap = repos.open(instance_id=gold.instance_id, repo=gold.repo,
                               commit=gold.base_commit)
        item.planned = preparer.plan(gold, traj, item.snap)
    except RepoError as exc:
        item.row = error_row(item.instance_id, run, exc.kind, exc.message, pred_file=pred_file)
    except InstanceError as exc:
        item.row = error_row(item.instance_id, run, exc.kind, exc.message, pred_file=pred_file)
    except OSError as exc:
        item.row = error_row(item.instance_id, run, "repo_read_failed", str(exc),
                             pred_file=pred_file)
    return item


def needs(items: Iterable[Item], symbols: SymbolExtractor, preset: str,
          pending: set[tuple[str, str, str]] | None = None) -> list[Need]:
    """The distinct blobs ``items`` will ask definitions of that ``symbols`` does not hold in
    memory, nor ``pending`` (already on their way), in first-use order."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Need] = []
    for item in items:
        if item.planned is None or item.snap is None:
            continue
        snap = item.snap
        order: int | None = None
        for path, lang_path in item.planned.table.needs():
            lang = symbols.language(lang_path, preset)
            if lang is None:
                continue
            blob = snap.blob_id(path) or f"path:{path}"
            key = (blob, lang, preset)
            if key in seen or symbols.known(*key) or (pending is not None and key in pending):
                continue
            seen.add(key)
            if order is None:
                order = snap.commit_time()
            out.append(Need(blob, lang, preset, lang_path, path, snap.repo or "", order, snap))
    return out
