"""What the ranking block costs a cold evaluation: the same workload evaluated with and without
it, each a fresh process with no disk cache, taken in turn.

    python benchmarks/ranking_cost.py WORKLOAD [--repeat 6] [-j 1]

``WORKLOAD`` is a directory made by ``benchmarks/realhistory.py`` (or ``workload.py``):
``gold.jsonl``, ``runs/*.jsonl``, ``repos/``. Each round runs one evaluation with the ranking
block (the default) and one without (``ranking=None`` through the Python API, the only
difference), alternating which goes first; it prints each one's wall and CPU seconds, the
medians, and the ratio with/without, and checks that the rows are the same but for
``ranking``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
import json, sys, time
from pathlib import Path
from ctxeval.evaluation.pipeline import RunSpec, evaluate
from ctxeval.evaluation.ranking import DEFAULT_RANKING
wl, out, ranked, jobs = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
runs = [RunSpec(p.stem, [str(p)]) for p in sorted((wl / "runs").glob("*.jsonl"))]
t = time.perf_counter()
evaluate(gold=[wl / "gold.jsonl"], runs=runs, repos=wl / "repos", out=out, jobs=jobs,
         progress=False, cache_dir=None, ranking=DEFAULT_RANKING if ranked else None)
print(json.dumps({"wall": time.perf_counter() - t}))
"""


def one(wl: Path, out: Path, ranked: bool, jobs: int) -> tuple[float, float]:
    """(wall seconds of the evaluation, CPU seconds of the whole child) of one fresh run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", DRIVER, str(wl), str(out),
                           "1" if ranked else "0", str(jobs)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout.strip().splitlines()[-1])["wall"], cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", type=Path)
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="ctxeval-rank-") as tmp_s:
        tmp = Path(tmp_s)
        for k in range(args.repeat):
            for ranked in ((True, False) if k % 2 == 0 else (False, True)):
                out = tmp / f"{'with' if ranked else 'without'}-{k}.jsonl"
                times[ranked].append(one(args.workload, out, ranked, args.jobs))
                print(f"round {k + 1}: {'with   ' if ranked else 'without'} ranking: "
                      f"{times[ranked][-1][0]:.3f} s wall, {times[ranked][-1][1]:.3f} s CPU",
                      flush=True)
        with_rows = [json.loads(x) for x in (tmp / "with-0.jsonl").read_text().splitlines()]
        without = [json.loads(x) for x in (tmp / "without-0.jsonl").read_text().splitlines()]
    same = len(with_rows) == len(without) and all(
        {k: v for k, v in a.items() if k != "ranking"} == b
        for a, b in zip(with_rows, without, strict=True))
    ranked_rows = sum(1 for r in with_rows if isinstance(r.get("ranking"), dict))
    print(f"rows: {len(with_rows)}, {ranked_rows} with a ranking block; the same but for it: "
          f"{same}")
    for label, idx in (("wall", 0), ("CPU", 1)):
        w = statistics.median(t[idx] for t in times[True])
        wo = statistics.median(t[idx] for t in times[False])
        print(f"median {label}: with {w:.3f} s, without {wo:.3f} s, ratio {w / wo:.3f} "
              f"({100 * (w / wo - 1):+.1f}%)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
