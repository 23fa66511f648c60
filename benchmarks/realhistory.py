"""A leaderboard-shaped workload built from a **real** repository's history.

Synthetic repositories change in ways chosen by their generator; a real repository's files
change the way real code does (large files edited in many places, files renamed, split and
rewritten), and that is what incremental parsing and the definition cache meet on SWE-bench.
This script takes any local clone (bare or not, of e.g. ``pydata/xarray`` or ``psf/requests``)
and builds the same workload layout as ``benchmarks/workload.py``:

* instances at **real base commits**: those of the repository's SWE-bench instances found in a
  SWE-bench JSON file (``--swe-bench``, default ``../shared/corpus/swe-bench/
  swe-bench-lite-test.json`` when present; each keeps its real gold patch), completed up to
  ``--instances`` with first-parent commits spread evenly between the oldest and the newest of
  them (each such instance's "gold patch" is the real diff of that commit to its first-parent
  child, restricted to source files);
* gold context: the lines around each hunk of the gold patch (old side, 3 lines each way);
* runs: per instance, ``--steps`` synthetic steps viewing real files at the base commit (the
  gold files, their neighbours in the same directories, and a few other source files): line
  ranges, whole files, and definitions by name.

Output (``OUT/``): ``repos/<owner>__<name>`` (a symbolic link to the clone), ``gold.jsonl``,
``runs/run<k>.jsonl`` (neutral trajectories), ``reference/`` (the published evaluator's inputs),
``touched.jsonl`` (what the parse floor parses) and ``workload.json``.

    python benchmarks/realhistory.py CLONE OUT --repo pydata/xarray [--instances 22]
        [--runs 5] [--steps 20] [--seed 0] [--swe-bench FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ctxeval.truth.patches import edit_locations
from ctxeval.truth.symbols import language_for_path
from workload import _write_jsonl, draw_step, run_records

_DEFAULT_SWE_BENCH = (Path(__file__).resolve().parents[2] / "shared" / "corpus" / "swe-bench"
                      / "swe-bench-lite-test.json")
_NAME = re.compile(rb"^\s*(?:async\s+)?(?:def|class|func|fn|function|struct|interface)\s+"
                   rb"([A-Za-z_][A-Za-z0-9_]*)", re.M)


class _Git:
    """Plain git plumbing on one repository (``git cat-file --batch`` for file bytes)."""

    def __init__(self, clone: Path) -> None:
        self.clone = clone
        self.env = {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
        self._cat = subprocess.Popen(self._cmd("cat-file", "--batch"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=self.env)

    def _cmd(self, *args: str) -> list[str]:
        return ["git", "-C", str(self.clone), *args]

    def run(self, *args: str) -> str:
        return subprocess.run(self._cmd(*args), capture_output=True, text=True, check=True,
                              env=self.env).stdout

    def has(self, rev: str) -> bool:
        return subprocess.run(self._cmd("cat-file", "-e", f"{rev}^{{commit}}"),
                              capture_output=True, env=self.env, check=False).returncode == 0

    def files(self, commit: str) -> dict[str, str]:
        """Source files (a known language) of ``commit``: path -> blob id."""
        out = {}
        for rec in self.run("ls-tree", "-r", "-z", "--full-tree", commit).split("\0"):
            meta, _, path = rec.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and language_for_path(path):
                out[path] = parts[2]
        return out

    def blob(self, oid: str) -> bytes:
        assert self._cat.stdin is not None and self._cat.stdout is not None
        self._cat.stdin.write(oid.encode() + b"\n")
        self._cat.stdin.flush()
        size = int(self._cat.stdout.readline().split()[2])
        data = self._cat.stdout.read(size)
        self._cat.stdout.read(1)
        return data

    def close(self) -> None:
        assert self._cat.stdin is not None
        self._cat.stdin.close()
        self._cat.wait()


def instance_commits(git: _Git, repo: str, n: int, swe_bench: Path | None
                     ) -> list[tuple[str, str, str | None]]:
    """(instance id, base commit, real gold patch or None) for ``n`` instances, oldest first."""
    real: list[tuple[str, str, str | None]] = []
    if swe_bench is not None and swe_bench.is_file():
        for rec in json.loads(swe_bench.read_text()):
            if rec.get("repo") == repo and git.has(rec["base_commit"]):
                real.append((rec["instance_id"], rec["base_commit"], rec.get("patch")))
    line = git.run("rev-list", "--first-parent", "--reverse", "HEAD").split()
    pos = {c: i for i, c in enumerate(line)}
    real = [r for r in real if r[1] in pos]
    real.sort(key=lambda r: pos[r[1]])
    lo, hi = (pos[real[0][1]], pos[real[-1][1]]) if len(real) >= 2 else \
        (max(0, len(line) - 2000), len(line) - 2)
    taken = {r[1] for r in real}
    extra: list[tuple[str, str, str | None]] = []
    want = max(0, n - len(real))
    for k in range(want):
        i = lo + (hi - lo) * (k + 1) // (want + 1)
        while line[i] in taken and i < hi:
            i += 1
        taken.add(line[i])
        extra.append((f"{repo.replace('/', '__')}-h{i}", line[i], None))
    out = sorted(real[:n] + extra, key=lambda r: pos[r[1]])
    return out[:n]


def commit_patch(git: _Git, commit: str, files: dict[str, str]) -> str:
    """The real diff from ``commit`` to its first-parent child, on at most three of the
    commit's source files (the "fix" that followed the instance's base commit)."""
    child = git.run("rev-list", "--first-parent", "--reverse", "--ancestry-path",
                    f"{commit}..HEAD").split()[:1]
    if not child:
        return ""
    changed = [p for p in git.run("diff", "--name-only", commit, child[0]).split()
               if p in files][:3]
    return git.run("diff", "--no-color", "-U0", commit, child[0], "--", *changed) \
        if changed else ""


def gold_context(patch: str, files: dict[str, str]) -> list[dict]:
    ctx = []
    try:
        locs = edit_locations(patch, origin="gold patch")
    except Exception:
        return ctx
    for path, edit in locs.files.items():
        if path not in files or not edit.lines:
            continue
        lines = sorted(edit.lines)
        start = prev = lines[0]
        for ln in [*lines[1:], None]:
            if ln is not None and ln <= prev + 6:
                prev = ln
                continue
            ctx.append({"file": path, "start_line": max(1, start - 3), "end_line": prev + 3})
            if ln is not None:
                start = prev = ln
    return ctx


def generate(clone: Path, out: Path, *, repo: str, instances: int = 22, runs: int = 5,
             steps: int = 20, seed: int = 0, swe_bench: Path | None = _DEFAULT_SWE_BENCH
             ) -> dict:
    """Write the workload under ``out``; returns its counts."""
    rng = random.Random(seed)
    git = _Git(clone)
    owner, name = repo.split("/")
    (out / "repos").mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    (out / "reference").mkdir(exist_ok=True)
    link = out / "repos" / f"{owner}__{name}"
    if not link.exists():
        link.symlink_to(clone.resolve())
    golds, ref_golds, layout = [], [], []
    for iid, commit, patch in instance_commits(git, repo, instances, swe_bench):
        files = git.files(commit)
        patch = patch or commit_patch(git, commit, files)
        ctx = gold_context(patch, files)
        gold_files = sorted({c["file"] for c in ctx}) or [rng.choice(sorted(files))]
        golds.append({"instance_id": iid, "repo": repo, "base_commit": commit,
                      "gold_context": ctx, "patch": patch, "source": "real-history"})
        ref_golds.append({"inst_id": iid, "original_inst_id": iid, "commit": commit,
                          "repo_url": str(clone.resolve()), "gold_ctx": ctx, "patch": patch})
        layout.append((commit, files, gold_files))
    info: dict[tuple[str, str], tuple[int, list[str]]] = {}

    def file_info(files: dict[str, str], path: str) -> tuple[int, list[str]]:
        oid = files[path]
        got = info.get((oid, path))
        if got is None:
            data = git.blob(oid)
            got = info[(oid, path)] = (max(1, data.count(b"\n")),
                                       sorted({m.decode() for m in _NAME.findall(data)}))
        return got

    touched, n_steps = [], 0
    for k in range(runs):
        rrng = random.Random(seed * 1000 + k + 1)
        neutral, ref = [], []
        for g, (commit, files, gold_files) in zip(golds, layout, strict=True):
            paths = sorted(files)
            dirs = {p.rsplit("/", 1)[0] for p in gold_files if "/" in p}
            near = [p for p in paths if "/" in p and p.rsplit("/", 1)[0] in dirs
                    and p not in gold_files]
            pool = list(gold_files) + rrng.sample(near, min(len(near), rrng.randrange(2, 7))) \
                + rrng.sample(paths, min(len(paths), rrng.randrange(1, 5)))
            st_list, ref_steps, seen = [], [], set()
            for s in range(steps):
                p = rrng.choice(pool)
                seen.add(p)
                n_lines, names = file_info(files, p)
                step, ref_step = draw_step(rrng, s, p, n_lines, names, whole=0.15, symbol=0.30)
                st_list.append(step)
                ref_steps.append(ref_step)
            n_steps += len(st_list)
            rec, ref_rec = run_records(g["instance_id"], f"run{k}", st_list, ref_steps,
                                       g["patch"], pool[0])
            neutral.append(rec)
            ref.append(ref_rec)
            patched = set(edit_locations(g["patch"]).files) if g["patch"] else set()
            touched.append({"run": f"run{k}", "instance_id": g["instance_id"], "repo": repo,
                            "commit": commit,
                            "paths": sorted((seen | set(gold_files) | patched) & set(files))})
        _write_jsonl(out / "runs" / f"run{k}.jsonl", neutral)
        _write_jsonl(out / "reference" / f"run{k}.jsonl", ref)
    git.close()
    _write_jsonl(out / "gold.jsonl", golds)
    _write_jsonl(out / "reference" / "gold.jsonl", ref_golds)
    _write_jsonl(out / "touched.jsonl", touched)
    counts = {"instances": len(golds), "runs": runs, "repos": 1, "steps": n_steps,
              "repo": repo, "kind": "real-history"}
    (out / "workload.json").write_text(json.dumps(counts, indent=1) + "\n")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a local clone of the repository (bare or not)")
    ap.add_argument("out", type=Path)
    ap.add_argument("--repo", required=True, help="owner/name, as in SWE-bench")
    ap.add_argument("--instances", type=int, default=22)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--swe-bench", type=Path, default=_DEFAULT_SWE_BENCH,
                    help="SWE-bench records giving real base commits and gold patches")
    a = ap.parse_args()
    print(generate(a.clone, a.out, repo=a.repo, instances=a.instances, runs=a.runs,
                   steps=a.steps, seed=a.seed, swe_bench=a.swe_bench))


if __name__ == "__main__":
    main()
