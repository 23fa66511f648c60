"""Result rows: what a row says about how its instance was read."""

from __future__ import annotations

from ctxeval.evaluation.prepare.preparer import Notes
from ctxeval.evaluation.rows import make_row
from ctxeval.model import GoldInstance, Step, Trajectory

_METRICS = {"num_steps": 1, "final": {}, "trajectory": {"steps": [{"step": 1}]},
            "editloc": None}


def _row(traj: Trajectory, notes: Notes) -> dict:
    gold = GoldInstance("i-1", "o/r", "c" * 40)
    return make_row(gold, traj, "run", "strict", "union", notes, _METRICS, "ok", None)


def test_the_adapters_warnings_reach_the_row_after_the_preparers() -> None:
    traj = Trajectory("i-1", steps=[Step(0)],
                      extra={"read_warnings": ["mcp: 2 results read by the generic reader", 7]})
    row = _row(traj, Notes(warnings=["gold patch: unreadable"]))
    assert row["warnings"] == ["gold patch: unreadable",
                               "mcp: 2 results read by the generic reader"]


def test_a_row_without_warnings_has_no_warnings_key() -> None:
    row = _row(Trajectory("i-1", steps=[Step(0)], extra={"read_warnings": "not a list"}),
               Notes())
    assert "warnings" not in row
