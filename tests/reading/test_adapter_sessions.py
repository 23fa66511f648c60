"""Claude Code and Codex CLI session adapters: real samples, fixtures, fuzzing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ may or may not be a package, depending on the checkout
    from conftest import CORPUS, FIXTURES, requires_shared
except ImportError:  # pragma: no cover
    from conftest import CORPUS, FIXTURES, requires_shared

from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, claude_code, codex

LOGS = CORPUS / "session-logs"
CLAUDE_FIX = FIXTURES / "adapters" / "claude-code" / "session.jsonl"
CODEX_FIX = FIXTURES / "adapters" / "codex" / "rollout-2025-01-01T00-00-00-x.jsonl"


@requires_shared
def test_claude_corpus_sample() -> None:
    p = LOGS / "claude_sample_session.jsonl"
    assert adapters.detect(p) is claude_code
    (t,) = claude_code.read(p, ReadOptions())
    assert t.instance_id == "claude_sample_session"
    # Write, then Bash (git commit); the closing plain-talk message is not a step
    assert [s.tool for s in t.steps] == ["Write", "Bash"]
    assert t.steps[0].edits == ["hello.py"]  # /project/hello.py under cwd /project
    assert t.steps[0].views == []
    assert (t.steps[1].views, t.steps[1].edits) == ([], [])
    assert t.steps[1].action == "git add . && git commit -m 'Add hello function'"
    assert t.usage is None  # the sample records no usage
    (t,) = claude_code.read(p, ReadOptions(instance_id="o__r-1", run="cc"))
    assert (t.instance_id, t.run) == ("o__r-1", "cc")


@requires_shared
def test_codex_corpus_sample() -> None:
    p = LOGS / "sample_codex_session.jsonl"
    assert adapters.detect(p) is codex
    (t,) = codex.read(p, ReadOptions())
    assert t.instance_id == "sample_codex_session"
    assert t.steps == []  # a user message and an assistant message, no tool call
    assert t.extra["cwd"] == "/project"


def test_claude_fixture() -> None:
    assert claude_code.detect(CLAUDE_FIX, CLAUDE_FIX.read_bytes())
    (t,) = claude_code.read(CLAUDE_FIX, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == ["Read", "Grep", "Grep", "Glob", "Read", "Bash", "Edit",
                                   "Write", "Edit"]
    # Read offset=10 limit=5 printed lines 10-12, fewer than asked: the end of the file,
    # whose final newline Claude Code numbers as an empty line 12 (not a line); the printed
    # numbers win; the "99→" inside the system reminder is not at a line start
    assert s[0].views == [View("src/calc.py", 10, 11)]
    assert s[1].views == []  # files_with_matches: a listing
    assert s[2].views == [View("src/calc.py", 10, 10), View("tests/test_calc.py", 4, 4)]
    assert s[3].views == []  # Glob: a listing
    assert s[4].views == []  # error result
    assert s[5].views == [View("tests/test_calc.py", 1, 3)]  # sed -n via shell.read_shell
    assert s[6].edits == ["src/calc.py"]
    assert s[6].views == [View("src/calc.py", 9, 11, post_edit=True)]
    assert s[7].edits == ["/elsewhere/notes.md"]  # outside cwd: kept as written
    # message a1 is logged twice (text, tool_use) with the same usage: counted once
    assert (s[0].usage.input_tokens, s[0].usage.output_tokens) == (1110, 5)
    assert s[2].usage is None and s[1].usage.input_tokens == 20  # one usage per message
    assert t.usage.input_tokens == 1110 + 20 + 30 + 40 + 50 + 60 + 70
    assert (s[8].edits, s[8].views) == ([], [])  # refused edit
    assert t.usage.api_calls == 7  # a1..a7; the <synthetic> a9 was no model call
    assert t.model == "claude-sonnet-4"


def test_codex_fixture() -> None:
    assert codex.detect(CODEX_FIX, CODEX_FIX.read_bytes())
    (t,) = codex.read(CODEX_FIX, ReadOptions())
    s = t.steps
    assert [x.tool for x in s] == ["shell", "shell", "exec_command", "apply_patch",
                                   "apply_patch"]
    assert s[0].action == "sed -n '10,12p' src/calc.py"  # bash -lc unwrapped
    assert s[0].views == [View("src/calc.py", 10, 12)]
    assert s[1].action == "rg -n add tests"
    assert s[1].views == [View("tests/test_calc.py", 4, 4)]
    assert s[2].views == []  # exit code 1, "No such file"
    assert s[3].edits == ["src/calc.py"]
    assert s[4].edits == ["tests/test_more.py"]
    assert t.model == "gpt-5-codex"
    # last_token_usage goes to the first step of the response it follows
    assert (s[0].usage.input_tokens, s[1].usage.input_tokens, s[2].usage) == (1000, 1200, None)
    assert (t.usage.input_tokens, t.usage.output_tokens) == (6400, 280)  # the last total
    assert t.usage.api_calls == 5


def test_codex_early_layout(tmp_path: Path) -> None:
    lines = [
        {"id": "x", "timestamp": "2025-04-01T00:00:00Z", "instructions": ""},
        {"record_type": "state"},
        {"type": "function_call", "name": "shell", "call_id": "c1",
         "arguments": json.dumps({"command": ["cat", "a.py"], "workdir": "/w"})},
        {"type": "function_call_output", "call_id": "c1",
         "output": json.dumps({"output": "x = 1\n", "metadata": {"exit_code": 0}})},
    ]
    p = tmp_path / "rollout-old.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert codex.detect(p, p.read_bytes())
    assert not claude_code.detect(p, p.read_bytes())
    (t,) = codex.read(p, ReadOptions())
    assert [x.action for x in t.steps] == ["cat a.py"]
    assert t.steps[0].views == [View("a.py", 1, None)]


def test_codex_repeated_token_count_is_one_call(tmp_path: Path) -> None:
    tc = {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 5, "output_tokens": 1},
        "total_token_usage": {"input_tokens": 5, "output_tokens": 1}}}}
    p = tmp_path / "r.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [
        {"type": "session_meta", "payload": {"cwd": "/w"}}, tc, tc,
        {"type": "event_msg", "payload": {"type": "token_count", "info": None}}]))
    (t,) = codex.read(p, ReadOptions())
    assert (t.usage.input_tokens, t.usage.api_calls) == (5, 1)


def _one_shell_call(tmp_path: Path, command: list[str], output: str, **action: Any) -> Path:
    """A Codex rollout (session cwd ``/w``) with one ``local_shell_call`` and its output."""
    p = tmp_path / "r.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [
        {"type": "session_meta", "payload": {"cwd": "/w"}},
        {"type": "response_item", "payload": {
            "type": "local_shell_call", "call_id": "c1",
            "action": {"type": "exec", "command": command, **action}}},
        {"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1",
            "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})}},
    ]))
    return p


def test_codex_workdir_relative_to_session_cwd(tmp_path: Path) -> None:
    p = _one_shell_call(tmp_path, ["nl", "-ba", "a.py"], "     1\tx = 1\n",
                        working_directory="/w/sub")
    (t,) = codex.read(p, ReadOptions())
    assert t.steps[0].tool == "local_shell"
    assert t.steps[0].views == [View("sub/a.py", 1, 1)]  # nl printed line 1


def test_shell_text_views_survive_the_session_adapters(tmp_path: Path) -> None:
    # grep without -n: a file-level view carrying the printed lines, for placing from the source
    p = _one_shell_call(tmp_path, ["grep", "def", "a.py"], "def f():\n")
    (t,) = codex.read(p, ReadOptions())
    assert t.steps[0].views == [View("a.py", None, None, text=(("def f():",),), matches="all")]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [
        {"type": "assistant", "sessionId": "s", "cwd": "/w", "uuid": "u1", "message": {
            "id": "a1", "role": "assistant", "content": [{
                "type": "tool_use", "id": "t1", "name": "Bash",
                "input": {"command": "grep def /w/a.py"}}]}},
        {"type": "user", "sessionId": "s", "cwd": "/w", "uuid": "u2", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                         "content": "def f():"}]}},
    ]))
    (t,) = claude_code.read(p, ReadOptions())
    assert t.steps[0].views == [View("a.py", None, None, text=(("def f():",),), matches="all")]


def test_detection_is_exclusive(tmp_path: Path) -> None:
    assert not claude_code.detect(CODEX_FIX, CODEX_FIX.read_bytes())
    assert not codex.detect(CLAUDE_FIX, CLAUDE_FIX.read_bytes())
    p = tmp_path / "other.jsonl"
    p.write_text(json.dumps({"instance_id": "a", "history": [{"type": "user"}]}) + "\n")
    assert not claude_code.detect(p, p.read_bytes())
    assert not codex.detect(p, p.read_bytes())


def test_detect_with_a_first_record_longer_than_the_head(tmp_path: Path) -> None:
    big = "x" * (adapters.HEAD_BYTES + 10)
    p = tmp_path / "cc.jsonl"
    p.write_text(json.dumps({"type": "user", "sessionId": "s", "cwd": "/w",
                             "message": {"role": "user", "content": big}}) + "\n")
    head = p.read_bytes()[:adapters.HEAD_BYTES]
    assert claude_code.detect(p, head) and not codex.detect(p, head)
    p = tmp_path / "rollout.jsonl"
    p.write_text(json.dumps({"timestamp": "t", "type": "session_meta",
                             "payload": {"instructions": big}}) + "\n")
    head = p.read_bytes()[:adapters.HEAD_BYTES]
    assert codex.detect(p, head) and not claude_code.detect(p, head)


def test_bad_lines_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    raw = CLAUDE_FIX.read_text().splitlines()
    p.write_text("\n".join([raw[0], "{not json", *raw[1:]]) + "\n")
    with pytest.raises(AdapterError) as e:
        claude_code.read(p, ReadOptions())
    assert e.value.line == 2
    p.write_text('{"type": "event_msg", "payload": 3}\n')
    with pytest.raises(AdapterError) as e:
        codex.read(p, ReadOptions())
    assert (e.value.line, e.value.field) == (1, "payload")


def _mutate(obj: Any, rng: random.Random) -> Any:
    junk = [None, 1, "x", [], {}, [1], {"a": 1}, True, "→"]
    if isinstance(obj, dict) and obj and rng.random() < 0.85:
        k = rng.choice(list(obj))
        return {**obj, k: _mutate(obj[k], rng)}
    if isinstance(obj, list) and obj and rng.random() < 0.85:
        i = rng.randrange(len(obj))
        return [*obj[:i], _mutate(obj[i], rng), *obj[i + 1:]]
    return rng.choice(junk)


def _fuzz(mod: Any, src: Path, tmp_path: Path, seed: int) -> set[str]:
    rng = random.Random(seed)
    raw = src.read_text()
    records = [json.loads(x) for x in raw.splitlines()[:-1] if x.strip()] \
        if not raw.endswith("\n") else [json.loads(x) for x in raw.splitlines() if x.strip()]
    p = tmp_path / "f.jsonl"
    seen = set()
    for k in range(200):
        if k < 20:
            p.write_text(raw[:rng.randrange(len(raw))])
        else:
            recs = list(records)
            i = rng.randrange(len(recs))
            recs[i] = _mutate(recs[i], rng)
            p.write_text("".join(json.dumps(r) + "\n" for r in recs))
        try:
            mod.read(p, ReadOptions())
            seen.add("ok")
        except AdapterError:
            seen.add("error")
    return seen


def test_fuzz_claude_fixture(tmp_path: Path) -> None:
    assert "ok" in _fuzz(claude_code, CLAUDE_FIX, tmp_path, 1)


def test_fuzz_codex_fixture(tmp_path: Path) -> None:
    assert _fuzz(codex, CODEX_FIX, tmp_path, 2) == {"ok", "error"}


@requires_shared
def test_fuzz_corpus_samples(tmp_path: Path) -> None:
    assert "ok" in _fuzz(claude_code, LOGS / "claude_sample_session.jsonl", tmp_path, 3)
    assert "ok" in _fuzz(codex, LOGS / "sample_codex_session.jsonl", tmp_path, 4)


def _expected_format(p: Path) -> str | None:
    name = p.name
    if p.is_dir():
        return "autocoderover" if name.startswith("acr_") else None
    if name.startswith("moatless"):
        return "moatless"
    if name.endswith("loc_outputs.jsonl"):
        return "agentless"
    return {"claude_sample_session.jsonl": "claude-code",
            "sample_codex_session.jsonl": "codex"}.get(name)


@requires_shared
def test_detectors_claim_exactly_their_corpus_inputs() -> None:
    """Every corpus file/dir: these five adapters claim their own inputs and nothing else."""
    from ctxeval.reading.adapters import agentless, autocoderover, moatless

    mods = (agentless, autocoderover, moatless, claude_code, codex)
    checked = 0
    for p in sorted(CORPUS.rglob("*")):
        head = adapters._head(p)
        claims = [m.FORMAT for m in mods if m.detect(p, head)]
        want = _expected_format(p)
        assert claims == ([want] if want else []), p
        if want:
            chosen = adapters.detect(p).FORMAT  # the whole registry, in priority order
            assert chosen == want, p
            checked += 1
    assert checked == 15  # 3 ACR dirs, 9 Moatless files, 1 Agentless, 2 session logs


def test_views_after_an_edit_are_post_edit():
    from ctxeval.model import Step, View
    from ctxeval.reading.adapters._sessions import mark_views_after_edits

    steps = [Step(0, views=[View("a.py", 1, 5)]), Step(1, edits=["a.py"]),
             Step(2, views=[View("a.py", 1, 5), View("b.py", 2, 3)])]
    mark_views_after_edits(steps)
    assert steps[0].views == [View("a.py", 1, 5)]
    assert steps[2].views == [View("a.py", 1, 5, post_edit=True), View("b.py", 2, 3)]


def test_claude_session_after_a_cd_resolves_in_the_new_directory(tmp_path: Path) -> None:
    """Claude Code's session log records the working directory with each record; after a
    ``cd`` in a Bash call a relative path of a later command is that directory's, and the
    views stay relative to the session's first directory."""
    root, sub = "/home/dev/proj", "/home/dev/proj/app"

    def use(k, cwd, name, inp):
        return {"type": "assistant", "sessionId": "s", "cwd": cwd, "uuid": f"a{k}",
                "message": {"id": f"m{k}", "role": "assistant", "model": "claude-x",
                            "content": [{"type": "tool_use", "id": f"t{k}", "name": name,
                                         "input": inp}]}}

    def res(k, cwd, text):
        return {"type": "user", "sessionId": "s", "cwd": cwd, "uuid": f"r{k}",
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t{k}", "content": text}]}}

    recs = [{"type": "user", "sessionId": "s", "cwd": root, "uuid": "u0",
             "message": {"role": "user", "content": "task"}},
            use(1, root, "Bash", {"command": "cd app && ls"}), res(1, sub, "src"),
            use(2, sub, "Bash", {"command": "grep -n 'let c' src/m.ts"}),
            res(2, sub, "9:let c = 3;"),
            use(3, sub, "Read", {"file_path": f"{sub}/src/m.ts", "offset": 3, "limit": 1}),
            res(3, sub, "     3\u2192let a = 1;")]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    (t,) = claude_code.read(p, ReadOptions())
    assert [[(v.file, v.start_line, v.end_line) for v in s.views] for s in t.steps] == [
        [], [("app/src/m.ts", 9, 9)], [("app/src/m.ts", 3, 3)]]


def test_claude_read_to_the_end_does_not_credit_the_line_after_the_final_newline(
        tmp_path: Path) -> None:
    """Claude Code numbers the empty string after a file's final newline (``   4→`` after line
    3; its ``totalLines`` counts it). Shaped after CodeContextBench's ccx-dep-trace-002 baseline
    (whole-file Reads followed by a ``<system-reminder>``). A Read that printed as many lines as
    its ``limit`` may have stopped inside the file: an empty last line there is a real line."""
    root = "/home/dev/proj"
    rem = "\n\n<system-reminder>\nWhenever you read a file, consider it.\n</system-reminder>\n"
    calls = [({"file_path": f"{root}/a.java"}, "     1→class A {\n     2→}\n     3→"),
             ({"file_path": f"{root}/b.java", "offset": 2, "limit": 2},
              "     2→int x;\n     3→"),
             ({"file_path": f"{root}/c.java", "offset": 5, "limit": 10},
              "     5→x\n     6→\n     7→"),
             ({"file_path": f"{root}/d.java"}, "     1→}")]
    recs: list[dict] = [{"type": "user", "sessionId": "s", "cwd": root, "uuid": "u0",
                         "message": {"role": "user", "content": "task"}}]
    for k, (inp, text) in enumerate(calls):
        recs.append({"type": "assistant", "sessionId": "s", "cwd": root, "uuid": f"a{k}",
                     "message": {"id": f"m{k}", "role": "assistant", "model": "claude-x",
                                 "content": [{"type": "tool_use", "id": f"t{k}", "name": "Read",
                                              "input": inp}]}})
        recs.append({"type": "user", "sessionId": "s", "cwd": root, "uuid": f"r{k}",
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"t{k}", "content": text + rem}]}})
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    (t,) = claude_code.read(p, ReadOptions())
    assert [[(v.file, v.start_line, v.end_line) for v in s.views] for s in t.steps] == [
        [("a.java", 1, 2)],   # 3 is past the final newline
        [("b.java", 2, 3)],   # printed its limit: 3 may be a real empty line
        [("c.java", 5, 6)],   # 6 is a real empty line, 7 past the end
        [("d.java", 1, 1)]]   # no final newline: the last line is real
