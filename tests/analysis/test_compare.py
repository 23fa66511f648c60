"""ctxeval.analysis.comparison: paired comparisons on hand-made rows and end to end on the example
runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.analysis.comparison import (
    DAGGER,
    DEFAULT_METRICS,
    Comparison,
    compare_rows,
    default_metrics,
    higher_is_better,
    render_comparison,
)
from ctxeval.cli import main


def _row(run: str, iid: str, f1: float | None, red: float | None = 0.0,
         status: str = "ok") -> dict[str, Any]:
    return {"instance_id": iid, "run": run, "status": status,
            "final": {"line": {"f1": f1}},
            "trajectory": {"redundancy": {"line": red}}}


def _rows() -> list[dict[str, Any]]:
    """base and two runs on i1..i6; 'good' beats base on every instance by 0.5 (line F1) and is
    less redundant; 'mixed' has a null (i2), an error row (i3) and an instance base lacks (i9),
    so that it shares fewer than five pairs with base."""
    rows = []
    for k, b in enumerate([0.1, 0.2, 0.3, 0.4, 0.05, 0.15], start=1):
        rows.append(_row("base", f"i{k}", b, red=0.5))
    for k, b in enumerate([0.1, 0.2, 0.3, 0.4, 0.05, 0.15], start=1):
        rows.append(_row("good", f"i{k}", b + 0.5, red=0.25))
    rows += [_row("mixed", "i1", 0.3), _row("mixed", "i2", None),
             {"instance_id": "i3", "run": "mixed", "status": "error", "error": {"kind": "x"}},
             _row("mixed", "i4", 0.0, status="agent_failure"), _row("mixed", "i9", 1.0)]
    return rows


def _by(comps: list[Comparison], metric: str, run: str) -> Comparison:
    return next(c for c in comps if c.metric == metric and c.run == run)


def test_compare_by_hand() -> None:
    comps = compare_rows(_rows(), metrics=["final.line.f1", "trajectory.redundancy.line"])
    assert [(c.metric, c.run) for c in comps] == [
        ("final.line.f1", "good"), ("final.line.f1", "mixed"),
        ("trajectory.redundancy.line", "good"), ("trajectory.redundancy.line", "mixed")]
    g = _by(comps, "final.line.f1", "good")
    assert g.baseline == "base" and (g.n_pairs, g.n_shared) == (6, 6)
    assert g.mean_a == pytest.approx(0.7) and g.mean_b == pytest.approx(0.2)
    assert g.diff == pytest.approx(0.5) and g.ci == pytest.approx((0.5, 0.5))
    # d = (0.5,)*6 up to rounding: exact test, 2 of 64 sign vectors as extreme
    assert g.p == 2 / 64 and g.reason is None
    assert (g.wins, g.ties, g.losses) == (6, 0, 0)
    # mixed: shares i1, i2, i4 with base (i3 is an error row, i9 base lacks); i2 null -> 2 pairs
    m = _by(comps, "final.line.f1", "mixed")
    assert (m.n_shared, m.n_pairs) == (3, 2)
    # below five pairs: the means, the difference and W/T/L, but no interval, test or effect
    # size (null with the reason, as in the outcome view)
    assert m.mean_a == pytest.approx(0.15) and m.mean_b == pytest.approx(0.25)
    assert m.diff == pytest.approx(-0.1) and (m.wins, m.ties, m.losses) == (1, 0, 1)
    assert (m.ci, m.p, m.p_holm, m.cohens_d, m.cliffs_delta) == (None,) * 5
    assert (m.reason, m.cohens_d_reason, m.significant) == ("n < 5", "n < 5", False)
    # redundancy: lower is better, so 'good' (0.25 vs 0.5) wins everywhere
    r = _by(comps, "trajectory.redundancy.line", "good")
    assert r.higher_is_better is False and r.diff == pytest.approx(-0.25)
    assert (r.wins, r.losses) == (6, 0) and r.p == 2 / 64
    rm = _by(comps, "trajectory.redundancy.line", "mixed")
    # pairs i1, i2, i4: mixed 0 vs base 0.5 on each -> 3 wins, but 3 pairs: no test
    assert (rm.n_pairs, rm.wins, rm.p, rm.reason) == (3, 3, None, "n < 5")
    # Holm over the two tests that were run (the others are not counted): 2/64 * 2 each
    assert [c.p_holm for c in comps] == [2 / 32, None, 2 / 32, None]
    assert not any(c.significant for c in comps)


def test_significance_and_explicit_baseline() -> None:
    rows = []
    for k in range(8):
        rows.append(_row("a", f"i{k}", 0.1 * k))
        rows.append(_row("b", f"i{k}", 0.1 * k + 0.3))
    comps = compare_rows(rows, baseline="a", metrics=["final.line.f1"])
    assert len(comps) == 1
    c = comps[0]
    # 8 equal positive differences: exact p = 2/256; one comparison, so Holm changes nothing
    assert c.p == 2 / 256 and c.p_holm == 2 / 256 and c.significant
    flipped = compare_rows(rows, baseline="b", metrics=["final.line.f1"])[0]
    assert flipped.run == "a" and flipped.diff == pytest.approx(-0.3)
    assert (flipped.wins, flipped.losses) == (0, 8)


def test_compare_errors() -> None:
    with pytest.raises(ValueError, match="at least two runs"):
        compare_rows([_row("a", "i1", 0.5)])
    with pytest.raises(ValueError, match="baseline run 'zz' not found"):
        compare_rows(_rows(), baseline="zz")
    with pytest.raises(ValueError, match="absent from every row"):
        compare_rows(_rows(), metrics=["final.line.f"])
    with pytest.raises(ValueError, match="two rows for instance"):
        compare_rows([*_rows(), _row("good", "i1", 0.5)])
    with pytest.raises(ValueError, match="not a number"):
        compare_rows(_rows(), metrics=["final.line"])


def test_null_parent_is_a_null_metric_not_an_error() -> None:
    rows = [{"instance_id": "i", "run": r, "status": "ok", "editloc": None} for r in "ab"]
    (c,) = compare_rows(rows, metrics=["editloc.f1"])
    assert c.n_pairs == 0 and c.p is None and c.p_holm is None and c.ci is None
    assert c.reason == c.cohens_d_reason == "n < 5"
    doc = json.loads(render_comparison([c], "json"))
    assert doc["comparisons"][0]["mean_a"] is None
    assert doc["comparisons"][0]["reason"] == "n < 5"


def test_direction() -> None:
    assert higher_is_better("final.line.f1") and higher_is_better("editloc.recall")
    assert not higher_is_better("trajectory.redundancy.file")
    assert not higher_is_better("usage.input_tokens") and not higher_is_better("num_steps")


def test_render_formats() -> None:
    rows = []
    for k in range(8):
        rows += [_row("a", f"i{k}", 0.1 * k, red=0.1), _row("b", f"i{k}", 0.1 * k + 0.3, red=0.1)]
    comps = compare_rows(rows, metrics=["final.line.f1", "trajectory.redundancy.line"])
    md = render_comparison(comps, "md")
    # wide table: b is significantly better and best on line F1; a ties b on redundancy (both bold)
    # b: mean of 0.1k + 0.3 over k = 0..7 = 0.35 + 0.3
    assert f"| b | **0.650{DAGGER}** | **0.100** |" in md
    assert "| a | 0.350 | **0.100** |" in md
    tex = render_comparison(comps, "latex")
    for cmd in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}"):
        assert cmd in tex
    assert r"\textbf{0.650}$^{\dagger}$" in tex
    assert r"\texttt{final.line.f1}" in tex
    assert DAGGER not in tex
    table = render_comparison(comps, "table")
    assert "p_holm" in table and "8/0/0" in table
    doc = json.loads(render_comparison(comps, "json"))
    assert doc["correction"] == "holm-bonferroni"
    assert doc["comparisons"][0]["ci"] == pytest.approx([0.3, 0.3])
    with pytest.raises(ValueError):
        render_comparison(comps, "html")


def test_latex_escapes_run_names() -> None:
    rows = [_row("agent_a&1", "i", 0.5), _row("b%2", "i", 0.5)]
    for r in rows:
        r["usage"] = {"input_tokens": 1234}
    tex = render_comparison(compare_rows(rows, metrics=["usage.input_tokens"]), "latex")
    assert r"agent\_a\&1" in tex and r"b\%2" in tex
    assert r"\texttt{usage.input\_tokens}" in tex
    assert r"1234.0" in tex  # large values with one decimal


# ------------------------------------------------------------------------------ CLI end to end


def _evaluate(tmp_path: Path) -> Path:
    ex = FIXTURES / "example"
    out = tmp_path / "results.jsonl"
    rc = main(["evaluate", "--gold", str(ex / "gold.jsonl"),
               "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}",
               "--run", f"agent-b={ex / 'runs' / 'agent-b.jsonl'}",
               "--repos", str(ex / "repos"), "--out", str(out), "--quiet"])
    assert rc == 0
    return out


def test_cli_compare_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _evaluate(tmp_path)
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    val = {(r["run"], r["instance_id"]): r["final"]["line"]["f1"] for r in rows}
    out = tmp_path / "cmp.json"
    rc = main(["compare", str(results), "--baseline", "agent-a", "--format", "json",
               "--metrics", "final.line.f1,trajectory.auc_coverage.line,editloc.f1",
               "--out", str(out)])
    assert rc == 0
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc["baseline"] == "agent-a"
    c = doc["comparisons"][0]
    assert (c["metric"], c["run"], c["n_pairs"]) == ("final.line.f1", "agent-b", 2)
    a = [val[("agent-b", i)] for i in ("example__calc-1", "example__calc-2")]
    b = [val[("agent-a", i)] for i in ("example__calc-1", "example__calc-2")]
    assert c["mean_a"] == pytest.approx(sum(a) / 2) and c["mean_b"] == pytest.approx(sum(b) / 2)
    assert len(doc["comparisons"]) == 3
    # two pairs: below five, no interval, test or effect size, each null with the reason
    for x in doc["comparisons"]:
        assert x["reason"] == x["cohens_d_reason"] == "n < 5"
        assert [x[k] for k in ("ci", "p", "p_holm", "cohens_d", "cliffs_delta")] == [None] * 5
    # the text table says what "-" means there
    capsys.readouterr()
    assert main(["compare", str(results), "--baseline", "agent-a", "--metrics",
                 "final.line.f1", "--no-correlations"]) == 0
    assert "-: below 5 pairs, no interval, test or effect size." in capsys.readouterr().out


def test_cli_compare_example_deterministic_and_error_rows(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    results = _evaluate(tmp_path)
    # an extra file with an evaluator error row for agent-b's first instance
    extra = tmp_path / "extra.jsonl"
    lines = results.read_text().splitlines()
    kept = [ln for ln in lines if not ('"agent-b"' in ln and "example__calc-1" in ln)]
    results.write_text("\n".join(kept) + "\n")
    extra.write_text(json.dumps({"instance_id": "example__calc-1", "run": "agent-b",
                                 "status": "error", "error": {"kind": "missing_repo",
                                                              "message": "gone"}}) + "\n")
    capsys.readouterr()
    assert main(["compare", str(results), str(extra), "--format", "md", "--seed", "5",
                 "--n", "500"]) == 0
    first = capsys.readouterr()
    assert "1 evaluator error rows left out" in first.err
    assert "| `final.line.f1` | agent-b | 1 |" in first.out
    assert main(["compare", str(results), str(extra), "--format", "md", "--seed", "5",
                 "--n", "500"]) == 0
    assert capsys.readouterr().out == first.out


def test_cli_compare_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _evaluate(tmp_path)
    assert main(["compare", str(results), "--baseline", "nobody"]) == 1
    assert "baseline run 'nobody' not found" in capsys.readouterr().err
    assert main(["compare", str(results), "--n", "0"]) == 2
    assert main(["compare", str(tmp_path / "missing.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert main(["compare", "--help"]) == 0
    helptext = capsys.readouterr().out
    assert "Holm-Bonferroni" in helptext and "--baseline RUN" in helptext


def test_cli_warns_when_presets_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [dict(_row("a", "i1", 0.5), preset="strict"),
            dict(_row("b", "i1", 0.7), preset="contextbench")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["compare", str(path), "--metrics", "final.line.f1"]) == 0
    assert "different presets (contextbench, strict)" in capsys.readouterr().err


# ------------------------------------------------------------------------------ issue 22


def _resolved_rows() -> list[dict[str, Any]]:
    """a and b on i0..i9: a resolves i0-i5, b resolves i4-i9 but also misses i3 ... by hand:
    only a: i0, i1, i2, i3 (4); only b: i6, i7, i8, i9 (4); both: i4, i5."""
    rows = []
    for k in range(10):
        ra = _row("a", f"i{k}", 0.08 * k, red=0.2)  # F1 stays within [0, 1]
        ra["resolved"] = k <= 5
        rb = _row("b", f"i{k}", 0.08 * k + (0.16 if k % 2 else 0.0), red=0.2)
        rb["resolved"] = k >= 4
        rows += [ra, rb]
    return rows


def test_resolved_is_compared_by_default_with_mcnemar() -> None:
    assert default_metrics(_resolved_rows()) == [*DEFAULT_METRICS, "resolved"]
    assert default_metrics(_rows()) == list(DEFAULT_METRICS)
    comps = compare_rows(_resolved_rows(), n=500,
                         metrics=["final.line.f1", "trajectory.redundancy.line", "resolved"])
    c = _by(comps, "resolved", "b")
    assert c.test == "mcnemar" and c.n_pairs == 10
    assert (c.wins, c.ties, c.losses) == (4, 2, 4)  # discordant pairs each way
    assert c.p == 1.0  # 4 against 4: 2 P(X <= 4; 8, 1/2) capped at 1
    # Holm counts the McNemar test with the others
    assert c.p_holm == 1.0
    assert all(x.test == "randomization" for x in comps if x.metric != "resolved")


def test_mcnemar_p_by_hand() -> None:
    rows = _resolved_rows()
    for r in rows:  # b now resolves every instance a does not: 4 discordant pairs, all to b
        if r["run"] == "b":
            r["resolved"] = True
    c = _by(compare_rows(rows, metrics=["resolved"]), "resolved", "b")
    # only b: i6..i9 (4), only a: none -> 2 * P(X <= 0; 4, 1/2) = 2/16
    assert (c.wins, c.losses, c.p) == (4, 0, 0.125)


def test_effect_sizes_by_hand() -> None:
    c = _by(compare_rows(_resolved_rows(), metrics=["final.line.f1"], n=200), "final.line.f1",
            "b")
    # d_i = b - a = 0.16 on odd i, 0 on even i (up to rounding): mean 0.08, sd (n-1) =
    # sqrt(10 * 0.0064 / 9) -> d_z = 0.08 / sqrt(0.064 / 9) = 3 / sqrt(10)
    assert c.cohens_d == pytest.approx(3 / math.sqrt(10), rel=1e-9)
    # Cliff's delta of b's values against a's: count by hand
    a = [0.08 * k for k in range(10)]
    b = [0.08 * k + (0.16 if k % 2 else 0.0) for k in range(10)]
    gt = sum(x > y for x in b for y in a)
    lt = sum(x < y for x in b for y in a)
    assert c.cliffs_delta == (gt - lt) / 100
    good = _by(compare_rows(_rows(), metrics=["final.line.f1"]), "final.line.f1", "good")
    # every difference is 0.5 (up to rounding): no spread, d is null with its reason
    assert (good.cohens_d, good.cohens_d_reason) == (None, "constant differences")
    same = [_row("x", f"i{k}", 0.5) for k in range(6)] + [_row("y", f"i{k}", 0.75)
                                                          for k in range(6)]
    c = _by(compare_rows(same, metrics=["final.line.f1"]), "final.line.f1", "y")
    assert (c.cohens_d, c.cohens_d_reason) == (None, "constant differences")
    assert c.cliffs_delta == 1.0 and c.reason is None


def test_constant_offset_has_no_cohens_d() -> None:
    """A constant +0.05 over 10 rows: the differences b - a are a few ulps apart, which gave
    d = +1891890259392860.50; d is null with its reason, the test and Cliff's delta stay."""
    rows = [_row("a", f"i{k}", 0.08 * k + 0.01) for k in range(10)]
    rows += [_row("b", f"i{k}", 0.08 * k + 0.01 + 0.05) for k in range(10)]
    diffs = [(0.08 * k + 0.01 + 0.05) - (0.08 * k + 0.01) for k in range(10)]
    assert len(set(diffs)) > 1  # the rounding this test is about
    c = _by(compare_rows(rows, metrics=["final.line.f1"], n=2000), "final.line.f1", "b")
    assert (c.cohens_d, c.cohens_d_reason) == (None, "constant differences")
    assert c.p == 2 / 1024 and c.diff == pytest.approx(0.05) and c.cliffs_delta is not None
    text = render_comparison([c], "table")
    assert "1891890259392860" not in text and "e+" not in text


