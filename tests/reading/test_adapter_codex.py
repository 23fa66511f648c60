"""Codex CLI rollouts as the current ``codex-rs`` writes them (2026) and as the late-2025
releases wrote them: fixtures written from the source (see ``adapters/codex.py``), every view
computed by hand from the observation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters, mcp
from ctxeval.reading.adapters import ReadOptions, _sessions, codex
from ctxeval.reading.mcp import McpReading

DIR = FIXTURES / "adapters" / "codex"
CURRENT = DIR / "rollout-2026-06-10T09-00-00-019e9a7c.jsonl"
LATE_2025 = DIR / "rollout-2025-12-15T10-00-00-019b2a11.jsonl"


@pytest.fixture
def mcp_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call the adapter hands to ``reading.mcp.read_call``; each answers one view, so
    that the test sees the reading reach the step (the readers themselves are tested with
    ``reading/mcp``)."""
    seen: list[dict[str, Any]] = []

    def fake(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
             cwd: str | None = None, structured: Any = None) -> McpReading:
        seen.append({"server": server, "tool": tool, "args": args, "text": text,
                     "is_error": is_error, "cwd": cwd, "structured": structured})
        return McpReading(views=[] if is_error else [View(f"{cwd}/from-{tool}.py", 1, 2)],
                          warnings=[f"seen {server}/{tool}"])

    monkeypatch.setattr(_sessions, "read_call", fake)
    monkeypatch.setattr(mcp, "read_call", fake)  # McpRun.observe reads through it
    return seen


def test_current_rollout(mcp_calls: list[dict[str, Any]]) -> None:
    assert adapters.detect(CURRENT) is codex
    (t,) = codex.read(CURRENT, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == [
        "exec_command", "mcp__sourcegraph__keyword_search", "mcp__filesystem__read_text_file",
        "mcp__files__get_file", "exec_command", "exec_command", "write_stdin", "apply_patch",
        "exec_command"]
    # exec_command's header (Chunk ID, Wall time, Process exited with code 0) is not printed
    assert s[0].views == [View("src/calc.py", 1, 4)]
    # the MCP calls: the server and tool as configured (from the mcp_tool_call_end event),
    # the text of the content blocks, the error flag, the structured content
    assert [(c["server"], c["tool"], c["is_error"]) for c in mcp_calls] == [
        ("sourcegraph", "keyword_search", False), ("filesystem", "read_text_file", True),
        ("files", "get_file", False)]
    assert mcp_calls[0]["text"] == ("src/calc.py:1: def add(a, b):\n"
                                    "src/calc.py:2:     return a - b")
    assert mcp_calls[0]["args"] == {"query": "def add repo:^github.com/o/r$"}
    assert mcp_calls[0]["cwd"] == "/repo" and mcp_calls[0]["structured"] is None
    assert mcp_calls[2]["structured"] == {"path": "src/calc.py", "startLine": 1,
                                          "text": "def add(a, b):"}
    assert json.loads(mcp_calls[2]["text"]) == mcp_calls[2]["structured"]  # shown as its JSON
    # the reading's views reach the step, relative to the session's cwd; an error shows nothing
    assert s[1].views == [View("from-keyword_search.py", 1, 2)]
    assert s[2].views == []
    # cut in the middle by tokens: the head from line 1 (its last line printed in part), the
    # tail kept as text to place (its first line printed in part)
    assert s[4].views == [View("src/big.py", 1, 3),
                          View("src/big.py", None, None, text=(("99", "x400 = 400"),),
                               partial=("start",))]
    # still running when it answered: nothing printed is a file's; the later poll is not read
    assert (s[5].views, s[6].views) == ([], [])
    assert s[7].edits == ["src/calc.py"]
    assert s[8].views == [View("src/calc.py", 1, 2, post_edit=True)]  # after the patch
    assert t.model == "gpt-5.5-codex" and t.extra["cwd"] == "/repo"
    warnings = t.extra["read_warnings"]
    assert "seen sourcegraph/keyword_search" in warnings  # collected by the run's McpRun
    assert any("write_stdin" in w and "session 3" in w for w in warnings)
    assert (s[0].usage.input_tokens, s[8].usage.input_tokens) == (1000, 1900)
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.api_calls) == (15400, 260, 10)


def test_late_2025_rollout(mcp_calls: list[dict[str, Any]]) -> None:
    (t,) = codex.read(LATE_2025, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == ["list_dir", "grep_files", "read_file", "read_file",
                                   "read_file", "mcp__deepwiki__ask_question",
                                   "mcp__deepwiki__read_wiki_contents", "shell_command"]
    assert (s[0].views, s[1].views) == ([], [])  # listings
    assert s[2].views == [View("src/calc.py", 4, 6)]  # L4..L6, L6 an empty line
    assert s[3].views == [View("src/util/helpers.py", 10, 13)]  # indentation mode
    assert s[4].views == []  # "failed to read file: ..."
    # "deepwiki__ask_question": the server__tool name of late 2025, the JSON of its blocks
    assert [(c["server"], c["tool"], c["text"], c["is_error"]) for c in mcp_calls] == [
        ("deepwiki", "ask_question", "mul is defined in src/calc.py.", False),
        ("deepwiki", "read_wiki_contents", "", True)]  # "err: ..." is a failure
    assert s[5].views == [View("from-ask_question.py", 1, 2)] and s[6].views == []
    # cut by characters: head lines 1-4 (line 4 in part), the tail's line in part
    assert s[7].views == [View("src/calc.py", 1, 4),
                          View("src/calc.py", None, None, text=(("    return 0",),),
                               partial=("start",))]


def test_mcp_names_of_each_version() -> None:
    assert codex.mcp_name("keyword_search", "mcp__sourcegraph") == ("sourcegraph",
                                                                     "keyword_search")
    assert codex.mcp_name("tool", "mcp__my_server__") == ("my_server", "tool")
    assert codex.mcp_name("spawn_agent", "agents") is None  # another namespace
    assert codex.mcp_name("mcp__github__get_file_contents") == ("github", "get_file_contents")
    assert codex.mcp_name("github__OAI_CODEX_MCP__search_code") == ("github", "search_code")
    assert codex.mcp_name("deepwiki__ask_question") == ("deepwiki", "ask_question")
    for native in ("shell", "exec_command", "read_file", "apply_patch", "update_plan",
                   "write_stdin", "grep_files"):
        assert codex.mcp_name(native) is None, native


def _rollout(tmp_path: Path, *records: dict[str, Any]) -> Path:
    p = tmp_path / "rollout-x.jsonl"
    head = {"timestamp": "t", "type": "session_meta", "payload": {"cwd": "/w"}}
    p.write_text("".join(json.dumps(r) + "\n" for r in (head, *records)))
    return p


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "t", "type": "response_item", "payload": payload}


