"""The MCP readers (``reading/mcp``), each on results shaped after its server's real output.

The cases are ``fixtures/mcp/<server>.json``, written for these tests from each server's source
(and, for Sourcegraph, whose source is not public, from real results): each gives a call, the
text its result showed, and the views, mentions and edits expected, worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval.model import Step, View
from ctxeval.reading import mcp
from ctxeval.reading.mcp import McpRun, read_call, server_kind, split_tool_name
from ctxeval.reading.mcp._common import close_json_prefix, persisted, preview_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mcp"
SERVERS = ("sourcegraph", "github", "filesystem", "serena", "generic")


def _cases() -> list[tuple[str, dict]]:
    out = []
    for server in SERVERS:
        doc = json.loads((FIXTURES / f"{server}.json").read_text())
        for case in doc["cases"]:
            out.append((case.get("server", server), case))
    return out


def _view(spec: list) -> View:
    if spec[1] is not None:
        return View(spec[0], spec[1], spec[2])
    chunks = tuple(tuple(c) for c in spec[3])
    partial = tuple(spec[4]) if len(spec) > 4 and spec[4] is not None else None
    matches = spec[5] if len(spec) > 5 else None
    return View(spec[0], None, None, text=chunks, partial=partial, matches=matches)


@pytest.mark.parametrize(("server", "case"), _cases(), ids=lambda v: v["name"][:60]
                         if isinstance(v, dict) else v)
def test_reader_case(server: str, case: dict) -> None:
    got = read_call(server, case["tool"], case["args"], case["text"],
                    is_error=case.get("is_error", False), cwd=case.get("cwd"))
    assert got.views == [_view(v) for v in case["views"]]
    assert got.mentions == case.get("mentions", got.mentions if not case["views"] else [])
    if "mentions" in case:
        assert got.mentions == case["mentions"]
    assert got.edits == case.get("edits", [])
    if "origins" in case:
        assert got.origins == case["origins"]
    assert len(got.origins) == len(got.views)
    assert got.guessed == case.get("guessed", 0)
    if got.guessed:
        assert any("generic reader" in w for w in got.warnings)


def test_every_kind_is_covered_by_cases() -> None:
    kinds = {server_kind(server, case["tool"]).KIND for server, case in _cases()}
    assert kinds == {"sourcegraph", "github", "filesystem", "serena", "generic"}


@pytest.mark.parametrize(("server", "tool", "kind"), [
    ("sourcegraph", "sg_read_file", "sourcegraph"),
    ("sg", "read_file", "sourcegraph"),
    ("sourcegraph-mcp", "keyword_search", "sourcegraph"),
    ("code", "sg_keyword_search", "sourcegraph"),     # the sg_ prefix names the server
    ("github", "get_file_contents", "github"),
    ("github-mcp-server", "search_code", "github"),
    ("serena", "read_file", "serena"),                  # read_file is three servers' tool
    ("filesystem", "read_file", "filesystem"),
    ("server-filesystem", "read_text_file", "filesystem"),
    ("fs", "read_file", "filesystem"),
    ("docs", "read_file", "generic"),
])
def test_server_kind(server: str, tool: str, kind: str) -> None:
    assert kind == server_kind(server, tool).KIND


def test_split_tool_name() -> None:
    assert split_tool_name("mcp__sourcegraph__sg_read_file") == ("sourcegraph", "sg_read_file")
    assert split_tool_name("mcp__my_server__get_thing") == ("my_server", "get_thing")
    assert split_tool_name("Read") is None
    assert split_tool_name("mcp__x") is None


def test_unknown_tool_of_a_known_server_goes_to_the_generic_reader() -> None:
    text = json.dumps({"path": "a.py", "content": "3: x = 1\n4: y = 2"})
    got = read_call("sourcegraph", "sg_brand_new_tool", {}, text)
    assert got.kind == "generic" and got.views == [View("a.py", 3, 4)]
    assert got.warnings and "generic reader" in got.warnings[0]


def test_a_reader_that_fails_shows_nothing_and_says_so(monkeypatch) -> None:
    def boom(call):
        raise ValueError("bad")
    monkeypatch.setitem(mcp.sourcegraph.TOOLS, "read_file", boom)
    got = read_call("sourcegraph", "sg_read_file", {"path": "a"}, "1: x")
    assert got.views == [] and "not read (ValueError)" in got.warnings[0]


@settings(max_examples=150, deadline=None)
@given(server=st.sampled_from(["sourcegraph", "github", "filesystem", "serena", "other"]),
       tool=st.sampled_from(["read_file", "sg_keyword_search", "get_file_contents",
                             "search_code", "read_multiple_files", "find_symbol",
                             "search_for_pattern", "find_referencing_symbols", "x"]),
       text=st.one_of(st.text(max_size=200), st.recursive(
           st.none() | st.booleans() | st.integers(-3, 3000) | st.text(max_size=30),
           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
               st.sampled_from(["path", "file", "content", "blocks", "chunks", "startLine",
                                "relative_path", "body", "body_location", "items",
                                "text_matches", "fragment", "repo"]), inner, max_size=4),
           max_leaves=12).map(json.dumps)),
       args=st.dictionaries(st.sampled_from(["path", "repo", "relative_path", "start_line",
                                             "paths", "head", "tail"]),
                            st.one_of(st.text(max_size=10), st.integers(-5, 50),
                                      st.lists(st.text(max_size=8), max_size=3)), max_size=3))
def test_read_call_never_raises(server, tool, text, args) -> None:
    got = read_call(server, tool, args, text)
    assert len(got.origins) == len(got.views)
    for v in got.views:
        assert isinstance(v.file, str) and v.file
        assert v.start_line is None or (v.start_line >= 1 and v.end_line >= v.start_line)


# --- a run's repositories ----------------------------------------------------------------------

def _search(repo: str, path: str, first: int) -> str:
    content = "".join(f"{n}: line {n}\n" for n in range(first, first + 3)) + f"{first + 3}: "
    return json.dumps({"blocks": [{"file": path, "repo": repo, "type": "file",
                                   "chunks": [{"content": content, "startLine": first}]}]})


def test_one_repository_keeps_repository_relative_paths() -> None:
    run = McpRun()
    s = Step(0, tool="mcp__sourcegraph__sg_keyword_search")
    run.observe(s, "sourcegraph", "sg_keyword_search", {}, _search("github.com/o/a--1", "x.c", 5))
    assert run.finish() == []
    assert s.views == [View("x.c", 5, 7)]


def test_several_repositories_keep_the_most_read_one_and_qualify_the_others() -> None:
    run = McpRun()
    steps = [Step(k, tool="mcp__sourcegraph__sg_keyword_search") for k in range(3)]
    run.observe(steps[0], "sourcegraph", "sg_keyword_search", {},
                _search("github.com/o/lib--2", "x.c", 1))
    run.observe(steps[1], "sourcegraph", "sg_keyword_search", {},
                _search("github.com/o/app--1", "x.c", 10))
    run.observe(steps[2], "sourcegraph", "sg_read_file", {"repo": "github.com/o/app--1",
                                                           "path": "main.c"},
                json.dumps({"content": "1: a\n2: b\n3: "}))
    warnings = run.finish()
    assert steps[0].views == [View("repo://github.com/o/lib--2/x.c", 1, 3)]
    assert steps[1].views == [View("x.c", 10, 12)]
    assert steps[2].views == [View("main.c", 1, 2)]
    assert len(warnings) == 1 and "github.com/o/app--1 (taken as the instance's" in warnings[0]
    assert "github.com/o/lib--2" in warnings[0]


def test_the_instance_repository_when_known_wins() -> None:
    run = McpRun(repo="o/lib")
    a, b = Step(0), Step(1)
    run.observe(a, "sourcegraph", "sg_keyword_search", {}, _search("github.com/o/lib", "x.c", 1))
    run.observe(b, "sourcegraph", "sg_keyword_search", {}, _search("github.com/o/app", "y.c", 1))
    run.observe(Step(2), "sourcegraph", "sg_keyword_search", {},
                _search("github.com/o/app", "z.c", 1))
    run.finish()
    assert a.views == [View("x.c", 1, 3)]
    assert b.views == [View("repo://github.com/o/app/y.c", 1, 3)]


def test_repeated_warnings_are_counted_once() -> None:
    run = McpRun()
    for k in range(3):
        run.observe(Step(k), "docs", "fetch", {}, json.dumps({"path": "a.md", "content": "x"}))
    warnings = run.finish()
    assert warnings == ["mcp: docs/fetch read by the generic reader: 1 views guessed (x3)"]


# --- results Claude Code kept on disk (<persisted-output>) ----------------------------------

_KEPT = "/home/dev/.claude/projects/-home-dev-proj/tool-results/toolu_01FakeFakeFakeFakeFake03.txt"


def _kept(preview: str) -> str:
    return (f"<persisted-output>\nOutput too large (9.9KB). Full output saved to: {_KEPT}\n\n"
            f"Preview (first 2KB):\n{preview}\n...\n</persisted-output>")


@pytest.mark.parametrize(("prefix", "value"), [
    ('{"content":"1: a\\n2: b\\n3: par', {"content": "1: a\n2: b\n"}),   # cut in a line
    ('{"content":"1: par', {"content": ""}),                                # in the first line
    ('{"a":"x","b":12', {"a": "x"}),                    # a number may have lost digits
    ('{"a":"x","b', {"a": "x"}),                        # cut in a key
    ('{"a":"x","b":', {"a": "x"}),                      # after a colon
    ('{"a":[{"c":"1: q\\n"}],"d":"y"', {"a": [{"c": "1: q\n"}], "d": "y"}),
    ('{"a":"\\\\n', {"a": ""}),          # an escaped backslash and an n: still the first line
    ('{"c"', None),
])
def test_close_json_prefix(prefix: str, value) -> None:
    assert close_json_prefix(prefix) == value


def test_persisted_preview_and_its_whole_lines() -> None:
    text = "x" * 10 + "\n" + "y" * 1989       # 2,000 characters: cut at the limit
    got = persisted(_kept(text))
    assert got is not None and got.path == _KEPT and got.cut and got.preview == text
    assert preview_text(got) == "x" * 10 + "\n"
    short = persisted(_kept("a\nb"))         # shorter than the limit: cut where a line ends
    assert short is not None and not short.cut and preview_text(short) == "a\nb"
    assert persisted("Output too large") is None


def test_a_kept_result_is_read_from_its_preview_and_its_file_remembered() -> None:
    content = "".join(f"{n}: line {n}\n" for n in range(1, 300)) + "300: "
    result = json.dumps({"content": content, "url": "u"})
    run = McpRun()
    step = Step(0, tool="mcp__sourcegraph__sg_read_file")
    got = run.observe(step, "sourcegraph", "sg_read_file",
                      {"repo": "github.com/o/app--1", "path": "main.c"}, _kept(result[:2000]))
    shown = result[:2000].count("\\n")
    assert step.views == [View("main.c", 1, shown)]
    assert any("kept on disk" in w for w in got.warnings)
    assert run.saved_in(f"jq -r .content {_KEPT}") == _KEPT
