"""ctxeval.analysis.stats on hand-computed and textbook cases."""

from __future__ import annotations

import math
import random
import statistics
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxeval.analysis.stats import (
    bootstrap_ci,
    describe,
    holm_bonferroni,
    mean,
    paired_bootstrap_ci,
    paired_randomization_test,
    quantile,
    win_tie_loss,
)

# ------------------------------------------------------------------------------ mean


def test_mean_skips_nulls() -> None:
    assert mean([1, None, 2, 4]) == pytest.approx(7 / 3)
    assert mean([None, None]) is None
    assert mean([]) is None
    assert mean([float("nan"), 3.0]) == 3.0
    assert mean([True, False, True, True]) == 0.75  # resolved flags as 0/1


# ------------------------------------------------------------------------------ Holm


def test_holm_textbook_vector() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max(0.06, 0.04)
    adj = holm_bonferroni([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_is_monotone() -> None:
    # 0.5*2 = 1.0, then 0.6*1 = 0.6 raised to 1.0 by monotonicity
    assert holm_bonferroni([0.6, 0.5]) == [1.0, 1.0]
    # 0.02*3 = 0.06, 0.03*2 = 0.06, 0.9*1 = 0.9
    assert holm_bonferroni([0.9, 0.02, 0.03]) == pytest.approx([0.9, 0.06, 0.06])


def test_holm_none_is_not_a_test() -> None:
    # two real tests: 0.01*2 = 0.02, 0.02*1 = 0.02
    assert holm_bonferroni([0.01, None, 0.02]) == pytest.approx([0.02, None, 0.02])
    assert holm_bonferroni([]) == []
    with pytest.raises(ValueError):
        holm_bonferroni([1.5])


# ------------------------------------------------------------------------------ randomization


def test_randomization_exact_three_pairs() -> None:
    # d = (1, 2, 3), sum 6. Sums of the 8 sign vectors: 6, 0, 2, -4, 4, -2, 0, -6;
    # |sum| >= 6 for two of them: p = 2/8.
    assert paired_randomization_test([1, 2, 3], [0, 0, 0]) == 0.25


def test_randomization_exact_small_cases() -> None:
    # d = (1, 1, 1, 1): only all-plus and all-minus reach |4| -> 2/16
    assert paired_randomization_test([1, 1, 1, 1], [0, 0, 0, 0]) == 0.125
    # d = (3, 1), sum 4: sums 4, 2, -2, -4 -> 2/4
    assert paired_randomization_test([3, 1], [0, 0]) == 0.5
    # d = (2, -1), sum 1: sums 1, 3, -3, -1, all as extreme -> 1
    assert paired_randomization_test([2, 0], [0, 1]) == 1.0
    # floating-point differences that are equal in magnitude still tie exactly
    assert paired_randomization_test([0.3, 0.1], [0.1, 0.3]) == 1.0


def test_randomization_drops_null_pairs_and_degenerate_cases() -> None:
    assert paired_randomization_test([1, None, 2, 3], [0, 5, 0, 0]) == 0.25
    assert paired_randomization_test([], []) == 1.0
    assert paired_randomization_test([0.5, 0.5], [0.5, 0.5]) == 1.0
    with pytest.raises(ValueError):
        paired_randomization_test([1, 2], [1])


def test_randomization_monte_carlo() -> None:
    # 2^20 > n, so Monte Carlo; all-equal differences are extreme only for the two constant
    # sign vectors (probability 2^-19 per draw), so the add-one estimate sits at its floor.
    a, b = [1.0] * 20, [0.0] * 20
    p = paired_randomization_test(a, b, n=1000, seed=3)
    assert p == pytest.approx(1 / 1001)
    assert p == paired_randomization_test(a, b, n=1000, seed=3)  # deterministic
    # exact when 2^k <= n: k = 10 needs n >= 1024
    d = [1.0] * 10
    assert paired_randomization_test(d, [0.0] * 10, n=1024) == 2 / 1024


# ------------------------------------------------------------------------------ bootstrap


def test_bootstrap_constant_sample() -> None:
    assert bootstrap_ci([0.1] * 7) == (0.1, 0.1)
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    assert bootstrap_ci([None, None]) is None
    # differences 0.5 up to the rounding of the subtraction (0.7 - 0.2 = 0.49999999999999994)
    assert paired_bootstrap_ci([0.7, 0.9, 0.6], [0.2, 0.4, 0.1]) == pytest.approx((0.5, 0.5))
    assert paired_bootstrap_ci([3, 5, 4], [1, 3, 2]) == (2.0, 2.0)


def test_bootstrap_two_point_sample() -> None:
    # resampled means of (0, 1) with k=2 are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4:
    # the 2.5% and 97.5% quantiles of 10000 of them are 0 and 1.
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)
    # at level 0.4 the interval is the 30% and 70% quantiles: both 0.5
    assert bootstrap_ci([0.0, 1.0], level=0.4) == (0.5, 0.5)


def test_bootstrap_deterministic_and_contains_mean() -> None:
    vals = [0.1, 0.5, 0.2, 0.9, 0.4, 0.3, 0.8]
    lo, hi = bootstrap_ci(vals, seed=7)  # type: ignore[misc]
    assert (lo, hi) == bootstrap_ci(vals, seed=7)
    assert lo < statistics.mean(vals) < hi
    assert min(vals) <= lo and hi <= max(vals)
    lo90, hi90 = bootstrap_ci(vals, level=0.9, seed=7)  # type: ignore[misc]
    assert lo <= lo90 <= hi90 <= hi
    with pytest.raises(ValueError):
        bootstrap_ci(vals, level=1.0)


def test_paired_bootstrap_drops_null_pairs() -> None:
    a = [0.9, None, 0.6, 0.7]
    b = [0.4, 0.3, None, 0.2]
    assert paired_bootstrap_ci(a, b) == pytest.approx((0.5, 0.5))
    assert paired_bootstrap_ci([1, None, 5], [0, 2, None]) == (1.0, 1.0)


# ------------------------------------------------------------------------------ win/tie/loss


def test_win_tie_loss() -> None:
    assert win_tie_loss([1, 0.5, 0.2, None], [0.5, 0.5, 0.3, 1]) == (1, 1, 1)
    assert win_tie_loss([1.0 + 1e-15], [1.0]) == (0, 1, 0)
    assert win_tie_loss([0.3], [0.2], tol=0.2) == (0, 1, 0)
    assert win_tie_loss([], []) == (0, 0, 0)


# ------------------------------------------------------------------------------ describe


def test_describe_by_hand() -> None:
    d = describe([4, None, 1, 3, 2])
    assert d["n"] == 4 and d["nulls"] == 1
    assert d["mean"] == 2.5 and d["median"] == 2.5
    # deviations 1.5, 0.5, 0.5, 1.5 -> squares sum 5, over n-1 = 3
    assert d["std"] == pytest.approx(math.sqrt(5 / 3))
    # type 7: q1 at h = 0.75 -> 1 + 0.75, q3 at h = 2.25 -> 3 + 0.25
    assert (d["min"], d["q1"], d["q3"], d["max"]) == (1.0, 1.75, 3.25, 4.0)


def test_describe_small_samples() -> None:
    one = describe([0.5])
    assert one["std"] is None and one["median"] == 0.5 and one["q1"] == 0.5
    empty = describe([None])
    assert empty["n"] == 0 and empty["nulls"] == 1 and empty["mean"] is None


def test_quantile_matches_statistics_inclusive() -> None:
    vals = sorted([3.0, 9.0, 1.0, 7.0, 4.0, 10.0])
    # statistics.quantiles(method="inclusive") is the type-7 definition as well
    assert [quantile(vals, q) for q in (0.25, 0.5, 0.75)] == pytest.approx(
        statistics.quantiles(vals, n=4, method="inclusive"))
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_monte_carlo_agrees_with_exact_enumeration() -> None:
    rng = random.Random(11)
    a = [rng.random() for _ in range(12)]
    b = [x - 0.15 + 0.3 * rng.random() for x in a]
    exact = paired_randomization_test(a, b, n=4096)  # 2^12 sign vectors: exact
    approx = paired_randomization_test(a, b, n=4095, seed=2)  # one short: Monte Carlo
    assert exact * 4096 == round(exact * 4096)  # a multiple of 1/4096
    # binomial standard error at p ~ exact with 4095 draws is below 0.008
    assert abs(approx - exact) < 0.03


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=12))
def test_holm_properties(ps: list[float | None]) -> None:
    adj = holm_bonferroni(ps)
    for p, q in zip(ps, adj, strict=True):
        assert (p is None) == (q is None)
        if p is not None and q is not None:
            assert p <= q <= 1.0
    # monotone in the order of the raw p-values
    pairs = sorted((p, q) for p, q in zip(ps, adj, strict=True) if p is not None)
    assert all(q1 <= q2 for (_, q1), (_, q2) in pairwise(pairs))