def test_below_five_pairs_no_test_or_effect_size() -> None:
    """The outcome view's n < 5 rule, in compare: 3 shared pairs give the means and W/T/L but
    no interval, test, d, Cliff's delta or McNemar p; nulls with a reason, never NaN."""
    rows = []
    for k in range(3):
        rows.append(dict(_row("a", f"i{k}", 0.1 * k), resolved=k == 0))
        rows.append(dict(_row("b", f"i{k}", 0.1 * k + 0.2 + 0.01 * k), resolved=True))
    comps = compare_rows(rows, metrics=["final.line.f1", "resolved"], n=200)
    f1, res = _by(comps, "final.line.f1", "b"), _by(comps, "resolved", "b")
    assert res.test == "mcnemar" and (res.wins, res.losses) == (2, 0)
    for c in (f1, res):
        assert c.n_pairs == 3 and c.reason == c.cohens_d_reason == "n < 5"
        assert (c.ci, c.p, c.p_holm, c.cohens_d, c.cliffs_delta) == (None,) * 5
        assert not c.significant and c.diff is not None
    doc = json.loads(render_comparison(comps, "json"))
    assert all(x["reason"] == "n < 5" and x["p"] is None for x in doc["comparisons"])
    # five pairs: everything is given
    for k in range(3, 5):
        rows.append(dict(_row("a", f"i{k}", 0.1 * k), resolved=False))
        rows.append(dict(_row("b", f"i{k}", 0.1 * k + 0.2 + 0.01 * k), resolved=True))
    comps = compare_rows(rows, metrics=["final.line.f1", "resolved"], n=200)
    for c in comps:
        assert c.n_pairs == 5 and c.reason is None
        assert c.p is not None and c.ci is not None and c.cliffs_delta is not None
    assert _by(comps, "final.line.f1", "b").cohens_d is not None
    assert _by(comps, "resolved", "b").p == 2 / 16  # 4 discordant pairs, all to b


