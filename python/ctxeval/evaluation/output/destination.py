"""Where one evaluation's rows go, from the moment the output is held to its last row.

:class:`Destination` is the life of an output, shared by both engines:

1. **held** (:meth:`Destination.open`), before anything is read: the paths are checked (a
   dangling link, a directory or a device is refused before anything is opened), the file is
   locked (:class:`~ctxeval.evaluation.output.outfile.LineFile`), then its content is checked
   to be ours to overwrite (:mod:`.ownership`), and so are the metadata and the views sidecar
   beside it;
2. **begun** (:meth:`Destination.begin`), once the gold is loaded: with ``--resume``, a torn
   last line is dropped, the rows there are scanned for their (run, instance) and the
   metadata is compared with this evaluation's settings (:mod:`.meta`: rows made differently
   are not added to); without it, the rows an earlier evaluation left are counted, to say that
   they are being replaced;
3. **first row**: only now is an earlier output truncated and the metadata written, so that an
   evaluation that writes no row (nothing readable) leaves what was there as it was, and a new
   output that gets no row is removed again;
4. **finished** (:meth:`Destination.finish`): a Parquet output is made from its journal and
   takes its name, and the metadata is written with the run's statistics.

A Parquet ``--out`` is written through a **journal**, ``<out>.partial``: whole JSON lines, as a
JSONL output is, so that a killed run keeps every row it wrote and ``--resume`` continues from
there (a Parquet file cannot be appended to, and one without its footer cannot be read). The
Parquet file is made from the journal at the end, under a temporary name renamed into place;
the journal is then removed. ``--resume`` of a complete Parquet output leaves the file as it
is and journals only the rows it adds; the file's row groups are copied into the new file at
the end (so the kept rows are never converted, and the first new row comes as soon as for a
JSONL output). A new evaluation (without ``--resume``) removes an earlier complete file at its
first row, as it truncates a JSONL output: a journal beside a complete file therefore always
adds to it -- or, when every row of the journal is in the file already (a run stopped between
renaming its file into place and removing its journal), is dropped.

An ``--out`` that is not a regular file (``/dev/stdout``, a FIFO, a terminal) is a
**stream**: rows are written to it as to standard output, and nothing is read back from it,
locked or written beside it (no metadata, no sidecar, no ``--resume``).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from ...errors import InputError
from ...filekinds import special_kind
from . import ownership
from .meta import (
    Settings,
    commit_meta,
    conflict_error,
    meta_path,
    read_meta,
    resume_conflicts,
    rows_conflicts,
    stage_meta,
)
from .outfile import LineFile, is_parquet, partial_path
from .resume_scan import Kept, scan_parquet, scan_rows
from .views_sidecar import ViewsSidecar, sidecar_path


@dataclass(slots=True)
class Begun:
    """What the output held when the evaluation began."""

    #: Bytes of a torn last line dropped (a hard crash mid-write), JSONL or journal.
    torn_bytes: int = 0
    #: Rows kept from the output by ``--resume``.
    kept: Kept = field(default_factory=Kept)
    #: Rows of an earlier evaluation that this one replaces (without ``--resume``).
    replacing: int = 0
    #: Said once about the output (a journal left by an earlier version, ...).
    notes: list[str] = field(default_factory=list)


class Destination:
    """The rows' way out for one evaluation: a held file, or a stream (see the module doc).

    It is a line sink for :class:`~ctxeval.evaluation.output.results.RowWriter`: each call
    to :meth:`write` is one whole line."""

    def __init__(self, path: Path | None, stream: IO[bytes] | None, *, resume: bool,
                 views: bool) -> None:
        self.path = path
        self.stream = stream
        self.resume = resume
        self.parquet = path is not None and stream is None and is_parquet(path)
        self.file: LineFile | None = None
        self.sidecar: ViewsSidecar | None = None
        self.settings: Settings | None = None
        self.meta_extra: dict[str, Any] = {}
        self.begun = Begun()
        #: A complete Parquet output whose rows ``--resume`` keeps: they go first into the
        #: Parquet file made at the end (the journal holds only the rows added).
        self.base: Path | None = None
        self.written = 0
        self._started = False
        self._views = views

    # -- 1. held -------------------------------------------------------------------------------

    @classmethod
    def open(cls, out: str | Path | None, *, stream: IO[bytes] | None = None,
             resume: bool = False, views: bool = False) -> Destination:
        """Hold the output ``out`` (None: ``stream``, else standard output)."""
        path = Path(out) if out is not None else None
        if stream is None and path is not None and special_kind(path) is not None:
            if path.suffix.lower() in (".parquet", ".pq"):
                raise InputError(f"a Parquet --out must be a file, not "
                                 f"{special_kind(path)}", path=str(path))
            if resume or views:
                raise InputError(f"--{'resume' if resume else 'views'} needs --out to be a "
                                 f"file; this is {special_kind(path)}", path=str(path))
            stream = _open_stream(path)
            dest = cls(path, stream, resume=False, views=False)
            dest._owned_stream = True
            return dest
        dest = cls(path, stream, resume=resume, views=views)
        if stream is not None or path is None:
            return dest
        try:
            dest._hold()
        except BaseException:
            dest.close()
            raise
        return dest

    _owned_stream = False

    def _hold(self) -> None:
        assert self.path is not None
        target = partial_path(self.path) if self.parquet else self.path
        kinds: list[tuple[Path, ownership.Kind]] = [(target, "journal" if self.parquet
                                                     else "results")]
        if self.parquet:
            kinds.append((self.path, "results"))
        kinds.append((meta_path(self.path), "meta"))
        if self._views:
            kinds.append((sidecar_path(self.path), "views"))
        for p, kind in kinds:  # refused before anything is opened (a FIFO, a dangling link)
            _check_path(p, kind)
        self.file = LineFile(target)
        if self._views:
            self.sidecar = ViewsSidecar(self.path)
        for p, kind in kinds:  # under the lock: what is there is not being written
            ownership.check_ours(p, kind)

    # -- 2. begun ------------------------------------------------------------------------------

    def begin(self, settings: Settings) -> Begun:
        """Start the evaluation's use of the output (see the module doc); raises a
        :class:`~ctxeval.evaluation.output.meta.ResumeConflict` when ``--resume`` would add
        rows made differently."""
        self.settings = settings
        if self.file is None:
            return self.begun
        assert self.path is not None
        if self.resume:
            self._begin_resume(settings)
        else:
            self.begun.replacing = _rows_in(self.path)
        return self.begun

    def _begin_resume(self, settings: Settings) -> None:
        assert self.file is not None and self.path is not None
        if self.parquet and self.file.path.exists() and _binary(self.file.path):
            self.begun.notes.append(
                f"{self.file.path.name} was left by an earlier version's Parquet writer (it "
                "cannot be read); the rows are taken from the complete output instead")
            self.file.begin(resume=False)
        self.begun.torn_bytes = self.file.begin(resume=True)
        kept = scan_rows(self.file.path)
        if self.parquet and self.path.exists():
            kept = self._with_base(kept)
        self.begun.kept = kept
        if self.sidecar is not None:
            self.sidecar.begin(resume=True)
        if not kept.count:
            return
        meta = read_meta(self.path)
        if meta is not None:
            conflicts = resume_conflicts(meta, settings)
        else:
            conflicts = rows_conflicts(kept.preset, kept.final_policy, settings)
            self.begun.notes.append(
                f"--resume: no {meta_path(self.path).name} beside the rows kept, so the gold, "
                "ctxeval version and --text they were made with could not be checked (their "
                "preset and final policy were)")
        if conflicts:
            raise conflict_error(self.path, kept.count, conflicts)

    def _with_base(self, journal: Kept) -> Kept:
        """A complete Parquet output and the journal beside it: the journal's rows come after
        the file's (``--resume`` of a complete output wrote them), unless every one of them is
        in the file already -- a run stopped between renaming its Parquet file into place and
        removing its journal -- and then the journal is dropped."""
        assert self.file is not None and self.path is not None
        base = scan_parquet(self.path)
        if journal.count and journal.done() <= base.done():
            self.file.begin(resume=False)
            journal = Kept()
        if base.count:
            self.base = self.path
            base.extend(journal)
            return base
        return journal

    # -- 3. rows -------------------------------------------------------------------------------

    def _start(self) -> None:
        """At the first row: the metadata is written aside, what an earlier evaluation left is
        truncated, then the metadata takes its place. In this order, a write that fails (a
        full disk) has changed nothing, and no moment leaves earlier rows beside metadata
        that does not describe them (which ``--resume`` would trust)."""
        if self.file is None:
            self._started = True
            return
        assert self.path is not None
        staged = self._stage_meta({})
        try:
            if not self.resume:
                if self.parquet and self.path.exists():
                    # Replaced, as a JSONL output is truncated: left beside the new journal,
                    # it would be taken for rows the journal adds to. Removed before the
                    # journal is emptied, so that no moment leaves it beside new rows.
                    self.path.unlink()
                self.file.begin(resume=False)
                if self.sidecar is not None:
                    self.sidecar.begin(resume=False)
            commit_meta(staged, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                staged.unlink()
            raise
        self._started = True
        self.file.keep = True
        if self.sidecar is not None:
            self.sidecar.file.keep = True

    def write(self, line: bytes) -> None:
        """One whole row line."""
        if not self._started:
            self._start()
        self.written += 1
        if self.file is not None:
            self.file.write(line)
        else:
            out = self.stream
            if out is None:
                import sys

                out = sys.stdout.buffer
            out.write(line)

    def write_views(self, row: dict[str, Any]) -> None:
        """The views record a row carries, into the sidecar (before the row itself)."""
        if self.sidecar is None:
            return
        if not self._started:
            self._start()
        self.sidecar.take(row)

    def flush(self) -> None:
        if self.file is None:
            out = self.stream
            if out is None:
                import sys

                out = sys.stdout.buffer
            out.flush()

    # -- 4. finished ---------------------------------------------------------------------------

    def finish(self, meta_extra: dict[str, Any]) -> None:
        """The evaluation ended normally: make the Parquet file from its journal, write the
        metadata with the run's figures. Nothing is written for an evaluation that wrote no
        row and kept none."""
        if self.file is None or not (self.written or self.begun.kept.count):
            return
        assert self.path is not None
        if self.parquet:
            _journal_to_parquet(self.file.path, self.path, self.base)
        self._write_meta(meta_extra)
        if self.parquet:
            # The Parquet file has taken the rows; the lock goes with the journal.
            self.file.path.unlink()

    def _write_meta(self, extra: dict[str, Any]) -> None:
        assert self.path is not None
        commit_meta(self._stage_meta(extra), self.path)

    def _stage_meta(self, extra: dict[str, Any]) -> Path:
        assert self.path is not None and self.settings is not None
        from .results import finite

        meta = {**self.settings.to_meta(), **self.meta_extra, **extra}
        return stage_meta(self.path, finite(meta))

    def close(self) -> None:
        """Release the output (a file created here that got no row is removed again)."""
        for part in (self.sidecar, self.file):
            if part is not None:
                part.close()
        if self._owned_stream and self.stream is not None:
            with contextlib.suppress(OSError):
                self.stream.close()

    def __enter__(self) -> Destination:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_stream(path: Path) -> IO[bytes]:
    """A pipe, FIFO or device opened for writing only (nothing is read back from it). A FIFO
    no process reads is an error at once, not a wait for ever: it is opened without blocking
    (ENXIO when there is no reader), then written to as usual."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError("no process is reading this FIFO (named pipe): start the reader "
                             "first, or give a file", path=str(path)) from None
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb", buffering=0)


