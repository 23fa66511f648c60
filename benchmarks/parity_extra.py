"""Run the published ContextBench evaluator on the project's own parity cases (``fixtures/parity``).

Usage (never in CI; see ``benchmarks/reference.md`` for the evaluator's environment)::

    python benchmarks/parity_extra.py --python /path/to/cbref-venv/bin/python \\
        --source /path/to/ContextBench/Context-Bench --scratch /tmp/parity-extra

The cases' trees are ``fixtures/parity/repos``. Each tree
named by the gold file is made into a one-commit git repository in the scratch directory (the
evaluator checks out commits with git), the gold is rewritten into the evaluator's JSONL format
(``inst_id``, ``original_inst_id``, ``commit``, ``gold_ctx``, ``patch``, ``repo_url``), and the
evaluator is run once per trajectory file of ``fixtures/parity/index.json``, as the shared
suite was (``python -m contextbench.evaluate --gold … --pred … --cache … --out …``). Every line
it writes is stored in ``fixtures/parity/expected/results.jsonl`` with ``pred_file`` and
``out_line`` added; a run that raises gives a ``reference_crash`` row. The reference's names
of the definitions of every source file of the cases (its ``extract_named_defs``) are stored in
``fixtures/parity/expected/named_defs.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "parity"
TREES = (CASES / "repos",)
GIT_ENV = {"GIT_AUTHOR_NAME": "Parity Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
           "GIT_COMMITTER_NAME": "Parity Fixture",
           "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
           "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000"}


def _git(args: list[str], cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-c", "core.autocrlf=false", *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout.strip()


def one_commit_repo(tree: Path, dest: Path) -> str:
    """``tree`` as a fresh one-commit git repository at ``dest``; its commit id."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(tree, dest)
    _git(["init", "-q"], dest)
    _git(["add", "-A"], dest)
    _git(["commit", "-q", "-m", "base snapshot"], dest)
    return _git(["rev-parse", "HEAD"], dest)


def reference_gold(scratch: Path) -> Path:
    """The cases' gold in the evaluator's format, with local repositories."""
    rows = []
    made: dict[str, tuple[Path, str]] = {}
    for line in (CASES / "gold.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        g = json.loads(line)
        key = f"{g['repo'].replace('/', '__')}@{g['base_commit']}"
        if key not in made:
            dest = scratch / "repos" / key
            tree = next(t / key for t in TREES if (t / key).is_dir())
            made[key] = (dest, one_commit_repo(tree, dest))
        dest, commit = made[key]
        rows.append({"inst_id": g["instance_id"], "original_inst_id": g["instance_id"],
                     "commit": commit, "gold_ctx": g["gold_context"], "patch": g["patch"],
                     "repo_url": str(dest)})
    out = scratch / "ref_gold.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", required=True, help="the evaluator's own Python")
    ap.add_argument("--source", required=True, type=Path,
                    help="Context-Bench/ of anonymousUser2026/ContextBench at cd5f62e4")
    ap.add_argument("--scratch", required=True, type=Path)
    a = ap.parse_args(argv)
    a.scratch.mkdir(parents=True, exist_ok=True)
    for stale in ("wt", "cache"):  # worktrees of repositories made by an earlier run
        shutil.rmtree(a.scratch / stale, ignore_errors=True)
    gold = reference_gold(a.scratch)
    index = json.loads((CASES / "index.json").read_text())["trajectories"]
    env = {**os.environ, "PYTHONPATH": str(a.source),
           "CONTEXTBENCH_TMP_ROOT": str(a.scratch / "wt"), "SYMBOL_DETAIL_MAX": "100000"}
    rows = []
    for n, t in enumerate(index):
        out = a.scratch / "out" / f"{n}.jsonl"
        out.parent.mkdir(exist_ok=True)
        out.unlink(missing_ok=True)
        proc = subprocess.run([a.python, "-m", "contextbench.evaluate", "--gold", str(gold),
                               "--pred", str(CASES / t["pred_file"]), "--cache",
                               str(a.scratch / "cache"), "--out", str(out)],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            rows.append({"pred_file": t["pred_file"], "reference_crash": last})
            continue
        for k, line in enumerate(out.read_text().splitlines(), start=1):
            if line.strip():
                rows.append({**json.loads(line), "pred_file": t["pred_file"], "out_line": k})
    dest = CASES / "expected" / "results.jsonl"
    dest.parent.mkdir(exist_ok=True)
    dest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} rows written to {dest.relative_to(ROOT)}")
    names = reference_names(a.python, env)
    out = CASES / "expected" / "named_defs.json"
    out.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    print(f"named definitions of {len(names)} files written to {out.relative_to(ROOT)}")
    return 0


# The reference's own extractor, called in its environment on each source file of the cases:
# (kind, name, start byte, end byte) of every definition it can name.
_NAMES_PROGRAM = """
import json, sys
from contextbench.extractors.treesitter import extract_named_defs
print(json.dumps({rel: [list(d) for d in extract_named_defs(path)]
                  for rel, path in json.loads(sys.argv[1]).items()}))
"""
_SOURCE = (".c", ".h", ".cpp", ".cc", ".hpp", ".py", ".java", ".go", ".rs", ".ts", ".js")


def reference_names(python: str, env: dict[str, str]) -> dict[str, Any]:
    """What the reference names each definition of the cases' source files."""
    files = {f"{p.relative_to(CASES / 'repos').as_posix()}": str(p)
             for p in sorted((CASES / "repos").rglob("*")) if p.suffix in _SOURCE}
    proc = subprocess.run([python, "-c", _NAMES_PROGRAM, json.dumps(files)], env=env,
                          check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


if __name__ == "__main__":
    sys.exit(main())
