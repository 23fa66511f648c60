"""Malformed fields an adapter skips or coerces are said in the row's warnings (issue 23,
item 16): before, seven fuzzed real trajectories were scored as if well formed, with no word
(a message's role deleted, replaced by a 20 MB string or by ``12``; ``tool_call_id: false``; a
SWE-agent observation turned into an object; an Agentless usage block turned into a list), and
runs whose usage fields were missing lost tokens silently.

Each case mutates a file as the fuzzer did, reads it, and checks both what was read (the step
lost, or recovered) and the warning, which must name the place and stay short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import CORPUS, FIXTURES, requires_shared
from ctxeval.cli import main
from ctxeval.model import Trajectory
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions
from ctxeval.reading.adapters._fields import FieldNotes, describe

MSA_TOY = FIXTURES / "adapters" / "mini-swe-agent" / "toy__pkg-1" / "toy__pkg-1.traj.json"
SWE_DEMO = FIXTURES / "adapters" / "swe-agent" / "demo__repo-1.traj"
MSA_V2 = (CORPUS / "astropy__astropy-12907" / "trajs"
          / "mini-swe-agent_2.2.7_deepseek-chat.traj.json")
EX = FIXTURES / "example"
AGENTLESS = CORPUS / "django__django-11742" / "trajs" / "agentless_v1_gpt4o__loc_outputs.jsonl"


def read_one(path: Path, fmt: str | None = None) -> Trajectory:
    (traj,) = adapters.read(path, fmt, ReadOptions())
    return traj


def warnings_of(t: Trajectory) -> list[str]:
    return list(t.extra.get("read_warnings") or [])


def write(tmp_path: Path, name: str, data: Any) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


# --- the notes themselves ------------------------------------------------------------------------


def test_values_are_described_not_quoted() -> None:
    assert describe(None) == "missing or null"
    assert describe(False) == "the boolean false"
    assert describe(12) == "the number 12"
    assert describe("x" * 20_000_000) == "a 20,000,000-character string"
    assert describe("reviewer") == "the string 'reviewer'"
    assert describe({"a": 1}) == "an object" and describe([1]) == "a list"


def test_one_warning_per_kind_with_its_first_places() -> None:
    notes = FieldNotes()
    assert not notes and notes.warnings() == []
    for i in (3, 8, 9, 14):
        notes.note("messages[].role", None, "the message is not read", f"messages[{i}].role")
    notes.note("messages[].role", 12, "the message is not read", "messages[20].role")
    assert notes.warnings() == [
        "messages[].role is missing or null in 4 places (messages[3].role, messages[8].role, "
        "messages[9].role, ...): the message is not read",
        "messages[20].role is the number 12: the message is not read",
    ]


# --- mini-swe-agent ---------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["<deleted>", 12, "x" * 20_000_000])
def test_a_message_whose_role_is_broken_is_said(tmp_path: Path, role: Any) -> None:
    data = json.loads(MSA_TOY.read_text())
    well = read_one(MSA_TOY)
    index = next(i for i, m in enumerate(data["messages"]) if m["role"] == "assistant")
    if role == "<deleted>":
        del data["messages"][index]["role"]
    else:
        data["messages"][index]["role"] = role
    t = read_one(write(tmp_path, "toy__pkg-1.traj.json", data), "mini-swe-agent")
    assert len(t.steps) == len(well.steps) - 1  # that message's step is not read ...
    (said,) = [w for w in warnings_of(t) if ".role" in w]  # ... and that is said
    assert said.startswith(f"messages[{index}].role is ")
    assert said.endswith(": the message is not read")
    assert len(said) < 200  # never the value itself
    assert not [w for w in warnings_of(well) if ".role" in w]


def _v2_run() -> dict[str, Any]:
    """A small tool-call (v2) run: two bash calls answered by id, then the exit message."""
    def call(i: int, command: str) -> dict[str, Any]:
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
                    "name": "bash", "arguments": json.dumps({"command": command})}}],
                "extra": {"response": {"usage": {"prompt_tokens": 100 * i,
                                                 "completion_tokens": 10}}}}

    def result(i: int, text: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": f"call_{i}",
                "content": f"<returncode>0</returncode>\n<output>\n{text}</output>"}

    return {"trajectory_format": "mini-swe-agent-1.1", "instance_id": "toy__pkg-2",
            "info": {"config": {"environment": {"cwd": "/home/dev/repo"}}},
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                         call(1, "cat -n pkg/a.py"), result(1, "     1\tx = 1\n     2\ty = 2\n"),
                         call(2, "grep -n y pkg/a.py"), result(2, "2:y = 2\n"),
                         {"role": "exit", "content": "", "extra": {"submission": ""}}]}


def test_a_tool_result_whose_call_id_is_false_is_matched_by_position_and_said(
        tmp_path: Path) -> None:
    data = _v2_run()
    well = read_one(write(tmp_path, "well.traj.json", data), "mini-swe-agent")
    data["messages"][5]["tool_call_id"] = False
    t = read_one(write(tmp_path, "broken.traj.json", data), "mini-swe-agent")
    assert [(s.action, [(v.file, v.start_line, v.end_line) for v in s.views]) for s in t.steps] \
        == [(s.action, [(v.file, v.start_line, v.end_line) for v in s.views]) for s in well.steps]
    assert [s.action for s in t.steps] == ["cat -n pkg/a.py", "grep -n y pkg/a.py"]
    assert warnings_of(t) == ["messages[5].tool_call_id is the boolean false: the result is "
                              "matched to its call by position"]
    assert warnings_of(well) == []


def test_calls_without_usage_beside_calls_with_it_are_said(tmp_path: Path) -> None:
    data = _v2_run()
    del data["messages"][4]["extra"]
    t = read_one(write(tmp_path, "u.traj.json", data), "mini-swe-agent")
    assert t.usage is not None and t.usage.input_tokens == 100  # the one call that recorded it
    assert warnings_of(t) == ["messages[4].extra.response.usage is missing: tokens count only "
                              "the API calls that recorded them"]
    data = _v2_run()
    data["messages"][2]["extra"]["response"]["usage"] = [100, 10]
    data["messages"][4]["extra"]["response"]["usage"]["prompt_tokens"] = "200"
    t = read_one(write(tmp_path, "v.traj.json", data), "mini-swe-agent")
    assert warnings_of(t) == [
        "messages[2].extra.response.usage is a list: the call's tokens are not counted",
        "messages[4].extra.response.usage.prompt_tokens is the string '200': the call's tokens "
        "are not counted"]


@requires_shared
def test_a_real_run_mutated_as_the_fuzzer_did(tmp_path: Path) -> None:
    """The real 2.2.7 run (tool calls): a role replaced by 12 and a ``tool_call_id`` by false."""
    data = json.loads(MSA_V2.read_text())
    well = read_one(MSA_V2)
    assert warnings_of(well) == []
    tools = [i for i, m in enumerate(data["messages"]) if m.get("role") == "tool"]
    data["messages"][tools[0]]["tool_call_id"] = False
    data["messages"][tools[1]]["role"] = 12
    t = read_one(write(tmp_path, MSA_V2.name, data), "mini-swe-agent")
    said = warnings_of(t)
    assert f"messages[{tools[0]}].tool_call_id is the boolean false: the result is matched to " \
           "its call by position" in said
    assert f"messages[{tools[1]}].role is the number 12: the message is not read" in said
    assert t.steps[0].views == well.steps[0].views  # the first result, matched by position


# --- SWE-agent ---------------------------------------------------------------------------------


def test_a_swe_agent_observation_turned_into_an_object_is_said(tmp_path: Path) -> None:
    data = json.loads(SWE_DEMO.read_text())
    well = read_one(SWE_DEMO)
    assert well.steps[1].views and warnings_of(well) == []
    data["trajectory"][1]["observation"] = {"text": data["trajectory"][1]["observation"]}
    data["info"]["model_stats"]["tokens_sent"] = [1000]
    t = read_one(write(tmp_path, "demo__repo-1.traj", data), "swe-agent")
    assert t.steps[1].views == []
    assert warnings_of(t) == [
        "trajectory[1].observation is an object: the step shows nothing",
        "info.model_stats.tokens_sent is a list: it is unknown"]
    assert t.usage is not None and t.usage.input_tokens is None and t.usage.output_tokens == 50


# --- Agentless ---------------------------------------------------------------------------------


def _agentless_record() -> dict[str, Any]:
    def stage(p: int) -> dict[str, Any]:
        return {"prompt": "p", "response": "r",
                "usage": {"prompt_tokens": p, "completion_tokens": 5}}
    return {"instance_id": "toy__pkg-3", "found_files": ["pkg/a.py"],
            "found_related_locs": [["function: f"]], "found_edit_locs": [["line: 2"]],
            "file_traj": stage(100), "related_loc_traj": stage(200), "edit_loc_traj": stage(300)}


def test_an_agentless_usage_block_turned_into_a_list_is_said(tmp_path: Path) -> None:
    rec = _agentless_record()
    well = read_one(write(tmp_path, "well_loc_outputs.jsonl", rec), "agentless")
    assert well.usage is not None and well.usage.input_tokens == 600
    assert warnings_of(well) == []
    rec["edit_loc_traj"]["usage"] = [rec["edit_loc_traj"]["usage"]]
    t = read_one(write(tmp_path, "loc_outputs.jsonl", rec), "agentless")
    assert t.usage is not None and t.usage.input_tokens == 300
    assert warnings_of(t) == ["edit_loc_traj.usage is a list: its tokens are not counted"]


@requires_shared
def test_the_real_agentless_output_reads_without_a_note_and_with_one_when_mutated(
        tmp_path: Path) -> None:
    assert warnings_of(read_one(AGENTLESS)) == []
    rec = json.loads(AGENTLESS.read_text().splitlines()[0])
    rec["related_loc_traj"]["usage"] = list(rec["related_loc_traj"]["usage"].values())
    t = read_one(write(tmp_path, "loc_outputs.jsonl", rec), "agentless")
    assert warnings_of(t) == ["related_loc_traj.usage is a list: its tokens are not counted"]


# --- into the row ------------------------------------------------------------------------------


def test_the_notes_reach_the_row(tmp_path: Path) -> None:
    """A note is in the row's ``warnings``, where report and the viewer show it."""
    lines = (EX / "runs" / "agent-a.jsonl").read_text().splitlines()
    data = _v2_run()
    data["instance_id"] = json.loads(lines[0])["instance_id"]
    data["messages"][5]["tool_call_id"] = False
    run = write(tmp_path, f"{data['instance_id']}.traj.json", data)
    out = tmp_path / "results.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--run", f"a={run}", "--out", str(out), "--no-cache", "-q"]) == 0
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert "messages[5].tool_call_id is the boolean false: the result is matched to its call " \
           "by position" in row["warnings"]
