"""ATIF (Harbor's Agent Trajectory Interchange Format): detection, per-agent reading, usage,
continuations, subagents, and the same views as the native file the rendering came from."""

from __future__ import annotations

import contextlib
import json
import posixpath
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.model import Step, View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, atif, mini_swe_agent, openhands

ATIF = FIXTURES / "adapters" / "atif"
MINI_NATIVE = CORPUS / "django__django-11099" / "trajs" / \
    "mini-swe-agent_2.2.7_deepseek-chat.traj.json"
MINI_ATIF = ATIF / "django__django-11099__Ab3dE5f" / "agent"


def _views(step: Step) -> list[tuple[str, int | None, int | None, bool]]:
    return [(v.file, v.start_line, v.end_line, v.post_edit) for v in step.views]


def _read(path: Path):
    (t,) = adapters.read(path)
    return t


# --- the native file and its ATIF rendering --------------------------------------------------


def _repo_path(p: str, cwd: str) -> str:
    """A path as the repository knows it: ATIF keeps no working directory, so the native
    reading's ``/testbed/x`` and the rendering's ``./x`` are the same file."""
    p = posixpath.normpath(posixpath.join(cwd, p))
    return p[len(cwd) + 1:] if p.startswith(cwd + "/") else p


def _neutral_step(s: Step, cwd: str) -> tuple:
    return (s.tool, s.action,
            sorted((_repo_path(v.file, cwd), v.start_line, v.end_line, v.post_edit, v.text,
                    v.matches) for v in s.views),
            sorted(_repo_path(e, cwd) for e in s.edits),
            None if s.usage is None else (s.usage.input_tokens, s.usage.output_tokens))


@requires_shared
def test_real_mini_swe_agent_run_reads_the_same_natively_and_through_atif():
    """mini-swe-agent 2.2.7 on django__django-11099 (../shared corpus), and the ATIF rendering
    of its first seven agent steps written by ``render_mini_swe_agent.py`` as Harbor's converter
    renders it: per agent step, the same tool, command, views, edits and tokens."""
    native = mini_swe_agent.read(MINI_NATIVE, ReadOptions())[0]
    rendered = _read(MINI_ATIF)
    assert rendered.agent == "mini-swe-agent" and rendered.instance_id == "django__django-11099"
    assert len(rendered.steps) == 7
    for a, b in zip(native.steps, rendered.steps, strict=False):
        assert _neutral_step(a, "/testbed") == _neutral_step(b, "/testbed"), a.index
    # the steps carry real evidence, so the comparison is not between empty lists
    assert _views(rendered.steps[1]) == [("./django/contrib/auth/validators.py", 1, None, False)]
    assert [v.file for v in rendered.steps[2].views][:1] == ["./django/contrib/auth/validators.py"]
    assert rendered.steps[3].edits == ["test_username_validator.py"]
    # tokens are the native per-message counts; the run total is the rendering's final_metrics
    assert rendered.usage.input_tokens == sum(s.usage.input_tokens for s in native.steps[:7])


# --- per-agent semantics on fixtures modelled on Harbor's output ------------------------------


def test_claude_code_rendering_reads_with_claude_code_tools():
    t = _read(ATIF / "claude-code")
    assert (t.agent, t.model, t.instance_id) == ("claude-code", "claude-sonnet-4-5",
                                                 "cc-fixture-session")
    assert [s.tool for s in t.steps] == ["Read", "Bash", "Grep", "Edit", "Task", "Read", "Edit"]
    assert _views(t.steps[0]) == [("src/calc.py", 10, 12, False)]  # the session cwd stripped
    # Harbor appends "[stdout]" and "[metadata]" sections: the model saw lines 14-15 once
    assert _views(t.steps[1]) == [("src/calc.py", 14, 15, False)]
    assert _views(t.steps[2]) == [("tests/test_calc.py", 9, 9, False)]
    assert t.steps[3].edits == []  # "String to replace not found": the edit failed
    assert t.steps[4].views == [] and t.steps[4].subagent is None
    # the Task's embedded subagent, read as steps of the parent, right after the Task
    assert t.steps[5].subagent == "explore-1"
    assert _views(t.steps[5]) == [("tests/test_calc.py", 8, 9, False)]
    assert t.steps[6].edits == ["src/calc.py"]
    assert _views(t.steps[6]) == [("src/calc.py", 14, 15, True)]  # the re-printed snippet
    assert [s.index for s in t.steps] == list(range(7))
    u = t.usage
    assert (u.input_tokens, u.output_tokens, u.cost, u.api_calls) == (9200, 290, 0.0412, 6)
    assert t.steps[0].usage.input_tokens == 1200 and t.steps[2].usage is None


