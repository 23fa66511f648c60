"""A results **dataset**: a directory of Parquet part files, the output of the Ray engine.

``ctxeval evaluate --engine ray --out results.parquet`` makes ``results.parquet`` a directory
(``docs/results-parquet.md``, "The Ray engine's dataset"). Its part files hold the rows of
:mod:`.results_parquet` (the same schema and writer as the local engine's file), and reading
them in file-name order gives the rows in input order:

* ``part-GGGG-UUUUUUUUU-u.parquet``: the rows of the units from ``U`` (an input file, a row
  group of a trajectory dataset) that one actor call evaluated, written by that actor (with
  ``--all-gold``, a part ends with its run);
* ``part-GGGG-UUUUUUUUU-aRRRRRR.parquet``: rows only the whole run knows (``--all-gold``'s
  agent failures of run ``R``), written by the driver, at the place of the first unit after
  run ``R`` (``a`` sorts before ``u``);
* ``views-GGGG-UUUUUUUUU-….jsonl``: with ``--views``, the views records of the part of the same
  name (the local sidecar's lines), written with it;
* ``GGGG`` is the generation: an evaluation numbers its parts one past the dataset's last
  generation, so the rows ``--resume`` adds come after the rows it keeps.

Actors write into ``.pending-GGGG/`` inside the dataset (each part under a temporary name,
renamed when whole: a unit evaluated twice, after its actor died, writes the same part again).
The driver takes each unit's report in input order, decides which of its rows the local
engine would write (from each row's run, instance, input and status, which is all the actor
sends back), and moves the part into the dataset: a rename, or, when a row is dropped (the
failure row of an unreadable input named after an instance an earlier input covered, a
repeated trajectory in another unit), a rewrite without it. So the parts in the dataset are
always a prefix of the run in input order, decided as the local engine decides: a killed run
leaves whole parts only, and ``--resume`` continues after them; ``.pending-*`` directories
are never read and are removed by the next evaluation.

The directory is ours to write in (:mod:`.ownership`) when it is empty or holds only part
files, views parts and ``.pending-*`` directories (its first part a results table); anything
else is refused, as any other file that is not
ours. It is held with an exclusive ``flock`` on the directory itself while an evaluation
writes into it (as :class:`~ctxeval.evaluation.output.outfile.LineFile` holds a file).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...filekinds import special_kind
from . import ownership
from .meta import (
    Settings,
    commit_meta,
    conflict_error,
    meta_path,
    named_os_error,
    read_meta,
    replace_into,
    resume_conflicts,
    rows_conflicts,
    stage_meta,
)
from .outfile import PART, VIEWS_PART, lock_exclusive, parts, views_name

PENDING = re.compile(r"^\.pending-\d{4}$")
#: Rows per row group of a part, as in the local engine's file.
GROUP = 2048


def unit_part(generation: int, unit: int) -> str:
    return f"part-{generation:04d}-{unit:09d}-u.parquet"


def run_end_part(generation: int, position: int, run: int) -> str:
    return f"part-{generation:04d}-{position:09d}-a{run:06d}.parquet"


def foreign_entries(path: Path) -> list[str]:
    """What a directory holds besides a dataset's own entries (sorted)."""
    return sorted(n for n in os.listdir(path) if not PART.match(n) and not VIEWS_PART.match(n)
                  and not PENDING.match(n) and not _temporary(n))


def _temporary(name: str) -> bool:
    return name.startswith((".part-", ".views-")) and ".tmp-" in name


def check_ours(path: Path) -> None:
    """Return when ``path`` may be written as a results dataset (module doc); else raise."""
    if path.is_symlink() and not path.exists():
        raise InputError(f"refusing to write: the --out is a symbolic link to "
                         f"{os.readlink(path)}, which does not exist", path=str(path))
    if not path.exists():
        return
    if path.is_dir():
        other = foreign_entries(path)
        if other:
            shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3
                                            else "")
            raise InputError("refusing to write: the --out is a directory that is not a "
                             f"results dataset ctxeval wrote (it holds {shown}); give another "
                             "path, or move it away", path=str(path))
        first = next(iter(parts(path)), None)
        if first is not None:
            ownership.check_ours(first, "results")
        return
    if special_kind(path) is not None:
        raise InputError(f"a Parquet --out must be a file or directory, not "
                         f"{special_kind(path)}", path=str(path))
    ownership.check_ours(path, "results")  # a results file (the local engine's) is replaced


