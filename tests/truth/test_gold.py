"""Gold loaders: every format, what is dropped and reported, and the real ContextBench/SWE-bench
gold files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import CORPUS, PARITY, requires_parity, requires_shared
from ctxeval.errors import GoldError
from ctxeval.model import View
from ctxeval.truth.gold import load_gold
from ctxeval.truth.gold.contextbench import contextbench_normalize_path, parse_text_blocks

CB = CORPUS / "contextbench"


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def row(iid: str = "o__r-1", ctx=None, **extra) -> dict:
    base = {"instance_id": iid, "repo": "o/r", "base_commit": "c0ffee",
            "gold_context": ctx if ctx is not None else [{"file": "a.py", "start_line": 1,
                                                          "end_line": 2}]}
    return {**base, **extra}


def without_origin(inst) -> dict:
    d = dataclasses.asdict(inst)
    d.pop("origin")
    return d


# --- neutral -------------------------------------------------------------------------------

def test_neutral_row_loads_as_written(tmp_path):
    p = write_jsonl(tmp_path / "g.jsonl", [row(
        ctx=[{"file": "pkg/a.py", "start_line": 3, "end_line": 9, "content": "x = 1"}],
        patch="--- a/pkg/a.py\n", language="python", source="SWE-bench", aliases=["alt-1"])])
    gold = load_gold([p])
    assert gold.problems == []
    (inst,) = gold.instances
    assert inst.instance_id == "o__r-1" and inst.repo == "o/r" and inst.base_commit == "c0ffee"
    assert inst.context == [View("pkg/a.py", 3, 9)] and inst.context_text == ["x = 1"]
    assert (inst.language, inst.source, inst.gold_kind) == ("python", "SWE-bench", "context")
    assert inst.origin == str(p)
    assert gold.get("alt-1") is inst and gold.get("o__r-1") is inst and gold.get("x") is None
    assert gold.sources == [(str(p), hashlib.sha256(p.read_bytes()).hexdigest())]


def test_bad_items_are_dropped_and_reported_with_file_row_and_field(tmp_path):
    p = write_jsonl(tmp_path / "g.jsonl", [
        row("ok-1"),
        row("mixed-2", ctx=[
            {"file": "a.py", "start_line": 9, "end_line": 4},      # reversed: swapped
            {"file": "a.py", "start_line": 0, "end_line": 4},      # below 1: dropped
            {"file": "a.py", "start_line": 5},                     # no end_line: dropped
            {"start_line": 1, "end_line": 2},                      # no file: dropped
            {"file": "b.py", "start_line": "7", "end_line": 8.0},  # numeric text: kept
            {"file": "b.py", "start_line": True, "end_line": 8},   # a bool is no line
            "not an item",
        ]),
        row("unparsable-3", ctx="neither JSON nor blocks"),
        row("allbad-4", ctx=[{"file": "a.py", "start_line": -1, "end_line": 2}]),
        {"repo": "o/r", "gold_context": []},                        # no instance id
    ])
    (tmp_path / "g.jsonl").write_text(p.read_text() + "{broken json\n")
    gold = load_gold([p])
    assert [i.instance_id for i in gold.instances] == ["ok-1", "mixed-2"]
    assert gold.get("mixed-2").context == [View("a.py", 4, 9), View("b.py", 7, 8)]
    got = {(pr.kind, pr.line, pr.field) for pr in gold.problems}
    assert all(pr.path == str(p) for pr in gold.problems)
    assert got == {
        ("gold_warning", 2, "gold_context[0].start_line"),
        ("bad_gold", 2, "gold_context[1].start_line"),
        ("bad_gold", 2, "gold_context[2].end_line"),
        ("bad_gold", 2, "gold_context[3].file"),
        ("bad_gold", 2, "gold_context[5].start_line"),
        ("bad_gold", 2, "gold_context[6]"),
        ("bad_gold", 3, "gold_context"),            # ContextBench-style string, unreadable
        ("bad_gold", 4, "gold_context[0].start_line"),
        ("bad_gold", 4, "gold_context"),            # nothing usable left: left out
        ("bad_gold", 5, "instance_id"),
        ("bad_gold", 6, None),                      # the broken JSON line
    }
    swap = next(pr for pr in gold.problems if pr.kind == "gold_warning")
    assert "9-4" in swap.message and str(p) in str(swap)
    missing = next(pr for pr in gold.problems if pr.field == "gold_context[2].end_line")
    assert "missing 'end_line'" in missing.message


def test_duplicates_keep_the_first_and_are_reported(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [row("i-1", aliases=["alias-1"])])
    b = write_jsonl(tmp_path / "b.jsonl", [row("alias-1"), row("i-2")])
    gold = load_gold([a, b])
    assert [(i.instance_id, i.origin) for i in gold.instances] == \
        [("i-1", str(a)), ("i-2", str(b))]
    (dup,) = gold.problems
    assert (dup.kind, dup.path, dup.line) == ("duplicate_gold", str(b), 1)
    assert [s for s, _ in gold.sources] == [str(a), str(b)]


def test_paths_that_are_not_gold_raise(tmp_path):
    with pytest.raises(GoldError, match="no such file"):
        load_gold([tmp_path / "missing.jsonl"])
    (tmp_path / "notes.txt").write_text("hello\nworld\n")
    with pytest.raises(GoldError, match="not a gold file"):
        load_gold([tmp_path / "notes.txt"])
    write_jsonl(tmp_path / "other.jsonl", [{"foo": 1}, {"bar": 2}])
    with pytest.raises(GoldError, match="not a gold file"):
        load_gold([tmp_path / "other.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(GoldError, match=r"annot\.json"):
        load_gold([tmp_path / "empty"])


def test_format_is_detected_from_content_not_extension(tmp_path):
    p = tmp_path / "gold.data"
    p.write_text(json.dumps([row("i-1"), row("i-2")]))  # a JSON array under an odd name
    gold = load_gold([p])
    assert [i.instance_id for i in gold.instances] == ["i-1", "i-2"]


@requires_parity
def test_parity_gold_jsonl():
    gold = load_gold([PARITY / "gold.jsonl"])
    assert len(gold.instances) == 12 and gold.problems == []
    first = gold.instances[0]
    assert (first.instance_id, first.repo, first.language) == \
        ("toy__py_ledger-1", "toy/py_ledger", "python")
    assert first.base_commit == "8a55c8717e36783b0a3eb1c243f620965998dcde"
    assert first.context == [View("ledger/models.py", 27, 31), View("ledger/models.py", 33, 39),
                             View("ledger/models.py", 40, 49), View("ledger/models.py", 43, 45)]
    assert first.patch.startswith("diff --git a/ledger/models.py")


# --- ContextBench ----------------------------------------------------------------------------

@requires_shared
def test_contextbench_parquet_encodings_load_identically():
    as_json = load_gold([CB / "contextbench_verified_test.parquet"])
    as_text = load_gold([CB / "test.parquet"])
    assert len(as_json.instances) == len(as_text.instances) == 50
    for a, b in zip(as_json.instances, as_text.instances, strict=True):
        assert without_origin(a) == without_origin(b), a.instance_id
        assert a.context and len(a.context_text) == len(a.context)
    assert [(p.line, p.field, p.message) for p in as_json.problems] == \
        [(p.line, p.field, p.message) for p in as_text.problems]
    assert Counter(i.source for i in as_json.instances) == {
        "Verified": 17, "Multi-SWE-bench": 16, "SWE-PolyBench": 12, "SWE-bench-Pro": 5}


@requires_shared
def test_contextbench_multi_swe_bench_rows():
    gold = load_gold([CB / "test.parquet"])
    # row 1: repo "cli", /workspace/cli__cli__0.1/ paths, three ranges of one file
    inst = gold.get("Multi-SWE-Bench__go__maintenance__bugfix__2fea5f6b")
    assert inst is gold.get("cli__cli-5973") and inst.instance_id == "cli__cli-5973"
    assert inst.aliases == ["Multi-SWE-Bench__go__maintenance__bugfix__2fea5f6b"]
    assert (inst.repo, inst.language, inst.source) == ("cli/cli", "go", "Multi-SWE-bench")
    assert inst.base_commit == "954689ea9f26e3131ca816285eee8930cd8aa835"
    f = "pkg/cmd/repo/clone/clone.go"
    assert inst.context == [View(f, 1, 180), View(f, 155, 171), View(f, 161, 178)]
    assert inst.context_text[0].startswith("1\tpackage clone\n2\t\n3\timport (")
    assert gold.get("fasterxml__jackson-core-964").repo == "fasterxml/jackson-core"
    assert gold.get("mui__material-ui-32626").repo == "mui/material-ui"
    # every /workspace prefix is gone; two files were outside the repository directory
    assert not any(v.file.startswith("/") for i in gold.instances for v in i.context)
    assert [(p.line, p.field) for p in gold.problems] == \
        [(9, "gold_context[0].file"), (35, "gold_context[0].file")]
    assert gold.get("sveltejs__svelte-9962").context[0] == View("run_svelte_test.js", 1, 88)
    # a SWE-bench Verified row keeps its owner/name and paths
    dj = gold.get("django__django-11603")
    assert dj.repo == "django/django" and dj.source == "Verified"
    assert all(not v.file.startswith("/") for v in dj.context)


def test_contextbench_exports_and_annot_tree(tmp_path):
    export = {
        "inst_id": "SWE-Bench-Verified__python__maintenance__bugfix__abc",
        "original_inst_id": "o__r-7", "commit": "deadbeef",
        "repo_url": "https://github.com/o/r.git",
        "init_ctx": [{"file": "/testbed/src/m.py", "start_line": 10, "end_line": 20}],
        "add_ctx": [{"file": "./src/n.py", "start_line": 1, "end_line": 3}],
        "patch": "--- a/src/m.py\n+++ b/src/m.py\n@@ -11 +11 @@\n-a\n+b\n",
    }
    multi = {
        "instance_id": "Multi-SWE-Bench__rust__maintenance__bugfix__def",
        "original_inst_id": "weird-id", "base_commit": "f00d", "repo": "tracing",
        "gold_ctx": [{"file": "/workspace/tokio-rs__tracing__0.1/src/lib.rs",
                      "start_line": 5, "end_line": 6}],
    }
    jl = write_jsonl(tmp_path / "cb.jsonl", [export, multi])
    gold = load_gold([jl])
    assert gold.problems == []
    a, b = gold.instances
    assert (a.instance_id, a.aliases, a.repo, a.base_commit) == \
        ("o__r-7", ["SWE-Bench-Verified__python__maintenance__bugfix__abc"], "o/r", "deadbeef")
    assert a.context == [View("src/m.py", 10, 20), View("src/n.py", 1, 3)]
    assert (a.source, a.language) == ("Verified", "python")  # from the ContextBench id
    # bare repo, no owner in the id: recovered from the /workspace/<owner>__<repo>__<ver>/ path
    assert (b.repo, b.context, b.language) == ("tokio-rs/tracing", [View("src/lib.rs", 5, 6)],
                                               "rust")
    assert b.source == "Multi-SWE-bench"
    # an upstream id says nothing about the benchmark: no source or language is invented
    plain = write_jsonl(tmp_path / "plain.jsonl", [{"original_inst_id": "django__django-1",
                                                     "commit": "c", "repo": "django/django",
                                                     "gold_ctx": []}])
    (p,) = load_gold([plain]).instances
    assert (p.source, p.language, p.context) == (None, None, [])

    tree = tmp_path / "annots"
    for k, rec in enumerate([export, multi]):
        (tree / f"inst{k}").mkdir(parents=True)
        (tree / f"inst{k}" / "annot.json").write_text(json.dumps(rec))
    (tree / "broken").mkdir()
    (tree / "broken" / "annot.json").write_bytes(b"\xff\xfe not json")
    from_tree = load_gold([tree])
    (broken,) = from_tree.problems
    assert broken.path == str(tree / "broken" / "annot.json") and "UTF-8" in broken.message
    assert [without_origin(i) for i in from_tree.instances] == \
        [without_origin(i) for i in gold.instances]
    assert from_tree.instances[0].origin == str(tree / "inst0" / "annot.json")
    (src, digest), = from_tree.sources
    h = hashlib.sha256()
    for name in ("broken", "inst0", "inst1"):
        f = tree / name / "annot.json"
        h.update(f"{name}/annot.json\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    assert (src, digest) == (str(tree), h.hexdigest())


def test_contextbench_text_blocks():
    text = ("context0：\nfile: /testbed/a.py\nstart_line: 3\nend_line: 4\nx = 1\ny = 2\n\n"
            "context1：\nfile: b.py\nstart_line: 8\nend_line: 8\n\n\n"
            "context2:\nfile: c.py\nstart_line: 1\nend_line: 2\nz\n\ncontext9 is prose")
    assert parse_text_blocks(text) == [
        {"file": "/testbed/a.py", "start_line": "3", "end_line": "4", "content": "x = 1\ny = 2"},
        {"file": "b.py", "start_line": "8", "end_line": "8", "content": ""},
        {"file": "c.py", "start_line": "1", "end_line": "2", "content": "z\n\ncontext9 is prose"},
    ]
    assert parse_text_blocks("") == []
    assert parse_text_blocks("file: a.py\nstart_line: 1") is None


def test_contextbench_reference_path_normalisation():
    assert contextbench_normalize_path("/workspace/o__r__0.1/src/a.c") == "src/a.c"
    assert contextbench_normalize_path("/testbed/x/y.py") == "x/y.py"
    assert contextbench_normalize_path(".size-limit.js") == "size-limit.js"  # its quirk


# --- SWE-bench -------------------------------------------------------------------------------

@requires_shared
def test_swe_bench_lite_records_give_patch_gold():
    gold = load_gold([CORPUS / "swe-bench" / "swe-bench-lite-test.json"])
    assert len(gold.instances) == 300 and gold.problems == []
    assert all(i.gold_kind == "patch" and i.context and i.patch for i in gold.instances)
    inst = gold.get("django__django-15202")
    assert (inst.repo, inst.base_commit, inst.language, inst.source) == \
        ("django/django", "4fd3044ca0135da903a70dfb66992293f529ecf1", "python", "SWE-bench")
    f = "django/core/validators.py"  # insertion after 110, 116-119 removed, 130, 142
    assert inst.context == [View(f, 110, 110), View(f, 116, 119), View(f, 130, 130),
                            View(f, 142, 142)]


@requires_shared
def test_single_gold_json_record():
    gold = load_gold([CORPUS / "psf__requests-2317" / "gold.json"])
    (inst,) = gold.instances
    assert (inst.instance_id, inst.repo, inst.gold_kind) == \
        ("psf__requests-2317", "psf/requests", "patch")
    assert inst.base_commit == json.loads(
        (CORPUS / "psf__requests-2317" / "gold.json").read_text())["base_commit"]
    # hand-read: hunk -13 replaces line 16, hunk -425 replaces line 428
    assert inst.context == [View("requests/sessions.py", 16, 16),
                            View("requests/sessions.py", 428, 428)]


def test_swe_bench_jsonl_and_parquet(tmp_path):
    recs = [
        {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "c1",
         "patch": "diff --git a/s.go b/s.go\n--- a/s.go\n+++ b/s.go\n"
                  "@@ -4,3 +4,4 @@\n l4\n l5\n+x\n l6\n"
                  "diff --git a/new.go b/new.go\nnew file mode 100644\n--- /dev/null\n"
                  "+++ b/new.go\n@@ -0,0 +1 @@\n+y\n"},
        {"instance_id": "o__r-2", "repo": "o/r", "base_commit": "c2",
         "patch": "--- a/s.go\n+++ b/s.go\n@@ -1,2 +1,2 @@\n a\n"},  # malformed
        {"instance_id": "o__r-3", "repo": "o/r", "base_commit": "c3", "patch": ""},
    ]
    jl = write_jsonl(tmp_path / "swe.jsonl", recs)
    pq.write_table(pa.Table.from_pylist(recs), tmp_path / "swe.parquet")
    for path in (jl, tmp_path / "swe.parquet"):
        gold = load_gold([path])
        (inst,) = gold.instances
        assert inst.context == [View("s.go", 5, 5), View("new.go", None, None)]
        assert inst.language == "go" and inst.gold_kind == "patch"
        assert [(p.line, p.field) for p in gold.problems] == [(2, "patch"), (3, "patch")]
        assert "hunk is shorter" in gold.problems[0].message


def test_patch_gold_round_trips_through_neutral_jsonl(tmp_path):
    rec = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "c1",
           "patch": "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n"
                    "+++ b/n.py\n@@ -0,0 +1 @@\n+y\n--- a/m.py\n+++ b/m.py\n@@ -2 +2 @@\n-a\n+b\n"}
    first = load_gold([write_jsonl(tmp_path / "swe.jsonl", [rec])])
    (inst,) = first.instances
    assert inst.context == [View("n.py", None, None), View("m.py", 2, 2)]
    again = load_gold([write_jsonl(tmp_path / "neutral.jsonl", [inst.to_json()])])
    assert again.problems == []
    assert without_origin(again.instances[0]) == without_origin(inst)