def test_claude_result_text_is_what_the_model_saw():
    raw = {"content": "a\n\n[stdout]\nb", "extra": {"tool_result_metadata": {
        "raw_tool_result": {"content": [{"type": "text", "text": "a"}], "is_error": True}}}}
    assert atif._claude_result(raw) == ("a", True)
    assert atif._claude_result({"content": "x\n\n[stdout]\nx\n[metadata] {}"}) == ("x", False)
    assert atif._claude_result({"content": "[stdout]\nonly"}) == ("", False)
    assert atif._claude_result({"content": "no\n\n[error] tool reported failure"}) == ("no", True)


def test_terminus_keystrokes_continuation_and_summarization_subagent():
    t = _read(ATIF / "terminus-2")
    assert t.extra["atif_segments"] == 2
    assert [s.action for s in t.steps] == [
        "cat -n src/calc.py | sed -n '10,12p'", "grep -n add tests/test_calc.py", "C-c",
        "sed -n '1,3p' tests/test_calc.py"]  # the copied step of the continuation is not re-read
    assert _views(t.steps[0]) == [("src/calc.py", 10, 12, False)]
    assert _views(t.steps[1]) == [("tests/test_calc.py", 4, 4, False)]
    assert t.steps[2].views == []  # typed, not run
    assert _views(t.steps[3]) == [("tests/test_calc.py", 1, 3, False)]
    # the summarization subagent made no tool call: it adds no step
    assert all(s.subagent is None for s in t.steps)
    # the last segment's totals cover the run: 2500 >= its own 1200 + the first segment's 1000
    u = t.usage
    assert (u.input_tokens, u.output_tokens, u.cost, u.api_calls) == (2500, 260, 0.025, 3)


def test_segments_that_count_only_themselves_are_summed(tmp_path):
    doc = json.loads((ATIF / "terminus-2" / "trajectory.json").read_text())
    cont = json.loads((ATIF / "terminus-2" / "trajectory.cont-1.json").read_text())
    cont["final_metrics"] = {"total_prompt_tokens": 1200, "total_completion_tokens": 120}
    (tmp_path / "trajectory.json").write_text(json.dumps(doc))
    (tmp_path / "trajectory.cont-1.json").write_text(json.dumps(cont))
    u = _read(tmp_path).usage
    assert (u.input_tokens, u.output_tokens) == (2200, 220)


def test_terminal_screen_is_split_at_prompt_lines():
    screen = ("root@h:/app# cat a.py\nx\ny\nroot@h:/app# cat <<'EOF' > b\n> 1\n> EOF\n"
              "root@h:/app# ")
    assert atif._terminal_outputs(["cat a.py\n", "cat <<'EOF' > b\n1\nEOF\n", "ls\n"],
                                  screen) == ["x\ny\n", "", None]


def _v0_history(doc: dict) -> list[dict]:
    """The OpenHands v0 event log the ATIF fixture's calls stand for (the form Harbor's
    converter reads): one action and one observation event per call."""
    kinds = {"execute_bash": "run", "finish": "finish"}
    events: list[dict] = []
    for st in doc["steps"]:
        results = {r.get("source_call_id"): r for r in
                   (st.get("observation") or {}).get("results", [])}
        for c in st.get("tool_calls") or []:
            args = c["arguments"]
            kind = kinds.get(c["function_name"]) or (
                "read" if args.get("command") == "view" else "edit")
            aid = len(events) + 1
            events.append({"id": aid, "source": "agent", "action": kind, "args": args})
            if c["tool_call_id"] in results:
                events.append({"id": aid + 1, "source": "agent", "cause": aid,
                               "observation": kind,
                               "content": results[c["tool_call_id"]]["content"]})
    return events


def test_openhands_rendering_reads_as_the_v0_events_it_came_from():
    doc = json.loads((ATIF / "openhands" / "trajectory.json").read_text())
    t = _read(ATIF / "openhands")
    v0 = openhands.trajectory_from_record({"instance_id": "x", "history": _v0_history(doc)},
                                          "mem", 1, ReadOptions())
    assert [(s.tool, _views(s), s.edits) for s in t.steps] == \
        [(s.tool, _views(s), s.edits) for s in v0.steps]
    assert [s.action for s in t.steps[:3]] == [s.action for s in v0.steps[:3]]
    f = "/workspace/repo/src/calc.py"
    assert _views(t.steps[0]) == [(f, 10, 10, False)]
    assert _views(t.steps[1]) == [(f, 10, 12, False)]
    assert t.steps[2].edits == [f]
    assert (t.usage.input_tokens, t.usage.cost) == (6200, 0.022)


