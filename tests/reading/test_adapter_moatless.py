"""Moatless adapter: three format generations x three real instances, fixtures, fuzzing."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ may or may not be a package, depending on the checkout
    from conftest import CORPUS, FIXTURES, requires_shared
except ImportError:  # pragma: no cover
    from conftest import CORPUS, FIXTURES, requires_shared

from ctxeval.errors import AdapterError
from ctxeval.evaluation.prepare.preparer import Preparer
from ctxeval.evaluation.resolve import TrajectoryResolver
from ctxeval.linesets import line_runs
from ctxeval.model import GoldInstance, SymbolRef, View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, moatless
from ctxeval.reading.moatless_spans.expansion import IMPORT_SPANS, SIGNATURES
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import RepoCache


def M1(file: str, name: str) -> SymbolRef:
    """A Moatless 0.0.1 span id, shown whole."""
    return SymbolRef(file, name, moatless="0.0.1")


def M2(file: str, name: str) -> SymbolRef:
    """A Moatless 0.0.2 span id, shown whole."""
    return SymbolRef(file, name, moatless="0.0.2")

V1 = "moatless_20240609_gpt4o.json"
V2 = "moatless_20240623_claude35.json"
V4 = "moatless0.4_20241117_claude35.trajectory.json"
VALIDATORS = "django/contrib/auth/validators.py"


def _read(iid: str, name: str):
    p = CORPUS / iid / "trajs" / name
    assert adapters.detect(p) is moatless
    (t,) = moatless.read(p, ReadOptions())
    assert t.instance_id == iid
    return t


@requires_shared
@pytest.mark.parametrize("iid,name,n", [
    ("astropy__astropy-12907", V1, 6), ("django__django-11099", V1, 7),
    ("psf__requests-2317", V1, 5),
    ("astropy__astropy-12907", V2, 6), ("django__django-11099", V2, 8),
    ("psf__requests-2317", V2, 6),
    ("astropy__astropy-12907", V4, 12), ("django__django-11099", V4, 6),
    ("psf__requests-2317", V4, 6),
])
def test_corpus_step_counts(iid: str, name: str, n: int) -> None:
    t = _read(iid, name)
    assert len(t.steps) == n
    assert t.model_patch and t.model_patch.startswith("diff --git")


@requires_shared
def test_v001_django() -> None:
    t = _read("django__django-11099", V1)
    s = t.steps
    assert [x.tool for x in s] == ["search", "identify", "request_for_change", "search_replace",
                                   "request_for_change", "search_replace", "finish"]
    # the search's file_context is shown in the next prompt: it belongs to the search, each
    # span within the tokens the search gave it
    assert s[0].symbols == [SymbolRef(VALIDATORS, n, moatless="0.0.1", budget=1333) for n in (
        "imports", "UnicodeUsernameValidator", "ASCIIUsernameValidator")]
    # identify: the coding loop shows the identified spans with the file's imports next
    assert s[1].views == [] and s[1].symbols == [
        M1(VALIDATORS, "ASCIIUsernameValidator"), M1(VALIDATORS, "UnicodeUsernameValidator"),
        M1(VALIDATORS, IMPORT_SPANS)]
    # request_for_change brought the loop to CodeChange: its prompt shows the file context
    # again, with comments, and the <search> block, lines 8-15 (the next search_replace's)
    ctx = [M1(VALIDATORS, "ASCIIUsernameValidator"), M1(VALIDATORS, "UnicodeUsernameValidator"),
           M1(VALIDATORS, IMPORT_SPANS)]
    assert s[2].views == [View(VALIDATORS, 8, 15)]
    assert s[2].symbols == [replace(r, comments=True) for r in ctx]
    # the applied change brought it back to Pending: the context of the file as edited (the
    # first ref carries the diffs the run recorded), the edited file seen post-edit
    data = json.loads((CORPUS / "django__django-11099" / "trajs" / V1).read_text())
    diffs = [a["output"]["diff"] for st in data["steps"] for a in st["actions"]
             if a["name"] == "search_replace"]
    assert s[3].edits == [VALIDATORS]
    assert s[3].views == [View(VALIDATORS, None, None, post_edit=True)]
    assert s[3].symbols == [replace(ctx[0], patches=(diffs[0],)), *ctx[1:]]
    # the second change: lines 18-25 (unchanged by the first edit, one line for one)
    assert s[4].views == [View(VALIDATORS, 18, 25), View(VALIDATORS, None, None, post_edit=True)]
    assert s[4].symbols == [replace(ctx[0], comments=True, patches=(diffs[0],)),
                            *(replace(r, comments=True) for r in ctx[1:])]
    assert s[5].symbols == [replace(ctx[0], patches=tuple(diffs)), *ctx[1:]]
    assert s[6].views == [] and s[6].symbols == []  # finish: nothing follows
    assert t.final_context == []
    assert t.final_symbols == [M1(VALIDATORS, "ASCIIUsernameValidator"),
                               M1(VALIDATORS, "UnicodeUsernameValidator")]
    assert t.usage.cost == pytest.approx(0.04252)  # the per-step completion costs
    assert t.run == "20240609_moatless_gpt4o_2"


@requires_shared
def test_v001_astropy_empty_search_and_requests_lines() -> None:
    t = _read("astropy__astropy-12907", V1)
    assert t.steps[0].symbols == []  # "No classes found with the name separability_matrix."
    assert t.steps[1].symbols == [SymbolRef("astropy/modeling/separable.py",
                                            "separability_matrix", moatless="0.0.1",
                                            budget=4000)]
    assert t.steps[3].views == [View("astropy/modeling/separable.py", 66, 102)]
    t = _read("psf__requests-2317", V1)
    assert t.steps[0].symbols == [SymbolRef("requests/sessions.py", "Session.request",
                                            moatless="0.0.1", budget=4000)]
    assert t.steps[2].views == [View("requests/sessions.py", 378, 459)]


@requires_shared
def test_v002_django() -> None:
    t = _read("django__django-11099", V2)
    s = t.steps
    assert [x.tool for x in s] == ["SearchCode", "IdentifyCode", "DecideRelevance", "PlanToCode",
                                   "EditCode", "PlanToCode", "EditCode", "PlanToCode"]
    assert s[0].symbols == [M2(VALIDATORS, "ASCIIUsernameValidator"),
                            M2(VALIDATORS, "UnicodeUsernameValidator")]
    # the mark of what Moatless adds carries the next DecideRelevance's token cap
    assert s[1].symbols == [*(M2(VALIDATORS, n) for n in (
        "imports", "ASCIIUsernameValidator", "UnicodeUsernameValidator")),
        SymbolRef(VALIDATORS, IMPORT_SPANS, moatless="0.0.2", budget=12000)]
    assert s[3].views == [View(VALIDATORS, 8, 15)]
    assert s[4].edits == [VALIDATORS]
    assert s[5].views == [View(VALIDATORS, 18, 25)]
    assert s[7].views == [] and s[7].edits == []  # finish
    assert t.final_symbols == [M2(VALIDATORS, n) for n in (
        "imports", "ASCIIUsernameValidator", "UnicodeUsernameValidator")]
    assert t.model == "openrouter/anthropic/claude-3.5-sonnet"
    # input tokens of the eight actions: 2674+1479+1523+1520+1011+1940+1009+2386
    assert t.usage.input_tokens == 13542
    assert s[0].usage.output_tokens == 302


@requires_shared
def test_v002_requests_many_ranked_spans() -> None:
    t = _read("psf__requests-2317", V2)
    syms = t.steps[0].symbols
    assert len(syms) == 64  # 69 ranked entries, 64 distinct (file, span)
    assert syms[0] == M2("requests/sessions.py", "Session.request")
    assert M2("requests/compat.py", "impl:59") in syms
    assert t.steps[3].views == [View("requests/sessions.py", 378, 459)]


@requires_shared
def test_v04_django() -> None:
    t = _read("django__django-11099", V4)
    s = t.steps
    assert [x.tool for x in s] == ["find_class", "find_class", "str_replace", "str_replace",
                                   "str_replace", "finish"]
    assert s[0].views == [View(VALIDATORS, 1, 15)]
    assert s[1].views == [View(VALIDATORS, 1, 5), View(VALIDATORS, 16, 25)]
    # "Multiple occurrences of string found": nothing edited, nothing shown
    assert (s[2].views, s[2].edits) == ([], [])
    # the edit re-prints the edited file: post-edit views (Moatless' numbers there are off)
    assert s[3].edits == [VALIDATORS]
    assert s[3].views == [View(VALIDATORS, 9, 19, post_edit=True)]
    assert s[4].views == [View(VALIDATORS, 19, 29, post_edit=True)]
    assert t.final_context == []
    assert t.final_symbols == [SymbolRef(VALIDATORS, n) for n in (
        "imports", "ASCIIUsernameValidator", "UnicodeUsernameValidator")]
    assert t.model == "claude-3-5-sonnet-20241022"
    # prompt 351 + cached 3981 (Anthropic reports cache reads apart), 165 completion tokens
    assert (s[0].usage.input_tokens, s[0].usage.output_tokens) == (4332, 165)
    assert t.model_patch.count("@@ -") == 2


@requires_shared
def test_v04_astropy_and_requests() -> None:
    t = _read("astropy__astropy-12907", V4)
    f = "astropy/modeling/separable.py"
    tests = "astropy/modeling/tests/test_separable.py"
    s = t.steps
    assert s[0].views == [View(f, 17, 24), View(f, 64, 102)]
    assert s[1].views == [View(f, 17, 24), View(f, 288, 315)]
    assert s[2].tool == "view_code" and s[2].views == [View(f, 1, 318)]
    assert s[5].edits == [] and s[5].views == []  # string_not_found
    # view_range [145, 151] but the result printed 145-150: the printed numbers win
    assert s[9].tool == "view" and s[9].views == [View(tests, 145, 150)]
    assert t.final_context == [View(f, 1, None), View(tests, 1, None)]  # show_all_spans
    t = _read("psf__requests-2317", V4)
    sessions = "requests/sessions.py"
    assert t.steps[0].views == [View(sessions, 11, 36), View(sessions, 258, 277),
                                View(sessions, 377, 459)]
    assert t.steps[0].usage.api_calls == 2  # build_action + execute_action completions


V4_TREE = {
    "metadata": {"instance_id": "o__r-4"},
    "agent": {"agent_class": "moatless.agent.code_agent.CodingAgent",
              "completion": {"model": "gpt-4o"}},
    "nodes": [
        {"node_id": 0, "file_context": {"files": []}, "parent_id": None},
        {"node_id": 1, "parent_id": 0,
         "action": {"file_pattern": "a.py", "query": "x",
                    "action_args_class": "moatless.actions.semantic_search.SemanticSearchArgs"},
         "observation": {"message": "Found 1 code sections.\n\nViewed relevant code:\na.py\n```\n"
                                    "\n     3\tdef f():\n     4\t    pass\n      # ...\n"
                                    "    10\tx = 1\n```\n"},
         "completions": {"build_action": {"usage": {"prompt_tokens": 100, "cached_tokens": 50,
                                                    "completion_tokens": 5}}},
         "file_context": {"files": [{"file_path": "a.py", "spans": [{"span_id": "f"}]}]}},
        {"node_id": 2, "parent_id": 1,
         "action": {"command": "view", "path": "b.py", "view_range": [1, 2],
                    "action_args_class": "moatless.actions.edit.EditActionArguments"},
         "observation": {"message": "Here's the result of running `cat -n` on b.py:\n"
                                    "     1\tA\n     2\tB\n"}},
        {"node_id": 3, "parent_id": 1,
         "action": {"command": "create", "path": "c.py", "file_text": "x",
                    "action_args_class": "moatless.actions.edit.EditActionArguments"},
         "observation": {"message": "File created successfully at: c.py"},
         "file_context": {"files": [
             {"file_path": "a.py", "spans": [{"span_id": "f"}], "patch": "--- a/a.py\n"},
             {"file_path": "c.py", "spans": [], "show_all_spans": True,
              "patch": "--- /dev/null\n+++ b/c.py"}]}},
    ],
}


def test_v04_tree_follows_the_last_node(tmp_path: Path) -> None:
    p = tmp_path / "traj.json"
    p.write_text(json.dumps(V4_TREE))
    assert moatless.detect(p, p.read_bytes())
    (t,) = moatless.read(p, ReadOptions())
    assert t.instance_id == "o__r-4"
    assert [s.tool for s in t.steps] == ["semantic_search", "create"]  # node 2 is a side branch
    assert t.steps[0].views == [View("a.py", 3, 4), View("a.py", 10, 10)]
    assert t.steps[0].usage.input_tokens == 100  # cached tokens not added for non-Claude
    assert t.steps[1].edits == ["c.py"]
    assert t.final_symbols == [SymbolRef("a.py", "f")]
    assert t.final_context == [View("c.py", 1, None)]
    assert t.model_patch == ("diff --git a/a.py b/a.py\n--- a/a.py\n"
                             "diff --git a/c.py b/c.py\n--- /dev/null\n+++ b/c.py\n")


def test_v002_clarify_and_errors(tmp_path: Path) -> None:
    data = {"name": "AgenticLoop", "initial_message": "x", "info": {"instance_id": "i"},
            "transitions": [
                {"name": "PlanToCode", "state": {"model": "m"},
                 "actions": [{"action": {"action": "modify", "file_path": "a.py",
                                         "span_id": "Big"},
                              "output": {"file_path": "a.py", "span_id": "Big"}}]},
                {"name": "ClarifyCodeChange", "state": {"file_path": "a.py"},
                 "actions": [{"action": {"start_line": 5, "end_line": 9},
                              "output": {"start_line": 5, "end_line": 9}}]},
                {"name": "EditCode", "state": {"file_path": "a.py"},
                 "actions": [{"action": {"content": "<replace>"},
                              "output": {"diff": "", "errors": ["no change"]}}]},
            ]}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert t.steps[0].symbols == [M2("a.py", "Big")]  # no lines known: the span
    assert t.steps[1].views == [View("a.py", 5, 9)]
    assert t.steps[2].edits == []  # the edit failed
    assert t.final_context is None  # nothing identified: no declared context
    data["transitions"][0]["actions"] = {"not": "a list"}
    p.write_text(json.dumps(data))
    with pytest.raises(AdapterError) as e:
        moatless.read(p, ReadOptions())
    assert e.value.field == "transitions[0].actions"


def test_v002_identify_rounds_share_one_context(tmp_path: Path) -> None:
    """0.0.2's file context is the loop's: a second IdentifyCode's prompt shows the first
    one's spans too, and each DecideRelevance expands the whole context with its own cap
    (``max_prompt_file_tokens``; 4,000 by default, none when ``expand_context`` is off)."""
    def identify(f: str, span: str) -> dict:
        return {"name": "IdentifyCode", "properties": {},
                "actions": [{"action": {"identified_spans": [{"file_path": f,
                                                              "span_ids": [span]}]}}]}
    data = {"name": "AgenticLoop", "initial_message": "x", "info": {"instance_id": "i"},
            "transitions": [
                identify("a.py", "A"),
                {"name": "DecideRelevance", "properties": {"max_prompt_file_tokens": 9000},
                 "actions": [{"action": {"relevant": True}}]},
                identify("b.py", "B"),
                {"name": "DecideRelevance", "properties": {}, "actions": []},
                identify("c.py", "C"),
                {"name": "DecideRelevance", "properties": {"expand_context": False},
                 "actions": []},
            ]}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    first = [M2("a.py", "A"), SymbolRef("a.py", IMPORT_SPANS, moatless="0.0.2", budget=9000)]
    second = [M2("b.py", "B"), SymbolRef("b.py", "<imports>#1", moatless="0.0.2", budget=4000)]
    assert t.steps[0].symbols == first
    assert t.steps[2].symbols == [*first, *second]
    assert t.steps[3].symbols == [*first, *second, M2("c.py", "C")]
    assert t.final_symbols == [M2("a.py", "A"), M2("b.py", "B"), M2("c.py", "C")]


def test_v002_applied_change_maps_later_lines_back(tmp_path: Path) -> None:
    # shaped like pytest-dev__pytest-7373 (moatless-tools' tests/trajectories/two_edits.json):
    # the EditCode answer is an "Applied change" message whose diff removes base lines 21-31,
    # so the next plan's lines 82-121 are edited coordinates: base lines 93-132
    diff = ("--- a.py\n+++ a.py\n@@ -18,17 +18,6 @@\n x\n \n \n"
            + "".join(f"-line {n}\n" for n in range(21, 32)) + " y\n z\n w\n")
    data = {"name": "AgenticLoop", "initial_message": "x", "info": {"instance_id": "i"},
            "transitions": [
                {"name": "PlanToCode", "properties": {"model": "m"},
                 "actions": [{"action": {"file_path": "a.py", "span_id": "f"},
                              "output": {"file_path": "a.py", "span_id": "f",
                                         "start_line": 21, "end_line": 31}}]},
                {"name": "EditCode", "properties": {"file_path": "a.py"},
                 "actions": [{"action": {"content": "<replace>\n"},
                              "output": {"message": f"Applied change:\n\n```diff\n{diff}```"}}]},
                {"name": "PlanToCode", "properties": {},
                 "actions": [{"action": {"file_path": "a.py", "span_id": "g"},
                              "output": {"file_path": "a.py", "span_id": "g",
                                         "start_line": 82, "end_line": 121}}]},
                {"name": "PlanToCode", "properties": {},
                 "actions": [{"action": {"file_path": "a.py", "span_id": "h"},
                              "output": {"file_path": "a.py", "span_id": "h"}}]},
            ]}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert t.steps[0].views == [View("a.py", 21, 31)]
    assert t.steps[1].edits == ["a.py"]
    assert t.steps[1].views == [View("a.py", None, None, post_edit=True)]  # the diff shown
    assert t.steps[2].views == [View("a.py", 93, 132)]
    # a span of the edited file without lines: where it now is, the base cannot say
    assert t.steps[3].views == [View("a.py", None, None, post_edit=True)]
    assert t.steps[3].symbols == []


def test_v002_request_response_records(tmp_path: Path) -> None:
    # August 2024 runs (moatless-tools' tests/trajectories/scikit-learn__scikit-learn-13439):
    # "properties" for the state, actions as {"request", "response": {"trigger", "output"}}
    data = {"name": "AgenticLoop", "initial_message": "x", "info": {"instance_id": "i"},
            "transitions": [
                {"id": 0, "name": "Pending", "properties": {}},
                {"id": 1, "name": "SearchCode", "properties": {"model": "claude"},
                 "actions": [{"request": {"search_requests": [{"class_names": ["P"]}]},
                              "response": {"trigger": "did_search", "output": {
                                  "ranked_spans": [{"file_path": "p.py", "span_id": "P"},
                                                   {"file_path": "p.py",
                                                    "span_id": "P.__init__"}]}}}]},
                {"id": 2, "name": "ClarifyCodeChange", "properties": {"file_path": "p.py"},
                 "actions": [{"request": {"start_line": 561, "end_line": 561},
                              "response": {"trigger": "edit_code", "output": {
                                  "file_path": "p.py", "span_id": "P",
                                  "start_line": 557, "end_line": 561}},
                              "completion": {"usage": {"prompt_tokens": 2724,
                                                       "completion_tokens": 163,
                                                       "completion_cost": 0.0106}}}]},
            ]}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(data))
    assert adapters.detect(p) is moatless
    (t,) = moatless.read(p, ReadOptions())
    assert [s.tool for s in t.steps] == ["SearchCode", "ClarifyCodeChange"]
    assert t.steps[0].symbols == [M2("p.py", "P"), M2("p.py", "P.__init__")]
    assert t.steps[1].views == [View("p.py", 557, 561)]  # the response's lines, as shown
    assert (t.steps[1].usage.input_tokens, t.steps[1].usage.output_tokens) == (2724, 163)
    assert t.model == "claude"


def test_v002_recorded_prompts_show_what_they_print(tmp_path: Path) -> None:
    # The shape of moatless-tools' tests/trajectories/scikit-learn__scikit-learn-13439 (August
    # 2024, prompts kept in completion.input), with small code written for this test. After
    # DecideRelevance, the PlanToCode prompt shows the file context by span id, here with a
    # span no action added (P.__init__): those spans are DecideRelevance's. A PlanToCode naming a
    # span without lines goes to ClarifyCodeChange, whose prompt prints the span with line
    # numbers and the other methods' signatures: those lines are the PlanToCode's.
    def prompt(text: str) -> dict[str, Any]:
        return {"model": "claude", "input": [{"role": "user", "content": text}]}

    plan_prompt = ("<issue>\nx\n</issue>\n\n\n<file_context>\np.py\n```\n\n# ... rest of "
                   "the code\n\n\n<span id='P'>\n\n\nclass P(Base):\n    \"\"\"Doc.\"\"\"\n"
                   "\n\n<span id='P.__init__'>\n\n    def __init__(self, steps):\n"
                   "        self.steps = steps\n    # ... rest of the code\n```\n</file_context>")
    clarify_prompt = ("<instructions>\nAdd __len__\n</instructions>\n<code>\np.py\n```\n\n"
                      "1     # ... other code\n8     \n9     class P(Base):\n"
                      "10        \"\"\"Doc.\"\"\"\n11    \n12        def __init__(self, steps):\n"
                      "13           # ... other code\n15    \n16        def fit(self, X):\n"
                      "17           # ... other code\n```\n</code>")
    data = {"name": "AgenticLoop", "initial_message": "x", "info": {"instance_id": "i"},
            "transitions": [
                {"id": 0, "name": "Pending", "properties": {}},
                {"id": 1, "name": "IdentifyCode", "properties": {},
                 "actions": [{"request": {"identified_spans": [
                     {"file_path": "p.py", "span_ids": ["P"]}]},
                     "response": {"trigger": "finish", "output": {}}}]},
                {"id": 2, "name": "DecideRelevance", "properties": {"expand_context": False},
                 "actions": [{"request": {"relevant": True, "complete": True},
                              "response": {"trigger": "finish", "output": {}}}]},
                {"id": 3, "name": "PlanToCode", "properties": {},
                 "actions": [{"request": {"file_path": "p.py", "span_id": "P"},
                              "response": {"trigger": "edit_code", "output": {
                                  "file_path": "p.py", "span_id": "P"}},
                              "completion": prompt(plan_prompt)}]},
                {"id": 4, "name": "ClarifyCodeChange", "properties": {"file_path": "p.py"},
                 "actions": [{"request": {"start_line": 17, "end_line": 17},
                              "response": {"trigger": "edit_code", "output": {
                                  "file_path": "p.py", "span_id": "P",
                                  "start_line": 16, "end_line": 17}},
                              "completion": prompt(clarify_prompt)}]},
            ]}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert [s.tool for s in t.steps] == ["IdentifyCode", "DecideRelevance", "PlanToCode",
                                         "ClarifyCodeChange"]
    assert t.steps[0].symbols == [M2("p.py", "P")]
    assert t.steps[1].symbols == [M2("p.py", "P"), M2("p.py", "P.__init__")]
    # every numbered line but the placeholders; no span read by name any more
    assert t.steps[2].views == [View("p.py", 8, 12), View("p.py", 15, 16)]
    assert t.steps[2].symbols == []
    assert t.steps[3].views == [View("p.py", 16, 17)]
    # without the recorded prompts, the span stays a span and DecideRelevance shows nothing
    for tr in data["transitions"][1:]:
        tr["actions"][0].pop("completion", None)
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert t.steps[1].symbols == []
    assert t.steps[2].views == [] and t.steps[2].symbols == [M2("p.py", "P")]


def test_detect_rejects_other_formats(tmp_path: Path) -> None:
    for obj in ({"trajectory": [], "info": {}}, {"history": [], "steps": []},
                {"instance_id": "x", "text": 'a "transitions": [] "initial_message"'}):
        p = tmp_path / "o.json"
        p.write_text(json.dumps(obj))
        assert not moatless.detect(p, p.read_bytes())


def _mutate(obj: Any, rng: random.Random) -> Any:
    junk = [None, 1, "x", [], {}, [1], {"a": 1}, True, -1]
    if isinstance(obj, dict) and obj and rng.random() < 0.85:
        k = rng.choice(list(obj))
        return {**obj, k: _mutate(obj[k], rng)}
    if isinstance(obj, list) and obj and rng.random() < 0.85:
        i = rng.randrange(len(obj))
        return [*obj[:i], _mutate(obj[i], rng), *obj[i + 1:]]
    return rng.choice(junk)


@requires_shared
@pytest.mark.parametrize("name", [V1, V2, V4])
def test_fuzz_truncated_and_mutated(tmp_path: Path, name: str) -> None:
    raw = (CORPUS / "django__django-11099" / "trajs" / name).read_bytes()
    data = json.loads(raw)
    rng = random.Random(name)
    p = tmp_path / "t.json"
    seen = set()
    for k in range(200):
        if k < 20:
            p.write_bytes(raw[:rng.randrange(len(raw))])
        else:
            p.write_text(json.dumps(_mutate(data, rng)))
        try:
            moatless.read(p, ReadOptions())
            seen.add("ok")
        except AdapterError:
            seen.add("error")
    assert seen == {"ok", "error"}


# --- what Moatless 0.0.x showed, read against the file at the base commit -----------------

REQ_REPOS = FIXTURES / "adapters" / "autocoderover" / "repos"
CASES_DIR = FIXTURES / "moatless"
REQ_COMMIT = "091991be0da19de9108dbe5e3752917fea3d7fdc"
#: Moatless's own rendering of the cut requests/sessions.py (benchmarks/moatless_spans.py),
#: among them Session.request within 4000 tokens, and as shown after an identify.
SHOWN = json.loads((FIXTURES / "moatless" / "expected.json").read_text())
SEARCHED = SHOWN["selections"].index({"Session.request": 4000})
IDENTIFIED = SHOWN["selections"].index({"Session.request": None, IMPORT_SPANS: None})


def _moatless_lines(version: str, selection: int) -> list[tuple[int, int]]:
    nums = SHOWN[version]["sessions.py"]["rendered"][selection]
    return [(a, b) for a, b in line_runs(nums)]


def _resolved_req(name: str, tmp_path: Path):
    (t,) = moatless.read(CORPUS / "psf__requests-2317" / "trajs" / name, ReadOptions())
    snap = RepoCache(REQ_REPOS).open(instance_id=t.instance_id, repo="psf/requests",
                                     commit=REQ_COMMIT)
    return TrajectoryResolver(snap, SymbolExtractor(cache_dir=tmp_path)).resolve(t)


def _lines(step) -> list[tuple[int | None, int | None]]:
    return sorted((v.start_line, v.end_line) for v in step.views)


@requires_shared
def test_v001_requests_shows_moatless_rendering(tmp_path: Path) -> None:
    """The real 0.0.1 run: its search result is Moatless's rendering of Session.request (the
    class header above it, the docstring and comments left out), not the tree-sitter method;
    after identify the coding loop showed the same span with the file's imports."""
    t, res = _resolved_req(V1, tmp_path)
    assert _lines(t.steps[0]) == _moatless_lines("0.0.1", SEARCHED)
    # read off the cut file: class header 39 (blank 37-38 before it), the signature 40-54,
    # then 89-121 less the docstring (55-88) and two comments with the blank lines before them
    assert _lines(t.steps[0]) == [(37, 54), (89, 90), (93, 111), (114, 121)]
    assert t.steps[1].tool == "identify"
    assert _lines(t.steps[1]) == _moatless_lines("0.0.1", IDENTIFIED)
    assert (11, 33) in _lines(t.steps[1])  # the imports span (the docstring span is not added)
    assert t.steps[1].symbols == [] and res.unresolved_symbols == []
    # the declared context: the identified span as Moatless shows it
    assert sorted((v.start_line, v.end_line) for v in t.final_context) == _lines(t.steps[0])


