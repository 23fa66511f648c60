"""Preset ``contextbench`` against the published ContextBench evaluator, number for number.

The parity suite (``shared/parity``, see its MANIFEST.md) pins down what the reference evaluator
wrote for 42 trajectory files over 7 toy repositories. Every file of ``trajs_index.json`` is
evaluated here through the public Python API with ``preset="contextbench"`` and compared with
``expected/results.jsonl`` row by row (integers exact, ratios bit-for-bit), error rows on their
kind, reference crashes on "no crash, an unreadable input and an error row", and
``expected/aggregate*.json`` with our rows aggregated the reference's way.

The small tests at the end pin the preparer's reference rules on hand-made repositories.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FIXTURES, PARITY, requires_parity

from ctxeval import _core
from ctxeval.errors import AdapterError, InstanceError
from ctxeval.evaluation.pipeline import Evaluator, RunSpec, Summary
from ctxeval.evaluation.prepare.contextbench import (
    CbFileTable,
    ContextBenchPreparer,
    resolve_repo_relpath,
)
from ctxeval.model import GoldInstance, Step, SymbolRef, Trajectory, View
from ctxeval.reading.adapters import ReadOptions, cb_agentless, openhands
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.gold import load_gold
from ctxeval.truth.repo import RepoCache
from ctxeval.truth.symbols import extract

GRANS = ("file", "symbol", "span", "line")
SCORE_KEYS = ("coverage", "precision", "intersection", "gold_size", "pred_size")
EDITLOC_KEYS = ("recall", "precision", "intersection", "gold_size", "pred_size")
# The bar is 1e-9; the reference's operations are reproduced in order, so we ask for
# the same doubles.
TOL = 0.0


def _index() -> list[dict[str, Any]]:
    p = PARITY / "trajs_index.json"
    return json.loads(p.read_text())["trajectories"] if p.is_file() else []


@cache
def _expected() -> dict[str, list[dict[str, Any]]]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for line in (PARITY / "expected" / "results.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            by_file.setdefault(row["pred_file"], []).append(row)
    for rows in by_file.values():
        rows.sort(key=lambda r: r.get("out_line", 0))
    return by_file


@cache
def _ours() -> dict[str, tuple[list[dict[str, Any]], Summary]]:
    """Our rows for every trajectory file, one run per file like the reference's processes."""
    gold = load_gold([str(PARITY / "gold.jsonl")])
    ev = Evaluator(gold, RepoCache(PARITY / "repos"), preset="contextbench")
    if not isinstance(ev.preparer, ContextBenchPreparer):
        ev.preparer = ContextBenchPreparer(ev.symbols, "contextbench", "declared")
    out = {}
    for t in _index():
        summary = Summary()
        rows = list(ev.run(RunSpec("parity", [str(PARITY / t["pred_file"])]), summary))
        out[t["pred_file"]] = (rows, summary)
    return out


def _diff(ours: Any, ref: Any, where: str, out: list[str]) -> None:
    if isinstance(ref, float) or isinstance(ours, float):
        if not isinstance(ours, (int, float)) or isinstance(ours, bool) \
                or abs(ours - ref) > TOL:
            out.append(f"{where}: ours {ours!r}, reference {ref!r}")
    elif ours != ref or type(ours) is not type(ref):
        out.append(f"{where}: ours {ours!r}, reference {ref!r}")


