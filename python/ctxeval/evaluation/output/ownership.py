"""Whether a file is ours to overwrite.

An evaluation writes four files: the rows (``--out``), the metadata beside them
(``<out>.meta.json``), the views sidecar (``--views``) and, for a Parquet ``--out``, the
journal its rows go to until the run is complete (``<out>.partial``). Each may be written over
only when it holds what an earlier evaluation wrote there -- or nothing at all. Anything else
is the user's: a text file, a JSON config, gold annotations in Parquet, a trajectory. A mistyped
``--out`` must never cost a file, so the rule is a whitelist of our own kinds, checked by
content (never by name), and a file that cannot be told is refused:

* a file that does not exist, or is empty, may be written;
* a symbolic link is judged by the file it points to; a link to nothing is refused (writing
  through it would create a file wherever it points);
* a results file holds result rows: a JSON-lines file whose first record is a result row
  (:func:`~ctxeval.evaluation.output.results.row_problem`), or a Parquet file with the
  results table's bookkeeping columns (gold annotations are Parquet too, and have an
  ``instance_id`` column);
* the sidecar's first record is a views record, the metadata is a JSON object with
  ``ctxeval_version`` and ``gold_sources``, a journal holds result rows (or is the binary
  leftover of a Parquet partial written by an earlier version), ``convert --out`` holds
  neutral trajectories;
* ``report --out`` and ``compare --out`` write renderings (text, Markdown, LaTeX, CSV, HTML,
  JSON), which cannot be told from other text by content: they may write over anything that
  is not data ctxeval reads (results, gold, trajectories, views, metadata, Parquet, source
  files). ``report results.jsonl --out results.jsonl`` is refused.

Only regular files are read to decide: a FIFO or a device is never opened here (opening a FIFO
for reading blocks until someone writes to it). Whether such a path may be written at all is
for the caller (``--out /dev/stdout`` is a stream, see
:mod:`ctxeval.evaluation.output.destination`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import orjson

from ...errors import InputError
from ...filekinds import special_kind

Kind = Literal["results", "views", "meta", "journal", "trajectories", "report"]

#: Bytes read to see what a file holds: its first record must be whole within them.
_HEAD = 1 << 20

_WHAT = {"results": "results file", "views": "views sidecar", "meta": "results metadata file",
         "journal": "partial results file", "trajectories": "trajectory file",
         "report": "report"}
_FLAG = {"results": "--out", "views": "--views sidecar", "meta": "--out's .meta.json",
         "journal": "--out's .partial", "trajectories": "--out", "report": "--out"}


def check_ours(path: str | Path, kind: Kind) -> None:
    """Return when ``path`` may be written over as a file of ``kind`` (see the module doc);
    otherwise raise an :class:`InputError` that says what the file looks like and what to do."""
    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise InputError(f"refusing to write: the {_FLAG[kind]} is a symbolic link to "
                         f"{os.readlink(p)}, which does not exist (give the file's own path)",
                         path=str(p))
    if not p.exists():
        return
    if p.is_dir():
        raise InputError(f"refusing to write: the {_FLAG[kind]} is a directory", path=str(p))
    other = special_kind(p)
    if other is not None:
        if kind in ("report", "trajectories"):
            return  # written as a stream, never read back (convert --out /dev/stdout)
        raise InputError(f"refusing to write: the {_FLAG[kind]} is {other}, not a file",
                         path=str(p))
    try:
        with p.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError as exc:
        raise InputError(f"cannot read it to check it is a {_WHAT[kind]}: {exc.strerror}",
                         path=str(p)) from exc
    if not head.strip() or _holds(p, head, kind):
        return
    raise InputError(f"refusing to overwrite: the {_FLAG[kind]} is not a {_WHAT[kind]}, it "
                     f"looks like {_looks(p, head)}; only a {_WHAT[kind]} that ctxeval wrote "
                     "is written over (give another path, or move the file away)", path=str(p))


def _first_record(head: bytes) -> Any:
    line = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _holds(path: Path, head: bytes, kind: Kind) -> bool:
    if kind == "report":
        return _a_rendering(path, head)
    if kind == "meta":
        try:
            doc = orjson.loads(head)
        except orjson.JSONDecodeError:
            return False
        return isinstance(doc, dict) and "ctxeval_version" in doc and "gold_sources" in doc
    if head.startswith(b"PAR1"):
        if kind == "journal":  # an earlier version's Parquet partial: no footer, our leftover
            return True
        return kind == "results" and _results_parquet(path)
    rec = _first_record(head)
    if not isinstance(rec, dict):
        return False
    if kind == "views":
        fmt = rec.get("format")
        return isinstance(fmt, str) and fmt.startswith("ctxeval-views/")
    if kind == "trajectories":
        from ...reading.adapters.neutral import TRAJECTORY_FORMAT

        return rec.get("format") == TRAJECTORY_FORMAT
    from .results import row_problem

    return row_problem(rec) is None


def _a_rendering(path: Path, head: bytes) -> bool:
    """Whether a report or comparison may be written over the file: anything but data ctxeval
    reads (results, gold, trajectories, views, metadata, Parquet, source). A report in text,
    Markdown, LaTeX, CSV or HTML cannot be told from other text, so text that is none of those
    is taken for an earlier rendering."""
    if head.startswith(b"PAR1"):
        return False
    from ...reading.identify import describe
    from .results import row_problem

    rec = _first_record(head)
    if rec is not None and row_problem(rec) is None:
        return False
    looks = describe(path, rec)
    return looks is None or looks.startswith(("a report", "a comparison"))


def _results_parquet(path: Path) -> bool:
    import pyarrow.parquet as pq

    from .results_parquet import is_results_schema

    try:
        return is_results_schema(pq.read_schema(path).names)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return False


def _looks(path: Path, head: bytes) -> str:
    """What the file looks like, for the refusal (the readers' own predicates), else its first
    bytes."""
    from ...reading.identify import describe

    looks = describe(path, _first_record(head) if not head.startswith(b"PAR1") else None)
    if looks:
        return looks
    line = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
    first = line[:40].decode("utf-8", "replace")
    if line.lstrip().startswith((b"{", b"[")):
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            return f"a file whose first line is not valid JSON ({exc}; it begins {first!r})"
    return f"something else (it begins {first!r})"
