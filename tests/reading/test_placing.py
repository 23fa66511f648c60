"""Placing printed lines in their file (``ctxeval.reading.placing``), by hand and against a brute
force."""

from __future__ import annotations

import json
from itertools import pairwise, product

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from ctxeval.cli import main
from ctxeval.errors import InputError
from ctxeval.model import View
from ctxeval.reading.placing import FileLines, place, place_view

EX = FIXTURES / "example"
OPS = next((EX / "repos").iterdir()) / "calc" / "ops.py"


def fl(*lines: str) -> FileLines:
    return FileLines(("\n".join(lines) + "\n").encode())


# --- by hand ------------------------------------------------------------------------------------


def test_unique_lines_are_placed_repeated_ones_are_not() -> None:
    ops = FileLines(OPS.read_bytes())
    # grep "return" calc/ops.py without -n: eight hits; each "return" line is distinct here
    hits = [("    return a + b",), ("    return a - b",),
            ("        return self.apply(div, value)",)]
    assert place(ops, hits) == [(5, 5), (9, 9), (32, 32)]
    # a blank line between two hits could be any of the blank lines between them
    assert place(ops, [("    return a + b",), ("",), ("    return a * b",)]) == [
        (5, 5), None, (13, 13)]
    # ... unless the hits leave it exactly one place
    assert place(ops, [("def add(a, b):",), ("    return a + b",), ("",),
                       ("def sub(a, b):",)]) == [(4, 4), (5, 5), None, (8, 8)]
    assert place(ops, [("    return a + b", ""), ("",), ("def sub(a, b):",)]) == [
        (5, 6), (7, 7), (8, 8)]


def test_blocks_are_placed_as_a_whole() -> None:
    ops = FileLines(OPS.read_bytes())
    # the tail of a truncated ``cat``: its last three lines
    assert place(ops, [("", "    def reset(self):", "        self.total = 0")]) == [(33, 35)]
    # a block of blank lines alone is ambiguous
    assert place(ops, [("", "")]) == [None]


def test_order_decides_between_copies() -> None:
    f = fl("x", "y", "x", "z")
    assert place(f, [("x",)]) == [None]
    assert place(f, [("x",), ("x",)]) == [(1, 1), (3, 3)]
    assert place(f, [("y",), ("x",)]) == [(2, 2), (3, 3)]
    assert place(f, [("x",), ("y",)]) == [(1, 1), (2, 2)]
    assert place(f, [("x",), ("z",)]) == [None, (4, 4)]


def test_text_that_is_not_the_files_places_nothing() -> None:
    f = fl("a", "b", "c")
    assert place(f, [("b",), ("a",)]) is None  # out of order
    assert place(f, [("q",)]) is None
    assert place(f, [("a", "c")]) is None  # not consecutive
    assert place(f, [("c",), ("c",)]) is None  # printed twice, once in the file


def test_trailing_whitespace_and_crlf_do_not_matter() -> None:
    f = FileLines(b"def f():  \r\n    return 1\r\n")
    assert place(f, [("def f():",), ("    return 1   ",)]) == [(1, 1), (2, 2)]
    assert place(f, [(" def f():",)]) is None  # leading whitespace does


def test_place_view_keeps_the_unplaced_evidence() -> None:
    ops = FileLines(OPS.read_bytes())
    v = View("calc/ops.py", None, None, text=(("def add(a, b):",), ("",), ("class Calculator:",)))
    views, missing = place_view(v, ops)
    assert missing == 1
    assert views == [View("calc/ops.py", 4, 4), View("calc/ops.py", 21, 21),
                     View("calc/ops.py", None, None, text=(("",),))]
    # adjacent placed chunks become one view
    v = View("calc/ops.py", None, None, text=(("def div(a, b):",), ("    return a / b",)))
    assert place_view(v, ops) == ([View("calc/ops.py", 16, 16), View("calc/ops.py", 18, 18)], 0)
    whole = View("calc/ops.py", None, None, text=(("def div(a, b):", OPS.read_text().split(
        "\n")[16], "    return a / b"),))
    assert place_view(whole, ops) == ([View("calc/ops.py", 16, 18)], 0)
    # shown after an edit: its text is not the base file's
    post = View("calc/ops.py", None, None, post_edit=True, text=(("def add(a, b):",),))
    assert place_view(post, ops) == ([post], 0)
    nothing = View("calc/ops.py", None, None, text=(("no such line",),))
    assert place_view(nothing, ops) == ([nothing], 1)


