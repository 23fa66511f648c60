"""The ranking block of a row (``evaluation/ranking.py``): hand-computed cases on the bundled
example, the two presets' rules side by side, the options, a missing repository, and the
block through Parquet, compare and the localization report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES

from ctxeval import report
from ctxeval.analysis.comparison import compare_rows
from ctxeval.analysis.reports import render
from ctxeval.cli import main
from ctxeval.evaluation.output.results_parquet import rows_to_table, table_to_rows
from ctxeval.evaluation.ranking import level_metric_names, parse_ks

EX = FIXTURES / "example"
RANKED = FIXTURES / "adapters" / "ranked" / "ranked.jsonl"


def _evaluate(tmp: Path, *args: str, pred: Path = RANKED, name: str = "rows") -> list[dict]:
    """Rows of ``pred`` against the example's gold; without ``--repos`` in ``args``, a
    ``--repos`` directory that holds no repository (the instance's is missing)."""
    out = tmp / f"{name}.jsonl"
    if "--repos" not in args:
        args = (*args, "--repos", str(_no_repos(tmp)))
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--pred", str(pred),
                 "--out", str(out), "--quiet", *args]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _no_repos(tmp: Path) -> Path:
    empty = tmp / "no-repos"
    empty.mkdir(exist_ok=True)
    return empty


def _d(i: int) -> float:
    return 1 / math.log2(i + 2)


def test_a_declared_ranking_under_strict(tmp_path: Path) -> None:
    """Gold (the example's gold context): calc/ops.py lines 16-18 (``div``) and 31-32
    (``Calculator.divide``). Ranked: files /testbed/calc/ops.py (resolved to calc/ops.py),
    calc/cli.py (absent), calc/parse.py; functions add, divide (a bare name: it resolves to
    ``Calculator.divide``), div."""
    one, two = _evaluate(tmp_path, "--repos", str(EX / "repos"))
    rk = one["ranking"]
    assert (rk["source"], rk["gold"]) == ("declared", "context")
    f = rk["file"]
    assert (f["acc@1"], f["mrr"], f["gold_size"], f["pred_size"]) == (1.0, 1.0, 1, 3)
    assert f["precision@3"] == pytest.approx(1 / 3)
    m = rk["module"]  # gold {div, Calculator}; ranked [div]
    assert (m["acc@1"], m["recall@1"], m["precision@1"], m["map@3"]) == (0.0, 0.5, 1.0, 0.5)
    fn = rk["function"]  # ranked [add, Calculator.divide, div]: hits at 2 and 3
    assert (fn["acc@1"], fn["acc@3"], fn["mrr"]) == (0.0, 1.0, 0.5)
    assert fn["precision@3"] == pytest.approx(2 / 3)
    assert fn["ndcg@3"] == pytest.approx((_d(1) + _d(2)) / (_d(0) + _d(1)))
    assert fn["map@3"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert fn["precision@10"] == pytest.approx(0.2) and fn["map@10"] == fn["map@3"]
    # ranked lines ops 15-20 then parse 1-26 (26 lines): gold lines 16-18 of 5
    assert rk["budget"] == {"lines": 500, "used": 32, "line": 0.6, "file": 1.0}
    assert list(f) == [*level_metric_names(), "gold_size", "pred_size"]
    # only functions given: modules and files derived from them
    two_rk = two["ranking"]
    assert (two_rk["function"]["mrr"], two_rk["module"]["mrr"]) == (0.5, 0.5)
    assert two_rk["file"]["acc@1"] == 1.0
    assert two_rk["budget"] is None  # no ranked lines: no budgeted recall


def test_the_same_ranking_under_locagent(tmp_path: Path) -> None:
    """LocAgent compares the items as written: /testbed/calc/ops.py is not calc/ops.py and
    ``divide`` is not ``Calculator.divide``."""
    one, _ = _evaluate(tmp_path, "--repos", str(EX / "repos"), "--preset", "locagent")
    assert one["preset"] == "locagent"
    rk = one["ranking"]
    assert (rk["file"]["mrr"], rk["file"]["acc@5"]) == (0.0, 0.0)
    fn = rk["function"]
    assert fn["mrr"] == pytest.approx(1 / 3)
    assert (fn["acc@3"], fn["recall@3"], fn["map@3"]) == (0.0, 0.5, pytest.approx(1 / 9))
    # the rest of the row is read and scored as strict
    strict, _ = _evaluate(tmp_path, "--repos", str(EX / "repos"), name="strict")
    assert set(one) == set(strict)
    assert all(one[key] == strict[key] for key in one if key not in ("preset", "ranking"))


def test_k_and_budget_options(tmp_path: Path) -> None:
    one, _ = _evaluate(tmp_path, "--repos", str(EX / "repos"), "--k", "2,4",
                       "--budget-lines", "2")
    assert list(one["ranking"]["file"]) == [*level_metric_names((2, 4)), "gold_size",
                                            "pred_size"]
    # the first two lines ranked: ops 15 and 16, one of the five gold lines
    assert one["ranking"]["budget"] == {"lines": 2, "used": 2, "line": 0.2, "file": 1.0}
    for bad in (["--k", "0,3"], ["--k", "a"], ["--budget-lines", "0"]):
        assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--pred", str(RANKED),
                     "--quiet", *bad]) == 2
    assert parse_ks("5, 1,5,10") == (5, 1, 10)


