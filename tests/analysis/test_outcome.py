"""The outcome view (``report --view outcome``): hand-computed cases, the null rules, every
format, and real rows of a public run re-computed here with a plain Mann–Whitney count."""

from __future__ import annotations

import gzip
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import FIXTURES
from ctxeval.analysis import stats
from ctxeval.analysis.correlations import metric_correlations
from ctxeval.analysis.outcome import DEFAULT_METRICS, outcome_table, resolve_metrics
from ctxeval.analysis.reports import FORMATS, build_outcome, render
from ctxeval.cli import main

REAL = FIXTURES / "outcome" / "rows.jsonl.gz"


def real_rows() -> list[dict[str, Any]]:
    """Real rows (``fixtures/outcome/README.md``): mini-swe-agent 1.15 with gemini-3-pro on the
    203 SWE-bench Verified instances whose repositories were at hand (run ``gemini-3-pro``), and
    CodeR on the 115 such SWE-bench Lite instances (run ``coder``), resolved status from each
    run's own report."""
    with gzip.open(REAL, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _row(run: str, iid: str, cov: float | None, resolved: bool | None,
         status: str = "ok") -> dict[str, Any]:
    row: dict[str, Any] = {"instance_id": iid, "run": run, "status": status,
                           "final": {"line": {"coverage": cov}}, "num_steps": 3}
    if resolved is not None:
        row["resolved"] = resolved
    return row


def hand_rows() -> list[dict[str, Any]]:
    """Run a: six labelled values, one row without a status, one error, one null value.
    Runs b-e: all resolved, n < 5, a constant metric, none resolved."""
    a = [_row("a", f"i{k}", c, lab) for k, (c, lab) in enumerate(
        [(1.0, True), (1.0, False), (0.5, True), (0.5, True), (0.25, False), (0.0, False),
         (0.8, None), (None, True)], start=1)]
    a.append({"instance_id": "i9", "run": "a", "status": "error",
              "error": {"kind": "missing_repo", "message": "no repository"}})
    b = [_row("b", f"i{k}", k / 10, True) for k in range(1, 6)]
    c = [_row("c", f"i{k}", k / 10, k % 2 == 0) for k in range(1, 5)]
    d = [_row("d", f"i{k}", 0.3, k % 2 == 0) for k in range(1, 7)]
    e = [_row("e", f"i{k}", k / 10, False) for k in range(1, 6)]
    return a + b + c + d + e


def _entry(table: Any, run: str, metric: str = "final.line.coverage") -> Any:
    return next(e for e in table.entries if e.run == run and e.metric == metric)


# ------------------------------------------------------------------------------ by hand


def test_hand_computed_run() -> None:
    t = outcome_table(hand_rows(), metrics=["final.line.coverage"], resamples=500)
    e = _entry(t, "a")
    assert (e.n, e.n_pass, e.rate) == (6, 3, 0.5)
    assert (e.n_null, e.n_unlabelled, e.reason) == (1, 1, None)
    # the n, the rows with a resolved status: the six with a value and the null one
    assert e.n_labelled == e.n + e.n_null == 7
    # resolved (1, .5, .5) against unresolved (1, .25, 0): 1 vs 1 ties (1/2), every other pair
    # but .5 vs 1 is won: 0.5 + 1 + 1 + 2 x (0 + 1 + 1) = 6.5 of 9
    assert e.auroc == 6.5 / 9
    assert e.mean_pass == pytest.approx(2 / 3) and e.mean_fail == pytest.approx(5 / 12)
    # r: Σdxdy = 0.375, Σdx² = 2.5625 - 6 (3.25/6)², Σdy² = 1.5
    sxx = 2.5625 - 6 * (3.25 / 6) ** 2
    r = 0.375 / math.sqrt(sxx * 1.5)
    assert e.r == pytest.approx(r, rel=1e-12)
    # df = 4: p = I_{1-r²}(2, ½) = 1 - |r| (1 + (1 - r²)/2), in closed form
    assert e.r_p == pytest.approx(1 - r * (1 + (1 - r * r) / 2), rel=1e-12)
    # bins of 0, .25, (.5, .5), (1, 1): mid-distribution 1/12, 3/12, 6/12, 10/12 -> 0, 1, 2, 4
    assert [(b["bin"], b["n"], b["n_pass"]) for b in e.bins] == [
        (0, 1, 0), (1, 1, 0), (2, 2, 2), (4, 2, 1)]
    assert e.auroc_ci is not None and e.auroc_ci[0] <= e.auroc <= e.auroc_ci[1]
    assert t.runs[0].errors == 1 and t.runs[0].scored == 8 and t.runs[0].labelled == 7


def test_unlabelled_rows_are_left_out_not_unresolved() -> None:
    rows = hand_rows()
    without = [r for r in rows if not (r["run"] == "a" and "resolved" not in r)]
    as_false = [dict(r, resolved=False) if r["run"] == "a" and "resolved" not in r else r
                for r in rows]
    opts = {"metrics": ["final.line.coverage"], "resamples": 300}
    a = _entry(outcome_table(rows, **opts), "a")
    b = _entry(outcome_table(without, **opts), "a")
    c = _entry(outcome_table(as_false, **opts), "a")
    assert (a.n, a.n_pass, a.auroc, a.auroc_ci, a.r) == (b.n, b.n_pass, b.auroc, b.auroc_ci, b.r)
    assert a.n_unlabelled == 1 and b.n_unlabelled == 0
    assert c.n == 7 and c.auroc != a.auroc  # taking it as unresolved would change the numbers


@pytest.mark.parametrize(("run", "reason", "rate"), [
    ("b", "all resolved", 1.0), ("c", "n < 5", 0.5), ("d", "constant metric", 0.5),
    ("e", "none resolved", 0.0)])
def test_nulls_with_a_reason(run: str, reason: str, rate: float) -> None:
    e = _entry(outcome_table(hand_rows(), metrics=["final.line.coverage"], resamples=100), run)
    assert e.reason == reason and e.rate == rate
    assert (e.auroc, e.auroc_ci, e.r, e.r_p, e.r_p_holm) == (None, None, None, None, None)
    assert e.bins  # the bins are counts: still given


def test_json_has_no_nan_and_the_documented_shape() -> None:
    text = render(build_outcome(hand_rows(), metrics="final.line.coverage,ranking.file.mrr",
                                resamples=200), "json")

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in the JSON")

    doc = json.loads(text, parse_constant=no_constant)
    assert doc["view"] == "outcome"
    first = doc["outcome"][0]
    assert list(first)[:10] == ["run", "metric", "n", "n_pass", "rate", "auroc", "auroc_ci",
                                "r", "r_p", "bins"]
    absent = [e for e in doc["outcome"] if e["metric"] == "ranking.file.mrr"]
    assert len(absent) == 5 and all(e["reason"] == "absent" and e["n"] == 0 for e in absent)
    assert doc["runs"][0] == {"run": "a", "scored": 8, "labelled": 7, "resolved": 4,
                              "errors": 1}
    # n counts the labelled rows with a value; n_labelled every labelled row; n_null the
    # difference; n_unlabelled the scored rows without a status
    assert (first["n"], first["n_labelled"], first["n_null"], first["n_unlabelled"]) == (
        6, 7, 1, 1)
    assert all(e["n_labelled"] == doc["runs"][i // 2]["labelled"]
               for i, e in enumerate(doc["outcome"]))
    assert all(e["n"] + e["n_null"] == e["n_labelled"] for e in doc["outcome"]
               if e["reason"] != "absent")
    assert doc["correlations"]["metrics"] == ["final.line.coverage", "ranking.file.mrr"]


def test_holm_over_the_whole_view() -> None:
    t = outcome_table(real_rows(), resamples=50)
    assert [e.r_p_holm for e in t.entries] == stats.holm_bonferroni([e.r_p for e in t.entries])


def test_deterministic_given_the_seed() -> None:
    rows = real_rows()
    a = outcome_table(rows, metrics=["final.line.coverage"], resamples=400, seed=3)
    b = outcome_table(rows, metrics=["final.line.coverage"], resamples=400, seed=3)
    c = outcome_table(rows, metrics=["final.line.coverage"], resamples=400, seed=4)
    assert a.entries == b.entries
    assert a.entries[0].auroc_ci != c.entries[0].auroc_ci


# ------------------------------------------------------------------------------ metrics


def test_default_metrics_adapt_to_the_rows() -> None:
    ranking = [m for m in DEFAULT_METRICS if m.startswith("ranking.")]
    assert "ranking.file.acc@1" in ranking and "ranking.function.mrr" in ranking
    paths, unmatched = resolve_metrics(hand_rows(), None)
    assert paths == ["final.line.coverage", "num_steps"]
    assert "ranking.file.acc@1" in unmatched and "usage.cost" in unmatched
    # the real rows (written before rows had a ranking block) have everything else
    paths, unmatched = resolve_metrics(real_rows(), None)
    assert unmatched == ranking
    assert paths == [m for m in DEFAULT_METRICS if m not in ranking]


def test_ranking_metrics_are_picked_up_once_rows_have_them() -> None:
    rows = hand_rows()
    for k, r in enumerate(rows):
        if r["status"] != "error":
            r["ranking"] = {"file": {"acc@1": float(k % 2), "mrr": 1 / (1 + k % 3)},
                            "function": {"mrr": None}}
    paths, unmatched = resolve_metrics(rows, None)
    assert paths[-3:] == ["ranking.file.acc@1", "ranking.file.mrr", "ranking.function.mrr"]
    assert "ranking.file.acc@1" not in unmatched and "ranking.module.mrr" in unmatched
    t = outcome_table(rows, resamples=100)
    e = _entry(t, "a", "ranking.file.mrr")
    assert e.n == 7 and e.reason is None and e.auroc is not None
    nulls = _entry(t, "a", "ranking.function.mrr")
    assert nulls.n == 0 and nulls.n_null == 7 and nulls.reason == "n < 5"


def test_correlations_pairwise_complete() -> None:
    rows = real_rows()
    metrics = ["final.line.coverage", "final.line.precision", "final.line.f1",
               "trajectory.first_gold_step.line"]
    c = metric_correlations(rows, metrics)
    assert c.rows == 318
    assert c.rho[0][0] == 1.0 and c.n[0][3] == c.n[3][0] < 318  # nulls of the first gold step
    x = [r["final"]["line"]["precision"] for r in rows]
    y = [r["final"]["line"]["f1"] for r in rows]
    assert c.rho[1][2] == stats.spearman(x, y).r
    assert c.rho[1][2] == c.rho[2][1]


# ------------------------------------------------------------------------------ formats


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "html"])
def test_every_format(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in hand_rows()))
    assert main(["report", str(path), "--view", "outcome", "--format", fmt, "--resamples",
                 "200", "--metrics", "final.line.coverage"]) == 0
    out = capsys.readouterr().out
    assert "final.line.coverage" in out
    if fmt in ("table", "md", "latex"):
        assert "all resolved" in out and "0.722" in out  # run a's AUROC, 6.5 / 9
    if fmt == "csv":
        assert out.splitlines()[0].startswith("run,metric,n,n.n,n.nulls")


