"""Statistics for research tables: means, bootstrap intervals, paired tests, multiple comparisons.

Pure Python and deterministic given a seed (``random.Random(seed)``), so a table can be
regenerated bit for bit. Values are sequences of floats in which ``None`` (and NaN) means
"undefined": plain statistics skip such values, paired ones drop the whole pair.

Conventions, chosen once and written here so that tables can cite them:

- Bootstrap intervals are percentile intervals of the resampled mean; quantiles interpolate
  linearly between order statistics (Hyndman & Fan type 7, NumPy's default).
- The randomization test flips the signs of the paired differences (the null hypothesis is that
  the two runs are exchangeable on each instance); the statistic is |mean difference|, and a
  permuted statistic within 1e-9 (relative to the sum of |differences|) of the observed one
  counts as extreme. When all ``2^k`` sign vectors fit in the budget ``n`` they are enumerated
  and the p-value is exact; otherwise ``n`` random flips give ``(1 + #extreme) / (1 + n)``,
  which is never 0.
- Holm–Bonferroni adjusted p-values are the step-down ones, made monotone and capped at 1.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from itertools import compress, product
from operator import mul
from typing import Any

__all__ = [
    "bootstrap_ci",
    "clean",
    "describe",
    "holm_bonferroni",
    "mean",
    "paired",
    "paired_bootstrap_ci",
    "paired_randomization_test",
    "quantile",
    "win_tie_loss",
]


#: Relative tolerance (to the sum of |differences|) under which a permuted statistic counts as
#: equal to the observed one.
_TIE_TOL = 1e-9


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def clean(values: Iterable[float | None]) -> list[float]:
    """The defined values, as floats (None and NaN left out)."""
    return [float(v) for v in values if not _missing(v)]


def paired(a: Sequence[float | None], b: Sequence[float | None]) -> list[tuple[float, float]]:
    """Pairs (a_i, b_i) where both are defined; a pair with an undefined side is dropped."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    return [(float(x), float(y)) for x, y in zip(a, b, strict=True)
            if not _missing(x) and not _missing(y)]


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the defined values (exactly rounded sum); None when there are none."""
    vals = clean(values)
    return math.fsum(vals) / len(vals) if vals else None


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Type-7 quantile (linear interpolation) of an already sorted, non-empty sequence."""
    if not sorted_values:
        raise ValueError("quantile of an empty sequence")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile level must be in [0, 1], got {q}")
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")


def _bootstrap(vals: list[float], level: float, n: int, seed: int) -> tuple[float, float] | None:
    _check_level(level)
    if n < 1:
        raise ValueError(f"number of resamples must be at least 1, got {n}")
    if not vals:
        return None
    if min(vals) == max(vals):
        # Every resample has this mean; say so exactly rather than up to rounding.
        return (vals[0], vals[0])
    rng = random.Random(seed)
    k = len(vals)
    means = sorted(sum(rng.choices(vals, k=k)) / k for _ in range(n))
    alpha = 1.0 - level
    return (quantile(means, alpha / 2), quantile(means, 1.0 - alpha / 2))


def bootstrap_ci(values: Iterable[float | None], *, level: float = 0.95, n: int = 10000,
                 seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean; None when no value is defined."""
    return _bootstrap(clean(values), level, n, seed)


def paired_bootstrap_ci(a: Sequence[float | None], b: Sequence[float | None], *,
                        level: float = 0.95, n: int = 10000,
                        seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap interval of mean(a - b) over the defined pairs (instances are
    resampled as pairs, which keeps the per-instance correlation of the two runs)."""
    return _bootstrap([x - y for x, y in paired(a, b)], level, n, seed)


def paired_randomization_test(a: Sequence[float | None], b: Sequence[float | None], *,
                              n: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value of mean(a - b) = 0 by random sign flips of the paired differences.

    Exact (full enumeration of the ``2^k`` sign vectors) when ``2^k <= n``; otherwise Monte
    Carlo with ``n`` flips and the add-one estimate. No defined pair gives 1.0 (no evidence).
    """
    if n < 1:
        raise ValueError(f"number of permutations must be at least 1, got {n}")
    d = [x - y for x, y in paired(a, b)]
    k = len(d)
    if k == 0:
        return 1.0
    total = math.fsum(d)
    observed = abs(total)
    # Flipped sums equal to the observed one up to rounding count as extreme (conservative).
    tol = _TIE_TOL * math.fsum(abs(x) for x in d)
    if observed <= tol:
        return 1.0
    threshold = observed - tol
    if k < 63 and 2 ** k <= n:
        extreme = sum(1 for signs in product((1.0, -1.0), repeat=k)
                      if abs(math.fsum(map(mul, signs, d))) >= threshold)
        return extreme / 2 ** k
    # Monte Carlo: each draw is k random bits, bit i flipping d_i; the flipped sum is
    # total - 2 * (sum of the flipped d_i), selected at C speed with itertools.compress.
    rng = random.Random(seed)
    to01 = bytes.maketrans(b"01", b"\x00\x01")
    width = f"0{k}b"
    extreme = 0
    for _ in range(n):
        mask = format(rng.getrandbits(k), width).encode().translate(to01)
        if abs(total - 2.0 * sum(compress(d, mask))) >= threshold:
            extreme += 1
    return (1 + extreme) / (1 + n)


def holm_bonferroni(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values, in the input order; None entries are not tests and
    stay None (they do not count in the number of comparisons)."""
    idx = [i for i, p in enumerate(pvalues) if not _missing(p)]
    for i in idx:
        p = pvalues[i]
        assert p is not None
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-value out of [0, 1] at position {i}: {p}")
    m = len(idx)
    order = sorted(idx, key=lambda i: pvalues[i])  # type: ignore[arg-type, return-value]
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        p = pvalues[i]
        assert p is not None
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def win_tie_loss(a: Sequence[float | None], b: Sequence[float | None], *,
                 tol: float = 1e-12) -> tuple[int, int, int]:
    """Counts of defined pairs with a > b, |a - b| <= tol, a < b."""
    wins = ties = losses = 0
    for x, y in paired(a, b):
        if x - y > tol:
            wins += 1
        elif y - x > tol:
            losses += 1
        else:
            ties += 1
    return wins, ties, losses


def describe(values: Iterable[float | None]) -> dict[str, Any]:
    """Exploration summary: n, nulls, mean, median, std (sample, n-1), min, q1, q3, max.

    Quartiles are type-7; std is None below two values; everything but the counts is None for
    an empty sample.
    """
    raw = list(values)
    vals = sorted(clean(raw))
    k = len(vals)
    out: dict[str, Any] = {"n": k, "nulls": len(raw) - k}
    if not k:
        out.update(dict.fromkeys(("mean", "median", "std", "min", "q1", "q3", "max")))
        return out
    m = math.fsum(vals) / k
    std = math.sqrt(math.fsum((v - m) ** 2 for v in vals) / (k - 1)) if k > 1 else None
    out.update({"mean": m, "median": quantile(vals, 0.5), "std": std, "min": vals[0],
                "q1": quantile(vals, 0.25), "q3": quantile(vals, 0.75), "max": vals[-1]})
    return out
