"""Read repositories exactly as they were at an instance's base commit.

Metrics are defined on the base-commit version of every file (spec ``gold-and-repos.md``,
"Repositories"), so nothing here ever reads a working tree that may have moved: a git repository
is read through one long-lived ``git cat-file --batch`` per repository (no checkout, no CRLF
conversion, no filters), with one ``git ls-tree -r -z`` per commit for the list of files (kept
on disk by commit id when a :class:`~ctxeval.truth.cache.ListingCache` is given). Plain
directories are read as they are, and say so when the commit cannot be checked.

A :class:`RepoCache` lives for a whole run: one reader per repository, one tree index per
commit, and file bytes cached by git blob id (bounded), shared between instances. Everything is
safe to call from several threads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from ..errors import RepoError, excerpt
from ..paths import PathIndex, normalise_path, split_repo
from .cache import ListingCache
from .gitproc import (
    DEFAULT_TIMEOUT,
    FETCH_FACTOR,
    Deadlines,
    GitTimeout,
    popen_long_lived,
    timeout_from,
)
from .gitproc import run as run_git

__all__ = ["RepoCache", "RepoError", "RepoSnapshot", "git_blob_id", "normalise_path"]

_REGULAR_MODES = (b"100644", b"100755", b"100664")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_SAFE_REV = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./^{}~-]*$")
_HEX = re.compile(r"^[0-9a-fA-F]{7,64}$")
_CACHE_BYTES = 256 * 1024 * 1024
_TREES_PER_REPO = 32  # file lists kept per repository (a django tree is ~1 MB)
#: ``git cat-file`` processes kept open at once: each holds its own caches (tens of MB on a
#: large repository), so a run over hundreds of repositories closes the least recently used.
_OPEN_READERS = 4
#: Per-process cache of git's delta bases (git's default is 96 MiB): reads of one version after
#: another mostly hit the same bases, and a smaller cache bounds a reader's memory.
_DELTA_BASE_CACHE = "32m"


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob with these bytes (``git hash-object``)."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def _decode_name(raw: bytes, odd: list[str]) -> str:
    """File names are text everywhere else; non-UTF-8 bytes are shown escaped and noted."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        name = raw.decode("utf-8", "backslashreplace")
        odd.append(name)
        return name


class _BlobCache:
    """File bytes by blob id, least recently used first out once over a byte budget."""

    def __init__(self, max_bytes: int = _CACHE_BYTES) -> None:
        self._max = max_bytes
        self._size = 0
        self._data: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            data = self._data.get(key)
            if data is not None:
                self._data.move_to_end(key)
            return data

    def put(self, key: str, data: bytes) -> None:
        if len(data) > self._max // 4:
            return
        with self._lock:
            if key in self._data:
                return
            self._data[key] = data
            self._size += len(data)
            while self._size > self._max:
                _, old = self._data.popitem(last=False)
                self._size -= len(old)


def _git_env(fetch: bool) -> dict[str, str]:
    env = dict(os.environ)
    # GIT_NO_REPLACE_OBJECTS: a commit is read as its id names it, never as a replace ref
    # swaps it for (so its file list may be kept by that id, :class:`ListingCache`).
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0",
               GIT_NO_REPLACE_OBJECTS="1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"):
        env.pop(var, None)
    if not fetch:
        # A blobless clone would otherwise go to the network for a missing blob.
        env["GIT_NO_LAZY_FETCH"] = "1"
    return env


def _stop(holder: list[subprocess.Popen[bytes] | None]) -> None:
    """End a cat-file process: EOF on stdin makes it exit; kill it if it does not."""
    proc = holder[0]
    holder[0] = None
    if proc is None:
        return
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


class _Tree:
    """The regular files of one commit: path -> blob id, plus the resolving index."""

    __slots__ = ("blobs", "index", "warnings")

    def __init__(self, blobs: dict[str, str], warnings: list[str]) -> None:
        self.blobs = blobs
        self.index = PathIndex(blobs)
        self.warnings = warnings


def _committer_time(commit: bytes) -> int:
    """The committer time in a commit object's header (0 when it has none)."""
    for line in commit.split(b"\n"):
        if not line:
            break  # end of the header
        if line.startswith(b"committer "):
            parts = line.rsplit(b" ", 2)
            return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0
    return 0