def test_view_text_round_trips_and_is_checked() -> None:
    v = View("a.py", None, None, text=(("x", "y"), ("z",)))
    assert v.to_json() == {"file": "a.py", "start_line": None, "end_line": None,
                           "text": [["x", "y"], ["z"]]}
    assert View.from_json(v.to_json()) == v
    for bad in ({"file": "a.py", "start_line": None, "text": "x"},
                {"file": "a.py", "start_line": None, "text": [["x", 1]]},
                {"file": "a.py", "start_line": 3, "end_line": 3, "text": [["x"]]}):
        with pytest.raises(InputError, match="'text'"):
            View.from_json(bad, path="t.jsonl", line=4)


def test_lines_printed_in_part_are_placed_by_the_part_printed() -> None:
    f = fl("def f(x):", "    return compute(x, 1)", "", "def g(y):", "    return compute(y, 2)",
           "    # end")
    # the tail of a truncated output starts inside a line: "te(y, 2)" ends line 5 only
    assert place(f, [("te(y, 2)", "    # end")], partial=["start"]) == [(5, 6)]
    # alone, an end shared by two lines stays unplaced; the chunk after it decides
    assert place(f, [(", 1)",)], partial=["start"]) == [(2, 2)]
    assert place(f, [(")",)], partial=["start"]) == [None]
    assert place(f, [("1)",), ("def g(y):",)], partial=["start", ""]) == [(2, 2), (4, 4)]
    # the head before an elision ends inside a line: "def g(" starts line 4 only
    assert place(f, [("", "def g(")], partial=["end"]) == [(3, 4)]
    # a middle part of one line
    assert place(f, [("compute(y",)], partial=["both"]) == [(5, 5)]
    # a whole line marked as printed in part still fits where it is (marking loosens only)
    assert place(f, [("    # end",)], partial=["start"]) == [(6, 6)]
    # the printed part is not the file's: nothing placed
    assert place(f, [("zzz", "    # end")], partial=["start"]) is None
    # "    " starts lines 5 and 6: that chunk stays unplaced, its mark with it
    v = View("f.py", None, None, text=(("1)", "", "def g(y):"), ("    ",)),
             partial=("start", "end"))
    assert place_view(v, f) == ([View("f.py", 2, 4), View(
        "f.py", None, None, text=(("    ",),), partial=("end",))], 1)


def test_partial_round_trips_and_is_checked() -> None:
    v = View("a.py", None, None, text=(("x", "y"), ("z",)), partial=("start", ""))
    assert v.to_json()["partial"] == ["start", ""]
    assert View.from_json(v.to_json()) == v
    # "no line printed in part" has one spelling
    assert View("a.py", None, None, text=(("x",),), partial=("",)).partial is None
    assert View("a.py", None, None, post_edit=True, text=(("x",),), partial=("end",)).partial \
        is None
    for bad in ({"file": "a.py", "start_line": None, "text": [["x"]], "partial": ["middle"]},
                {"file": "a.py", "start_line": None, "text": [["x"]], "partial": ["", ""]},
                {"file": "a.py", "start_line": None, "partial": ["start"]}):
        with pytest.raises(InputError, match="'partial'"):
            View.from_json(bad, path="t.jsonl", line=4)


def test_content_filter_places_repeated_lines() -> None:
    f = fl("a", "x", "b", "x", "c", "x")
    # grep x: all three copies printed, so the k-th printed is the k-th in the file
    assert place(f, [("x",), ("x",), ("x",)], "all") == [(2, 2), (4, 4), (6, 6)]
    assert place(f, [("x",), ("x",)], "first") == [(2, 2), (4, 4)]  # | head -2
    assert place(f, [("x",), ("c",), ("x",)], "last") == [(4, 4), (5, 5), (6, 6)]  # | tail -3
    # contradicted (two printed, three in the file, yet "all"): the general rule
    assert place(f, [("x",), ("x",)], "all") == [None, None]
    assert place(f, [("x",), ("a",)], "first") is None  # out of order either way
    v = View("f.py", None, None, text=(("x",), ("x",)), matches="first")
    assert place_view(v, f) == ([View("f.py", 2, 2), View("f.py", 4, 4)], 0)
    assert View.from_json(v.to_json()) == v and v.to_json()["matches"] == "first"
    with pytest.raises(InputError, match="'matches'"):
        View.from_json({"file": "f.py", "start_line": None, "matches": "all"})
    with pytest.raises(InputError, match="'matches'"):
        View.from_json({"file": "f.py", "start_line": None, "text": [["x"]], "matches": "some"})


