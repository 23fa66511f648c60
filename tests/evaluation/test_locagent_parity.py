"""Preset ``locagent`` against LocAgent's own ``evaluation/eval_metric.py``, number for number.

``fixtures/locagent`` holds cases written for this (duplicated predictions, gold longer than
k, an empty prediction, a missing instance, an id of LocAgent's ``filtered_instances``, a level
without gold, a repeated miss before the hit, a gold that repeats a file, a module and an edit
function, an output for an instance without gold, a perfect prediction) in LocAgent's two gold
spellings, and what LocAgent's functions printed on them (``expected.json``, made by
``benchmarks/locagent_parity.py``). Every number is compared at tolerance 0 with the means of
the ``locagent`` rows rounded as LocAgent rounds them (4 decimals), through the localization
report, both with the repositories (rows scored by the engine) and without them (a
localiser's output keeps the levels that need no repository).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES

from ctxeval import report
from ctxeval.evaluation.pipeline import RunSpec, evaluate
from ctxeval.evaluation.ranking import RankingSettings

CASES = FIXTURES / "locagent"
EXPECTED = json.loads((CASES / "expected.json").read_text())
#: LocAgent's metric names -> the localization report's.
NAMES = {"Acc": "Acc", "Recall": "Recall", "P": "P", "NDCG": "nDCG", "MAP": "MAP"}
GOLD = {"cal_metrics_w_file": "gt_location.jsonl", "cal_metrics_w_dataset": "dataset.jsonl",
        "eval_w_file": "gt_location.jsonl", "evaluate_results": "dataset.jsonl"}
#: eval_w_file's and evaluate_results' own k lists.
TABLE_KS = {"file": (1, 3, 5), "module": (5, 10), "function": (5, 10)}


def _repos(root: Path) -> Path:
    """A snapshot per instance holding every file its gold and outputs name."""
    paths: dict[str, set[str]] = {}
    for name in ("gt_location.jsonl", "dataset.jsonl", "loc_outputs.jsonl"):
        for line in (CASES / name).read_text().splitlines():
            rec = json.loads(line)
            items = [fc["file"] for fc in rec.get("file_changes", [])]
            items += [i.split(":")[0] for key in ("edit_functions", "found_files",
                                                   "found_modules", "found_entities")
                      for i in rec.get(key, [])]
            paths.setdefault(rec["instance_id"], set()).update(items)
    for iid, files in paths.items():
        for f in files:
            target = root / iid / f
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("pass\n")
    return root


def _means(tmp: Path, gold: str, ks: tuple[int, ...], repos: Path | None
           ) -> dict[tuple[str, str, int], float | None]:
    out = tmp / f"{gold}-{'-'.join(map(str, ks))}-{repos is not None}.jsonl"
    evaluate(gold=[CASES / gold], runs=[RunSpec("locagent", [str(CASES / "loc_outputs.jsonl")])],
             repos=repos, out=out, preset="locagent", all_gold=True, progress=False,
             cache_dir=None, ranking=RankingSettings(ks))
    by_k = next(t for t in report(out, view="localization").tables if t.name == "by_k")
    return {(row.labels["level"], row.labels["metric"], int(key[1:])): cell.value
            for row in by_k.rows for key, cell in row.cells.items()}


def _cases() -> list[tuple[str, str, tuple[int, ...], dict[str, float]]]:
    out = []
    for fn in ("cal_metrics_w_file", "cal_metrics_w_dataset"):
        for call in EXPECTED[fn]:
            out.append((fn, call["level"], tuple(call["k"]), call["result"]))
    for fn in ("eval_w_file", "evaluate_results"):
        for level, ks in TABLE_KS.items():
            got = {key.split(".", 1)[1]: v for key, v in EXPECTED[fn].items()
                   if key.startswith(level + ".")}
            out.append((fn, level, ks, got))
    return out


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repos(tmp_path_factory.mktemp("locagent-repos"))


@pytest.mark.parametrize("with_repos", [True, False], ids=["repos", "no-repos"])
@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_locagent_numbers(case: tuple[str, str, tuple[int, ...], dict[str, float]],
                          with_repos: bool, repos: Path, tmp_path: Path) -> None:
    fn, level, ks, expected = case
    means = _means(tmp_path, GOLD[fn], ks, repos if with_repos else None)
    assert expected, "LocAgent printed nothing for this case"
    for name, value in expected.items():
        metric, _, k = name.partition("@")
        got = means[(level, NAMES[metric], int(k))]
        assert got is not None, (fn, level, name)
        assert round(got, 4) == value, (fn, level, ks, name, got)


def test_the_cases_exercise_the_quirks() -> None:
    """The expected numbers differ from the IR definitions where the cases say they should:
    Acc@k falls as k grows (a repeated hit counts, the gold is cut at k), and Recall depends
    on the largest k asked for."""
    calls: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {
        (c["level"], tuple(c["k"])): c["result"] for c in EXPECTED["cal_metrics_w_file"]}
    file_135 = calls[("file", (1, 3, 5))]
    assert file_135["Acc@3"] < file_135["Acc@1"]
    # toy__loc-2 has four gold functions: cut at max_k 3 they count three
    assert calls[("function", (2, 3))]["Recall@3"] \
        > calls[("function", (1, 3, 5, 10))]["Recall@3"]
