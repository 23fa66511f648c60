"""Finding and reading prediction inputs: files, directories and globs in any agent format.

A directory that an adapter recognises as a whole (an AutoCodeRover task directory, an
OpenHands ``llm_completions/<id>/`` directory) is one input; any other directory is walked,
following symbolic links, in sorted path order. One unreadable input is reported and the rest go
on.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .. import lfs
from ..errors import AdapterError, Problem
from ..filekinds import special_problem
from ..model import Trajectory
from . import adapters
from .adapters import ReadOptions
from .identify import describe

# Suffixes that agent files carry after the instance id.
_ID_SUFFIXES = (".checkpoints.jsonl", ".patch_context.txt", ".context.json", ".traj.json",
                "_traj.json", ".trajectory.json", ".traj", ".jsonl", ".json", ".log", ".txt")


@dataclass(slots=True)
class ReadResult:
    """What one input gave: trajectories, or the problem that stopped it."""

    path: Path
    trajectories: list[Trajectory] = field(default_factory=list)
    problem: Problem | None = None
    fmt: str | None = None


def guess_instance_id(path: Path) -> str | None:
    """The instance id a file or directory name suggests (for reporting unreadable inputs)."""
    name = path.name
    for suf in _ID_SUFFIXES:
        if name.endswith(suf):
            return name[: -len(suf)] or None
    return name or None


def expand(spec: str | Path) -> list[Path]:
    """A path or a glob pattern → the paths it names, sorted; nothing → empty list."""
    s = str(spec)
    if any(ch in s for ch in "*?[") and not Path(s).exists():
        return [Path(p) for p in sorted(glob.glob(s, recursive=True))]
    p = Path(s)
    return [p] if p.exists() or p.is_symlink() else []


def _detect(path: Path, fmt: str | None):
    if fmt:
        adapters.check_not_lfs_pointer(path)
        return adapters.get(fmt)
    return adapters.detect(path)


def walk(path: Path, fmt: str | None = None, _seen: set[Path] | None = None
         ) -> Iterator[tuple[Path, bool]]:
    """Inputs under ``path`` in sorted order as ``(path, explicit)``; ``explicit`` is False for
    files met while walking a directory (those are skipped silently when unrecognised)."""
    seen = set() if _seen is None else _seen
    try:
        real = path.resolve()
    except OSError:
        real = path
    if real in seen:
        return
    seen.add(real)
    if not path.is_dir():
        yield path, True
        return
    try:
        _detect(path, fmt)
        yield path, True
        return
    except AdapterError:
        pass
    for child in sorted(path.iterdir(), key=lambda p: p.name):
        if child.name.startswith("."):
            continue
        if child.is_dir():
            yield from walk(child, fmt, seen)
        else:
            yield child, False


def list_inputs(specs: list[str | Path], fmt: str | None = None
                ) -> list[tuple[Path, bool] | Problem]:
    """Every input the specs name, in order, as ``(path, explicit)``; a spec naming nothing is
    a :class:`Problem` in its place. Listing first lets a progress bar know the total."""
    out: list[tuple[Path, bool] | Problem] = []
    for spec in specs:
        paths = expand(spec)
        if not paths:
            out.append(Problem("missing_input", "no such file, directory or glob match",
                               path=str(spec)))
            continue
        seen: set[Path] = set()
        for top in paths:
            special = special_problem(top)
            if special is not None:
                out.append(Problem("not_a_file", special, path=str(top)))
                continue
            out.extend(walk(top, fmt, seen))
    return out


def _unrecognised(path: Path, exc: AdapterError, explicit: bool, fmt: str | None
                  ) -> ReadResult | None:
    """What an input no adapter reads gives: None for a file met while walking a directory
    (skipped), else its problem, saying what the file looks like when it is something known
    (gold or results given as trajectories: "no adapter recognises" alone does not help)."""
    # a pointer met while walking is still worth a word: the user meant it as an input
    if not explicit and exc.kind != lfs.KIND:
        return None
    problem = exc.to_problem()
    looks = describe(path) if explicit and not fmt and exc.kind != lfs.KIND else None
    if looks:  # what the file is comes first: that is the user's mistake
        problem = Problem(problem.kind, f"this is {looks}, not an agent's run; "
                          f"{problem.message}", problem.path)
    return ReadResult(path, problem=problem)


def read_input(path: Path, explicit: bool, *, fmt: str | None = None,
               options: ReadOptions | None = None) -> ReadResult | None:
    """Read one listed input; None for an unrecognised file met while walking a directory."""
    opts = options or ReadOptions()
    try:
        mod = _detect(path, fmt)
    except AdapterError as exc:
        return _unrecognised(path, exc, explicit, fmt)
    try:
        trajs = mod.read(path, opts)
    except AdapterError as exc:
        return ReadResult(path, problem=exc.to_problem(), fmt=mod.FORMAT)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError,
            UnicodeError, RecursionError) as exc:
        return ReadResult(path, fmt=mod.FORMAT, problem=Problem(
            "bad_trajectory", f"{mod.FORMAT}: {type(exc).__name__}: {exc}", path=str(path)))
    return ReadResult(path, trajectories=trajs, fmt=mod.FORMAT)


def iter_input(path: Path, explicit: bool, *, fmt: str | None = None,
               options: ReadOptions | None = None
               ) -> ReadResult | tuple[str, Iterator[Trajectory | AdapterError]] | None:
    """Like :func:`read_input`, but a format that can stream (``iter_read``) is not read whole:
    the result is ``(format, records)``, where a record that cannot be read is its error."""
    try:
        mod = _detect(path, fmt)
    except AdapterError as exc:
        return _unrecognised(path, exc, explicit, fmt)
    if hasattr(mod, "iter_read"):
        return mod.FORMAT, mod.iter_read(path, options or ReadOptions())
    return read_input(path, explicit, fmt=fmt, options=options)


def read_inputs(specs: list[str | Path], *, fmt: str | None = None,
                options: ReadOptions | None = None) -> Iterator[ReadResult]:
    """Read every input named by ``specs`` (files, directories, globs), in order."""
    for item in list_inputs(specs, fmt):
        if isinstance(item, Problem):
            yield ReadResult(Path(item.path or ""), problem=item)
            continue
        res = read_input(item[0], item[1], fmt=fmt, options=options)
        if res is not None:
            yield res


def display_path(path: Path) -> str:
    """A path as the user gave it, relative to the working directory when it is inside it."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
