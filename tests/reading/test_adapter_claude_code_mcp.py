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
from ctxeval.reading.mcp import McpRun

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
    # '     3→' is the empty string after the final newline, which Claude Code numbers too
    ("Read", None, [View("notes.md", 1, 2)]),
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


def test_atif_usage_counts_each_message_once(tmp_path: Path) -> None:
    """Harbor writes one step per content block, each with its message's metrics, and sums
    them all into final_metrics (234495 prompt tokens here: the first message twice). Each
    message is counted once, with its cache writes and its largest completion count; worked
    out by hand from the fixture's metrics: inputs 25010+5000, 25408+400, 25706+300,
    26305+300, 26505+200, 26654+150, 26804+100, 27093+90; outputs 3, 120, 200, 80, 60, 40,
    300, 25."""
    agent = tmp_path / "agent"
    agent.mkdir()
    shutil.copy(TRIAL / "agent" / "trajectory.json", agent)
    (a,) = atif.read(agent, ReadOptions())
    assert a.usage is not None
    assert (a.usage.input_tokens, a.usage.output_tokens, a.usage.cost, a.usage.api_calls) == \
        (216025, 828, None, 8)
    # the first message (a thinking block and the keyword search) is charged to its call
    assert a.steps[0].usage is not None and a.steps[0].usage.input_tokens == 30010
    assert a.steps[1].usage is not None and a.steps[1].usage.input_tokens == 25808
    # beside its stream-json log the run's usage is the log's result record, subagent included
    (b,) = atif.read(TRIAL / "agent", ReadOptions())
    (s,) = claude_code_stream.read(STREAM, ReadOptions())
    assert b.usage == s.usage
    assert b.usage is not None and (b.usage.cost, b.usage.api_calls) == (0.0412, 10)


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


# --- results Claude Code saved to a file instead of showing them -----------------------------

SAVED = ("/logs/agent/sessions/projects/-workspace/9f1e/tool-results/"
         "mcp-sourcegraph-sg_read_file-1772566253364.txt")
#: Claude Code 2.1.63's answer to an MCP result over its limit (shape of CodeContextBench's
#: iwlwifi MCP run, call 2)
OVER = (f"Error: result (72,878 characters) exceeds maximum allowed tokens. Output has been saved "
        f"to {SAVED}.\nFormat: JSON with schema: {{content: string, url: string}}\nUse offset and "
        "limit parameters to read specific portions of the file, the Grep tool to search for "
        "specific content, and jq to make structured queries.")
READ_ARGS = {"repo": "github.com/sg-evals/widgets--0a1b2c3d", "path": "src/w.c"}


def _after_saved(tool: str, inp: dict, text: str, *, first: tuple = ("sg_read_file", READ_ARGS)):
    run = McpRun()
    s0 = claude_code.call_step(f"mcp__sourcegraph__{first[0]}", first[1], 0, "/workspace")
    claude_code.observe(s0, first[1], OVER, False, "/workspace", mcp=run)
    assert s0.views == [] and SAVED in run.saved
    s1 = claude_code.call_step(tool, inp, 1, "/workspace")
    claude_code.observe(s1, inp, text, False, "/workspace", mcp=run)
    return s1, run.finish()


def test_saved_result_read_back_by_a_command_credits_the_file_it_read() -> None:
    cmd = f"jq -r .content {SAVED} | sed -n '500,503p'"
    # the server's numbers; 503 is a real empty line (sed printed it), not a trailer
    out = "500: int a;\n501: \n502: int b;\n503: "
    step, warnings = _after_saved("Bash", {"command": cmd}, out)
    assert step.views == [View("src/w.c", 500, 503)]
    assert any("saved to a file" in w for w in warnings)


def test_saved_result_grepped_with_numbers_credits_the_servers_numbers() -> None:
    cmd = f"jq -r .content {SAVED} | grep -n frob"
    step, _ = _after_saved("Bash", {"command": cmd}, "12:12: frob();\n40:40: x = frob(1);")
    assert step.views == [View("src/w.c", 12, 12), View("src/w.c", 40, 40)]


