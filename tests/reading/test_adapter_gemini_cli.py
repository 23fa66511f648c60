"""Gemini CLI chat recordings: JSON lines (0.39 on) and the single JSON document (0.2 to 0.38),
fixtures written from ``google-gemini/gemini-cli``'s recorder and tools (see
``adapters/gemini_cli.py``), every view computed by hand from the observation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters, mcp
from ctxeval.reading.adapters import ReadOptions, _sessions, claude_code, codex, gemini_cli
from ctxeval.reading.mcp import McpReading

DIR = FIXTURES / "adapters" / "gemini-cli"
JSONL = DIR / "session-2026-08-20T10-00-s1-0c6f.jsonl"
LEGACY = DIR / "session-2025-10-16T08-00-7d1e2f30.json"


@pytest.fixture
def mcp_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def fake(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
             cwd: str | None = None, structured: Any = None) -> McpReading:
        seen.append({"server": server, "tool": tool, "args": args, "text": text,
                     "is_error": is_error, "cwd": cwd})
        where = f"{cwd}/src/calc.py" if cwd else "src/calc.py"
        return McpReading(views=[] if is_error else [View(where, 2, 2)])

    monkeypatch.setattr(_sessions, "read_call", fake)
    monkeypatch.setattr(mcp, "read_call", fake)  # McpRun.observe reads through it
    return seen


def test_jsonl_session(mcp_calls: list[dict[str, Any]]) -> None:
    assert adapters.detect(JSONL) is gemini_cli
    (t,) = gemini_cli.read(JSONL, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == [
        "read_file", "read_file", "grep_search", "glob", "run_shell_command", "read_file",
        "mcp__sourcegraph__keyword_search", "replace", "run_shell_command", "read_many_files"]
    # the project root: the directory whose SHA-256 is the recorded projectHash
    assert t.extra["cwd"] == "/repo"
    # read_file without a truncation notice printed the whole file; the first result recorded
    # is kept (the $set that masked it later is not what the model saw when it called)
    assert s[0].views == [View("src/calc.py", 1, None)]
    assert s[1].views == [View("src/big.py", 100, 102)]  # "Showing lines 100-102 of 400"
    # grep_search: paths relative to the searched directory, hits and context lines
    assert s[2].views == [View("src/calc.py", 4, 6)]
    assert s[3].views == []  # glob: a listing
    # the Output: section inside <untrusted_context>, without the PGID line
    assert s[4].views == [View("src/calc.py", 2, 2), View("src/calc.py", 6, 6)]
    assert s[5].views == []  # status error
    assert mcp_calls == [{"server": "sourcegraph", "tool": "keyword_search",
                          "args": {"query": "return a - b"},
                          "text": "src/calc.py:2:    return a - b", "is_error": False,
                          "cwd": "/repo"}]
    assert s[6].views == [View("src/calc.py", 2, 2)]
    # replace: an edit, its "Here is the updated code:" snippet the file after the edit
    assert s[7].edits == ["src/calc.py"]
    assert s[7].views == [View("src/calc.py", None, None, post_edit=True)]
    # cut to the threshold: head from line 1 (line 3 in part), the tail's text to place
    assert s[8].views == [View("src/big.py", 1, 3),
                          View("src/big.py", None, None, text=(("99", "x400 = 400"),),
                               partial=("start",))]
    # read_many_files: a whole file (after the edit), and a file's first lines (2 printed)
    assert s[9].views == [View("src/calc.py", 1, None, post_edit=True), View("README.md", 1, 2)]
    assert t.model == "gemini-3-pro-preview"
    assert (s[0].usage.input_tokens, s[0].usage.output_tokens) == (8000, 180)  # + thoughts
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.api_calls) == (38000, 830, 4)


def test_legacy_json_document(mcp_calls: list[dict[str, Any]]) -> None:
    assert adapters.detect(LEGACY) is gemini_cli
    (t,) = gemini_cli.read(LEGACY, ReadOptions(instance_id="o__r-1"))
    s = t.steps
    assert t.instance_id == "o__r-1" and t.extra["cwd"] == "/testbed"
    assert [x.tool for x in s] == ["read_file", "search_file_content", "run_shell_command",
                                   "mcp__deepwiki__ask_question", "run_shell_command",
                                   "write_file", "read_file"]
    assert s[0].views == [View("src/calc.py", 1, 3)]  # absolute_path, "Showing lines 1-3"
    assert s[1].views == [View("src/calc.py", 5, 5)]  # path "/testbed/src", File: calc.py
    # Command:/Directory:/Output:/Error:/Exit Code:/... : only the Output section is printed
    assert s[2].views == [View("src/calc.py", 5, 6)]
    # an MCP tool registered under its own name: known by its display name
    assert [(c["server"], c["tool"], c["text"]) for c in mcp_calls] == [
        ("deepwiki", "ask_question", "mul multiplies two numbers (src/calc.py).")]
    assert s[4].views == []  # Exit Code: 1, No such file
    assert s[5].edits == ["src/calc.py"]
    assert s[6].views == [View("src/calc.py", 1, None, post_edit=True)]
    assert t.model == "gemini-2.5-pro"
    assert (t.usage.input_tokens, t.usage.output_tokens) == (31000, 525)


def test_read_file_outputs() -> None:
    f = "a.py"
    assert gemini_cli.read_file_views(f, "x\ny\n") == [View(f, 1, None)]
    assert gemini_cli.read_file_views(f, "") == []
    assert gemini_cli.read_file_views(f, "Cannot display content of binary file: a.bin") == []
    # before August 2025
    old = ("[File content truncated: showing lines 11-12 of 90 total lines. Use offset/limit "
           "parameters to view more.]\nk = 1\nm = 2")
    assert gemini_cli.read_file_views(f, old) == [View(f, 11, 12)]
    partial = ("[File content partially truncated: some lines exceeded maximum length of 2000 "
               "characters.]\nx\n")
    assert gemini_cli.read_file_views(f, partial) == [View(f, 1, None)]
    # the notice's range, but no more lines than were printed
    short = ("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 5-9 of 7 "
             "total lines.\nAction: ...\n\n--- FILE CONTENT (truncated) ---\na\nb\nc")
    assert gemini_cli.read_file_views(f, short) == [View(f, 5, 7)]
    # a range reaching the end of a file that ends with a newline: "of 9" counts the empty
    # string after it, printed last; the file has 8 lines
    tail = ("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 7-9 of 9 "
            "total lines.\nAction: ...\n\n--- FILE CONTENT (truncated) ---\ng\nh\n")
    assert gemini_cli.read_file_views(f, tail) == [View(f, 7, 8)]
    old_tail = ("[File content truncated: showing lines 2-3 of 3 total lines. Use offset/limit "
                "parameters to view more.]\nb\n")
    assert gemini_cli.read_file_views(f, old_tail) == [View(f, 2, 2)]
    # an empty line that is not the last counted one is the file's
    mid = ("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2 of 9 "
           "total lines.\nAction: ...\n\n--- FILE CONTENT (truncated) ---\na\n")
    assert gemini_cli.read_file_views(f, mid) == [View(f, 1, 2)]
    # project context appended by the tool is not the file's
    jit = "x\ny\n\n--- Newly Discovered Project Context ---\nUse tabs.\n--- End Project Context ---"
    assert gemini_cli.read_file_views(f, jit) == [View(f, 1, None)]


@pytest.mark.parametrize(("text", "expected"), [
    # June 2026 on
    ("<untrusted_context>\nOutput: a\nb\nExit Code: 2\nProcess Group PGID: 7\n"
     "</untrusted_context>", ("a\nb", 2, False)),
    # April 2026
    ("Output: (empty)\nProcess Group PGID: 7", ("", 0, False)),
    # September 2025 to March 2026
    ("Command: ls\nDirectory: (root)\nOutput: x\nError: (none)\nExit Code: 0\nSignal: (none)\n"
     "Background PIDs: (none)\nProcess Group PGID: 9", ("x", 0, False)),
    # mid-2025: stdout and stderr apart
    ("Command: cat a\nDirectory: (root)\nStdout: l1\nl2\nStderr: (empty)\nError: (none)\n"
     "Exit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 9",
     ("l1\nl2", 0, False)),
    ("Command was cancelled by user before it could complete. Below is the output before it "
     "was cancelled:\nl1\nl2", ("l1\nl2", None, True)),
    ("Command moved to background (PID: 12). Output hidden. Press Ctrl+B to view.",
     (None, None, False)),
])
def test_shell_output_layouts(text: str, expected: tuple[Any, ...]) -> None:
    assert gemini_cli.shell_output(text) == expected


def test_mcp_names() -> None:
    assert gemini_cli.mcp_name("read_file") is None
    assert gemini_cli.mcp_name("keyword_search", "keyword_search (sourcegraph MCP Server)") \
        == ("sourcegraph", "keyword_search")
    assert gemini_cli.mcp_name("mcp_github_get_file_contents") == ("github",
                                                                    "get_file_contents")
    assert gemini_cli.mcp_name("github__search_code") == ("github", "search_code")
    assert gemini_cli.mcp_name("keyword_search") is None  # no display name: not known as MCP


def test_project_root() -> None:
    h = hashlib.sha256(b"/w/repo").hexdigest()
    assert gemini_cli.project_root(h, ["/w/repo/src/a.py"]) == "/w/repo"
    assert gemini_cli.project_root(h, ["src/a.py"], ["/w/repo"]) == "/w/repo"
    assert gemini_cli.project_root(h, ["/elsewhere/a.py"]) is None
    assert gemini_cli.project_root(None, ["/w/repo/a.py"]) is None


def _jsonl(tmp_path: Path, *records: dict[str, Any]) -> Path:
    p = tmp_path / "session-x.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_rewinds_and_subagent_files(tmp_path: Path) -> None:
    head = {"sessionId": "s", "projectHash": "0" * 64}
    call = {"id": "c1", "name": "read_file", "args": {"file_path": "a.py"}, "status": "success",
            "result": [{"functionResponse": {"id": "c1", "name": "read_file",
                                             "response": {"output": "x\n"}}}]}
    p = _jsonl(tmp_path, head, {"id": "u", "type": "user", "content": "go"},
               {"id": "g", "type": "gemini", "content": "", "toolCalls": [call]},
               {"$rewindTo": "u"})
    (t,) = gemini_cli.read(p, ReadOptions())
    assert [s.views for s in t.steps] == [[View("a.py", 1, None)]]  # seen before the rewind
    assert any("rewound" in w for w in t.extra["read_warnings"])
    sub = _jsonl(tmp_path, {**head, "kind": "subagent"})
    assert not gemini_cli.detect(sub, sub.read_bytes())  # a part of its parent's run


def test_detection_is_exclusive(tmp_path: Path) -> None:
    for f in (JSONL, LEGACY):
        head = f.read_bytes()[:adapters.HEAD_BYTES]
        assert not codex.detect(f, head) and not claude_code.detect(f, head)
    claude = FIXTURES / "adapters" / "claude-code" / "session.jsonl"
    assert not gemini_cli.detect(claude, claude.read_bytes())
    atif = tmp_path / "trajectory.json"
    atif.write_text(json.dumps({"schema_version": "ATIF-v1.7", "session_id": "s",
                                "agent": {"name": "gemini-cli"}, "steps": []}))
    assert not gemini_cli.detect(atif, atif.read_bytes())
    bad = tmp_path / "session-bad.json"
    bad.write_text('{"sessionId": "s", "projectHash": "' + "0" * 64 + '", "messages": 3}')
    with pytest.raises(AdapterError, match="messages"):
        gemini_cli.read(bad, ReadOptions())


def _harbor_atif(session: Path) -> dict[str, Any]:
    """The ATIF document Harbor's Gemini CLI converter writes for a chat recording (its rules:
    a step per message, ``function_name``/``arguments`` from each tool call, an observation's
    content the ``functionResponse``'s ``output``, none when it has none)."""
    meta, messages, _first, _rewinds = gemini_cli._load(session)
    steps: list[dict[str, Any]] = []
    for m in messages:
        if m["type"] == "user":
            steps.append({"step_id": len(steps) + 1, "source": "user", "message": "x"})
        elif m["type"] == "gemini":
            st: dict[str, Any] = {"step_id": len(steps) + 1, "source": "agent", "message": ""}
            calls = m.get("toolCalls") or []
            if calls:
                st["tool_calls"] = [{"tool_call_id": c["id"], "function_name": c["name"],
                                     "arguments": c["args"]} for c in calls]
                results = []
                for c in calls:
                    out = None
                    for r in c.get("result") or []:
                        out = r["functionResponse"]["response"].get("output") or out
                    results.append({"source_call_id": c["id"], "content": out})
                st["observation"] = {"results": results}
            steps.append(st)
    return {"schema_version": "ATIF-v1.7", "session_id": meta["sessionId"],
            "agent": {"name": "gemini-cli", "version": "0.56.0"}, "steps": steps}


