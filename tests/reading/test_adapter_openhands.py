"""OpenHands adapters: ``output.jsonl`` event histories and ``llm_completions`` directories.

Expected views were read off the observations by hand (``cat -n`` numbers, diffs, view_range
errors), not copied from the adapters' output.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.model import View
from ctxeval.reading.adapters import ReadOptions, detect
from ctxeval.reading.adapters import openhands as oh
from ctxeval.reading.adapters import openhands_completions as oc
from ctxeval.reading.adapters import swe_agent as sa

FIX = FIXTURES / "adapters" / "openhands"
OPTS = ReadOptions()
PONY = CORPUS / "ponylang__ponyc-4593" / "trajs" / "openhands_output.jsonl"
COMPLETIONS = {
    "django__django-11099": 16,
    "astropy__astropy-12907": 9,
}


def _comp_dir(iid: str) -> Path:
    return CORPUS / iid / "trajs" / "openhands_v0.15.0_claude35__llm_completions"


def _lines(step) -> list[tuple[int | None, int | None, bool]]:
    return [(v.start_line, v.end_line, v.post_edit) for v in step.views]


# ----------------------------------------------------------------------------- output.jsonl

def test_fixture_output_jsonl():
    t1, t2 = oh.read(FIX / "output.jsonl", OPTS)
    assert (t1.instance_id, t1.repo, t1.base_commit, t1.model) == (
        "demo__repo-3", "demo/repo", "abc123", "demo/model")
    assert [s.tool for s in t1.steps] == ["run", "read", "error", "edit", "read", "finish"]
    s = t1.steps
    f = "/workspace/demo__repo__1.0/pkg/mod.py"
    assert [(v.file.endswith("pkg/mod.py"), v.start_line, v.end_line) for v in s[0].views] == [
        (True, 2, 2), (True, 20, 20)]                      # grep -n via the shell reader
    assert s[1].views == [View(f, 10, 12)]
    assert s[2].views == []                                 # rejected tool call
    # insert of 2 lines after line 3 (diff "@@ -3,0 +4,2 @@"): snippet 2..7 is base 2-5
    assert s[3].edits == [f] and s[3].views == [View(f, 2, 5)]
    assert s[4].views == [View(f, 1, 6)]                    # edited 1..8 minus new 4-5
    assert [None if x.usage is None else (x.usage.input_tokens, x.usage.output_tokens)
            for x in s] == [(100, 10), (150, 10), None, (200, 20), (250, 10), (200, 20)]
    assert t1.usage is not None
    assert (t1.usage.input_tokens, t1.usage.output_tokens, t1.usage.cost, t1.usage.api_calls) \
        == (900, 70, 0.12, 5)
    assert t1.model_patch == "diff --git a/pkg/mod.py b/pkg/mod.py\n"
    assert t2.instance_id == "demo__repo-4" and len(t2.steps) == 1 and t2.steps[0].views == []
    assert t2.model_patch is None and t2.usage is None     # zero cost with no costs = unknown


def test_output_jsonl_instance_filter_and_bad_lines(tmp_path: Path):
    (t,) = oh.read(FIX / "output.jsonl", ReadOptions(instance_id="demo__repo-4"))
    assert t.instance_id == "demo__repo-4"
    raw = (FIX / "output.jsonl").read_text().splitlines()
    p = tmp_path / "output.jsonl"
    p.write_text(raw[0] + "\n{not json\n" + raw[1][:50] + "\n")
    (good,) = oh.read(p, OPTS)
    assert good.instance_id == "demo__repo-3"
    assert [pr["line"] for pr in good.extra["problems"]] == [2, 3]
    p.write_text("{broken\n")
    with pytest.raises(AdapterError) as err:
        oh.read(p, OPTS)
    assert err.value.line == 1


def test_saved_event_list(tmp_path: Path):
    # the JSON array OpenHands saves a run as (save_trajectory_path, its replay files); newer
    # versions answer an edit with the diff it applied, which maps later reads back exactly
    def ev(i, **kw):
        return {"id": i, "source": "agent", **kw}

    diff = "--- /w/a.py\n+++ /w/a.py\n@@ -2,0 +3,2 @@\n+new 1\n+new 2\n"
    catn = "Here's the result of running `cat -n` on /w/a.py:\n" + "".join(
        f"{n:6d}\tx\n" for n in range(1, 7))
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "fix it"}},
        ev(1, action="read", args={"path": "/w/a.py"}),
        ev(2, observation="read", cause=1, content=catn, extras={"path": "/w/a.py"}),
        ev(3, action="edit", args={"path": "/w/a.py", "content": ""}),
        ev(4, observation="edit", cause=3, content=diff, extras={"path": "/w/a.py"}),
        ev(5, action="read", args={"path": "/w/a.py"}),
        ev(6, observation="read", cause=5, content=catn, extras={"path": "/w/a.py"}),
        ev(7, action="finish", args={"outputs": {}}),
    ]
    p = tmp_path / "basic.json"
    p.write_text(json.dumps(events))
    assert detect(p) is oh
    (t,) = oh.read(p, OPTS)
    assert t.instance_id == "basic"  # named by the file, or by --instance-id
    assert [s.tool for s in t.steps] == ["read", "edit", "read", "finish"]
    assert _lines(t.steps[0]) == [(1, 6, False)]
    assert t.steps[1].edits == ["/w/a.py"]
    assert _lines(t.steps[1]) == [(None, None, True)]  # the diff it showed, as edited
    # lines 3-4 are the two inserted ones; 1-2 and 5-6 are base lines 1-2 and 3-4
    assert _lines(t.steps[2]) == [(1, 4, False)]
    (t,) = oh.read(p, ReadOptions(instance_id="x__y-1"))
    assert t.instance_id == "x__y-1"
    p.write_text("[1, 2]")
    with pytest.raises(AdapterError, match="array of event objects"):
        oh.read(p, OPTS)


def test_old_style_pair_history():
    rec = {"instance_id": "a__b-1", "history": [
        [{"action": "read", "source": "agent", "args": {"path": "/w/x.py"}},
         {"observation": "read", "content": "Here's the result of running `cat -n` on /w/x.py:\n"
                                            "     4\tfoo\n     5\tbar\n"}],
        [{"action": "message", "source": "agent", "args": {}}, {"observation": "null"}]]}
    t = oh.trajectory_from_record(rec, "mem", 1, OPTS)
    assert len(t.steps) == 1 and t.steps[0].views == [View("/w/x.py", 4, 5)]


def test_openhands_detect(tmp_path: Path):
    p = FIX / "output.jsonl"
    assert oh.detect(p, p.read_bytes())
    swe = FIXTURES / "adapters" / "swe-agent" / "demo__repo-1.traj"
    assert not oh.detect(swe, swe.read_bytes())
    other = tmp_path / "x.jsonl"
    other.write_text(json.dumps({"instance_id": "a", "model_patch": ""}) + "\n")
    assert not oh.detect(other, other.read_bytes())
    cb = tmp_path / "pred.jsonl"
    cb.write_text(json.dumps({"instance_id": "a", "traj_data": {"history": [], "source": 1},
                              "test_result": {}}) + "\n")
    assert not oh.detect(cb, cb.read_bytes())


@requires_shared
def test_corpus_pony_records():
    assert detect(PONY) is oh
    ts = oh.read(PONY, OPTS)
    assert [(t.instance_id, len(t.steps)) for t in ts] == [
        ("ponylang__ponyc-4595", 23), ("ponylang__ponyc-4593", 34), ("ponylang__ponyc-4588", 50)]
    assert all(t.repo == "ponylang/ponyc" and t.model_patch for t in ts)
    assert ts[1].model_patch.startswith("diff --git a/packages/cli/command_parser.pony")
    assert ts[2].extra["agent_error"].startswith("RuntimeError: Agent reached maximum")
    u = ts[1].usage
    assert u is not None and (u.input_tokens, u.output_tokens, u.cost) == (410169, 5156, None)


@requires_shared
def test_corpus_pony_4595_reads():
    t = oh.read(PONY, ReadOptions(instance_id="ponylang__ponyc-4595"))[0]
    f = "/workspace/ponylang__ponyc__0.1/src/libponyc/ast/parser.c"
    s = t.steps
    assert s[9].views == [View(f, 650, 700)]      # view_range [650, 700]
    assert s[10].views == [View(f, 650, 655)]
    assert s[12].views == [View(f, 690, 697)]
    assert s[11].edits == [] and s[13].edits == [f]
    # diff "@@ -695,0 +696 @@": snippet 689..702 is base 689..701
    assert s[13].views == [View(f, 689, 701)]
    assert [s[21].tool, s[22].tool] == ["think", "finish"]


@requires_shared
def test_corpus_pony_4593_errors_are_steps_without_views():
    t = oh.read(PONY, ReadOptions(instance_id="ponylang__ponyc-4593"))[0]
    f = "/workspace/ponylang__ponyc__0.1/packages/cli/cli.pony"
    s = t.steps
    assert s[12].tool == "error" and s[12].views == []
    assert s[14].views == []                        # view_range past the end: ERROR
    assert s[15].views == [View(f, 100, 122)]       # view_range [100, -1]
    assert s[16].views == [View(f, 1, 122)]         # view_range [1, -1]


@requires_shared
def test_corpus_pony_4588_diff_mapped_edits():
    t = oh.read(PONY, ReadOptions(instance_id="ponylang__ponyc-4588"))[0]
    f = "/workspace/ponylang__ponyc__0.1/src/libponyc/expr/match.c"
    s = t.steps
    assert s[7].views == [View(f, 282, 449)]
    assert s[12].edits == [f]
    # two single-line inserts after 317: snippet 314..321 shows base 314..319 (+2 new lines)
    assert s[19].views == [View(f, 314, 321)]
    # "@@ -318,2 +318 @@" then snippet 315..323 -> base 315..317 and 318..322
    assert s[20].views == [View(f, 315, 322)]
    assert s[29].edits == [f]                       # sed -i: unknown change
    assert s[30].views == [View(f, 315, 318, post_edit=True)]   # view_range [315, 318]
    assert s[34].views == [View("/workspace/ponylang__ponyc__0.1/Makefile", 190, 195)]


@requires_shared
def test_corpus_snippet_located_edits_agree_with_recorded_diffs():
    """Where OpenHands recorded a diff, locating the edit from its snippet must agree or abstain."""
    seen = agreed = 0
    for line in PONY.read_text().splitlines():
        rec = json.loads(line)
        actions = {e.get("id"): e for e in rec["history"] if "action" in e}
        for e in rec["history"]:
            if e.get("observation") == "edit" and "has been edited" in e.get("content", ""):
                args = actions[e["cause"]]["args"]
                located = sa.editor_hunk(args["command"], args, e["content"])
                seen += 1
                if located is not None:
                    assert located == sa.hunks_from_diff(e["extras"]["diff"])
                    agreed += 1
    assert (seen, agreed) == (6, 4)   # both str_replace snippets are left unmapped


# ----------------------------------------------------------------------------- completions

def test_fixture_completions_dir():
    d = FIX / "demo_run__llm_completions"
    assert oc.detect(d, b"")
    (t,) = oc.read(d, OPTS)
    assert t.instance_id == "demo__repo-5" and t.model == "demo/claude"
    f = "/workspace/demo__repo__1.0/pkg/mod.py"
    s = t.steps
    assert [x.tool for x in s] == ["execute_bash", "str_replace_editor", "str_replace_editor",
                                   "finish"]
    assert [(v.file.endswith("pkg/mod.py"), v.start_line, v.end_line) for v in s[0].views] == [
        (True, 2, 2)]
    assert s[1].views == [View(f, 5, 7)]
    # the snippet is not where the editor prints one (4 lines of context): not provable
    assert s[2].edits == [f] and s[2].views == [View(f, 5, 7, post_edit=True)]
    assert [None if x.usage is None else x.usage.cost for x in s] == [0.01, 0.02, None, 0.03]
    assert t.usage is not None and (t.usage.input_tokens, t.usage.output_tokens,
                                    t.usage.api_calls) == (600, 60, 3)
    assert t.usage.cost == pytest.approx(0.06)
    # the log strips blank context lines to ""; they come back as " "
    assert t.model_patch is not None and t.model_patch.endswith("+six\n \n")


def test_completions_parent_dir_and_missing_log(tmp_path: Path):
    run = tmp_path / "llm_completions"
    shutil.copytree(FIX / "demo_run__llm_completions", run / "demo__repo-6")
    assert oc.detect(run, b"")
    (t,) = oc.read(run, OPTS)
    assert t.instance_id == "demo__repo-6" and t.model_patch is None and len(t.steps) == 4


def test_completions_run_layout_finds_infer_logs(tmp_path: Path):
    """OpenHands' own layout: <out>/llm_completions/<id>/ and <out>/infer_logs/instance_<id>.log."""
    inst = tmp_path / "out" / "llm_completions" / "demo__repo-5"
    shutil.copytree(FIX / "demo_run__llm_completions", inst)
    logs = tmp_path / "out" / "infer_logs"
    logs.mkdir()
    shutil.copy(FIX / "demo_run__infer.log", logs / "instance_demo__repo-5.log")
    (t,) = oc.read(inst.parent, OPTS)
    assert t.instance_id == "demo__repo-5"
    assert t.model_patch is not None and t.model_patch.startswith("diff --git a/pkg/mod.py")


