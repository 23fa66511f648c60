"""One MCP result in each 2026 CLI agent's transport reads to the same views, through the real
MCP readers (``reading/mcp``, no stub): a Sourcegraph ``sg_read_file`` result in the shape of
``fixtures/mcp/sourcegraph.json``'s first case (lines 10 to 12 of ``src/w.c``; line 13 is the
trailer the server prints, not a line), carried as Codex (a 2026 rollout and ``codex exec
--json``), Gemini CLI (a chat recording) and OpenCode (an export) carry an MCP call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxeval.model import View
from ctxeval.reading import adapters

ARGS = {"repo": "github.com/sg-evals/widgets--0a1b2c3d", "path": "src/w.c", "startLine": 10,
        "endLine": 12}
RESULT = json.dumps({"content": "10: int f(void)\n11: {\n12: \n13: ",
                     "url": "https://sourcegraph.example.com/github.com/sg-evals/widgets--0a1b2c3d"
                            "@9f8e7d6c/-/blob/src/w.c%3FL10-12"}, separators=(",", ":"))
BLOCKS = [{"type": "text", "text": RESULT}]


def _codex_rollout() -> list[dict[str, Any]]:
    """codex-rs at 608b8b1c: the call in the ``mcp__<server>`` namespace, its output the
    ``Wall time`` header and the JSON of the content blocks, and the end event."""
    meta = {"id": "019e9a7c-0000-7000-8000-000000000001", "cwd": "/repo",
            "originator": "codex_cli_rs", "cli_version": "0.150.0"}
    return [
        {"timestamp": "2026-06-10T09:00:00.000Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-06-10T09:00:01.000Z", "type": "response_item", "payload": {
            "type": "function_call", "namespace": "mcp__sourcegraph", "name": "sg_read_file",
            "arguments": json.dumps(ARGS), "call_id": "call_sg1"}},
        {"timestamp": "2026-06-10T09:00:02.000Z", "type": "event_msg", "payload": {
            "type": "mcp_tool_call_end", "call_id": "call_sg1",
            "invocation": {"server": "sourcegraph", "tool": "sg_read_file", "arguments": ARGS},
            "duration": {"secs": 0, "nanos": 200000000},
            "result": {"Ok": {"content": BLOCKS, "isError": False}}}},
        {"timestamp": "2026-06-10T09:00:02.000Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_sg1",
            "output": "Wall time: 0.2000 seconds\nOutput:\n" + json.dumps(BLOCKS)}},
    ]


def _codex_exec() -> list[dict[str, Any]]:
    item = {"id": "item_1", "type": "mcp_tool_call", "server": "sourcegraph",
            "tool": "sg_read_file", "arguments": ARGS,
            "result": {"content": BLOCKS, "structured_content": None}, "error": None,
            "status": "completed"}
    return [{"type": "thread.started", "thread_id": "019e9b10-0000-7000-8000-000000000002"},
            {"type": "turn.started"}, {"type": "item.completed", "item": item},
            {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}}]


def _gemini_cli() -> list[dict[str, Any]]:
    """A 0.39+ recording: the call by its MCP name and display name, its result the
    ``functionResponse`` output."""
    call = {"id": "mcp_sourcegraph_sg_read_file_1", "name": "mcp_sourcegraph_sg_read_file",
            "args": ARGS, "status": "success",
            "displayName": "sg_read_file (sourcegraph MCP Server)",
            "result": [{"functionResponse": {"id": "mcp_sourcegraph_sg_read_file_1",
                                             "name": "mcp_sourcegraph_sg_read_file",
                                             "response": {"output": RESULT}}}]}
    return [{"sessionId": "s1", "projectHash": "0" * 64, "startTime": "2026-08-20T10:00:00Z",
             "kind": "main"},
            {"id": "m1", "type": "gemini", "timestamp": "2026-08-20T10:00:01Z", "content": "",
             "toolCalls": [call]}]


def _opencode() -> dict[str, Any]:
    part = {"id": "prt_1", "sessionID": "ses_1a2b3c4d5e6fAbCdEf012345678", "messageID": "msg_1",
            "type": "tool", "callID": "call_1", "tool": "sourcegraph_sg_read_file",
            "state": {"status": "completed", "input": ARGS, "output": RESULT, "title": "",
                      "metadata": {}, "time": {"start": 0, "end": 1}}}
    info = {"id": "msg_1", "sessionID": "ses_1a2b3c4d5e6fAbCdEf012345678", "role": "assistant",
            "path": {"cwd": "/repo", "root": "/repo"}, "modelID": "m"}
    return {"info": {"id": "ses_1a2b3c4d5e6fAbCdEf012345678", "directory": "/repo"},
            "messages": [{"info": info, "parts": [part]}]}


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.mark.parametrize(("name", "fmt", "content"), [
    ("rollout-2026-06-10T09-00-00-019e9a7c.jsonl", "codex", lambda: _lines(_codex_rollout())),
    ("codex-exec.jsonl", "codex-exec", lambda: _lines(_codex_exec())),
    ("session-2026-08-20T10-00-s1.jsonl", "gemini-cli", lambda: _lines(_gemini_cli())),
    ("export.json", "opencode", lambda: json.dumps(_opencode())),
])
def test_a_sourcegraph_read_reads_the_same_in_every_agent(tmp_path: Path, name: str, fmt: str,
                                                          content: Any) -> None:
    p = tmp_path / name
    p.write_text(content())
    mod = adapters.detect(p)
    assert fmt == mod.FORMAT
    (t,) = adapters.read(p, fmt)
    (step,) = t.steps
    assert step.tool == "mcp__sourcegraph__sg_read_file"
    assert step.views == [View("src/w.c", 10, 12)]
    assert not any("generic" in w for w in t.extra.get("read_warnings", []))
