"""Statistics for research tables: means, bootstrap intervals, paired tests, multiple
comparisons, AUROC, correlations and effect sizes.

The arithmetic of the resampling statistics, the rank statistics, the correlations and their
p-values, McNemar's test and the effect sizes is the native core's
(``rust/ctxeval-core/src/stats``, reached through :mod:`ctxeval._core`); this module chooses the
values (None and NaN mean "undefined": plain statistics skip such values, paired ones drop the
whole pair) and checks the arguments. Means, quantiles, summaries and Holm's adjustment stay
here: they are a line each.

Everything is deterministic given a seed. The resampling draws are those of Python's
``random.Random(seed)`` (the core reproduces its Mersenne Twister draw for draw), so a table
computed before the statistics moved to the core is the same to the bit, and a plain Python
loop over ``random.Random`` re-derives any resample. ``docs/statistics.md`` defines every
statistic; the conventions, chosen once and written here so that tables can cite them:

- Bootstrap intervals are percentile intervals of the resampled statistic; quantiles
  interpolate linearly between order statistics (Hyndman & Fan type 7, NumPy's default). A
  resampled mean is ``sum(rng.choices(values, k=len(values))) / len(values)``, the sum taken
  left to right.
- AUROC is the Mann–Whitney probability that a resolved instance has the higher value, ties
  counted half; its interval is a stratified bootstrap (resolved and unresolved instances
  resampled separately, keeping both counts).
- The randomization test flips the signs of the paired differences (the null hypothesis is that
  the two runs are exchangeable on each instance); the statistic is |mean difference|, and a
  permuted statistic within 1e-9 (relative to the sum of |differences|) of the observed one
  counts as extreme. When all ``2^k`` sign vectors fit in the budget ``n`` they are enumerated
  and the p-value is exact; otherwise ``n`` random flips give ``(1 + #extreme) / (1 + n)``,
  which is never 0.
- Correlation p-values are two-sided, from Student's t with n − 2 degrees of freedom (as
  scipy's ``pearsonr`` and ``spearmanr``); McNemar's test is the exact binomial one (as
  statsmodels' ``mcnemar(..., exact=True)``).
- Holm–Bonferroni adjusted p-values are the step-down ones, made monotone and capped at 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import index
from typing import Any

from .. import _core

__all__ = [
    "Correlation",
    "McNemar",
    "auroc",
    "auroc_ci",
    "bootstrap_ci",
    "clean",
    "cliffs_delta",
    "cohens_dz",
    "describe",
    "holm_bonferroni",
    "mcnemar",
    "mean",
    "paired",
    "paired_bootstrap_ci",
    "paired_randomization_test",
    "pearson",
    "point_biserial",
    "quantile",
    "seed_key",
    "spearman",
    "win_tie_loss",
]


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


def seed_key(seed: int) -> list[int]:
    """The key ``random.Random(seed)`` seeds its generator with: the 32-bit words of |seed|,
    least significant first (``[0]`` for 0). Seeds are integers (a bool counts as one)."""
    try:
        n = abs(index(seed))
    except TypeError:
        raise TypeError(f"a seed must be an integer, not {type(seed).__name__}") from None
    words = []
    while True:
        words.append(n & 0xFFFFFFFF)
        n >>= 32
        if not n:
            return words


def _check_resamples(n: int, what: str = "resamples") -> None:
    if n < 1:
        raise ValueError(f"number of {what} must be at least 1, got {n}")


def _bootstrap(vals: list[float], level: float, n: int, seed: int) -> tuple[float, float] | None:
    _check_level(level)
    _check_resamples(n)
    if not vals:
        return None
    got = _core.stats_bootstrap_mean_ci(vals, level, n, seed_key(seed))
    return None if got is None else (got[0], got[1])


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
    _check_resamples(n, "permutations")
    d = [x - y for x, y in paired(a, b)]
    if not d:
        return 1.0
    return float(_core.stats_randomization_test(d, n, seed_key(seed)))


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


# ------------------------------------------------------------------------------ association


@dataclass(frozen=True, slots=True)
class Correlation:
    """A correlation over ``n`` pairs: ``r`` and its two-sided ``p``, or None with ``reason``
    (``"n < 2"``, ``"constant metric"``); ``p`` is None below three pairs too."""

    r: float | None
    p: float | None
    n: int
    reason: str | None = None


def _labelled(values: Sequence[float | None], labels: Sequence[bool | None]
              ) -> tuple[list[float], list[bool]]:
    if len(values) != len(labels):
        raise ValueError(f"values and labels differ in length: {len(values)} and {len(labels)}")
    kept = [(float(v), bool(lab)) for v, lab in zip(values, labels, strict=True)
            if not _missing(v) and lab is not None]
    return [v for v, _ in kept], [lab for _, lab in kept]


def auroc(values: Sequence[float | None], labels: Sequence[bool | None]) -> float | None:
    """AUROC of ``values`` against ``labels`` (True: resolved): the probability that a resolved
    instance has the higher value, ties counted half (the Mann–Whitney U over n₁·n₀).
    Instances without a value or a label are left out; None unless both classes remain."""
    v, lab = _labelled(values, labels)
    return _core.stats_auroc(v, lab)


def auroc_ci(values: Sequence[float | None], labels: Sequence[bool | None], *,
             level: float = 0.95, n: int = 10000, seed: int = 0) -> tuple[float, float] | None:
    """Stratified percentile bootstrap interval of :func:`auroc`: each resample draws the
    resolved values with replacement, then the unresolved ones, keeping both counts. None
    unless both classes are present."""
    _check_level(level)
    _check_resamples(n)
    v, lab = _labelled(values, labels)
    got = _core.stats_auroc_ci(v, lab, level, n, seed_key(seed))
    return None if got is None else (got[0], got[1])


def _correlation(got: tuple[float | None, float | None, int, str | None]) -> Correlation:
    return Correlation(got[0], got[1], got[2], got[3])


def pearson(x: Sequence[float | None], y: Sequence[float | None]) -> Correlation:
    """Pearson's r over the defined pairs, with its two-sided p-value (Student's t, n − 2
    degrees of freedom)."""
    pairs = paired(x, y)
    return _correlation(_core.stats_pearson([a for a, _ in pairs], [b for _, b in pairs]))


def point_biserial(values: Sequence[float | None], labels: Sequence[bool | None]
                   ) -> Correlation:
    """The point-biserial correlation of a metric with resolution: Pearson's r of the values
    and the labels as 0/1 (instances without a value or a label left out). Null with the
    reason ``"n < 2"``, ``"all resolved"``, ``"none resolved"`` or ``"constant metric"``."""
    v, lab = _labelled(values, labels)
    if len(v) >= 2 and (all(lab) or not any(lab)):
        return Correlation(None, None, len(v), "all resolved" if lab[0] else "none resolved")
    return _correlation(_core.stats_pearson(v, [1.0 if x else 0.0 for x in lab]))


def spearman(x: Sequence[float | None], y: Sequence[float | None]) -> Correlation:
    """Spearman's ρ over the defined pairs (Pearson's r of the mid-ranks; ties share their
    mean rank), with its two-sided p-value (Student's t, n − 2 degrees of freedom)."""
    pairs = paired(x, y)
    return _correlation(_core.stats_spearman([a for a, _ in pairs], [b for _, b in pairs]))


# ------------------------------------------------------------------------------ paired runs


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's exact test of two runs' resolution on the instances both record: ``b``
    instances only the first resolved, ``c`` only the second, over ``n`` pairs."""

    n: int
    b: int
    c: int
    p: float


def mcnemar(a: Sequence[bool | None], b: Sequence[bool | None]) -> McNemar:
    """McNemar's exact test on paired resolution flags (a pair with an unknown side is
    dropped): p = min(1, 2·P(X ≤ min(b, c))) for X ~ Binomial(b + c, ½); 1 without a
    discordant pair."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    pairs = [(bool(x), bool(y)) for x, y in zip(a, b, strict=True)
             if x is not None and y is not None]
    only_a = sum(1 for x, y in pairs if x and not y)
    only_b = sum(1 for x, y in pairs if y and not x)
    return McNemar(len(pairs), only_a, only_b, float(_core.stats_mcnemar(only_a, only_b)))


def cohens_dz(a: Sequence[float | None], b: Sequence[float | None]
              ) -> tuple[float | None, str | None]:
    """Cohen's d of the paired differences a − b (d_z = mean / standard deviation, n − 1), and
    why it is undefined when it is (``"n < 2"``; ``"constant differences"``: the standard
    deviation is at most 1e-9 of the mean |difference|, i.e. 0 but for rounding)."""
    d = [x - y for x, y in paired(a, b)]
    value, reason = _core.stats_cohens_dz(d)
    return value, reason


def cliffs_delta(a: Sequence[float | None], b: Sequence[float | None]) -> float | None:
    """Cliff's delta of sample ``a`` against sample ``b``: (#{a > b} − #{a < b}) / (n_a n_b)
    over every cross pair of their defined values; None when either has none."""
    return _core.stats_cliffs_delta(clean(a), clean(b))