@st.composite
def filtered_output(draw):
    """A file, a filter by content (a set of line texts), and which matches were printed."""
    lines = draw(st.lists(st.sampled_from(["a", "b", "", "c"]), min_size=1, max_size=10))
    keep = draw(st.sets(st.sampled_from(["a", "b", "", "c"]), min_size=1))
    hits = [i for i, ln in enumerate(lines) if ln in keep]
    rule = draw(st.sampled_from(["all", "first", "last"]))
    k = len(hits) if rule == "all" else draw(st.integers(0, len(hits)))
    shown = hits[:k] if rule != "last" else hits[len(hits) - k:]
    return lines, rule, shown


@settings(max_examples=300, deadline=None)
@given(filtered_output())
def test_content_filter_places_every_printed_line_where_it_was(case) -> None:
    lines, rule, shown = case
    f = FileLines(("\n".join(lines) + "\n").encode())
    got = place(f, [(lines[i],) for i in shown], rule)
    assert got == [(i + 1, i + 1) for i in shown]


# --- against a brute force --------------------------------------------------------------------


def brute_force(lines: list[str], chunks: list[tuple[str, ...]]
                ) -> list[tuple[int, int] | None] | None:
    """Every placement of the chunks in order without overlap; forced = the same in all."""
    n = len(lines)
    placements: list[tuple[int, ...]] = []
    for starts in product(range(n), repeat=len(chunks)):
        ok = all(tuple(lines[s:s + len(c)]) == c for s, c in zip(starts, chunks, strict=True))
        ok = ok and all(starts[i] + len(chunks[i]) <= starts[i + 1]
                        for i in range(len(chunks) - 1))
        if ok:
            placements.append(starts)
    if not placements:
        return None
    return [(p + 1, p + len(c)) if all(q[k] == p for q in placements) else None
            for k, (p, c) in enumerate(zip(placements[0], chunks, strict=True))]


@st.composite
def file_and_chunks(draw):
    lines = draw(st.lists(st.sampled_from(["a", "b", "", "c"]), min_size=1, max_size=8))
    if draw(st.booleans()):  # text that really comes from the file, in order
        cuts = sorted(draw(st.lists(st.integers(0, len(lines)), min_size=2, max_size=6,
                                    unique=True)))
        chunks = [tuple(lines[a:b]) for a, b in pairwise(cuts)
                  if draw(st.booleans())]
        chunks = [c for c in chunks if c] or [tuple(lines[:1])]
    else:  # anything
        chunks = draw(st.lists(st.lists(st.sampled_from(["a", "b", "", "d"]), min_size=1,
                                        max_size=2).map(tuple), min_size=1, max_size=3))
    return lines, chunks


@settings(max_examples=400, deadline=None)
@given(file_and_chunks())
def test_place_agrees_with_brute_force(case) -> None:
    lines, chunks = case
    assert place(FileLines(("\n".join(lines) + "\n").encode()), chunks) == \
        brute_force(lines, chunks)


# --- convert and evaluate with the repository -----------------------------------------------


def _traj_with_text(tmp_path):
    """agent-b's first instance, plus a grep without -n and a truncated cat's tail."""
    traj = json.loads((EX / "runs/agent-b.jsonl").read_text().splitlines()[0])
    traj["steps"] = [
        {"index": 0, "action": "grep 'return a' calc/ops.py", "views": [
            {"file": "/testbed/calc/ops.py", "start_line": None, "end_line": None,
             "text": [["    return a + b"], ["    return a - b"], ["    return a * b"],
                      ["    return a / b"]]}]},
        {"index": 1, "action": "cat calc/ops.py (truncated)", "views": [
            {"file": "/testbed/calc/ops.py", "start_line": 1, "end_line": 3},
            {"file": "/testbed/calc/ops.py", "start_line": None, "end_line": None,
             "text": [["    def divide(self, value):", "        return self.apply(div, value)",
                       ""]]},
            {"file": "/testbed/calc/ops.py", "start_line": None, "end_line": None,
             "text": [[""]]}]},
    ]
    traj["final_context"] = traj["final_symbols"] = None  # final: the union of the steps
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(traj) + "\n")
    return src


def test_convert_places_printed_lines(tmp_path, capsys) -> None:
    src = _traj_with_text(tmp_path)
    out = tmp_path / "t.jsonl"
    assert main(["convert", str(src), "--out", str(out), "--gold", str(EX / "gold.jsonl"),
                 "--repos", str(EX / "repos")]) == 0
    t = orjson.loads(out.read_bytes())
    assert t["steps"][0]["views"] == [
        {"file": "calc/ops.py", "start_line": n, "end_line": n} for n in (5, 9, 13, 18)]
    assert t["steps"][1]["views"] == [
        {"file": "calc/ops.py", "start_line": 1, "end_line": 3},
        {"file": "calc/ops.py", "start_line": 31, "end_line": 33},
        {"file": "calc/ops.py", "start_line": None, "end_line": None, "text": [[""]]}]
    assert "printed lines not placed in calc/ops.py: 1 of 6 runs" in capsys.readouterr().err
    # without the repository the evidence is written as read, for a later evaluation
    assert main(["convert", str(src), "--out", str(out)]) == 0
    t = orjson.loads(out.read_bytes())
    assert t["steps"][0]["views"][0]["text"] == [["    return a + b"], ["    return a - b"],
                                                 ["    return a * b"], ["    return a / b"]]