@requires_shared
def test_v002_requests_identify_shows_moatless_rendering(tmp_path: Path) -> None:
    """The real 0.0.2 run: 0.0.2 cuts the same file differently (a module docstring followed
    by imports is one 'docstring' span, no 'imports' span, so not an initiation span); after
    IdentifyCode that span is added all the same, related to Session.request through the
    names it imports (``Request(...)``), and printed without the docstring."""
    (raw,) = moatless.read(CORPUS / "psf__requests-2317" / "trajs" / V2, ReadOptions())
    marks = [r for s in raw.steps if s.tool == "IdentifyCode" for r in s.symbols
             if r.name == IMPORT_SPANS]
    assert marks and {r.budget for r in marks} == {12000}  # its DecideRelevance cap
    t, _ = _resolved_req(V2, tmp_path)
    ident = next(s for s in t.steps if s.tool == "IdentifyCode")
    assert _lines(ident) == _moatless_lines("0.0.2", IDENTIFIED)
    assert _lines(ident) == [(11, 33), (36, 54), (89, 90), (93, 111), (114, 121)]
    # the search step names 64 spans of several files; those the cut file still has render
    # as Moatless renders them (its 'docstring' span is the docstring and imports, printed
    # without the docstring), the others stay unresolved names
    assert _lines(t.steps[0]) == [(11, 33), (36, 54), (89, 90), (93, 111), (114, 121)]


