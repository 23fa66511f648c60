"""An on-disk, content-addressed cache of parsed definitions (and of commits' file lists),
shared by runs and processes.

A leaderboard evaluates many runs over the same instances, and re-evaluations read the same
blobs again: parsing is the dominant cost, and a file's definitions depend only on its bytes,
its language, the preset and the code that found them. So an entry is keyed by

* the git blob id of the bytes (content-addressed: equal ids mean equal bytes),
* the language and the preset,
* a *namespace* digest of everything else the result depends on: this module's format version,
  the ctxeval version (which fixes the native tree-sitter runtime), the grammar package
  version and the query file text.

Any of those changing moves lookups to a fresh namespace, so stale entries are never read (old
namespaces are simply left behind; deleting the directory is always safe).

Beside the definitions, ``listings/`` keeps each commit's file list (:class:`ListingCache`): a
warm evaluation then starts no ``git ls-tree``, once per commit the slowest thing it still
did on the calling thread.

Writers are safe to run concurrently (threads, processes, several ``ctxeval`` at once): an entry
is written to a private temporary file in the destination directory and moved into place with
:func:`os.replace`, which is atomic, so a reader sees either no file or a complete one. Each
entry carries a digest of its payload and its key; a file that fails the check (truncated by a
crash, damaged on disk) counts as a miss and is rewritten by the next ``put``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import threading
import zlib
from pathlib import Path

import orjson

from .._core import TREE_SITTER_LANGUAGE_VERSION
from . import installed
from .grammars import GRAMMARS
from .node_types import QUERIES
from .symbols import Definition

#: Bumped whenever the entry layout or the meaning of a definition changes (2: definitions
#: found by the native core, whose tree-sitter runtime is fixed by the ctxeval version).
FORMAT_VERSION = 2

_MAGIC = b"CXS1"
_DIGEST = 16
_BLOB_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def default_cache_dir() -> Path:
    """``$CTXEVAL_CACHE_DIR``, else the user cache directory + ``ctxeval``.

    That is ``$XDG_CACHE_HOME/ctxeval`` or ``~/.cache/ctxeval`` on Linux and other Unixes,
    ``~/Library/Caches/ctxeval`` on macOS and ``%LOCALAPPDATA%\\ctxeval\\Cache`` on Windows.
    """
    env = os.environ.get("CTXEVAL_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA", "").strip()
        return (Path(base) if base else Path.home() / "AppData" / "Local") / "ctxeval" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ctxeval"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):  # the XDG spec says relative values are to be ignored
        return Path(xdg) / "ctxeval"
    return Path.home() / ".cache" / "ctxeval"


def is_blob_id(key: str) -> bool:
    """Whether ``key`` is a git object id (SHA-1 or SHA-256): only those are content keys."""
    return bool(_BLOB_ID.match(key))


def _version(dist: str) -> str:
    return installed.version(dist) or "?"


def _ctxeval_version() -> str:
    from .._core import __version__

    return str(__version__)


_ns_lock = threading.Lock()
_namespaces: dict[tuple[str, str], str] = {}


def namespace(lang: str, preset: str) -> str:
    """The digest of everything besides the bytes that a (language, preset) result depends on.

    Computed once per process and pair: versions of ctxeval (its native core holds the
    tree-sitter runtime) and the grammar package, and the text of the language's query file.
    """
    key = (lang, preset)
    with _ns_lock:
        got = _namespaces.get(key)
    if got is not None:
        return got
    module, _func, stem = GRAMMARS[lang]
    try:
        query = (QUERIES / f"{stem}.scm").read_bytes()
    except OSError:
        query = b""
    parts = [
        f"format={FORMAT_VERSION}", f"ctxeval={_ctxeval_version()}",
        f"tree-sitter-abi={TREE_SITTER_LANGUAGE_VERSION}",
        f"{module}={_version(module.replace('_', '-'))}", f"lang={lang}", f"preset={preset}",
    ]
    h = hashlib.blake2b(digest_size=10)
    h.update("\0".join(parts).encode())
    h.update(b"\0")
    h.update(query)
    got = f"{lang}-{preset}-{h.hexdigest()}"
    with _ns_lock:
        _namespaces[key] = got
    return got


# ---------------------------------------------------------------------------------------------
# Entry encoding.

def encode_definitions(defs: list[Definition]) -> bytes:
    """A compact JSON form: a table of kinds, then one flat array per definition.

    Line numbers are stored as deltas (start from the previous start, end from the start),
    which keeps most numbers short; ``qualified_name`` is stored only when it differs from
    ``name``.
    """
    kinds: dict[str, int] = {}
    rows: list[list[object]] = []
    prev_line = 0
    for d in defs:
        k = kinds.setdefault(d.kind, len(kinds))
        row: list[object] = [k, d.name, d.start_line - prev_line, d.end_line - d.start_line,
                             d.start_byte, d.end_byte - d.start_byte]
        if d.qualified_name != d.name:
            row.append(d.qualified_name)
        rows.append(row)
        prev_line = d.start_line
    return orjson.dumps([list(kinds), rows])


def decode_definitions(payload: bytes) -> list[Definition]:
    """The inverse of :func:`encode_definitions`; ValueError/TypeError on a malformed value."""
    kinds, rows = orjson.loads(payload)
    out: list[Definition] = []
    line = 0
    for row in rows:
        k, name, dl, span, sb, blen = row[:6]
        line += dl
        qualified = row[6] if len(row) > 6 else name
        out.append(Definition(kinds[k], name, qualified, line, line + span, sb, sb + blen))
    return out


def _seal(key: bytes, payload: bytes) -> bytes:
    body = zlib.compress(payload, 1)
    digest = hashlib.blake2b(key + body, digest_size=_DIGEST).digest()
    return _MAGIC + digest + body


def _open_seal(key: bytes, raw: bytes) -> bytes | None:
    """The payload, or None when the entry is damaged or belongs to another key."""
    if len(raw) < len(_MAGIC) + _DIGEST or not raw.startswith(_MAGIC):
        return None
    digest = raw[len(_MAGIC):len(_MAGIC) + _DIGEST]
    body = raw[len(_MAGIC) + _DIGEST:]
    if hashlib.blake2b(key + body, digest_size=_DIGEST).digest() != digest:
        return None
    try:
        return zlib.decompress(body)
    except zlib.error:
        return None


# ---------------------------------------------------------------------------------------------

class SealedStore:
    """Sealed entries under ``root/<section>``, written atomically; the file handling shared by
    the definition and listing caches (see the module docstring).

    Never raises on I/O: an unreadable entry is a miss, an unwritable directory only stops
    writes (counted in ``stats['write_failed']``). ``stats`` also counts ``hits``, ``misses``
    and ``corrupt`` (entries found damaged, to be rewritten).
    """

    section = ""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._base = self.root / self.section
        self._lock = threading.Lock()
        self._made: set[str] = set()
        self.stats: dict[str, int] = {"hits": 0, "misses": 0, "corrupt": 0, "writes": 0,
                                      "write_failed": 0}

    def _count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def _read(self, p: Path, key: bytes) -> bytes | None:
        """The payload of the entry at ``p``; None on a miss (a damaged entry is also counted
        as ``corrupt``: :meth:`_damaged` when its payload then fails to decode)."""
        try:
            with open(p, "rb") as fh:
                raw = fh.read()
        except OSError:
            self._count("misses")
            return None
        payload = _open_seal(key, raw)
        if payload is None:
            self._damaged()
        return payload

    def _damaged(self) -> None:
        self._count("corrupt")
        self._count("misses")

    def _write(self, p: Path, key: bytes, payload: bytes) -> bool:
        """Store ``payload`` at ``p`` atomically; False when I/O failed."""
        data = _seal(key, payload)
        parent = str(p.parent)
        tmp = f"{p}.tmp-{os.getpid()}-{threading.get_ident()}"
        try:
            try:
                if parent not in self._made:
                    os.makedirs(parent, exist_ok=True)
                    with self._lock:
                        self._made.add(parent)
                fh = open(tmp, "wb")  # noqa: SIM115 - closed below
            except FileNotFoundError:  # the directory was removed during the run
                os.makedirs(parent, exist_ok=True)
                fh = open(tmp, "wb")  # noqa: SIM115
            with fh:
                fh.write(data)
            os.replace(tmp, p)
        except OSError:
            self._count("write_failed")
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return False
        self._count("writes")
        return True


class SymbolCache(SealedStore):
    """Definitions by (blob id, language, preset) under ``root/symbols``; see the module
    docstring and :class:`SealedStore`."""

    section = "symbols"

    def path(self, blob_id: str, lang: str, preset: str) -> Path:
        """Where the entry lives: ``symbols/<namespace>/<id[:2]>/<id[2:]>``."""
        return self._base / namespace(lang, preset) / blob_id[:2] / blob_id[2:]

    def get(self, blob_id: str, lang: str, preset: str) -> list[Definition] | None:
        """The cached definitions, or None on a miss (also for a damaged entry)."""
        if not is_blob_id(blob_id):
            return None
        payload = self._read(self.path(blob_id, lang, preset), self._key(blob_id, lang, preset))
        if payload is None:
            return None
        try:
            defs = decode_definitions(payload)
        except (ValueError, TypeError, IndexError, KeyError):
            self._damaged()
            return None
        self._count("hits")
        return defs

    def put(self, blob_id: str, lang: str, preset: str, defs: list[Definition]) -> bool:
        """Store ``defs`` atomically; False when not stored (not a blob id, or I/O failed)."""
        if not is_blob_id(blob_id):
            return False
        return self._write(self.path(blob_id, lang, preset), self._key(blob_id, lang, preset),
                           encode_definitions(defs))

    @staticmethod
    def _key(blob_id: str, lang: str, preset: str) -> bytes:
        return f"{blob_id}\0{namespace(lang, preset)}".encode()


#: Bumped whenever what a listing holds changes (which files it keeps, its warnings).
LISTING_VERSION = 1


class ListingCache(SealedStore):
    """The regular files of a commit (path -> blob id, and the warnings of what was left out)
    by commit id, under ``root/listings``: what ``git ls-tree`` said of it, so that a warm
    evaluation starts no ``git ls-tree`` (a process per commit, about 5 ms on a
    400-file tree, much more on a large one).

    A commit id names its tree and so its listing for good, in any clone of any repository;
    only ctxeval's reading of a listing can change, and with it the namespace
    (:data:`LISTING_VERSION` and the ctxeval version). The repository is still asked whether
    it has the commit, on every open: a listing is only ever taken for a commit the
    repository holds.
    """

    section = "listings"

    def __init__(self, root: Path | str) -> None:
        super().__init__(root)
        h = hashlib.blake2b(digest_size=10)
        h.update(f"listing={LISTING_VERSION}\0ctxeval={_ctxeval_version()}".encode())
        self._ns = h.hexdigest()

    def path(self, commit_id: str) -> Path:
        """Where the entry lives: ``listings/<namespace>/<id[:2]>/<id[2:]>``."""
        return self._base / self._ns / commit_id[:2] / commit_id[2:]

    def get(self, commit_id: str) -> tuple[dict[str, str], list[str]] | None:
        """(blob id by path, warnings) of ``commit_id``, or None on a miss."""
        if not is_blob_id(commit_id):
            return None
        payload = self._read(self.path(commit_id), self._key(commit_id))
        if payload is None:
            return None
        try:
            blobs, warnings = orjson.loads(payload)
            if not isinstance(blobs, dict) or not isinstance(warnings, list):
                raise TypeError("not a listing")
        except (ValueError, TypeError):
            self._damaged()
            return None
        self._count("hits")
        return blobs, warnings

    def put(self, commit_id: str, blobs: dict[str, str], warnings: list[str]) -> bool:
        """Store a listing atomically; False when not stored (not a commit id, or I/O
        failed)."""
        if not is_blob_id(commit_id):
            return False
        return self._write(self.path(commit_id), self._key(commit_id),
                           orjson.dumps([blobs, warnings]))

    def _key(self, commit_id: str) -> bytes:
        return f"{commit_id}\0listing\0{self._ns}".encode()
