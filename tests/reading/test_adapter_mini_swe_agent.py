"""mini-swe-agent adapter: v1 and v2 message formats, strict and ContextBench readings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, PARITY, requires_parity, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.model import Trajectory, Usage, View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions
from ctxeval.reading.adapters import mini_swe_agent as msa
from ctxeval.reading.placing import FileLines, place_view

TOY = FIXTURES / "adapters" / "mini-swe-agent" / "toy__pkg-1" / "toy__pkg-1.traj.json"
V1 = "mini-swe-agent_1.15.0_gemini3pro.traj.json"
V2 = "mini-swe-agent_2.2.7_deepseek-chat.traj.json"


def read(path: Path, **opts) -> Trajectory:
    (traj,) = adapters.read(path, "mini-swe-agent", ReadOptions(**opts))
    return traj


def vt(views: list[View]) -> list[tuple]:
    return [(v.file, v.start_line, v.end_line) + (("post_edit",) if v.post_edit else ())
            for v in views]


# --- the hand-written v1 fixture ---------------------------------------------------------------


def test_toy_v1_steps_views_and_errors() -> None:
    t = read(TOY)
    assert t.instance_id == "toy__pkg-1"  # from the file name
    assert t.agent == "mini-swe-agent" and t.model == "toy/model-1"
    assert [s.tool for s in t.steps] == ["bash", "format_error", "bash", "bash", "bash", "bash",
                                         "bash"]
    assert vt(t.steps[0].views) == [("/repo/pkg/a.py", 3, 3)]
    assert t.steps[1].views == []  # rejected: two blocks
    assert vt(t.steps[2].views) == [("/repo/pkg/a.py", 1, 4)]  # printed numbers win over 1,6p
    assert t.steps[3].views == []  # No such file
    assert t.steps[4].edits == ["/repo/pkg/a.py"]
    assert vt(t.steps[4].views) == [("/repo/pkg/a.py", 1, None, "post_edit")]
    assert vt(t.steps[5].views) == [("/repo/pkg/big.py", 1, 3)]  # timed out after 3 lines
    assert t.steps[6].views == [] and "COMPLETE_TASK" in t.steps[6].action


def test_toy_v1_usage_patch_and_declared_context() -> None:
    t = read(TOY)
    assert t.steps[0].usage == Usage(100, 10, 0.001)
    assert t.steps[3].usage is None  # nothing recorded for that call
    assert t.usage == Usage(input_tokens=800, output_tokens=80, cost=0.5, api_calls=7)
    assert t.model_patch is not None and "+    return 2" in t.model_patch
    assert vt(t.final_context or []) == [("/repo/pkg/a.py", 3, 4)]


def test_toy_detected_and_read_from_directory() -> None:
    assert adapters.detect(TOY).FORMAT == "mini-swe-agent"
    trajs = adapters.read(TOY.parent.parent, "mini-swe-agent")
    assert [t.instance_id for t in trajs] == ["toy__pkg-1"]
    assert len(trajs[0].steps) == 7


def test_detected_behind_a_long_submission(tmp_path: Path) -> None:
    # mini-swe-agent writes "info" first; a submission longer than the 64 KiB detection reads
    # (a patch that adds build/ files: psf__requests-1142 of the gemini-3-pro Verified run has
    # 868 KB) pushes "mini_version" and "messages" past it. The format key is written last.
    data = json.loads(TOY.read_text())
    data["info"]["submission"] += "+x = 1\n" * 20_000
    run = tmp_path / "run"
    inst = run / "toy__pkg-1"
    inst.mkdir(parents=True)
    path = inst / "toy__pkg-1.traj.json"
    path.write_text(json.dumps(data, indent=1))
    assert path.stat().st_size > 2 * adapters.HEAD_BYTES
    assert adapters.detect(path).FORMAT == "mini-swe-agent"
    trajs = adapters.read(run, "mini-swe-agent")
    assert [t.instance_id for t in trajs] == ["toy__pkg-1"]
    assert len(trajs[0].steps) == 7
    # a long JSON file of another kind is still not taken
    other = tmp_path / "other.traj.json"
    other.write_text(json.dumps({"info": {"x": "y" * 100_000}, "trajectory": []}))
    assert not msa.detect(other, other.read_bytes()[:adapters.HEAD_BYTES])


def test_options_instance_id_wins() -> None:
    assert read(TOY, instance_id="other-1").instance_id == "other-1"


# --- hand-written v2 (tool calls) --------------------------------------------------------------


def _v2_data() -> dict:
    def call(cid: str, command: str | None, name: str = "bash", raw: str | None = None) -> dict:
        args = raw if raw is not None else json.dumps({"command": command})
        return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}

    def tool(cid: str, rc: int, out: str) -> dict:
        return {"role": "tool", "tool_call_id": cid,
                "content": f"<returncode>{rc}</returncode>\n<output>\n{out}</output>",
                "extra": {"returncode": rc, "raw_output": out}}

    return {
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "toy__pkg-2",
        "info": {"model_stats": {"instance_cost": 0.02, "api_calls": 5},
                 "config": {"model": {"model_name": "toy/chat"},
                            "environment": {"cwd": "/testbed"}},
                 "submission": "diff --git a/x b/x\n", "exit_status": "Submitted"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "two reads",
             "tool_calls": [call("c1", "grep -n foo pkg/a.py"),
                            call("c2", "sed -n '10,12p' pkg/b.py")],
             "extra": {"response": {"usage": {"prompt_tokens": 50, "completion_tokens": 5}},
                       "cost": 0.01}},
            tool("c2", 0, "x\ny\nz\n"),  # answered out of order: matched by id
            tool("c1", 0, "7:def foo():\n"),
            {"role": "assistant", "content": "just talking"},
            {"role": "user", "content": "Tool call error:\n\n<error>\nNo tool calls found.\n"
                                        "</error>"},
            {"role": "assistant", "content": "bad json",
             "tool_calls": [call("c3", None, raw="{not json")]},
            {"role": "tool", "tool_call_id": "c3", "content": "Tool call error: bad arguments"},
            {"role": "assistant", "content": "",
             "tool_calls": [call("c4", "cd pkg && grep -rn foo .")]},
            tool("c4", 0, "./a.py:7:def foo():\n"),
            {"role": "assistant", "content": "done",
             "tool_calls": [call("c5", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat p.txt")],
             "extra": {"response": {"usage": {"prompt_tokens": 70, "completion_tokens": 7}}}},
            {"role": "exit", "content": "diff --git a/x b/x\n",
             "extra": {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n"}},
        ],
    }


def test_v2_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "anything.traj.json"
    path.write_text(json.dumps(_v2_data()))
    assert adapters.detect(path).FORMAT == "mini-swe-agent"
    t = read(path)
    assert t.instance_id == "toy__pkg-2" and t.model == "toy/chat"
    assert [s.tool for s in t.steps] == ["bash", "bash", "format_error", "format_error", "bash",
                                         "bash"]
    assert vt(t.steps[0].views) == [("/testbed/pkg/a.py", 7, 7)]
    assert vt(t.steps[1].views) == [("/testbed/pkg/b.py", 10, 12)]
    assert t.steps[2].views == [] and t.steps[3].views == []
    assert vt(t.steps[4].views) == [("/testbed/pkg/a.py", 7, 7)]  # cd pkg, then ./a.py
    assert t.steps[5].views == []  # the submission
    # one API call with two tool calls: its usage is counted once
    assert t.steps[0].usage == Usage(50, 5, 0.01) and t.steps[1].usage is None
    assert t.usage == Usage(120, 12, 0.02, 5)
    assert t.model_patch == "diff --git a/x b/x\n"


def test_v2_recorded_actions_without_tool_calls(tmp_path: Path) -> None:
    """Text-based v2 runs record the executed commands in ``extra.actions``; replies are users."""
    data = {"trajectory_format": "mini-swe-agent-1.1", "info": {},
            "messages": [
                {"role": "assistant", "content": "```bash\nhead -n 2 a.py\n```",
                 "extra": {"actions": [{"command": "head -n 2 a.py"}]}},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\ny\n"
                                            "</output>"},
                {"role": "assistant", "content": "no command here", "extra": {"actions": []}},
                {"role": "user", "content": "Format error: no command"}]}
    path = tmp_path / "t__t-2.traj.json"
    path.write_text(json.dumps(data))
    t = read(path)
    assert [(s.tool, vt(s.views)) for s in t.steps] == [
        ("bash", [("a.py", 1, 2)]), ("format_error", [])]


def test_v2_patch_from_exit_message(tmp_path: Path) -> None:
    data = _v2_data()
    del data["info"]["submission"]
    path = tmp_path / "toy.traj.json"
    path.write_text(json.dumps(data))
    assert read(path).model_patch == "diff --git a/x b/x\n"


def test_no_usage_recorded_is_none(tmp_path: Path) -> None:
    data = {"trajectory_format": "mini-swe-agent-1", "info": {},
            "messages": [{"role": "assistant", "content": "```bash\nls\n```"},
                         {"role": "user", "content": "<returncode>0</returncode>\n<output>\n"
                                                     "a\n</output>"},
                         {"role": "assistant", "content": "I am done talking."}]}
    path = tmp_path / "x__y-1.traj.json"
    path.write_text(json.dumps(data))
    t = read(path)
    assert t.usage is None
    assert len(t.steps) == 1  # the unanswered plain talk is not a step
    assert t.final_context is None


def test_post_edit_until_restored(tmp_path: Path) -> None:
    def turn(cmd: str, out: str) -> list[dict]:
        obs = f"<returncode>0</returncode>\n<output>\n{out}</output>"
        return [{"role": "assistant", "content": f"```bash\n{cmd}\n```"},
                {"role": "user", "content": obs}]

    msgs = [*turn("grep -n x a.py", "2:x\n"), *turn("sed -i 's/x/y/' a.py", ""),
            *turn("grep -n y a.py", "2:y\n"), *turn("git checkout -- a.py", ""),
            *turn("grep -n x a.py", "2:x\n"),
            {"role": "assistant", "content": "```bash\ncat a.py\n```"}]  # never answered
    path = tmp_path / "t__t-1.traj.json"
    path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "info": {},
                                "messages": msgs}))
    t = read(path)
    assert [vt(s.views) for s in t.steps] == [
        [("a.py", 2, 2)], [], [("a.py", 2, 2, "post_edit")], [], [("a.py", 2, 2)]]
    assert t.steps[1].edits == ["a.py"] and t.steps[3].edits == ["a.py"]


def test_post_edit_through_git_stash(tmp_path: Path) -> None:
    def turn(cmd: str, out: str) -> list[dict]:
        obs = f"<returncode>0</returncode>\n<output>\n{out}</output>"
        return [{"role": "assistant", "content": f"```bash\n{cmd}\n```"},
                {"role": "user", "content": obs}]

    msgs = [*turn("cat > a.py <<'EOF'\nx\nEOF", ""), *turn("git stash", "Saved\n"),
            *turn("grep -n x a.py", "2:x\n"), *turn("git stash pop", "On branch\n"),
            *turn("grep -n x a.py", "1:x\n"), *turn("git reset --hard", ""),
            *turn("grep -n x a.py", "2:x\n")]
    path = tmp_path / "t__t-3.traj.json"
    path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "info": {},
                                "messages": msgs}))
    t = read(path)
    assert [vt(s.views) for s in t.steps] == [
        [], [], [("a.py", 2, 2)], [], [("a.py", 1, 1, "post_edit")], [], [("a.py", 2, 2)]]


def _v2_turns(*turns: tuple[str, str]) -> dict:
    """A 2.x (tool calls) trajectory of one bash call per turn, in /testbed, as the
    deepseek-chat runs of mini-swe-agent 2.2.7 write them."""
    msgs: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for k, (cmd, out) in enumerate(turns):
        cid = f"call_{k}"
        msgs.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": cmd})}}]})
        msgs.append({"role": "tool", "tool_call_id": cid,
                     "content": f"<returncode>0</returncode>\n<output>\n{out}</output>"})
    return {"trajectory_format": "mini-swe-agent-1.1", "instance_id": "t__t-4",
            "info": {"config": {"environment": {"cwd": "/testbed"}}}, "messages": msgs}


def test_a_backup_copied_back_puts_the_file_back(tmp_path: Path) -> None:
    """Shaped after pylint-dev__astroid-1866 (mini-swe-agent 2.2.7, steps 28-51): the agent
    backs a file up, edits it, copies the backup back and reads it again: the file is as at
    the base commit, its lines are base lines (they were file level only, post-edit)."""
    data = _v2_turns(
        ("cp ./pkg/a.py ./pkg/a.py.backup", ""),
        ("sed -i '3s/x/y/' ./pkg/a.py", ""),
        ("sed -n '2,4p' ./pkg/a.py", "w\ny\nz\n"),
        ("cp ./pkg/a.py.backup ./pkg/a.py", ""),
        ("sed -n '2,4p' ./pkg/a.py", "w\nx\nz\n"),
        # a backup taken after an edit is no way back to the base
        ("sed -i '3s/x/y/' pkg/a.py && cp pkg/a.py pkg/a.py.orig", ""),
        ("cp pkg/a.py.orig pkg/a.py", ""),
        ("grep -n y pkg/a.py", "3:y\n"))
    path = tmp_path / "t__t-4.traj.json"
    path.write_text(json.dumps(data))
    t = read(path)
    a = "/testbed/pkg/a.py"
    assert [vt(s.views) for s in t.steps] == [
        [], [], [(a, 2, 4, "post_edit")], [], [(a, 2, 4)], [], [], [(a, 3, 3, "post_edit")]]


def test_another_revision_checked_out_is_not_the_base(tmp_path: Path) -> None:
    """Shaped after pylint-dev__astroid-1333 (steps 116-119): ``git checkout v2.9.0 -- f``
    puts another version there (its lines are not base lines), ``git checkout HEAD -- f``
    puts the base back."""
    data = _v2_turns(
        ("git checkout v2.9.0 -- pkg/a.py", ""),
        ("grep -n x pkg/a.py", "5:x\n"),
        ("git checkout HEAD -- pkg/a.py 2>&1", ""),
        ("grep -n x pkg/a.py", "3:x\n"))
    path = tmp_path / "t__t-4.traj.json"
    path.write_text(json.dumps(data))
    a = "/testbed/pkg/a.py"
    assert [vt(s.views) for s in read(path).steps] == [
        [], [(a, 5, 5, "post_edit")], [], [(a, 3, 3)]]


def test_a_bash_script_written_from_a_heredoc_edits_what_it_edits(tmp_path: Path) -> None:
    """Shaped after pvlib__pvlib-python-1707 (step 51): a script written from a heredoc and
    run with ``bash`` in the same command; its ``sed -i`` changes the file (after a backup
    was copied back, the file is edited again)."""
    data = _v2_turns(
        ("cp ./pkg/a.py ./pkg/a.py.backup", ""),
        ("sed -i 's/x/y/' ./pkg/a.py", ""),
        ("cp ./pkg/a.py.backup ./pkg/a.py", ""),
        ("cat > fix.sh << 'EOF'\n#!/bin/bash\nsed -i '3i\\\n    z = 1' ./pkg/a.py\nEOF\n"
         "bash fix.sh", ""),
        ("sed -n '1,4p' ./pkg/a.py", "w\nv\n    z = 1\nx\n"))
    path = tmp_path / "t__t-4.traj.json"
    path.write_text(json.dumps(data))
    t = read(path)
    a = "/testbed/pkg/a.py"
    assert t.steps[3].edits == ["/testbed/fix.sh", a]
    assert vt(t.steps[4].views) == [(a, 1, 4, "post_edit")]


def test_bad_input_raises_adapter_error(tmp_path: Path) -> None:
    bad = tmp_path / "a.traj.json"
    bad.write_text("{not json")
    with pytest.raises(AdapterError) as exc:
        read(bad)
    assert exc.value.path == str(bad)
    nomsg = tmp_path / "b.traj.json"
    nomsg.write_text('{"info": {}}')
    with pytest.raises(AdapterError) as exc:
        read(nomsg)
    assert exc.value.field == "messages"


def test_not_detected_for_other_json(tmp_path: Path) -> None:
    other = tmp_path / "x.traj"
    other.write_text('{"trajectory": [], "info": {}}')
    assert not msa.detect(other, other.read_bytes())


# --- real trajectories -------------------------------------------------------------------------


@requires_shared
def test_real_v1_requests() -> None:
    t = read(CORPUS / "psf__requests-2317" / "trajs" / V1)
    assert t.instance_id == "psf__requests-2317" and t.model == "google/gemini-3-pro-preview"
    assert len(t.steps) == 33  # 33 assistant messages = 33 api calls, one a format error
    f = "/testbed/requests/sessions.py"
    assert vt(t.steps[0].views) == []  # ls -R
    assert vt(t.steps[1].views) == [(f, 428, 428)]  # grep -n prints "428:"
    assert vt(t.steps[2].views) == [(f, 415, 440)]  # nl -ba | sed -n '415,440p'
    assert vt(t.steps[3].views) == [(f, None, None)]  # grep without -n
    assert vt(t.steps[4].views) == [("/testbed/requests/compat.py", 1, None)]
    assert t.steps[5].views == [] and t.steps[5].edits == ["/testbed/reproduce_issue.py"]
    assert t.steps[11].tool == "format_error" and t.steps[11].views == []
    assert vt(t.steps[12].views) == [("/testbed/requests/utils.py", 655, 670)]
    assert vt(t.steps[13].views) == [(f, 1, 30)]  # head -n 30
    assert vt(t.steps[15].views) == [("/testbed/requests/models.py", 328, 340)]
    assert t.steps[19].edits == [f] and t.steps[19].views == []  # sed -i
    # head -n 20 after two sed -i edits of that file: edited coordinates, file-level credit
    assert vt(t.steps[27].views) == [(f, 1, 20, "post_edit")]
    assert vt(t.steps[18].views) == [(f, 428, 428)]  # before the first edit
    assert t.steps[32].views == []  # the submission
    assert t.steps[0].usage == Usage(1525, 163, 0.005006)
    assert t.usage == Usage(298691, 5324, 0.2754472, 33)
    assert t.model_patch is not None and "to_native_string(method)" in t.model_patch
    assert t.final_context is None


@requires_shared
def test_real_v1_django_truncated_outputs() -> None:
    t = read(CORPUS / "django__django-11099" / "trajs" / V1)
    assert len(t.steps) == 21
    assert vt(t.steps[2].views) == [("/testbed/django/contrib/auth/validators.py", 1, None)]
    assert t.steps[5].edits == ["/testbed/django/contrib/auth/validators.py"]
    # cat of a long file: the 134 lines of <output_head> are credited (last one cut); the
    # <output_tail> is kept as text to place from the source: its first line is the end of a
    # line cut by the elision ("…emplate or 'admin/login.html',"), kept and marked as printed
    # in part, then 141 whole lines to the end of the file
    sites = "/testbed/django/contrib/admin/sites.py"
    assert vt(t.steps[13].views) == [(sites, 1, 134), (sites, None, None)]
    (tail,) = t.steps[13].views[1].text
    assert t.steps[13].views[1].partial == ("start",)
    assert len(tail) == 142 and tail[0] == "emplate or 'admin/login.html',"
    assert tail[1] == "        }" and tail[-1] == "site = DefaultAdminSite()"
    assert tail[3] == "        return LoginView.as_view(**defaults)(request)"
    # placed, the cut line is the whole line it ends (django's LoginView defaults), with a
    # decoy ending in the same words elsewhere that the rest of the chunk rules out
    whole = "            'template_name': self.login_template or 'admin/login.html',"
    decoy = "        template = self.logout_template or 'admin/login.html',"
    src = "\n".join(["x = 1", decoy, "y = 2", whole, *tail[1:]]) + "\n"
    placed, unplaced = place_view(t.steps[13].views[1], FileLines(src.encode()))
    assert [(v.start_line, v.end_line) for v in placed] == [(4, 4 + 141)] and unplaced == 0
    v15 = t.steps[15].views
    assert vt(v15) == [("/testbed/django/core/validators.py", 1, 130),
                       ("/testbed/django/core/validators.py", None, None)]
    assert v15[1].partial == ("start",) and v15[1].text[0][0] == \
        "that there are no more than %(max)s decimal place.',"
    # grep -C 5 without -n: one group of 11 consecutive lines around the one match
    assert vt(t.steps[14].views) == [(sites, None, None)]
    (group,) = t.steps[14].views[0].text
    assert len(group) == 11 and group[5].startswith("            regex = r'^(?P<app_label>'")
    assert t.steps[10].views == []  # grep -r with returncode 1 and no output
    assert vt(t.steps[12].views) == [("/testbed/django/contrib/admin/sites.py", None, None),
                                      ("/testbed/tests/gis_tests/gdal_tests/test_ds.py", None,
                                       None)]


@requires_shared
def test_real_v1_astropy() -> None:
    t = read(CORPUS / "astropy__astropy-12907" / "trajs" / V1)
    assert len(t.steps) == 20
    f = "/testbed/astropy/modeling/separable.py"
    assert vt(t.steps[4].views) == [(f, 1, None)]
    assert vt(t.steps[5].views) == [(f, 240, 260)]
    assert t.steps[6].edits == [f]
    assert t.steps[11].edits == ["/testbed/astropy/modeling/tests/test_separable.py"]  # >> heredoc
    assert t.steps[16].edits == ["/testbed/pyproject.toml"]  # git checkout restores it
    assert t.usage is not None and t.usage.cost == pytest.approx(0.2305142) \
        and t.usage.api_calls == 20


@requires_shared
def test_real_v2_astropy() -> None:
    t = read(CORPUS / "astropy__astropy-12907" / "trajs" / V2)
    assert t.model == "deepseek/deepseek-chat"
    assert len(t.steps) == 36
    f = "/testbed/astropy/modeling/separable.py"
    tests = "/testbed/astropy/modeling/tests/test_separable.py"
    assert vt(t.steps[1].views) == [(f, 1, None)]
    assert vt(t.steps[2].views) == [(tests, 1, 100)]  # cat | head -100: 100 lines printed
    assert t.steps[5].views == []  # an <exception> observation
    # cat f | grep -n _cstack -A 30: two groups of printed numbers
    assert vt(t.steps[9].views) == [(f, 219, 249), (f, 316, 317)]
    # step 15 wrote fix_cstack.py and ran it: it rewrites separable.py, so this grep shows the
    # edited file (file-level credit only)
    assert t.steps[15].edits == ["/testbed/fix_cstack.py", f]
    assert vt(t.steps[17].views) == [(f, n, n, "post_edit")
                                     for n in (57, 62, 97, 193, 206, 208, 213)]
    assert vt(t.steps[24].views) == [(tests, 1, 30)]
    assert t.steps[14].edits == [f + ".backup"]
    assert t.steps[35].views == []
    assert t.usage is not None and t.usage.api_calls == 36
    assert t.model_patch is not None and t.model_patch.startswith("diff --git a/astropy")


@requires_shared
def test_real_v2_django() -> None:
    t = read(CORPUS / "django__django-11099" / "trajs" / V2)
    assert len(t.steps) == 42
    v = "/testbed/django/contrib/auth/validators.py"
    assert vt(t.steps[1].views) == [(v, 1, None)]
    assert t.steps[18].edits == [v] and t.steps[18].views == []  # cat > file << EOF
    # after the file was rewritten by step 18: post-edit views
    assert vt(t.steps[28].views) == [(v, 10, 10, "post_edit"), (v, 20, 20, "post_edit")]
    assert vt(t.steps[37].views) == [("/testbed/django/core/validators.py", 95, 110)]
    assert t.steps[27].views == []  # grep -n with returncode 1


# --- ContextBench's reading --------------------------------------------------------------------

_PARITY_STEPS = {  # num_steps of expected/results.jsonl for each miniswe file
    "toy__py_ledger-1/t1": 5, "toy__py_ledger-3/t1": 4, "toy__js_queue-4/t1": 2,
    "toy__ts_shapes-6/t1": 3, "toy__ts_shapes-7/t4": 2, "toy__java_bank-8/t2": 2,
    "toy__go_kv-10/t1": 4, "toy__rust_geom-11/t3": 3,
}


@requires_parity
@pytest.mark.parametrize("where", sorted(_PARITY_STEPS))
def test_contextbench_step_counts(where: str) -> None:
    inst = where.split("/")[0]
    t = read(PARITY / "trajs" / where / f"{inst}.traj.json", preset="contextbench")
    assert t.instance_id == inst
    assert len(t.steps) == _PARITY_STEPS[where]


@requires_parity
def test_contextbench_explore_blocks_and_final() -> None:
    t = read(PARITY / "trajs/toy__py_ledger-1/t1/toy__py_ledger-1.traj.json",
             preset="contextbench")
    assert [vt(s.views) for s in t.steps] == [
        [("ledger/models.py", 1, 30)], [("ledger/models.py", 25, 60)],
        [("ledger/models.py", 40, 49)], [("ledger/models.py", 40, 49)],
        [("ledger/account.py", 1, 20)]]  # a missing file still counts for the reference
    assert vt(t.final_context or []) == [("ledger/models.py", 27, 31), ("ledger/models.py", 40, 49)]
    strict = read(PARITY / "trajs/toy__py_ledger-1/t1/toy__py_ledger-1.traj.json")
    assert len(strict.steps) == 5  # the final submit block got no reply: never executed
    assert strict.steps[4].views == []  # the nl error
    assert vt(strict.final_context or []) == [("/testbed/ledger/models.py", 27, 31),
                                             ("/testbed/ledger/models.py", 40, 49)]


@requires_parity
def test_contextbench_reversed_range_and_last_patch_context() -> None:
    t = read(PARITY / "trajs/toy__js_queue-4/t1/toy__js_queue-4.traj.json",
             preset="contextbench")
    assert vt(t.steps[1].views) == [("workspace/js_queue/src/queue.js", 19, 31),
                                    ("workspace/js_queue/src/index.js", 1, 11)]
    assert vt(t.final_context or []) == [("workspace/js_queue/src/queue.js", 19, 31),
                                         ("workspace/js_queue/src/queue.js", 12, 17)]


@requires_parity
def test_contextbench_bash_fallback() -> None:
    t = read(PARITY / "trajs/toy__go_kv-10/t1/toy__go_kv-10.traj.json", preset="contextbench")
    assert [vt(s.views) for s in t.steps] == [
        [("store/ttl.go", 20, 37)], [("store/store.go", 37, 47)], [("store/store.go", None, None)],
        [("store/ttl.go", 1, 12)]]
    t = read(PARITY / "trajs/toy__py_ledger-3/t1/toy__py_ledger-3.traj.json",
             preset="contextbench")
    assert [vt(s.views) for s in t.steps] == [
        [("ledger/fmt.py", 1, 12)], [("ledger/__init__.py", None, None)],
        [("ledger/fmt.py", 15, 40)], [("ledger/fmt.py", None, None)]]


@requires_parity
def test_contextbench_empty_trajectory() -> None:
    t = read(PARITY / "trajs/toy__java_bank-9/t4/toy__java_bank-9.traj.json",
             preset="contextbench")
    assert t.final_context == [] and t.extra.get("cb_no_context") is True


def _expected_pred_files() -> dict[str, list[str]]:
    """The reference's final predicted files (after its path resolution) per miniswe file."""
    out = {}
    for line in (PARITY / "expected" / "details.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("pred_file", "").endswith(".traj.json") and "pred_files" in row:
            out[row["pred_file"]] = row["pred_files"]
    return out


@requires_parity
def test_contextbench_final_files_match_the_reference() -> None:
    expected = _expected_pred_files()
    assert len(expected) == 8
    for pred_file, files in expected.items():
        t = read(PARITY / pred_file, preset="contextbench")
        ours = {v.file for v in t.final_context or []}
        # the reference resolves candidate paths by suffix against the repository
        resolved = {f for f in files if any(o == f or o.endswith("/" + f) for o in ours)}
        assert resolved == set(files), pred_file
        assert len(ours) == len(files), pred_file


def test_lines_printed_after_an_edit_as_at_the_base_are_base_lines(tmp_path: Path) -> None:
    """Shaped after marshmallow-code__marshmallow-1343 (steps 68 and 72) and
    astropy__astropy-12907 (steps 17-25): after an edit whose shape is unknown, a view keeps
    what it printed; resolved against the file at the base commit, the lines printed as they
    are there are base lines (the edited line, and what an edit wrote, stay post-edit)."""
    from ctxeval.evaluation.resolve import TrajectoryResolver
    from ctxeval.truth.extraction import SymbolExtractor
    from ctxeval.truth.repo import RepoCache

    base = "import os\n\ndef f(x):\n    y = x + 1\n    return y\n\nRATE = 3\n"
    repo = tmp_path / "repos" / "t__t@c0ffee"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text(base)
    data = _v2_turns(
        ("sed -i 's/x + 1/x + 2/' a.py", ""),
        ("sed -n '3,6p' a.py", "def f(x):\n    y = x + 2\n    return y\n\n"),
        ("cat -n a.py | sed -n '5,7p'", "     5\t    return y\n     6\t\n     7\tRATE = 3\n"),
        ("grep -n RATE a.py", "7:RATE = 3\n"))
    path = tmp_path / "t__t-4.traj.json"
    path.write_text(json.dumps(data))
    t = read(path)
    a = "/testbed/a.py"
    assert [vt(s.views) for s in t.steps] == [
        [], [(a, 3, 6, "post_edit")], [(a, 5, 7, "post_edit")], [(a, 7, 7, "post_edit")]]
    assert t.steps[1].views[0].text == (("def f(x):", "    y = x + 2", "    return y", ""),)
    snap = RepoCache(tmp_path / "repos").open(instance_id="t__t-4", repo="t/t", commit="c0ffee")
    res, _ = TrajectoryResolver(snap, SymbolExtractor(cache_dir=tmp_path / "c")).resolve(t)
    lines = [sorted((v.start_line, v.end_line, v.post_edit) for v in s.views) for s in res.steps]
    assert lines == [[], [(3, 3, False), (3, 6, True), (5, 6, False)],
                     [(5, 7, False)], [(7, 7, False)]]
    # a view of a file nobody edited keeps no text (rows as before)
    data = _v2_turns(("sed -n '3,4p' a.py", "def f(x):\n    y = x + 1\n"))
    path.write_text(json.dumps(data))
    assert read(path).steps[0].views == [View(a, 3, 4)]