def test_atif_rendering_reads_as_natively(tmp_path: Path,
                                          mcp_calls: list[dict[str, Any]]) -> None:
    """The legacy fixture rendered as Harbor renders it reads step for step as the native file,
    except the MCP call known only by its display name (ATIF does not keep it)."""
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(_harbor_atif(LEGACY)))
    (atif,) = adapters.read(p)
    (native,) = gemini_cli.read(LEGACY, ReadOptions())
    assert len(atif.steps) == len(native.steps)
    for a, n in zip(atif.steps, native.steps, strict=True):
        if n.tool == "mcp__deepwiki__ask_question":
            assert (a.tool, a.views) == ("ask_question", [])
            continue
        assert (a.tool, a.views, a.edits) == (n.tool, n.views, n.edits)


def test_atif_rendering_of_a_masked_result(tmp_path: Path,
                                           mcp_calls: list[dict[str, Any]]) -> None:
    """Harbor renders the last version of each message: the masked copy of the first read
    shows nothing (with a warning) instead of being read as file text."""
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(_harbor_atif(JSONL)))
    (atif,) = adapters.read(p)
    (native,) = gemini_cli.read(JSONL, ReadOptions())
    assert atif.steps[0].views == [] and native.steps[0].views == [View("src/calc.py", 1, None)]
    assert any("masked" in w for w in atif.extra["read_warnings"])
    assert [s.views for s in atif.steps[1:]] == [s.views for s in native.steps[1:]]