def test_patch_from_log_picks_the_instance():
    log = ("x - Got git diff for instance a__b-1:\n--------\ndiff --git a/f b/f\n@@ -1 +1 @@\n-a\n"
           "+b\n--------\ny - Got git diff for instance c__d-2:\n--------\ndiff --git a/g b/g\n"
           "--------\n")
    assert oc.patch_from_log(log, "c__d-2") == ("c__d-2", "diff --git a/g b/g\n")
    assert oc.patch_from_log(log, None) == (None, None)   # ambiguous without an id
    assert oc.patch_from_log(log, "zz__z-3") == (None, None)


def test_clean_bash_output():
    out, rc, cwd = oc.clean_bash_output(
        "grep -n x a.py",
        "grep -n x a.py\r\n3:x = 1\r\n[Python Interpreter: /usr/bin/python]\n"
        "root@openhands-workspace:/workspace/r__r__1 # \n[Command finished with exit code 0]")
    assert (out, rc, cwd) == ("3:x = 1\n", 0, "/workspace/r__r__1")


def test_completions_bad_inputs(tmp_path: Path):
    with pytest.raises(AdapterError):
        oc.read(tmp_path, OPTS)
    f = tmp_path / "one.json"
    f.write_text("{}")
    with pytest.raises(AdapterError):
        oc.read(f, OPTS)
    assert not oc.detect(f, f.read_bytes())