class _GitReader:
    """One repository's object reader: a single ``git cat-file --batch`` behind a lock."""

    def __init__(self, git_dir: Path, label: str, env: dict[str, str],
                 deadlines: Deadlines | None = None,
                 listings: ListingCache | None = None) -> None:
        self.git_dir = git_dir
        self.listings = listings
        self.label = label
        self._env = env
        self._deadlines = deadlines or Deadlines(DEFAULT_TIMEOUT)
        #: Why this repository's git is not asked again in this run (it timed out once).
        self._hung: str | None = None
        self._lock = threading.Lock()
        self._tree_lock = threading.Lock()
        self._trees: OrderedDict[str, _Tree] = OrderedDict()
        self._commits: dict[str, str | None] = {}
        self._times: dict[str, int] = {}
        self._holder: list[subprocess.Popen[bytes] | None] = [None]
        self._finalizer = weakref.finalize(self, _stop, self._holder)
        objects = git_dir / "objects"
        self._objects: str | None = str(objects) if objects.is_dir() else None
        self._loose_hits = self._loose_misses = 0

    def _git(self, *args: str) -> list[str]:
        return ["git", f"--git-dir={self.git_dir}", "-c",
                f"core.deltaBaseCacheLimit={_DELTA_BASE_CACHE}", *args]

    def _proc(self) -> subprocess.Popen[bytes]:
        proc = self._holder[0]
        if proc is None:  # a dead process shows as EOF or a broken pipe, then is restarted
            proc = popen_long_lived(
                self._git("cat-file", "--batch"), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self._env)
            self._holder[0] = proc
        return proc

    def _timed_out(self, what: str) -> GitTimeout:
        """The error of a request whose answer was late (the process was killed); the
        repository is not asked again in this run."""
        self._hung = (f"git {what} did not answer within {self._deadlines.timeout:g} s in "
                      f"{self.label} and was stopped (--git-timeout)")
        return GitTimeout(self._hung, path=self.label)

    def _check_hung(self) -> None:
        if self._hung is not None:
            raise GitTimeout(self._hung + "; not asked again in this run", path=self.label)

    def _ask(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of ``name``, or None when git has no such object."""
        for attempt in (0, 1):
            with self._lock:
                self._check_hung()
                watch = None
                try:
                    proc = self._proc()
                    assert proc.stdin is not None and proc.stdout is not None
                    with self._deadlines.watch(proc) as watch:
                        proc.stdin.write(name.encode() + b"\n")
                        proc.stdin.flush()
                        header = proc.stdout.readline()
                        if not header:
                            raise OSError("git cat-file ended")
                        fields = header.split()
                        if len(fields) != 3:
                            return None  # "<name> missing" / "<name> ambiguous"
                        size = int(fields[2])
                        data = proc.stdout.read(size)
                        if len(data) != size or proc.stdout.read(1) != b"\n":
                            raise OSError("short read from git cat-file")
                    return fields[0].decode(), fields[1].decode(), data
                except (OSError, ValueError):
                    _stop(self._holder)
                    if watch is not None and watch.expired:
                        raise self._timed_out("cat-file") from None
                    if attempt:
                        raise RepoError(f"git cat-file failed in {self.label}", kind="bad_repo",
                                        path=self.label) from None
        return None

    def commit_time(self, commit_id: str) -> int:
        """The committer time of a commit (seconds since the epoch; 0 when unreadable): the
        order in which versions of one path are best parsed, each from the one before."""
        got = self._times.get(commit_id)
        if got is None:
            obj = self._ask(commit_id)
            got = self._times[commit_id] = _committer_time(obj[2]) \
                if obj is not None and obj[1] == "commit" else 0
        return got

    def commit_id(self, rev: str) -> str | None:
        """The full id of commit ``rev`` in this repository, or None if it is not there
        (its committer time is kept from the same answer)."""
        if rev in self._commits:
            return self._commits[rev]
        out = None
        if _SAFE_REV.match(rev):
            got = self._ask(f"{rev}^{{commit}}")
            if got and got[1] == "commit":
                out = got[0]
                self._times.setdefault(out, _committer_time(got[2]))
        self._commits[rev] = out
        return out

    def tree(self, commit_id: str) -> _Tree:
        """The file list of a commit, read once and shared by every instance at that commit."""
        with self._tree_lock:
            tree = self._trees.get(commit_id)
            if tree is None:
                tree = self._list(commit_id)
                self._trees[commit_id] = tree
                while len(self._trees) > _TREES_PER_REPO:
                    self._trees.popitem(last=False)  # open snapshots keep theirs alive
            else:
                self._trees.move_to_end(commit_id)
            return tree

    def _list(self, commit_id: str) -> _Tree:
        if self.listings is not None:
            kept = self.listings.get(commit_id)
            if kept is not None:
                return _Tree(*kept)
        self._check_hung()
        try:
            res = run_git(self._git("ls-tree", "-r", "-z", "--full-tree", commit_id),
                          timeout=self._deadlines.timeout, env=self._env,
                          what=f"git ls-tree of {commit_id[:12]} in {self.label}")
        except GitTimeout:
            raise self._timed_out("ls-tree") from None
        if res.returncode != 0:
            raise RepoError(f"git ls-tree failed for commit {commit_id[:12]} in {self.label}",
                            kind="bad_repo", path=self.label)
        blobs: dict[str, str] = {}
        odd: list[str] = []
        links = modules = 0
        for rec in res.stdout.split(b"\0"):
            if not rec:
                continue
            meta, _, raw = rec.partition(b"\t")
            mode, kind, oid = meta.split(b" ")
            if kind == b"commit":
                modules += 1
            elif mode == b"120000":
                links += 1
            elif kind == b"blob" and mode in _REGULAR_MODES:
                blobs[_decode_name(raw, odd)] = oid.decode()
        warnings = _skip_warnings(links, modules, odd)
        if self.listings is not None:
            self.listings.put(commit_id, blobs, warnings)
        return _Tree(blobs, warnings)

    def _loose(self, oid: str) -> bytes | None:
        """A blob stored as a loose object, read directly (no round trip to git); None when it is
        not loose. Gives up for good once misses clearly outnumber hits (a packed clone)."""
        if self._objects is None or len(oid) != 40:
            return None
        try:
            with open(os.path.join(self._objects, oid[:2], oid[2:]), "rb") as fh:
                raw = zlib.decompress(fh.read())
        except (OSError, zlib.error):
            self._loose_misses += 1
            if self._loose_misses > 2 * self._loose_hits + 32:
                self._objects = None
            return None
        head, _, data = raw.partition(b"\0")
        kind, _, size = head.partition(b" ")
        if kind != b"blob" or not size.isdigit() or int(size) != len(data):
            return None
        self._loose_hits += 1
        return data

    def read_blob(self, oid: str) -> bytes:
        data = self._loose(oid)
        if data is not None:
            return data
        got = self._ask(oid)
        if got is None or got[1] != "blob":
            raise RepoError(f"blob {oid[:12]} is not available in {self.label}"
                            " (a blobless clone without --fetch?)", kind="missing_blob",
                            path=self.label)
        return got[2]

    def read_blobs(self, oids: list[str]) -> dict[str, bytes]:
        """Many blobs in one pipelined exchange: requests are written by a helper thread while
        answers are read here, so neither pipe can fill up and block the other side."""
        out: dict[str, bytes] = {}
        rest = []
        for oid in oids:
            data = self._loose(oid)
            if data is None:
                rest.append(oid)
            else:
                out[oid] = data
        if rest:
            out.update(self._batch(rest))
        return out

    def _batch(self, oids: list[str]) -> dict[str, bytes]:
        payload = "".join(o + "\n" for o in oids).encode()
        out: dict[str, bytes] = {}
        with self._lock:
            self._check_hung()
            watch = None
            try:
                proc = self._proc()
                stdin, stdout = proc.stdin, proc.stdout
                assert stdin is not None and stdout is not None
                failed: list[BaseException] = []

                def feed() -> None:
                    try:
                        stdin.write(payload)
                        stdin.flush()
                    except (OSError, ValueError) as exc:
                        failed.append(exc)

                writer = threading.Thread(target=feed, daemon=True)
                writer.start()
                try:
                    with self._deadlines.watch(proc) as watch:
                        for oid in oids:
                            header = stdout.readline()
                            fields = header.split()
                            if len(fields) != 3:
                                if not header:
                                    raise OSError("git cat-file ended")
                                continue
                            size = int(fields[2])
                            data = stdout.read(size)
                            if len(data) != size or stdout.read(1) != b"\n":
                                raise OSError("short read from git cat-file")
                            if fields[1] == b"blob":
                                out[oid] = data
                            self._deadlines.progress(watch)  # each answer has its deadline
                except BaseException:
                    proc.kill()  # unblocks the writer if git stopped reading
                    writer.join()
                    raise
                writer.join()
                if failed:
                    raise failed[0]
            except (OSError, ValueError):
                _stop(self._holder)
                if watch is not None and watch.expired:
                    raise self._timed_out("cat-file") from None
                raise RepoError(f"git cat-file failed in {self.label}", kind="bad_repo",
                                path=self.label) from None
        return out

    @property
    def running(self) -> bool:
        return self._holder[0] is not None

    def close(self, forget: bool = False) -> None:
        """Stop the process now; a later read starts a new one (still stopped at exit/GC).
        ``forget``: also drop the file lists read so far (open snapshots keep theirs)."""
        with self._lock:
            _stop(self._holder)
        if forget:
            with self._tree_lock:
                self._trees.clear()


def _skip_warnings(links: int, modules: int, odd: list[str]) -> list[str]:
    out = []
    if links:
        out.append(f"{links} symbolic link(s) are not regular files and were skipped")
    if modules:
        out.append(f"{modules} submodule(s) were skipped")
    if odd:
        out.append(f"{len(odd)} file name(s) are not UTF-8 and are shown with \\x escapes, "
                   f"e.g. {odd[0]!r}")
    return out


class _DirTree:
    """A plain directory taken as a commit's tree: path -> raw on-disk path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.raw: dict[str, bytes] = {}
        odd: list[str] = []
        links = 0
        stack = [os.fsencode(root)]
        while stack:
            top = stack.pop()
            with os.scandir(top) as it:
                for entry in it:
                    if entry.is_symlink():
                        links += 1
                    elif entry.is_dir(follow_symlinks=False):
                        if entry.name != b".git":
                            stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        rel = os.path.relpath(entry.path, os.fsencode(root))
                        self.raw[_decode_name(rel.replace(os.sep.encode(), b"/"), odd)] = \
                            entry.path
        self.index = PathIndex(self.raw)
        self.warnings = _skip_warnings(links, 0, odd)
        self._ids: dict[str, str] = {}
        self._lock = threading.Lock()


class RepoSnapshot:
    """The tree of one repository at one commit (read-only)."""

    def __init__(self, *, repo: str | None, commit: str | None, kind: str,
                 warnings: list[str], cache: _BlobCache,
                 git: tuple[_GitReader, _Tree] | None = None,
                 tree: _DirTree | None = None) -> None:
        self.repo = repo
        self.commit = commit
        self.kind = kind
        self.warnings = warnings
        self._cache = cache
        self._git = git
        self._dir = tree
        self._index = git[1].index if git is not None else tree.index  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"RepoSnapshot({self.repo!r}, {self.commit!r}, kind={self.kind!r})"

    def commit_time(self) -> int:
        """The commit's committer time (0 for a plain directory or when unknown)."""
        if self._git is None or not self.commit:
            return 0
        try:
            return self._git[0].commit_time(self.commit)
        except RepoError:
            return 0

    def files(self) -> frozenset[str]:
        """Every regular file (repo-relative POSIX path) of the tree at the commit."""
        return self._index.files

    def exists(self, path: str) -> bool:
        return path in self._index.files

    def blob_id(self, path: str) -> str | None:
        """The git blob id of the file's bytes: a cache key that is equal iff the bytes are."""
        if self._git is not None:
            return self._git[1].blobs.get(path)
        d = self._dir
        assert d is not None
        if path not in d.raw:
            return None
        oid = d._ids.get(path)
        if oid is None:
            self.read(path)
            oid = d._ids.get(path)
        return oid

    def read(self, path: str) -> bytes | None:
        """The exact bytes of ``path`` at the commit, or None if the tree has no such file."""
        if self._git is not None:
            reader, tree = self._git
            oid = tree.blobs.get(path)
            if oid is None:
                return None
            data = self._cache.get(oid)
            if data is None:
                data = reader.read_blob(oid)
                self._cache.put(oid, data)
            return data
        d = self._dir
        assert d is not None
        raw = d.raw.get(path)
        if raw is None:
            return None
        oid = d._ids.get(path)
        if oid is not None:
            data = self._cache.get(oid)
            if data is not None:
                return data
        try:
            with open(raw, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise RepoError(f"cannot read {path}: {exc.strerror}", kind="bad_repo",
                            path=path) from None
        oid = git_blob_id(data)
        with d._lock:
            d._ids[path] = oid
        self._cache.put(oid, data)
        return data

    def read_many(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        """:meth:`read` for many paths at once (one pipelined exchange with git): use it when
        the files an instance needs are known up front."""
        paths = list(dict.fromkeys(paths))
        if self._git is None:
            return {p: self.read(p) for p in paths}
        reader, tree = self._git
        out: dict[str, bytes | None] = {}
        want: dict[str, list[str]] = {}
        for p in paths:
            oid = tree.blobs.get(p)
            data = None if oid is None else self._cache.get(oid)
            out[p] = data
            if oid is not None and data is None:
                want.setdefault(oid, []).append(p)
        got = reader.read_blobs(list(want))
        for oid, ps in want.items():
            data = got.get(oid)
            if data is None:
                raise RepoError(f"blob {oid[:12]} of {ps[0]} is not available in "
                                f"{reader.label}", kind="missing_blob", path=ps[0])
            self._cache.put(oid, data)
            for p in ps:
                out[p] = data
        return out

    def resolve(self, agent_path: str) -> str | None:
        """The file the agent meant (see :mod:`ctxeval.paths`), or None if none or ambiguous."""
        return self._index.resolve(agent_path, self.repo)


#: The longest file name a filesystem takes (a path component longer than this cannot name a
#: repository: trying it is an OS error, not a miss).
_NAME_MAX = 255


def _safe_name(name: str) -> bool:
    return len(name.encode()) <= _NAME_MAX and _SAFE_NAME.match(name) is not None


def _kind(path: str) -> int:
    """The file type bits of ``path`` (0 when it cannot be stat'ed)."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except (OSError, ValueError):
        return 0


def _git_dir(p: Path) -> Path | None:
    """The git directory of ``p`` (non-bare ``.git`` dir or file, or ``p`` itself if bare).
    Asked on every open (a repository may go away mid-run), so one ``stat`` per name."""
    base = os.fspath(p)
    if _kind(os.path.join(base, ".git")) in (stat.S_IFDIR, stat.S_IFREG):
        return p / ".git"
    if (_kind(os.path.join(base, "HEAD")) == stat.S_IFREG
            and _kind(os.path.join(base, "objects")) == stat.S_IFDIR
            and _kind(os.path.join(base, "refs")) == stat.S_IFDIR):
        return p
    return None


def _reader_key(git_dir: Path) -> object:
    """What names one repository however it is reached (links, ``..``): its device and
    inode, one ``stat`` (the resolved path if that fails)."""
    try:
        st = os.stat(git_dir)
    except OSError:
        return git_dir.resolve()
    return (st.st_dev, st.st_ino)


class RepoCache:
    """One long-lived reader per repository for a whole run; file bytes cached per blob id."""

    #: Where ``--fetch`` clones from.
    fetch_url = "https://github.com/{owner}/{name}.git"

    def __init__(self, repos_dir: Path | None, *, fetch: bool = False,
                 cache_bytes: int = _CACHE_BYTES, git_timeout: float | None = None,
                 listings: ListingCache | None = None) -> None:
        self.repos_dir = Path(repos_dir) if repos_dir is not None else None
        #: Where commits' file lists are kept across evaluations (None: listed every run).
        self.listings = listings
        self.fetch = fetch
        self._env = _git_env(fetch)
        #: Seconds a git request may take (:mod:`ctxeval.truth.gitproc`).
        self.git_timeout = timeout_from(git_timeout)
        self._deadlines = Deadlines(self.git_timeout)
        self._cache = _BlobCache(cache_bytes)
        self._readers: dict[object, _GitReader] = {}
        self._dirs: dict[Path, _DirTree] = {}
        self._lock = threading.Lock()
        self._clone_lock = threading.Lock()
        self._names: list[str] | None = None
        self._fetched: set[str] = set()

    def __enter__(self) -> RepoCache:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop every ``git cat-file`` process (the cache stays usable: they restart on need)."""
        with self._lock:
            readers = list(self._readers.values())
        for r in readers:
            r.close()
        self._deadlines.close()

    def open(self, *, instance_id: str, repo: str | None, commit: str | None) -> RepoSnapshot:
        """The tree of ``repo`` at ``commit`` for one instance; RepoError if it is not there."""
        if self.repos_dir is None:
            raise RepoError("no repository directory given (--repos) for instance "
                            f"{excerpt(instance_id)}", kind="missing_repo", field="repo")
        owner, name = split_repo(repo)
        if owner is not None and not _safe_name(owner):
            owner = None
        if name is not None and not _safe_name(name):
            name = None
        if commit is not None and len(commit) > _NAME_MAX:
            raise RepoError(f"the base commit is not a commit id ({excerpt(commit, 40)}) for "
                            f"instance {excerpt(instance_id)}", kind="missing_commit",
                            field="base_commit")
        tried: list[str] = []
        missing_commit: list[str] = []
        base = os.fspath(self.repos_dir)

        for rel in self._snapshot_candidates(instance_id, owner, name, commit):
            tried.append(rel + "/")
            if os.path.isdir(os.path.join(base, rel)):
                got = self._open_at(self.repos_dir / rel, rel, repo, commit,
                                    plain_kind="snapshot")
                if got is not None:
                    return got
                missing_commit.append(rel + "/")

        for rel in self._repo_candidates(owner, name):
            tried.append(rel + "/")
            if not os.path.isdir(os.path.join(base, rel)):
                continue
            p = self.repos_dir / rel
            if missing_commit and _git_dir(p) is None:
                continue  # a git repository came first and lacks the commit
            got = self._open_at(p, rel, repo, commit, plain_kind="plain-dir")
            if got is not None:
                return got
            missing_commit.append(rel + "/")

        if self.fetch and owner is not None and name is not None:
            got = self._fetch(owner, name, repo, commit, missing_commit)
            if got is not None:
                return got
            tried.append(self.fetch_url.format(owner=owner, name=name))

        what = f"{excerpt(repo or '(no repo)')} at {commit[:12] if commit else '(no commit)'}"
        if missing_commit:
            raise RepoError(
                f"commit {commit} of {excerpt(repo)} is not in " + ", ".join(missing_commit)
                + f" (instance {excerpt(instance_id)}; relative to --repos)",
                kind="missing_commit", field="base_commit")
        raise RepoError(
            f"repository {what} not found for instance {excerpt(instance_id)}; tried "
            "(relative to --repos): " + ", ".join(tried), kind="missing_repo", field="repo")

    def _snapshot_candidates(self, instance_id: str, owner: str | None, name: str | None,
                             commit: str | None) -> list[str]:
        out = []
        if instance_id and _safe_name(instance_id):
            out.append(instance_id)
        if owner and name and commit and _SAFE_REV.match(commit) and "/" not in commit:
            out.append(f"{owner}__{name}@{commit}")
            assert self.repos_dir is not None
            if _HEX.match(commit) and not (self.repos_dir / out[-1]).is_dir():
                # a directory named with an abbreviated commit is the same snapshot
                prefix = f"{owner}__{name}@"
                for entry in self._listing():
                    short = entry[len(prefix):]
                    if (entry.startswith(prefix) and len(short) >= 7
                            and commit.lower().startswith(short.lower())):
                        out.append(entry)
        return out

    def _listing(self) -> list[str]:
        """The names in DIR, listed once per run."""
        if self._names is None:
            assert self.repos_dir is not None
            try:
                self._names = sorted(os.listdir(self.repos_dir))
            except OSError:
                self._names = []
        return self._names

    def _repo_candidates(self, owner: str | None, name: str | None) -> list[str]:
        if name is None:
            return []
        if owner:
            bases = [f"{owner}__{name}", f"{owner}/{name}", name]
        else:
            # a bare name (Multi-SWE-bench rows): <any owner>__<name> when only one matches
            owned = {n.removesuffix(".git") for n in self._listing()
                     if n.removesuffix(".git").endswith(f"__{name}") and "@" not in n}
            bases = [*sorted(owned)[:1 if len(owned) == 1 else 0], name]
        return [b + sfx for b in bases for sfx in ("", ".git")]

    def _open_at(self, p: Path, rel: str, repo: str | None, commit: str | None,
                 plain_kind: str) -> RepoSnapshot | None:
        """Open ``p`` at ``commit``; None when it is a git repository without that commit."""
        gd = _git_dir(p)
        if gd is None:
            tree = self._dir_tree(p)
            warnings = list(tree.warnings)
            if plain_kind == "plain-dir":
                warnings.insert(0, f"{rel}/ has no git metadata: taken as the tree of commit "
                                   f"{commit or '(none given)'}, which cannot be checked")
            return RepoSnapshot(repo=repo, commit=commit, kind=plain_kind, warnings=warnings,
                                cache=self._cache, tree=tree)
        reader = self._reader(gd, rel)
        warnings = []
        rev = commit
        if not rev:
            rev = "HEAD"
            warnings.append(f"no base commit given: reading HEAD of {rel}/")
        cid = reader.commit_id(rev)
        if cid is None:
            return None
        tree = reader.tree(cid)
        return RepoSnapshot(repo=repo, commit=cid, kind="git", warnings=warnings + tree.warnings,
                            cache=self._cache, git=(reader, tree))

    def _dir_tree(self, p: Path) -> _DirTree:
        key = p.resolve()
        with self._lock:
            tree = self._dirs.get(key)
        if tree is None:
            tree = _DirTree(p)
            with self._lock:
                tree = self._dirs.setdefault(key, tree)
        return tree

    def _reader(self, git_dir: Path, rel: str) -> _GitReader:
        """The repository's reader, most recently used last; beyond :data:`_OPEN_READERS`
        the least recently used ones are stopped and forget their file lists (they restart
        on the next read), so that processes and memory stay bounded over many repositories."""
        key = _reader_key(git_dir)
        idle: list[_GitReader] = []
        with self._lock:
            reader = self._readers.pop(key, None)
            if reader is None:
                reader = _GitReader(git_dir.resolve(), rel, self._env, self._deadlines,
                                    self.listings)
            self._readers[key] = reader
            running = [r for r in self._readers.values() if r.running and r is not reader]
            idle = running[:max(0, len(running) - (_OPEN_READERS - 1))]
        for r in idle:
            r.close(forget=True)
        return reader

    def release(self, repo: str | None) -> None:
        """Stop the reader of ``repo`` (``owner/name``) now: the plan says nothing more of it
        is needed soon. Reading it again later still works."""
        owner, name = split_repo(repo)
        if name is None:
            return
        wanted = {f"{owner}__{name}", name, f"{owner}/{name}"}
        with self._lock:
            readers = [r for r in self._readers.values()
                       if r.label.removesuffix(".git") in wanted]
        for r in readers:
            r.close(forget=True)

    def _fetch(self, owner: str, name: str, repo: str | None, commit: str | None,
               missing_commit: list[str]) -> RepoSnapshot | None:
        """Blobless clone into ``DIR/<owner>__<name>`` (or fetch the commit into it)."""
        assert self.repos_dir is not None
        rel = f"{owner}__{name}"
        dest = self.repos_dir / rel
        url = self.fetch_url.format(owner=owner, name=name)
        with self._clone_lock:
            if url in self._fetched:
                return None  # tried once already in this run
            self._fetched.add(url)
            if not dest.exists():
                tmp = self.repos_dir / f".{rel}.partial-{os.getpid()}"
                try:
                    res = run_git(["git", "clone", "--quiet", "--filter=blob:none",
                                   "--no-checkout", url, str(tmp)], env=self._env,
                                  timeout=self.git_timeout * FETCH_FACTOR, what=f"clone of {url}")
                except GitTimeout:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
                if res.returncode != 0:
                    shutil.rmtree(tmp, ignore_errors=True)
                    return None
                tmp.rename(dest)
            elif commit and _git_dir(dest) is not None and _SAFE_REV.match(commit):
                run_git(["git", f"--git-dir={_git_dir(dest)}", "fetch", "--quiet",
                         "--filter=blob:none", "origin", commit], env=self._env,
                        timeout=self.git_timeout * FETCH_FACTOR,
                        what=f"fetch of {commit[:12]} into {rel}")
                gd = _git_dir(dest)
                assert gd is not None
                with self._lock:
                    stale = self._readers.pop(_reader_key(gd), None)
                if stale is not None:
                    stale.close()
            got = self._open_at(dest, rel, repo, commit, plain_kind="plain-dir")
        if got is None and rel + "/" not in missing_commit:
            missing_commit.append(rel + "/")
        return got