def test_saved_result_read_with_read_shows_the_visible_part_of_its_json() -> None:
    content = json.dumps({"content": "1: /*\n2:  * w\n3:  */\n4: #include <w.h>\n5: ", "url": "u"})
    # Read prints the JSON file's one line, cut: lines 1-3 whole, line 4 in part
    step, _ = _after_saved("Read", {"file_path": SAVED}, "     1\u2192" + content[:45])
    assert step.views == [View("src/w.c", 1, 4)]
    whole, _ = _after_saved("Read", {"file_path": SAVED}, "     1\u2192" + content)
    assert whole.views == [View("src/w.c", 1, 4)]  # 5 is the server's empty trailer


def test_saved_search_result_credits_nothing_and_the_saved_file_is_no_view() -> None:
    search = ("sg_keyword_search", {"query": "repo:^github.com/sg-evals/widgets--0a1b2c3d$ frob"})
    cmd = f"cat {SAVED} | head -c 300"
    out = '{"blocks":[{"chunks":[{"content":"12: frob();'
    step, _ = _after_saved("Bash", {"command": cmd}, out, first=search)
    assert step.views == []


def test_a_command_on_other_files_is_read_as_usual() -> None:
    step, _ = _after_saved("Bash", {"command": "grep -n frob src/u.c"}, "7: frob();")
    assert step.views == [View("src/u.c", 7, 7)]


def _cd_run(tmp_path: Path) -> tuple[Path, Path]:
    """One self-written run in both of Harbor's forms (stream-json log and ATIF), with a ``cd``
    in a Bash call, a relative grep after it, a Read by absolute path, a ``cd`` that fails, a
    subshell ``cd``, and a ``cd`` out of the project that Claude Code undid. Shaped after
    CodeContextBench's webclients MCP run (``cd applications/drive && yarn test``, then a Read).
    The ATIF steps carry the directory each call ran in (``extra.cwd``), the log does not."""
    root, sub = "/home/dev/proj", "/home/dev/proj/app"
    calls = [  # (name, input, result text, directory the call ran in)
        ("Bash", {"command": "cd app && make test 2>&1 | head -5"}, "make: no rule", root),
        ("Bash", {"command": "grep -n 'let c' src/m.ts"}, "9:let c = 3;", sub),
        ("Read", {"file_path": f"{sub}/src/m.ts", "offset": 3, "limit": 2},
         "     3\u2192let a = 1;\n     4\u2192let b = 2;", sub),
        ("Bash", {"command": "cd nowhere && ls"},
         "/bin/bash: line 1: cd: nowhere: No such file or directory", sub),
        ("Bash", {"command": "(cd src && ls) && sed -n '1,2p' src/n.ts"},
         "m.ts\nn.ts\nlet d = 4;\nlet e = 5;", sub),
        ("Bash", {"command": "cd /tmp && ls"}, "x\nShell cwd was reset to /home/dev/proj", sub),
        ("Bash", {"command": "grep -n 'let c' app/src/m.ts"}, "9:let c = 3;", root),
    ]
    recs: list[dict] = [{"type": "system", "subtype": "init", "cwd": root, "session_id": "s",
                         "tools": ["Bash", "Read"], "mcp_servers": [], "model": "claude-x",
                         "claude_code_version": "2.1.63"}]
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": "task"}]
    for k, (name, inp, text, cwd) in enumerate(calls):
        block = {"type": "tool_use", "id": f"t{k}", "name": name, "input": inp}
        recs.append({"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
                     "message": {"id": f"m{k}", "role": "assistant", "model": "claude-x",
                                 "content": [block]}})
        recs.append({"type": "user", "session_id": "s", "parent_tool_use_id": None,
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"t{k}", "content": text}]}})
        steps.append({"step_id": k + 2, "source": "agent", "message": "",
                      "tool_calls": [{"tool_call_id": f"t{k}", "function_name": name,
                                      "arguments": inp}],
                      "observation": {"results": [{"source_call_id": f"t{k}",
                                                   "content": text}]},
                      "extra": {"cwd": cwd}})
    recs.append({"type": "result", "subtype": "success", "session_id": "s",
                 "usage": {"input_tokens": 1, "output_tokens": 1}})
    log = tmp_path / "stream" / "claude-code.txt"
    log.parent.mkdir()
    log.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    doc = {"schema_version": "ATIF-v1.2", "session_id": "s",
           "agent": {"name": "claude-code", "version": "2.1.63",
                     "extra": {"cwds": [root, sub]}}, "steps": steps}
    atif_file = tmp_path / "atif" / "trajectory.json"
    atif_file.parent.mkdir()
    atif_file.write_text(json.dumps(doc))
    return log, atif_file