def test_html_holds_the_outcome_view(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in real_rows()))
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--format", "html", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'id="view-outcome"' in text and 'id="table-outcome"' in text
    assert 'id="table-correlations"' in text


def test_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in hand_rows()))
    assert main(["report", str(path), "--view", "outcome", "--bins", "0"]) == 2
    assert "--bins: must be at least 1, got 0" in capsys.readouterr().err
    assert main(["report", str(path), "--view", "outcome", "--by", "language"]) == 2
    assert "--by does not split the outcome view" in capsys.readouterr().err


def test_rows_without_any_resolved_status_say_so(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{k: v for k, v in r.items() if k != "resolved"} for r in hand_rows()]
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    assert main(["report", str(path), "--view", "outcome", "--resamples", "10"]) == 0
    out = capsys.readouterr().out
    assert "no row records a resolved status" in out and "--results" in out
    t = outcome_table(rows, resamples=10)
    assert all(e.n == 0 and e.reason == "n < 5" for e in t.entries)
    assert all(e.n_unlabelled > 0 for e in t.entries)


# ------------------------------------------------------------------------------ real rows


def _twice_u(pos: list[float], neg: list[float]) -> int:
    """2U, every pair counted by hand: 2 when the resolved value is higher, 1 when tied."""
    total = 0
    for p in pos:
        for q in neg:
            if p > q:
                total += 2
            elif p == q:
                total += 1
    return total