@requires_shared
def test_corpus_completions():
    for iid, n in COMPLETIONS.items():
        d = _comp_dir(iid)
        assert detect(d) is oc
        (t,) = oc.read(d, OPTS)
        assert t.instance_id == iid and len(t.steps) == n
        costs = [json.loads(p.read_bytes())["cost"] for p in d.glob("*.json")]
        assert t.usage is not None and t.usage.api_calls == len(costs)
        assert t.usage.cost == pytest.approx(sum(costs))
        assert t.steps[-1].tool == "finish"


@requires_shared
def test_corpus_completions_django_views_and_patch():
    (t,) = oc.read(_comp_dir("django__django-11099"), OPTS)
    f = "/workspace/django__django__3.0/django/contrib/auth/validators.py"
    s = t.steps
    assert s[0].tool == "execute_bash" and s[0].views == []          # ls -R lists names
    assert s[3].views == [View(f, 1, 25)]
    assert s[7].edits == []                                          # "Multiple occurrences"
    # str_replace of base lines 8-10 (3 -> 3 lines), located from the snippet 4..14
    assert s[8].edits == [f] and s[8].views == [View(f, 4, 7), View(f, 11, 14)]
    assert s[9].views == [View(f, 14, 17), View(f, 21, 24)]        # base lines 18-20 replaced
    assert s[11].edits == []                                         # create refused
    assert t.model_patch is not None
    assert t.model_patch.startswith("diff --git a/django/contrib/auth/validators.py")
    assert "+    regex = r'\\A[\\w.@+-]+\\Z'\n" in t.model_patch
    assert "\n \n @deconstructible\n" in t.model_patch