def test_stream_json_follows_a_cd_as_the_atif_file_of_the_same_run(tmp_path: Path) -> None:
    """The stream-json log keeps no directory per call: the reader follows the Bash tool's
    shell (a top-level ``cd`` moves it for later calls; a failed one, one in a subshell, or
    one Claude Code reset, does not), so that both forms of one run read alike."""
    log, atif_file = _cd_run(tmp_path)
    (s,) = claude_code_stream.read(log, ReadOptions())
    (a,) = atif.read(atif_file, ReadOptions())
    want = [[], [("app/src/m.ts", 9, 9)], [("app/src/m.ts", 3, 4)], [],
            [("app/src/n.ts", 1, 2)], [], [("app/src/m.ts", 9, 9)]]
    assert [[(v.file, v.start_line, v.end_line) for v in st.views] for st in s.steps] == want
    assert [[(v.file, v.start_line, v.end_line) for v in st.views] for st in a.steps] == want
    assert not any("directory the command does not name" in w
                   for w in s.extra.get("read_warnings", []))


def test_cwd_after() -> None:
    from ctxeval.reading.shell import cwd_after

    assert cwd_after("cd app && yarn test 2>&1 | head -50", "/w") == "/w/app"
    assert cwd_after("ls", "/w") == "/w"
    assert cwd_after("cd a; cd ../b", "/w") == "/w/b"
    assert cwd_after("(cd a && ls)", "/w") == "/w"
    assert cwd_after("bash -c 'cd a'", "/w") == "/w"
    assert cwd_after("cd /opt/x && ls", "/w") == "/opt/x"
    assert cwd_after('cd "my dir"', "/w") == "/w/my dir"
    assert cwd_after("cd $HOME", "/w") is None
    assert cwd_after("cd", "/w") is None
    assert cwd_after("cd ~/src", "/w") is None  # the home directory: not named here


