"""Repositories read at a base commit, and agent paths resolved against their trees.

Every repository here is built in tmp_path with ``git`` (identity and config come from the
environment, so no global git setup is needed); the parity trees are read from ../shared.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import CORPUS, PARITY, requires_parity, requires_shared
from ctxeval.errors import RepoError
from ctxeval.paths import PathIndex
from ctxeval.truth.repo import RepoCache, RepoSnapshot, git_blob_id, normalise_path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
    # no detached background maintenance after commits (it would outlive the test)
    "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "gc.autoDetach", "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "maintenance.autoDetach", "GIT_CONFIG_VALUE_1": "false",
}

CRLF_BINARY = b"line one\r\nline two\r\n\x00\xff\xfe caf\xc3\xa9\r\nno final newline"


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


def git(cwd: Path, *args: str, data: bytes | None = None) -> str:
    res = subprocess.run(["git", "-C", str(cwd), *args], input=data, capture_output=True,
                         check=True)
    return res.stdout.decode().strip()


def write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def make_repo(root: Path, files: dict[str, bytes]) -> str:
    """A non-bare repository whose first commit holds ``files``; returns that commit."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "core.autocrlf", "false")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return git(root, "rev-parse", "HEAD")


BASE = {
    "pkg/models.py": b"class A:\n    pass\n",
    "pkg/util.py": b"def f():\n    return 1\n",
    "other/util.py": b"def g():\n    return 2\n",
    "setup.py": b"setup()\n",
    "data/crlf.bin": CRLF_BINARY,
}