@requires_shared
def test_v001_requests_evaluated_from_moatless_rendering(tmp_path: Path) -> None:
    """The evaluator's preparer credits the same lines as the resolver, the file, and the
    method whose span was shown (by its signature: its header line is always printed)."""
    (t,) = moatless.read(CORPUS / "psf__requests-2317" / "trajs" / V1, ReadOptions())
    snap = RepoCache(REQ_REPOS).open(instance_id=t.instance_id, repo="psf/requests",
                                     commit=REQ_COMMIT)
    gold = GoldInstance(t.instance_id, "psf/requests", REQ_COMMIT,
                        context=[View("requests/sessions.py", 88, 88)])
    inst, notes = Preparer(SymbolExtractor(cache_dir=tmp_path)).prepare(gold, t, snap)
    fid = notes.paths.index("requests/sessions.py")
    search = inst["steps"][0]
    assert sorted((a, b) for f, a, b in search["lines"] if f == fid and b != a) == [
        (37, 54), (89, 90), (93, 111), (114, 121)]
    assert fid in search["files"]
    assert notes.unresolved_symbols == []
    # Session.request is credited, with its first line (already among the shown lines)
    [(sym_fid, k)] = search["symbols"]
    assert sym_fid == fid and inst["files"][fid]["symbols"][k][0] > 0


