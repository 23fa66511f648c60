"""The Python API mirrors the commands and returns typed objects."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxeval
from conftest import FIXTURES
from ctxeval.analysis.comparison import Comparison
from ctxeval.analysis.reports import Report, render

EX = FIXTURES / "example"
RUNS = {"agent-a": EX / "runs/agent-a.jsonl", "agent-b": EX / "runs/agent-b.jsonl"}


def test_evaluate_returns_rows_and_summary():
    result = ctxeval.evaluate(EX / "gold.jsonl", RUNS, repos=EX / "repos")
    assert isinstance(result, ctxeval.Evaluation)
    assert [(r["run"], r["instance_id"]) for r in result.rows] == [
        ("agent-a", "example__calc-1"), ("agent-a", "example__calc-2"),
        ("agent-b", "example__calc-1"), ("agent-b", "example__calc-2")]
    assert result.summary.rows["ok"] == 4
    # the same numbers as the hand-worked CLI test (tests/evaluation/test_evaluate.py)
    assert result.rows[0]["trajectory"]["auc_coverage"]["line"] == pytest.approx(3.2 / 5)


def test_evaluate_writes_out_when_asked(tmp_path):
    out = tmp_path / "r.jsonl"
    result = ctxeval.evaluate([EX / "gold.jsonl"], RUNS, repos=EX / "repos", out=out,
                              preset="contextbench")
    assert result.out == out and out.exists()
    assert (tmp_path / "r.jsonl.meta.json").exists()
    assert {r["preset"] for r in result.rows} == {"contextbench"}


def test_report_and_compare_objects():
    rows = ctxeval.evaluate(EX / "gold.jsonl", RUNS, repos=EX / "repos").rows
    rep = ctxeval.report(rows)
    assert isinstance(rep, Report)
    assert "agent-a" in render(rep, "md")
    assert isinstance(ctxeval.report(rows, view="exploration"), Report)
    outcome = ctxeval.report(rows, view="outcome", metrics=["final.line.f1"])
    assert outcome.to_json()["outcome"][0]["metric"] == "final.line.f1"
    with pytest.raises(ValueError, match="unknown view"):
        ctxeval.report(rows, view="nope")
    comps = ctxeval.compare(rows, baseline="agent-a", metrics=["final.line.f1"], n=200)
    assert len(comps) == 1 and isinstance(comps[0], Comparison)
    assert comps[0].n_pairs == 2


def test_an_evaluation_without_rows_returns_no_rows(tmp_path: Path) -> None:
    """Nothing readable in the run: the API gives an empty result (the command exits 1), and
    leaves no empty results file and no metadata behind."""
    out = tmp_path / "r.jsonl"
    res = ctxeval.evaluate(EX / "gold.jsonl", {"a": str(EX / "gold.jsonl")}, EX / "repos",
                           out=out)
    assert res.rows == [] and res.summary.unreadable
    assert list(tmp_path.iterdir()) == []