@pytest.fixture()
def moved_repo(tmp_path: Path) -> tuple[Path, str]:
    """DIR/acme__widgets: a base commit, then a later commit and uncommitted edits on top."""
    repos = tmp_path / "repos"
    root = repos / "acme__widgets"
    base = make_repo(root, BASE)
    write(root, {"pkg/models.py": b"class A:\n    changed = True\n", "new.py": b"x = 1\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "later")
    (root / "setup.py").write_bytes(b"dirty working tree\n")
    return repos, base


# ---------------------------------------------------------------- agent path normalisation

@pytest.mark.parametrize(("agent", "repo", "want"), [
    ("/testbed/x.py", None, "x.py"),
    ("/testbed/django/db/models/base.py", "django/django", "django/db/models/base.py"),
    ("/workspace/django__django__3.0/django/contrib/auth/validators.py", "django/django",
     "django/contrib/auth/validators.py"),
    ("/workspace/js_queue/src/queue.js", "toy/js_queue", "src/queue.js"),
    ("/workspace/test_username_validator.py", None, "test_username_validator.py"),
    ("/psf__requests/requests/api.py", None, "requests/api.py"),
    ("/psf__requests__2.4/requests/api.py", "psf/requests", "requests/api.py"),
    ("/home/ts_shapes/src/shapes.ts", None, "src/shapes.ts"),
    ("/home/x.py", None, "x.py"),
    ("./src/registry.ts", None, "src/registry.ts"),
    ("././a/./b.py", None, "a/b.py"),
    ("src\\pkg\\mod.py", None, "src/pkg/mod.py"),
    ("C:\\Users\\me\\proj\\a.py", None, "Users/me/proj/a.py"),
    ("a/../b/c.py", None, "b/c.py"),
    ("../x.py", None, "x.py"),
    ("/testbed/../testbed/x.py", None, "x.py"),
    ("a//b///c.py", None, "a/b/c.py"),
    ("a/b.py:12", None, "a/b.py:12"),
    ("  /testbed/a.py  ", None, "a.py"),
    ("/testbed", None, ""),
    ("/testbed/pkg/", None, "pkg"),
    ("", None, ""),
    ("file:///testbed/a.py", None, "a.py"),
    ("/requests/requests/api.py", "psf/requests", "requests/api.py"),
    ("/psf/requests/setup.py", "psf/requests", "setup.py"),
    ("psf__requests__2.4/setup.py", "psf/requests", "setup.py"),
    ("psf__requests__2.4/setup.py", None, "psf__requests__2.4/setup.py"),
    ("ponylang__ponyc__0.1/src/x.c", "ponyc", "src/x.c"),
    ("/opt/app/x.py", None, "opt/app/x.py"),
])
def test_normalise_path_shapes(agent: str, repo: str | None, want: str) -> None:
    assert normalise_path(agent, repo) == want


@requires_shared
def test_normalise_real_openhands_paths() -> None:
    """Paths as OpenHands printed them in real runs name the gold patch's files."""
    inst = CORPUS / "django__django-11099"
    gold = json.loads((inst / "gold.json").read_text())
    gold_files = re.findall(r"^diff --git a/(\S+) ", gold["patch"], re.M)
    assert gold_files == ["django/contrib/auth/validators.py"]
    seen = set()
    for f in sorted((inst / "trajs" / "openhands_v0.15.0_claude35__llm_completions").iterdir()):
        seen.update(re.findall(r"/workspace/django__django__3\.0/[\w./-]+\.py\b", f.read_text()))
    assert "/workspace/django__django__3.0/django/contrib/auth/validators.py" in seen
    normalised = {normalise_path(p, gold["repo"]) for p in seen}
    assert "django/contrib/auth/validators.py" in normalised
    assert not any(p.startswith(("workspace", "django__")) for p in normalised)

    pony = CORPUS / "ponylang__ponyc-4593"
    patch = (pony / "ponylang__ponyc-4593.gold.patch").read_text()
    assert re.findall(r"^diff --git a/(\S+) ", patch, re.M) == ["packages/cli/command_parser.pony"]
    text = (pony / "trajs" / "openhands_output.jsonl").read_text()
    assert "/workspace/ponylang__ponyc__0.1/packages/cli/command_parser.pony" in text
    # Multi-SWE-bench names the repo bare
    assert normalise_path("/workspace/ponylang__ponyc__0.1/packages/cli/command_parser.pony",
                          "ponyc") == "packages/cli/command_parser.pony"


# ---------------------------------------------------------------- resolution

TREE = PathIndex([
    "setup.py", "pkg/models.py", "pkg/util.py", "other/util.py", "src/ledger/report.py",
    "tmp/keep.py", "vendor/site-packages/six.py",
])


@pytest.mark.parametrize(("agent", "want"), [
    ("/testbed/pkg/models.py", "pkg/models.py"),           # exact after normalising
    ("pkg/models.py", "pkg/models.py"),
    ("/usr/src/app/pkg/models.py", "pkg/models.py"),       # leading components stripped
    ("/root/work/widgets/setup.py", "setup.py"),
    ("models.py", "pkg/models.py"),                         # unique suffix
    ("ledger/report.py", "src/ledger/report.py"),
    ("/testbed/ledger/report.py", "src/ledger/report.py"),
    ("util.py", None),                                      # ambiguous suffix
    ("/testbed/util.py", None),
    ("odels.py", None),                                     # suffixes stop at components
    ("pkg/models.py:12", None),                             # line refs are the adapters' job
    ("pkg", None),                                          # a directory is not a file
    ("/tmp/setup.py", None),                                # scratch files are not the repo
    ("/tmp/keep.py", None),
    ("tmp/keep.py", "tmp/keep.py"),
    ("/usr/lib/python3/site-packages/pkg/models.py", None),  # an installed copy
    ("vendor/site-packages/six.py", "vendor/site-packages/six.py"),
    ("", None),
    ("/testbed", None),
    ("repo://github.com/o/other/setup.py", None),           # another repository's file
    ("https://github.com/o/r/blob/main/pkg/models.py", None),  # a URL names no file
    ("file:///testbed/pkg/models.py", "pkg/models.py"),
])
def test_resolve(agent: str, want: str | None) -> None:
    assert TREE.resolve(agent) == want
    assert TREE.resolve(agent) == want  # the cached answer is the same


_SEGMENT = st.sampled_from(["a", "b.py", ".", "..", "", "testbed", "workspace", "home",
                            "x__y__1", "tmp", "C:", "src", "dir with space"])


@given(st.lists(_SEGMENT, max_size=8), st.sampled_from(["/", "\\"]), st.booleans())
def test_normalise_path_is_always_a_clean_relative_path(
        segs: list[str], sep: str, absolute: bool) -> None:
    out = normalise_path(("/" if absolute else "") + sep.join(segs), "x/y")
    assert not out.startswith("/") and "\\" not in out and "//" not in out
    assert all(c not in ("", ".", "..") for c in out.split("/")) or out == ""
    assert TREE.resolve(out) in TREE.files | {None}


def test_resolve_prefers_longest_existing_suffix() -> None:
    idx = PathIndex(["b/x.py", "x.py"])
    assert idx.resolve("/weird/root/b/x.py") == "b/x.py"
    assert idx.resolve("x.py") == "x.py"  # exact beats a suffix match


# ---------------------------------------------------------------- git repositories

def test_git_reads_base_commit_not_working_tree(moved_repo: tuple[Path, str]) -> None:
    repos, base = moved_repo
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="acme__widgets-1", repo="acme/widgets", commit=base)
        assert isinstance(snap, RepoSnapshot)
        assert snap.kind == "git" and snap.commit == base and snap.warnings == []
        assert snap.files() == frozenset(BASE)
        assert snap.read("pkg/models.py") == b"class A:\n    pass\n"
        assert snap.read("setup.py") == b"setup()\n"
        assert snap.read("new.py") is None and not snap.exists("new.py")
        assert snap.read("data/crlf.bin") == CRLF_BINARY
        assert snap.blob_id("setup.py") == git_blob_id(b"setup()\n")
        assert snap.blob_id("setup.py") == git(repos / "acme__widgets", "rev-parse",
                                               f"{base}:setup.py")
        assert snap.blob_id("new.py") is None
        assert snap.resolve("/testbed/pkg/models.py") == "pkg/models.py"
        assert snap.resolve("/workspace/acme__widgets__1.0/setup.py") == "setup.py"
        assert snap.resolve("new.py") is None
        later = cache.open(instance_id="acme__widgets-2", repo="acme/widgets", commit="HEAD")
        assert later.read("pkg/models.py") == b"class A:\n    changed = True\n"
        assert later.read("setup.py") == b"setup()\n"  # committed bytes, not the dirty file
        short = cache.open(instance_id="acme__widgets-3", repo="acme/widgets", commit=base[:10])
        assert short.commit == base
        assert short.files() is snap.files()  # one ls-tree per commit, shared
        assert snap.read_many(["setup.py", "new.py", "data/crlf.bin"]) == {
            "setup.py": b"setup()\n", "new.py": None, "data/crlf.bin": CRLF_BINARY}


def test_filters_and_autocrlf_do_not_apply(tmp_path: Path) -> None:
    """Attributes that a checkout would apply (eol, autocrlf) must not change the bytes."""
    repos = tmp_path / "repos"
    root = repos / "acme__eol"
    base = make_repo(root, {".gitattributes": b"* text eol=crlf\n", "a.txt": b"x\ny\n",
                            "b.txt": b"p\r\nq\r\n"})
    git(root, "config", "core.autocrlf", "true")
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="i", repo="acme/eol", commit=base)
        assert snap.read("a.txt") == b"x\ny\n"
        assert snap.read_many(["a.txt"]) == {"a.txt": b"x\ny\n"}
        assert snap.read("b.txt") == b"p\nq\n"  # what `git add` stored under eol=crlf
    raw = subprocess.run(["git", "-C", str(root), "cat-file", "--filters", f"{base}:a.txt"],
                         capture_output=True, check=True).stdout
    assert raw == b"x\r\ny\r\n"  # what a checkout would have written instead


