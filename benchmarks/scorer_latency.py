"""Per-call latency of ``ctxeval.Scorer`` (the RL reward path), warm and cold.

The workload is ``benchmarks/realhistory.py``'s (real files at real base commits of a real
clone, synthetic steps). Each rollout is handed to the scorer as an RL loop would: the parsed
JSON record, one call per rollout. Printed:

* baseline: ``ctxeval.evaluate`` called once per rollout (what a reward function without a
  long-lived scorer does: load the gold, open the repository, parse definitions, every call);
* cold: the scorer's first pass (each base commit and file version met for the first time);
* warm: later passes over the same rollouts (p50, p90, p99, max), and the speed-up over the
  baseline, measured in the same process.

    python benchmarks/scorer_latency.py CLONE --repo psf/requests [--instances 22]
        [--runs 5] [--steps 20] [--passes 5] [--baseline 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ctxeval
from realhistory import generate


def quantiles(ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return (f"p50 {q[49]:.2f} ms, p90 {q[89]:.2f} ms, p99 {q[98]:.2f} ms, "
            f"max {max(ms):.2f} ms, mean {statistics.fmean(ms):.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--instances", type=int, default=22)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--passes", type=int, default=5, help="warm passes over the rollouts")
    ap.add_argument("--baseline", type=int, default=20,
                    help="rollouts scored by one ctxeval.evaluate call each")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctxeval-scorer-"))
    try:
        wl = work / "wl"
        generate(a.clone, wl, repo=a.repo, instances=a.instances, runs=a.runs, steps=a.steps)
        rollouts = [orjson.loads(line) for p in sorted((wl / "runs").glob("*.jsonl"))
                    for line in p.read_bytes().splitlines() if line.strip()]
        print(f"{len(rollouts)} rollouts over {a.instances} real commits of {a.repo}, "
              f"{a.steps} steps each")

        base: list[float] = []
        for k, rec in enumerate(rollouts[: a.baseline]):
            one = work / f"one-{k}.jsonl"
            one.write_bytes(orjson.dumps(rec) + b"\n")
            t = time.perf_counter()
            ctxeval.evaluate(wl / "gold.jsonl", {"rollout": one}, repos=wl / "repos")
            base.append(1000 * (time.perf_counter() - t))
        print(f"baseline, one ctxeval.evaluate per rollout ({len(base)}): {quantiles(base)}")

        t = time.perf_counter()
        scorer = ctxeval.Scorer(gold=wl / "gold.jsonl", repos=wl / "repos",
                                cache_dir=work / "cache")
        print(f"Scorer(...) constructed in {1000 * (time.perf_counter() - t):.1f} ms")
        with scorer:
            cold: list[float] = []
            first = []
            for rec in rollouts:
                t = time.perf_counter()
                first.append(scorer.score(rec))
                cold.append(1000 * (time.perf_counter() - t))
            print(f"cold pass ({len(cold)} calls): {quantiles(cold)}")
            warm: list[float] = []
            for _ in range(a.passes):
                for rec, want in zip(rollouts, first, strict=True):
                    t = time.perf_counter()
                    row = scorer.score(rec)
                    warm.append(1000 * (time.perf_counter() - t))
                    if row != want:
                        raise SystemExit(f"a warm call changed the row of {rec['instance_id']}")
            print(f"warm ({a.passes} passes, {len(warm)} calls): {quantiles(warm)}")
            print(f"speed-up of a warm call over the baseline (median): "
                  f"{statistics.median(base) / statistics.median(warm):.0f}x")
            rewards = [scorer.reward(rec) for rec in rollouts[:5]]
            print(f"reward (final.line.f1) of the first rollouts: {rewards}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
