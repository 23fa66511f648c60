"""Claude Code as Harbor runs it: the stream-json log, MCP tool calls, subagents, and the ATIF
rendering read as the same run.

The fixture is one small run written for these tests in the shapes of CodeContextBench's real
Harbor trials (Claude Code 2.1.63 with Sourcegraph's MCP server): ``claude-code.txt`` as
``claude -p --output-format stream-json`` writes it, ``trajectory.json`` as Harbor rendered
such runs in March 2026 (one step per content block, MCP results stripped, the subagent's steps
left out), and the same session as Claude Code's own session log (the agent's file and the
subagent's file under ``<session>/subagents/``). Every view expected is worked out by hand from
the fixture's text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters, inputs
from ctxeval.reading.adapters import ReadOptions, atif, claude_code, claude_code_stream

TRIAL = FIXTURES / "adapters" / "atif" / "claude-code-mcp__Qm7Xa2c"
STREAM = TRIAL / "agent" / "claude-code.txt"
SESSION = FIXTURES / "adapters" / "claude-code" / "mcp-subagent" / \
    "5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d.jsonl"
SUB = "Explore:toolu_03Agent"

#: (tool, subagent, views) of every step, from the fixture's text
EXPECTED = [
    ("mcp__sourcegraph__sg_keyword_search", None, [View("src/w.c", 40, 41)]),
    ("mcp__sourcegraph__sg_read_file", None, [View("src/w.c", 1, 5)]),
    ("Agent", None, []),  # the subagent's report is prose
    ("mcp__sourcegraph__sg_read_file", SUB, [View("src/u.c", 10, 12)]),
    ("Bash", SUB, []),  # ls
    ("mcp__filesystem__read_text_file", None,
     [View("notes.md", None, None, text=(("    return frob(0);", "}"),))]),  # a tail: placed
    ("Read", None, [View("notes.md", 1, 3)]),
    ("mcp__sourcegraph__sg_list_files", None, []),  # names files: mentions
    ("Write", None, []),
]


def _shape(t) -> list[tuple[str | None, str | None, list[View]]]:
    return [(s.tool, s.subagent, s.views) for s in t.steps]


def test_stream_json_log() -> None:
    assert adapters.detect(STREAM) is claude_code_stream
    (t,) = claude_code_stream.read(STREAM, ReadOptions())
    assert _shape(t) == EXPECTED
    assert [s.index for s in t.steps] == list(range(9))
    assert t.steps[8].edits == ["answer.json"]
    assert t.instance_id == "widgets-frob-callers-001"  # the Harbor trial's task
    assert (t.agent, t.model) == ("claude-code", "claude-haiku-4-5-20251001")
    assert t.extra["agent_version"] == "2.1.63"
    # the result record: input counts cache reads and writes; ten model calls (eight of the
    # agent's messages, two of the subagent's)
    assert t.usage is not None
    assert (t.usage.input_tokens, t.usage.output_tokens) == (51 + 7740 + 214900, 832)
    assert (t.usage.cost, t.usage.api_calls) == (0.0412, 10)
    assert "read_warnings" not in t.extra


def test_atif_with_its_stream_json_twin_reads_as_the_stream() -> None:
    """The end-to-end check: the ATIF run and its stream-json twin give the same views."""
    assert adapters.detect(TRIAL / "agent") is atif
    (a,) = atif.read(TRIAL / "agent", ReadOptions())
    (s,) = claude_code_stream.read(STREAM, ReadOptions())
    assert _shape(a) == _shape(s) == EXPECTED
    assert a.instance_id == s.instance_id == "widgets-frob-callers-001"


def test_atif_alone_lacks_only_what_harbor_dropped(tmp_path: Path) -> None:
    """Without the log, the ATIF reads the same MCP views, but not the subagent's steps
    (Harbor leaves them out) nor a result's leading blanks (Harbor strips them)."""
    agent = tmp_path / "agent"
    agent.mkdir()
    shutil.copy(TRIAL / "agent" / "trajectory.json", agent)
    (a,) = atif.read(agent, ReadOptions())
    main = [e for e in EXPECTED if e[1] is None]
    stripped = View("notes.md", None, None, text=(("return frob(0);", "}"),))
    assert _shape(a) == [(t, s, [stripped] if t == "mcp__filesystem__read_text_file" else v)
                         for t, s, v in main]