@pytest.mark.parametrize("layout", ["acme__widgets.git", "acme/widgets", "acme/widgets.git",
                                    "widgets", "widgets.git"])
def test_bare_and_name_layouts(tmp_path: Path, layout: str) -> None:
    src = tmp_path / "src"
    base = make_repo(src, BASE)
    repos = tmp_path / "repos"
    (repos / layout).parent.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "clone", "-q", "--bare", str(src), str(repos / layout))
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="x-1", repo="acme/widgets", commit=base)
        assert snap.kind == "git"
        assert snap.read("data/crlf.bin") == CRLF_BINARY
        assert snap.files() == frozenset(BASE)
        url = cache.open(instance_id="x-1", repo="https://github.com/acme/widgets.git",
                         commit=base)
        assert url.read("setup.py") == b"setup()\n"


def test_packed_objects(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    base = make_repo(repos / "acme__widgets", BASE)
    git(repos / "acme__widgets", "gc", "-q")
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="x", repo="acme/widgets", commit=base)
        got = {p: snap.read(p) for p in sorted(BASE)}
        assert got == BASE
    with RepoCache(repos) as cache:  # a fresh cache: all through one pipelined exchange
        snap = cache.open(instance_id="x", repo="acme/widgets", commit=base)
        assert snap.read_many(sorted(BASE)) == BASE