def _leaf(row: dict[str, Any], path: str) -> Any:
    cur: Any = row
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def test_real_rows_recomputed_by_hand() -> None:
    """n, n_pass and AUROC of every (run, metric) of the view on real rows equal a plain
    re-computation; every interval holds its estimate."""
    rows = real_rows()
    t = outcome_table(rows, resamples=300)
    assert len(t.entries) == 2 * len(t.metrics) and len(t.metrics) == 34
    checked = 0
    for e in t.entries:
        mine = [r for r in rows if r["run"] == e.run and isinstance(r.get("resolved"), bool)]
        values = [(_leaf(r, e.metric), r["resolved"]) for r in mine]
        kept = [(float(v), lab) for v, lab in values if isinstance(v, (int, float))]
        pos = [v for v, lab in kept if lab]
        neg = [v for v, lab in kept if not lab]
        assert (e.n, e.n_pass, e.n_null) == (len(kept), len(pos), len(values) - len(kept))
        assert e.n_labelled == len(mine)
        want = Fraction(_twice_u(pos, neg), 2 * len(pos) * len(neg))
        assert e.auroc is not None and Fraction(e.auroc) == pytest.approx(want, abs=1e-15)
        assert e.auroc == float(want)  # one correctly rounded division
        assert e.auroc_ci is not None and e.auroc_ci[0] <= e.auroc <= e.auroc_ci[1]
        assert e.r is not None and -1 <= e.r <= 1 and e.r_p is not None
        assert sum(b["n"] for b in e.bins) == e.n and sum(b["n_pass"] for b in e.bins) == e.n_pass
        checked += 1
    assert checked == 68


def test_real_run_shape() -> None:
    """What the view says of the gemini-3-pro run: line coverage separates resolved from
    unresolved instances (AUROC 0.72), line precision does not (0.50)."""
    t = outcome_table(real_rows(), resamples=2000)
    cov = _entry(t, "gemini-3-pro", "final.line.coverage")
    prec = _entry(t, "gemini-3-pro", "final.line.precision")
    assert (cov.n, cov.n_pass) == (203, 138)
    assert round(cov.mean_pass, 2) == 0.95 and round(cov.mean_fail, 2) == 0.68
    assert round(cov.auroc, 2) == 0.72 and cov.auroc_ci[0] > 0.6
    assert round(prec.auroc, 2) == 0.50 and prec.auroc_ci[0] < 0.5 < prec.auroc_ci[1]
