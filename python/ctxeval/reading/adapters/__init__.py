"""One adapter per agent format, behind one registry and one detection function.

Every module in this package that defines ``FORMAT`` is an adapter. It provides:

- ``FORMAT: str`` — the name users pass to ``--format`` (``mini-swe-agent``, ``swe-agent``, ...);
- ``PRIORITY: int`` — detection order, lower first (specific formats before generic ones);
- ``detect(path: Path, head: bytes) -> bool`` — whether ``path`` (a file, or a directory) is in
  this format; ``head`` holds the first 64 KiB of a file (empty for a directory);
- ``read(path: Path, options: ReadOptions) -> list[Trajectory]`` — the trajectories in it, raising
  :class:`~ctxeval.errors.AdapterError` (never anything else) when it cannot be read.

Adding an adapter means adding a module and its line in :data:`REGISTRY`, the detection
order; ``tests/reading/test_detection.py`` checks the table against the modules (a module
missing from it, or out of its ``PRIORITY`` order, fails there). The table is written out so
that detection imports an adapter only when it reaches it: importing all 25 cost every
evaluation a tenth of a second of CPU, most of it for formats the input is not in.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
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


#: Every adapter as (module, ``FORMAT``), in detection order: by ``PRIORITY``, then format.
REGISTRY: tuple[tuple[str, str], ...] = (
    ("dataset", "dataset"),
    ("neutral", "neutral"),
    ("ranked", "ranked"),
    ("cb_sweagent", "sweagent-checkpoints"),
    ("cb_sweagent_context_json", "sweagent-context-json"),
    ("cb_sweagent_patch_context", "sweagent-patch-context-txt"),
    ("cb_agentless", "agentless-traj"),
    ("locagent", "locagent"),
    ("agentless", "agentless"),
    ("autocoderover", "autocoderover"),
    ("moatless", "moatless"),
    ("atif", "atif"),
    ("claude_code_stream", "claude-code-stream"),
    ("claude_code", "claude-code"),
    ("codex", "codex"),
    ("codex_exec", "codex-exec"),
    ("gemini_cli", "gemini-cli"),
    ("mini_swe_agent", "mini-swe-agent"),
    ("opencode", "opencode"),
    ("cb_prometheus", "prometheus"),
    ("openhands_v1", "openhands-v1"),
    ("openhands", "openhands"),
    ("openhands_completions", "openhands-completions"),
    ("swe_agent", "swe-agent"),
    ("cb_unified", "contextbench-pred"),
)


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def _in_order() -> Iterator[ModuleType]:
    """The adapter modules in detection order, each imported when it is reached."""
    for name, _fmt in REGISTRY:
        yield _module(name)


def formats() -> list[str]:
    return [fmt for _name, fmt in REGISTRY]


def get(fmt: str) -> ModuleType:
    for name, known in REGISTRY:
        if fmt == known:
            return _module(name)
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
    for mod in _in_order():
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