def _odd_repo(repos: Path) -> str:
    """A repository whose commit holds a symbolic link, a submodule and a non-UTF-8 name
    (what a file list leaves out, with warnings); its commit id."""
    root = repos / "acme__odd"
    root.mkdir(parents=True)
    git(root, "init", "-q")
    write(root, {"real.py": b"x = 1\n", "pkg/mod.py": b"y = 2\n"})
    os.symlink("real.py", root / "link.py")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    git(root, "add", "-A")
    some_commit = git(root, "hash-object", "-t", "commit", "-w", "--stdin",
                      data=b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
                           b"author a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\nx\n")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{some_commit},vendor/sub")
    git(root, "commit", "-q", "-m", "odd")
    return git(root, "rev-parse", "HEAD")


def test_symlink_submodule_and_non_utf8_names(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    base = _odd_repo(repos)
    assert "160000" in git(repos / "acme__odd", "ls-tree", "-r", base)  # the gitlink is there
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="odd-1", repo="acme/odd", commit=base)
        assert snap.files() == frozenset({"real.py", "pkg/mod.py", "caf\\xe9.txt"})
        assert snap.read("link.py") is None and not snap.exists("link.py")
        assert snap.read("vendor/sub") is None
        assert snap.read("caf\\xe9.txt") == b"latin-1 name\n"
        assert snap.resolve("/testbed/link.py") is None
        text = " ".join(snap.warnings)
        assert "1 symbolic link" in text and "1 submodule" in text and "not UTF-8" in text


