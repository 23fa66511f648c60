"""SWE-agent adapter: 0.x windowed editor and 1.x ``str_replace_editor`` trajectories.

Expected views were read off the observations by hand (window headers, ``N:`` and ``N<TAB>``
numbers), not copied from the adapter's output.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.model import Trajectory, View
from ctxeval.reading.adapters import ReadOptions, detect
from ctxeval.reading.adapters import swe_agent as sa

FIX = FIXTURES / "adapters" / "swe-agent"
OPTS = ReadOptions()


def _read(path: Path) -> Trajectory:
    (t,) = sa.read(path, OPTS)
    return t


def _lines(step) -> list[tuple[int | None, int | None, bool]]:
    return [(v.start_line, v.end_line, v.post_edit) for v in step.views]


# ----------------------------------------------------------------------------- helpers

def test_ranges_of_merges_and_sorts():
    assert sa.ranges_of([5, 3, 4, 9, 10, 1]) == [(1, 1), (3, 5), (9, 10)]
    assert sa.ranges_of([]) == []


def test_window_blocks_flags_preview_and_original():
    text = ("This is how your edit would have looked if applied\n"
            "[File: /r/a.py (12 lines total)]\n(1 more lines above)\n2:x\n3:y\n"
            "(9 more lines below)\n"
            "This is the original code before your edit\n"
            "[File: /r/a.py (11 lines total)]\n2:x\n3:z\n")
    blocks = sa.window_blocks(text)
    assert [(b.path, b.ranges, b.total, b.preview) for b in blocks] == [
        ("/r/a.py", [(2, 3)], 12, True), ("/r/a.py", [(2, 3)], 11, False)]


def test_catn_blocks_snippet_of_edited_file_takes_path_from_message():
    text = ("The file /r/b.py has been edited. Here's the result of running `cat -n` on a snippet "
            "of the edited file:\n     7\tfoo\n     8\tbar\nReview the changes.\n")
    (blk,) = sa.catn_blocks(text)
    assert blk.path == "/r/b.py" and blk.ranges == [(7, 8)]


def test_numbered_run_stops_when_numbers_go_backwards():
    nums, end = sa.numbered_run(["5\ta", "6\tb", "2\tc"], 0, sa._CATN_LINE)
    assert nums == [5, 6] and end == 2


def test_hunks_from_diff_and_mapping_back():
    diff = "--- a\n+++ b\n@@ -3,0 +4,2 @@\n+x1\n+x2\n@@ -10,3 +12,2 @@\n ctx\n-old1\n-old2\n+new\n"
    hunks = sa.hunks_from_diff(diff)
    assert hunks == [(4, 0, 2), (11, 2, 1)]
    tr = sa.EditTracker()
    tr.record("/r/f.py", hunks)
    # edited lines 1..3 are base 1..3, 4-5 are new, 6..12 are base 4..10, 13 is new, 14.. is 13..
    got = tr.views("/r/f.py", [(1, 15)], None)
    assert got == [View("/r/f.py", 1, 10), View("/r/f.py", 13, 14)]
    assert sa.hunks_from_diff("not a diff") is None
    assert sa.hunks_from_diff("@@ -1,2 +1,2 @@\n-a\n") is None  # truncated hunk


def _snippet(path: str, rows: list[tuple[int, str]]) -> str:
    return (f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {path}:\n" + "\n".join(f"{n:6}\t{t}" for n, t in rows) + "\nReview.\n")


def test_editor_hunk_insert_and_str_replace():
    base = {n: f"l{n}" for n in range(1, 41)}
    # insert 2 lines after line 20: snippet shows 17..20, the 2 new lines, then 4 more
    rows = [(n, base[n]) for n in range(17, 21)] + [(21, "a"), (22, "b")] + [
        (n + 2, base[n]) for n in range(21, 25)]
    assert sa.editor_hunk("insert", {"insert_line": 20, "new_str": "a\nb"},
                          _snippet("/f", rows)) == [(21, 0, 2)]
    # ... but not when the snippet does not show new_str there
    assert sa.editor_hunk("insert", {"insert_line": 20, "new_str": "zz"},
                          _snippet("/f", rows)) is None
    # str_replace of line 30 by two lines: snippet 26..35 (4 before, 2 new, 4 after)
    rows = [(n, base[n]) for n in range(26, 30)] + [(30, "x"), (31, "y")] + [
        (n + 1, base[n]) for n in range(31, 35)]
    assert sa.editor_hunk("str_replace", {"old_str": "l30", "new_str": "x\ny"},
                          _snippet("/f", rows)) == [(30, 1, 2)]
    assert sa.editor_hunk("str_replace", {"old_str": "l30", "new_str": "x\ny"},
                          _snippet("/f", rows[1:])) is None       # snippet starts too late
    # a snippet cut short by the end of the file still locates the change
    assert sa.editor_hunk("str_replace", {"old_str": "l30", "new_str": "x\ny"},
                          _snippet("/f", rows[:-2])) == [(30, 1, 2)]
    assert sa.editor_hunk("str_replace", {"new_str": "x"}, _snippet("/f", rows)) is None


def test_undo_drops_the_last_exact_edit():
    tr = sa.EditTracker()
    tr.record("/f", [(3, 0, 1)])
    tr.undo("/f")
    assert tr.views("/f", [(1, 5)], None) == [View("/f", 1, 5)]
    tr.record("/g", None)
    tr.undo("/g")
    assert tr.views("/g", [(1, 2)], None) == [View("/g", 1, 2, post_edit=True)]


def test_unknown_edit_makes_later_views_post_edit():
    tr = sa.EditTracker()
    tr.record(tr.key("pkg/a.py", "/repo"), None)
    assert tr.views("/repo/pkg/a.py", [(3, 4)], None) == [View("/repo/pkg/a.py", 3, 4, True)]
    assert tr.adjust([View("pkg/a.py", 1, None), View("pkg/b.py", 2, 2)], "/repo") == [
        View("pkg/a.py", 1, None, True), View("pkg/b.py", 2, 2)]


# ----------------------------------------------------------------------------- fixtures

def test_fixture_0x_windowed_editor():
    t = _read(FIX / "demo__repo-1.traj")
    assert t.instance_id == "demo__repo-1" and t.agent == "swe-agent" and t.resolved is None
    assert len(t.steps) == 11
    s = t.steps
    assert [x.tool for x in s[:5]] == ["find_file", "open", "search_file", "search_dir", "goto"]
    assert s[0].views == [] and s[3].views == []          # find_file / search_dir list paths
    assert _lines(s[1]) == [(1, 10, False)]
    assert _lines(s[2]) == [(2, 2, False), (20, 20, False)]   # search_file hits
    assert _lines(s[4]) == [(15, 24, False)]
    # rejected edit 5:5 (2 new lines): preview 2..9 maps to base 2-4, 6-8; original 2..8
    assert _lines(s[5]) == [(2, 4, False), (6, 8, False), (2, 8, False)] and s[5].edits == []
    # edit 5:6 -> 3 lines: window 1..11 is base 1-4 and 7-10
    assert _lines(s[6]) == [(1, 4, False), (7, 10, False)]
    assert s[6].edits == ["/demo__repo/pkg/mod.py"]
    assert _lines(s[7]) == [(11, 20, False)]               # edited 12..21 -> base 11..20
    assert s[8].edits == ["/demo__repo/notes.txt"] and _lines(s[8]) == [(1, 1, True)]
    assert s[9].tool == "bash"
    assert [(v.file.endswith("pkg/mod.py"), v.start_line, v.end_line, v.post_edit)
            for v in s[9].views] == [(True, 3, 3, False)]
    assert s[10].tool == "submit" and s[10].views == []
    assert t.model_patch == "diff --git a/pkg/mod.py b/pkg/mod.py\n"
    assert t.usage is not None
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.cost, t.usage.api_calls) == (
        1000, 50, 0.25, 12)


def test_fixture_1x_str_replace_editor():
    t = _read(FIX / "demo_1x.traj")
    assert t.instance_id == "demo__repo-2" and t.model == "demo-model"
    assert t.model_patch is None and t.extra["agent_version"] == "1.1.0"
    s = t.steps
    assert len(s) == 10
    assert s[0].views == []                                  # directory listing
    assert _lines(s[1]) == [(3, 6, False)]
    assert s[2].views == []                                  # argparse error: nothing seen
    assert s[3].action == "" and s[3].tool is None and s[3].views == []
    assert _lines(s[4]) == [(1, 2, False), (10, 10, False)]  # abbreviated view, elision skipped
    assert s[5].views == [] and s[5].edits == []              # failed str_replace
    assert s[6].edits == ["/testbed/pkg/mod.py"] and _lines(s[6]) == [(2, 6, True)]
    assert _lines(s[7]) == [(20, 21, True)]                   # after an unmappable edit
    assert [(v.file.endswith("pkg/other.py"), v.start_line, v.end_line) for v in s[8].views] \
        == [(True, 7, 7)]


def test_1x_output_beyond_max_observation_length_was_not_shown(tmp_path: Path):
    # 1.x keeps the whole observation in the .traj, but the model saw only its first
    # max_observation_length characters ("<response clipped>"): 28 here, four whole lines of
    # "lineN" output (six characters each) and the start of the fifth
    body = "".join(f"line{i}\n" for i in range(1, 10))
    traj = {"replay_config": json.dumps({"agent": {"templates": {"max_observation_length": 28}}}),
            "trajectory": [{"action": "cat /testbed/f.py", "observation": body,
                            "state": {"working_dir": "/testbed"}},
                           {"action": "cat /testbed/g.py", "observation": "line1\n",
                            "state": {"working_dir": "/testbed"}}],
            "info": {}}
    p = tmp_path / "x.traj"
    p.write_text(json.dumps(traj))
    t = _read(p)
    assert [(v.file, v.start_line, v.end_line) for v in t.steps[0].views] == [
        ("/testbed/f.py", 1, 5)]
    assert [(v.file, v.start_line, v.end_line) for v in t.steps[1].views] == [
        ("/testbed/g.py", 1, None)]


def test_options_override_instance_and_run():
    (t,) = sa.read(FIX / "demo_1x.traj", ReadOptions(instance_id="x__y-1", run="r1"))
    assert t.instance_id == "x__y-1" and t.run == "r1"


def test_detect_fixtures_and_rejects_others(tmp_path: Path):
    for name in ("demo__repo-1.traj", "demo_1x.traj"):
        p = FIX / name
        assert sa.detect(p, p.read_bytes()[:65536])
    other = tmp_path / "mini.json"
    other.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "messages": []}))
    assert not sa.detect(other, other.read_bytes())
    assert not sa.detect(tmp_path, b"")


def test_bad_inputs_raise_adapter_error(tmp_path: Path):
    for text in ("", "{", "[1, 2]", '{"trajectory": 3}', '{"trajectory": [1]}'):
        p = tmp_path / "bad.traj"
        p.write_text(text)
        with pytest.raises(AdapterError):
            sa.read(p, OPTS)


# ----------------------------------------------------------------------------- corpus

SWE0 = {
    "astropy__astropy-12907": (10, 11, 9),
    "django__django-11099": (14, 11, 10),
    "psf__requests-2317": (7, 8, 8),
}
SWE1 = {
    "marshmallow-1867.fc_replace.traj": 11,
    "marshmallow-1867.fc_replace_from_source.traj": 13,
    "marshmallow-1867.v07.traj": 14,
    "matplotlib__matplotlib-25479.traj": 4,
    "pallets__flask-5014.traj": 4,
    "pydata__xarray-4695.traj": 17,
}


def _corpus_files() -> list[Path]:
    out = [CORPUS / iid / "trajs" / f"swe-agent_0.x_gpt4-0125__cost_2_{k}.traj"
           for iid in SWE0 for k in (1, 2, 3)]
    return out + [CORPUS / "swe-agent-1.x" / n for n in SWE1]


@requires_shared
def test_corpus_step_counts_and_detection():
    for iid, counts in SWE0.items():
        for k, n in zip((1, 2, 3), counts, strict=True):
            p = CORPUS / iid / "trajs" / f"swe-agent_0.x_gpt4-0125__cost_2_{k}.traj"
            assert detect(p) is sa
            t = _read(p)
            assert t.instance_id == iid and len(t.steps) == n, p
            assert t.model_patch and t.model_patch.lstrip().startswith("diff --git")
    for name, n in SWE1.items():
        p = CORPUS / "swe-agent-1.x" / name
        assert detect(p) is sa
        assert len(_read(p).steps) == n, name


@requires_shared
def test_corpus_swe_agent_never_claims_other_formats():
    mine = {p.resolve() for p in _corpus_files()}
    for p in CORPUS.rglob("*"):
        if p.is_file() and p.resolve() not in mine and p.suffix in (".json", ".jsonl", ".traj"):
            with p.open("rb") as fh:
                assert not sa.detect(p, fh.read(65536)), p


@requires_shared
def test_corpus_astropy_0x_windows():
    t = _read(CORPUS / "astropy__astropy-12907/trajs/swe-agent_0.x_gpt4-0125__cost_2_1.traj")
    s = t.steps
    f = "/astropy__astropy/astropy/modeling/separable.py"
    assert s[3].tool == "find_file" and s[3].views == []
    assert s[4].views == [View(f, 1, 100)]
    assert s[5].views == [View(f, 99, 198)]
    assert s[7].views == [View(f, 218, 317)]
    assert s[8].views == [View(f, 204, 303)]
    assert s[0].edits == ["/astropy__astropy/reproduce_bug.py"]
    assert t.usage is not None and t.usage.input_tokens == 63010 and t.usage.api_calls == 12
    assert t.usage.cost == pytest.approx(0.6922)
    t3 = _read(CORPUS / "astropy__astropy-12907/trajs/swe-agent_0.x_gpt4-0125__cost_2_3.traj")
    assert t3.steps[3].tool == "search_dir" and t3.steps[3].views == []


@requires_shared
def test_corpus_requests_0x_search_and_exact_edit_mapping():
    t = _read(CORPUS / "psf__requests-2317/trajs/swe-agent_0.x_gpt4-0125__cost_2_1.traj")
    f = "/psf__requests/requests/sessions.py"
    s = t.steps
    assert s[1].views == [View(f, 1, 100)]
    assert s[2].views == [View(f, 428, 428)]             # "Line 428:" hit
    assert s[3].views == [View(f, 413, 512)]
    # edit 427:429 -> 4 lines (671 -> 672 lines); window 377..476 is base 377-426, 430-475
    assert s[5].edits == [f]
    assert s[5].views == [View(f, 377, 426), View(f, 430, 475)]


@requires_shared
def test_corpus_django_0x_successive_edits():
    t = _read(CORPUS / "django__django-11099/trajs/swe-agent_0.x_gpt4-0125__cost_2_1.traj")
    f = "/django__django/django/contrib/auth/validators.py"
    s = t.steps
    assert s[0].views == [] and s[1].views == [View(f, 1, 25)]
    assert s[2].edits == []                               # flake8 rejected the edit
    assert s[3].views == [View(f, 1, 9), View(f, 11, 25)]  # line 10 rewritten
    assert s[4].views == [View(f, 1, 9), View(f, 11, 19), View(f, 21, 25)]


@requires_shared
def test_corpus_v07_rejected_edit_preview_and_original():
    t = _read(CORPUS / "swe-agent-1.x/marshmallow-1867.v07.traj")
    f = "/marshmallow-code__marshmallow/src/marshmallow/fields.py"
    s = t.steps
    assert s[8].views == [View(f, 1459, 1558)]
    assert s[9].views == [View(f, 1469, 1474), View(f, 1476, 1479), View(f, 1470, 1480)]
    assert s[10].views == [View(f, 1425, 1474), View(f, 1476, 1524)]
    assert t.usage is None                                 # replay: all counters zero


@requires_shared
def test_corpus_fc_replace_search_replace_edit_is_post_edit():
    t = _read(CORPUS / "swe-agent-1.x/marshmallow-1867.fc_replace.traj")
    s = t.steps
    assert t.instance_id == "marshmallow-code__marshmallow-1867"
    assert s[5].views == [View("src/marshmallow/fields.py", 1457, 1556)]
    assert [v.post_edit for v in s[6].views] == [True, False]   # preview, then original code
    assert s[7].edits == ["/testbed/src/marshmallow/fields.py"]
    assert all(v.post_edit for v in s[7].views)
    assert t.usage is not None and t.usage.input_tokens is None and t.usage.api_calls == 11


@requires_shared
def test_corpus_xarray_str_replace_editor():
    t = _read(CORPUS / "swe-agent-1.x/pydata__xarray-4695.traj")
    s = t.steps
    f = "/testbed/xarray/core/dataarray.py"
    assert t.model == "openai/gpt-5" and t.model_patch is None
    assert s[1].views == []                                 # directory listing
    abbreviated = [(v.start_line, v.end_line) for v in s[2].views]
    assert abbreviated[0] == (1, 23) and (90, 98) in abbreviated and (106, 108) in abbreviated
    assert s[6].views == s[7].views == s[8].views == []     # argparse errors
    assert s[9].views == [View(f, 188, 210)]
    assert s[10].action == "" and s[10].views == []
    assert s[11].edits == [] and s[14].edits == [f]
    # insert after 209 of one line (its "\\n" are literal): edited 188..220 is base 188..219
    assert s[16].views == [View(f, 188, 219)]


# ----------------------------------------------------------------------------- robustness

def _mutations(data: dict, rng: random.Random) -> dict:
    junk = [None, 7, "", "x", [], {}, [1], {"a": 1}, True, 1.5]
    d = json.loads(json.dumps(data))
    for _ in range(rng.randint(1, 6)):
        traj = d.get("trajectory")
        choice = rng.random()
        if isinstance(traj, list) and traj and choice < 0.6:
            entry = traj[rng.randrange(len(traj))]
            if isinstance(entry, dict):
                key = rng.choice(["action", "observation", "state", "thought", "response"])
                if rng.random() < 0.5 and isinstance(entry.get(key), str) and entry[key]:
                    cut = rng.randrange(len(entry[key]))
                    entry[key] = entry[key][:cut]
                else:
                    entry[key] = rng.choice(junk)
            else:
                traj[rng.randrange(len(traj))] = rng.choice(junk)
        elif choice < 0.8:
            d["info"] = rng.choice([*junk, {"model_stats": rng.choice(junk),
                                            "submission": rng.choice(junk)}])
        else:
            d[rng.choice(["replay_config", "history", "environment"])] = rng.choice(junk)
    return d


def _check_read(p: Path) -> None:
    try:
        out = sa.read(p, OPTS)
    except AdapterError:
        return
    assert len(out) == 1 and all(isinstance(v, View) for s in out[0].steps for v in s.views)


def test_mutated_fixture_only_adapter_errors(tmp_path: Path):
    rng = random.Random(1234)
    for src in (FIX / "demo__repo-1.traj", FIX / "demo_1x.traj"):
        raw = src.read_bytes()
        data = json.loads(raw)
        for i in range(60):
            p = tmp_path / f"m{i}.traj"
            if i % 3 == 0:
                p.write_bytes(raw[: rng.randrange(len(raw))])
            else:
                p.write_text(json.dumps(_mutations(data, rng)))
            _check_read(p)


@requires_shared
def test_truncated_and_mutated_corpus_only_adapter_errors(tmp_path: Path):
    rng = random.Random(99)
    for src in _corpus_files():
        raw = src.read_bytes()
        data = json.loads(raw)
        for i in range(4):
            p = tmp_path / f"{src.stem}.{i}.traj"
            if i % 2 == 0:
                p.write_bytes(raw[: rng.randrange(len(raw))])
            else:
                p.write_text(json.dumps(_mutations(data, rng)))
            _check_read(p)


# ------------------------------------------- ContextBench's SWE-agent: info.patch_context

CB = ReadOptions(preset="contextbench")
FLASK = CORPUS / "swe-agent-1.x" / "pallets__flask-5014.traj"


def _with_patch_context(tmp_path: Path, value, parent: str = "run") -> Path:
    """The real ContextBench SWE-agent run with a declaration in ``info.patch_context``, as
    ContextBench's SWE-agent stores the ``<PATCH_CONTEXT>`` block of its last answer."""
    data = json.loads(FLASK.read_bytes())
    data["info"]["patch_context"] = value
    data["info"]["submission"] = "diff --git a/src/flask/blueprints.py b/src/flask/blueprints.py\n"
    out = tmp_path / parent / "pallets__flask-5014.traj"
    out.parent.mkdir()
    out.write_text(json.dumps(data))
    return out


