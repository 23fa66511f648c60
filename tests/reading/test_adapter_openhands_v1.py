"""OpenHands V1 (software-agent-sdk) conversations: a fixture written from the SDK's event
models (ActionEvent/ObservationEvent/AgentErrorEvent/ConversationStateUpdateEvent as serialised
to ``events/event-<index>-<id>.json``); views computed by hand from what each observation shows."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from ctxeval.errors import AdapterError
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, openhands_v1

CONV = FIXTURES / "adapters" / "openhands-v1" / "9b1f4c2ad3e84f0c8a7e5d6b4c3a2f10"
F = "/workspace/repo/src/calc.py"


def _views(step):
    return [(v.file, v.start_line, v.end_line, v.post_edit) for v in step.views]


def test_detection_of_the_conversation_and_its_events_folder():
    assert adapters.detect(CONV) is openhands_v1
    assert adapters.detect(CONV / "events") is openhands_v1
    assert not openhands_v1.detect(CONV.parent, b"")


def test_steps_views_and_edits():
    (t,) = adapters.read(CONV)
    assert (t.instance_id, t.agent, t.model) == (
        "9b1f4c2ad3e84f0c8a7e5d6b4c3a2f10", "openhands", "litellm_proxy/claude-sonnet-4-5")
    assert [s.tool for s in t.steps] == ["terminal", "file_editor", "file_editor", "terminal",
                                         "error", "file_editor", "finish"]
    # grep -n run in the observation's working_dir /workspace/repo
    assert _views(t.steps[0]) == [(F, 10, 10, False)]
    assert _views(t.steps[1]) == [(F, 10, 12, False)]
    # the snippet after the edit: lines 6-15 printed, line 11 is new text; old_content and
    # new_content give the exact change, so the other lines are base lines
    assert t.steps[2].edits == [F]
    assert _views(t.steps[2]) == [(F, 6, 10, False), (F, 12, 15, False)]
    # after a one-line replacement, lines 14-15 are still base lines 14-15
    assert _views(t.steps[3]) == [(F, 14, 15, False)]
    # a call the framework could not run is a step of its own; an editor error shows nothing
    assert t.steps[4].action.startswith("Tool 'grep' not found")
    assert t.steps[5].views == []
    assert t.steps[6].action == 'finish {"message": "add() now adds."}'


def test_usage_from_stats_updates():
    (t,) = adapters.read(CONV)
    u = t.usage
    assert (u.input_tokens, u.output_tokens, u.cost, u.api_calls) == (8000, 330, 0.06, 6)
    per = [(s.usage.input_tokens, s.usage.output_tokens) if s.usage else None for s in t.steps]
    assert per == [(1000, 50), (1200, 70), (1300, 80), (1400, 60), None, (1500, 40), (1600, 30)]
    assert t.steps[2].usage.cost == 0.01


def _events():
    return [json.loads(p.read_text()) for p in sorted((CONV / "events").iterdir())]


def test_the_same_events_as_json_lines_and_as_an_array(tmp_path):
    (ref,) = adapters.read(CONV)
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in _events()))
    array = tmp_path / "events.json"
    array.write_text(json.dumps(_events()))
    for f in (lines, array):
        assert adapters.detect(f) is openhands_v1
        (t,) = adapters.read(f, options=ReadOptions(instance_id="django__django-1"))
        assert t.instance_id == "django__django-1"
        assert [_views(s) for s in t.steps] == [_views(s) for s in ref.steps]
        assert t.usage == ref.usage


def test_a_rejected_action_shows_nothing(tmp_path):
    events = _events()
    view = next(e for e in events if e.get("tool_call_id") == "toolu_02"
                and e["kind"] == "ObservationEvent")
    view.update(kind="UserRejectObservation", rejection_reason="no", observation=None)
    f = tmp_path / "events.jsonl"
    f.write_text("".join(json.dumps(e) + "\n" for e in events))
    (t,) = adapters.read(f)
    assert t.steps[1].views == []


def test_bad_event_files_name_the_file(tmp_path):
    d = tmp_path / "conv" / "events"
    d.mkdir(parents=True)
    (d / "event-00000-0000abcd.json").write_text("{not json")
    with pytest.raises(AdapterError) as err:
        adapters.read(tmp_path / "conv")
    assert err.value.path.endswith("event-00000-0000abcd.json") and err.value.line == 1