def test_a_twin_of_another_session_is_not_used(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    shutil.copytree(TRIAL / "agent", agent)
    text = STREAM.read_text().replace("5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d", "other-session")
    (agent / "claude-code.txt").write_text(text)
    (a,) = atif.read(agent, ReadOptions())
    assert [s.subagent for s in a.steps].count(SUB) == 0


def test_session_log_with_the_subagents_own_file() -> None:
    assert adapters.detect(SESSION) is claude_code
    (t,) = claude_code.read(SESSION, ReadOptions())
    assert _shape(t) == EXPECTED
    assert [s.index for s in t.steps] == list(range(9))
    sub = SESSION.parent / SESSION.stem / "subagents" / "agent-a1b2c3d4e5f607182.jsonl"
    with pytest.raises(AdapterError):  # read with its session, not on its own
        adapters.detect(sub)


def test_session_log_without_the_meta_file_links_by_agent_id(tmp_path: Path) -> None:
    root = tmp_path / "s"
    shutil.copytree(SESSION.parent, root)
    (root / SESSION.stem / "subagents" / "agent-a1b2c3d4e5f607182.meta.json").unlink()
    (t,) = claude_code.read(root / SESSION.name, ReadOptions())
    assert _shape(t) == EXPECTED  # the Agent result's toolUseResult names the agentId


def test_walking_a_trial_reads_it_once() -> None:
    for top, want in ((TRIAL, TRIAL / "agent"), (SESSION.parent, SESSION)):
        results = [inputs.read_input(p, e) for p, e in inputs.walk(top)]
        read = [r for r in results if r is not None]
        assert [r.path for r in read] == [want]
        assert [len(r.trajectories[0].steps) for r in read] == [9]


def test_inline_sidechain_records_are_marked(tmp_path: Path) -> None:
    """Older Claude Code wrote a subagent's records into the session file (isSidechain)."""
    lines = SESSION.read_text().splitlines()
    sub = (SESSION.parent / SESSION.stem / "subagents" /
           "agent-a1b2c3d4e5f607182.jsonl").read_text().splitlines()
    at = next(k for k, ln in enumerate(lines) if '"toolu_03Agent"' in ln) + 1
    f = tmp_path / "inline.jsonl"
    f.write_text("\n".join(lines[:at] + sub + lines[at:]) + "\n")
    (t,) = claude_code.read(f, ReadOptions())
    assert [(x.tool, x.views) for x in t.steps] == [(e[0], e[2]) for e in EXPECTED]
    assert [x.subagent for x in t.steps if x.subagent] == ["a1b2c3d4e5f607182"] * 2


def test_atif_sidechain_steps_are_put_back_in_time(tmp_path: Path) -> None:
    """Harbor writes sidechain events first; their steps go back after the step before them."""
    doc = json.loads((TRIAL / "agent" / "trajectory.json").read_text())
    steps = doc["steps"]
    side = {"step_id": 0, "timestamp": "2026-03-03T19:00:04.500Z", "source": "agent",
            "model_name": "claude-haiku-4-5-20251001", "message": "Executed Bash toolu_x",
            "tool_calls": [{"tool_call_id": "toolu_x", "function_name": "Bash",
                            "arguments": {"command": "ls /workspace"}}],
            "observation": {"results": [{"source_call_id": "toolu_x", "content": "notes.md"}]},
            "extra": {"is_sidechain": True, "agent_id": "a1b2c3d4e5f607182", "cwd": "/workspace"}}
    doc["steps"] = [steps[0], side, *steps[1:]]
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "trajectory.json").write_text(json.dumps(doc))
    (a,) = atif.read(agent, ReadOptions())
    assert [(s.tool, s.subagent) for s in a.steps][2:5] == [
        ("Agent", None), ("Bash", "a1b2c3d4e5f607182"), ("mcp__filesystem__read_text_file", None)]


def test_stream_json_detection_is_exclusive(tmp_path: Path) -> None:
    assert not claude_code.detect(STREAM, STREAM.read_bytes()[:65536])
    assert not claude_code_stream.detect(SESSION, SESSION.read_bytes()[:65536])
    first = json.loads(STREAM.read_text().splitlines()[0])
    first["tools"] = ["x" * 70000]
    long = tmp_path / "long.txt"
    long.write_text(json.dumps(first, separators=(",", ":")) + "\n")
    assert adapters.detect(long) is claude_code_stream


def test_stream_json_lines_that_are_not_json_are_skipped_and_said(tmp_path: Path) -> None:
    f = tmp_path / "claude-code.txt"
    f.write_text(STREAM.read_text() + "npm WARN something\n")
    (t,) = claude_code_stream.read(f, ReadOptions())
    assert _shape(t) == EXPECTED
    assert t.extra["read_warnings"] == ["claude-code stream: 1 lines that are not JSON skipped"]


def test_a_rate_limited_run_has_no_step(tmp_path: Path) -> None:
    """Shaped after real CodeContextBench trials stopped by a rate limit before any call."""
    f = tmp_path / "claude-code.txt"
    recs = [
        {"type": "system", "subtype": "init", "cwd": "/workspace", "session_id": "s",
         "tools": ["Bash"], "mcp_servers": [], "model": "claude-haiku-4-5-20251001",
         "claude_code_version": "2.1.63"},
        {"type": "assistant", "message": {"id": "m", "model": "<synthetic>", "role": "assistant",
                                          "content": [{"type": "text", "text": "limit"}],
                                          "usage": {"input_tokens": 0, "output_tokens": 0}},
         "parent_tool_use_id": None, "session_id": "s", "error": "rate_limit"},
        {"type": "result", "subtype": "success", "is_error": True, "session_id": "s",
         "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0}},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    (t,) = claude_code_stream.read(f, ReadOptions())
    assert t.steps == [] and t.instance_id == "s"
    assert t.usage is not None and t.usage.api_calls is None  # a synthetic message: no call


def test_trial_kept_in_a_folder_named_for_its_task(tmp_path: Path) -> None:
    """CodeContextBench keeps a trial as ``<task>/<task>_1/`` without Harbor's result.json
    beside the log: the task is the folder's name; a ``_1`` folder elsewhere names nothing."""
    from ctxeval.reading.adapters._sessions import harbor_task

    for parent, expected in (("frob-001", "frob-001"), ("runs", None)):
        agent = tmp_path / parent / "frob-001_1" / "agent"
        agent.mkdir(parents=True)
        shutil.copy(STREAM, agent / "claude-code.txt")
        assert harbor_task(agent / "claude-code.txt") == expected
        (t,) = claude_code_stream.read(agent / "claude-code.txt", ReadOptions())
        assert t.instance_id == (expected or "5b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d")