def compare_row(ours: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    """Differences between one of our scored rows and the reference's, on the reference's
    keys (our rows carry more keys; those are ignored)."""
    out: list[str] = []
    if ours.get("status") == "error":
        return [f"ours is an error row: {ours.get('error')}"]
    _diff(ours.get("instance_id"), ref["instance_id"], "instance_id", out)
    _diff(ours.get("num_steps"), ref["num_steps"], "num_steps", out)
    for g in GRANS:
        for k in SCORE_KEYS:
            _diff(ours["final"][g][k], ref["final"][g][k], f"final.{g}.{k}", out)
    rs, os_ = ref["trajectory"]["steps"], ours["trajectory"]["steps"]
    if len(rs) != len(os_):
        out.append(f"trajectory.steps: {len(os_)} steps, reference {len(rs)}")
    for i, (o, r) in enumerate(zip(os_, rs, strict=False)):
        _diff(o["step"], r["step"], f"trajectory.steps[{i}].step", out)
        for g in GRANS:
            _diff(o["coverage"][g], r["coverage"][g], f"trajectory.steps[{i}].coverage.{g}", out)
    for key in ("auc_coverage", "redundancy"):
        for g in GRANS:
            _diff(ours["trajectory"][key][g], ref["trajectory"][key][g],
                  f"trajectory.{key}.{g}", out)
    if "editloc" not in ref:
        if ours.get("editloc") is not None:
            out.append("editloc: ours present, reference absent")
    elif ours.get("editloc") is None:
        out.append("editloc: ours absent")
    else:
        for k in EDITLOC_KEYS:
            _diff(ours["editloc"][k], ref["editloc"][k], f"editloc.{k}", out)
    return out


def _case_id(t: dict[str, Any]) -> str:
    return t["pred_file"].removeprefix("trajs/")


@requires_parity
@pytest.mark.parametrize("traj", _index(), ids=_case_id)
def test_file_reproduces_reference(traj: dict[str, Any]) -> None:
    ref_rows = _expected()[traj["pred_file"]]
    rows, summary = _ours()[traj["pred_file"]]
    if "reference_crash" in ref_rows[0]:
        # The reference raised and wrote nothing. We do not crash: the input is reported as
        # unreadable and the instance named by the file gets an error row.
        assert [p.path for p in summary.unreadable] == [str(PARITY / traj["pred_file"])]
        assert len(rows) == 1 and rows[0]["status"] == "error"
        assert rows[0]["error"]["kind"] == "no_trajectory"
        assert rows[0]["instance_id"] == traj["instances"][0]
        return
    assert not summary.unreadable
    assert len(rows) == len(ref_rows)
    for ours, ref in zip(rows, ref_rows, strict=True):
        if "error" in ref:
            assert ours["status"] == "error", ours
            assert ours["error"]["kind"] == ref["error"]
            assert ours["instance_id"] == ref["instance_id"]
        else:
            assert compare_row(ours, ref) == [], f"{traj['pred_file']}:{ref['out_line']}"


@requires_parity
def test_whole_suite_counts() -> None:
    """All 46 expected rows are accounted for: 42 scored and 2 error rows matched, 2 crashes."""
    matched = errors = crashes = 0
    problems: list[str] = []
    for t in _index():
        ref_rows = _expected()[t["pred_file"]]
        rows, _ = _ours()[t["pred_file"]]
        if "reference_crash" in ref_rows[0]:
            crashes += len(rows) == 1 and rows[0]["status"] == "error"
            continue
        if len(rows) != len(ref_rows):
            problems.append(f"{t['pred_file']}: {len(rows)} rows, reference {len(ref_rows)}")
            continue
        for ours, ref in zip(rows, ref_rows, strict=True):
            if "error" in ref:
                errors += ours.get("status") == "error" and ours["error"]["kind"] == ref["error"]
            elif diffs := compare_row(ours, ref):
                problems.append(f"{t['pred_file']}:{ref['out_line']}: {diffs[:3]}")
            else:
                matched += 1
    assert problems == []
    assert (matched, errors, crashes) == (42, 2, 2)


def aggregate_like_reference(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference's ``aggregate_results`` on our rows: micro final metrics and EditLoc
    (ratios from :func:`_core.score` with the preset's conventions), macro trajectory metrics,
    error rows excluded from everything but ``num_total``."""
    valid = [r for r in rows if r.get("status") != "error"]
    agg: dict[str, Any] = {"num_valid": len(valid), "num_total": len(rows)}
    for g in GRANS:
        sums = [sum(r["final"][g][k] for r in valid)
                for k in ("intersection", "gold_size", "pred_size")]
        s = _core.score(*sums, preset="contextbench")
        agg[f"final_{g}"] = {"coverage": s["coverage"], "precision": s["precision"]}
    for g in GRANS:
        agg[f"traj_auc_{g}"] = sum(r["trajectory"]["auc_coverage"][g] for r in valid) / len(valid)
        agg[f"traj_redundancy_{g}"] = (sum(r["trajectory"]["redundancy"][g] for r in valid)
                                       / len(valid))
    edits = [r["editloc"] for r in valid if r.get("editloc") is not None]
    if edits:
        s = _core.score(*(sum(e[k] for e in edits)
                          for k in ("intersection", "gold_size", "pred_size")),
                        preset="contextbench")
        agg["editloc"] = {"recall": s["coverage"], "precision": s["precision"]}
    return agg


def _rows_like_reference(formats: set[str] | None = None) -> list[dict[str, Any]]:
    """Our rows for the files on which the reference wrote rows (crashes left out)."""
    out: list[dict[str, Any]] = []
    for t in _index():
        if formats is not None and t["format"] not in formats:
            continue
        if "reference_crash" in _expected()[t["pred_file"]][0]:
            continue
        out.extend(_ours()[t["pred_file"]][0])
    return out


def _assert_same_aggregate(ours: dict[str, Any], ref: dict[str, Any]) -> None:
    assert set(ours) == set(ref)
    for key, value in ref.items():
        if isinstance(value, dict):
            for k, v in value.items():
                assert abs(ours[key][k] - v) <= TOL, (key, k, ours[key][k], v)
        elif isinstance(value, float):
            assert abs(ours[key] - value) <= TOL, (key, ours[key], value)
        else:
            assert ours[key] == value, key


@requires_parity
def test_aggregate_matches_reference() -> None:
    ref = json.loads((PARITY / "expected" / "aggregate.json").read_text())
    ours = aggregate_like_reference(_rows_like_reference())
    assert (ours["num_valid"], ours["num_total"]) == (42, 44)
    _assert_same_aggregate(ours, ref)


@requires_parity
def test_aggregate_by_format_matches_reference() -> None:
    ref = json.loads((PARITY / "expected" / "aggregate_by_format.json").read_text())
    assert set(ref) == {t["format"] for t in _index()}
    for fmt, expected in ref.items():
        _assert_same_aggregate(aggregate_like_reference(_rows_like_reference({fmt})), expected)


# --- the preparer's reference rules on hand-made checkouts ----------------------------------


def _snapshot(tmp_path: Path, files: dict[str, bytes]):
    root = tmp_path / "repos" / "demo"
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    cache_ = RepoCache(tmp_path / "repos")
    return cache_.open(instance_id="x", repo="toy/demo", commit=None)


PY = b"class A:\n    def run(self):\n        return 1\n\n\ndef helper():\n    return 2\n"


def test_resolution_strips_leading_components_until_a_file(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, {"pkg/mod.py": PY, "pkg/sub/x.py": b""})
    table = CbFileTable(snap, SymbolExtractor(), {})
    assert resolve_repo_relpath(table, "/testbed/pkg/mod.py") == "pkg/mod.py"
    assert resolve_repo_relpath(table, "/workspace/demo/pkg/mod.py") == "pkg/mod.py"
    assert resolve_repo_relpath(table, " './pkg/mod.py' ") == "pkg/mod.py"
    assert resolve_repo_relpath(table, "..\\pkg\\sub\\x.py") == "pkg/sub/x.py"
    assert resolve_repo_relpath(table, "pkg") is None  # a directory is not a file
    assert resolve_repo_relpath(table, "other/missing.py") is None
    assert resolve_repo_relpath(table, "") is None


def _gold(context: list[View], patch: str | None = None) -> GoldInstance:
    return GoldInstance("x", "toy/demo", None, context=context, patch=patch)


def _prepare(tmp_path: Path, traj: Trajectory, gold: GoldInstance):
    snap = _snapshot(tmp_path, {"pkg/mod.py": PY})
    prep = ContextBenchPreparer(SymbolExtractor())
    inst, notes = prep.prepare(gold, traj, snap)
    return inst, notes, _core.evaluate_instance(inst, "contextbench")


def test_unresolvable_final_is_no_context_extracted(tmp_path: Path) -> None:
    traj = Trajectory("x", steps=[Step(0, views=[View("pkg/mod.py", 1, 3)])],
                      final_context=[View("/elsewhere/nothing.py", 1, 2)])
    with pytest.raises(InstanceError) as exc:
        _prepare(tmp_path, traj, _gold([View("pkg/mod.py", 1, 3)]))
    assert exc.value.kind == "no_context_extracted"


def test_named_symbols_replace_overlap_and_missing_gold_file_counts(tmp_path: Path) -> None:
    # Final context: lines 6-7 (helper) but names 'A.run' -> run only (by the part after the
    # dot), so the symbol set is {run}, not {helper}. Gold: lines 1-3 of mod.py (class A and
    # run) plus a file missing from the checkout, which still counts at file and line level.
    traj = Trajectory("x", steps=[], final_context=[View("/testbed/pkg/mod.py", 6, 7)],
                      final_symbols=[SymbolRef("pkg/mod.py", "A.run")],
                      model_patch=None)
    gold = _gold([View("pkg/mod.py", 1, 3), View("pkg/gone.py", 1, 4)],
                 patch="--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -2,2 +2,2 @@\n"
                       "-    def run(self):\n+    def run(self) -> int:\n         return 1\n")
    _, notes, res = _prepare(tmp_path, traj, gold)
    assert notes.gold_missing_files == ["pkg/gone.py"]
    f = res["final"]
    assert (f["file"]["intersection"], f["file"]["gold_size"], f["file"]["pred_size"]) \
        == (1, 2, 1)
    assert (f["symbol"]["intersection"], f["symbol"]["gold_size"], f["symbol"]["pred_size"]) \
        == (1, 2, 1)
    assert (f["line"]["intersection"], f["line"]["gold_size"], f["line"]["pred_size"]) \
        == (0, 7, 2)
    # No model patch: the gold patch's removed line 2 is the prediction, inside gold 1-3.
    e = res["editloc"]
    assert (e["recall"], e["intersection"], e["gold_size"], e["pred_size"]) == (1.0, 1, 7, 1)
    assert res["num_steps"] == 1  # no steps: the final context is the only step


def test_step_files_come_from_the_listed_files(tmp_path: Path) -> None:
    # cb_step_files: the step lists no file although it has a span -> file level 0 for it.
    traj = Trajectory("x", steps=[Step(0, views=[View("pkg/mod.py", 6, 7)])],
                      final_context=[View("pkg/mod.py", None, None)],
                      extra={"cb_step_files": [[]]})
    _, _, res = _prepare(tmp_path, traj, _gold([View("pkg/mod.py", 6, 7)]))
    assert res["trajectory"]["steps"][0]["coverage"]["file"] == 0.0
    assert res["trajectory"]["steps"][0]["coverage"]["line"] == 1.0
    assert res["final"]["line"]["pred_size"] == 0 and res["final"]["line"]["precision"] == 1.0


# --- the Agentless _traj.json adapter -------------------------------------------------------


@requires_parity
def test_agentless_traj_contextbench_reading() -> None:
    path = PARITY / "trajs/toy__py_ledger-2/t3/toy__py_ledger-2_traj.json"
    assert cb_agentless.detect(path, path.read_bytes()[:65536])
    [t] = cb_agentless.read(path, ReadOptions(preset="contextbench"))
    assert t.instance_id == "toy__py_ledger-2"
    # 3_final_combined_files, sorted; spans from sample 1 (sample 0 has no line numbers);
    # 'line: 234' and 'line: 235' merge; config.json's span file is listed, so no cb_*_files.
    assert [(v.file, v.start_line, v.end_line) for v in t.final_context] == [
        ("ledger/report.py", 234, 235), ("ledger/report.py", 307, 311),
        ("config.json", 5, 5), ("ledger/models.py", None, None)]
    assert sorted((s.file, s.name) for s in t.final_symbols) == [
        ("config.json", "report.width"), ("ledger/models.py", "Account.balance"),
        ("ledger/report.py", "ReportBuilder"), ("ledger/report.py", "ReportBuilder.render"),
        ("ledger/report.py", "build_default")]
    assert len(t.steps) == 1 and t.steps[0].views == t.final_context
    assert t.model_patch is not None and t.model_patch.startswith("diff --git a/ledger/report.py")


@requires_parity
def test_agentless_traj_swapped_lines_and_fallback_files() -> None:
    [t] = cb_agentless.read(PARITY / "trajs/toy__js_queue-5/t1/toy__js_queue-5_traj.json",
                            ReadOptions(preset="contextbench"))
    spans = [(v.file, v.start_line, v.end_line) for v in t.final_context if v.start_line]
    assert all(a <= b for _, a, b in spans)
    [t6] = cb_agentless.read(PARITY / "trajs/toy__ts_shapes-6/t3/toy__ts_shapes-6_traj.json",
                             ReadOptions(preset="contextbench"))
    raw = json.loads((PARITY / "trajs/toy__ts_shapes-6/t3/toy__ts_shapes-6_traj.json")
                     .read_text())
    assert "3_final_combined_files" not in raw
    assert {v.file for v in t6.final_context} >= set(raw["2_embedding_selected_files"])


def test_agentless_traj_strict_reading(tmp_path: Path) -> None:
    data = {
        "instance_id": "o__r-1",
        "1_model_selected_files": ["a.py"],
        "2_embedding_selected_files": ["b.py", "a.py"],
        "4_related_elements": {"a.py": ["class: A\nfunction: A.f"]},
        "5_sampled_edit_locs_and_patches": [
            {"edit_locs": {"a.py": ["function: A.f\nlines: 9-4"]}, "patches": [""]},
            {"edit_locs": {"b.py": ["line: 3", "line: 0"]}, "patches": [""]},
        ],
        "6_final_selected_patch": "",
    }
    path = tmp_path / "o__r-1_traj.json"
    path.write_text(json.dumps(data))
    assert cb_agentless.detect(path, path.read_bytes())
    [t] = cb_agentless.read(path, ReadOptions())
    assert t.instance_id == "o__r-1" and t.model_patch is None
    # No 3_final_combined_files: 1 and 2 together; every sample's lines; reversed swapped;
    # line 0 dropped.
    assert [(v.file, v.start_line, v.end_line) for v in t.final_context] == [
        ("a.py", None, None), ("b.py", None, None), ("a.py", 4, 9), ("b.py", 3, 3)]
    assert [(s.file, s.name) for s in t.final_symbols] == [("a.py", "A"), ("a.py", "A.f")]
    # Under contextbench the same file reads differently: first sample with lines only,
    # files from 2_embedding_selected_files, spans not adding files.
    [c] = cb_agentless.read(path, ReadOptions(preset="contextbench"))
    assert [(v.file, v.start_line, v.end_line) for v in c.final_context] == [
        ("a.py", 4, 9), ("b.py", None, None)]
    assert c.extra.get("cb_final_files") is None


@requires_parity
def test_cli_contextbench_preset_writes_the_reference_row(tmp_path: Path) -> None:
    """The command line gives the same row as the API (agentless-traj detected by itself)."""
    pred = "trajs/toy__java_bank-9/t1/toy__java_bank-9_traj.json"
    out = tmp_path / "rows.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "ctxeval.cli", "evaluate", "--gold", str(PARITY / "gold.jsonl"),
         "--pred", str(PARITY / pred), "--repos", str(PARITY / "repos"),
         "--preset", "contextbench", "--out", str(out), "-q"],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    [ref] = _expected()[pred]
    assert len(rows) == 1 and compare_row(rows[0], ref) == []
    # details.jsonl: hits are both Ledger.transfer overloads, totalBalance and Account.deposit;
    # the nested Audit class and its constructor (same name) are predicted but not gold.
    assert (rows[0]["final"]["symbol"]["intersection"], rows[0]["final"]["symbol"]["pred_size"]) \
        == (4, 6)


# --- OpenHands output.jsonl under preset contextbench ----------------------------------------


def _oh_file(tmp_path: Path, records: list[Any]) -> Path:
    p = tmp_path / "output.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return p


def test_openhands_contextbench_reading(tmp_path: Path) -> None:
    history = [
        {"action": "read", "args": {"path": "/testbed/a.py", "view_range": [5, 9]}},
        {"action": "read", "args": {"path": "/workspace/r/b.py", "view_range": [1, -1],
                                    "start": 0, "end": -1}},
        {"action": "run", "args": {"command": "sed -n '3,4p' a.py && head -n 2 './c.py'"}},
        {"action": "run", "args": {"command": "echo hi > x.py"}},
        {"action": "edit", "args": {"path": "a.py"}},
        {"observation": "read", "content": "ignored"},
    ]
    p = _oh_file(tmp_path, [{"instance_id": "o__r-1", "history": history,
                             "test_result": {"git_patch": ""}},
                            {"history": [], "test_result": {}}])
    [t] = openhands.read(p, ReadOptions(preset="contextbench"))  # the id-less record: no row
    assert t.instance_id == "o__r-1" and t.model_patch is None
    assert [[(v.file, v.start_line, v.end_line) for v in s.views] for s in t.steps] == [
        [("a.py", 5, 9)],
        [("workspace/r/b.py", None, None)],  # [1, -1] falls back to start/end: whole file
        [("a.py", 3, 4), ("c.py", 1, 2)],
    ]
    # Final = every file, spans merged per file (3-4 and 5-9 join).
    assert sorted((v.file, v.start_line, v.end_line) for v in t.final_context
                  if v.start_line) == [("a.py", 3, 9), ("c.py", 1, 2)]


def test_openhands_contextbench_bad_history_is_empty_and_bad_line_raises(tmp_path: Path
                                                                         ) -> None:
    p = _oh_file(tmp_path, [{"instance_id": "o__r-1", "history": None},
                            {"instance_id": "o__r-2",
                             "history": [{"action": "read",
                                          "args": {"path": "a.py", "view_range": ["x", 2]}}]}])
    a, b = openhands.read(p, ReadOptions(preset="contextbench"))
    assert a.extra.get("cb_no_context") and b.extra.get("cb_no_context")
    bad = tmp_path / "bad" / "output.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"instance_id": "o__r-1", "history": [], "test_result": null}\n')
    with pytest.raises(AdapterError) as exc:
        openhands.read(bad, ReadOptions(preset="contextbench"))
    assert exc.value.field == "test_result"


# --- the project's own parity cases (fixtures/parity) ------------------------------------------
# Inputs written for the project, outputs of the published evaluator run on them by
# benchmarks/parity_extra.py (its own environment, never in CI); see fixtures/parity/README.md.

EXTRA = FIXTURES / "parity"


def _extra_index() -> list[dict[str, Any]]:
    return json.loads((EXTRA / "index.json").read_text())["trajectories"]


@cache
def _extra_ours() -> dict[str, list[dict[str, Any]]]:
    gold = load_gold([str(EXTRA / "gold.jsonl")])
    ev = Evaluator(gold, RepoCache(EXTRA / "repos"), preset="contextbench")
    if not isinstance(ev.preparer, ContextBenchPreparer):
        ev.preparer = ContextBenchPreparer(ev.symbols, "contextbench", "declared")
    return {t["pred_file"]: list(ev.run(RunSpec("extra", [str(EXTRA / t["pred_file"])]),
                                        Summary()))
            for t in _extra_index()}


@pytest.mark.parametrize("traj", _extra_index(), ids=lambda t: t["pred_file"])
def test_own_case_reproduces_reference(traj: dict[str, Any]) -> None:
    refs = [json.loads(ln) for ln in (EXTRA / "expected" / "results.jsonl").read_text()
            .splitlines() if ln.strip()]
    ref_rows = [r for r in refs if r["pred_file"] == traj["pred_file"]]
    rows = _extra_ours()[traj["pred_file"]]
    assert ref_rows and len(rows) == len(ref_rows)
    for ours, ref in zip(rows, ref_rows, strict=True):
        if "error" in ref:
            assert ours["status"] == "error" and ours["error"]["kind"] == ref["error"]
            assert ours["instance_id"] == ref["instance_id"]
        else:
            assert compare_row(ours, ref) == [], f"{traj['pred_file']}:{ref['out_line']}"


#: Where the reference's grammars (tree-sitter-languages 1.10.2) and ours parse differently: a
#: C++ class in a ``.h`` file is C to both, and the older C grammar's error recovery keeps
#: ``int value() const { … }`` as a function_definition where tree-sitter-c 0.24 does not.
#: Not a naming rule: no name heuristic can reproduce a node the parser does not produce.
GRAMMAR_ONLY = {"toy__shapes@c0ffee0000000000000000000000000000000001/src/stats.h":
                {("function_definition", "value", 299, 334)}}


def test_definition_names_match_reference() -> None:
    """ContextBench's name for every definition of the cases' source files (its
    ``extract_named_defs``, run by benchmarks/parity_extra.py). C/C++: declarators of every
    shape, methods inside classes in headers named after their first plain identifier
    (``scale(double factor)`` is ``factor``), destructors and constructors after the class,
    operators after their parameter. The other languages (``toy__polyglot``): decorated Python
    definitions start at ``def`` and ``@overload`` stubs are definitions of their own; Java
    overloads, constructors, classes nested two deep and interface methods; a grouped Go
    ``type (…)`` named after its first field, generic functions; Rust impl blocks named after
    their first method; TypeScript overload signatures and abstract classes are not
    definitions, a class expression's methods are; JavaScript arrow functions named after
    their first parameter."""
    expected = json.loads((EXTRA / "expected" / "named_defs.json").read_text())
    assert len(expected) == 13
    for rel, rows in expected.items():
        data = (EXTRA / "repos" / rel).read_bytes()
        ours = {(d.kind, d.name, d.start_byte, d.end_byte)
                for d in extract(data, rel, preset="contextbench") or [] if d.name}
        ref = {tuple(r) for r in rows}
        assert ref - ours == GRAMMAR_ONLY.get(rel, set()), rel
        assert ours - ref == set(), rel