# --- the API history: /chat share JSON and /chat save checkpoints --------------------------------

SHARE = DIR / "chat-share-calc.json"
CHECKPOINT = DIR / "checkpoint-calc.json"


def test_a_shared_history_is_read_with_windows_paths() -> None:
    """``/chat share x.json`` (a list of Content) of a session on Windows, shaped after real
    histories of March 2026: the workspace directory comes from the first user turn, paths
    written with backslashes or as absolute Windows paths are the same files as relative ones."""
    assert adapters.detect(SHARE) is gemini_cli
    (t,) = gemini_cli.read(SHARE, ReadOptions())
    assert t.extra["cwd"] == "C:/dev/calc"
    s = t.steps
    assert [x.tool for x in s] == ["read_file", "read_file", "grep_search", "read_file", "replace",
                                   "replace", "write_file", "run_shell_command", "read_file"]
    assert s[0].views == [View("src/calc.py", 1, None)]  # the whole file
    # "Showing lines 399-401 of 401": line 401 is the empty string after the final newline
    assert s[1].views == [View("big.py", 399, 400)]
    # the hits after the threshold's cut belong to a file whose "File:" line was cut away
    assert s[2].views == [View("src/calc.py", 1, 1), View("src/calc.py", 5, 5),
                          View("big.py", 2, 2)]
    assert s[3].views == [] and "masked" in t.extra["read_warnings"][0]
    assert (s[4].edits, s[4].views) == (["src/calc.py"], [View("src/calc.py", None, None,
                                                               post_edit=True)])
    assert (s[5].edits, s[5].views) == ([], [])  # "Failed to edit": nothing changed or shown
    # write_file prints what it wrote: the file after the edit
    assert (s[6].edits, s[6].views) == (["notes.md"], [View("notes.md", None, None,
                                                            post_edit=True)])
    assert s[7].views == [] and s[7].action.startswith("$env:PYTHONPATH")
    assert s[8].views == [View("src/calc.py", 1, None, post_edit=True)]
    assert t.usage is None and t.model is None


