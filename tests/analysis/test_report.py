"""ctxeval report: aggregates checked by hand on small row sets, each format, the command."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import FIXTURES, PARITY, requires_parity
from ctxeval.analysis.reports import build_exploration, build_leaderboard, instance_metrics, render
from ctxeval.analysis.reports.latex import escape
from ctxeval.analysis.reports.table import Cell, Column, Row, Table, best_rows
from ctxeval.cli import main

GRANS = ("file", "symbol", "span", "line")


def _part(inter: int, gold: int, pred: int, cov: float | None, prec: float | None,
          f1: float | None) -> dict[str, Any]:
    return {"coverage": cov, "precision": prec, "f1": f1, "intersection": inter,
            "gold_size": gold, "pred_size": pred}


def _row(run: str, iid: str, *, line: dict[str, Any], file: dict[str, Any], language: str,
         status: str = "ok", steps: int = 1, auc: float = 0.0, red: float = 0.0,
         editloc: dict[str, Any] | None = None, usage: dict[str, Any] | None = None,
         resolved: bool | None = None) -> dict[str, Any]:
    return {"instance_id": iid, "run": run, "preset": "strict", "status": status,
            "language": language, "source": "toy", "repo": "toy/r", "num_steps": steps,
            "final": {"file": file, "symbol": file, "span": line, "line": line},
            "trajectory": {"steps": [], "auc_coverage": dict.fromkeys(GRANS, auc),
                           "redundancy": dict.fromkeys(GRANS, red)},
            "editloc": editloc, "usage": usage, "resolved": resolved}


def _editloc(inter: int, gold: int, pred: int, rec: float, prec: float,
             f1: float) -> dict[str, Any]:
    return {"recall": rec, "precision": prec, "f1": f1, "intersection": inter,
            "gold_size": gold, "pred_size": pred,
            "file": {"recall": 1.0, "precision": 1.0, "f1": 1.0, "intersection": 1,
                     "gold_size": 1, "pred_size": 1}}


def rows_small() -> list[dict[str, Any]]:
    """Two runs. Run a: r1 ordinary, r2 with empty line gold (coverage/F1 null), an evaluator
    error. Run b: r4 ordinary, r5 an agent failure scored 0."""
    return [
        _row("a", "r1", line=_part(2, 4, 8, 0.5, 0.25, 1 / 3),
             file=_part(1, 1, 2, 1.0, 0.5, 2 / 3), language="python", steps=3, auc=0.4, red=0.2,
             editloc=_editloc(1, 2, 1, 0.5, 1.0, 2 / 3),
             usage={"input_tokens": 1000, "output_tokens": 100, "cost": 0.1, "api_calls": 3},
             resolved=True),
        _row("a", "r2", line=_part(0, 0, 5, None, 0.0, None),
             file=_part(0, 1, 0, 0.0, 0.0, 0.0), language="java", steps=1,
             usage={"input_tokens": 3000, "output_tokens": 300, "cost": None,
                    "api_calls": None},
             resolved=False),
        {"instance_id": "r3", "run": "a", "status": "error", "language": "python",
         "error": {"kind": "missing_repo", "message": "no clone"}},
        _row("b", "r4", line=_part(3, 4, 3, 0.75, 1.0, 6 / 7),
             file=_part(1, 1, 1, 1.0, 1.0, 1.0), language="python", steps=2, auc=0.5, red=0.5,
             editloc=_editloc(2, 2, 4, 1.0, 0.5, 2 / 3)),
        _row("b", "r5", status="agent_failure", line=_part(0, 4, 0, 0.0, 0.0, 0.0),
             file=_part(0, 1, 0, 0.0, 0.0, 0.0), language="java", steps=0,
             editloc=_editloc(0, 2, 0, 0.0, 0.0, 0.0)),
    ]


def _cells(report, run: str, **labels: str) -> dict[str, Any]:
    for r in report.tables[0].rows:
        if r.labels["run"] == run and all(r.labels.get(k) == v for k, v in labels.items()):
            return r.cells
    raise AssertionError(f"no row {run} {labels}")


# ------------------------------------------------------------------------------ aggregation


def test_macro_means_leave_nulls_out_and_count_them() -> None:
    rep = build_leaderboard(rows_small(), metrics="full")
    a, b = _cells(rep, "a"), _cells(rep, "b")
    assert a["n"].value == 2 and b["n"].value == 2
    # line coverage of a: r1 0.5, r2 null (empty gold) -> 0.5 over 1 instance, 1 null
    assert a["line.coverage"].value == pytest.approx(0.5)
    assert (a["line.coverage"].n, a["line.coverage"].nulls) == (1, 1)
    assert a["line.precision"].value == pytest.approx(0.125)  # (0.25 + 0) / 2
    assert a["line.f1"].value == pytest.approx(1 / 3)
    assert a["file.coverage"].value == pytest.approx(0.5)
    assert a["editloc.recall"].value == pytest.approx(0.5)
    assert a["editloc.recall"].nulls == 1  # r2 has no gold patch
    assert a["resolved"].value == pytest.approx(0.5)
    assert a["input_tokens"].value == pytest.approx(2000)
    assert (a["cost"].value, a["cost"].nulls) == (pytest.approx(0.1), 1)
    assert a["files"].value == pytest.approx(1.0)  # (2 + 0) / 2
    assert a["lines"].value == pytest.approx(6.5)  # (8 + 5) / 2
    assert a["steps"].value == pytest.approx(2.0)
    assert a["auc.line"].value == pytest.approx(0.2)
    assert a["redundancy.line"].value == pytest.approx(0.1)
    # the agent failure of b is scored 0 and counted
    assert b["line.coverage"].value == pytest.approx(0.375)
    assert b["line.f1"].value == pytest.approx(3 / 7)
    assert b["resolved"].value is None and b["resolved"].nulls == 2
    assert any("run a: 1 evaluator error left out" in n for n in rep.notes)
    assert any("run b: 0 evaluator errors left out, 1 agent failure scored 0" in n
               for n in rep.notes)


def test_micro_rebuilds_ratios_from_counts() -> None:
    rep = build_leaderboard(rows_small(), micro=True, metrics="full")
    a, b = _cells(rep, "a"), _cells(rep, "b")
    # a, line: Σinter 2, Σgold 4, Σpred 13
    assert a["line.coverage"].value == pytest.approx(0.5)
    assert a["line.precision"].value == pytest.approx(2 / 13)
    assert a["line.f1"].value == pytest.approx(4 / 17)
    assert a["file.f1"].value == pytest.approx(0.5)  # 1/2, 1/2
    # EditLoc micro over the rows that have it: r1 only
    assert a["editloc.recall"].value == pytest.approx(0.5)
    assert (a["editloc.recall"].n, a["editloc.recall"].nulls) == (1, 1)
    # b, line: Σinter 3, Σgold 8, Σpred 3
    assert b["line.coverage"].value == pytest.approx(3 / 8)
    assert b["line.precision"].value == pytest.approx(1.0)
    assert b["line.f1"].value == pytest.approx(6 / 11)
    # trajectory metrics stay macro
    assert b["auc.line"].value == pytest.approx(0.25)
    assert rep.meta["aggregation"] == "micro"


def test_micro_uses_the_engine_empty_set_conventions() -> None:
    rows = [_row("a", "x", line=_part(0, 0, 0, None, None, None),
                 file=_part(0, 0, 3, None, 0.0, None), language="python")]
    cells = _cells(build_leaderboard(rows, micro=True, metrics="full"), "a")
    assert cells["line.coverage"].value is None and cells["line.precision"].value is None
    assert cells["file.precision"].value == 0.0 and cells["file.f1"].value is None


def test_by_field_groups_rows_per_run() -> None:
    rep = build_leaderboard(rows_small(), by="language", metrics="n,errors,line.coverage")
    labels = [(r.labels["run"], r.labels["language"]) for r in rep.tables[0].rows]
    assert labels == [("a", "java"), ("a", "python"), ("b", "java"), ("b", "python")]
    ap = _cells(rep, "a", language="python")
    assert ap["n"].value == 1 and ap["errors"].value == 1
    assert ap["line.coverage"].value == pytest.approx(0.5)
    aj = _cells(rep, "a", language="java")
    assert aj["line.coverage"].value is None and aj["line.coverage"].nulls == 1
    assert _cells(rep, "b", language="java")["line.coverage"].value == 0.0
    assert [c.key for c in rep.tables[0].columns] == ["n", "errors", "line.coverage"]


def test_by_missing_field_is_one_none_group() -> None:
    rep = build_leaderboard(rows_small(), by="usage.api_calls", metrics="n")
    assert {(r.labels["run"], r.labels["usage.api_calls"]) for r in rep.tables[0].rows} == {
        ("a", "3"), ("a", "(none)"), ("b", "(none)")}


def test_metric_patterns_and_unknown_metric(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    rep = build_leaderboard(rows_small(), metrics="line.*")
    assert [c.key for c in rep.tables[0].columns] == ["line.coverage", "line.precision",
                                                      "line.f1"]
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows_small()))
    assert main(["report", "--metrics", "nonsense", str(path)]) == 1
    assert "unknown metric 'nonsense'" in capsys.readouterr().err


def test_ci_brackets_the_mean() -> None:
    rep = build_leaderboard(rows_small(), metrics="line.precision,steps", ci=True)
    cell = _cells(rep, "a")["line.precision"]
    assert cell.ci is not None and cell.ci[0] <= cell.value <= cell.ci[1]
    assert cell.ci == (pytest.approx(0.0), pytest.approx(0.25))  # two values: 0 and 0.25
    assert "bootstrap 95%" in render(rep, "table", ci=True)


def test_cost_columns_and_pareto() -> None:
    rep = build_leaderboard(rows_small(), metrics="mean_score,pass_rate,cost_of_pass,pareto")
    a, b = _cells(rep, "a"), _cells(rep, "b")
    # rows record `resolved`, so a pass is resolved: a passes r1 only (output tokens 100 + 300)
    assert a["pass_rate"].value == pytest.approx(0.5)
    assert a["cost_of_pass"].value == pytest.approx(400.0)
    # b records no resolution: pass rate undefined, nothing to rank b on
    assert b["pass_rate"].value is None
    assert a["mean_score"].value == pytest.approx(1 / 3)  # line F1 of r1 (r2 is null)
    assert b["mean_score"].value == pytest.approx(3 / 7)  # (6/7 + 0) / 2
    # b records no cost and no tokens: a alone is ranked, on input tokens (auto)
    assert a["pareto"].value == 1 and b["pareto"].value is None
    assert rep.meta["pareto_cost"] == "input_tokens"


def test_no_pass_is_infinite_in_text_and_null_in_json() -> None:
    rows = [r for r in rows_small() if r["run"] == "a" and r["status"] == "ok"]
    for r in rows:
        r["resolved"] = False
    rep = build_leaderboard(rows, metrics="cost_of_pass")
    assert "inf" in render(rep, "table")
    data = json.loads(render(rep, "json"))
    cell = data["tables"][0]["rows"][0]["values"]["cost_of_pass"]
    assert cell["value"] is None and cell["no_pass"] is True


# ------------------------------------------------------------------------------ formats


def test_latex_bolds_the_best_per_column_by_direction() -> None:
    rows = rows_small()
    for r in rows:
        r["run"] = {"a": "agent_a", "b": "b&c%"}[r["run"]]
    rep = build_leaderboard(rows, metrics="line.coverage,redundancy.line,file.coverage,cost")
    tex = render(rep, "latex")
    lines = {ln.split(" & ")[0]: ln for ln in tex.splitlines() if " & " in ln and "\\\\" in ln}
    a, b = lines[r"agent\_a"], lines[r"b\&c\%"]
    assert r"\textbf{0.500}" in a.split(" & ")[1]  # coverage 0.5 > 0.375: higher is better
    assert r"\textbf" not in b.split(" & ")[1]
    assert r"\textbf{0.100}" in a.split(" & ")[2]  # redundancy 0.1 < 0.25: lower is better
    assert r"\textbf" not in b.split(" & ")[2]
    assert r"\textbf{0.500}" in a.split(" & ")[3] and r"\textbf{0.500}" in b.split(" & ")[3]
    assert r"\textbf" not in a.split(" & ")[4]  # only one run has a cost: nothing to compare
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\caption{" in tex
    assert "Macro means over instances" in tex
    micro_tex = render(build_leaderboard(rows, metrics="line.f1", micro=True), "latex")
    assert "Micro averages" in micro_tex


def test_best_rows_compare_at_displayed_precision_within_blocks() -> None:
    col = Column("x", "x", "higher", 2)
    table = Table("t", "t", [("run", "run"), ("g", "g")], [col], [])
    table.rows = [Row({"run": "a", "g": "1"}, {"x": Cell(0.501)}),
                  Row({"run": "b", "g": "1"}, {"x": Cell(0.499)}),
                  Row({"run": "a", "g": "2"}, {"x": Cell(0.1)}),
                  Row({"run": "b", "g": "2"}, {"x": Cell(0.2)})]
    assert best_rows(table, col) == {0, 1}  # 0.501 and 0.499 both show as 0.50
    table.block_key = "g"
    assert best_rows(table, col) == {0, 1, 3}


def test_latex_escape() -> None:
    assert escape("a_b&c%d$e#f{g}h~i^j\\") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}")


def test_markdown_marks_best_and_lists_nulls() -> None:
    md = render(build_leaderboard(rows_small(), metrics="n,line.coverage"), "md")
    assert "| a | 2 | **0.500** |" in md
    assert "| b | 2 | 0.375 |" in md
    assert "a: nulls left out: Line cov 1" in md


def test_csv_columns_and_values() -> None:
    text = render(build_leaderboard(rows_small(), metrics="n,line.coverage", ci=True), "csv",
                  ci=True)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["run", "n", "n.n", "n.nulls", "n.ci_lo", "n.ci_hi", "line.coverage",
                       "line.coverage.n", "line.coverage.nulls", "line.coverage.ci_lo",
                       "line.coverage.ci_hi"]
    a = dict(zip(rows[0], rows[1], strict=True))
    assert a["run"] == "a" and float(a["line.coverage"]) == 0.5
    assert (a["line.coverage.n"], a["line.coverage.nulls"]) == ("1", "1")
    by = render(build_leaderboard(rows_small(), by="language", metrics="n"), "csv")
    assert by.splitlines()[0] == "run,language,n,n.n,n.nulls"


def test_json_is_valid_without_nan() -> None:
    rows = rows_small()
    rows[0]["trajectory"]["auc_coverage"]["line"] = float("nan")
    rows[3]["usage"] = {"input_tokens": float("inf"), "output_tokens": 1, "cost": None}
    text = render(build_leaderboard(rows, ci=True), "json")

    def bad(name: str) -> None:
        raise AssertionError(f"non-finite constant {name} in JSON")

    data = json.loads(text, parse_constant=bad)
    assert data["aggregation"] == "macro"
    cells = data["tables"][0]["rows"][0]["values"]
    assert cells["auc.line"]["value"] == 0.0  # the NaN of r1 left out, r2 is 0
    assert cells["auc.line"]["nulls"] == 1
    exp = json.loads(render(build_exploration(rows), "json"), parse_constant=bad)
    assert [t["name"] for t in exp["tables"]] == ["instances", "distributions"]


# ------------------------------------------------------------------------------ exploration


def _steps(*counts: tuple[int, int, int, int], tools: list[str] | None = None
           ) -> list[dict[str, Any]]:
    """Steps from (viewed files, new files, viewed lines, new lines)."""
    out = []
    for i, (vf, nf, vl, nl) in enumerate(counts, start=1):
        s: dict[str, Any] = {"step": i, "coverage": dict.fromkeys(GRANS, 0.0),
                             "viewed": {"file": vf, "symbol": 0, "span": 0, "line": vl},
                             "new": {"file": nf, "symbol": 0, "span": 0, "line": nl}}
        if tools:
            s["tool"] = tools[i - 1]
        out.append(s)
    return out


def test_instance_metrics_from_step_counts() -> None:
    row = _row("a", "x", line=_part(1, 2, 3, 0.5, 1 / 3, 0.4), file=_part(1, 1, 1, 1, 1, 1),
               language="python", steps=4)
    row["trajectory"]["steps"] = _steps((0, 0, 0, 0), (1, 1, 10, 10), (2, 1, 30, 25),
                                        (1, 0, 10, 0))
    row["trajectory"]["first_gold_step"] = {"file": 2, "line": 3}
    row["trajectory"]["evidence_drop"] = {"line": 4}
    m = instance_metrics(row)
    assert m["steps"] == 4
    assert m["viewed_lines"] == 50 and m["distinct_lines"] == 35 and m["reread_lines"] == 15
    assert m["lines_per_step"] == pytest.approx(12.5)
    assert m["distinct_files"] == 2 and m["idle_steps"] == 1
    assert (m["first_gold_file"], m["first_gold_line"]) == (2, 3)
    assert m["evidence_drop_line"] == 4


def test_exploration_distributions_and_tool_mix() -> None:
    rows = []
    for iid, steps, tools in (("x", [(1, 1, 4, 4), (1, 0, 4, 0)], ["view", "view"]),
                              ("y", [(1, 1, 2, 2), (0, 0, 0, 0), (1, 1, 6, 6)],
                               ["view", "bash", "view"])):
        r = _row("a", iid, line=_part(1, 2, 3, 0.5, 1 / 3, 0.4),
                 file=_part(1, 1, 1, 1, 1, 1), language="python", steps=len(steps))
        r["trajectory"]["steps"] = _steps(*steps, tools=tools)
        r["trajectory"]["first_gold_step"] = {"file": 1, "line": None if iid == "y" else 2}
        rows.append(r)
    rep = build_exploration(rows)
    inst, dist, tools = rep.tables
    assert [r.labels["instance_id"] for r in inst.rows] == ["x", "y"]
    stats = {r.labels["quantity"]: r.cells for r in dist.rows}
    assert stats["steps"]["mean"].value == pytest.approx(2.5)
    assert stats["steps"]["min"].value == 2 and stats["steps"]["max"].value == 3
    pooled = stats["lines/step (all steps)"]  # 4, 4, 2, 0, 6
    assert pooled["n"].value == 5 and pooled["median"].value == pytest.approx(4)
    assert pooled["mean"].value == pytest.approx(3.2)
    assert stats["re-read lines"]["mean"].value == pytest.approx(2.0)  # (4 + 0) / 2
    first_line = stats["1st gold line"]
    assert (first_line["n"].value, first_line["nulls"].value) == (1, 1)
    mix = tools.rows[0].cells
    assert mix["view"].value == pytest.approx(0.8) and mix["bash"].value == pytest.approx(0.2)
    text = render(rep, "table")
    assert "Tool mix" in text and "lines/step (all steps)" in text


# ------------------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def example_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "results.jsonl"
    ex = FIXTURES / "example"
    code = main(["evaluate", "--gold", str(ex / "gold.jsonl"),
                 "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}",
                 "--run", f"agent-b={ex / 'runs' / 'agent-b.jsonl'}",
                 "--repos", str(ex / "repos"), "--out", str(out), "--quiet"])
    assert code == 0
    return out


def test_example_end_to_end_json(example_results: Path, tmp_path: Path) -> None:
    out = tmp_path / "lb.json"
    assert main(["report", str(example_results), "--format", "json", "--out", str(out),
                 "--metrics", "full"]) == 0
    data = orjson.loads(out.read_bytes())
    rows = {r["run"]: r["values"] for r in data["tables"][0]["rows"]}
    # line coverage per instance (read from the rows): a 5/5 and 7/8, b 5/5 and 0/8
    assert rows["agent-a"]["line.coverage"]["value"] == pytest.approx((1 + 7 / 8) / 2)
    assert rows["agent-b"]["line.coverage"]["value"] == pytest.approx(0.5)
    assert rows["agent-a"]["steps"]["value"] == pytest.approx(4.0)  # 5 and 3 steps
    assert rows["agent-a"]["input_tokens"]["value"] == pytest.approx((7700 + 3200) / 2)


def test_example_end_to_end_micro_and_exploration(example_results: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(example_results), "--micro", "--metrics", "line.*",
                 "--format", "md"]) == 0
    md = capsys.readouterr().out
    # agent-a: Σinter 12, Σgold 13, Σpred 42
    assert f"| agent-a | **{12 / 13:.3f}** | **{12 / 42:.3f}** |" in md
    assert "micro averages" in md
    assert main(["report", str(example_results), "--view", "exploration", "--format",
                 "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    a1 = next(r for r in table if r["run"] == "agent-a" and r["instance_id"] ==
              "example__calc-1")
    # steps viewed 0, 1, 35, 8, 0 lines, of which 0, 1, 34, 0, 0 new
    assert (a1["viewed_lines"], a1["distinct_lines"], a1["reread_lines"]) == ("44", "35", "9")
    assert a1["first_gold_file"] == "2"


def test_html_needs_out(example_results: Path) -> None:
    assert main(["report", str(example_results), "--format", "html"]) == 2


# ------------------------------------------------------------------------------ real data


@requires_parity
def test_parity_rows_reproduce_the_reference_aggregate(tmp_path: Path) -> None:
    """The ContextBench evaluator's own aggregate of its rows (micro final metrics, macro
    trajectory metrics, micro EditLoc) is what --micro computes from the same rows."""
    src = PARITY / "expected" / "results.jsonl"
    kept = [ln for ln in src.read_text().splitlines() if "reference_crash" not in ln]
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("\n".join(kept) + "\n")
    expected = json.loads((PARITY / "expected" / "aggregate.json").read_text())
    out = tmp_path / "agg.json"
    assert main(["report", str(rows_file), "--micro", "--format", "json", "--out", str(out),
                 "--metrics", "n,errors,*.coverage,*.precision,editloc.recall,auc.*,"
                              "redundancy.*"]) == 0
    values = json.loads(out.read_text())["tables"][0]["rows"][0]["values"]
    assert values["n"]["value"] == expected["num_valid"] == 42
    assert values["errors"]["value"] == expected["num_total"] - expected["num_valid"]
    for g in GRANS:
        for stat in ("coverage", "precision"):
            assert math.isclose(values[f"{g}.{stat}"]["value"],
                                expected[f"final_{g}"][stat], rel_tol=1e-12)
        assert math.isclose(values[f"auc.{g}"]["value"], expected[f"traj_auc_{g}"],
                            rel_tol=1e-12)
        assert math.isclose(values[f"redundancy.{g}"]["value"],
                            expected[f"traj_redundancy_{g}"], rel_tol=1e-12)
    assert math.isclose(values["editloc.recall"]["value"], expected["editloc"]["recall"],
                        rel_tol=1e-12)


def test_malformed_values_count_as_nulls_without_breaking_the_report() -> None:
    rows = rows_small()[:2]
    rows[0]["final"]["line"]["coverage"] = "0.5"  # text, not a number
    rows[0]["final"]["file"]["intersection"] = None  # counts unusable for micro
    rows[1]["final"] = None
    rows[1]["trajectory"] = {"steps": "none", "redundancy": {"line": True}}
    rep = build_leaderboard(rows, metrics="line.coverage,file.coverage,redundancy.line")
    a = _cells(rep, "a")
    assert a["line.coverage"].value is None and a["line.coverage"].nulls == 2
    assert a["file.coverage"].value == 1.0 and a["file.coverage"].nulls == 1
    assert a["redundancy.line"].value == pytest.approx(0.2)  # the bool is not a number
    micro = _cells(build_leaderboard(rows, metrics="file.coverage", micro=True), "a")
    assert micro["file.coverage"].value is None and micro["file.coverage"].nulls == 2
    exp = build_exploration(rows)
    assert exp.tables[0].rows[1].cells["viewed_lines"].value == 0
    json.loads(render(exp, "json"))


def test_rows_of_two_presets_are_not_pooled() -> None:
    rows = rows_small()[:2]
    other = [dict(r, preset="contextbench") for r in rows]
    rep = build_leaderboard(rows + other, metrics="n")
    assert [r.labels["run"] for r in rep.tables[0].rows] == ["a [strict]", "a [contextbench]"]
    assert rep.meta["preset"] == ["strict", "contextbench"]


def test_patch_gold_is_said() -> None:
    rows = rows_small()
    rows[0]["gold_kind"] = "patch"
    notes = build_leaderboard(rows, metrics="n").notes
    assert any("1 rows are scored against the gold patch" in n for n in notes)
    assert not any("scored against the gold patch" in n
                   for n in build_leaderboard(rows_small()).notes)


# --------------------------------------------------------------------------- a table that fits


def _example_results(tmp_path: Path, name: str = "agent-a") -> Path:
    ex = FIXTURES / "example"
    out = tmp_path / "results.jsonl"
    assert main(["evaluate", "--gold", str(ex / "gold.jsonl"), "--repos", str(ex / "repos"),
                 "--run", f"{name}={ex / 'runs' / 'agent-a.jsonl'}",
                 "--run", f"{name}-b={ex / 'runs' / 'agent-b.jsonl'}",
                 "--out", str(out), "-q"]) == 0
    return out


def test_the_default_leaderboard_fits_a_terminal(tmp_path: Path, capsys) -> None:
    """It was 269 characters wide (28 columns): a terminal wrapped it. The default is a
    compact set; every line of the table and its notes fits 100 columns, with run names of
    up to 18 characters (the run column's width)."""
    out = _example_results(tmp_path, "a-run-name-of-16c")  # and "...-b": 18 characters
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 100, text
    header = text.splitlines()[1]
    assert header.split()[:3] == ["run", "n", "File"] and "EditLoc F1" in header


def _latex_width_pt(tex: str) -> float:
    """An estimate of a tabular's width at \\small (Computer Modern, 9pt: digits and most
    letters about 4.6pt) with \\tabcolsep 4pt: the widest cell of each column, from the
    rendered rows (markup removed), independent of how the renderer lays columns out."""
    import re

    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    head = tex.split(r"\toprule", 1)[1].split(r"\midrule", 1)[0].strip().splitlines()[-1]
    rows = [head, *(ln for ln in body.splitlines() if ln.strip())]
    cells = [[re.sub(r"\\textbf\{([^}]*)\}|\\(\W)", r"\1\2", c).strip()
              for c in row.rstrip("\\ ").split(" & ")] for row in rows]
    widths = [max(len(r[k]) for r in cells if k < len(r)) for k in range(len(cells[0]))]
    return sum(w * 4.6 + 8 for w in widths)


def test_the_default_latex_table_fits_a_paper_page(tmp_path: Path, capsys) -> None:
    out = _example_results(tmp_path)
    assert main(["report", str(out), "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{table}[t]" in tex and r"\resizebox" not in tex
    assert _latex_width_pt(tex) <= 397  # a NeurIPS page; one-column text
    assert main(["report", str(out), "--format", "latex", "--metrics", "contextbench"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{table*}[t]" in tex and r"\resizebox" not in tex
    assert _latex_width_pt(tex) <= 505  # a two-column paper's full width
    assert main(["report", str(out), "--format", "latex", "--metrics", "full"]) == 0
    tex = capsys.readouterr().out
    assert r"\resizebox{\textwidth}{!}" in tex and "graphicx" in tex


def test_the_contextbench_set_is_the_papers_main_table(tmp_path: Path) -> None:
    """Columns of the "Main ContextBench leaderboard" (anonymousUser2026/ContextBench,
    Context-Bench/README.md): coverage and precision at file, symbol, span and EditLoc
    level, #files, #lines, AUC-Cov, Redun., Pass@1."""
    rows = [json.loads(x) for x in _example_results(tmp_path).read_text().splitlines()]
    rep = build_leaderboard(rows, metrics="contextbench")
    assert [c.key for c in rep.tables[0].columns] == [
        "file.coverage", "file.precision", "symbol.coverage", "symbol.precision",
        "span.coverage", "span.precision", "editloc.recall", "editloc.precision",
        "files", "lines", "auc.span", "redundancy.span", "resolved"]
    tex = render(rep, "latex")
    assert r"\multicolumn{2}{c}{File}" in tex and r"\multicolumn{2}{c}{EditLoc}" in tex
    mixed = build_leaderboard(rows, metrics="default,usage,line.*")
    keys = [c.key for c in mixed.tables[0].columns]
    assert keys[:9] == ["n", "file.f1", "symbol.f1", "line.f1", "editloc.f1", "auc.line",
                        "redundancy.line", "resolved", "cost"]
    assert "pareto" in keys and "line.coverage" in keys and len(keys) == len(set(keys))
    from ctxeval.errors import InputError

    with pytest.raises(InputError, match="column sets: default, contextbench"):
        build_leaderboard(rows, metrics="contextbnech")


def test_every_abbreviated_header_is_in_the_legend(tmp_path: Path) -> None:
    """'cost/pass tok', 'tok eff' and the like were unexplained."""
    from ctxeval.analysis.reports.column_sets import ABBREVIATIONS

    rows = [json.loads(x) for x in _example_results(tmp_path).read_text().splitlines()]
    rep = build_leaderboard(rows, metrics="all")
    legend = next(n for n in rep.notes if n.startswith("columns: "))
    for col in rep.tables[0].columns:
        words = [w for w in col.label.split() if w in ABBREVIATIONS]
        assert col.label in ABBREVIATIONS or words, col.label  # something in it explained
        for w in [col.label, *words]:
            if w in ABBREVIATIONS:
                assert f"{w} = " in legend, (col.label, w)
    text = " ".join(render(build_leaderboard(rows), "table").split())
    assert "AUC = area under the per-step coverage curve" in text
    assert "tok eff" not in text  # the legend names only what the table shows