def test_mcp_output_shapes(tmp_path: Path, mcp_calls: list[dict[str, Any]]) -> None:
    blocks = [{"type": "text", "text": "a\nb"},
              {"type": "resource", "resource": {"uri": "file:///w/x.py", "text": "c"}},
              {"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    cut = ('Wall time: 0.1 seconds\nOutput:\n[{"type":"text","text":"l1\\nl2\\nl…40 tokens '
           'truncated…9\\nl10"},{"type":"text","text":"more"}]')
    p = _rollout(
        tmp_path,
        _item({"type": "function_call", "name": "mcp__s__a", "arguments": "{}",
               "call_id": "1"}),
        _item({"type": "function_call_output", "call_id": "1", "output": json.dumps(blocks)}),
        # an image came back: content items, the first one Codex's header
        _item({"type": "function_call", "name": "mcp__s__b", "arguments": "{}",
               "call_id": "2"}),
        _item({"type": "function_call_output", "call_id": "2", "output": [
            {"type": "input_text", "text": "Wall time: 0.5000 seconds\nOutput:"},
            {"type": "input_text", "text": "shown"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}),
        # the JSON cut by Codex's truncation: each side decoded, the marker kept
        _item({"type": "function_call", "name": "mcp__s__c", "arguments": "{}",
               "call_id": "3"}),
        _item({"type": "function_call_output", "call_id": "3", "output": cut}),
        # the cut fell inside an escape: the JSON no longer parses, each side is decoded
        _item({"type": "function_call", "name": "mcp__s__e", "arguments": "{}",
               "call_id": "5"}),
        _item({"type": "function_call_output", "call_id": "5",
               "output": '[{"type":"text","text":"l1\\…5 tokens truncated…n9"},'
                         '{"type":"text","text":"x"}]'}),
        # an empty result
        _item({"type": "function_call", "name": "mcp__s__d", "arguments": "{}",
               "call_id": "4"}),
        _item({"type": "function_call_output", "call_id": "4",
               "output": "Wall time: 0.0100 seconds\nOutput:"}),
    )
    (t,) = codex.read(p, ReadOptions())
    assert [c["text"] for c in mcp_calls] == ["a\nb\nc", "shown",
                                             "l1\nl2\nl…40 tokens truncated…9\nl10\nmore",
                                             "l1…5 tokens truncated…n9\nx", ""]
    assert not any(c["is_error"] for c in mcp_calls)
    assert sum("cut the middle" in w for w in t.extra["read_warnings"]) == 2


def test_atif_codex_mcp_call(tmp_path: Path, mcp_calls: list[dict[str, Any]]) -> None:
    """Harbor's ATIF rendering of a Codex run keeps the call's name (not its namespace): an
    ``mcp__server__tool`` name reaches the MCP reader."""
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s",
           "agent": {"name": "codex", "version": "0.98.0", "model_name": "gpt-5.2-codex"},
           "steps": [{"step_id": 1, "source": "agent", "tool_calls": [
               {"tool_call_id": "c1", "function_name": "mcp__sg__read_file",
                "arguments": {"path": "a.py"}}],
               "observation": {"results": [{"source_call_id": "c1",
                                            "content": '[{"type":"text","text":"x = 1"}]'}]}}]}
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(doc))
    (t,) = adapters.read(p)
    assert mcp_calls == [{"server": "sg", "tool": "read_file", "args": {"path": "a.py"},
                          "text": "x = 1", "is_error": False, "cwd": None, "structured": None}]
    assert t.steps[0].views == [View("None/from-read_file.py", 1, 2)]
    assert "seen sg/read_file" in t.extra["read_warnings"]


def test_zstd_rollout(tmp_path: Path) -> None:
    p = tmp_path / "rollout-2026-06-10T09-00-00-x.jsonl.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)
    assert adapters.detect(p) is codex
    try:
        import zstandard  # noqa: F401
    except ImportError:
        with pytest.raises(AdapterError, match="zstd -d"):
            codex.read(p, ReadOptions())
    else:  # pragma: no cover - only where zstandard is installed
        with pytest.raises(AdapterError, match="cannot decompress"):
            codex.read(p, ReadOptions())
    other = tmp_path / "notes.bin"
    other.write_bytes(p.read_bytes())
    assert not codex.detect(other, other.read_bytes())
