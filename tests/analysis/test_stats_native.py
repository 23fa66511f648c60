"""The native statistics against the plain-Python oracle (``tests/stats_oracle.py``): the same
numbers, to the bit where the oracle performs the same operations, on random samples drawn by
hypothesis (ties, repeated values, tiny and large samples)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import stats_oracle as oracle
from ctxeval import _core
from ctxeval.analysis import stats

# Values with many ties: a few distinct levels, as metrics in [0, 1] have.
_levels = st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.7, 1.0])
_values = st.one_of(_levels, st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False))


@settings(derandomize=True)
@given(st.lists(st.integers(0, 2**70), min_size=1, max_size=3), st.integers(1, 50))
def test_generator_is_pythons(seeds: list[int], count: int) -> None:
    for seed in seeds:
        want = random.Random(seed)
        assert _core.stats_mt_random(stats.seed_key(seed), count) == \
            [want.random() for _ in range(count)]


def test_seed_key() -> None:
    assert stats.seed_key(0) == [0]
    assert stats.seed_key(-7) == [7]
    assert stats.seed_key(2**32) == [0, 1]
    assert stats.seed_key(True) == [1]
    with pytest.raises(TypeError):
        stats.seed_key(1.5)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(_values, min_size=1, max_size=40), st.integers(0, 10**12),
       st.sampled_from([0.5, 0.9, 0.95]))
def test_bootstrap_is_the_python_one(vals: list[float], seed: int, level: float) -> None:
    assert stats.bootstrap_ci(vals, level=level, n=300, seed=seed) == \
        oracle.bootstrap_ci(vals, level=level, n=300, seed=seed)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, _values), min_size=1, max_size=30), st.integers(0, 999),
       st.sampled_from([50, 1024, 5000]))
def test_randomization_is_the_python_one(pairs: list[tuple[float, float]], seed: int,
                                          n: int) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    d = [x - y for x, y in pairs]
    assert stats.paired_randomization_test(a, b, n=n, seed=seed) == \
        oracle.randomization_test(d, n=n, seed=seed)


def test_randomization_long_masks() -> None:
    # more than 32 and 64 differences: getrandbits spans several words
    rng = random.Random(4)
    for k in (33, 64, 65, 100):
        d = [rng.random() - 0.4 for _ in range(k)]
        assert _core.stats_randomization_test(d, 500, [11]) == \
            oracle.randomization_test(d, n=500, seed=11)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, st.booleans()), max_size=40))
def test_auroc_counts_ties_half(items: list[tuple[float, bool]]) -> None:
    v, lab = [x for x, _ in items], [y for _, y in items]
    assert stats.auroc(v, lab) == oracle.auroc(v, lab)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, st.booleans()), min_size=2, max_size=30),
       st.integers(0, 10**6))
def test_auroc_interval_is_the_stratified_python_bootstrap(items: list[tuple[float, bool]],
                                                           seed: int) -> None:
    v, lab = [x for x, _ in items], [y for _, y in items]
    got = stats.auroc_ci(v, lab, n=200, seed=seed)
    assert got == oracle.auroc_ci(v, lab, n=200, seed=seed)
    est = stats.auroc(v, lab)
    if got is not None:
        assert est is not None
        assert 0.0 <= got[0] <= got[1] <= 1.0


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(_values, max_size=25), st.lists(_values, max_size=25))
def test_cliffs_delta(a: list[float], b: list[float]) -> None:
    assert stats.cliffs_delta(a, b) == oracle.cliffs_delta(a, b)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, st.booleans()), min_size=1, max_size=40),
       st.integers(1, 10))
def test_bins_follow_the_mid_distribution(items: list[tuple[float, bool]], bins: int) -> None:
    v, lab = [x for x, _ in items], [y for _, y in items]
    got = _core.stats_outcome_many([(v, lab)], 10, 0.95, bins, [0])[0]["bins"]
    want = oracle.quantile_bins(v, lab, bins)
    assert [{k: b[k] for k in ("bin", "lo", "hi", "n", "n_pass")} for b in got] == want
    for b in got:
        assert b["rate"] == b["n_pass"] / b["n"]
        assert b["lo"] <= b["mean"] <= b["hi"]
    assert sum(b["n"] for b in got) == len(v)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, _values), max_size=30))
def test_correlations(pairs: list[tuple[float, float]]) -> None:
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    p = stats.pearson(x, y)
    want = oracle.pearson(x, y)
    if want is None:
        assert p.r is None and p.reason in ("n < 2", "constant metric")
    else:
        assert p.r == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert p.reason is None
    s = stats.spearman(x, y)
    want_s = oracle.pearson(oracle.midranks(x), oracle.midranks(y)) if len(x) >= 2 else None
    if want_s is None:
        assert s.r is None
    else:
        assert s.r == pytest.approx(want_s, rel=1e-12, abs=1e-12)
        assert (s.p is None) == (len(x) < 3)
        if s.p is not None:
            assert 0.0 <= s.p <= 1.0


def test_fsum_and_lgamma_are_pythons() -> None:
    rng = random.Random(1)
    for _ in range(200):
        vals = [rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20) for _ in range(rng.randint(0, 30))]
        assert _core.stats_fsum(vals) == math.fsum(vals)
    for x in (1e-10, 0.1, 0.5, 1.5, 2.5, 3.0, 7.25, 10.0, 101.5, 2500.5, 1e6, 1e15):
        assert _core.stats_ln_gamma(x) == pytest.approx(math.lgamma(x), rel=4e-15, abs=1e-15)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_levels, st.booleans()), min_size=5, max_size=40),
       st.integers(0, 10**6))
def test_intervals_hold_their_estimate(items: list[tuple[float, bool]], seed: int) -> None:
    """The percentile intervals hold their estimate: the mean's, and AUROC's whenever both
    classes are present (the resampled AUROCs average to the estimate itself)."""
    v, lab = [x for x, _ in items], [y for _, y in items]
    lo, hi = stats.bootstrap_ci(v, n=500, seed=seed)  # type: ignore[misc]
    m = stats.mean(v)
    if len(set(v)) == 1:  # the interval is the value itself; the mean may round off it
        assert lo == hi == v[0] and m == pytest.approx(v[0])
    else:
        assert m is not None and lo <= m <= hi
    est = stats.auroc(v, lab)
    got = stats.auroc_ci(v, lab, n=500, seed=seed)
    assert (est is None) == (got is None)
    if got is not None:
        assert got[0] <= est <= got[1]  # type: ignore[operator]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_values, _values), max_size=30))
@example([(2995.0, 0.0), (2995.0, 0.1)])
def test_cohens_dz(pairs: list[tuple[float, float]]) -> None:
    """Against d_z computed exactly from the same differences. In floating point the
    deviations from the mean carry an error of about eps·|mean|, so d_z's relative error grows
    with |d_z| itself (differences of 2995 and 2994.9 give d_z ≈ 42,355, off by 1.3e-12): the
    tolerance is scaled by it."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    got, why = stats.cohens_dz(a, b)
    want = oracle.cohens_dz([x - y for x, y in pairs])
    if want is None:
        assert got is None and why in ("n < 2", "constant differences")
    else:
        tol = 1e-12 * (1.0 + abs(want))
        assert got == pytest.approx(want, rel=tol, abs=1e-12) and why is None
