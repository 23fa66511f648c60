"""Stage 2, extract: the definitions of each needed blob, once, before the score stage asks.

Both extractors take the :class:`~ctxeval.evaluation.plan.Need` list of a batch and leave the
answers in the evaluation's :class:`~ctxeval.truth.extraction.SymbolExtractor`, where the score
stage finds them in memory:

* :class:`ThreadExtractor` (``-j N``, ``-j 1`` included): a reader thread reads each batch's
  blobs from git and hands them to N background threads, each parsing on one native thread of
  the core, sharded **by path**: a path keeps to one thread, which takes its versions in
  order, each re-parsed incrementally from the one before, unless that thread falls behind
  (see the class), so every thread has work whatever the number of repositories, and no
  thread waits for another. Parsing and naming run in the native core with the GIL released,
  so the calling thread plans and scores the next batches meanwhile (with ``-j 1`` that work,
  about a quarter of a cold run on the real-history benchmark, no longer waits for the parse,
  nor for git); no process is started, nothing is copied between processes, and nothing can
  outlive the evaluation;
* :class:`LocalExtractor` parses in the calling thread: the thread extractor's fallback, should
  a background thread fail.

A blob that cannot be read here is simply skipped: the score stage reads it again and turns
the failure into that instance's error row.
"""

from __future__ import annotations

import queue
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
    """Extraction in the calling thread: answers are ready when :meth:`submit` returns."""

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


#: Paths whose extraction thread is remembered (beyond, the table starts again: a path seen
#: again after that may move to another thread, which only costs its incremental re-parse).
OWNERS = 65536

_Work = list[tuple[str, bytes, str, str]]


class _Worker:
    """One background thread and its queue: it takes everything queued by the time it is free
    in one call to the core (on one native thread, the GIL released), in submission order."""

    def __init__(self, symbols: SymbolExtractor, k: int, failed: threading.Event) -> None:
        self.symbols = symbols
        #: Set by the first thread that fails: the others then stop extracting (their queued
        #: batches fail too, and the score stage extracts what they miss).
        self.failed = failed
        self.queue: list[tuple[_Work, Future[None]]] = []
        #: Bytes given to this thread and not yet extracted (read by the submitting thread to
        #: balance the threads).
        self.queued = 0
        self.cond = threading.Condition()
        self.closing = False
        self.thread = threading.Thread(target=self._serve, name=f"ctxeval-extract-{k}",
                                       daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            with self.cond:
                while not self.queue and not self.closing:
                    self.cond.wait()
                if not self.queue:
                    return
                work, self.queue = self.queue, []
            items = [it for share, _f in work for it in share]
            try:
                if self.failed.is_set():
                    raise RuntimeError("another extraction thread failed")
                self.symbols.get_many(items, 1)
            except BaseException as exc:
                self.failed.set()
                for _items, fut in work:
                    fut.set_exception(exc)
                continue
            finally:
                with self.cond:
                    self.queued -= sum(len(it[1]) for it in items)
            for _items, fut in work:
                fut.set_result(None)

    def put(self, items: _Work) -> Future[None]:
        fut: Future[None] = Future()
        with self.cond:
            if self.closing:
                raise RuntimeError("the extract stage is closed")
            self.queue.append((items, fut))
            self.queued += sum(len(it[1]) for it in items)
            self.cond.notify()
        return fut

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify()
        self.thread.join()


class ThreadExtractor:
    """Extraction on ``jobs`` background threads, each driving one native thread, fed by a
    reader thread that reads the blobs from git; :meth:`submit` returns at once and
    :meth:`collect` waits for that batch's answers.

    Each path keeps to one thread, so its versions are taken in submission order (commit order
    within a batch) and each is re-parsed from the one before; a batch's paths go out largest
    first, and a path moves to the least busy thread when its own has more bytes waiting than
    the other's plus the path's (it is then re-parsed there from whatever tree of it is kept:
    the same definitions). The threads never wait for one another: one call to the core over
    all threads per batch would leave a thread idle until the batch's longest path is done.
    Should a thread fail, the batch's blobs are simply extracted by the score stage as it needs
    them, and later batches in the calling thread (:attr:`broken` says why): the rows are the
    same.
    """

    def __init__(self, symbols: SymbolExtractor, jobs: int) -> None:
        self.symbols = symbols
        failed = threading.Event()
        self._workers = [_Worker(symbols, k, failed) for k in range(max(jobs, 1))]
        self._owner: dict[str, int] = {}
        self._pending: set[tuple[str, str, str]] = set()
        self._local = LocalExtractor(symbols)
        #: Why extraction moved into the calling thread, once a background thread failed.
        self.broken: str | None = None
        #: Batches whose blobs are to be read from git, in order (None: stop).
        self._reads: queue.SimpleQueue[tuple[list[Need], Future[list[Future[None]]]] | None] = \
            queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read_loop, name="ctxeval-read",
                                        daemon=True)
        self._reader.start()

    def _read_loop(self) -> None:
        """Reads each batch's blobs from git, in order, and hands them to the threads: the
        calling thread goes on planning meanwhile instead of waiting for git."""
        while (job := self._reads.get()) is not None:
            needs, handed = job
            try:
                handed.set_result(self._hand_out(read_all(ordered(needs))))
            except BaseException as exc:
                handed.set_exception(exc)

    def _thread_of(self, lang_path: str, size: int) -> int:
        queued = [w.queued for w in self._workers]
        least = min(range(len(queued)), key=queued.__getitem__)
        k = self._owner.get(lang_path)
        if k is None or queued[k] > queued[least] + size:
            if k is None and len(self._owner) >= OWNERS:
                self._owner.clear()
            k = self._owner[lang_path] = least
        return k

    def _hand_out(self, found: list[tuple[Need, bytes]]) -> list[Future[None]]:
        by_path: dict[str, _Work] = {}
        for n, data in found:
            by_path.setdefault(n.lang_path, []).append((n.blob, data, n.lang_path, n.preset))
        sized = [(sum(len(it[1]) for it in group), path, group)
                 for path, group in by_path.items()]
        sized.sort(key=lambda s: -s[0])  # largest first
        return [self._workers[self._thread_of(path, size)].put(group)
                for size, path, group in sized]

    def submit(self, needs: Sequence[Need]) -> Any:
        if self.broken is not None:
            self._local.submit(needs)
            return None
        handed: Future[list[Future[None]]] = Future()
        self._reads.put((list(needs), handed))
        keys = [n.key for n in needs]
        self._pending.update(keys)
        return handed, keys

    def collect(self, ticket: Any) -> None:
        if ticket is None:
            return
        handed, keys = ticket
        try:
            for fut in handed.result():
                fut.result()
        except Exception as exc:  # the score stage extracts what is missing
            if self.broken is None:
                self.broken = (f"background extraction failed ({type(exc).__name__}: {exc}); "
                               "definitions were extracted in the calling thread from then on")
        self._pending.difference_update(keys)

    @staticmethod
    def ready(ticket: Any) -> bool:
        """Whether :meth:`collect` of ``ticket`` would return at once (its blobs were read and
        every thread is done with its part)."""
        if ticket is None:
            return True
        handed = ticket[0]
        return handed.done() and (handed.exception() is not None
                                  or all(f.done() for f in handed.result()))

    def pending(self) -> set[tuple[str, str, str]]:
        """Keys on their way (not to be asked for again)."""
        return self._pending

    def close(self) -> None:
        """Finish what is queued and stop the background threads."""
        self._reads.put(None)
        self._reader.join()
        for w in self._workers:
            w.close()
