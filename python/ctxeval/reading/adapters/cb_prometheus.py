"""Prometheus ``<id>.log`` (answer_issue_logs): context blocks in a plain-text log.

Each ``--- BEGIN CONTEXT --- … --- END CONTEXT ---`` block is one retrieval, listing
``File: <path>`` / ``Line number range: a - b`` pairs (with the code); the last
``--- BEGIN AGGREGATED CONTEXT --- … ---`` block is the declared final context. There is no model
patch. Preset ``contextbench`` follows the reference extractor (reversed ranges swapped, ranges
merged per file, files without ranges and blocks without ranges dropped, final = the union of the
steps when there is no usable aggregated block); a log with neither kind of block makes the
reference raise, and is an AdapterError here.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..._core import lines_merge_raw
from ...errors import AdapterError
from ...model import Step, Trajectory, View
from . import ReadOptions
from .contextbench import CbStep, cb_trajectory, is_contextbench, plain_trajectory, read_text

FORMAT = "prometheus"
PRIORITY = 30

BEGIN = "--- BEGIN CONTEXT ---"
END = "--- END CONTEXT ---"
BEGIN_AGG = "--- BEGIN AGGREGATED CONTEXT ---"
END_AGG = "--- END AGGREGATED CONTEXT ---"

_FILE = re.compile(r"^\s*File:\s*(.+?)\s*$")
_RANGE = re.compile(r"^\s*Line\s*number\s*range\s*:\s*(\d+)\s*-\s*(\d+)\s*$", re.IGNORECASE)
_MARKERS = (BEGIN.encode(), BEGIN_AGG.encode(), b"prometheus.")


def detect(path: Path, head: bytes) -> bool:
    """A ``*.log`` file showing Prometheus context markers or logger names in its first 64 KiB."""
    return (path.is_file() and path.name.endswith(".log")
            and any(m in head for m in _MARKERS))


def blocks(text: str, begin: str, end: str) -> list[str]:
    """Payloads between ``begin`` and the next ``end``; an unclosed block ends the scan."""
    out: list[str] = []
    pos = 0
    while (i := text.find(begin, pos)) >= 0:
        j = text.find(end, i + len(begin))
        if j < 0:
            break
        out.append(text[i + len(begin):j].strip("\n"))
        pos = j + len(end)
    return out


def pairs(block: str) -> list[tuple[str, tuple[int, int] | None]]:
    """(raw path, range or None) in order: a file line opens an entry, a range line fills it.

    Every line is tested, also lines of the quoted code, as the reference does.
    """
    out: list[tuple[str, tuple[int, int] | None]] = []
    current: str | None = None
    for line in block.splitlines():
        m = _FILE.match(line)
        if m:
            current = m.group(1)
            out.append((current, None))
            continue
        m = _RANGE.match(line)
        if m and current is not None:
            rng = (int(m.group(1)), int(m.group(2)))
            if out[-1][0] == current and out[-1][1] is None:
                out[-1] = (current, rng)
            else:
                out.append((current, rng))
    return out


def cb_norm(p: str) -> str:
    """The reference Prometheus extractor's path normalisation."""
    p = (p or "").strip().replace("\\\\", "/")
    if p.startswith("/testbed/"):
        p = p[len("/testbed/"):]
    elif p.startswith("/workspace/"):
        parts = p[len("/workspace/"):].split("/", 1)
        p = parts[1] if len(parts) == 2 else parts[0]
    return p.lstrip("/") if p.startswith("/") else p


def cb_ranges(block: str) -> dict[str, list[tuple[int, int]]]:
    """Ranges by normalised file (swapped, merged); files without a range are left out."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for raw, rng in pairs(block):
        f = cb_norm(raw)
        if not f:
            continue
        by_file.setdefault(f, [])
        if rng is not None:
            by_file[f].append((min(rng), max(rng)))
    return {f: lines_merge_raw(rs) for f, rs in by_file.items() if rs}


def cb_step(ranges: dict[str, list[tuple[int, int]]]) -> CbStep:
    return CbStep(files=sorted(ranges),
                  spans=[(f, a, b) for f, rs in ranges.items() for a, b in rs])


def instance_id_of(path: Path) -> str:
    return path.name.replace(".log", "")


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    text = read_text(path, errors="replace")
    step_blocks = blocks(text, BEGIN, END)
    agg_blocks = blocks(text, BEGIN_AGG, END_AGG)
    if is_contextbench(options):
        return [_read_cb(path, step_blocks, agg_blocks, options)]
    return [_read_strict(path, step_blocks, agg_blocks, options)]


def _read_cb(path: Path, step_blocks: list[str], agg_blocks: list[str],
             options: ReadOptions) -> Trajectory:
    steps = [cb_step(r) for r in map(cb_ranges, step_blocks) if r]
    final_ranges = cb_ranges(agg_blocks[-1]) if agg_blocks else {}
    if not final_ranges:
        union: dict[str, list[tuple[int, int]]] = {}
        for s in steps:
            for f, a, b in s.spans:
                union.setdefault(f, []).append((a, b))
        final_ranges = {f: lines_merge_raw(rs) for f, rs in union.items()}
    if not steps and not final_ranges:
        raise AdapterError("no Prometheus context blocks (BEGIN CONTEXT / BEGIN AGGREGATED "
                           "CONTEXT) with line ranges; the reference raises 'Unsupported .log "
                           "trajectory format' here", path=str(path))
    return cb_trajectory(instance_id_of(path), steps, cb_step(final_ranges), options=options,
                         source=path, agent="prometheus")


def _views(block: str) -> list[View]:
    """Every entry as given: ranges swapped into order, a file without a range file-only."""
    views = []
    for raw, rng in pairs(block):
        f = raw.strip()
        if rng is None:
            views.append(View(f, None, None))
        else:
            views.append(View(f, min(rng), max(rng)))
    return views


def _read_strict(path: Path, step_blocks: list[str], agg_blocks: list[str],
                 options: ReadOptions) -> Trajectory:
    steps = [Step(index=i, action="context retrieval", tool="context", views=_views(b))
             for i, b in enumerate(step_blocks)]
    final = _views(agg_blocks[-1]) if agg_blocks else None
    return plain_trajectory(instance_id_of(path), steps, final, options=options, source=path,
                            agent="prometheus")