def test_unknown_agent_reads_command_arguments_as_shell(tmp_path):
    doc = {"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "my-agent",
                                                                     "version": "1"},
           "steps": [{"step_id": 1, "source": "agent", "message": "",
                      "tool_calls": [{"tool_call_id": "c1", "function_name": "run",
                                      "arguments": {"command": "sed -n '2,3p' a.py"}},
                                     {"tool_call_id": "c2", "function_name": "search_web",
                                      "arguments": {"q": "x"}}],
                      "observation": {"results": [{"source_call_id": "c1",
                                                   "content": "two\nthree\n"},
                                                  {"source_call_id": "c2", "content": "..."}]}}]}
    f = tmp_path / "run.json"
    f.write_text(json.dumps(doc))
    t = _read(f)
    assert t.instance_id == "run" and t.usage is None
    assert _views(t.steps[0]) == [("a.py", 2, 3, False)]
    assert (t.steps[1].tool, t.steps[1].views) == ("search_web", [])


def test_subagent_file_reference_and_missing_ones(tmp_path):
    sub = {"schema_version": "ATIF-v1.6", "session_id": "sub", "agent": {"name": "codex",
                                                                       "version": "0.5"},
           "steps": [{"step_id": 1, "source": "agent", "message": "",
                      "tool_calls": [{"tool_call_id": "k", "function_name": "shell",
                                      "arguments": {"command": ["bash", "-lc",
                                                                "nl -ba b.py | sed -n '5,6p'"]}}],
                      "observation": {"results": [{"source_call_id": "k",
                                                   "content": "     5\tx\n     6\ty\n"}]}}]}
    (tmp_path / "sub.json").write_text(json.dumps(sub))
    doc = {"schema_version": "ATIF-v1.6", "session_id": "p", "agent": {"name": "codex",
                                                                     "version": "0.5"},
           "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": [
               {"tool_call_id": "d", "function_name": "delegate", "arguments": {}}],
               "observation": {"results": [{"source_call_id": "d", "subagent_trajectory_ref": [
                   {"session_id": "sub", "trajectory_path": "sub.json"},
                   {"session_id": "gone", "trajectory_path": "gone.json"}]}]}}]}
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps(doc))
    t = _read(f)
    assert [(s.tool, s.subagent) for s in t.steps] == [("delegate", None), ("shell", "sub")]
    assert _views(t.steps[1]) == [("b.py", 5, 6, False)]
    assert any("gone" in w for w in t.extra["read_warnings"])


# --- detection and bad input -------------------------------------------------------------------


def test_detection_by_content_and_harbor_agent_folder(tmp_path):
    assert adapters.detect(ATIF / "claude-code") is atif
    assert adapters.detect(ATIF / "claude-code" / "trajectory.json") is atif
    f = tmp_path / "t.json"
    f.write_text('{"schema_version": "1.4", "agent": {"name": "x"}, "steps": []}')
    assert adapters.detect(f) is atif
    f.write_text('{"schema_version": "2.0", "agent": {}, "steps": []}')
    with pytest.raises(AdapterError):
        adapters.detect(f)
    assert not atif.detect(tmp_path, b"")  # a folder without trajectory.json


def test_inputs_walk_takes_the_agent_folder_once():
    """Continuation and subagent files are parts of their run, not runs of their own."""
    from ctxeval.reading.inputs import read_inputs

    results = list(read_inputs([ATIF / "terminus-2"]))
    assert [(r.fmt, len(r.trajectories)) for r in results] == [("atif", 1)]


@pytest.mark.parametrize("text,field", [
    ('{"schema_version": "ATIF-v1.7", "agent": {"name": "x"}}', "steps"),
    ('{"schema_version": "ATIF-v1.7", "agent": "x", "steps": []}', "agent"),
])
def test_bad_documents_name_the_field(tmp_path, text, field):
    f = tmp_path / "trajectory.json"
    f.write_text(text)
    with pytest.raises(AdapterError) as err:
        atif.read(f, ReadOptions())
    assert err.value.field == field and err.value.path == str(f)


