"""What a file looks like, for the message given when a command is handed the wrong one.

People pass gold to ``report``, results to ``--gold``, a trajectory to ``compare``: "not a result
row at line 1" is true but does not help; "it looks like gold annotations (neutral format)" says
what went wrong. :func:`describe` reads the first record (or, for a file that is one JSON
document, the document) and names the kind of file, using the same predicates as the readers
of each kind (gold formats, adapter detection, the resolved-status reader), so the guess agrees
with what the right command would accept.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import orjson

from .. import lfs
from ..truth.grammars import language_for_path

#: Largest file read whole to see what a multi-line JSON document holds.
WHOLE_LIMIT = 64 << 20


def _document(path: Path) -> Any:
    """The whole file as one JSON value, else its first line's (JSON lines); None when neither
    is JSON, or the file is too large to look at whole and its first line is not JSON."""
    try:
        if path.stat().st_size <= WHOLE_LIMIT:
            with contextlib.suppress(orjson.JSONDecodeError):
                return orjson.loads(path.read_bytes())
        with path.open("rb") as fh:
            first = next((ln for ln in fh if ln.strip()), b"")
        return orjson.loads(first)
    except (OSError, orjson.JSONDecodeError, RecursionError):
        return None


def _record_kind(rec: dict[str, Any]) -> str | None:
    """The kind of file a JSON object belongs to, from its keys."""
    from ..truth.gold.contextbench import is_contextbench
    from ..truth.gold.neutral import is_neutral
    from ..truth.gold.swebench import is_swebench
    from .adapters.neutral import TRAJECTORY_FORMAT

    fmt = rec.get("format")
    if isinstance(fmt, str) and fmt.startswith("ctxeval-views/"):
        return "a views sidecar of 'ctxeval evaluate --views' (give the results file beside it)"
    if fmt == TRAJECTORY_FORMAT:
        return "trajectories in ctxeval's neutral format (evaluate them with --run/--pred)"
    if "ctxeval_version" in rec and "gold_sources" in rec:
        return "the metadata beside a results file (give the .jsonl it describes)"
    if "tables" in rec and "view" in rec:
        return "a report written by 'ctxeval report --format json'"
    if "comparisons" in rec and "baseline" in rec:
        return "a comparison written by 'ctxeval compare --format json'"
    if "num_valid" in rec and any(k.startswith("final_") for k in rec):
        return "the ContextBench evaluator's aggregate (aggregate.json), not its per-instance rows"
    if "reference_crash" in rec:
        return "a ContextBench evaluator crash record"
    if "traj_data" in rec:
        return "ContextBench predictions (evaluate them with --run/--pred)"
    if is_neutral(rec) or is_contextbench(rec):
        return "gold annotations (give it to 'ctxeval evaluate --gold')"
    if is_swebench(rec):
        return "SWE-bench instances (gold patches; give them to 'ctxeval evaluate --gold')"
    if isinstance(rec.get("resolved_ids"), list) or (
            isinstance(rec.get("resolved"), bool) and "final" not in rec):
        return "benchmark results with resolved status (give it to 'ctxeval evaluate --results')"
    return None


def describe(path: Path, first: Any = None) -> str | None:
    """What ``path`` looks like, as a phrase ("gold annotations (...)"); None when unknown.
    ``first`` is its first JSON-lines record when the caller has it."""
    if path.is_dir():
        return "a directory"
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    if lfs.is_pointer(head):
        return "a Git LFS pointer (run 'git lfs pull' to fetch the file it stands for)"
    if head.startswith(b"PAR1"):
        return "a Parquet file (gold annotations such as ContextBench's are Parquet)"
    lang = language_for_path(path.name)
    if lang is not None:
        return f"a source file ({lang})"
    doc = first if first is not None else _document(path)
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        doc = doc[0]
    if isinstance(doc, dict):
        kind = _record_kind(doc)
        if kind is not None:
            return kind
    from ..errors import AdapterError
    from .adapters import detect

    try:
        mod = detect(path)
    except AdapterError:
        return None
    return f"an agent trajectory ({mod.FORMAT} format; evaluate it with --run/--pred)"
