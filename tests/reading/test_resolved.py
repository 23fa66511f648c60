"""Resolved status from results files: hand-written shapes and the corpus's real reports."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, requires_shared
from ctxeval.errors import InputError
from ctxeval.reading.resolved import load_resolved


def test_per_instance_harness_report(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"x__y-1": {"resolved": True}}))
    assert load_resolved(tmp_path / "a.json").get("x__y-1") is True
    assert load_resolved(tmp_path / "a.json").get("x__y-2") is None


def test_flat_report_takes_the_id_from_the_name(tmp_path):
    (tmp_path / "x__y-3.report.json").write_text(json.dumps({"resolved": False}))
    assert load_resolved(tmp_path).get("x__y-3") is False


def test_run_summary_marks_unlisted_as_unresolved(tmp_path):
    f = tmp_path / "final.json"
    f.write_text(json.dumps({"resolved_ids": ["a-1"], "unresolved_ids": ["a-2"]}))
    t = load_resolved(f)
    assert (t.get("a-1"), t.get("a-2"), t.get("a-3")) == (True, False, False)


def test_bad_results_file_names_the_file(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"something": 1}))
    with pytest.raises(InputError, match=r"r\.json"):
        load_resolved(f)


@requires_shared
def test_corpus_reports():
    per_instance = load_resolved(CORPUS / "results/mini-swe-agent_gemini3pro")
    assert per_instance.get("psf__requests-2317") is False
    run = load_resolved(CORPUS / "results/swe-agent-0.x_cost_2_1.final_report.json")
    assert run.get("django__django-11099") is True
    assert run.get("psf__requests-2317") is False