def test_a_checkpoint_is_read_like_a_shared_history() -> None:
    """``/chat save`` writes ``{"history": [...], "authType": ...}`` (a bare list before)."""
    assert adapters.detect(CHECKPOINT) is gemini_cli
    (t,) = gemini_cli.read(CHECKPOINT, ReadOptions())
    (full,) = gemini_cli.read(SHARE, ReadOptions())
    assert [(x.tool, x.views) for x in t.steps] == [(x.tool, x.views) for x in full.steps[:3]]


def test_history_calls_pair_with_responses_by_id_then_by_name(tmp_path: Path) -> None:
    history = [
        {"role": "user", "parts": [{"text": "I'm currently working in the directory: /r"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "read_file", "args": {"file_path": "/r/a.py"}}},
            {"functionCall": {"id": "g1", "name": "grep_search", "args": {"pattern": "x"}}},
            {"functionCall": {"name": "read_file", "args": {"file_path": "/r/b.py"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "g1", "name": "grep_search", "response": {
                "output": "Found 1 match\n---\nFile: a.py\nL3: x\n---"}}},
            {"functionResponse": {"name": "read_file", "response": {"output": "a1\na2\n"}}},
            {"functionResponse": {"name": "read_file", "response": {"error": "File not found."}}}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "read_file", "args": {"file_path": "c.py"}}}]},
    ]
    p = tmp_path / "history.json"
    p.write_text(json.dumps(history))
    (t,) = gemini_cli.read(p, ReadOptions())
    assert t.extra["cwd"] == "/r"  # the pre-2026 "I'm currently working in the directory"
    assert [(x.tool, x.views) for x in t.steps] == [
        ("read_file", [View("a.py", 1, None)]), ("grep_search", [View("a.py", 3, 3)]),
        ("read_file", []),  # its response is an error
        ("read_file", [])]  # the last call got no response
    assert t.extra["read_warnings"] == ["step 3 (read_file): no response recorded"]


