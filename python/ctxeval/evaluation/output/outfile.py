"""The files an evaluation writes line by line (the rows, the views sidecar): held by one
evaluation at a time, written a whole line at a time, repaired by ``--resume``.

Three faults seen under job schedulers shape this module:

* **Two evaluations given the same ``--out``.** Each used to truncate the file and append its
  own rows through its own buffer, and the buffers' partial flushes interleaved: torn lines, rows
  lost, both runs reporting success. :class:`LineFile` takes an exclusive ``flock`` on the file
  itself before anything is truncated, and a second writer fails at once with
  :class:`OutputBusy`, naming the file and the process that holds it.

  Why ``flock`` on the output itself and not a lock file beside it or ``fcntl``/``lockf``
  record locks: the kernel drops a ``flock`` when the holder dies, however it dies (SIGKILL
  included), so there is never a stale lock to clean up or to be wrong about; a lock file would
  be left behind by a crash, and deleting one races with a process opening it. A record lock is
  released when the process closes *any* descriptor of the file (``--resume`` reads the file
  it holds). The processes an evaluation starts (``git``) do not share the lock: the
  descriptor is not inheritable, so the lock ends with the evaluation. The holder's pid is
  read back from the kernel's own table, ``/proc/locks`` (matched by device and inode): it
  cannot be stale or half-written, as a pid file can be in the moment between taking the lock
  and writing the pid. Where there is no ``/proc/locks`` (not Linux),
  or the holder is on another machine (NFS), the message says "another process" instead.

* **A hard crash in the middle of a line.** Rows are written with one ``os.write`` each, never
  through a buffer that flushes at arbitrary byte counts, so an interrupt (SIGINT, SIGTERM,
  SIGHUP) always leaves whole lines; a write that fails (disk full, file size limit) or is cut
  short is undone back to the end of the last whole line before the error is raised. Only a
  SIGKILL (or a power cut) in the middle of the kernel's write can leave a line without its
  newline: :meth:`LineFile.begin` with ``resume`` drops such a tail, so its row is evaluated
  again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
from pathlib import Path

from ...errors import CtxevalError

#: Bytes read back from the end of a file to find its last newline, per step.
_TAIL_STEP = 1 << 16


class OutputBusy(CtxevalError):
    """The output is held by another evaluation."""

    kind = "output_busy"


def lock_holder(path: str | Path) -> int | None:
    """The pid holding a ``flock`` on ``path``, from ``/proc/locks``; None where unknown."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            table = fh.read()
    except OSError:
        return None
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters have "->" after the id.
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == ident:
            with contextlib.suppress(ValueError):
                return int(parts[4])
    return None


def lock_exclusive(fd: int, path: Path) -> int:
    """``fd`` (of ``path``, an output file or a dataset directory) locked for this evaluation;
    held by another one: closed, and :class:`OutputBusy` naming its process."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        pid = lock_holder(path)
        who = f"process {pid}" if pid is not None else "another process"
        raise OutputBusy(f"is being written by another evaluation ({who}); wait for it to "
                         "finish or choose another --out", path=str(path)) from None
    return fd


class LineFile:
    """One output file held for an evaluation, written whole lines at a time.

    Opening takes the lock and changes nothing in the file; :meth:`begin` then truncates it
    (a new run, at its first row) or repairs its last line (``--resume``). A file this created
    that is still empty is removed again on :meth:`close` (unless :attr:`keep`), so that an
    evaluation that writes nothing (no gold, no readable trajectory) leaves nothing behind.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        self.fd = lock_exclusive(
            os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666), self.path)
        self._created = not existed
        self._begun = False
        #: Kept on :meth:`close` even if this created it and it is empty (an output the
        #: evaluation began writing, whose views sidecar got no record).
        self.keep = False
        #: Bytes of whole lines in the file: where a failed write is cut back to.
        self.size = 0

    def begin(self, *, resume: bool) -> int:
        """Truncate (a new run) or, with ``resume``, drop an unterminated last line; returns the
        bytes dropped from a torn last line (0: none)."""
        self._begun = True
        if not resume:
            os.ftruncate(self.fd, 0)
            self.size = 0
            return 0
        end = os.fstat(self.fd).st_size
        keep = self._last_newline(end)
        if keep < end:
            os.ftruncate(self.fd, keep)
        self.size = keep
        return end - keep

    def _last_newline(self, end: int) -> int:
        """Offset just past the last newline before ``end`` (0 when there is none)."""
        with open(self.path, "rb") as fh:
            pos = end
            while pos > 0:
                start = max(0, pos - _TAIL_STEP)
                fh.seek(start)
                chunk = fh.read(pos - start)
                k = chunk.rfind(b"\n")
                if k >= 0:
                    return start + k + 1
                pos = start
        return 0

    def write(self, line: bytes) -> None:
        """Append one whole line; on any failure the file is cut back to its whole lines and
        the error raised (an ``OSError`` names the file)."""
        start = self.size
        view = memoryview(line)
        try:
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, start)
            if isinstance(exc, OSError) and exc.filename is None:
                raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
            raise
        self.size = start + len(line)

    def flush(self) -> None:
        """Nothing is buffered (each line is written when given)."""

    def close(self) -> None:
        if self.fd < 0:
            return
        if self._created and self.size == 0 and not self.keep:
            with contextlib.suppress(OSError):
                if os.fstat(self.fd).st_size == 0:
                    self.path.unlink()
        os.close(self.fd)  # releases the lock
        self.fd = -1

    def __enter__(self) -> LineFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_parquet(path: str | Path) -> bool:
    """Whether a results path is (or is to be) Parquet: by its suffix, else by its magic.
    (Here, with the other facts about output files, so that knowing it imports no pyarrow.)"""
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        return True
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return False
    if not p.is_file():
        return is_dataset(p)  # the Ray engine's dataset of part files
    try:
        with p.open("rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError:
        return False


def partial_path(path: Path) -> Path:
    """Where a Parquet output is written until it is complete (then renamed to ``path``)."""
    return path.with_name(path.name + ".partial")


#: A part file of a results dataset (:mod:`.results_dataset`): generation, unit, kind.
PART = re.compile(r"^part-(\d{4})-(\d{9})-(u|a\d{6})\.parquet$")


def _named(path: str | Path, pattern: re.Pattern[str]) -> list[Path]:
    """The files of directory ``path`` whose names match, in file-name order; none when
    ``path`` is not a directory."""
    p = Path(path)
    try:
        names = sorted(n for n in os.listdir(p) if pattern.match(n))
    except (NotADirectoryError, FileNotFoundError):
        return []
    return [p / n for n in names]


def parts(path: str | Path) -> list[Path]:
    """The part files of a results dataset directory, in file-name order (the rows' order)."""
    return _named(path, PART)


#: The views sidecar of a part (``--views``): the same name, ``views-`` and ``.jsonl``.
VIEWS_PART = re.compile(r"^views-(\d{4})-(\d{9})-(u|a\d{6})\.jsonl$")


def views_parts(path: str | Path) -> list[Path]:
    """The views parts of a results dataset directory, in file-name order."""
    return _named(path, VIEWS_PART)


def views_name(part: str) -> str:
    """The views part beside part ``part``."""
    return "views-" + part[len("part-"):-len(".parquet")] + ".jsonl"


def is_dataset(path: str | Path) -> bool:
    """Whether ``path`` is a directory of results parts (or a directory named as a Parquet
    output, ``results.parquet/``, empty or not)."""
    p = Path(path)
    if not p.is_dir():
        return False
    return p.suffix.lower() in (".parquet", ".pq") or bool(parts(p))