def _parallel_run(tmp_path: Path, *, stamps: bool = True) -> tuple[Path, Path]:
    """One self-written run in both forms with a message of three parallel Reads whose results
    came back out of order, then a message of one Bash call. Shaped after CodeContextBench's
    pytorch baseline: the stream-json log has the tool_use blocks in the order the model wrote
    them and the results as they came back; Harbor's ATIF writes the calls of the message in
    the order of their results, each step stamped with the time its block was streamed, and
    every step of the message with the message's metrics."""
    root = "/home/dev/proj"
    reads = [("t0", "src/alpha.py", "     1\u2192import os\n     2\u2192"),
             ("t1", "src/beta.py", "     1\u2192x = 1\n     2\u2192y = 2\n     3\u2192"),
             ("t2", "src/gamma.py", "     1\u2192def f():\n     2\u2192    pass")]
    answered = ["t0", "t2", "t1"]
    when = {"t0": "2026-01-05T10:00:01.100Z", "t1": "2026-01-05T10:00:01.300Z",
            "t2": "2026-01-05T10:00:01.500Z", "t3": "2026-01-05T10:00:00.900Z"}
    text = {tid: body for tid, _, body in reads}
    recs: list[dict] = [{"type": "system", "subtype": "init", "cwd": root, "session_id": "s",
                         "tools": ["Bash", "Read"], "mcp_servers": [], "model": "claude-x",
                         "claude_code_version": "2.1.63"}]
    for tid, path, _ in reads:
        recs.append({"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
                     "message": {"id": "m0", "role": "assistant", "model": "claude-x",
                                 "content": [{"type": "tool_use", "id": tid, "name": "Read",
                                              "input": {"file_path": f"{root}/{path}"}}]}})
    for tid in answered:
        recs.append({"type": "user", "session_id": "s", "parent_tool_use_id": None,
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": tid, "content": text[tid]}]}})
    grep = {"command": "grep -n 'y =' src/beta.py"}
    recs.append({"type": "assistant", "session_id": "s", "parent_tool_use_id": None,
                 "message": {"id": "m1", "role": "assistant", "model": "claude-x",
                             "content": [{"type": "tool_use", "id": "t3", "name": "Bash",
                                          "input": grep}]}})
    recs.append({"type": "user", "session_id": "s", "parent_tool_use_id": None,
                 "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "t3", "content": "2:y = 2"}]}})
    log = tmp_path / "stream" / "claude-code.txt"
    log.parent.mkdir()
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    path_of = {tid: path for tid, path, _ in reads}

    def step(k: int, tid: str, name: str, args: dict, out: str, prompt: int) -> dict:
        st = {"step_id": k, "source": "agent", "message": f"Executed {name} {tid}",
              "tool_calls": [{"tool_call_id": tid, "function_name": name, "arguments": args}],
              "observation": {"results": [{"source_call_id": tid, "content": out}]},
              "metrics": {"prompt_tokens": prompt, "completion_tokens": 1, "cached_tokens": 7,
                          "extra": {"cache_creation_input_tokens": 3,
                                    "cache_read_input_tokens": 7}},
              "extra": {"cwd": root}}
        if stamps:
            st["timestamp"] = when[tid]
        return st

    steps = [{"step_id": 1, "source": "user", "message": "task"}]
    steps += [step(k + 2, tid, "Read", {"file_path": f"{root}/{path_of[tid]}"}, text[tid], 20)
              for k, tid in enumerate(answered)]
    # a later message stamped earlier (a clock step) stays where it is
    steps.append(step(5, "t3", "Bash", grep, "2:y = 2", 40))
    doc = {"schema_version": "ATIF-v1.2", "session_id": "s",
           "agent": {"name": "claude-code", "version": "2.1.63", "extra": {"cwds": [root]}},
           "steps": steps}
    atif_file = tmp_path / "atif" / "trajectory.json"
    atif_file.parent.mkdir()
    atif_file.write_text(json.dumps(doc))
    return log, atif_file


def _views(t) -> list[list[tuple[str, int | None, int | None]]]:
    return [[(v.file, v.start_line, v.end_line) for v in st.views] for st in t.steps]


def test_parallel_calls_read_in_the_order_they_were_made_in_both_forms(tmp_path: Path) -> None:
    log, atif_file = _parallel_run(tmp_path)
    want = [[("src/alpha.py", 1, 1)], [("src/beta.py", 1, 2)], [("src/gamma.py", 1, 2)],
            [("src/beta.py", 2, 2)]]
    (s,) = claude_code_stream.read(log, ReadOptions())
    (a,) = atif.read(atif_file, ReadOptions())
    assert _views(s) == want
    assert _views(a) == want
    assert [st.index for st in a.steps] == [0, 1, 2, 3]
    # the message's usage is charged once, to its first call
    assert a.steps[0].usage is not None and a.steps[1].usage is None


def test_parallel_calls_without_timestamps_keep_the_files_order(tmp_path: Path) -> None:
    _, atif_file = _parallel_run(tmp_path, stamps=False)
    (a,) = atif.read(atif_file, ReadOptions())
    assert _views(a) == [[("src/alpha.py", 1, 1)], [("src/gamma.py", 1, 2)],
                         [("src/beta.py", 1, 2)], [("src/beta.py", 2, 2)]]
