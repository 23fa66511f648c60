"""``codex exec --json`` event streams: a fixture written from ``codex-rs/exec``'s event types,
views computed by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters, mcp
from ctxeval.reading.adapters import ReadOptions, _sessions, codex, codex_exec
from ctxeval.reading.mcp import McpReading

FIX = FIXTURES / "adapters" / "codex-exec" / "codex-exec.jsonl"


def test_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str, str, bool]] = []

    def fake(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
             cwd: str | None = None, structured: Any = None) -> McpReading:
        seen.append((server, tool, text, is_error))
        return McpReading(views=[] if is_error else [View("/repo/src/calc.py", 1, 2)])

    monkeypatch.setattr(_sessions, "read_call", fake)
    monkeypatch.setattr(mcp, "read_call", fake)  # McpRun.observe reads through it
    assert adapters.detect(FIX) is codex_exec
    assert not codex.detect(FIX, FIX.read_bytes())
    (t,) = codex_exec.read(FIX, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == ["command_execution", "mcp__sourcegraph__read_file",
                                   "mcp__sourcegraph__keyword_search", "command_execution",
                                   "apply_patch", "command_execution"]
    assert s[0].action == "nl -ba src/calc.py | sed -n '1,3p'"  # /bin/bash -lc unwrapped
    assert s[0].views == [View("src/calc.py", 1, 3)]
    assert seen == [("sourcegraph", "read_file", "1\tdef add(a, b):\n2\t    return a - b",
                     False),
                    ("sourcegraph", "keyword_search", "", True)]  # a failed call
    # the working directory, inferred from the absolute file change and the relative views
    assert t.extra["cwd"] == "/repo"
    assert s[1].views == [View("src/calc.py", 1, 2)] and s[2].views == []
    assert s[3].views == []  # cat: No such file
    assert s[4].edits == ["src/calc.py"]
    assert s[5].views == [View("src/calc.py", 1, 2, post_edit=True)]
    assert (t.usage.input_tokens, t.usage.output_tokens) == (24763, 122)
    assert s[0].usage.input_tokens == 24763  # the turn's growth, on its first step
    assert t.extra["thread_id"] == "019e9b10-7a2e-7c31-8d55-1f0e2c3a4b5d"


def _stream(tmp_path: Path, *events: dict[str, Any]) -> Path:
    p = tmp_path / "run.jsonl"
    p.write_text("".join(json.dumps(e) + "\n" for e in events))
    return p


def test_long_outputs_and_usage_growth(tmp_path: Path) -> None:
    big = "".join(f"{i}\n" for i in range(1, 3001))
    p = _stream(
        tmp_path, {"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "command_execution",
                                            "command": "/bin/bash -lc 'cat -n big.txt'",
                                            "aggregated_output": "", "exit_code": 0,
                                            "status": "completed"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                            "command": "/bin/bash -lc 'cat big.txt'",
                                            "aggregated_output": big, "exit_code": 0,
                                            "status": "completed"}},
        {"type": "turn.completed", "usage": {"input_tokens": 250, "output_tokens": 30}},
    )
    (t,) = codex_exec.read(p, ReadOptions())
    assert t.steps[1].views == [View("big.txt", 1, None)]
    assert any("head and tail" in w for w in t.extra["read_warnings"])
    assert [(s.usage.input_tokens, s.usage.output_tokens) for s in t.steps] == [(100, 10),
                                                                               (150, 20)]
    assert (t.usage.input_tokens, t.usage.output_tokens) == (250, 30)


def test_detection(tmp_path: Path) -> None:
    p = _stream(tmp_path, {"type": "turn.started"},
                {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                                    "text": "hi"}})
    assert codex_exec.detect(p, p.read_bytes())
    q = _stream(tmp_path, {"type": "turn.started"}, {"type": "user", "x": 1})
    assert not codex_exec.detect(q, q.read_bytes())
    for other in (FIXTURES / "adapters" / "codex").iterdir():
        assert not codex_exec.detect(other, other.read_bytes())
    bad = _stream(tmp_path, {"type": "thread.started", "thread_id": "t"},
                  {"type": "item.completed", "item": 3})
    with pytest.raises(AdapterError) as e:
        codex_exec.read(bad, ReadOptions())
    assert (e.value.line, e.value.field) == (2, "item")


def test_a_stream_shaped_after_a_real_run() -> None:
    """Shapes of a real ``codex exec --json`` stream (June 2026, ZihanZhou26/hydrotope_benchmark
    ``three_minus_single/codex_events.jsonl``; the fixture is hand-written, not copied):
    ``/usr/bin/bash -lc "..."`` (the argv joined
    with double quotes), three commands started together and completed out of order, a failed
    command that printed its working directory, a ``sed`` range past the end of the file."""
    path = FIXTURES / "adapters" / "codex-exec" / "codex-exec-parallel.jsonl"
    (t,) = codex_exec.read(path, ReadOptions())
    assert [(s.action, s.views) for s in t.steps] == [
        ("sed -n '1,240p' AGENTS.md", [View("AGENTS.md", 1, 4)]),  # 4 lines printed: all of it
        ("pwd && rg --files -g '!*'", []),  # a directory and a file listing
        ("sed -n '1,260p' question.md", [View("question.md", 1, 7)]),
        ("sed -n '261,560p' question.md", []),  # past the end: nothing printed
        ("find . -maxdepth 3 -type f -print", []),
    ]
    assert (t.usage.input_tokens, t.usage.output_tokens) == (9000, 300)
