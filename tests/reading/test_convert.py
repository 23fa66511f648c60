"""``ctxeval convert`` and ``inspect`` on the example, with and without the repository."""

from __future__ import annotations

import json

import orjson

from conftest import FIXTURES
from ctxeval.cli import main

EX = FIXTURES / "example"


def test_convert_round_trips_neutral(tmp_path):
    out = tmp_path / "t.jsonl"
    assert main(["convert", str(EX / "runs/agent-a.jsonl"), "--out", str(out)]) == 0
    got = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    want = [json.loads(x) for x in (EX / "runs/agent-a.jsonl").read_text().splitlines()]
    assert [g["instance_id"] for g in got] == [w["instance_id"] for w in want]
    assert [len(g["steps"]) for g in got] == [5, 3]
    assert got[0]["steps"][3]["views"] == want[0]["steps"][3]["views"]


def test_convert_with_repos_turns_symbol_views_into_lines(tmp_path, capsys):
    traj = json.loads((EX / "runs/agent-b.jsonl").read_text().splitlines()[0])
    traj["steps"].append({"index": 2, "views": [{"file": "/testbed/calc/nope.py",
                                                 "start_line": 1, "end_line": 2}],
                          "symbols": [{"file": "calc/ops.py", "name": "missing_fn"}]})
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(traj) + "\n")
    out = tmp_path / "t.jsonl"
    assert main(["convert", str(src), "--out", str(out), "--gold", str(EX / "gold.jsonl"),
                 "--repos", str(EX / "repos")]) == 0
    t = orjson.loads(out.read_bytes())
    # search_method(div): div is lines 16-18; Calculator.divide: lines 31-32
    assert t["steps"][0]["views"] == [{"file": "calc/ops.py", "start_line": 16, "end_line": 18}]
    assert t["steps"][0]["symbols"] == []
    assert t["steps"][1]["views"] == [{"file": "calc/ops.py", "start_line": 31, "end_line": 32}]
    # what cannot be resolved is kept and reported
    assert t["steps"][2]["symbols"] == [{"file": "calc/ops.py", "name": "missing_fn"}]
    err = capsys.readouterr().err
    assert "path not in the repository: /testbed/calc/nope.py" in err
    assert "definition not found: calc/ops.py:missing_fn" in err
    assert t["base_commit"] == "5a1c0e2b9f4d3a6c8e7b1d0f2a4c6e8b0d1f3a5c"


def test_inspect_shows_views(capsys):
    assert main(["inspect", str(EX / "runs/agent-a.jsonl"), "--instance",
                 "example__calc-2"]) == 0
    out = capsys.readouterr().out
    assert "steps=3" in out and "view calc/parse.py:18-26" in out
    assert main(["inspect", str(EX / "runs/agent-a.jsonl"), "--instance", "nope"]) == 1


def test_convert_reports_unreadable_input(tmp_path, capsys):
    bad = tmp_path / "x.traj"
    bad.write_text("{ not json")
    out = tmp_path / "o.jsonl"
    assert main(["convert", str(bad), "--out", str(out)]) == 1
    assert "x.traj" in capsys.readouterr().err


ADAPTERS = FIXTURES / "adapters"


def test_inspect_and_convert_atif_and_openhands_v1(tmp_path, capsys):
    assert main(["inspect", str(ADAPTERS / "atif" / "claude-code")]) == 0
    out = capsys.readouterr().out
    assert "(atif)" in out and "[6] Read (subagent explore-1)" in out  # numbered from 1
    assert "view tests/test_calc.py:8-9" in out
    assert main(["inspect", str(ADAPTERS / "openhands-v1")]) == 0
    out = capsys.readouterr().out
    assert "(openhands-v1)" in out and "view /workspace/repo/src/calc.py:10-12" in out
    dest = tmp_path / "t.jsonl"
    assert main(["convert", str(ADAPTERS / "atif"), str(ADAPTERS / "openhands-v1"),
                 "--out", str(dest)]) == 0
    got = {t["instance_id"]: t for t in map(orjson.loads, dest.read_bytes().splitlines())}
    # five ATIF runs (continuation and subagent files, and a stream-json log beside the ATIF
    # file, are parts of theirs) and one V1 one
    assert sorted(got) == ["9b1f4c2ad3e84f0c8a7e5d6b4c3a2f10", "cc-fixture-session",
                           "django__django-11099", "openhands-fixture", "terminus-fixture",
                           "widgets-frob-callers-001"]
    cc = got["cc-fixture-session"]
    assert [s.get("subagent") for s in cc["steps"]] == [None] * 5 + ["explore-1", None]
    assert got["terminus-fixture"]["usage"]["input_tokens"] == 2500
    # the neutral output reads back with its subagent marks
    back = tmp_path / "back.jsonl"
    assert main(["convert", str(dest), "--out", str(back)]) == 0
    again = {t["instance_id"]: t for t in map(orjson.loads, back.read_bytes().splitlines())}
    assert again["cc-fixture-session"]["steps"] == cc["steps"]
