"""Stage 2, extract: the definitions of each needed blob, once, before the score stage asks.

Both extractors take the :class:`~ctxeval.evaluation.plan.Need` list of a batch and leave the
answers in the evaluation's :class:`~ctxeval.truth.extraction.SymbolExtractor`, where the score
stage finds them in memory:

* :class:`LocalExtractor` (``-j 1``) parses in the calling thread, the versions of each path
  in commit order (so each is re-parsed incrementally from the one before);
* :class:`ThreadExtractor` (``-j N``) hands the bytes to a background thread that parses on N
  native threads of the core, sharded **by path**: the versions of a path are taken in order
  on one thread, different paths on different threads, largest first, so every thread has
  work whatever the number of repositories. Parsing and naming run in the native core with
  the GIL released, so this thread plans and scores the next batches meanwhile; no process is
  started, nothing is copied between processes, and nothing can outlive the evaluation.

A blob that cannot be read here is simply skipped: the score stage reads it again and turns
the failure into that instance's error row.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from ..errors import RepoError
from ..truth.extraction import SymbolExtractor
from .plan import Need


def ordered(needs: Sequence[Need]) -> list[Need]:
    """Needs grouped by path, each path's versions oldest first."""
    return sorted(needs, key=lambda n: (n.repo, n.lang_path, n.order))


def read_all(needs: Sequence[Need]) -> list[tuple[Need, bytes]]:
    """The bytes of each need (one pipelined exchange with git per commit); unreadable ones
    are left out."""
    by_snap: dict[int, list[Need]] = {}
    for n in needs:
        by_snap.setdefault(id(n.snap), []).append(n)
    out: list[tuple[Need, bytes]] = []
    for group in by_snap.values():
        snap = group[0].snap
        try:
            datas = snap.read_many(n.path for n in group)
        except (RepoError, OSError):
            datas = {}
            for n in group:
                try:
                    datas[n.path] = snap.read(n.path)
                except (RepoError, OSError):
                    datas[n.path] = None
        out.extend((n, d) for n in group if (d := datas.get(n.path)) is not None)
    return out


class LocalExtractor:
    """Extraction in this process (``-j 1``): answers are ready when :meth:`submit` returns."""

    def __init__(self, symbols: SymbolExtractor) -> None:
        self.symbols = symbols

    def submit(self, needs: Sequence[Need]) -> None:
        read = dict((id(n), d) for n, d in read_all(needs))
        for n in ordered(needs):
            data = read.get(id(n))
            if data is not None:
                self.symbols.get(n.blob, data, n.lang_path, n.preset)

    def collect(self, ticket: None) -> None:
        return None

    def pending(self) -> set[tuple[str, str, str]] | None:
        return None

    def close(self) -> None:
        return None


class ThreadExtractor:
    """Extraction on ``jobs`` native threads behind one background thread; :meth:`submit`
    returns at once and :meth:`collect` waits for that batch's answers.

    The background thread takes every batch queued by the time it is free in one call to the
    core, so that a small batch does not leave threads idle, and the batches' versions of a
    path stay in submission order (commit order within a batch). Should it fail, the batch's
    blobs are simply extracted by the score stage as it needs them, and later batches in this
    thread (:attr:`broken` says why): the rows are the same.
    """

    def __init__(self, symbols: SymbolExtractor, jobs: int) -> None:
        self.symbols = symbols
        self.jobs = jobs
        self._queue: list[tuple[list[tuple[str, bytes, str, str]], Future[None]]] = []
        self._cond = threading.Condition()
        self._closing = False
        self._pending: set[tuple[str, str, str]] = set()
        self._local = LocalExtractor(symbols)
        #: Why extraction moved into the calling thread, once the background thread failed.
        self.broken: str | None = None
        self._thread = threading.Thread(target=self._serve, name="ctxeval-extract",
                                        daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                work, self._queue = self._queue, []
            try:
                self.symbols.get_many([it for items, _f in work for it in items], self.jobs)
            except BaseException as exc:
                for _items, fut in work:
                    fut.set_exception(exc)
                continue
            for _items, fut in work:
                fut.set_result(None)

    def submit(self, needs: Sequence[Need]) -> Any:
        if self.broken is not None:
            self._local.submit(needs)
            return None
        found = read_all(ordered(needs))
        items = [(n.blob, data, n.lang_path, n.preset) for n, data in found]
        keys = [n.key for n, _data in found]
        fut: Future[None] = Future()
        with self._cond:
            if self._closing:
                raise RuntimeError("the extract stage is closed")
            self._queue.append((items, fut))
            self._cond.notify()
        self._pending.update(keys)
        return fut, keys

    def collect(self, ticket: Any) -> None:
        if ticket is None:
            return
        fut, keys = ticket
        try:
            fut.result()
        except Exception as exc:  # the score stage extracts what is missing
            if self.broken is None:
                self.broken = (f"background extraction failed ({type(exc).__name__}: {exc}); "
                               "definitions were extracted in the calling thread from then on")
        self._pending.difference_update(keys)

    def pending(self) -> set[tuple[str, str, str]]:
        """Keys on their way (not to be asked for again)."""
        return self._pending

    def close(self) -> None:
        """Finish what is queued and stop the background thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
