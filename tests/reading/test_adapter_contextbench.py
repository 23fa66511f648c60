"""ContextBench's own formats: SWE-agent checkpoints/context.json/patch_context.txt, Prometheus
logs and the generic prediction file, under presets ``contextbench`` and ``strict``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType

import pytest

from conftest import CORPUS, FIXTURES, PARITY, requires_parity, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.model import SymbolRef, Trajectory, View
from ctxeval.reading.adapters import ReadOptions, detect
from ctxeval.reading.adapters import cb_prometheus as prom
from ctxeval.reading.adapters import cb_sweagent as ckpt
from ctxeval.reading.adapters import cb_sweagent_context_json as ctxjson
from ctxeval.reading.adapters import cb_sweagent_patch_context as pctx
from ctxeval.reading.adapters import cb_unified as unified
from ctxeval.reading.adapters.contextbench import cb_patch_context, strict_patch_context

CB = ReadOptions(preset="contextbench")
STRICT = ReadOptions(preset="strict")
MINE = (ckpt, ctxjson, pctx, prom, unified)
PARITY_FORMAT = {"sweagent": ckpt, "sweagent-context-json": ctxjson,
                 "sweagent-patch-context-txt": pctx, "prometheus": prom, "unified": unified}
FIX = FIXTURES / "adapters" / "contextbench"
CKPT_DIR = CORPUS / "contextbench" / "swe-agent-checkpoints"


def spans(views: list[View] | None) -> list[tuple[str, int | None, int | None]]:
    assert views is not None
    return [(v.file, v.start_line, v.end_line) for v in views]


def step_spans(t: Trajectory) -> list[list[tuple[str, int | None, int | None]]]:
    return [spans(s.views) for s in t.steps]


def one(mod, path: Path, options: ReadOptions) -> Trajectory:
    trajs = mod.read(path, options)
    assert len(trajs) == 1
    return trajs[0]


# --- parity suite: step counts and the reference's two crashes --------------------------------


def _parity_cases() -> list[tuple[str, str]]:
    if not PARITY.is_dir():
        return []
    index = json.loads((PARITY / "trajs_index.json").read_text())
    return [(t["pred_file"], t["format"]) for t in index["trajectories"]
            if t["format"] in PARITY_FORMAT]


@requires_parity
def test_parity_covers_all_my_formats() -> None:
    formats = {f for _, f in _parity_cases()}
    assert formats == set(PARITY_FORMAT)
    assert len(_parity_cases()) == 21


@requires_parity
@pytest.mark.parametrize(("pred_file", "fmt"), _parity_cases())
def test_parity_num_steps_under_contextbench(pred_file: str, fmt: str) -> None:
    rows = [json.loads(line) for line in
            (PARITY / "expected" / "results.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["pred_file"] == pred_file]
    assert rows
    mod = PARITY_FORMAT[fmt]
    path = PARITY / pred_file
    assert detect(path) is mod
    if "reference_crash" in rows[0]:
        with pytest.raises(AdapterError):
            mod.read(path, CB)
    else:
        got = [(t.instance_id, len(t.steps)) for t in mod.read(path, CB)]
        assert got == [(r["instance_id"], r["num_steps"]) for r in rows]
    # strict never fails on these files
    assert mod.read(path, STRICT)


@requires_parity
def test_crash_multirange_patch_context() -> None:
    path = PARITY / "trajs/toy__ts_shapes-7/t3/toy__ts_shapes-7.checkpoints.jsonl"
    with pytest.raises(AdapterError, match="not one 'start-end' range") as err:
        ckpt.read(path, CB)
    assert err.value.line == 3 and err.value.field == "patch_context"
    t = one(ckpt, path, STRICT)
    assert spans(t.final_context) == [("/testbed/src/registry.ts", 13, 23),
                                      ("/testbed/src/labels.ts", 8, 11),
                                      ("/testbed/src/labels.ts", 13, 16)]
    assert step_spans(t) == [[("/testbed/src/registry.ts", 20, 23)],
                             [("/testbed/src/labels.ts", 8, 11)]]


@requires_parity
def test_crash_log_without_blocks() -> None:
    path = PARITY / "trajs/toy__py_ledger-3/t4/toy__py_ledger-3.log"
    with pytest.raises(AdapterError, match=r"Unsupported \.log"):
        prom.read(path, CB)
    t = one(prom, path, STRICT)
    assert t.instance_id == "toy__py_ledger-3"
    assert t.steps == [] and t.final_context is None


@requires_parity
def test_parity_checkpoints_contextbench_details() -> None:
    t = one(ckpt, PARITY / "trajs/toy__py_ledger-1/t2/toy__py_ledger-1.checkpoints.jsonl", CB)
    # directory view, whole-file view and '--view_range 55 -1' are dropped
    assert step_spans(t) == [[("ledger/models.py", 20, 60)], [("ledger/models.py", 40, 49)]]
    assert spans(t.final_context) == [("ledger/models.py", 40, 49), ("ledger/models.py", 22, 31)]
    assert t.model_patch is None and t.extra == {}
    t = one(ckpt, PARITY / "trajs/toy__py_ledger-3/t3/toy__py_ledger-3.checkpoints.jsonl", CB)
    assert step_spans(t)[1] == [("ledger/fmt.py", 22, 17)]  # reversed, kept
    assert spans(t.final_context) == [("ledger/fmt.py", 17, 22)]  # = last step
    t = one(ckpt, PARITY / "trajs/toy__js_queue-5/t2/toy__js_queue-5.checkpoints.jsonl", CB)
    assert spans(t.final_context) == [("src/retry.js", 7, 23), ("package.json", None, None)]
    assert t.final_context is not None and t.final_context[1].file_only


@requires_parity
def test_parity_checkpoints_strict_reads_observations() -> None:
    t = one(ckpt, PARITY / "trajs/toy__py_ledger-3/t3/toy__py_ledger-3.checkpoints.jsonl",
            STRICT)
    # the reversed range got "Invalid `view_range`": nothing was shown
    assert step_spans(t) == [[("/testbed/ledger/fmt.py", 1, 12)], [],
                             [("/testbed/ledger/fmt.py", 17, 22)]]
    assert t.final_context is None  # nothing declared
    t = one(ckpt, PARITY / "trajs/toy__py_ledger-1/t2/toy__py_ledger-1.checkpoints.jsonl",
            STRICT)
    assert len(t.steps) == 7
    assert step_spans(t)[1] == [("/testbed/ledger/models.py", 1, 73)]  # whole-file view
    assert step_spans(t)[4] == [("/testbed/ledger/models.py", 55, 73)]  # '55 -1'
    assert t.steps[6].edits == ["/testbed/ledger/models.py"]
    t = one(ckpt, PARITY / "trajs/toy__go_kv-10/t3/toy__go_kv-10.checkpoints.jsonl", STRICT)
    assert step_spans(t)[0] == [("/testbed/store/ttl.go", 31, 37)]  # asked 31-40, shown 31-37


@requires_parity
def test_parity_context_json_and_patch_context_txt() -> None:
    path = PARITY / "trajs/toy__java_bank-8/t4/toy__java_bank-8.context.json"
    t = one(ctxjson, path, CB)
    acct, exc = "src/main/java/bank/Account.java", \
        "src/main/java/bank/InsufficientFundsException.java"
    want = [(acct, 32, 38), (acct, 1, 10), (exc, 7, 1), ("src/main/java/bank/App.java", None,
                                                         None)]
    assert spans(t.final_context) == want
    assert step_spans(t) == [want]
    assert t.extra == {"cb_steps_from_final": True}
    assert t.model_patch is not None and t.model_patch.startswith("diff --git a/src/main/java")
    s = one(ctxjson, path, STRICT)
    assert ("/testbed/" + exc, 7, 7) in spans(s.final_context)  # no 'end': that one line
    path = PARITY / "trajs/toy__rust_geom-11/t4/toy__rust_geom-11.patch_context.txt"
    t = one(pctx, path, CB)
    assert t.instance_id == "toy__rust_geom-11"
    assert step_spans(t) == [[("src/poly.rs", 12, 27), ("src/vec2.rs", 23, 25)]]
    s = one(pctx, path, STRICT)
    assert s.steps == [] and len(s.final_context or []) == 2


@requires_parity
def test_parity_prometheus_details() -> None:
    t = one(prom, PARITY / "trajs/toy__ts_shapes-7/t1/toy__ts_shapes-7.log", CB)
    # reversed 23-20 swapped; no AGGREGATED block: final = merged union of the steps
    assert step_spans(t)[0] == [("src/registry.ts", 13, 18), ("src/registry.ts", 20, 23)]
    assert spans(t.final_context) == [("src/registry.ts", 13, 18), ("src/registry.ts", 20, 23),
                                      ("src/labels.ts", 1, 11), ("src/i18n.ts", 1, 20)]
    t = one(prom, PARITY / "trajs/toy__js_queue-4/t3/toy__js_queue-4.log", CB)
    assert step_spans(t)[1] == [("src/worker.js", 1, 30), ("src/queue.js", 12, 17)]
    assert spans(t.final_context) == [("src/queue.js", 12, 31), ("src/worker.js", 1, 30)]


@requires_parity
def test_parity_unified_details() -> None:
    t = one(unified, PARITY / "trajs/toy__ts_shapes-7/t2/pred.json", CB)
    assert t.steps[0].symbols == [SymbolRef("src/registry.ts", "Registry.create")]
    assert step_spans(t)[1] == [("/testbed/src/i18n.ts", 1, 20)]
    assert spans(t.final_context)[-1] == ("src/i18n.ts", None, None)
    assert t.final_symbols is not None and len(t.final_symbols) == 4
    t = one(unified, PARITY / "trajs/toy__py_ledger-1/t3/pred.json", CB)
    assert step_spans(t)[:2] == [[("ledger/models.py", 50, 40)],
                                 [("ledger/models.py", None, None), ("ledger/fmt.py", None, None)]]
    s = one(unified, PARITY / "trajs/toy__py_ledger-1/t3/pred.json", STRICT)
    assert step_spans(s)[0] == [("ledger/models.py", 40, 50)]
    batch = unified.read(PARITY / "trajs/_batch/unified/preds.jsonl", CB)
    assert [t.instance_id for t in batch] == ["toy__js_queue-5", "toy__java_bank-8",
                                              "toy__js_queue-5"]
    assert step_spans(batch[0]) == [[("src/retry.js", 7, 18),
                                     ("src/does_not_exist.js", None, None)]]
    assert batch[2].model_patch is None  # "" is no patch (the evaluator falls back to gold)
    strict = unified.read(PARITY / "trajs/_batch/unified/preds.jsonl", STRICT)
    assert [len(t.steps) for t in strict] == [0, 2, 0]


# --- corpus: ContextBench's SWE-agent checkpoints ---------------------------------------------


@requires_shared
def test_corpus_checkpoints_contextbench() -> None:
    want = {
        "matplotlib__matplotlib-25479": [("lib/matplotlib/pyplot.py", 1600, 1800),
                                         ("lib/matplotlib/pyplot.py", 2240, 2320),
                                         ("lib/matplotlib/colors.py", 640, 760)],
        "pallets__flask-5014": [("src/flask/blueprints.py", 160, 210),
                                ("src/flask/blueprints.py", 206, 250),
                                ("src/flask/blueprints.py", 172, 200),
                                ("tests/test_blueprints.py", 240, 300),
                                ("src/flask/blueprints.py", 169, 206),
                                ("tests/test_blueprints.py", 1, 200),
                                ("tests/test_blueprints.py", 240, 260)],
        "pydata__xarray-4075": [("xarray/core/computation.py", 1070, 1219),
                                ("xarray/core/computation.py", 1060, 1220),
                                ("xarray/core/weighted.py", 140, 151)],
        "pydata__xarray-4695": [("xarray/core/dataset.py", 1, 2200),
                                ("xarray/core/dataarray.py", 1118, 1300),
                                ("xarray/core/dataarray.py", 188, 210),
                                ("xarray/core/dataarray.py", 188, 220)],
    }
    for iid, views in want.items():
        t = one(ckpt, CKPT_DIR / f"{iid}.checkpoints.jsonl", CB)
        assert t.instance_id == iid
        assert step_spans(t) == [[v] for v in views]
        assert spans(t.final_context) == [views[-1]]  # no patch_context: the last step
    # only '[a, b]' ranges and range-less views: the reference extracts no context
    t = one(ckpt, CKPT_DIR / "pydata__xarray-4966.checkpoints.jsonl", CB)
    assert step_spans(t) == [[]] and t.final_context == []
    assert t.extra == {"cb_steps_from_final": True, "cb_no_context": True}


@requires_shared
def test_corpus_checkpoints_strict_step_counts() -> None:
    counts = {"matplotlib__matplotlib-25479": 13, "pallets__flask-5014": 20,
              "pydata__xarray-4075": 20, "pydata__xarray-4695": 19, "pydata__xarray-4966": 3}
    for iid, n in counts.items():
        t = one(ckpt, CKPT_DIR / f"{iid}.checkpoints.jsonl", STRICT)
        assert len(t.steps) == n, iid
        assert [s.index for s in t.steps] == list(range(n))
        assert t.final_context is None


@requires_shared
def test_corpus_checkpoints_strict_views() -> None:
    t = one(ckpt, CKPT_DIR / "pydata__xarray-4966.checkpoints.jsonl", STRICT)
    assert t.steps[0].views == [] and t.steps[2].views == []  # listing; '[240, 380]' rejected
    conv = [v for v in t.steps[1].views if v.file == "/testbed/xarray/conventions.py"]
    assert conv == t.steps[1].views  # the directory half of the '&&' shows no code
    got = {(v.start_line, v.end_line) for v in conv}
    # abbreviated view: signatures shown, bodies elided ("... eliding lines 471-568 ...")
    assert {(458, 470), (569, 580), (663, 671), (705, 708), (787, 789), (809, 811)} <= got
    assert not any(v.start_line <= 471 <= v.end_line for v in conv)

    t = one(ckpt, CKPT_DIR / "pallets__flask-5014.checkpoints.jsonl", STRICT)
    for i in (9, 13, 14):  # wrong range syntax: usage error, nothing seen
        assert t.steps[i].views == []
    assert step_spans(t)[15] == [("/testbed/src/flask/blueprints.py", 169, 206)]
    assert step_spans(t)[17] == [("/testbed/tests/test_blueprints.py", 1049, 1049)]
    assert step_spans(t)[19] == [("/testbed/tests/test_blueprints.py", 240, 260)]

    t = one(ckpt, CKPT_DIR / "pydata__xarray-4075.checkpoints.jsonl", STRICT)
    weighted = "/testbed/xarray/core/weighted.py"
    assert step_spans(t)[2] == [(weighted, 1, 256)]
    assert t.steps[6].edits == [weighted]
    assert [(v.start_line, v.end_line, v.post_edit) for v in t.steps[6].views] == \
        [(137, 166, True)]
    assert t.steps[17].edits == []  # "No replacement was performed"
    assert t.steps[19].views == [View(weighted, 140, 151, post_edit=True)]
    assert step_spans(t)[16] == [("/testbed/xarray/core/computation.py", 1060, 1220)]

    t = one(ckpt, CKPT_DIR / "pydata__xarray-4695.checkpoints.jsonl", STRICT)
    da = "/testbed/xarray/core/dataarray.py"
    assert t.steps[12].views == [View(da, 188, 210)]
    assert t.steps[16].views == [View(da, 206, 214, post_edit=True)]  # "of the edited file"
    assert t.steps[18].views == [View(da, 188, 220, post_edit=True)]

    t = one(ckpt, CKPT_DIR / "matplotlib__matplotlib-25479.checkpoints.jsonl", STRICT)
    assert step_spans(t)[6] == [("/testbed/lib/matplotlib/colors.py", 640, 760)]
    assert t.steps[10].views == [] and t.steps[11].views == []
    assert t.steps[12].edits == []  # the create call was rejected


# --- detection ---------------------------------------------------------------------------------


@requires_shared
def test_detection_corpus() -> None:
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file():
            continue
        with path.open("rb") as fh:
            head = fh.read(64 * 1024)
        claimed = [m.FORMAT for m in MINE if m.detect(path, head)]
        if path.name.endswith(".checkpoints.jsonl"):
            assert claimed == [ckpt.FORMAT], path
            assert detect(path) is ckpt
        else:
            assert claimed == [], path


@requires_parity
def test_detection_parity_other_formats_not_claimed() -> None:
    index = json.loads((PARITY / "trajs_index.json").read_text())
    for t in index["trajectories"]:
        path = PARITY / t["pred_file"]
        head = path.read_bytes()[:64 * 1024]
        claimed = [m for m in MINE if m.detect(path, head)]
        if t["format"] in PARITY_FORMAT:
            assert claimed == [PARITY_FORMAT[t["format"]]], path
        else:
            assert claimed == [], path


def test_detection_fixtures() -> None:
    assert detect(FIX / "demo__repo-1.checkpoints.jsonl") is ckpt
    assert detect(FIX / "demo__repo-1" / "demo__repo-1.log") is prom
    assert detect(FIX / "preds.jsonl") is unified


# --- hand-written fixtures ---------------------------------------------------------------------


def test_fixture_checkpoints() -> None:
    path = FIX / "demo__repo-1.checkpoints.jsonl"
    t = one(ckpt, path, CB)
    assert t.instance_id == "demo__repo-1" and t.agent == "swe-agent"
    assert step_spans(t) == [[("pkg/mod.py", 3, 5)], [("pkg/util.py", 9, 7)],
                             [("pkg/mod.py", 1, 4)]]
    assert spans(t.final_context) == [("pkg/mod.py", 3, 4), ("pkg/util.py", None, None)]
    s = one(ckpt, path, STRICT)
    assert step_spans(s) == [[("/testbed/pkg/mod.py", 3, 5)], [],
                             [("/testbed/pkg/mod.py", 3, 4)], [],
                             [("/testbed/pkg/mod.py", 1, 4)]]
    assert [v.post_edit for st in s.steps for v in st.views] == [False, True, True]
    assert s.steps[2].edits == ["/testbed/pkg/mod.py"]
    assert spans(s.final_context) == [("/testbed/pkg/mod.py", 3, 4),
                                      ("/testbed/pkg/util.py", None, None)]
    assert one(ckpt, path, ReadOptions(preset="contextbench", instance_id="x")).instance_id == "x"


def test_fixture_prometheus() -> None:
    path = FIX / "demo__repo-1" / "demo__repo-1.log"
    t = one(prom, path, CB)
    # 5-3 swapped and merged with the adjacent 6-8 of the same file (after normalisation);
    # the block naming only a file without a range is no step
    assert step_spans(t) == [[("pkg/mod.py", 3, 8)], [("pkg/util.py", 1, 2)]]
    assert spans(t.final_context) == [("pkg/mod.py", 3, 8), ("pkg/util.py", 1, 2)]
    s = one(prom, path, STRICT)
    assert step_spans(s) == [[("/workspace/repo/pkg/mod.py", 3, 5), ("/testbed/pkg/mod.py", 6, 8)],
                             [("pkg/readme.txt", None, None)], [("pkg/util.py", 1, 2)]]
    assert s.final_context is None


def test_fixture_unified() -> None:
    path = FIX / "preds.jsonl"
    trajs = unified.read(path, CB)
    assert [t.instance_id for t in trajs] == ["demo__repo-1", "demo__repo-2"]  # no id: skipped
    t = trajs[0]
    assert step_spans(t)[0] == [("pkg/mod.py", 9, 4), ("pkg/util.py", 1, 2)]
    # pkg/util.py has a span but is not in the step's files: file level differs
    assert t.extra["cb_step_files"] == [["pkg/mod.py"], None]
    assert t.steps[1].symbols == [SymbolRef("pkg/util.py", "helper"), SymbolRef("pkg/mod.py", "")]
    assert t.final_symbols == [SymbolRef("pkg/mod.py", "f")]
    assert t.model_patch is None and t.base_commit == "abc123"
    assert t.extra["cb_commit"] == "abc123" and t.extra["cb_repo_url"] == "https://example.invalid/demo/repo.git"
    assert trajs[1].extra == {"cb_steps_from_final": True, "cb_no_context": True}
    with pytest.raises(AdapterError, match="no instance_id") as err:
        unified.read(path, STRICT)
    assert err.value.line == 3
    strict = unified.read(path, ReadOptions(instance_id="demo__repo-3"))
    assert [t.instance_id for t in strict] == ["demo__repo-1", "demo__repo-2", "demo__repo-3"]
    assert step_spans(strict[0])[0] == [("pkg/mod.py", 4, 9), ("pkg/util.py", 1, 2)]
    assert strict[0].steps[1].symbols == [SymbolRef("pkg/util.py", "helper")]
    assert strict[2].final_context == [View("pkg/mod.py", None, None)]


def test_unified_json_list_and_bad_span(tmp_path: Path) -> None:
    rec = {"instance_id": "a__b-1", "traj_data": {"pred_files": ["x.py"],
                                                   "pred_spans": {"x.py": [{"start": 2}]}}}
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([rec]))
    with pytest.raises(AdapterError, match="'start' and 'end'") as err:
        unified.read(path, CB)
    assert err.value.field == "traj_data.pred_spans.x.py"
    rec["traj_data"]["pred_spans"] = {"x.py": [{"start": 2, "end": 3}]}
    path.write_text(json.dumps([rec, dict(rec, instance_id="a__b-2")]))
    assert [len(t.steps) for t in unified.read(path, CB)] == [1, 1]


def test_patch_context_parsing() -> None:
    p = Path("x.checkpoints.jsonl")
    assert cb_patch_context("File: /testbed/a.py\nLines: 5\nLines: 3 - 4\nFile: /b.py", path=p) \
        == {"a.py": [(3, 4)], "b.py": []}
    for bad in ("Lines: 1-2-3", "Lines: -5", "Lines: a-b", "Lines: 1-2, 4-5"):
        with pytest.raises(AdapterError):
            cb_patch_context("File: a.py\n" + bad, path=p)
    warnings: list[str] = []
    views = strict_patch_context("File: a.py\nLines: 9-7, 12, x-y\nFile: b.py", warnings)
    assert spans(views) == [("a.py", 7, 9), ("a.py", 12, 12), ("b.py", None, None)]
    assert warnings == ["patch_context: unreadable range 'x-y' for a.py"]


def test_patch_context_txt_id_from_parent(tmp_path: Path) -> None:
    d = tmp_path / "owner__repo-7"
    d.mkdir()
    f = d / "whatever.patch_context.txt"
    f.write_text("File: /testbed/a.py\nLines: 1-2\n")
    assert one(pctx, f, CB).instance_id == "owner__repo-7"
    empty = tmp_path / "x__y-1.patch_context.txt"
    empty.write_text("nothing declared\n")
    t = one(pctx, empty, CB)
    assert t.instance_id == "x__y-1" and t.extra["cb_no_context"] is True


# --- robustness: truncated and mutated inputs only ever raise AdapterError ---------------------


def _samples() -> list[tuple[ModuleType, str, bytes]]:
    out: list[tuple[ModuleType, str, bytes]] = [
        (ckpt, "demo__repo-1.checkpoints.jsonl",
         (FIX / "demo__repo-1.checkpoints.jsonl").read_bytes()),
        (prom, "demo__repo-1.log", (FIX / "demo__repo-1" / "demo__repo-1.log").read_bytes()),
        (unified, "preds.jsonl", (FIX / "preds.jsonl").read_bytes()),
        (ctxjson, "a__b-1.context.json", json.dumps({
            "viewed_files": ["/testbed/a.py"], "file_line_ranges": {"/testbed/a.py": [
                {"start": 3, "end": 9}, {"start": 4}]}, "info": {"submission": "diff"}}).encode()),
        (pctx, "a__b-1.patch_context.txt", b"File: /testbed/a.py\nLines: 3-9\nFile: b.py\n"),
    ]
    return out


@pytest.mark.parametrize("preset", ["contextbench", "strict"])
def test_fuzz_only_adapter_errors(tmp_path: Path, preset: str) -> None:
    rng = random.Random(1234)
    options = ReadOptions(preset=preset, instance_id="fallback__id-1")
    junk = [b"\xff", b"\x00", b"{", b"}", b"]", b'"', b"\n", b"-", b",", b"null", b"7",
            b"--- END CONTEXT ---", b"Lines: ", b"File: "]
    for mod, name, data in _samples():
        variants = [data[:n] for n in range(0, len(data), max(1, len(data) // 25))]
        for _ in range(60):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(b) + 1)
                b[pos:pos + rng.randint(0, 3)] = rng.choice(junk)
            variants.append(bytes(b))
        for i, v in enumerate(variants):
            path = tmp_path / f"v{i}" / name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(v)
            try:
                trajs = mod.read(path, options)
            except AdapterError:
                continue
            assert all(isinstance(t, Trajectory) for t in trajs)


def test_git_lfs_pointer_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "a__b-1.checkpoints.jsonl"
    path.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n")
    for options in (CB, STRICT):
        with pytest.raises(AdapterError, match="Git LFS pointer"):
            ckpt.read(path, options)


def test_deeply_nested_json_is_an_adapter_error(tmp_path: Path) -> None:
    path = tmp_path / "pred.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(AdapterError, match="nested too deeply"):
        unified.read(path, CB)


# --- the reading reproduces the reference's numbers (files, bytes, lines, EditLoc) -------------
# A small model of the rules in docs/contextbench-reading.md §2 (symbols left out: they need the
# reference's tree-sitter grammars). It checks that the adapters hand the evaluator exactly what
# the reference evaluates: every integer of every scored row, ratios to 1e-12.

Ivs = list[tuple[int, int]]


def _merge(ivs: Ivs) -> Ivs:
    out: Ivs = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _size(by_file: dict[str, Ivs]) -> int:
    return sum(b - a + 1 for ivs in by_file.values() for a, b in _merge(ivs))


def _common(x: dict[str, Ivs], y: dict[str, Ivs]) -> int:
    total = 0
    for f in set(x) | set(y):
        a, b, i, j = _merge(x.get(f, [])), _merge(y.get(f, [])), 0, 0
        while i < len(a) and j < len(b):
            lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            total += max(0, hi - lo + 1)
            if a[i][1] < b[j][1]:
                i += 1
            elif b[j][1] < a[i][1]:
                j += 1
            else:
                i, j = i + 1, j + 1
    return total


def _resolve(repo: Path, p: str) -> str:
    p = p.strip().strip("'\"").replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    parts = [x for x in p.lstrip("/").split("/") if x]
    return next(("/".join(parts[i:]) for i in range(len(parts))
                 if (repo / "/".join(parts[i:])).is_file()), "")


def _bytes(path: Path, s: int, e: int) -> tuple[int, int] | None:
    data = path.read_bytes()
    if not data:
        return (0, 0)
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
    s = max(1, s)
    e = max(s, e)
    if s > len(starts):
        return None
    a = starts[s - 1]
    return (a, max(a, starts[e] - 1 if e < len(starts) else len(data) - 1))


def _gold_path(p: str) -> str:
    if p.startswith("/testbed/"):
        return p[len("/testbed/"):]
    return p.lstrip("/") if p.startswith("/") else p.lstrip("./")


def _ref_view(views: list[View], files: list[str] | None, repo: Path
              ) -> tuple[set[str], dict[str, Ivs], dict[str, Ivs]]:
    """(files, bytes, lines) of one step after the reference's path resolution."""
    fs = {_resolve(repo, f) for f in (files if files is not None else [v.file for v in views])}
    byts: dict[str, Ivs] = {}
    lines: dict[str, Ivs] = {}
    for v in views:
        f = _resolve(repo, v.file)
        if not f or v.start_line is None or v.end_line is None:
            continue
        b = _bytes(repo / f, v.start_line, v.end_line)
        if b:
            byts.setdefault(f, []).append(b)
        if v.start_line > 0 and v.end_line > 0:
            lines.setdefault(f, []).append((v.start_line, v.end_line))
    return fs - {""}, byts, lines