def test_continuation_loop_is_reported_not_followed(tmp_path):
    doc = {"schema_version": "ATIF-v1.7", "agent": {"name": "x", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
           "continued_trajectory_ref": "trajectory.json"}
    (tmp_path / "trajectory.json").write_text(json.dumps(doc))
    t = _read(tmp_path)
    assert t.steps == [] and "loops" in t.extra["read_warnings"][0]


def test_view_dataclass_is_unchanged_by_subagent_marks():
    s = Step(index=0, views=[View("a.py", 1, 2)], subagent="sub-1")
    assert s.to_json()["subagent"] == "sub-1"
    assert "subagent" not in Step(index=0).to_json()


def test_mini_swe_agent_submission_and_swebench_working_directory(tmp_path):
    """Harbor drops mini-swe-agent's exit message and its working directory: the submitting
    step stays a step (viewing nothing), and commands naming /testbed make it the directory, so
    an edit by absolute path and a view by relative path are one file."""
    doc = json.loads((MINI_ATIF / "trajectory.json").read_text())
    agent = {"source": "agent", "message": "", "metrics": {"prompt_tokens": 9,
                                                          "completion_tokens": 1}}
    doc["steps"] += [
        {**agent, "step_id": 11, "tool_calls": [{"tool_call_id": "e", "function_name": "bash",
         "arguments": {"command": "sed -i 's/a/b/' /testbed/django/contrib/auth/validators.py"}}],
         "observation": {"results": [{"content": "<returncode>0</returncode>\n<output>\n"
                                                 "</output>"}]}},
        {**agent, "step_id": 12, "tool_calls": [{"tool_call_id": "v", "function_name": "bash",
         "arguments": {"command": "sed -n '1,2p' django/contrib/auth/validators.py"}}],
         "observation": {"results": [{"content": "<returncode>0</returncode>\n<output>\nimport "
                                                 "re\n\n</output>"}]}},
        {**agent, "step_id": 13, "tool_calls": [{"tool_call_id": "s", "function_name": "bash",
         "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}}]}]
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps(doc))
    t = _read(f)
    assert len(t.steps) == 10 and t.steps[-1].views == []
    assert t.steps[7].edits == ["/testbed/django/contrib/auth/validators.py"]
    assert _views(t.steps[8]) == [("/testbed/django/contrib/auth/validators.py", 1, 2, True)]
    assert t.steps[1].views[0].file == "/testbed/django/contrib/auth/validators.py"


# --- the session fixtures rendered as Harbor renders them ------------------------------------


def _claude_as_atif(path: Path, raw: bool = True) -> dict:
    """A Claude Code session as Harbor's converter writes it: one agent step per tool call, the
    call's input as arguments, the result text stripped (plus Harbor's ``[error]`` line for a
    failed call), the record's cwd in the step. Harbor keeps the raw block in the result's extra
    when the record has a ``toolUseResult`` (real sessions record one for every tool) or failed;
    ``raw=False`` renders a session without ``toolUseResult`` records."""
    records = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):  # the fixture's last line is cut mid-write
            records.append(json.loads(line))
    results = {b["tool_use_id"]: b for r in records if r.get("type") == "user"
               and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"}
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": "task"}]
    for r in records:
        if r.get("type") != "assistant":
            continue
        for b in r["message"]["content"]:
            if b.get("type") != "tool_use":
                continue
            res = results.get(b["id"])
            step = {"step_id": len(steps) + 1, "source": "agent", "message": "",
                    "tool_calls": [{"tool_call_id": b["id"], "function_name": b["name"],
                                    "arguments": b["input"]}], "extra": {"cwd": r.get("cwd")}}
            if res is not None:
                content = res["content"] if isinstance(res["content"], str) else "\n\n".join(
                    c["text"].strip() for c in res["content"])
                text, extra = content.strip(), None
                if raw or res.get("is_error"):
                    extra = {"tool_result_metadata": {"raw_tool_result": res}}
                if res.get("is_error"):
                    text += "\n\n[error] tool reported failure"
                    extra = {"tool_result_is_error": True, "tool_result_metadata": {
                        "is_error": True, "raw_tool_result": res}}
                step["observation"] = {"results": [{"source_call_id": b["id"], "content": text,
                                                    **({"extra": extra} if extra else {})}]}
            steps.append(step)
    return {"schema_version": "ATIF-v1.7", "session_id": "s",
            "agent": {"name": "claude-code", "version": "2"}, "steps": steps}


def _codex_as_atif(path: Path) -> dict:
    """A Codex rollout as Harbor's converter writes it: one agent step per call, arguments
    parsed from JSON (a custom tool's raw input as ``{"input": …}``), the output's ``output``
    text with its ``metadata`` in the step's ``extra.tool_metadata``."""
    items = [json.loads(x)["payload"] for x in path.read_text().splitlines() if x.strip()]
    outputs = {p["call_id"]: p for p in items if p.get("type") in (
        "function_call_output", "custom_tool_call_output")}
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": "task"}]
    for p in items:
        if p.get("type") not in ("function_call", "custom_tool_call"):
            continue
        raw = p.get("arguments", p.get("input"))
        try:
            args = json.loads(raw)
        except ValueError:
            args = {"input": raw}
        step = {"step_id": len(steps) + 1, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": p["call_id"], "function_name": p["name"],
                                "arguments": args}]}
        out = outputs.get(p["call_id"])
        if out is not None:
            blob = out["output"]
            try:
                parsed = json.loads(blob) if isinstance(blob, str) else blob
            except ValueError:
                parsed = blob
            text = parsed.get("output") if isinstance(parsed, dict) else str(parsed)
            if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
                step["extra"] = {"tool_metadata": parsed["metadata"]}
            step["observation"] = {"results": [{"source_call_id": p["call_id"],
                                                "content": text}]}
        steps.append(step)
    return {"schema_version": "ATIF-v1.7", "session_id": "s",
            "agent": {"name": "codex", "version": "0.40"}, "steps": steps}


@pytest.mark.parametrize("native,render", [
    (FIXTURES / "adapters" / "claude-code" / "session.jsonl", _claude_as_atif),
    (FIXTURES / "adapters" / "codex" / "rollout-2025-01-01T00-00-00-x.jsonl", _codex_as_atif),
])
def test_session_fixtures_read_the_same_through_atif(tmp_path, native, render):
    want = _read(native)
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps(render(native)))
    got = _read(f)
    assert [(s.tool, _views(s), s.edits) for s in got.steps] == \
        [(s.tool, _views(s), s.edits) for s in want.steps]
    assert any(s.views for s in got.steps) and any(s.edits for s in got.steps)


def test_without_raw_blocks_stripped_trailing_lines_are_not_credited(tmp_path):
    """Harbor strips a result's text; without the raw block the blank last lines of a
    ``sed -n '1,3p'`` output are lost, and only what is certain is credited."""
    native = FIXTURES / "adapters" / "claude-code" / "session.jsonl"
    want = _read(native)
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps(_claude_as_atif(native, raw=False)))
    got = _read(f)
    assert _views(want.steps[5]) == [("tests/test_calc.py", 1, 3, False)]
    assert _views(got.steps[5]) == [("tests/test_calc.py", 1, 1, False)]
    assert [_views(s) for k, s in enumerate(got.steps) if k != 5] == \
        [_views(s) for k, s in enumerate(want.steps) if k != 5]