def test_v002_recorded_prompt_lines_blank_and_placeholder() -> None:
    # A blank line is printed as its number alone; a placeholder is not a shown line.
    from ctxeval.reading.adapters.moatless import _prompt_code_lines

    text = ("<code>\na.py\n```\n1 def f():\n2\n3     # ... other code\n4     return 1\n```\n"
            "</code>")
    assert _prompt_code_lines(text, "a.py") == [(1, 2), (4, 4)]
    assert _prompt_code_lines(text, "b.py") == []


# --- Moatless 0.0.1's coding loop: every prompt belongs to the action that led to it --------

RUN_001 = FIXTURES / "moatless" / "run_0.0.1_billing.json"
BILLING = "billing.py"


def _billing_rendering(selection: dict[str, int | None], comments: bool = False) -> set[int]:
    """Moatless's own rendering of ``billing.py`` for a selection (expected.json)."""
    key = "rendered_comments" if comments else "rendered"
    return set(SHOWN["0.0.1"][BILLING][key][SHOWN["selections"].index(selection)])


def _step_lines(step) -> set[int]:
    return {n for v in step.views if not v.post_edit and v.start_line is not None
            for n in range(v.start_line, v.end_line + 1)}


def test_v001_coding_loop_prompts_credited_to_their_actions(tmp_path: Path) -> None:
    """A 0.0.1 run written for this, shaped after the June 2024 runs (two searches in one
    call, an identify, a change through Clarification, an applied edit, a change that fails
    and is rejected): each step's lines are those Moatless's own renderer prints in the
    prompt its action led to (benchmarks/moatless_spans.py), the edited line left out.
    (Moatless asks for line numbers only for a span over 750 tokens; ``Invoice`` is smaller,
    so Moatless itself would not have gone through Clarification here: the reader follows the
    states the run records. The run below, ``..._new_spans.json``, is one Moatless replays.)"""
    (raw,) = moatless.read(RUN_001, ReadOptions())
    assert [s.tool for s in raw.steps] == [
        "search", "search", "identify", "request_for_change", "specify_lines",
        "search_replace", "request_for_change", "search_replace", "reject", "finish"]
    repo = tmp_path / "repos" / "o__billing@c0ffee"
    repo.mkdir(parents=True)
    (repo / BILLING).write_bytes((CASES_DIR / BILLING).read_bytes())
    snap = RepoCache(tmp_path / "repos").open(instance_id=raw.instance_id, repo="o/billing",
                                             commit="c0ffee")
    t, res = TrajectoryResolver(snap, SymbolExtractor(cache_dir=tmp_path / "c")).resolve(raw)
    s = t.steps
    assert res.unresolved_symbols == []
    context = {"Invoice.total": None, IMPORT_SPANS: None}
    # the first search's Invoice.total was found again by the second, in the same call: the
    # next prompt shows it with the second (the first shows the class alone, whole: 1333
    # tokens is more than it has)
    assert [r.name for r in raw.steps[0].symbols] == ["Invoice"]
    assert _step_lines(s[0]) == _billing_rendering({"Invoice": None})
    assert _step_lines(s[1]) == _billing_rendering({"Invoice.total": None})
    # identify: the coding loop's first prompt, without comments
    assert _step_lines(s[2]) == _billing_rendering(context)
    # the change asked for a class too large to edit: Clarification shows the class with its
    # comments and the signature of everything in it
    assert _step_lines(s[3]) == _billing_rendering({"Invoice": None, SIGNATURES: None}, True)
    # the class's docstring and its "# -- totals" comment; of total, its signature alone
    assert {13, 21, 23} <= _step_lines(s[3]) and not {24, 25} & _step_lines(s[3])
    # specify_lines -> CodeChange: the context with comments, and the <search> block 23-31
    assert _step_lines(s[4]) == _billing_rendering(context, True) | set(range(23, 32))
    # the applied edit -> Pending: the context after the change; line 30 is post-edit
    assert s[5].edits == [BILLING]
    assert _step_lines(s[5]) == _billing_rendering(context) - {30}
    assert View(BILLING, None, None, post_edit=True) in s[5].views
    # the second change: CodeChange of the edited file, its <search> block mapped back
    assert _step_lines(s[6]) == (_billing_rendering(context, True) | set(range(23, 32))) - {30}
    # a failed edit stays in CodeChange (nothing new shown); the reject goes back to Pending
    assert s[7].views == [] and s[7].edits == []
    assert _step_lines(s[8]) == _step_lines(s[5])
    assert s[9].views == []