@requires_shared
def test_contextbench_reads_a_traj_by_its_patch_context_as_the_reference(tmp_path) -> None:
    decl = ("File: /testbed/src/flask/blueprints.py\nLines: 180-200\n\n"
            "File: /testbed/src/flask/app.py\nLines: 20-10\n")
    p = _with_patch_context(tmp_path, decl)
    assert detect(p) is sa
    (t,) = sa.read(p, CB)
    # the reference (agents/sweagent/extract.py, parse_traj_file): no step, the declaration is
    # the final context (files sorted, ranges as written), the model patch info.submission
    assert t.instance_id == "pallets__flask-5014"
    assert [(v.file, v.start_line, v.end_line) for v in t.final_context] == [
        ("src/flask/blueprints.py", 180, 200), ("src/flask/app.py", 20, 10)]
    assert "cb_final_files" not in t.extra  # every span's file is a listed file
    assert "cb_no_context" not in t.extra and t.extra["cb_steps_from_final"] is True
    assert len(t.steps) == 1 and t.model_patch.startswith("diff --git")
    # SWE-bench Pro layout: the instance_ directory names the instance
    q = _with_patch_context(tmp_path, decl, parent="instance_pallets__flask-5014-abc")
    assert sa.read(q, CB)[0].instance_id == "instance_pallets__flask-5014-abc"
    # strict: the steps the observations show, and the declaration as the final context
    (s,) = sa.read(p, OPTS)
    assert len(s.steps) == 4
    assert [(v.file, v.start_line, v.end_line) for v in s.final_context] == [
        ("/testbed/src/flask/blueprints.py", 180, 200), ("/testbed/src/flask/app.py", 10, 20)]


@requires_shared
def test_contextbench_traj_without_patch_context_has_no_context() -> None:
    # the real run declared nothing: the reference reads an empty final step
    (t,) = sa.read(FLASK, CB)
    assert t.extra.get("cb_no_context") is True and t.final_context == []
    assert sa.read(FLASK, OPTS)[0].final_context is None


@requires_shared
def test_contextbench_traj_fails_where_the_reference_fails(tmp_path) -> None:
    with pytest.raises(AdapterError, match=r"info\.patch_context"):
        sa.read(_with_patch_context(tmp_path, "File: a.py\nLines: 1-2, 5-6\n"), CB)
    with pytest.raises(AdapterError, match=r"info\.patch_context"):
        sa.read(_with_patch_context(tmp_path, ["File: a.py"], parent="r2"), CB)
