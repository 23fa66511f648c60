"""One adapter per agent format, behind one registry and one detection function.

Every module in this package that defines ``FORMAT`` is an adapter. It provides:

- ``FORMAT: str`` — the name users pass to ``--format`` (``mini-swe-agent``, ``swe-agent``, ...);
- ``PRIORITY: int`` — detection order, lower first (specific formats before generic ones);
- ``detect(path: Path, head: bytes) -> bool`` — whether ``path`` (a file, or a directory) is in
  this format; ``head`` holds the first 64 KiB of a file (empty for a directory);
- ``read(path: Path, options: ReadOptions) -> list[Trajectory]`` — the trajectories in it, raising
  :class:`~ctxeval.errors.AdapterError` (never anything else) when it cannot be read.

Modules are discovered, so adding an adapter means adding a module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

from ... import lfs
from ...errors import AdapterError
from ...model import Trajectory

HEAD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read: the preset decides between ctxeval's reading and ContextBench's.

    ``skip`` are instances whose rows ``--resume`` keeps: a streaming adapter (``iter_read``)
    that can tell a record's instance before reading it whole may give such a record as a
    trajectory with nothing but its id (it is not scored), so that resuming a large file does
    not read again what is already done."""

    preset: str = "strict"
    instance_id: str | None = None
    run: str | None = None
    skip: frozenset[str] = frozenset()


@cache
def adapters() -> tuple[ModuleType, ...]:
    """All adapter modules, in detection order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "FORMAT") and hasattr(mod, "read") and hasattr(mod, "detect"):
            found.append(mod)
    return tuple(sorted(found, key=lambda m: (getattr(m, "PRIORITY", 100), m.FORMAT)))


def formats() -> list[str]:
    return [m.FORMAT for m in adapters()]


def get(fmt: str) -> ModuleType:
    for mod in adapters():
        if fmt == mod.FORMAT:
            return mod
    raise AdapterError(f"unknown format {fmt!r}; known: {', '.join(formats())}")


def _head(path: Path) -> bytes:
    if path.is_dir():
        return b""
    try:
        with path.open("rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc


def check_not_lfs_pointer(path: Path, head: bytes | None = None) -> None:
    """Raise an :class:`AdapterError` of kind ``lfs_pointer`` when ``path`` is a Git LFS
    pointer file rather than the trajectory it stands for."""
    if head is None:
        head = _head(path)
    if lfs.is_pointer(head):
        raise AdapterError(lfs.message(head, "trajectory"), path=str(path), kind=lfs.KIND)


def detect(path: Path) -> ModuleType:
    """The adapter for ``path``, or :class:`AdapterError` saying no format matched."""
    head = _head(path)
    check_not_lfs_pointer(path, head)
    for mod in adapters():
        try:
            if mod.detect(path, head):
                return mod
        except (AdapterError, ValueError, UnicodeError, RecursionError):
            # a file no detector can look at (absurdly nested JSON: RecursionError in json)
            # is not that detector's format
            continue
    raise AdapterError("no adapter recognises this input (use --format to force one)",
                       path=str(path))


def read(path: Path, fmt: str | None = None, options: ReadOptions | None = None
         ) -> list[Trajectory]:
    """Read ``path`` with the named adapter, or the detected one."""
    if fmt:
        check_not_lfs_pointer(path)
    mod = get(fmt) if fmt else detect(path)
    opts = options or ReadOptions()
    try:
        return mod.read(path, opts)
    except AdapterError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, UnicodeError) as exc:
        raise AdapterError(f"{mod.FORMAT}: cannot read ({type(exc).__name__}: {exc})",
                           path=str(path)) from exc
