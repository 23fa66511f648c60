"""OpenCode sessions in each of their forms (export document, ``run --format json`` events, JSON
storage tree, SQLite database): fixtures written from OpenCode's message and tool sources (see
``adapters/opencode.py``), every view computed by hand from the tool output."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters, mcp
from ctxeval.reading.adapters import (
    ReadOptions,
    _sessions,
    claude_code,
    codex,
    codex_exec,
    gemini_cli,
    opencode,
)
from ctxeval.reading.mcp import McpReading

DIR = FIXTURES / "adapters" / "opencode"
EXPORT = DIR / "export-ses_1f2e3d4c5b6aXyZ0123456789.json"
EVENTS = DIR / "opencode-run.jsonl"
STORAGE = DIR / "data" / "storage"  # as in ~/.local/share/opencode/storage


@pytest.fixture
def mcp_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def fake(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
             cwd: str | None = None, structured: Any = None) -> McpReading:
        seen.append({"server": server, "tool": tool, "args": args, "text": text,
                     "is_error": is_error, "cwd": cwd})
        return McpReading(views=[View("/repo/src/calc.py", 1, 2)])

    monkeypatch.setattr(_sessions, "read_call", fake)
    monkeypatch.setattr(mcp, "read_call", fake)  # McpRun.observe reads through it
    return seen


def _check_export_steps(t: Any) -> None:
    s = t.steps
    assert [x.tool for x in s] == ["read", "grep", "bash", "mcp__sourcegraph__keyword_search",
                                   "read", "edit", "bash", "glob", "apply_patch"]
    # read: the numbered lines of <content>; the reminder after </content> is not the file's
    assert s[0].views == [View("src/calc.py", 1, 6)]
    assert s[1].views == [View("src/calc.py", 2, 2), View("src/calc.py", 6, 6)]
    # cat -n cut by OpenCode's truncation: the kept head (whole lines), not the hint
    assert s[2].views == [View("src/big.py", 1, 2)]
    assert s[3].views == [View("src/calc.py", 1, 2)]  # the MCP reading, made relative
    assert s[4].views == []  # a failed read
    assert s[5].edits == ["src/calc.py"]
    assert s[6].views == [View("src/calc.py", 1, 2, post_edit=True)]
    assert s[7].views == []  # glob: a listing
    assert s[8].edits == ["tests/test_calc.py"]
    assert t.model == "claude-sonnet-4-6" and t.extra["cwd"] == "/repo"
    # each step-finish is a model call, charged to that call's first tool step
    assert (s[0].usage.input_tokens, s[0].usage.output_tokens, s[0].usage.cost) == (6000, 90,
                                                                                  0.021)
    assert s[1].usage is None and s[5].usage.input_tokens == 10500
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.api_calls) == (37400, 310, 4)
    assert t.usage.cost == pytest.approx(0.044)


def test_export(mcp_calls: list[dict[str, Any]]) -> None:
    assert adapters.detect(EXPORT) is opencode
    (t,) = opencode.read(EXPORT, ReadOptions())
    _check_export_steps(t)
    # the MCP tool "sourcegraph_keyword_search": server and tool split at the first "_"; the
    # result's text blocks as OpenCode joined them (a blank line between blocks)
    assert mcp_calls == [{"server": "sourcegraph", "tool": "keyword_search",
                          "args": {"query": "def add"},
                          "text": "src/calc.py:1: def add(a, b):\n\nsrc/calc.py:2:     "
                                  "return a - b", "is_error": False, "cwd": "/repo"}]
    assert t.extra["session_id"] == "ses_1f2e3d4c5b6aXyZ0123456789"
    assert t.extra["agent_version"] == "1.17.4"


def _database(path: Path) -> Path:
    """The export fixture as OpenCode 1.2+ stores it: one row per session, message and part,
    ``data`` the JSON without the ids (``session.sql.ts``)."""
    doc = json.loads(EXPORT.read_text())
    db = path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, "
        "slug TEXT, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, "
        "time_created INTEGER, time_updated INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, "
        "time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT "
        "NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL);")
    info = doc["info"]
    con.execute("INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
                (info["id"], info["projectID"], None, info["slug"], info["directory"],
                 info["title"], info["version"], 1, 2))
    for k, m in enumerate(doc["messages"]):
        mi = {x: y for x, y in m["info"].items() if x not in ("id", "sessionID")}
        con.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                    (m["info"]["id"], info["id"], k, k, json.dumps(mi)))
        for p in m["parts"]:
            pd = {x: y for x, y in p.items() if x not in ("id", "sessionID", "messageID")}
            con.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                        (p["id"], p["messageID"], info["id"], k, k, json.dumps(pd)))
    con.commit()
    con.close()
    return db


def test_database(tmp_path: Path, mcp_calls: list[dict[str, Any]]) -> None:
    db = _database(tmp_path)
    assert adapters.detect(db) is opencode
    assert adapters.detect(tmp_path) is opencode  # the data directory holding it
    (t,) = opencode.read(db, ReadOptions())
    assert t.instance_id == "ses_1f2e3d4c5b6aXyZ0123456789"
    _check_export_steps(t)
    (u,) = opencode.read(db, ReadOptions(instance_id="o__r-9"))
    assert u.instance_id == "o__r-9"


def test_event_stream() -> None:
    assert adapters.detect(EVENTS) is opencode
    (t,) = opencode.read(EVENTS, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == ["read", "bash", "bash", "task"]
    # 2025 numbering (00004| ...): lines 4-5; the working directory, not in the stream, inferred
    assert s[0].views == [View("src/calc.py", 4, 5)]
    assert t.extra["cwd"] == "/testbed"
    # the older "(Command timed out ...)" note is not printed text
    assert s[1].views == [View("src/calc.py", 5, 5)]
    assert s[2].views == []  # interrupted: its output so far was test output
    assert (t.usage.input_tokens, t.usage.api_calls) == (9000, 2)


def test_storage_tree_with_a_subagent() -> None:
    assert adapters.detect(STORAGE) is opencode
    (t,) = opencode.read(STORAGE, ReadOptions())  # the child session is part of its parent
    s = t.steps
    assert [(x.tool, x.subagent) for x in s] == [
        ("task", None), ("grep", "ses_7c000000000000000000000002"), ("read", None)]
    assert s[1].views == [View("src/calc.py", 5, 5)]
    assert s[2].views == [View("src/calc.py", 5, 5)]  # "(Showing lines 5-5 of 6 ...)"
    assert (t.usage.input_tokens, t.usage.api_calls) == (2800, 2)
    assert t.model == "gpt-5.1-codex"


@pytest.mark.parametrize(("output", "views"), [
    ("<file>\n00001| a\n00002| b\n</file>", [View("f.py", 1, 2)]),
    ("<path>/r/f.py</path>\n<type>file</type>\n<content>7: a\n8: b\n\n(End of file - total 8 "
     "lines)\n</content>", [View("f.py", 7, 8)]),  # the first line on <content>'s own line
    ("<path>/r/d</path>\n<type>directory</type>\n<entries>\na.py\n</entries>", []),
    ("Image read successfully", []),
    ("<file>\n123456| deep\n</file>", [View("f.py", 123456, 123456)]),
    # text.split("\n") of a file ending with a newline: the printed empty line 3 is not the
    # file's (a file of two lines, as in every end-of-file read of the real sessions measured)
    ("<file>\n00001| a\n00002| b\n00003| \n\n(End of file - total 3 lines)\n</file>",
     [View("f.py", 1, 2)]),
    # a file whose last line is empty: two empty strings at the end, the first one is its line
    ("<file>\n00002| b\n00003| \n00004| \n\n(End of file - total 4 lines)\n</file>",
     [View("f.py", 2, 3)]),
    # an empty line before "File has more lines" is a line of the file
    ("<file>\n00001| a\n00002| \n\n(File has more lines. Use 'offset' parameter to read "
     "beyond line 2)\n</file>", [View("f.py", 1, 2)]),
    # an empty file: nothing
    ("<file>\n00001| \n\n(End of file - total 1 lines)\n</file>", []),
    # readline (the 42: form) prints no such line: an empty last line is the file's
    ("<content>1: a\n2: \n\n(End of file - total 2 lines)\n</content>", [View("f.py", 1, 2)]),
])
def test_read_outputs(output: str, views: list[View]) -> None:
    assert opencode.read_views("f.py", output) == views


@pytest.mark.parametrize(("output", "expected"), [
    ("a\nb\n\n...120 lines truncated...\n\nThe tool call succeeded but the output was "
     "truncated. Full output saved to: /x/tool_1\nUse Grep to search the full content.",
     ("a\nb", True)),
    ("...120 lines truncated...\n\nThe tool call succeeded but the output was truncated. Full "
     "output saved to: /x/tool_1\nUse Grep.\n\ny\nz", ("\n[... omitted 0 of 0 lines ...]\n\ny\nz",
                                                     False)),
    ("...output truncated...\n\nFull output saved to: /x/t\n\ny\nz",
     ("\n[... omitted 0 of 0 lines ...]\n\ny\nz", False)),
    ("x\n\n<bash_metadata>\nbash tool terminated command after exceeding timeout 120000 ms\n"
     "</bash_metadata>", ("x", True)),
    ("x\n\n(Output was truncated due to length limit)", ("x", True)),
    ("(no output)", ("", False)),
])
def test_bash_outputs(output: str, expected: tuple[str, bool]) -> None:
    assert opencode.bash_output(output) == expected


def test_a_tail_kept_is_read_from_the_source() -> None:
    """OpenCode kept only the last lines of a ``cat``: they are text to place, not lines 1-2."""
    text, cut = opencode.bash_output("...output truncated...\n\nFull output saved to: /x\n\n"
                                     "y = 1\nz = 2")
    from ctxeval.reading.shell import read_shell
    assert read_shell("cat a.py", text, truncated=cut).views == [
        View("a.py", None, None, text=(("y = 1", "z = 2"),))]


def test_mcp_names() -> None:
    assert opencode.mcp_name("read") is None and opencode.mcp_name("todowrite") is None
    assert opencode.mcp_name("github_get_file_contents") == ("github", "get_file_contents")
    assert opencode.mcp_name("context7_resolve-library-id") == ("context7",
                                                                "resolve-library-id")
    assert opencode.mcp_name("webfetch") is None


def test_detection_is_exclusive(tmp_path: Path) -> None:
    mods = (opencode, codex, codex_exec, gemini_cli, claude_code)
    for f in (EXPORT, EVENTS):
        head = f.read_bytes()[:adapters.HEAD_BYTES]
        assert [m.FORMAT for m in mods if m.detect(f, head)] == ["opencode"]
    for other in (*(FIXTURES / "adapters" / "gemini-cli").iterdir(),
                  *(FIXTURES / "adapters" / "codex").iterdir(),
                  FIXTURES / "adapters" / "claude-code" / "session.jsonl"):
        assert not opencode.detect(other, other.read_bytes())
    assert not opencode.detect(tmp_path, b"")  # an empty directory
    bad = tmp_path / "export.json"
    bad.write_text(json.dumps({"info": {"id": "ses_x"}, "messages": [3]}))
    with pytest.raises(AdapterError) as e:
        opencode.read(bad, ReadOptions())
    assert e.value.field == "messages[0].info"
    other_db = tmp_path / "other.db"
    con = sqlite3.connect(other_db)
    con.execute("CREATE TABLE session_part_message (x)")
    con.commit()
    con.close()
    with pytest.raises(AdapterError, match="not an OpenCode database"):
        opencode.read(other_db, ReadOptions())


def test_atif_rendering_reads_as_natively(tmp_path: Path,
                                          mcp_calls: list[dict[str, Any]]) -> None:
    """The export rendered as Harbor's OpenCode converter renders a run (tool parts grouped by
    model call, observation content the output, none for a failed call) reads step for step as
    natively, except the exit codes ATIF drops (none of these steps depends on one)."""
    doc = json.loads(EXPORT.read_text())
    steps: list[dict[str, Any]] = []
    for m in doc["messages"]:
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for p in m["parts"]:
            if p["type"] == "tool":
                calls.append({"tool_call_id": p["callID"], "function_name": p["tool"],
                              "arguments": p["state"]["input"]})
                if p["state"].get("output") is not None:
                    results.append({"source_call_id": p["callID"],
                                    "content": str(p["state"]["output"])})
            elif p["type"] == "step-finish" and calls:
                steps.append({"step_id": len(steps) + 1, "source": "agent", "message": "",
                              "tool_calls": calls, "observation": {"results": results}})
                calls, results = [], []
    atif = {"schema_version": "ATIF-v1.6", "session_id": "s",
            "agent": {"name": "opencode", "version": "1.17.4"}, "steps": steps}
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(atif))
    (a,) = adapters.read(p)
    (n,) = opencode.read(EXPORT, ReadOptions())
    assert [(x.tool, x.views, x.edits) for x in a.steps] == \
        [(x.tool, x.views, x.edits) for x in n.steps]


# --- OpenCode's Markdown transcripts, rebuilt for the accuracy study --------------------------

_NEW = """## Assistant

