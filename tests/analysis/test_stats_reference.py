"""ctxeval's statistics against scipy and statsmodels: McNemar's exact test, the point-biserial
correlation, Pearson and Spearman with their p-values, Cohen's d of paired differences, Cliff's
delta, AUROC, and the distribution functions behind the p-values — on hand-made edge cases,
random cases and the real rows of ``fixtures/outcome``.

The libraries' answers are committed in ``fixtures/stats/reference.json`` (written by
``fixtures/stats/make_reference.py``), so these tests run without scipy; where scipy and
statsmodels are installed, the last tests ask them again. A NaN of scipy (a constant sample) is
a null with a reason in ctxeval, never a NaN.
"""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval import _core
from ctxeval.analysis import stats
from ctxeval.analysis.comparison import compare_rows
from ctxeval.analysis.correlations import metric_correlations
from ctxeval.analysis.outcome import outcome_table

REF = json.loads((FIXTURES / "stats" / "reference.json").read_text(encoding="utf-8"))
P_REL = 1e-9  # p-values: relative
R_ABS = 1e-12  # correlations and effect sizes: absolute


def _rows() -> list[dict[str, Any]]:
    with gzip.open(FIXTURES / "outcome" / "rows.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _p(got: float | None, want: float | None) -> None:
    if want is None:
        assert got is None
        return
    assert got is not None
    assert got == pytest.approx(want, rel=P_REL, abs=1e-300)


# ------------------------------------------------------------------------------ cases


@pytest.mark.parametrize("case", REF["correlations"], ids=lambda c: f"n{len(c['x'])}")
def test_pearson_and_spearman(case: dict[str, Any]) -> None:
    p = stats.pearson(case["x"], case["y"])
    s = stats.spearman(case["x"], case["y"])
    r_want, p_want = case["pearson"]
    if r_want is None:
        assert p.r is None and p.p is None and p.reason == "constant metric"
    else:
        assert p.r == pytest.approx(r_want, abs=R_ABS) and p.reason is None
        _p(p.p, p_want)
    rho_want, sp_want = case["spearman"]
    if rho_want is None:
        assert s.r is None and s.reason == "constant metric"
    else:
        assert s.r == pytest.approx(rho_want, abs=R_ABS)
        _p(s.p, sp_want)


@pytest.mark.parametrize("case", REF["point_biserial"], ids=lambda c: f"n{len(c['values'])}")
def test_point_biserial_and_auroc(case: dict[str, Any]) -> None:
    labels = [bool(x) for x in case["labels"]]
    got = stats.point_biserial(case["values"], labels)
    if case["r"] is None:  # scipy's NaN: null, with the reason
        want = ("all resolved" if all(labels) else "none resolved" if not any(labels)
                else "constant metric")
        assert got.r is None and got.p is None and got.reason == want
    else:
        assert got.r == pytest.approx(case["r"], abs=R_ABS)
        _p(got.p, case["p"])
    auroc = stats.auroc(case["values"], labels)
    assert auroc == pytest.approx(case["auroc"], abs=1e-15) if case["auroc"] is not None \
        else auroc is None


def test_outcome_view_nulls_where_scipy_has_nan() -> None:
    """The reference's edge cases as rows of the outcome view: where scipy answers NaN (all
    resolved, none resolved, a constant metric) or the sample is below five, the view gives
    null with the reason; elsewhere scipy's r and p."""
    rows = []
    for k, case in enumerate(REF["point_biserial"]):
        for j, (v, lab) in enumerate(zip(case["values"], case["labels"], strict=True)):
            rows.append({"instance_id": f"i{j}", "run": f"case{k}", "status": "ok",
                         "final": {"line": {"coverage": v}}, "resolved": bool(lab)})
    t = outcome_table(rows, metrics=["final.line.coverage"], resamples=100)
    for k, case in enumerate(REF["point_biserial"]):
        e = next(x for x in t.entries if x.run == f"case{k}")
        labels = case["labels"]
        if len(labels) < 5:
            assert e.reason == "n < 5" and e.r is None and e.auroc is None
        elif case["r"] is None:
            assert e.reason in ("all resolved", "none resolved", "constant metric")
            assert e.r is None and e.r_p is None and e.auroc is None and e.auroc_ci is None
        else:
            assert e.reason is None
            assert e.r == pytest.approx(case["r"], abs=R_ABS)
            _p(e.r_p, case["p"])
            assert e.auroc == pytest.approx(case["auroc"], abs=1e-15)


@pytest.mark.parametrize("case", REF["mcnemar"], ids=lambda c: f"{c['b']}-{c['c']}")
def test_mcnemar_exact(case: dict[str, Any]) -> None:
    a = [True] * case["b"] + [False] * case["c"] + [True, False, None]
    b = [False] * case["b"] + [True] * case["c"] + [True, False, True]
    got = stats.mcnemar(a, b)
    assert (got.b, got.c, got.n) == (case["b"], case["c"], case["b"] + case["c"] + 2)
    _p(got.p, case["p"])


def test_mcnemar_by_hand() -> None:
    # b = 3, c = 9: 2 (C(12,0) + C(12,1) + C(12,2) + C(12,3)) / 2^12
    want = 2 * sum(math.comb(12, k) for k in range(4)) / 2**12
    assert stats.mcnemar([True] * 3 + [False] * 9, [False] * 3 + [True] * 9).p == want
    assert stats.mcnemar([], []).p == 1.0


@pytest.mark.parametrize("case", REF["paired_effects"], ids=lambda c: f"n{len(c['a'])}")
def test_paired_effect_sizes(case: dict[str, Any]) -> None:
    d, why = stats.cohens_dz(case["a"], case["b"])
    if case["dz"] is None:
        assert d is None and why == "constant differences"
    else:
        # d_z * sqrt(n) is scipy's paired t statistic
        assert d == pytest.approx(case["dz"], rel=1e-12)
    # 2U / (n_a n_b) - 1 from scipy's Mann-Whitney U
    assert stats.cliffs_delta(case["a"], case["b"]) == pytest.approx(case["cliffs_delta"],
                                                                     abs=1e-15)


def test_effect_size_edges() -> None:
    assert stats.cohens_dz([1.0], [0.0]) == (None, "n < 2")
    assert stats.cohens_dz([], []) == (None, "n < 2")
    assert stats.cliffs_delta([], [1.0]) is None
    assert stats.cliffs_delta([None], [1.0]) is None
    assert stats.pearson([1.0, 2.0], [2.0, 1.0]).p is None  # two pairs: no degrees of freedom
    assert stats.pearson([1.0], [1.0]).reason == "n < 2"


def test_distribution_functions() -> None:
    dist = REF["distributions"]
    worst = 0.0
    for c in dist["betainc"]:
        got = _core.stats_betainc(c["a"], c["b"], c["x"])
        want = c["betainc"]
        err = abs(got - want) / max(abs(want), 1e-300) if want else abs(got)
        worst = max(worst, err if want > 1e-290 else 0.0)
        assert got == pytest.approx(want, rel=1e-10, abs=1e-300), c
    assert worst < 1e-10
    for c in dist["binom_cdf"]:
        assert _core.stats_binom_cdf(c["k"], c["n"], 0.5) == pytest.approx(c["cdf"], rel=1e-11)
    for c in dist["correlation_p"]:
        assert _core.stats_correlation_p(c["r"], c["n"]) == pytest.approx(c["p"], rel=1e-9,
                                                                         abs=1e-300)


# ------------------------------------------------------------------------------ real rows


def test_real_rows_outcome_against_scipy() -> None:
    """Point-biserial r and its p-value (scipy.stats.pointbiserialr) and AUROC (from
    scipy.stats.mannwhitneyu's U) of every run and metric, as the outcome view gives them."""
    want = REF["real"]["outcome"]
    metrics = list(dict.fromkeys(c["metric"] for c in want))
    t = outcome_table(_rows(), metrics=metrics, resamples=50)
    got = {(e.run, e.metric): e for e in t.entries}
    assert len(got) == len(want) == 30
    for c in want:
        e = got[(c["run"], c["metric"])]
        assert (e.n, e.n_pass) == (c["n"], c["n_pass"])
        assert e.r == pytest.approx(c["r"], abs=R_ABS)
        _p(e.r_p, c["p"])
        assert e.auroc == pytest.approx(c["auroc"], abs=1e-15)


def test_real_rows_spearman_against_scipy() -> None:
    want = REF["real"]["spearman"]
    metrics = list(dict.fromkeys([c["x"] for c in want] + [c["y"] for c in want]))
    corr = metric_correlations(_rows(), metrics)
    for c in want:
        i, j = metrics.index(c["x"]), metrics.index(c["y"])
        assert corr.n[i][j] == c["n"]
        assert corr.rho[i][j] == pytest.approx(c["rho"], abs=R_ABS)
        _p(corr.p[i][j], c["p"])


def test_real_rows_compare_against_scipy_and_statsmodels() -> None:
    """gemini-3-pro against coder on the 24 instances both runs have: McNemar's exact test on
    resolution (statsmodels), Cohen's d_z (scipy's paired t / √n) and Cliff's delta (scipy's U)."""
    ref = REF["real"]["paired"]
    metrics = [m["metric"] for m in ref["metrics"]]
    comps = {c.metric: c for c in compare_rows(_rows(), baseline="coder", metrics=metrics,
                                               n=200)}
    res = comps["resolved"]
    assert res.test == "mcnemar" and res.n_pairs == ref["shared"]
    assert (res.wins, res.losses) == (ref["b"], ref["c"])
    assert res.p == pytest.approx(ref["mcnemar_p"], rel=P_REL)
    for m in ref["metrics"]:
        c = comps[m["metric"]]
        assert c.n_pairs == m["n"]
        assert c.cohens_d == pytest.approx(m["dz"], rel=1e-12)
        assert c.cliffs_delta == pytest.approx(m["cliffs_delta"], abs=1e-15)
        if m["metric"] != "resolved":
            assert c.test == "randomization"


# ------------------------------------------------------------------------------ live


def test_live_scipy_agrees_on_fresh_cases() -> None:
    """With scipy and statsmodels installed, ask them again on fresh random samples."""
    sps = pytest.importorskip("scipy.stats")
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    import random

    rng = random.Random(99)
    for _ in range(30):
        n = rng.randint(5, 400)
        x = [rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(n)]
        y = [xi + rng.gauss(0, 1) for xi in x]
        lab = [rng.random() < 0.6 for _ in range(n)]
        if len(set(x)) > 1:
            want = sps.pearsonr(x, y)
            got = stats.pearson(x, y)
            assert got.r == pytest.approx(want.statistic, abs=R_ABS)
            _p(got.p, float(want.pvalue))
            s = sps.spearmanr(x, y)
            gs = stats.spearman(x, y)
            assert gs.r == pytest.approx(s.statistic, abs=R_ABS)
            _p(gs.p, float(s.pvalue))
            if 0 < sum(lab) < n:
                pb = sps.pointbiserialr(lab, x)
                assert stats.point_biserial(x, lab).r == pytest.approx(pb.statistic, abs=R_ABS)
        b, c = rng.randint(0, 60), rng.randint(0, 60)
        want_p = sm.mcnemar([[5, b], [c, 5]], exact=True).pvalue
        assert stats.mcnemar([True] * b + [False] * c, [False] * b + [True] * c).p == \
            pytest.approx(want_p, rel=P_REL)
