"""Where a cold one-core ``ctxeval evaluate`` spends its CPU, stage by stage, on a workload.

The workload is a directory made by ``benchmarks/realhistory.py`` (real files at real base
commits first) or ``benchmarks/workload.py`` (synthetic, second). Everything runs pinned to one
CPU, and every figure is CPU seconds (user and system, ``git`` children included) measured in
this one run, so the split adds up against the whole evaluation measured here too:

* **interpreter**: ``python -c pass``;
* **imports**: what ``ctxeval evaluate`` imports before it reads anything (its module, its
  parser), less the interpreter;
* **gold**: loading the gold file;
* **trajectories**: reading every run's inputs with their adapters (``read_inputs``);
* **git reads**: every blob the runs touch, read from the repositories at their commits
  (``git cat-file`` and ``ls-tree``, as the evaluator reads them);
* **parse floor**: tree-sitter parsing each distinct touched blob once, from scratch (the
  least CPU of ``--repeat`` passes, as every figure here);
* **extraction beyond the floor**: the native core's extraction of the same blobs (each
  path's versions in order, re-parsed incrementally as the evaluator does, the walk, naming
  and line diffs) in this process, less the parse floor; below zero where re-parsing saves
  more than the rest costs;
* **the rest**: the whole cold evaluation less all of the above: planning, scoring, writing
  rows, and handing work between the threads.

A warm evaluation (definitions from the disk cache, no parse) is measured too: less the
interpreter, imports, gold and trajectories, it is git reads, planning, scoring and writing.
``benchmarks/evaluate.py`` prints the same split at the end of its run (:func:`split`).

    python benchmarks/stages.py WORKLOAD [--repeat 3]
    python benchmarks/realhistory.py CLONE WORKLOAD --repo pydata/xarray   # makes WORKLOAD
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ctxeval.reading.inputs import read_inputs
from ctxeval.truth.gold import load_gold
from floors import parse_floor_times, touched_blobs
from timing import child_env, command, one_cpu


def _cpu() -> float:
    """CPU seconds of this process and its ended children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_of(fn: Callable[[], object], repeat: int) -> float:
    """Least CPU seconds of ``repeat`` calls of ``fn`` in this process."""
    best = float("inf")
    for _ in range(repeat):
        t = _cpu()
        fn()
        best = min(best, _cpu() - t)
    return best


def child_cpu(cmd: list[str], repeat: int, before: Callable[[], None] | None = None) -> float:
    """Least CPU seconds (its whole process tree, once ended) of ``repeat`` runs of ``cmd``."""
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        t = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=child_env(), check=True, stdout=subprocess.DEVNULL)
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, u.ru_utime + u.ru_stime - t.ru_utime - t.ru_stime)
    return best


#: What ``ctxeval evaluate`` imports and builds before it reads anything (written for versions
#: whose ``build_parser`` builds every command too, so that before and after can be compared).
_IMPORTS = """
import inspect
from ctxeval import cli
one = bool(inspect.signature(cli.build_parser).parameters)
cli.build_parser("evaluate") if one else cli.build_parser()
import ctxeval.evaluation.pipeline
"""


def read_trajectories(runs: list[Path]) -> int:
    n = 0
    for r in runs:
        for res in read_inputs([str(r)]):
            n += len(res.trajectories)
    return n


def extraction(blobs: list[tuple[str, str, bytes]]) -> None:
    """The native core's extraction of ``blobs`` (no disk cache), each path's versions in
    first-touch order, as the evaluator's extract stage takes them."""
    from ctxeval.truth.extraction import SymbolSettings

    order = sorted(range(len(blobs)), key=lambda k: (blobs[k][1], k))
    SymbolSettings(None, True).extractor().get_many(
        [(blobs[k][0], blobs[k][2], blobs[k][1], "strict") for k in order], 1)


def split(wl: Path, repeat: int) -> list[str]:
    """The lines of the split of ``wl``'s cold one-core evaluation (the caller pins this
    process to one CPU first: the children measured inherit it)."""
    runs = sorted((wl / "runs").glob("*.jsonl"))
    gold = wl / "gold.jsonl"
    tmp = Path(tempfile.mkdtemp(prefix="ctxeval-stages-"))
    try:
        out = tmp / "rows.jsonl"
        cache = tmp / "cache"

        def fresh() -> None:
            out.unlink(missing_ok=True)

        def fill() -> None:
            fresh()
            shutil.rmtree(cache, ignore_errors=True)
            subprocess.run(command(wl, runs, gold, out, str(cache), True, 1, True),
                           env=child_env(), check=True)
            fresh()

        interp = child_cpu([sys.executable, "-c", "pass"], repeat)
        started = child_cpu([sys.executable, "-c", _IMPORTS], repeat)
        figures = {
            "interpreter": interp,
            "imports": started - interp,
            "gold": cpu_of(lambda: load_gold([gold]), repeat),
            "trajectories": cpu_of(lambda: read_trajectories(runs), repeat),
            # every touched blob read from git at its commit, as the floor's blobs are read
            "git reads": cpu_of(lambda: touched_blobs(wl), repeat),
        }
        blobs = touched_blobs(wl)
        wall, figures["parse floor"] = parse_floor_times(blobs, repeat)
        figures["extraction beyond the floor"] = \
            cpu_of(lambda: extraction(blobs), repeat) - figures["parse floor"]
        whole = child_cpu(command(wl, runs, gold, out, None, True, 1, True), repeat, fresh)
        fill()
        warm = child_cpu(command(wl, runs, gold, out, str(cache), True, 1, True), repeat,
                         fresh)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    floor = figures["parse floor"]
    figures["the rest"] = whole - sum(figures.values())
    rows = sum(1 for r in runs for line in r.open() if line.strip())
    width = max(map(len, figures))
    lines = [f"workload: {wl.name}, {len(runs)} runs, {rows} trajectories, {len(blobs)} "
             f"distinct blobs; CPU seconds, pinned to one CPU, least of {repeat}",
             f"{'stage':{width}s} {'CPU s':>7s} {'share':>6s} {'/ floor':>8s}"]
    for name, secs in figures.items():
        lines.append(f"{name:{width}s} {secs:7.3f} {secs / whole:6.1%} {secs / floor:7.2f}x")
    lines.append(f"{'cold, -j 1':{width}s} {whole:7.3f} {1:6.1%} {whole / floor:7.2f}x  "
                 "(the whole run)")
    rest_warm = warm - figures["interpreter"] - figures["imports"] - figures["gold"] \
        - figures["trajectories"]
    lines.append(f"{'warm, -j 1':{width}s} {warm:7.3f} {'':6s} {warm / floor:7.2f}x  (of "
                 f"which git reads, planning, scoring and writing: {rest_warm:.3f})")
    lines.append(f"parse floor wall {wall:.3f} s")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (least kept)")
    a = ap.parse_args()
    one_cpu()
    print("\n".join(split(a.workload, a.repeat)))


if __name__ == "__main__":
    main()
