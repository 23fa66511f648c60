"""LocAgent / Loc-Bench localisation gold (``truth/gold/locagent.py``): each spelling read as
LocAgent's own code reads it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES

from ctxeval.truth.gold import load_gold

CASES = FIXTURES / "locagent"


def test_file_changes_keep_their_repeats() -> None:
    gold = load_gold([CASES / "gt_location.jsonl"])
    loc = gold.get("toy__loc-8").locations
    assert loc.origin == "file_changes"
    assert loc.files == ("pkg/g.py", "pkg/g.py")
    assert loc.modules == ("pkg/g.py:G", "pkg/g.py:G", "pkg/g.py:G")
    assert loc.functions == ("pkg/g.py:G.p", "pkg/g.py:G.q", "pkg/g.py:G.r")
    inst = gold.get("toy__loc-6")
    assert inst.locations.files == ("pkg/e.py",) and inst.locations.functions == ()
    # no patch: the gold files are file-level gold context
    assert inst.gold_kind == "context" and [v.file_only for v in inst.context] == [True]
    assert (inst.repo, inst.base_commit) == ("toy/loc", "c0ffee" + "0" * 32 + "10")


def test_edit_functions_derive_files_and_modules_once() -> None:
    gold = load_gold([CASES / "dataset.jsonl"])
    loc = gold.get("toy__loc-8").locations
    assert loc.origin == "edit_functions"
    assert loc.files == ("pkg/g.py",)
    assert loc.modules == ("pkg/g.py:G",)
    assert loc.functions == ("pkg/g.py:G.p", "pkg/g.py:G.q", "pkg/g.py:G.r", "pkg/g.py:G.p")
    # an instance without any edit function has no gold at all: left out, and said so
    assert gold.get("toy__loc-6") is None
    assert any("toy__loc-6" in p.message for p in gold.problems)


def test_literal_strings_and_the_outputs_own_gold(tmp_path: Path) -> None:
    rows = [
        {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40,
         "edit_functions": "['x.py:A.f', 'x.py:g']"},
        {"instance_id": "o__r-2", "found_files": ["y.py"],
         "meta_data": {"repo": "o/r", "base_commit": "b" * 40,
                       "patch": "diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n"
                                "@@ -1,1 +1,1 @@\n-a\n+b\n",
                       "gt_file_changes": [{"file": "y.py", "changes": {
                           "edited_modules": ["y.py:C", "y.py:C"],
                           "edited_entities": ["y.py:C.m", "y.py:C.n"]}}]}},
        {"instance_id": "o__r-3", "file_changes": [{"file": "z.py",
                                                     "changes": {"edited_entities": 3}}]},
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = load_gold([path])
    assert gold.get("o__r-1").locations.functions == ("x.py:A.f", "x.py:g")
    assert gold.get("o__r-1").locations.modules == ("x.py:A", "x.py:g")
    two = gold.get("o__r-2")
    # read as the dataset's edit_functions: modules derived from the entities, once each
    assert two.locations.origin == "meta_data.gt_file_changes"
    assert two.locations.modules == ("y.py:C",)
    assert (two.repo, two.gold_kind, two.context[0].start_line) == ("o/r", "patch", 1)
    assert gold.get("o__r-3") is None
    bad = [p for p in gold.problems if p.field == "file_changes[0].changes.edited_entities"]
    assert bad and bad[0].line == 3
