"""Versions of installed distributions (the grammar packages, recorded in every result's
sidecar and in the symbol cache's keys), read without importing :mod:`importlib.metadata`.

Importing that module imports the e-mail parser it reads ``METADATA`` with, and with it
``email.utils``, ``socket``, ``zipfile`` and ``csv``: about 30 ms of every evaluation's start
(a fifth of what ``ctxeval evaluate`` imports), for a dozen version strings. The answer is the
same: the first ``<name>-<version>.dist-info`` directory on :data:`sys.path` whose name
normalises to the distribution's (as :mod:`importlib.metadata` searches), and the ``Version``
field of its ``METADATA``. Any other layout (an ``.egg-info`` met first, a zip, a custom
finder) is left to :mod:`importlib.metadata` itself.
"""

from __future__ import annotations

import functools
import os
import re
import sys

_SEPARATORS = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    """A distribution name as :mod:`importlib.metadata` compares them (PEP 503)."""
    return _SEPARATORS.sub("_", name).lower()


def _listing(entry: str) -> list[str]:
    try:
        return os.listdir(entry or ".")
    except OSError:  # not a directory (a zip), or gone
        return []


def _metadata_version(path: str) -> str | None:
    """The ``Version`` field of a ``METADATA`` file: its headers end at the first empty line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    return None
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None


@functools.lru_cache(maxsize=256)
def _dist_info(want: str, path: tuple[str, ...]) -> str | None:
    """The version in the first ``.dist-info`` directory on ``path`` for the normalised name
    ``want``; None when there is none (or it has no readable ``Version``: then
    :mod:`importlib.metadata` decides). Kept per name and path: each grammar's version is
    asked for by the sidecar and by the symbol cache's keys, and each asking listed every
    directory of the path."""
    for entry in path:
        for child in _listing(entry):
            low = child.lower()
            for ext in (".dist-info", ".egg-info"):
                if low.endswith(ext) and _normal(low[: -len(ext)].partition("-")[0]) == want:
                    if ext == ".egg-info":
                        return None  # found first, as importlib.metadata finds it: its answer
                    return _metadata_version(os.path.join(entry or ".", child, "METADATA"))
    return None


def version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, None when it is not installed."""
    got = _dist_info(_normal(dist), tuple(sys.path))
    if got is not None:
        return got
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