def _no_ls_tree(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Makes every ``git ls-tree`` an error; the ones asked for are listed."""
    import ctxeval.truth.repo as repo_module

    asked: list[list[str]] = []
    real = repo_module.run_git

    def run_git(cmd: list[str], **kw):
        if "ls-tree" in cmd:
            asked.append(cmd)
            raise AssertionError("git ls-tree was run")
        return real(cmd, **kw)

    monkeypatch.setattr(repo_module, "run_git", run_git)
    return asked


def test_a_kept_listing_is_the_same_tree_without_git_ls_tree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a listing cache, the second evaluation reads a commit's files (and the warnings of
    what was left out) from the cache; files, blob ids, reads and resolving are the same."""
    from ctxeval.truth.cache import ListingCache

    repos = tmp_path / "repos"
    base = _odd_repo(repos)
    listings = ListingCache(tmp_path / "cache")
    with RepoCache(repos, listings=listings) as cache:
        first = cache.open(instance_id="odd-1", repo="acme/odd", commit=base)
        files, warnings = first.files(), list(first.warnings)
        blobs = {f: first.blob_id(f) for f in files}
    assert listings.stats["writes"] == 1 and listings.path(base).is_file()
    asked = _no_ls_tree(monkeypatch)
    again = ListingCache(tmp_path / "cache")
    with RepoCache(repos, listings=again) as cache:
        snap = cache.open(instance_id="odd-1", repo="acme/odd", commit=base)
        assert snap.files() == files and list(snap.warnings) == warnings
        assert {f: snap.blob_id(f) for f in files} == blobs
        assert snap.read("pkg/mod.py") == b"y = 2\n"
        assert snap.resolve("/testbed/mod.py") == "pkg/mod.py"
        assert snap.read("link.py") is None
    assert again.stats["hits"] == 1 and not asked


def test_a_kept_listing_never_stands_for_a_commit_the_repository_lacks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing of a commit is kept by its id, but the repository is still asked whether
    it holds the commit: one without it is ``missing_commit``, listing or not."""
    from ctxeval.truth.cache import ListingCache

    repos = tmp_path / "repos"
    base = _odd_repo(repos)
    listings = ListingCache(tmp_path / "cache")
    with RepoCache(repos, listings=listings) as cache:
        cache.open(instance_id="odd-1", repo="acme/odd", commit=base)
    other = tmp_path / "other"
    make_repo(other / "acme__odd", {"a.py": b"a = 1\n"})  # same name, without that commit
    _no_ls_tree(monkeypatch)
    with RepoCache(other, listings=listings) as cache, pytest.raises(RepoError) as err:
        cache.open(instance_id="odd-1", repo="acme/odd", commit=base)
    assert err.value.kind == "missing_commit"


def test_a_damaged_listing_is_listed_again(tmp_path: Path) -> None:
    from ctxeval.truth.cache import ListingCache

    repos = tmp_path / "repos"
    base = _odd_repo(repos)
    listings = ListingCache(tmp_path / "cache")
    with RepoCache(repos, listings=listings) as cache:
        files = cache.open(instance_id="odd-1", repo="acme/odd", commit=base).files()
    entry = listings.path(base)
    entry.write_bytes(entry.read_bytes()[:-7])
    again = ListingCache(tmp_path / "cache")
    with RepoCache(repos, listings=again) as cache:
        assert cache.open(instance_id="odd-1", repo="acme/odd", commit=base).files() == files
    assert again.stats["corrupt"] == 1 and again.stats["writes"] == 1
    assert ListingCache(tmp_path / "cache").get(base) is not None


def test_two_names_of_one_repository_share_one_reader(tmp_path: Path) -> None:
    """A repository reached through a link is the same repository: one ``git cat-file``."""
    repos = tmp_path / "repos"
    base = make_repo(repos / "acme__widgets", {"a.py": b"a = 1\n"})
    os.symlink("acme__widgets", repos / "widgets")
    with RepoCache(repos) as cache:
        one = cache.open(instance_id="w-1", repo="acme/widgets", commit=base)
        two = cache.open(instance_id="w-2", repo="other/widgets", commit=base)
        assert one.read("a.py") == two.read("a.py") == b"a = 1\n"
        assert len(cache._readers) == 1


def test_commit_times_come_with_the_commit(tmp_path: Path) -> None:
    """The committer time (the order versions of a path are parsed in) is the commit's, and
    opening a commit asks git once for both."""
    repos = tmp_path / "repos"
    base = make_repo(repos / "acme__widgets", {"a.py": b"a = 1\n"})
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="w-1", repo="acme/widgets", commit=base[:12])
        reader = next(iter(cache._readers.values()))
        asks = []
        real = reader._ask
        reader._ask = lambda name: asks.append(name) or real(name)  # type: ignore[method-assign]
        assert snap.commit_time() == 1704067200  # GIT_COMMITTER_DATE, 2024-01-01
        assert asks == []


def test_missing_commit_lists_where(moved_repo: tuple[Path, str]) -> None:
    repos, _ = moved_repo
    with RepoCache(repos) as cache:
        with pytest.raises(RepoError) as err:
            cache.open(instance_id="w-1", repo="acme/widgets", commit="0" * 40)
        assert err.value.kind == "missing_commit"
        assert "acme__widgets/" in str(err.value) and "w-1" in str(err.value)
        assert str(repos) not in str(err.value)
        # the same cache goes on serving other instances
        assert cache.open(instance_id="w-2", repo="acme/widgets", commit="HEAD").kind == "git"


def test_missing_repo_lists_tried_paths(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    repos.mkdir()
    with RepoCache(repos) as cache, pytest.raises(RepoError) as err:
        cache.open(instance_id="acme__gone-7", repo="acme/gone", commit="abc1234")
    msg = str(err.value)
    assert err.value.kind == "missing_repo"
    for rel in ("acme__gone-7/", "acme__gone@abc1234/", "acme__gone/", "acme__gone.git/",
                "acme/gone/", "acme/gone.git/", "gone/", "gone.git/"):
        assert rel in msg
    assert str(tmp_path) not in msg
    with RepoCache(None) as cache, pytest.raises(RepoError) as err2:
        cache.open(instance_id="x", repo="acme/gone", commit="abc1234")
    assert err2.value.kind == "missing_repo" and "--repos" in str(err2.value)


def test_bare_repo_name_finds_unique_owner(moved_repo: tuple[Path, str]) -> None:
    repos, base = moved_repo
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="w", repo="widgets", commit=base)
        assert snap.kind == "git" and snap.read("setup.py") == b"setup()\n"
    write(repos / "other__widgets", {"a.py": b""})
    with RepoCache(repos) as cache, pytest.raises(RepoError) as err:
        cache.open(instance_id="w", repo="widgets", commit=base)  # two owners: ambiguous
    assert "widgets/" in str(err.value)


def test_commit_none_reads_head_with_warning(moved_repo: tuple[Path, str]) -> None:
    repos, _ = moved_repo
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="w", repo="acme/widgets", commit=None)
        assert snap.exists("new.py")
        assert any("HEAD" in w for w in snap.warnings)


def test_fetch_clones_blobless_then_reads(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """--fetch, with a local "remote" standing in for GitHub (no network in tests)."""
    upstream = tmp_path / "upstream" / "acme__widgets"
    base = make_repo(upstream, BASE)
    git(upstream, "config", "uploadpack.allowFilter", "true")
    monkeypatch.setattr(RepoCache, "fetch_url", f"file://{tmp_path}/upstream/{{owner}}__{{name}}")
    repos = tmp_path / "repos"
    repos.mkdir()
    with RepoCache(repos) as offline, pytest.raises(RepoError):
        offline.open(instance_id="f", repo="acme/widgets", commit=base)
    with RepoCache(repos, fetch=True) as cache:
        snap = cache.open(instance_id="f", repo="acme/widgets", commit=base)
        assert snap.kind == "git" and (repos / "acme__widgets" / ".git").is_dir()
        assert not (repos / "acme__widgets" / "setup.py").exists()  # nothing checked out
        assert git(repos / "acme__widgets", "config", "remote.origin.promisor") == "true"
        assert snap.read_many(sorted(BASE)) == BASE  # blobs fetched lazily
    with RepoCache(repos, fetch=True) as cache, pytest.raises(RepoError) as err:
        cache.open(instance_id="g", repo="acme/nothere", commit=base)
    assert err.value.kind == "missing_repo" and "acme__nothere" in str(err.value)


# ---------------------------------------------------------------- plain directories

def test_snapshot_dirs_win_over_git(moved_repo: tuple[Path, str]) -> None:
    repos, base = moved_repo
    write(repos / "acme__widgets-9", {"only_here.py": b"a\r\n"})
    write(repos / f"acme__widgets@{base}", {"at_commit.py": b"b\n"})
    write(repos / f"acme__other@{base[:8]}", {"short.py": b"c\n"})
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="acme__widgets-9", repo="acme/widgets", commit=base)
        assert snap.kind == "snapshot" and snap.warnings == []
        assert snap.files() == frozenset({"only_here.py"})
        assert snap.read("only_here.py") == b"a\r\n"
        at = cache.open(instance_id="acme__widgets-8", repo="acme/widgets", commit=base)
        assert at.kind == "snapshot" and at.files() == frozenset({"at_commit.py"})
        short = cache.open(instance_id="z", repo="acme/other", commit=base)
        assert short.files() == frozenset({"short.py"})


def test_plain_dir_is_taken_with_warning(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    write(repos / "widgets", dict(BASE))
    os.symlink("setup.py", repos / "widgets" / "link.py")
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="w", repo="toy/widgets", commit="abc1234")
        assert snap.kind == "plain-dir" and snap.commit == "abc1234"
        assert "cannot be checked" in snap.warnings[0] and str(tmp_path) not in snap.warnings[0]
        assert snap.files() == frozenset(BASE)
        assert snap.read("data/crlf.bin") == CRLF_BINARY
        assert snap.read("link.py") is None and snap.read("nope.py") is None
        assert snap.blob_id("data/crlf.bin") == git_blob_id(CRLF_BINARY)
        assert snap.blob_id("nope.py") is None
        assert snap.read_many(["setup.py", "nope.py"]) == {"setup.py": b"setup()\n",
                                                          "nope.py": None}
        assert snap.resolve("/workspace/widgets/pkg/models.py") == "pkg/models.py"


# ---------------------------------------------------------------- lifetimes and threads

def _live_cat_files(cache: RepoCache) -> list[subprocess.Popen[bytes]]:
    return [p for r in cache._readers.values() for p in r._holder if p is not None]


def test_threads_share_one_reader_and_close_stops_it(moved_repo: tuple[Path, str]) -> None:
    repos, base = moved_repo
    git(repos / "acme__widgets", "gc", "-q")  # packed, so reads go through cat-file
    cache = RepoCache(repos, cache_bytes=0)  # no byte cache: every read asks git
    snap = cache.open(instance_id="t", repo="acme/widgets", commit=base)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(30):
                for p in BASE:
                    assert snap.read(p) == BASE[p]
                assert snap.read_many(list(BASE)) == BASE
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    procs = _live_cat_files(cache)
    assert len(procs) == 1 and procs[0].poll() is None
    cache.close()
    assert _live_cat_files(cache) == [] and procs[0].returncode is not None
    assert snap.read("setup.py") == b"setup()\n"  # restarts on demand
    with cache:
        pass
    assert _live_cat_files(cache) == []


# ---------------------------------------------------------------- the parity trees

def _gold_rows() -> list[dict]:
    return [json.loads(line) for line in (PARITY / "gold.jsonl").read_text().splitlines()
            if line.strip()]


@requires_parity
def test_parity_repos_as_plain_dirs() -> None:
    """Every file the gold patches change has the blob id their ``index`` line names."""
    rows = _gold_rows()
    checked = 0
    with RepoCache(PARITY / "repos") as cache:
        ledger = cache.open(instance_id="toy__py_ledger-1", repo="toy/py_ledger",
                            commit="8a55c8717e36783b0a3eb1c243f620965998dcde")
        assert ledger.kind == "plain-dir"
        assert ledger.files() == frozenset({
            "README.md", "config.json", "ledger/__init__.py", "ledger/fmt.py",
            "ledger/models.py", "ledger/report.py"})
        fmt = ledger.read("ledger/fmt.py")
        assert fmt is not None and not fmt.endswith(b"\n") and not fmt.isascii()
        assert ledger.read("ledger/__init__.py") == b""
        assert ledger.resolve("/workspace/py_ledger/ledger/report.py") == "ledger/report.py"
        assert ledger.resolve("/testbed/ledger/account.py") is None
        for row in rows:
            snap = cache.open(instance_id=row["instance_id"], repo=row["repo"],
                              commit=row["base_commit"])
            for path, old in re.findall(r"^diff --git a/(\S+) b/\S+\n(?:.*\n)??index (\w+)\.\.",
                                        row["patch"], re.M):
                assert snap.blob_id(path).startswith(old), (row["instance_id"], path)
                checked += 1
        retry = cache.open(instance_id="toy__js_queue-5", repo="toy/js_queue",
                           commit="fe5b9187df15").read("src/retry.js")
        assert retry is not None and b"\r\n" in retry
    assert checked == 18


@requires_parity
@pytest.mark.parametrize(("instance", "agent", "want"), [
    ("toy__go_kv-10", "/workspace/go_kv/store/missing.go", None),
    ("toy__go_kv-10", "/home/go_kv/store/ttl.go", "store/ttl.go"),
    ("toy__ts_shapes-7", "/testbed/src/i18n.ts", None),
    ("toy__ts_shapes-6", "/home/ts_shapes/src/shapes.ts", "src/shapes.ts"),
    ("toy__ts_shapes-6", "./src/registry.ts", "src/registry.ts"),
    ("toy__js_queue-4", "src/worker.js", None),
    ("toy__js_queue-4", "/workspace/js_queue/src/queue.js", "src/queue.js"),
    ("toy__java_bank-8", "/workspace/java_bank/src/main/java/bank/Account.java",
     "src/main/java/bank/Account.java"),
    ("toy__py_ledger-1", "/testbed/ledger/account.py", None),
    ("toy__py_ledger-3", "/tmp/t.py", None),
    ("toy__py_ledger-2", "/workspace/py_ledger/config.json", "config.json"),
])
def test_parity_trajectory_paths_resolve(instance: str, agent: str, want: str | None) -> None:
    """Paths exactly as the parity trajectories of that instance write them."""
    texts = [f.read_text(errors="replace") for f in (PARITY / "trajs" / instance).rglob("*")
             if f.is_file()]
    assert any(agent in t for t in texts)
    row = next(r for r in _gold_rows() if r["instance_id"] == instance)
    with RepoCache(PARITY / "repos") as cache:
        snap = cache.open(instance_id=instance, repo=row["repo"], commit=row["base_commit"])
        assert snap.resolve(agent) == want


@requires_parity
def test_parity_tree_as_git_repo_reproduces_base_commit(tmp_path: Path) -> None:
    """Rebuilt as MANIFEST.md says, the tree gives the recorded base commit, read through git."""
    row = next(r for r in _gold_rows() if r["repo"] == "toy/py_ledger")
    repos = tmp_path / "repos"
    root = repos / "toy__py_ledger"
    shutil.copytree(PARITY / "repos" / "py_ledger", root)
    for p in root.rglob("*"):
        if p.is_file():
            p.chmod(0o644)
    env = {**os.environ, "GIT_AUTHOR_NAME": "Parity Fixture",
           "GIT_AUTHOR_EMAIL": "fixture@example.invalid", "GIT_COMMITTER_NAME": "Parity Fixture",
           "GIT_COMMITTER_EMAIL": "fixture@example.invalid"}
    for args in (["init", "-q"], ["config", "core.autocrlf", "false"], ["add", "-A"],
                 ["commit", "-q", "-m", "base snapshot"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    assert git(root, "rev-parse", "HEAD") == row["base_commit"]
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id=row["instance_id"], repo=row["repo"],
                          commit=row["base_commit"])
        assert snap.kind == "git"
        with RepoCache(PARITY / "repos") as parity:
            plain = parity.open(instance_id="p", repo="toy/py_ledger", commit=None)
            assert plain.kind == "plain-dir" and snap.files() == plain.files()
            for f in sorted(snap.files()):
                on_disk = (PARITY / "repos/py_ledger" / f).read_bytes()
                assert snap.read(f) == plain.read(f) == on_disk


def test_open_readers_are_bounded_and_release_frees_one(tmp_path: Path) -> None:
    """Over many repositories at most a few ``git cat-file`` processes stay open (each holds
    caches of its own); a closed reader restarts when its repository is read again."""
    from ctxeval.truth.repo import _OPEN_READERS

    repos = tmp_path / "repos"
    for k in range(_OPEN_READERS + 3):
        make_repo(repos / f"acme__r{k}", {"a.py": f"x = {k}\n".encode()})
    with RepoCache(repos) as cache:
        for k in range(_OPEN_READERS + 3):
            snap = cache.open(instance_id=f"i{k}", repo=f"acme/r{k}", commit=None)
            assert snap.read("a.py") == f"x = {k}\n".encode()
            running = sum(r.running for r in cache._readers.values())
            assert running <= _OPEN_READERS
        def reader(k: int):
            git_dir = (repos / f"acme__r{k}" / ".git").resolve()
            return next(r for r in cache._readers.values() if r.git_dir == git_dir)

        assert not reader(0).running  # the least recently used were stopped
        assert cache.open(instance_id="i0", repo="acme/r0", commit=None).read("a.py") == \
            b"x = 0\n"
        last = _OPEN_READERS + 2
        assert reader(last).running
        cache.release(f"acme/r{last}")
        assert not reader(last).running
