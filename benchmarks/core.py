"""Throughput of the native engine alone: synthetic instances through ``evaluate_batch``.

Prints instances per second and milliseconds per instance with 1 and 2 threads, and, as the
in-process baseline, the same instances scored by the pure-Python set oracle of the tests (on a
sample, since it is slow). Target (issue "Foundation"): under 0.2 ms per instance on one thread.

    python benchmarks/core.py [--instances 10000] [--steps 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from ctxeval import _core

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def make_files(rng: random.Random, n: int) -> list[tuple[bytes, list[tuple[int, int]]]]:
    """Synthetic source files (300-3000 lines) with nested definitions every ~20 lines."""
    files = []
    for _ in range(n):
        n_lines = rng.randint(300, 3000)
        lines = [("    " * rng.randint(0, 2) + "x" * rng.randint(0, 60) + "\n").encode()
                 for _ in range(n_lines)]
        data = b"".join(lines)
        starts = [0]
        for ln in lines[:-1]:
            starts.append(starts[-1] + len(ln))
        syms = []
        for first in range(0, n_lines - 20, 20):
            last = min(n_lines - 1, first + rng.randint(3, 40))
            end = starts[last + 1] - 1 if last + 1 < n_lines else len(data)
            syms.append((starts[first], end))
        files.append((data, syms))
    return files


def make_instance(rng: random.Random, files: list, n_steps: int) -> dict:
    chosen = rng.sample(range(len(files)), k=min(len(files), rng.randint(2, 6)))
    table = [files[i] for i in chosen]
    entries = [{"index": ix, "symbols": syms} for ix, syms in table]

    def ranges(k: int) -> list[tuple[int, int, int | None]]:
        out = []
        for _ in range(k):
            f = rng.randrange(len(table))
            n = table[f][0].line_count
            a = rng.randint(1, n)
            out.append((f, a, min(n, a + rng.randint(0, 80))))
        return out

    return {
        "files": entries,
        "gold": {"lines": ranges(rng.randint(1, 15))},
        "steps": [{"lines": ranges(rng.randint(0, 3))} for _ in range(n_steps)],
        "final": None,
        "gold_edits": {"files": [0], "lines": [(0, 10, 10), (0, 40, 42)]},
        "pred_edits": {"files": [0], "lines": [(0, 41, 41)]},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oracle-sample", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    raw = make_files(rng, 40)
    files = [(_core.LineIndex(data), syms) for data, syms in raw]
    insts = [make_instance(rng, files, args.steps) for _ in range(args.instances)]
    print(f"{args.instances} instances x {args.steps} steps, 40 synthetic files")

    per = {}
    for threads in (1, 2):
        _core.evaluate_batch(insts[:200], "strict", threads)  # warm-up
        t0 = time.perf_counter()
        _core.evaluate_batch(insts, "strict", threads)
        dt = time.perf_counter() - t0
        per[threads] = dt / len(insts)
        print(f"  {threads} thread(s): {len(insts) / dt:10.0f} instances/s  "
              f"{per[threads] * 1e3:.4f} ms/instance")
    print(f"  2 threads vs 1: {per[1] / per[2]:.2f}x")
    print(f"  1 thread vs the 0.2 ms/instance target: {per[1] / 2e-4:.2f} of the budget")

    import oracle  # the tests' pure-Python set model, as a same-process baseline

    sample = insts[: args.oracle_sample]
    ofiles_by_id = {id(ix): oracle.OracleFile(data, syms)
                    for (ix, syms), (data, _) in zip(files, raw, strict=True)}
    t0 = time.perf_counter()
    for inst in sample:
        ofiles = [ofiles_by_id[id(e["index"])] for e in inst["files"]]
        oracle.evaluate(ofiles, inst)
    dt_oracle = (time.perf_counter() - t0) / len(sample)
    print(f"  Python set oracle: {dt_oracle * 1e3:.1f} ms/instance "
          f"-> engine is {dt_oracle / per[1]:.0f}x faster on one thread")


if __name__ == "__main__":
    main()
