"""Ranked localisation outputs: LocAgent's ``loc_outputs.jsonl``, the neutral ranked record
(``ctxeval-ranking/1``) and the ranking of an Agentless localisation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import CORPUS, FIXTURES, requires_shared

from ctxeval.errors import AdapterError
from ctxeval.model import Ranking, View
from ctxeval.reading.adapters import detect, read

LOC = FIXTURES / "locagent" / "loc_outputs.jsonl"
RANKED = FIXTURES / "adapters" / "ranked" / "ranked.jsonl"


def test_locagent_outputs_are_detected_before_agentless() -> None:
    assert detect(LOC).FORMAT == "locagent"


def test_locagent_rankings_are_kept_as_given() -> None:
    trajs = {t.instance_id: t for t in read(LOC)}
    one = trajs["toy__loc-1"]
    assert one.ranking == Ranking(["pkg/z.py", "pkg/a.py", "pkg/a.py"],
                                  ["pkg/a.py:A", "pkg/a.py:A", "pkg/a.py:B"],
                                  ["pkg/a.py:A.g", "pkg/a.py:A.g", "pkg/a.py:A.h",
                                   "pkg/a.py:A.h", "pkg/a.py:A.f"])
    step = one.steps[0]
    assert [v.file for v in step.views] == ["pkg/z.py", "pkg/a.py"]
    assert all(v.file_only for v in step.views)
    assert [s.name for s in step.symbols] == ["A", "B", "A.g", "A.h", "A.f"]
    assert one.final_context == step.views and one.agent == "locagent"
    assert trajs["toy__loc-3"].ranking == Ranking([], [], [])


def test_locagent_literal_strings_and_samples(tmp_path: Path) -> None:
    path = tmp_path / "loc_outputs.jsonl"
    path.write_text(json.dumps({
        "instance_id": "o__r-1", "found_files": "['a.py', 'b.py']",
        "found_modules": [["a.py:A"], ["b.py:B"]], "found_entities": "[]",
        "meta_data": {"repo": "o/r", "base_commit": "c" * 40}}) + "\n")
    [t] = read(path)
    assert t.ranking.files == ["a.py", "b.py"] and t.ranking.functions == []
    assert t.ranking.modules == ["a.py:A"]
    assert t.extra["read_warnings"] == ["found_modules: 2 samples not merged; the first one "
                                        "is read"]
    assert (t.repo, t.base_commit) == ("o/r", "c" * 40)
    path.write_text(json.dumps({"instance_id": "x", "found_files": 3,
                                "found_entities": []}) + "\n")
    with pytest.raises(AdapterError, match="found_files"):
        read(path)


def test_the_neutral_ranked_record() -> None:
    assert detect(RANKED).FORMAT == "ranked"
    one, two = read(RANKED)
    assert one.ranking.files == ["/testbed/calc/ops.py", "calc/cli.py", "calc/parse.py"]
    assert one.ranking.lines == [View("calc/ops.py", 15, 20), View("calc/parse.py", 1, 30)]
    assert one.run == "bm25" and one.usage.input_tokens == 120
    assert one.extra == {"score_kind": "bm25"}
    # levels left out are filled from the finer ones
    assert two.ranking.files is None and two.ranking.levels() == {
        "file": ["calc/parse.py"],
        "module": ["calc/parse.py:tokenize", "calc/parse.py:parse"],
        "function": ["calc/parse.py:tokenize", "calc/parse.py:parse"]}
    assert [v.file for v in two.steps[0].views] == ["calc/parse.py"]


@pytest.mark.parametrize("record, field", [
    ({"format": "ctxeval-ranking/1"}, "instance_id"),
    ({"format": "ctxeval-ranking/2", "instance_id": "x"}, "format"),
    ({"format": "ctxeval-ranking/1", "instance_id": "x", "functions": "a.py:f"},
     "record.functions"),
    ({"format": "ctxeval-ranking/1", "instance_id": "x", "lines": [{"start_line": 1}]},
     "record.lines.file"),
])
def test_bad_ranked_records_name_their_field(record: dict, field: str, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"format": "ctxeval-ranking/1", **record}) + "\n"
                    if "format" not in record else json.dumps(record) + "\n")
    with pytest.raises(AdapterError) as exc:
        read(path, "ranked")
    assert exc.value.field == field and exc.value.line == 1


def test_round_trip_through_the_neutral_trajectory() -> None:
    from ctxeval.reading.adapters.neutral import dumps, parse_record

    one = read(RANKED)[0]
    back = parse_record(json.loads(dumps(one)), "x", 1)
    assert back.ranking == one.ranking


@requires_shared
def test_agentless_localisation_is_a_ranking() -> None:
    [t] = read(CORPUS / "django__django-11742" / "trajs"
               / "agentless_v1_gpt4o__loc_outputs.jsonl")
    f = "django/db/models/fields/__init__.py"
    assert t.ranking.files[:2] == [f, "django/db/models/fields/mixins.py"]
    # the first sample's edit locations first, then later samples', then the related ones
    assert t.ranking.functions == [f"{f}:{n}" for n in (
        "Field._check_choices", "Field.__init__", "CharField._check_max_length_attribute",
        "CharField.check", "Field.check", "CharField.__init__")]
    assert t.ranking.modules == [f"{f}:Field", f"{f}:CharField"]
    assert t.ranking.lines[:3] == [View(f, 244, 244), View(f, 283, 283), View(f, 158, 158)]


def test_inspect_prints_the_ranking(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxeval.cli import main

    assert main(["inspect", str(RANKED), "--instance", "example__calc-2"]) == 0
    out = capsys.readouterr().out
    assert "ranking (declared, best first):" in out
    assert "function: calc/parse.py:tokenize, calc/parse.py:parse" in out