@requires_shared
def test_corpus_completions_astropy_views():
    (t,) = oc.read(_comp_dir("astropy__astropy-12907"), OPTS)
    f = "/workspace/astropy__astropy__4.3/astropy/modeling/separable.py"
    assert t.steps[3].views == [View(f, 1, 317)]
    assert t.steps[4].edits == [f]
    # base 244-245 replaced by two lines; snippet 240..249 shows base 240-243 and 246-249
    assert t.steps[4].views == [View(f, 240, 243), View(f, 246, 249)]
    assert "-        cright[-right.shape[0]:, -right.shape[1]:] = 1" in (t.model_patch or "")


@requires_shared
def test_corpus_openhands_detectors_claim_nothing_else():
    for p in CORPUS.rglob("*"):
        if p.is_file() and p != PONY and p.suffix in (".json", ".jsonl", ".traj"):
            if p.parent.name.endswith("llm_completions"):
                continue
            with p.open("rb") as fh:
                assert not oh.detect(p, fh.read(65536)), p
        if p.is_dir() and not p.name.endswith("llm_completions"):
            assert not oc.detect(p, b""), p


# ----------------------------------------------------------------------------- robustness

_JUNK = [None, 7, "", "x", [], {}, [1], {"a": 1}, True, 1.5]


def _mutate(obj, rng: random.Random, depth: int = 0):
    """Replace a few values anywhere in a JSON tree with junk or truncated strings."""
    if isinstance(obj, dict):
        return {k: (rng.choice(_JUNK) if rng.random() < 0.05 else _mutate(v, rng, depth + 1))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [rng.choice(_JUNK) if rng.random() < 0.05 else _mutate(v, rng, depth + 1)
                for v in obj]
    if isinstance(obj, str) and obj and rng.random() < 0.1:
        return obj[: rng.randrange(len(obj))]
    return obj


def _check_oh(p: Path) -> None:
    """Reading either works (every record a trajectory or a reported problem) or says why."""
    try:
        out = oh.read(p, OPTS)
    except AdapterError:
        return
    assert out and all(isinstance(v, View) for t in out for s in t.steps for v in s.views)


def _check_oc(d: Path) -> None:
    try:
        out = oc.read(d, OPTS)
    except AdapterError:
        return
    assert len(out) == 1 and all(isinstance(v, View) for s in out[0].steps for v in s.views)


def test_mutated_fixtures_only_adapter_errors(tmp_path: Path):
    rng = random.Random(5)
    raw = (FIX / "output.jsonl").read_bytes()
    recs = [json.loads(x) for x in raw.splitlines()]
    for i in range(40):
        p = tmp_path / f"o{i}.jsonl"
        if i % 4 == 0:
            p.write_bytes(raw[: rng.randrange(len(raw))])
        else:
            p.write_text("\n".join(json.dumps(_mutate(r, rng)) for r in recs))
        _check_oh(p)
    src = FIX / "demo_run__llm_completions"
    for i in range(30):
        d = tmp_path / f"c{i}" / "x__llm_completions"
        d.mkdir(parents=True)
        for f in src.glob("*.json"):
            text = f.read_bytes()
            if i % 5 == 0:
                (d / f.name).write_bytes(text[: rng.randrange(len(text))])
            else:
                (d / f.name).write_text(json.dumps(_mutate(json.loads(text), rng)))
        _check_oc(d)


@requires_shared
def test_truncated_and_mutated_corpus_only_adapter_errors(tmp_path: Path):
    rng = random.Random(11)
    raw = PONY.read_bytes()
    recs = [json.loads(x) for x in raw.splitlines() if x.strip()]
    for i in range(6):
        p = tmp_path / f"pony{i}.jsonl"
        if i % 2 == 0:
            p.write_bytes(raw[: rng.randrange(len(raw))])
        else:
            p.write_text("\n".join(json.dumps(_mutate(r, rng)) for r in recs))
        _check_oh(p)
    for iid in COMPLETIONS:
        src = _comp_dir(iid)
        files = sorted(src.glob("*.json"))
        for i in range(3):
            d = tmp_path / f"{iid}-{i}" / "x__llm_completions"
            d.mkdir(parents=True)
            for f in files:
                text = f.read_bytes()
                if i == 0 and f == files[-1]:
                    (d / f.name).write_bytes(text[: rng.randrange(len(text))])
                elif i > 0:
                    (d / f.name).write_text(json.dumps(_mutate(json.loads(text), rng)))
                else:
                    (d / f.name).write_bytes(text)
            _check_oc(d)