**Tool: read**

**Input:**
```json
{
  "filePath": "/r/a.py"
}
```

**Output:**
```
<path>/r/a.py</path>
<type>file</type>
<content>1: x = 1
2: y = 2

(End of file - total 2 lines)
</content>
```

**Tool: bash**

**Input:**
```json
{
  "command": "head -3 notes.md"
}
```

**Output:**
```
# Notes
```py
print(1)
```

_Thinking:_

done
"""

_OLD = """## Assistant

```
Tool: read

**Input:**
```json
{
  "filePath": "/r/gone.py"
}
```

**Error:**
```
Error: File not found: /r/gone.py
```
```

```
Tool: bash

**Input:**
```json
{
  "command": "cat notes.md"
}
```

**Output:**
```
a
```
b
```
```
"""


def test_the_transcript_rebuild_of_the_accuracy_study() -> None:
    """``benchmarks/adapter_accuracy/opencode_transcript.py`` turns OpenCode's ``/export``
    Markdown back into an export document: outputs that print fence lines of their own are told
    from their closing fence (both layouts), errors stay errors."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "adapter_accuracy"))
    import opencode_transcript as ot

    new = ot.calls(_NEW)
    assert [(c.tool, c.input, c.error) for c in new] == [
        ("read", {"filePath": "/r/a.py"}, None), ("bash", {"command": "head -3 notes.md"}, None)]
    assert new[1].output == "# Notes\n```py\nprint(1)"
    old = ot.calls(_OLD)
    assert [(c.tool, c.output, c.error) for c in old] == [
        ("read", None, "Error: File not found: /r/gone.py"), ("bash", "a\n```\nb", None)]
    doc = ot.export(_NEW + _OLD, "/r")
    assert [m["parts"][0]["state"]["status"] for m in doc["messages"]] == [
        "completed", "completed", "error", "completed"]