@pytest.mark.parametrize("head", [
    b'[\n  {\n    "role": "user",\n    "parts": [',
    b'{\n  "history": [\n    {\n      "role": "user",\n      "parts": [',
])
def test_history_detection(tmp_path: Path, head: bytes) -> None:
    p = tmp_path / "h.json"
    p.write_bytes(head + b"]}]" + (b"}" if head.startswith(b"{") else b""))
    assert gemini_cli.detect(p, head)
    assert not gemini_cli.detect(p, b'[{"role": "user", "content": "hi"}]')  # not Content


def test_a_masked_edit_result_still_made_the_edit(tmp_path: Path) -> None:
    """Masking replaces an old result by a preview of its JSON (``{"output": ...`` or
    ``{"error": ...``): the edit was made unless the preview is of an error, so a later read of
    the file is after the edit (a real history, FritzSavira/mcp-lektor 260307, step 14)."""
    def masked(key: str) -> str:
        return (f'<tool_output_masked>\n{{\n  "{key}": "Successfully modified file: /r/a.py (1 '
                'replacements). Here is the\n... [TRUNCATED] ...\n..."\n}\n\nOutput too large. '
                'Full output available at: /t/replace_1.txt\n</tool_output_masked>')
    edit = {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}
    history = [
        {"role": "user", "parts": [{"text": "- **Workspace Directories:**\n  - /r\n"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "replace", "args": edit}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "replace", "response": {
            "output": masked("output")}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "replace", "args": edit}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "replace", "response": {
            "output": masked("error")}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_file",
                                                      "args": {"file_path": "a.py"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {
            "output": "y\n"}}}]},
    ]
    p = tmp_path / "history.json"
    p.write_text(json.dumps(history))
    (t,) = gemini_cli.read(p, ReadOptions())
    assert [(x.edits, x.views) for x in t.steps] == [
        (["a.py"], []), ([], []), ([], [View("a.py", 1, None, post_edit=True)])]
    assert len(t.extra["read_warnings"]) == 2