def _ref_deleted(patch: str) -> dict[str, Ivs]:
    out: dict[str, Ivs] = {}
    cur, lines = None, patch.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("+++"):
            cur = line[3:].strip()[2:] if line[3:].strip().startswith("b/") else cur
        elif line.startswith("@@") and cur:
            old, run = int(line.split()[1][1:].split(",")[0]), None
            for x in lines[i + 1:]:
                if x.startswith(("@@", "diff ", "---")):
                    break
                if x.startswith("-"):
                    run, old = (old if run is None else run), old + 1
                elif x.startswith(" "):
                    if run is not None:
                        out.setdefault(cur, []).append((run, old - 1))
                    run, old = None, old + 1
            if run is not None:
                out.setdefault(cur, []).append((run, old - 1))
    return out


@requires_parity
def test_parity_reading_reproduces_reference_integers() -> None:
    golds = {g["instance_id"]: g for g in
             map(json.loads, (PARITY / "gold.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in
            (PARITY / "expected" / "results.jsonl").read_text().splitlines()]
    checked = 0
    for pred_file, fmt in _parity_cases():
        expected = [r for r in rows if r["pred_file"] == pred_file]
        if "reference_crash" in expected[0]:
            continue
        trajs = PARITY_FORMAT[fmt].read(PARITY / pred_file, CB)
        for traj, row in zip(trajs, expected, strict=True):
            gold = golds[traj.instance_id]
            repo = PARITY / "repos" / gold["repo"].split("/")[-1]
            g_files = {_gold_path(x["file"]) for x in gold["gold_context"]}
            g_bytes: dict[str, Ivs] = {}
            g_lines: dict[str, Ivs] = {}
            for x in gold["gold_context"]:
                f = _gold_path(x["file"])
                b = _bytes(repo / f, x["start_line"], x["end_line"]) \
                    if (repo / f).is_file() else None
                if b:
                    g_bytes.setdefault(f, []).append(b)
                g_lines.setdefault(f, []).append((x["start_line"], x["end_line"]))
            ff, fb, fl = _ref_view(traj.final_context or [], traj.extra.get("cb_final_files"),
                                   repo)
            got = {"file": (len(ff & g_files), len(g_files), len(ff)),
                   "span": (_common(fb, g_bytes), _size(g_bytes), _size(fb)),
                   "line": (_common(fl, g_lines), _size(g_lines), _size(fl))}
            for k, triple in got.items():
                e = row["final"][k]
                assert triple == (e["intersection"], e["gold_size"], e["pred_size"]), \
                    (pred_file, k)
            step_files = traj.extra.get("cb_step_files") or [None] * len(traj.steps)
            u_files: set[str] = set()
            u_bytes: dict[str, Ivs] = {}
            u_lines: dict[str, Ivs] = {}
            auc = [0.0, 0.0, 0.0]
            sums = [0, 0, 0]
            for step, files in zip(traj.steps, step_files, strict=True):
                sf, sb, sl = _ref_view(step.views, files, repo)
                u_files |= sf
                for f, ivs in sb.items():
                    u_bytes[f] = _merge(u_bytes.get(f, []) + ivs)
                for f, ivs in sl.items():
                    u_lines[f] = _merge(u_lines.get(f, []) + ivs)
                auc[0] += len(u_files & g_files) / len(g_files)
                auc[1] += _common(u_bytes, g_bytes) / _size(g_bytes)
                auc[2] += _common(u_lines, g_lines) / _size(g_lines)
                sums = [sums[0] + len(sf), sums[1] + _size(sb), sums[2] + _size(sl)]
            unions = [len(u_files), _size(u_bytes), _size(u_lines)]
            assert row["num_steps"] == len(traj.steps)
            for k, a, u, s in zip(("file", "span", "line"), auc, unions, sums, strict=True):
                assert a / len(traj.steps) == pytest.approx(
                    row["trajectory"]["auc_coverage"][k], abs=1e-12), (pred_file, k)
                assert (1 - u / s if s > 0 else 0.0) == pytest.approx(
                    row["trajectory"]["redundancy"][k], abs=1e-12), (pred_file, k)
            patch = traj.model_patch or gold["patch"]
            deleted = [(f, n) for f, ivs in _ref_deleted(patch).items()
                       for a, b in _merge(ivs) for n in range(a, b + 1)]
            hits = sum(any(a <= n <= b for a, b in g_lines.get(f, [])) for f, n in deleted)
            e = row["editloc"]
            assert (hits, _size(g_lines), len(deleted)) == \
                (e["intersection"], e["gold_size"], e["pred_size"]), pred_file
            checked += 1
    assert checked == 21