def test_correlations_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _resolved_rows()))
    metrics = "final.line.f1,trajectory.redundancy.line,resolved"
    for fmt in ("table", "md", "latex"):
        assert main(["compare", str(path), "--format", fmt, "--n", "200", "--metrics",
                     metrics]) == 0
        out = capsys.readouterr().out
        assert "Spearman's rho between the metrics over the 20 scored rows" in out
        assert "resolved" in out
    assert main(["compare", str(path), "--format", "json", "--n", "200", "--metrics",
                 metrics]) == 0
    doc = json.loads(capsys.readouterr().out)
    corr = doc["correlations"]
    assert corr["method"] == "spearman" and corr["pooled_rows"] == 20
    assert corr["metrics"][-1] == "resolved"
    i = corr["metrics"].index("final.line.f1")
    assert corr["rho"][i][i] == 1.0 and corr["n"][i][i] == 20
    # redundancy is 0.2 everywhere: a constant metric, null with its reason
    j = corr["metrics"].index("trajectory.redundancy.line")
    assert corr["rho"][i][j] is None and corr["reason"][i][j] == "constant metric"
    assert {"cohens_d", "cliffs_delta", "test"} <= set(doc["comparisons"][0])
    assert main(["compare", str(path), "--no-correlations", "--n", "200", "--metrics",
                 metrics]) == 0
    assert "Spearman" not in capsys.readouterr().out
