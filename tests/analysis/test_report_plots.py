"""Plot series checked by hand (no matplotlib needed) and plot files checked as PNG and SVG."""

from __future__ import annotations

import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.analysis.reports import CostOptions
from ctxeval.analysis.reports.plots import by_language, cost_points, coverage_curve, coverage_curves
from ctxeval.cli import main

GRANS = ("file", "symbol", "span", "line")


def _row(run: str, covs: list[float | None], *, final_cov: float | None = 0.0,
         language: str = "python", score: float = 0.5,
         usage: dict[str, Any] | None = None) -> dict[str, Any]:
    steps = [{"step": i, "coverage": {**dict.fromkeys(GRANS, 0.0), "line": c}}
             for i, c in enumerate(covs, start=1)]
    return {"instance_id": f"i{len(covs)}", "run": run, "status": "ok", "language": language,
            "num_steps": len(covs),
            "final": {g: {"coverage": final_cov, "precision": 0.0, "f1": score,
                          "intersection": 0, "gold_size": 1, "pred_size": 1} for g in GRANS},
            "trajectory": {"steps": steps}, "usage": usage}


def test_coverage_curve_carries_the_last_value_forward() -> None:
    rows = [_row("a", [0.2, 0.5]), _row("a", [1.0])]
    assert coverage_curve(rows, "line") == pytest.approx([0.6, 0.75])


def test_coverage_curve_zero_steps_and_null_gold() -> None:
    rows = [_row("a", [0.2, 0.5]), _row("a", [1.0]), _row("a", []),
            _row("a", [None, None]), _row("a", [], final_cov=None)]
    # the trajectory without steps counts 0; the null-coverage ones are left out
    assert coverage_curve(rows, "line") == pytest.approx([1.2 / 3, 1.5 / 3])
    assert coverage_curve([_row("a", [])], "line") == []


def test_coverage_curves_per_run_skip_errors() -> None:
    rows = [_row("a", [0.5]), _row("b", [0.25, 1.0]),
            {"instance_id": "e", "run": "b", "status": "error"}]
    assert coverage_curves(rows, "line") == {"a": [0.5], "b": [0.25, 1.0]}


def test_cost_points_and_language_groups() -> None:
    rows = [_row("a", [1.0], score=0.8, usage={"input_tokens": 100, "output_tokens": 1,
                                                "cost": 2.0}),
            _row("b", [1.0], score=0.4, usage={"input_tokens": 50, "output_tokens": 1,
                                                "cost": 1.0}),
            _row("c", [1.0], score=0.3, usage={"input_tokens": 80, "output_tokens": 1,
                                                "cost": 1.5}, language="go")]
    pts, key = cost_points(rows, CostOptions())
    assert key == "cost"
    got = {p.run: (p.quality, p.cost, p.rank) for p in pts}
    # c is beaten by b on both score (0.4 > 0.3) and cost (1.0 < 1.5)
    assert got == {"a": (0.8, 2.0, 1), "b": (0.4, 1.0, 1), "c": (0.3, 1.5, 2)}
    assert by_language(rows, "line.f1") == {"python": {"a": 0.8, "b": 0.4},
                                            "go": {"c": 0.3}}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plots") / "results.jsonl"
    ex = FIXTURES / "example"
    assert main(["evaluate", "--gold", str(ex / "gold.jsonl"),
                 "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}",
                 "--run", f"agent-b={ex / 'runs' / 'agent-b.jsonl'}",
                 "--repos", str(ex / "repos"), "--out", str(out), "--quiet"]) == 0
    return out


def test_plot_files_are_valid_png_and_svg(results: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "plots"
    assert main(["report", str(results), "--plots", str(out), "--out",
                 str(tmp_path / "t.txt")]) == 0
    # the example's rows record resolution and carry ranked metrics: the outcome view's two
    # figures and the metrics against k as well
    names = {"coverage_by_step", "quality_vs_cost", "by_language", "outcome_by_bin",
             "auroc_by_metric", "ranking_by_k"}
    assert {p.name for p in out.iterdir()} == {f"{n}.{e}" for n in names for e in ("png", "svg")}
    for n in names:
        png = (out / f"{n}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
        width, height = struct.unpack(">II", png[16:24])
        assert width > 200 and height > 200
        root = ET.parse(out / f"{n}.svg").getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.find(".//{http://www.w3.org/2000/svg}path") is not None


def test_missing_matplotlib_is_a_clear_error(results: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    assert main(["report", str(results), "--plots", str(tmp_path / "p")]) == 1
    assert "pip install 'ctxeval[plot]'" in capsys.readouterr().err
