"""ctxeval.analysis.tokens: cost of pass, token efficiency and Pareto ranks, checked by hand."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest

from conftest import CORPUS, requires_shared
from ctxeval.analysis.tokens import (
    cost_metrics_by_run,
    get_path,
    pareto_front,
    pareto_ranks,
    run_cost_metrics,
)


def _row(score: float | None, usage: dict[str, Any] | None, *, status: str = "ok",
         resolved: bool | None = None, run: str = "r") -> dict[str, Any]:
    return {"instance_id": f"i{id(usage)}", "run": run, "status": status,
            "final": {"line": {"f1": score}}, "usage": usage, "resolved": resolved}


def _usage(inp: float | None, out: float | None, cost: float | None = None,
           calls: int | None = None) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "cost": cost, "api_calls": calls}


ROWS = [
    _row(0.8, _usage(1000, 100, 0.5, 4), resolved=True),
    _row(0.6, _usage(3000, 300, 1.5, 6), resolved=False),
    _row(0.0, None, status="agent_failure"),
    {"instance_id": "bad", "run": "r", "status": "error", "error": {"kind": "missing_repo"}},
]


def test_cost_metrics_by_hand() -> None:
    m = run_cost_metrics(ROWS)
    assert m["threshold"] == 0.7 and m["pass_basis"] == "score>=threshold"
    assert (m["n"], m["n_errors"], m["agent_failures"], m["n_scored"]) == (3, 1, 1, 3)
    assert m["mean_score"] == pytest.approx(1.4 / 3)
    # only 0.8 >= 0.7 passes; the failure is a known fail
    assert (m["num_passing"], m["n_pass_known"]) == (1, 3)
    assert m["pass_rate"] == pytest.approx(1 / 3)
    # 100 + 300 output tokens (the failure recorded none) for one pass
    assert m["total_output_tokens"] == 400 and m["cost_of_pass_tokens"] == 400
    assert m["cost_of_pass_cost"] == pytest.approx(2.0)
    assert m["no_pass"] is False
    assert m["mean_input_tokens"] == 2000 and m["n_input_tokens"] == 2
    assert m["mean_api_calls"] == 5
    assert m["usage_complete"] is False
    # mean(score) * (100 / 2000) ** 0.1 = 0.4667 * 0.05 ** 0.1; 0.05 ** 0.1 = e^(-0.29957)
    assert m["token_efficiency"] == pytest.approx(1.4 / 3 * math.exp(0.1 * math.log(0.05)))
    assert m["token_efficiency"] == pytest.approx(0.345862, abs=1e-6)
    # mean(score) / (2000 / 1000)
    assert m["token_efficiency_raw"] == pytest.approx(1.4 / 6)


def test_no_pass_is_null_with_flag_and_valid_json() -> None:
    m = run_cost_metrics(ROWS, threshold=0.9)
    assert m["num_passing"] == 0 and m["pass_rate"] == 0.0
    assert m["cost_of_pass_tokens"] is None and m["cost_of_pass_cost"] is None
    assert m["no_pass"] is True
    text = orjson.dumps(m).decode()
    assert "Infinity" not in text and "NaN" not in text
    json.loads(text)


def test_pass_by_resolved() -> None:
    m = run_cost_metrics(ROWS, use_resolved=True)
    assert m["threshold"] is None and m["pass_basis"] == "resolved"
    # resolved: True, False, null (the failure: outcome unknown, left out)
    assert (m["num_passing"], m["n_pass_known"], m["pass_rate"]) == (1, 2, 0.5)
    assert m["cost_of_pass_tokens"] == 400


def test_undefined_values_are_flags_not_infinities() -> None:
    zero = run_cost_metrics([_row(0.5, _usage(0, 0))])
    assert zero["zero_input_tokens"] is True and zero["token_efficiency"] is None
    assert zero["token_efficiency_raw"] is None
    nothing = run_cost_metrics([_row(None, None)])
    assert nothing["mean_score"] is None and nothing["pass_rate"] is None
    assert nothing["no_pass"] is False  # no outcome known: undefined, not "no pass"
    assert nothing["token_efficiency"] is None and nothing["mean_input_tokens"] is None
    assert run_cost_metrics([])["n"] == 0


def test_threshold_is_inclusive_and_score_field_selectable() -> None:
    rows = [{"run": "r", "status": "ok", "editloc": {"f1": 0.7}, "usage": _usage(10, 5)}]
    assert run_cost_metrics(rows, score_field="editloc.f1")["num_passing"] == 1
    assert run_cost_metrics(rows, score_field="editloc.f1", threshold=0.71)["num_passing"] == 0


def test_rows_of_several_runs_are_refused_and_grouped() -> None:
    rows = [_row(1.0, _usage(100, 10), run="a"), _row(0.0, _usage(100, 10), run="b")]
    with pytest.raises(ValueError, match="several runs"):
        run_cost_metrics(rows)
    by = cost_metrics_by_run(rows)
    assert list(by) == ["a", "b"]
    assert by["a"]["cost_of_pass_tokens"] == 10 and by["b"]["no_pass"] is True


def test_get_path() -> None:
    row = {"final": {"line": {"f1": 0.5}}, "editloc": None}
    assert get_path(row, "final.line.f1") == 0.5
    assert get_path(row, "editloc.f1") is None
    assert get_path(row, "final.nope", default=-1) == -1


def test_pareto_ranks_hand_made() -> None:
    pts = {"A": (0.9, 10.0), "B": (0.8, 5.0), "C": (0.7, 20.0), "D": (0.85, 8.0),
           "E": (None, 3.0), "F": (0.9, 10.0)}
    # C is beaten on both by A, B, D and F; A and F tie (neither strictly better);
    # D is not beaten by A/F (cost 10 > 8) nor by B (quality 0.8 < 0.85)
    assert pareto_ranks(pts) == {"A": 1, "B": 1, "C": 5, "D": 1, "E": None, "F": 1}
    assert pareto_front(pts) == ["A", "B", "D", "F"]
    # strictly better on both: equal cost is not better
    assert pareto_ranks({"x": (0.5, 1.0), "y": (0.9, 1.0)}) == {"x": 1, "y": 1}
    assert pareto_ranks({"x": (0.5, 2.0), "y": (0.9, 1.0)}) == {"x": 2, "y": 1}


@requires_shared
def test_cost_of_pass_on_real_mini_swe_agent_runs() -> None:
    """The three mini-swe-agent 1.15 (gemini-3-pro) runs of the corpus, with their recorded
    cost (``info.model_stats``) and their SWE-bench harness verdicts: 0.2754472 (requests,
    unresolved), 0.2305142 (astropy, resolved), 0.1337308 (django, resolved) dollars."""
    rows = []
    for inst in ("psf__requests-2317", "astropy__astropy-12907", "django__django-11099"):
        traj = json.loads((CORPUS / inst / "trajs" /
                           "mini-swe-agent_1.15.0_gemini3pro.traj.json").read_text())
        report = json.loads((CORPUS / "results" / "mini-swe-agent_gemini3pro" /
                             f"{inst}.report.json").read_text())
        stats = traj["info"]["model_stats"]
        rows.append({"instance_id": inst, "run": "mini-swe-agent", "status": "ok",
                     "usage": {"input_tokens": None, "output_tokens": None,
                               "cost": stats["instance_cost"], "api_calls": stats["api_calls"]},
                     "resolved": report["resolved"]})
    m = run_cost_metrics(rows, use_resolved=True)
    assert (m["num_passing"], m["n_pass_known"]) == (2, 3)
    assert m["total_cost"] == pytest.approx(0.6396922)
    assert m["cost_of_pass_cost"] == pytest.approx(0.3198461)
    assert m["mean_api_calls"] == pytest.approx((33 + 20 + 21) / 3)
    # no token counts recorded at run level: undefined, and not mistaken for "no pass"
    assert m["cost_of_pass_tokens"] is None and m["no_pass"] is False
    assert m["token_efficiency"] is None