def test_v001_results_no_later_call_showed_credit_nothing(tmp_path: Path) -> None:
    """A search in the run's last call (the run stopped: its cost limit) and an identify
    after which the coding loop never called the model were never shown."""
    data = json.loads(RUN_001.read_text())
    data["steps"] = data["steps"][:1]
    p = tmp_path / "stopped.json"
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert [s.symbols for s in t.steps] == [[], []]
    data = json.loads(RUN_001.read_text())
    data["steps"] = data["steps"][:2]
    p.write_text(json.dumps(data))
    (t,) = moatless.read(p, ReadOptions())
    assert t.steps[0].symbols and t.steps[2].tool == "identify" and t.steps[2].symbols == []
    assert t.final_symbols == [M1(BILLING, "Invoice.total")]


def test_v001_symbol_marks_round_trip_through_json() -> None:
    r = SymbolRef(BILLING, "Invoice", moatless="0.0.1", comments=True, patches=("@@ x",))
    assert SymbolRef.from_json(r.to_json()) == r
    assert r.to_json() == {"file": BILLING, "name": "Invoice", "moatless": "0.0.1",
                           "comments": True, "patches": ["@@ x"]}
    # on a plain name (not a Moatless span) the keys mean nothing and are not read
    assert SymbolRef.from_json({"file": "a.py", "name": "f", "comments": True,
                                "patches": ["@@ x"]}) == SymbolRef("a.py", "f")