def test_evaluate_places_printed_lines_under_strict_only(tmp_path) -> None:
    src = _traj_with_text(tmp_path)
    rows = {}
    for preset in ("strict", "contextbench"):
        out = tmp_path / f"{preset}.jsonl"
        assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                     "--run", f"b={src}", "--out", str(out), "--preset", preset,
                     "-q"]) == 0
        rows[preset] = orjson.loads(out.read_bytes().splitlines()[0])
    # gold: lines 16-18 and 31-32 (5 lines); placed: 5, 9, 13, 18, 1-3, 31-33 -> 18, 31, 32 of
    # gold seen under strict; contextbench reads only line views, as the reference does
    line = rows["strict"]["final"]["line"]
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (3, 5, 10)
    assert rows["strict"]["unplaced_lines"] == 1  # the lone blank line of step 1
    line = rows["contextbench"]["final"]["line"]
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (0, 5, 3)


# --- post-edit line views that kept what they printed ---------------------------------------

BASE = FileLines("\n".join([
    "import os",            # 1
    "",                     # 2
    "def f(x):",            # 3
    "    y = x + 1",        # 4
    "    return y",         # 5
    "",                     # 6
    "def g(x):",            # 7
    "    return f(x) * 2",  # 8
    "",                     # 9
    "RATE = 3",             # 10
]).encode())


def _checked(start: int, printed: list[str]) -> list[tuple]:
    v = View("a.py", start, start + len(printed) - 1, post_edit=True, text=(tuple(printed),))
    assert v.checkable
    out, missing = place_view(v, BASE)
    assert missing == 0
    return [(w.start_line, w.end_line, w.post_edit) for w in out]


def test_a_post_edit_line_printed_as_at_the_base_is_that_base_line() -> None:
    # sed -i 's/+ 1/+ 2/' then sed -n '3,6p': line 4 was changed, 3, 5 and 6 were not
    assert _checked(3, ["def f(x):", "    y = x + 2", "    return y", ""]) == [
        (3, 3, False), (5, 6, False), (3, 6, True)]
    # nothing changed where it was printed: all base lines, no post-edit rest
    assert _checked(7, ["def g(x):", "    return f(x) * 2"]) == [(7, 8, False)]


def test_lines_an_edit_moved_are_found_where_they_were() -> None:
    # two lines inserted above: what was printed as 9-12 is base 7-10, shifted (the k-th
    # printed line is not the base file's line at its number, but the run is there once)
    assert _checked(9, ["def g(x):", "    return f(x) * 2", "", "RATE = 3"]) == [
        (7, 10, False)]


def test_blank_lines_and_repeated_text_prove_nothing() -> None:
    # a blank line alone at its number, a line the edit wrote
    assert _checked(2, [""]) == [(2, 2, True)]
    assert _checked(5, ["    return y + 0"]) == [(5, 5, True)]
    # text found at more than one place in the base file is not placed; one line found once
    # elsewhere may be a line the edit wrote (an indented ``continue``): not placed either
    assert _checked(20, [""]) == [(20, 20, True)]
    assert _checked(20, ["RATE = 3"]) == [(20, 20, True)]
    # a long line found once is that line, moved (a def line, printed by grep -n)
    base = FileLines(b"import os\n\ndef invoke_processors(tag, data):\n    return data\n")
    v = View("a.py", 9, 9, post_edit=True, text=(("def invoke_processors(tag, data):",),))
    assert place_view(v, base) == ([View("a.py", 3, 3)], 0)


def test_a_checkable_view_round_trips_through_json() -> None:
    v = View("a.py", 3, 4, post_edit=True, text=(("def f(x):", "    y = 1"),))
    assert View.from_json(v.to_json()) == v and v.checkable
    # a post-edit text view (no numbers) still drops its text; a checkable view's text must
    # be one list of exactly its lines
    assert View("a.py", None, None, post_edit=True, text=(("x",),)).text is None
    with pytest.raises(InputError):
        View.from_json({"file": "a.py", "start_line": 3, "end_line": 5, "post_edit": True,
                        "text": [["only one"]]})
