"""``<out>.meta.json``: what the rows beside it were made with, and whether ``--resume`` may
add to them.

The metadata is written when the first row is (so that a run killed half-way leaves rows that
say what made them) and again at the end with the run's statistics. ``--resume`` keeps the rows
already written and evaluates only the rest, which is honest only when the rest is evaluated as
the kept rows were: against the same gold, under the same preset, final-context policy, text
metrics, forced input format, ctxeval version and grammar versions. :func:`resume_conflicts`
names every difference; the evaluation then refuses to start (rows scored two ways would sit
in one file with nothing to tell them apart, and a report would average them). Re-scoring the
kept rows instead was considered and rejected: their trajectories may no longer be where they
were read from, and a user who changed the gold on purpose gets the same result, faster, from a
fresh ``--out``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..._core import __version__
from ...errors import CtxevalError, InputError


class ResumeConflict(CtxevalError):
    """``--resume`` asked to add rows made differently from the rows already there."""

    kind = "resume_conflict"


def meta_path(out: Path) -> Path:
    """Where the metadata of results file ``out`` is."""
    return out.with_name(out.name + ".meta.json")


@dataclass(frozen=True, slots=True)
class Settings:
    """What decides a row's numbers besides its own inputs, as recorded in the metadata."""

    preset: str
    final_policy: str
    text: bool = False
    fmt: str | None = None
    gold_sources: tuple[tuple[str, str], ...] = ()
    grammars: dict[str, str] = field(default_factory=dict)
    version: str = __version__
    #: The ranking block's cut-offs and line budget (``{"k": [...], "budget_lines": n}``;
    #: None: rows without a ranking block).
    ranking: dict[str, Any] | None = None

    def to_meta(self) -> dict[str, Any]:
        return {"ctxeval_version": self.version, "preset": self.preset,
                "final_policy": self.final_policy, "text": self.text, "format": self.fmt,
                "grammars": self.grammars, "ranking": self.ranking,
                "gold_sources": [{"path": p, "sha256": h} for p, h in self.gold_sources]}


def stage_meta(out: Path, meta: dict[str, Any]) -> Path:
    """``<out>.meta.json`` written beside its place, not yet in it (:func:`commit_meta` puts it
    there): a crash never leaves half a file, the write that can fail (a full disk) comes
    before anything else changes, and a failed write leaves no temporary file; an ``OSError``
    names the file."""
    path = meta_path(out)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise named_os_error(exc, path) from exc
    return tmp


def named_os_error(exc: OSError, path: Path) -> OSError:
    """``exc`` again, naming ``path`` (the file the user knows, not a temporary one): before,
    a full disk said 'No space left on device: None'."""
    return OSError(exc.errno or errno.EIO, os.strerror(exc.errno) if exc.errno else str(exc),
                   str(path))


def replace_into(tmp: Path, path: Path) -> Path:
    """Rename a file written whole under ``tmp`` into place; on failure ``tmp`` is removed and
    the error names ``path``."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise named_os_error(exc, path) from exc
    return path


def commit_meta(tmp: Path, out: Path) -> Path:
    """Rename staged metadata into place (a rename needs no room on the disk)."""
    return replace_into(tmp, meta_path(out))


def read_meta(out: Path) -> dict[str, Any] | None:
    """The metadata beside ``out``; None when there is none. A file that is there but cannot
    be read as metadata is an :class:`InputError`."""
    path = meta_path(out)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    try:
        meta = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path=str(path)) from exc
    if not isinstance(meta, dict):
        raise InputError("not the metadata of a results file (not a JSON object)",
                         path=str(path))
    return meta


def _short(digest: Any) -> str:
    return str(digest)[:12] + "…" if isinstance(digest, str) and len(digest) > 12 else str(digest)


def _gold_difference(kept: list[Any], now: Iterable[tuple[str, str]]) -> str | None:
    """What changed between the gold the rows were made with and the gold given now (compared
    by content: the same files given by another path are the same gold)."""
    was = {str(g.get("sha256")): str(g.get("path")) for g in kept if isinstance(g, dict)}
    new = {h: p for p, h in now}
    if set(was) == set(new):
        return None
    gone = [f"{p} (sha256 {_short(h)})" for h, p in was.items() if h not in new]
    added = [f"{p} (sha256 {_short(h)})" for h, p in new.items() if h not in was]
    parts = []
    if gone:
        parts.append("made with gold " + ", ".join(gone))
    if added:
        parts.append("now given " + ", ".join(added))
    return "the gold changed: " + "; ".join(parts)


def resume_conflicts(meta: dict[str, Any], settings: Settings) -> list[str]:
    """Each way the rows described by ``meta`` were made differently from how ``settings``
    would make the rest, in words; empty when ``--resume`` may go on."""
    out: list[str] = []

    def differs(key: str, label: str, now: Any, default: Any = None) -> None:
        was = meta.get(key, default)
        if was != now:
            out.append(f"{label} {was if was is not None else 'none'} "
                       f"(now {now if now is not None else 'none'})")

    differs("ctxeval_version", "made by ctxeval", settings.version)
    differs("preset", "preset", settings.preset)
    differs("final_policy", "--final", settings.final_policy)
    differs("text", "--text", settings.text, default=False)
    differs("format", "--format", settings.fmt)
    differs("ranking", "ranking (--k, --budget-lines)", settings.ranking)
    gold = _gold_difference(meta.get("gold_sources") or [], settings.gold_sources)
    if gold:
        out.append(gold)
    grammars = meta.get("grammars")
    if isinstance(grammars, dict) and grammars != settings.grammars:
        changed = sorted(k for k in set(grammars) | set(settings.grammars)
                         if grammars.get(k) != settings.grammars.get(k))
        out.append("grammar versions changed (" + ", ".join(
            f"{k} {grammars.get(k) or 'none'} -> {settings.grammars.get(k) or 'none'}"
            for k in changed[:5]) + ")")
    return out


def rows_conflicts(preset: str | None, final_policy: str | None, settings: Settings
                   ) -> list[str]:
    """What the rows themselves record against ``settings`` (their preset and final policy),
    for rows that have no metadata beside them."""
    out = []
    if preset is not None and preset != settings.preset:
        out.append(f"preset {preset} (now {settings.preset})")
    if final_policy is not None and final_policy != settings.final_policy:
        out.append(f"--final {final_policy} (now {settings.final_policy})")
    return out


def conflict_error(out: Path, rows: int, conflicts: list[str]) -> ResumeConflict:
    """The refusal of ``--resume``: what differs and how to go on."""
    return ResumeConflict(
        f"--resume cannot add to the {rows} row{'s' * (rows != 1)} there, made otherwise than "
        "this evaluation would make the rest: " + "; ".join(conflicts) + ". Rows made "
        "differently would be mixed in one file and averaged together: evaluate into a new "
        "--out, or leave out --resume to replace them",
        path=str(out))


def command_line(argv: list[str] | None) -> list[str]:
    return list(sys.argv if argv is None else argv)
