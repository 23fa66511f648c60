"""Speed of the statistics: the native bootstrap against the pure-Python one it replaced, in the
same process, and the absolute time of the sizes issue 22 asks for.

Printed:

* bootstrap of a mean, ``--baseline-rows`` values x ``--resamples`` resamples: the Python
  implementation (``tests/stats_oracle.py``, ctxeval's own before the core took it over) and
  ``ctxeval.analysis.stats.bootstrap_ci``, their ratio, and that both give the same interval;
* the same for the stratified AUROC interval (on fewer rows: the Python oracle compares every
  pair);
* absolute: a 10,000-resample interval over 10,000 values (target: under 2 s), the AUROC
  interval at that size, and the outcome view's statistics of 34 metrics x 500 rows.

Every figure is the best of ``--repeat`` runs (the machine is shared; the minimum is the least
disturbed). Times in seconds.

    python benchmarks/stats.py [--baseline-rows 1500] [--resamples 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import stats_oracle as oracle
from ctxeval import _core
from ctxeval.analysis import stats


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The shortest of ``repeat`` timed calls, and the result of the last."""
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def metric_like(rng: random.Random, n: int) -> list[float]:
    """Values shaped like context metrics: a third exactly 1.0, some 0.0, the rest in (0, 1)."""
    out = []
    for _ in range(n):
        u = rng.random()
        out.append(1.0 if u < 0.33 else 0.0 if u < 0.4 else rng.random())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-rows", type=int, default=1500)
    ap.add_argument("--auroc-rows", type=int, default=300)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    n = args.resamples

    vals = metric_like(rng, args.baseline_rows)
    t_py, want = best(lambda: oracle.bootstrap_ci(vals, n=n, seed=1), 1)
    t_rs, got = best(lambda: stats.bootstrap_ci(vals, n=n, seed=1), args.repeat)
    print(f"bootstrap of the mean, {len(vals)} values x {n} resamples: python {t_py:.3f} s, "
          f"native {t_rs:.3f} s, ratio {t_py / t_rs:.1f}x; same interval: {got == want}")

    vals = metric_like(rng, args.auroc_rows)
    labels = [rng.random() < 0.5 + 0.3 * (v - 0.5) for v in vals]
    t_py, want = best(lambda: oracle.auroc_ci(vals, labels, n=n, seed=1), 1)
    t_rs, got = best(lambda: stats.auroc_ci(vals, labels, n=n, seed=1), args.repeat)
    print(f"AUROC interval, {len(vals)} values x {n} resamples: python {t_py:.3f} s, "
          f"native {t_rs:.3f} s, ratio {t_py / t_rs:.1f}x; same interval: {got == want}")

    big = metric_like(rng, 10_000)
    t, ci = best(lambda: stats.bootstrap_ci(big, n=10_000, seed=1), args.repeat)
    print(f"bootstrap of the mean, 10000 values x 10000 resamples: {t:.3f} s (target < 2 s); "
          f"interval [{ci[0]:.4f}, {ci[1]:.4f}]")
    big_labels = [rng.random() < 0.4 + 0.4 * v for v in big]
    t, _ = best(lambda: stats.auroc_ci(big, big_labels, n=10_000, seed=1), args.repeat)
    print(f"AUROC interval, 10000 values x 10000 resamples: {t:.3f} s")

    items = []
    for _ in range(34):
        v = metric_like(rng, 500)
        items.append((v, [rng.random() < 0.5 + 0.3 * (x - 0.5) for x in v]))
    t, _ = best(lambda: _core.stats_outcome_many(items, n, 0.95, 5, stats.seed_key(0)),
                args.repeat)
    print(f"outcome view statistics, 34 metrics x 500 rows x {n} resamples: {t:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
