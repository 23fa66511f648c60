"""Reading files at a commit through RepoSnapshot vs reading them from a checkout.

Builds a throwaway git repository with 1,000 files of a few KB each, then, in this process,
times reading every file (1) from the checkout with ``open().read()`` and (2) at the commit
through :class:`ctxeval.truth.repo.RepoSnapshot` (``git cat-file --batch``, cold byte cache), one
``read()`` per file and in one ``read_many()``, and prints the ratios, first with the loose
objects a fresh commit leaves and then packed (what a clone gives). The target is within 3x.

    python benchmarks/repo_read.py [--files 1000] [--size 4000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path

from ctxeval.truth.repo import RepoCache

_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    # no detached background maintenance after commits (it would outlive the test)
    "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "gc.autoDetach", "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "maintenance.autoDetach", "GIT_CONFIG_VALUE_1": "false",
}


def build(root: Path, n_files: int, size: int) -> tuple[str, list[str]]:
    """A repository with ``n_files`` text files in nested directories; returns (commit, paths)."""
    env = {**os.environ, **_ENV}
    rng = random.Random(0)
    words = [f"ident_{i}" for i in range(500)]
    paths = []
    for i in range(n_files):
        rel = f"pkg{i % 10}/sub{i % 7}/mod_{i}.py"
        text = []
        length = 0
        while length < size:
            line = " ".join(rng.choice(words) for _ in range(8)) + "\n"
            text.append(line)
            length += len(line)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(text))
        paths.append(rel)
    (root / "README").write_text("not timed\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True, env=env).stdout.strip()
    return commit, paths


def _time_snapshot(repos: Path, commit: str, paths: list[str], many: bool) -> tuple[float, int]:
    """Seconds to read every file through a fresh RepoCache (cold byte cache), and bytes read."""
    with RepoCache(repos) as cache:
        snap = cache.open(instance_id="bench-1", repo="bench/repo", commit=commit)
        snap.read("README")  # start git cat-file outside the timing, as a long run would
        t0 = time.perf_counter()
        if many:
            got = sum(len(d or b"") for d in snap.read_many(paths).values())
        else:
            got = 0
            for rel in paths:
                data = snap.read(rel)
                assert data is not None
                got += len(data)
        return time.perf_counter() - t0, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--size", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repos = Path(tmp)
        root = repos / "bench__repo"
        root.mkdir()
        commit, paths = build(root, args.files, args.size)
        total = sum((root / rel).stat().st_size for rel in paths)
        print(f"files: {len(paths)}, bytes: {total}")
        for objects in ("loose", "packed"):
            if objects == "packed":  # what a clone or fetch gives
                subprocess.run(["git", "-C", str(root), "gc", "-q"], check=True,
                               env={**os.environ, **_ENV})
            best = {"checkout": float("inf"), "read": float("inf"), "read_many": float("inf")}
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                n = 0
                for rel in paths:
                    with open(root / rel, "rb") as fh:
                        n += len(fh.read())
                best["checkout"] = min(best["checkout"], time.perf_counter() - t0)
                assert n == total
                for how in ("read", "read_many"):
                    secs, got = _time_snapshot(repos, commit, paths, how == "read_many")
                    assert got == total, (how, got, total)
                    best[how] = min(best[how], secs)
            base = best["checkout"]
            print(f"[{objects} objects] checkout open().read(): {base * 1e3:7.2f} ms")
            for how in ("read", "read_many"):
                print(f"[{objects} objects] RepoSnapshot.{how + '():':12s}  "
                      f"{best[how] * 1e3:7.2f} ms  ratio {best[how] / base:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