def write_part(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows as a part file: written under a temporary name, renamed when whole."""
    import pyarrow.parquet as pq

    from .results_parquet import SCHEMA, rows_to_table

    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as writer:
            for k in range(0, len(rows), GROUP):
                writer.write_table(rows_to_table(rows[k:k + GROUP]))
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise named_os_error(exc, path) from exc
    replace_into(tmp, path)


def write_views(path: Path, records: list[dict[str, Any]]) -> None:
    """Views records (``--views``) as a views part: JSON lines, as the local sidecar holds
    them; written under a temporary name, renamed when whole."""
    from .results import dumps_row

    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_bytes(b"".join(dumps_row(r) for r in records))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def keep_lines(src: Path, dst: Path, keep: list[bool]) -> None:
    """Views part ``src`` moved to ``dst`` with only the records ``keep`` marks."""
    if all(keep):
        os.replace(src, dst)
        return
    if any(keep):
        lines = src.read_bytes().splitlines(keepends=True)
        tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
        tmp.write_bytes(b"".join(ln for ln, k in zip(lines, keep, strict=True) if k))
        os.replace(tmp, dst)
    src.unlink()


def keep_rows(src: Path, dst: Path, keep: list[bool]) -> None:
    """Part ``src`` moved to ``dst`` with only the rows ``keep`` marks (none: removed)."""
    if all(keep):
        os.replace(src, dst)
        return
    if any(keep):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(src).filter(pa.array(keep))
        tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
        pq.write_table(table, tmp, compression="zstd", row_group_size=GROUP)
        os.replace(tmp, dst)
    src.unlink()


class DatasetOutput:
    """The Ray engine's held output directory (the counterpart of
    :class:`~ctxeval.evaluation.output.destination.Destination` for a dataset)."""

    def __init__(self, path: Path, *, resume: bool) -> None:
        from .destination import Begun

        self.path = path
        self.resume = resume
        self.stream = None
        self.sidecar = None
        self.settings: Settings | None = None
        self.meta_extra: dict[str, Any] = {}
        self.begun = Begun()
        self.generation = 0
        self.pending: Path | None = None
        self.written = 0
        self._fd = -1
        self._created = False
        self._had_meta = meta_path(path).exists()

    @classmethod
    def open(cls, out: str | Path, *, resume: bool = False) -> DatasetOutput:
        path = Path(out)
        check_ours(path)
        ownership.check_ours(meta_path(path), "meta")
        if resume and path.is_file():
            raise InputError("--resume with --engine ray continues a dataset directory the "
                             "Ray engine wrote; this is a Parquet file (resume it with the "
                             "local engine, or give a new --out)", path=str(path))
        dest = cls(path, resume=resume)
        if path.is_dir():
            dest._lock()
            check_ours(path)  # under the lock: nothing is being written there
        return dest

    def _lock(self) -> None:
        self._fd = lock_exclusive(os.open(self.path, os.O_RDONLY | os.O_DIRECTORY), self.path)

    def begin(self, settings: Settings) -> Any:
        """With ``--resume``, the rows kept (and the metadata's settings checked); without it,
        the rows of an earlier evaluation counted, to say they are replaced."""
        from .resume_scan import Kept, scan_parquet

        self.settings = settings
        existing = parts(self.path) if self.path.is_dir() else []
        if self.resume:
            kept = Kept()
            for part in existing:
                kept.extend(scan_parquet(part))
            self.begun.kept = kept
            if kept.count:
                meta = read_meta(self.path)
                if meta is not None:
                    conflicts = resume_conflicts(meta, settings)
                else:
                    conflicts = rows_conflicts(kept.preset, kept.final_policy, settings)
                if conflicts:
                    raise conflict_error(self.path, kept.count, conflicts)
        else:
            import pyarrow.parquet as pq

            if self.path.is_file():
                self.begun.replacing = int(pq.read_metadata(self.path).num_rows)
            else:
                self.begun.replacing = sum(int(pq.read_metadata(p).num_rows)
                                           for p in existing)
        gens = [int(PART.match(p.name).group(1)) for p in existing  # type: ignore[union-attr]
                ] if self.resume else []
        self.generation = max(gens, default=-1) + 1
        return self.begun

    def start(self) -> Path:
        """Before the first unit: an earlier evaluation's parts (or file) removed unless
        ``--resume``, leftovers of a killed one removed, the metadata written; the directory
        the actors write their parts into is returned."""
        assert self.settings is not None
        staged = stage_meta(self.path, self._meta({}))
        try:
            if self.path.is_file():
                self.path.unlink()
            if not self.path.exists():
                self.path.mkdir(parents=True)
                self._created = True
            if self._fd < 0:
                self._lock()
            for name in os.listdir(self.path):
                entry = self.path / name
                if PENDING.match(name):
                    shutil.rmtree(entry, ignore_errors=True)
                elif _temporary(name) or ((PART.match(name) or VIEWS_PART.match(name))
                                          and not self.resume):
                    entry.unlink()
            commit_meta(staged, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                staged.unlink()
            raise
        self.pending = self.path / f".pending-{self.generation:04d}"
        self.pending.mkdir()
        return self.pending

    def take(self, name: str, keep: list[bool], views: list[bool] | None = None) -> None:
        """A part the actors wrote into the pending directory, moved into the dataset with
        the rows the driver keeps; ``views``: which records of its views part (one per row
        that has one, in order) go with them."""
        assert self.pending is not None
        src = self.pending / name
        if views:
            side = self.pending / views_name(name)
            if side.exists():
                keep_lines(side, self.path / views_name(name), views)
        if src.exists():
            keep_rows(src, self.path / name, keep)
            self.written += sum(keep)

    def write(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Rows the driver made (``--all-gold``), as a part of their own (and their views
        records, with ``--views``, as its views part)."""
        from .views_sidecar import ROW_KEY

        records = [r.pop(ROW_KEY) for r in rows if ROW_KEY in r]
        if records:
            write_views(self.path / views_name(name), records)
        if rows:
            write_part(self.path / name, rows)
            self.written += len(rows)

    def finish(self, meta_extra: dict[str, Any]) -> None:
        commit_meta(stage_meta(self.path, self._meta(meta_extra)), self.path)

    def _meta(self, extra: dict[str, Any]) -> dict[str, Any]:
        from .results import finite

        assert self.settings is not None
        return finite({**self.settings.to_meta(), **self.meta_extra,
                       "output": {"kind": "dataset", "parts": "part-*.parquet"}, **extra})

    def close(self) -> None:
        if self.pending is not None:
            shutil.rmtree(self.pending, ignore_errors=True)
            self.pending = None
        if self._created and self.path.is_dir() and not os.listdir(self.path) \
                and not self.written:
            with contextlib.suppress(OSError):
                self.path.rmdir()
            if not self._had_meta:
                with contextlib.suppress(OSError):
                    meta_path(self.path).unlink()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