def test_a_missing_repository_keeps_the_levels_that_need_none(tmp_path: Path) -> None:
    one, _ = _evaluate(tmp_path)
    assert one["status"] == "error" and one["error"]["kind"] == "missing_repo"
    rk = one["ranking"]
    assert rk["repository"] is False
    # files as written, normalised: /testbed/calc/ops.py is calc/ops.py
    assert (rk["file"]["mrr"], rk["file"]["acc@1"]) == (1.0, 1.0)
    assert rk["module"] is None and rk["function"] is None
    assert rk["before_first_gold"] == {"file": None, "module": None, "function": None}


def test_rows_of_trajectories_rank_what_the_steps_showed(tmp_path: Path) -> None:
    rows = _evaluate(tmp_path, "--repos", str(EX / "repos"),
                     pred=EX / "runs" / "agent-a.jsonl")
    for row in rows:
        rk = row["ranking"]
        assert rk["source"] == "steps"
        first = rk["before_first_gold"]["file"]
        assert first["step"] == row["trajectory"]["first_gold_step"]["file"]


def test_parquet_compare_and_report(tmp_path: Path) -> None:
    a = _evaluate(tmp_path, "--repos", str(EX / "repos"), name="a")
    b = _evaluate(tmp_path, "--repos", str(EX / "repos"), pred=EX / "runs" / "agent-a.jsonl",
                  name="b")
    rows: list[dict[str, Any]] = [*a, *b]
    assert list(table_to_rows(rows_to_table(rows))) == rows
    comps = compare_rows(rows, baseline="ranked.jsonl", metrics=[
        "ranking.file.mrr", "ranking.before_first_gold.file.steps_before"])
    assert [c.n_pairs for c in comps] == [2, 2]
    assert comps[1].higher_is_better is False
    rep = report(rows, view="localization")
    latex = render(rep, "latex")
    assert r"\multicolumn{3}{c}{File}" in latex and "Acc@1" in latex
    paper = rep.tables[0]
    assert [r.labels["run"] for r in paper.rows] == ["ranked.jsonl", "agent-a.jsonl"]
    assert paper.rows[0].cells["function.mrr"].value == pytest.approx(0.5)
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                 "--metrics", "localization", "--format", "json",
                 "--out", str(tmp_path / "c.json")]) == 0
    got = json.loads((tmp_path / "c.json").read_text())
    assert {c["metric"] for c in got["comparisons"]} >= {"ranking.file.acc@1",
                                                         "ranking.function.mrr"}


def test_a_failing_ranking_costs_only_its_block(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxeval.evaluation.run import Evaluator
    from ctxeval.reading.adapters import read
    from ctxeval.truth.gold import load_gold
    from ctxeval.truth.repo import RepoCache

    ev = Evaluator(load_gold([EX / "gold.jsonl"]), RepoCache(EX / "repos"))

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("x")

    monkeypatch.setattr(ev.preparer.ranker, "prepare", broken)
    rows = ev.rows_of(read(EX / "runs" / "agent-a.jsonl"), "a")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all("ranking" not in r and r["final"] for r in rows)
    assert rows[0]["warnings"] == ["ranked metrics not computed: KeyError: 'x'"]


def test_agent_failures_without_repository(tmp_path: Path) -> None:
    """With --all-gold and no repository, an instance without output has an empty ranking
    only where the gold is a localisation dataset's: a trajectory run's rows without a
    repository have no block, so its failures alone must not put zeros in its means."""
    out = tmp_path / "rows.jsonl"
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"format": "ctxeval-ranking/1", "instance_id": "other"}) + "\n")
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--pred", str(empty),
                 "--all-gold", "--repos", str(_no_repos(tmp_path)), "--out", str(out),
                 "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["instance_id"] for r in rows if "ranking" in r] == []
    loc = FIXTURES / "locagent"
    assert main(["evaluate", "--gold", str(loc / "dataset.jsonl"), "--pred", str(empty),
                 "--all-gold", "--preset", "locagent", "--repos", str(_no_repos(tmp_path)),
                 "--out", str(out), "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [r for r in rows if r["instance_id"] == "toy__loc-3"]
    assert failed and failed[0]["ranking"]["file"]["acc@1"] == 0.0
