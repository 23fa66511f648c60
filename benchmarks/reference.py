"""ctxeval against the published ContextBench evaluator on one leaderboard-shaped workload.

Not run in CI: it needs the published evaluator's source and its own environment, which this
project neither ships nor builds (see ``benchmarks/reference.md`` for how to make them). The
workload (``benchmarks/workload.py``) has R runs over the same N instances, each instance at its
own commit; the published evaluator reads the same instances, trajectories and repositories in
its own formats (``reference/`` in the workload directory).

Timed, each on one core (one process, ``taskset -c 0`` when available):

* the published evaluator, every run file in turn as it is used (``python -m
  contextbench.evaluate --gold ... --pred run<k>.jsonl``), starting without its checkouts;
* ``ctxeval`` on all runs in one evaluation: cold (no symbol cache), cold with incremental
  parsing, and warm (a re-evaluation with the on-disk symbol cache filled).

    python benchmarks/reference.py --python REF_VENV/bin/python --source REF_CHECKOUT \\
        [--instances 100] [--runs 5] [--repos 4] [--workload DIR]

``REF_CHECKOUT`` is the directory holding the ``contextbench`` package (``Context-Bench/``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import cli_has_cache, command, timed
from workload import generate


def _pin() -> list[str]:
    return ["taskset", "-c", "0"] if shutil.which("taskset") else []


def run_reference(python: str, source: Path, wl: Path, scratch: Path) -> float:
    """Seconds for the published evaluator over every run file, from no checkouts."""
    env = {**os.environ, "PYTHONPATH": str(source), "CONTEXTBENCH_TMP_ROOT": str(scratch / "wt")}
    total = 0.0
    for k, pred in enumerate(sorted((wl / "reference").glob("run*.jsonl"))):
        cmd = [*_pin(), python, "-m", "contextbench.evaluate", "--gold",
               str(wl / "reference" / "gold.jsonl"), "--pred", str(pred),
               "--cache", str(scratch / "cache"), "--out", str(scratch / f"ref{k}.jsonl")]
        t = time.perf_counter()
        res = subprocess.run(cmd, env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, check=False)
        dt = time.perf_counter() - t
        if res.returncode != 0:
            raise SystemExit(f"the published evaluator failed on {pred} ({res.returncode})")
        rows = sum(1 for _ in (scratch / f"ref{k}.jsonl").open())
        print(f"  published evaluator, {pred.name}: {dt:7.2f}s ({rows} rows)")
        total += dt
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="the published evaluator's Python")
    ap.add_argument("--source", type=Path,
                    help="directory holding its contextbench package")
    ap.add_argument("--workload", type=Path)
    ap.add_argument("--instances", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repos", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reference-seconds", type=float,
                    help="skip the published evaluator and take this earlier total for it "
                         "(same workload)")
    a = ap.parse_args()
    if a.reference_seconds is None and (a.python is None or a.source is None):
        ap.error("--python and --source are needed unless --reference-seconds is given")
    with tempfile.TemporaryDirectory(prefix="ctxeval-ref-") as tmp_s:
        tmp = Path(tmp_s)
        wl = a.workload
        if wl is None:
            wl = tmp / "workload"
            generate(wl, instances=a.instances, runs=a.runs, repos=a.repos, seed=a.seed)
        meta = json.loads((wl / "workload.json").read_text())
        runs = sorted((wl / "runs").glob("*.jsonl"))
        rows = sum(1 for r in runs for _ in r.open())
        print(f"workload: {meta['instances']} instances x {meta['runs']} runs = {rows} rows")
        (tmp / "ref").mkdir()
        ref = a.reference_seconds or run_reference(a.python, a.source, wl, tmp / "ref")
        print(f"published evaluator, all runs: {ref:.2f}s, {rows / ref:.2f} rows/s")
        cli = cli_has_cache()
        gold = wl / "gold.jsonl"
        out = tmp / "out"
        out.mkdir()
        pin = _pin()
        cache = str(tmp / "cache")
        figures = {
            "cold": timed([pin + command(wl, runs, gold, out / "a.jsonl", None, False, 1,
                                          cli)]),
            "cold+incremental": timed([pin + command(wl, runs, gold, out / "b.jsonl", None,
                                                      True, 1, cli)]),
        }
        timed([pin + command(wl, runs, gold, out / "c.jsonl", cache, False, 1, cli)])
        figures["warm"] = timed([pin + command(wl, runs, gold, out / "d.jsonl", cache, False,
                                                1, cli)])
        for label, secs in figures.items():
            print(f"ctxeval {label:18s} {secs:7.2f}s  {rows / secs:8.1f} rows/s  "
                  f"{ref / secs:6.1f}x the published evaluator")


if __name__ == "__main__":
    main()