def _check_path(path: Path, kind: ownership.Kind) -> None:
    """The checks that open nothing: a dangling link, a directory, a FIFO or device."""
    dangling = path.is_symlink() and not path.exists()
    if dangling or path.is_dir() or special_kind(path) is not None:
        ownership.check_ours(path, kind)


def _binary(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


def _rows_in(path: Path) -> int:
    """Rows an earlier evaluation left in ``path`` (0 when none), without parsing them."""
    if not path.is_file():
        return 0
    try:
        if is_parquet(path):
            import pyarrow.parquet as pq

            return int(pq.read_metadata(path).num_rows)
        n = 0
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                n += chunk.count(b"\n")
        return n
    except (OSError, ValueError):
        return 0


#: Rows converted per row group when a journal becomes a Parquet file.
_GROUP = 2048


def _journal_to_parquet(journal: Path, out: Path, base: Path | None = None) -> None:
    """Write the rows of ``base`` (a complete Parquet output that ``--resume`` added to; its
    row groups are copied as they are) and then of ``journal`` (JSON lines) as the Parquet file
    ``out``: under a temporary name first, renamed into place, so a reader never sees a file
    without its footer. An ``OSError`` names the file; the temporary file is removed."""
    import pyarrow.parquet as pq

    from .results_parquet import SCHEMA, rows_to_table

    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    try:
        writer = pq.ParquetWriter(tmp, SCHEMA, compression="zstd")
        try:
            if base is not None:
                done = pq.ParquetFile(base)
                for k in range(done.metadata.num_row_groups):
                    writer.write_table(done.read_row_group(k).cast(SCHEMA))
            for batch in _batches(journal):
                writer.write_table(rows_to_table(batch))
        finally:
            writer.close()
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        # pyarrow's own words ("Error writing bytes to file. Detail: [errno 28] ...") name
        # no file: the error is said again in the system's words, with the file
        raise OSError(exc.errno or errno.EIO, os.strerror(exc.errno) if exc.errno
                      else str(exc), str(out)) from exc


def _batches(journal: Path) -> Iterable[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    with journal.open("rb") as fh:
        for line in fh:
            if line.strip():
                batch.append(orjson.loads(line))
                if len(batch) >= _GROUP:
                    yield batch
                    batch = []
    if batch:
        yield batch