def test_v001_edited_file_rendered_as_moatless_renders_it(tmp_path: Path) -> None:
    """A run written for this (fixtures/moatless/run_0.0.1_billing_new_spans.json): an edit
    adds a function (a new span, ``_clean``, that joins the context) above ``parse``, a second
    edit changes ``Invoice.total``. Its every step was replayed through Moatless 0.0.1's own
    loops (benchmarks/adapter_accuracy/moatless_loop_label.py --trajectory): each step's base
    lines are those, and what the edits wrote is post-edit."""
    expected = json.loads((CASES_DIR / "run_0.0.1_billing_new_spans.expected.json").read_text())
    (raw,) = moatless.read(CASES_DIR / "run_0.0.1_billing_new_spans.json", ReadOptions())
    assert SymbolRef(BILLING, "_clean", moatless="0.0.1") in [
        replace(r, comments=False, patches=()) for r in raw.steps[4].symbols]
    repo = tmp_path / "repos" / "o__billing@c0ffee"
    repo.mkdir(parents=True)
    (repo / BILLING).write_bytes((CASES_DIR / BILLING).read_bytes())
    snap = RepoCache(tmp_path / "repos").open(instance_id=raw.instance_id, repo="o/billing",
                                             commit="c0ffee")
    t, res = TrajectoryResolver(snap, SymbolExtractor(cache_dir=tmp_path / "c")).resolve(raw)
    assert res.unresolved_symbols == []
    for s in t.steps:
        want = set(expected.get(str(s.index), {}).get("lines", {}).get(BILLING, []))
        assert _step_lines(s) == want, (s.index, s.tool)
        # what the edits wrote was shown too: the file at file level, after its edit
        if expected.get(str(s.index), {}).get("post_edit"):
            assert View(BILLING, None, None, post_edit=True) in s.views