def test_claude_code_paths_stay_repository_relative_after_a_cd(tmp_path):
    """A ``cd`` in a Bash call moves Claude Code's working directory, and Harbor's steps
    record it (``extra.cwd``); the views stay relative to the session's starting directory
    (the repository), while relative paths in later commands are the new directory's. Shaped
    after CodeContextBench's webclients MCP run (``cd applications/drive && yarn test``, then a
    Read by absolute path)."""
    root, sub = "/home/dev/proj", "/home/dev/proj/app"

    def call(k, name, args, text, cwd):
        return {"step_id": k, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": f"t{k}", "function_name": name,
                                "arguments": args}],
                "observation": {"results": [{"source_call_id": f"t{k}", "content": text}]},
                "extra": {"cwd": cwd}}

    doc = {"schema_version": "ATIF-v1.2", "session_id": "s",
           "agent": {"name": "claude-code", "version": "2.1.63",
                     "extra": {"cwds": [root, sub]}},
           "steps": [{"step_id": 1, "source": "user", "message": "task"},
                     call(2, "Bash", {"command": "cd app && make test"}, "make: no rule", root),
                     call(3, "Read", {"file_path": f"{sub}/src/m.ts", "offset": 3, "limit": 2},
                          "     3\u2192let a = 1;\n     4\u2192let b = 2;", sub),
                     call(4, "Bash", {"command": "grep -n 'let c' src/m.ts"}, "9:let c = 3;",
                          sub),
                     call(5, "Grep", {"pattern": "let d", "path": f"{sub}/src",
                                      "output_mode": "content", "-n": True},
                          f"{sub}/src/n.ts:2:let d = 4;", sub),
                     call(6, "Edit", {"file_path": f"{sub}/src/m.ts", "old_string": "a",
                                      "new_string": "z"}, "The file was updated.", sub)]}
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps(doc))
    t = _read(f)
    assert [[(v.file, v.start_line, v.end_line) for v in s.views] for s in t.steps[:4]] == [
        [], [("app/src/m.ts", 3, 4)], [("app/src/m.ts", 9, 9)], [("app/src/n.ts", 2, 2)]]
    assert t.steps[4].edits == ["app/src/m.ts"]
