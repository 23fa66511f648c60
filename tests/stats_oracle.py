"""Plain-Python statistics: the oracle the native statistics are checked against, and the
baseline of ``benchmarks/stats.py``.

The bootstrap and the randomization test are ctxeval's first, pure-Python implementation
(before the arithmetic moved to the core), kept verbatim in what they compute: the native
versions must give the same numbers to the bit. Everything else is the definition written out
the slow, obvious way (all pairs, sorted lists), with no code shared with the core.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from itertools import compress, product
from operator import mul

TIE_TOL = 1e-9


def quantile(sorted_values: list[float], q: float) -> float:
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def _left_to_right(values: list[float]) -> float:
    # Python's sum() of floats before 3.12, whatever the running version does
    s = 0.0
    for v in values:
        s += v
    return s


def bootstrap_ci(vals: list[float], level: float = 0.95, n: int = 10000,
                 seed: int = 0) -> tuple[float, float] | None:
    if not vals:
        return None
    if min(vals) == max(vals):
        return (vals[0], vals[0])
    rng = random.Random(seed)
    k = len(vals)
    means = sorted(_left_to_right(rng.choices(vals, k=k)) / k for _ in range(n))
    alpha = 1.0 - level
    return (quantile(means, alpha / 2), quantile(means, 1.0 - alpha / 2))


def randomization_test(d: list[float], n: int = 10000, seed: int = 0) -> float:
    k = len(d)
    if k == 0:
        return 1.0
    total = math.fsum(d)
    observed = abs(total)
    tol = TIE_TOL * math.fsum(abs(x) for x in d)
    if observed <= tol:
        return 1.0
    threshold = observed - tol
    if k < 63 and 2 ** k <= n:
        extreme = sum(1 for signs in product((1.0, -1.0), repeat=k)
                      if abs(math.fsum(map(mul, signs, d))) >= threshold)
        return extreme / 2 ** k
    rng = random.Random(seed)
    to01 = bytes.maketrans(b"01", b"\x00\x01")
    width = f"0{k}b"
    extreme = 0
    for _ in range(n):
        mask = format(rng.getrandbits(k), width).encode().translate(to01)
        if abs(total - 2.0 * _left_to_right(list(compress(d, mask)))) >= threshold:
            extreme += 1
    return (1 + extreme) / (1 + n)


def twice_u(a: list[float], b: list[float]) -> int:
    """2 x Mann-Whitney U of a against b, every pair compared."""
    return sum(2 if x > y else 1 if x == y else 0 for x in a for y in b)


def auroc(values: list[float], labels: list[bool]) -> float | None:
    pos = [v for v, lab in zip(values, labels, strict=True) if lab]
    neg = [v for v, lab in zip(values, labels, strict=True) if not lab]
    if not pos or not neg:
        return None
    return twice_u(pos, neg) / (2 * len(pos) * len(neg))


def auroc_ci(values: list[float], labels: list[bool], level: float = 0.95, n: int = 10000,
             seed: int = 0) -> tuple[float, float] | None:
    pos = [v for v, lab in zip(values, labels, strict=True) if lab]
    neg = [v for v, lab in zip(values, labels, strict=True) if not lab]
    if not pos or not neg:
        return None
    rng = random.Random(seed)
    stats = []
    for _ in range(n):
        p = rng.choices(pos, k=len(pos))
        q = rng.choices(neg, k=len(neg))
        stats.append(twice_u(p, q) / (2 * len(p) * len(q)))
    stats.sort()
    alpha = 1.0 - level
    return (quantile(stats, alpha / 2), quantile(stats, 1.0 - alpha / 2))


def cliffs_delta(a: list[float], b: list[float]) -> float | None:
    if not a or not b:
        return None
    gt = sum(1 for x in a for y in b if x > y)
    lt = sum(1 for x in a for y in b if x < y)
    return (gt - lt) / (len(a) * len(b))


def quantile_bins(values: list[float], labels: list[bool], bins: int) -> list[dict]:
    """Bins by the mid-distribution function F(v) = (#below + #equal / 2) / n, written from the
    definition: v goes to bin floor(bins * F(v)), capped at bins - 1; empty bins left out."""
    n = len(values)
    out: dict[int, list[tuple[float, bool]]] = {}
    for v, lab in zip(values, labels, strict=True):
        below = sum(1 for w in values if w < v)
        equal = sum(1 for w in values if w == v)
        f = (below + equal / 2) / n
        b = min(bins - 1, math.floor(bins * f))
        out.setdefault(b, []).append((v, lab))
    return [{"bin": b, "lo": min(v for v, _ in m), "hi": max(v for v, _ in m),
             "n": len(m), "n_pass": sum(1 for _, lab in m if lab)}
            for b, m in sorted(out.items())]


def midranks(values: list[float]) -> list[float]:
    """Rank of v = #below + (#equal + 1) / 2."""
    return [sum(1 for w in values if w < v) + (sum(1 for w in values if w == v) + 1) / 2
            for v in values]


def pearson(x: list[float], y: list[float]) -> float | None:
    """Pearson's r in exact rational arithmetic (r² exactly, one rounding, then its root)."""
    n = len(x)
    if n < 2 or len(set(x)) == 1 or len(set(y)) == 1:
        return None
    fx, fy = [Fraction(a) for a in x], [Fraction(b) for b in y]
    mx, my = sum(fx) / n, sum(fy) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(fx, fy, strict=True))
    sxx = sum((a - mx) ** 2 for a in fx)
    syy = sum((b - my) ** 2 for b in fy)
    return math.copysign(math.sqrt(float(sxy * sxy / (sxx * syy))), sxy)


def cohens_dz(d: list[float]) -> float | None:
    """mean(d) / sd(d) (n - 1) in exact rational arithmetic: d_z² exactly, then its root."""
    n = len(d)
    if n < 2 or len(set(d)) == 1:
        return None
    fd = [Fraction(x) for x in d]
    m = sum(fd) / n
    var = sum((x - m) ** 2 for x in fd) / (n - 1)
    return math.copysign(math.sqrt(float(m * m / var)), m) if m else 0.0
