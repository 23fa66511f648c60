"""LocAgent's published SWE-bench Lite table from its released outputs, through the
``locagent`` preset: all seven numbers with the gold the outputs carry, the file level with
SWE-bench Lite's gold patches (no repository is needed for either; the module and function
levels of the patches need the repositories, see docs/presets.md).

The outputs are not in this project or in ``../shared``: set ``CTXEVAL_LOCAGENT_OUTPUTS`` to
``evaluation/loc_output/locagent/claude_3-5/loc_outputs.jsonl`` of a ``gersteinlab/LocAgent``
checkout to run these; they are skipped otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import CORPUS

from ctxeval import report
from ctxeval.evaluation.pipeline import RunSpec, evaluate

OUTPUTS = os.environ.get("CTXEVAL_LOCAGENT_OUTPUTS")
pytestmark = pytest.mark.skipif(not OUTPUTS or not Path(OUTPUTS).is_file(),
                                reason="CTXEVAL_LOCAGENT_OUTPUTS is not set")

#: LocAgent's evaluation/run_evaluation.ipynb on these outputs (evaluate_results).
PUBLISHED = {"file.acc@1": 0.7774, "file.acc@3": 0.9197, "file.acc@5": 0.9416,
             "module.acc@5": 0.865, "module.acc@10": 0.8759,
             "function.acc@5": 0.7336, "function.acc@10": 0.7737}


def _table(gold: Path, tmp: Path) -> dict[str, tuple[float | None, int]]:
    out = tmp / "rows.jsonl"
    evaluate(gold=[gold], runs=[RunSpec("locagent", [str(OUTPUTS)])], repos=None, out=out,
             preset="locagent", progress=False, cache_dir=None)
    paper = report(out, view="localization").tables[0]
    [row] = paper.rows
    return {key: (row.cells[key].value, row.cells[key].n) for key in PUBLISHED}


def test_the_published_table_from_the_outputs_own_gold(tmp_path: Path) -> None:
    got = _table(Path(str(OUTPUTS)), tmp_path)
    for key, value in PUBLISHED.items():
        mean, n = got[key]
        assert n == 274 and mean is not None and round(mean, 4) == value, key


def test_the_file_level_from_swe_bench_lite_patches(tmp_path: Path) -> None:
    lite = CORPUS / "swe-bench" / "swe-bench-lite-test.json"
    if not lite.is_file():
        pytest.skip("../shared/corpus is absent")
    got = _table(lite, tmp_path)
    for key in ("file.acc@1", "file.acc@3", "file.acc@5"):
        mean, n = got[key]
        assert n == 274 and mean is not None and round(mean, 4) == PUBLISHED[key], key
