"""Agentless adapter: the real django__django-11742 localisation output, fixtures, and fuzzing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ may or may not be a package, depending on the checkout
    from conftest import CORPUS, requires_shared
except ImportError:  # pragma: no cover
    from conftest import CORPUS, requires_shared

from ctxeval.errors import AdapterError
from ctxeval.model import SymbolRef, View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, agentless

LOC = CORPUS / "django__django-11742" / "trajs" / "agentless_v1_gpt4o__loc_outputs.jsonl"
FIELDS = "django/db/models/fields/__init__.py"


@requires_shared
def test_corpus_detected_and_read() -> None:
    assert adapters.detect(LOC) is agentless
    (t,) = agentless.read(LOC, ReadOptions())
    assert t.instance_id == "django__django-11742"
    assert t.agent == "agentless"
    assert len(t.steps) == 1
    step = t.steps[0]
    # found_files: 4 files, each a file-level view.
    assert [v for v in step.views if v.start_line is None] == [
        View(FIELDS, None, None), View("django/db/models/fields/mixins.py", None, None),
        View("django/db/models/fields/related.py", None, None),
        View("django/db/models/fields/reverse_related.py", None, None)]
    # found_edit_locs, 4 samples merged: 244+283+158 | 244+960 | 244+283+954 | 244+245+960.
    assert [(v.start_line, v.end_line) for v in step.views if v.start_line is not None] == [
        (158, 158), (244, 245), (283, 283), (954, 954), (960, 960)]
    assert {v.file for v in step.views if v.start_line is not None} == {FIELDS}
    # found_related_locs (class:/function:) plus the function: entries of the edit locations.
    assert step.symbols == [SymbolRef(FIELDS, n) for n in (
        "Field", "Field.__init__", "Field._check_choices", "Field.check", "CharField",
        "CharField.__init__", "CharField.check", "CharField._check_max_length_attribute")]
    assert t.final_context == step.views
    assert t.final_symbols == step.symbols
    # prompt tokens 4747 + 6528 + 9157, completion tokens 50 + 63 + 207.
    assert (t.usage.input_tokens, t.usage.output_tokens) == (20432, 320)
    assert t.usage.cost is None
    assert t.extra["stage_usage"]["edit_loc_traj"]["input_tokens"] == 9157
    assert t.model_patch is None


def _write(tmp_path: Path, records: list[Any], name: str = "loc_outputs.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def test_dict_shape_ranges_and_variables(tmp_path: Path) -> None:
    p = _write(tmp_path, [{
        "instance_id": "o__r-1",
        "found_files": ["a.py", "b.py"],
        "found_related_locs": {"a.py": ["class: A\nvariable: X"], "b.py": ["function: f"]},
        "found_edit_locs": {"a.py": ["lines: 20-10\nline: 21", "line: 40"], "b.py": [""]},
        "file_traj": {"usage": {"prompt_tokens": 7, "completion_tokens": 1}},
    }, {"instance_id": "o__r-2", "found_files": []}])
    t1, t2 = agentless.read(p, ReadOptions())
    assert t1.steps[0].views == [View("a.py", None, None), View("b.py", None, None),
                                 View("a.py", 10, 21), View("a.py", 40, 40)]
    assert t1.steps[0].symbols == [SymbolRef("a.py", "A"), SymbolRef("a.py", "X"),
                                   SymbolRef("b.py", "f")]
    assert (t1.usage.input_tokens, t1.usage.output_tokens) == (7, 1)
    assert t2.instance_id == "o__r-2" and t2.steps[0].views == [] and t2.usage is None


def test_single_sample_list_aligned_with_files(tmp_path: Path) -> None:
    p = _write(tmp_path, [{"instance_id": "x", "found_files": ["a.py", "b.py"],
                           "found_edit_locs": [["line: 3"], ["function: g\nline: 9"]]}])
    (t,) = agentless.read(p, ReadOptions())
    assert [v for v in t.steps[0].views if v.start_line] == [View("a.py", 3, 3),
                                                             View("b.py", 9, 9)]
    assert t.steps[0].symbols == [SymbolRef("b.py", "g")]


def test_samples_as_dicts_are_merged(tmp_path: Path) -> None:
    p = _write(tmp_path, [{"instance_id": "x", "found_files": ["a.py"],
                           "found_edit_locs": [{"a.py": ["line: 5"]}, {"a.py": ["line: 6"]},
                                               {"a.py": ["line: 9"]}]}])
    (t,) = agentless.read(p, ReadOptions())
    assert [v for v in t.steps[0].views if v.start_line] == [View("a.py", 5, 6),
                                                             View("a.py", 9, 9)]


def test_errors_name_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"instance_id": "a", "found_files": []}\n{"instance_id": \n', encoding="utf-8")
    with pytest.raises(AdapterError) as e:
        agentless.read(p, ReadOptions())
    assert e.value.line == 2
    p = _write(tmp_path, [{"found_files": ["a.py"]}])
    with pytest.raises(AdapterError) as e:
        agentless.read(p, ReadOptions())
    assert e.value.field == "instance_id"
    (t,) = agentless.read(p, ReadOptions(instance_id="given"))
    assert t.instance_id == "given"
    p = _write(tmp_path, [{"instance_id": "a", "found_files": ["a.py"],
                           "found_related_locs": [["x"], ["y"]]}])
    with pytest.raises(AdapterError) as e:
        agentless.read(p, ReadOptions())
    assert e.value.field == "found_related_locs"


def test_detect_rejects_other_json(tmp_path: Path) -> None:
    other = _write(tmp_path, [{"instance_id": "a", "history": []}], "openhands.jsonl")
    assert not agentless.detect(other, other.read_bytes())
    quoted = _write(tmp_path, [{"instance_id": "a", "text": 'say "found_files": []'}], "q.jsonl")
    assert not agentless.detect(quoted, quoted.read_bytes())
    assert not agentless.detect(tmp_path, b"")


def _mutate(obj: Any, rng: random.Random) -> Any:
    """Replace one random node of ``obj`` by a value of another type."""
    junk = [None, 1, -3, "x", [], {}, [1], {"a": 1}, True, 2.5]
    if isinstance(obj, dict) and obj and rng.random() < 0.8:
        k = rng.choice(list(obj))
        return {**obj, k: _mutate(obj[k], rng)}
    if isinstance(obj, list) and obj and rng.random() < 0.8:
        i = rng.randrange(len(obj))
        return [*obj[:i], _mutate(obj[i], rng), *obj[i + 1:]]
    return rng.choice(junk)


def _outcome(p: Path) -> str:
    """Read ``p``: "ok" or "error" -- any exception other than AdapterError fails the test."""
    try:
        agentless.read(p, ReadOptions())
    except AdapterError:
        return "error"
    return "ok"


@requires_shared
def test_fuzz_truncated_and_mutated(tmp_path: Path) -> None:
    raw = LOC.read_bytes()
    rng = random.Random(11742)
    p = tmp_path / "loc_outputs.jsonl"
    seen = set()
    for cut in [0, 1, 10, 100, len(raw) // 3, len(raw) // 2, len(raw) - 2]:
        p.write_bytes(raw[:cut])
        seen.add(_outcome(p))
    rec = json.loads(raw)
    for _ in range(300):
        p.write_text(json.dumps(_mutate(rec, rng)) + "\n", encoding="utf-8")
        seen.add(_outcome(p))
    assert seen == {"ok", "error"}
