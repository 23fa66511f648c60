"""Agent paths to repo-relative POSIX paths, and matching them against a tree's files.

Agents name files the way their sandbox saw them (``/testbed/x.py``, ``/workspace/<dir>/x.py``,
``/home/<repo>/x.py``, ``./x.py``, Windows separators ...). Metrics are defined on repo-relative
paths at the base commit (spec ``metrics.md``, "Coordinates"), so every view goes through
:func:`normalise_path` and then :meth:`PathIndex.resolve`, which only ever answers with a path
that names a regular file of the tree, or ``None``.

Choices written down here because they change numbers:

* Trailing ``:12`` line references are *not* stripped (the adapters know when a colon is one).
* ``..`` is resolved lexically; a ``..`` above the start is dropped.
* A URL other than ``file://`` (``repo://github.com/o/r/x.py``: an MCP view of a repository
  other than the instance's, ``https://...``) names no file of the tree: it never resolves.
* Absolute paths under system roots (``/tmp``, ``/proc``, ``/dev``, ``/sys``, ``/etc``) and
  paths through ``site-packages``/``dist-packages``/``node_modules`` are installed or scratch
  copies, not the repository: they resolve only if they name a repository file exactly after
  normalisation (never for the system roots), never by stripping or suffix matching.
* Resolution order: exact match; then drop leading components while the path names no file
  (the longest suffix that is a file wins); then a suffix match on component boundaries, only
  when exactly one file matches. Anything ambiguous is ``None``: a wrong credit is worse than a
  missed one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

__all__ = ["FOREIGN_COMPONENTS", "FOREIGN_ROOTS", "PathIndex", "normalise_path", "split_repo"]

#: First components of absolute paths that are never the repository.
FOREIGN_ROOTS = frozenset({"tmp", "proc", "dev", "sys", "etc"})
#: Components that mark an installed or vendored copy rather than the repository's own file.
FOREIGN_COMPONENTS = frozenset({"site-packages", "dist-packages", "node_modules"})

_DRIVE = re.compile(r"^[A-Za-z]:/")
_REPO_URL = re.compile(r"^(?:[a-z+]+://[^/]+/|git@[^:]+:)", re.IGNORECASE)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def split_repo(repo: str | None) -> tuple[str | None, str | None]:
    """``owner/name`` (also a GitHub URL, ``.git`` suffix, or a bare ``name``) -> (owner, name)."""
    if not repo:
        return None, None
    r = _REPO_URL.sub("", repo.strip()).strip("/")
    if r.endswith(".git"):
        r = r[:-4]
    parts = [p for p in r.split("/") if p]
    if not parts:
        return None, None
    if len(parts) == 1:
        return None, parts[0]
    return parts[-2], parts[-1]


def _components(agent_path: str, repo: str | None) -> tuple[list[str], bool]:
    """Normalised components of ``agent_path`` and whether it is foreign (never the repo)."""
    s = agent_path.strip()
    if s.startswith("file://"):
        s = s[len("file://"):]
    url = bool(_URL.match(s))
    s = s.replace("\\", "/")
    if _DRIVE.match(s):
        s = s[2:]
    absolute = s.startswith("/")
    parts: list[str] = []
    for c in s.split("/"):
        if c in ("", "."):
            continue
        if c == "..":
            if parts:
                parts.pop()
            continue
        parts.append(c)
    if not parts:
        return parts, False
    if url or (absolute and parts[0] in FOREIGN_ROOTS):
        return parts, True
    owner, name = split_repo(repo)
    return _strip_root(parts, absolute, owner, name), False


def _is_repo_dir(component: str, owner: str | None, name: str | None) -> bool:
    """``owner__name`` or ``owner__name__<version>`` (SWE-bench / Multi-SWE-bench images)."""
    if name is None:
        return False
    if owner is not None:
        prefix = f"{owner}__{name}"
        return component == prefix or component.startswith(prefix + "__")
    return component.endswith(f"__{name}") or f"__{name}__" in component


def _strip_root(parts: list[str], absolute: bool, owner: str | None, name: str | None) -> list[str]:
    """Drop one sandbox root: the container prefix the agent's tree was mounted at."""
    n = len(parts)
    if absolute:
        first = parts[0]
        if first == "testbed":
            return parts[1:]
        if first in ("workspace", "home"):
            return parts[2:] if n >= 3 else parts[1:]
        if "__" in first:
            return parts[1:]
        if owner is not None and name is not None and n >= 3 and parts[:2] == [owner, name]:
            return parts[2:]
        if name is not None and first == name and n >= 2:
            return parts[1:]
        return parts
    if n >= 2 and _is_repo_dir(parts[0], owner, name):
        return parts[1:]
    return parts


def normalise_path(agent_path: str, repo: str | None = None) -> str:
    """A repo-relative POSIX path for what the agent wrote (not checked against any tree).

    ``repo`` (``owner/name``) lets ``/<name>/...``, ``/<owner>/<name>/...`` and relative
    ``<owner>__<name>[__ver]/...`` prefixes be recognised as the sandbox root.
    """
    parts, _ = _components(agent_path, repo)
    return "/".join(parts)


class PathIndex:
    """The regular files of one tree, indexed by basename so that resolving a view is cheap."""

    __slots__ = ("_by_base", "_cache", "_lock", "files")

    def __init__(self, files: Iterable[str]) -> None:
        self.files: frozenset[str] = frozenset(files)
        by_base: dict[str, list[str]] = {}
        for f in self.files:
            by_base.setdefault(f.rpartition("/")[2], []).append(f)
        self._by_base = {k: tuple(sorted(v)) for k, v in by_base.items()}
        self._cache: dict[tuple[str, str | None], str | None] = {}
        self._lock = threading.Lock()

    def resolve(self, agent_path: str, repo: str | None = None) -> str | None:
        """The file of this tree the agent meant, or ``None`` when none or several could be."""
        key = (agent_path, repo)
        try:
            return self._cache[key]
        except KeyError:
            pass
        out = self._resolve(agent_path, repo)
        with self._lock:
            self._cache[key] = out
        return out

    def _resolve(self, agent_path: str, repo: str | None) -> str | None:
        parts, foreign = _components(agent_path, repo)
        if foreign or not parts:
            return None
        path = "/".join(parts)
        if path in self.files:
            return path
        if any(c in FOREIGN_COMPONENTS for c in parts):
            return None
        for i in range(1, len(parts)):
            cand = "/".join(parts[i:])
            if cand in self.files:
                return cand
        tail = "/" + path
        hits = [f for f in self._by_base.get(parts[-1], ()) if f.endswith(tail)]
        return hits[0] if len(hits) == 1 else None
