"""The shared shell-command reader: parsing, views from observations, edits and kinds."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxeval.model import View
from ctxeval.reading.shell import ShellReading, read_shell, split_commands


def views(command: str, output: str, **kw) -> list[tuple]:
    """Views as (file, start, end[, 'post_edit']) tuples, for compact assertions."""
    out = []
    for v in read_shell(command, output, **kw).views:
        t = (v.file, v.start_line, v.end_line)
        out.append((*t, "post_edit") if v.post_edit else t)
    return out


def texts(command: str, output: str, **kw) -> list[tuple | None]:
    """The printed text each view carries (``View.text``), in view order."""
    return [v.text for v in read_shell(command, output, **kw).views]


def partials(command: str, output: str, **kw) -> list[tuple | None]:
    """Which end lines of each chunk were printed in part (``View.partial``), in view order."""
    return [v.partial for v in read_shell(command, output, **kw).views]


def numbered(a: int, b: int, text: str = "x") -> str:
    """``nl -ba``/``cat -n`` style output for lines a..b."""
    return "".join(f"{i:6d}\t{text}{i}\n" for i in range(a, b + 1))


def plain(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


# --- split_commands --------------------------------------------------------------------------


def test_split_operators_and_quotes() -> None:
    assert split_commands("grep -n 'a b' f.py | head -5 && echo \"x;y\" || ls; pwd") == [
        ["grep", "-n", "a b", "f.py"], ["head", "-5"], ["echo", "x;y"], ["ls"], ["pwd"]]


def test_split_escapes_and_adjacent_quotes() -> None:
    assert split_commands(r"grep foo\ bar 'it'\''s' \"q\" a\|b") == [
        ["grep", "foo bar", "it's", '"q"', "a|b"]]


def test_split_newlines_comments_and_continuations() -> None:
    cmd = "cd /testbed  # go there\nls \\\n  -la\n\n# only a comment\ncat x"
    assert split_commands(cmd) == [["cd", "/testbed"], ["ls", "-la"], ["cat", "x"]]


def test_split_heredoc_body_is_skipped() -> None:
    cmd = "cat <<'EOF' > a.py\nx = 1 | 2 && y\nEOF\ngrep -n x a.py"
    assert split_commands(cmd) == [["cat"], ["grep", "-n", "x", "a.py"]]


def test_split_heredoc_with_dash_and_two_heredocs() -> None:
    cmd = "cat <<-END >a\n\tbody; ls\n\tEND\ncat <<A <<B\n1\nA\n2\nB\necho done"
    assert split_commands(cmd) == [["cat"], ["cat"], ["echo", "done"]]


def test_split_subshell_and_command_substitution() -> None:
    cmd = "(cd sub; ls) && echo \"$(cat b.py | wc -l)\" `pwd`"
    assert split_commands(cmd) == [["cd", "sub"], ["ls"], ["echo", "$(cat b.py | wc -l)", "`pwd`"],
                                   ["cat", "b.py"], ["wc", "-l"], ["pwd"]]


def test_split_redirections_are_not_arguments() -> None:
    assert split_commands("python x.py 2>&1 >out.log < in.txt") == [["python", "x.py"]]


@pytest.mark.parametrize("cmd", ["", "   ", "'unclosed", '"unclosed $(', ")))", "<<", "|||",
                                 "cat <<EOF", "$(", "`", "a\\"])
def test_split_odd_input_does_not_raise(cmd: str) -> None:
    assert isinstance(split_commands(cmd), list)


# --- whole files and positional ranges --------------------------------------------------------


def test_cat_whole_file_and_cwd_join() -> None:
    assert views("cat requests/compat.py", plain(3)) == [("requests/compat.py", 1, None)]
    assert views("cat ./a/b.py", plain(3), cwd="/testbed") == [("/testbed/a/b.py", 1, None)]
    assert views("cat /abs/x.py", plain(3), cwd="/testbed") == [("/abs/x.py", 1, None)]


def test_cd_changes_directory_of_later_commands_only() -> None:
    assert views("cd sub && cat x.py", "hi\n", cwd="/testbed") == [("/testbed/sub/x.py", 1, None)]
    assert views("cd /other; cat x.py", "hi\n", cwd="/testbed") == [("/other/x.py", 1, None)]
    assert views("cd sub && cat x.py", "hi\n") == [("sub/x.py", 1, None)]
    # home, a variable, the previous directory: relative paths there are unknown
    assert views("cd ~ && cat x.py", "hi\n", cwd="/testbed") == []
    assert views("cd $D && grep -rn x .", "a.py:1:x\n", cwd="/testbed") == []
    assert views("cd - ; cat x.py; cd /abs && cat y.py", "hi\n") == [("/abs/y.py", 1, None)]
    # a subshell's cd ends with it
    assert views("(cd sub && cat x.py); cat y.py", "a\nb\n", cwd="/r") == [
        ("/r/sub/x.py", 1, None), ("/r/y.py", 1, None)]


def test_head_and_tail_forms() -> None:
    assert views("head -n 30 f.py", plain(30)) == [("f.py", 1, 30)]
    assert views("head -20 f.py", plain(20)) == [("f.py", 1, 20)]
    assert views("head f.py", plain(10)) == [("f.py", 1, 10)]
    assert views("head -n 30 f.py", plain(12)) == [("f.py", 1, 12)]  # a short file
    assert views("tail -n +5 f.py", plain(3)) == [("f.py", 5, None)]
    assert views("tail -n +5 f.py | head -n 3", plain(3)) == [("f.py", 5, 7)]
    assert views("tail -n 5 f.py", plain(5)) == [("f.py", None, None)]  # position unknown
    assert views("head -c 100 f.py", "abc") == [("f.py", None, None)]  # bytes: file level


def test_sed_print_forms() -> None:
    assert views("sed -n '240,260p' a.py", plain(21)) == [("a.py", 240, 260)]
    assert views("sed -n '240,260p' a.py", plain(5)) == [("a.py", 240, 244)]  # EOF at 244
    assert views("sed -n 10p a.py", "x\n") == [("a.py", 10, 10)]
    assert views("sed -n '10,+3p' a.py", plain(4)) == [("a.py", 10, 13)]
    assert views("sed -n '1,3p;10,12p' a.py", plain(6)) == [("a.py", 1, 3), ("a.py", 10, 12)]
    assert views("sed -n -e 5p -e '7,+2p' a.py", plain(4)) == [("a.py", 5, 5), ("a.py", 7, 9)]
    assert views("sed -n '10,20{p}' a.py", plain(11)) == [("a.py", 10, 20)]
    assert views("sed -n '10,$p' a.py", plain(3)) == [("a.py", 10, None)]
    assert views("sed '5q' a.py", plain(5)) == [("a.py", 1, 5)]
    # a regex range shows content at unknown positions: file level
    assert views("sed -n '/def f/,/return/p' a.py", plain(3)) == [("a.py", None, None)]
    # '=' interleaves numbers with lines: positions no longer map
    assert views("sed -n '3,4{=;p}' a.py", "3\nx\n4\ny\n") == [("a.py", None, None)]
    assert views("sed -n '100,120p' a.py", "") == []  # past the end of the file


def test_awk_nr_ranges() -> None:
    assert views("awk 'NR>=5 && NR<=8' f.py", plain(4)) == [("f.py", 5, 8)]
    assert views("awk 'NR==5,NR==7' f.py", plain(3)) == [("f.py", 5, 7)]
    assert views("awk 'NR>2 && NR<5 {print}' f.py", plain(2)) == [("f.py", 3, 4)]
    assert views("awk '{print $1}' f.py", plain(2)) == [("f.py", None, None)]


def test_less_more_and_python_read() -> None:
    assert views("less f.py", plain(2)) == [("f.py", 1, None)]
    assert views("more f.py", plain(2)) == [("f.py", 1, None)]
    assert views("python -c \"print(open('a.py').read())\"", plain(2)) == [("a.py", 1, None)]
    assert views("python3 -c \"import sys; print(open('a.py').readlines()[3])\"", "x\n") == [
        ("a.py", None, None)]
    assert views("python -c \"print(open('a.py').read())\"", "", returncode=1) == []


def test_numbers_survive_line_filters() -> None:
    assert views("grep -n x f.py | head -3", "3:x\n5:x\n") == [("f.py", 3, 3), ("f.py", 5, 5)]
    assert views("nl -ba f.py | grep -n x | head -2", "1:     3\tx\n2:     5\tx\n") == [
        ("f.py", 3, 3), ("f.py", 5, 5)]
    assert views("sed -n 10,20p f.py | grep -n x | tail -1", "4:x\n") == [("f.py", 13, 13)]
    assert views("head -n 20 f.py | tail -n 5", plain(5)) == [("f.py", 16, 20)]
    # a window numbered again by nl starts at 1: positions, not printed numbers
    assert views("sed -n 5,10p f.py | nl -ba", numbered(1, 6)) == [("f.py", 5, 10)]
    assert views("cat f.py | nl -ba | sed -n 5,7p", numbered(5, 7)) == [("f.py", 5, 7)]


def test_cat_pipe_head() -> None:
    assert views("cat f.py | head -n 20", plain(20)) == [("f.py", 1, 20)]
    assert views("cat f.py | head -100", plain(7)) == [("f.py", 1, 7)]


# --- printed numbers win ------------------------------------------------------------------------


def test_nl_sed_reads_printed_numbers() -> None:
    assert views("nl -ba requests/sessions.py | sed -n '415,440p'", numbered(415, 440)) == [
        ("requests/sessions.py", 415, 440)]
    # the numbers printed win over what the command implies
    assert views("nl -ba f.py | sed -n '415,440p'", numbered(415, 420)) == [("f.py", 415, 420)]
    assert views("cat -n f.py | sed -n 3,5p", numbered(3, 5)) == [("f.py", 3, 5)]
    assert views("nl -b a f.py | head -n 3", numbered(1, 3)) == [("f.py", 1, 3)]


def test_plain_nl_numbers_only_non_blank_lines() -> None:
    # `nl` without -ba skips blank lines in its numbering; positions still map one to one
    out = "     2\tb\n     3\tc\n"
    assert views("nl f.py | sed -n 3,4p", out) == [("f.py", 3, 4)]


def test_nl_grep_context() -> None:
    out = numbered(655, 670)
    assert views('nl -ba requests/utils.py | grep -A 15 "def to_native_string"', out) == [
        ("requests/utils.py", 655, 670)]
    out = "   10\ta\n   11\tb\n--\n   40\tc\n"
    assert views("nl -ba f.py | grep -C1 x", out) == [("f.py", 10, 11), ("f.py", 40, 40)]


def test_grep_single_file_prints_bare_numbers() -> None:
    out = "428:        method = builtin_str(method)\n"
    assert views('grep -n "method = builtin_str(method)" requests/sessions.py', out) == [
        ("requests/sessions.py", 428, 428)]
    out = "10:def f():\n11-    pass\n--\n20:def g():\n"
    assert views("grep -n -A1 def f.py", out) == [("f.py", 10, 11), ("f.py", 20, 20)]


def test_grep_on_a_piped_file_maps_positions() -> None:
    out = "219:def _cstack(left, right):\n220-    x\n--\n316:_operators = {}\n"
    assert views('cat sep.py | grep -n "_cstack" -A 1', out) == [
        ("sep.py", 219, 220), ("sep.py", 316, 316)]
    # positions in a sed window are offsets into that window
    assert views("sed -n '100,200p' f.py | grep -n foo", "3:foo\n") == [("f.py", 102, 102)]


def test_grep_multi_file_forms() -> None:
    out = "src/a.py:3:foo\nsrc/a.py-4-bar\n--\nsrc/b-c.py:10:foo\nsrc/b-c.py-11-baz\n"
    assert views("grep -rn foo src", out) == [
        ("src/a.py", 3, 4), ("src/b-c.py", 10, 11)]
    assert views("grep -n foo a.py b.py", "a.py:1:foo\nb.py:7:foo\n", cwd="/t") == [
        ("/t/a.py", 1, 1), ("/t/b.py", 7, 7)]
    assert views("git grep -n foo", "a.py:3:foo\n") == [("a.py", 3, 3)]
    assert views("git -C sub grep -n foo", "a.py:3:foo\n", cwd="/r") == [("/r/sub/a.py", 3, 3)]
    assert views("rg -n foo src/a.py", "3:foo\n") == [("src/a.py", 3, 3)]
    assert views("grep -rn foo d/x.py", "2:foo\n") == [("d/x.py", 2, 2)]  # -r on one file


def test_grep_without_numbers_is_file_level() -> None:
    out = ("requests/sessions.py:from .compat import builtin_str\n"
           "grep: requests/__pycache__/x.pyc: binary file matches\n"
           "Binary file requests/y.pyc matches\n"
           "requests/models.py:    builtin_str(x)\n")
    assert views('grep -r "builtin_str" requests', out) == [
        ("requests/sessions.py", None, None), ("requests/models.py", None, None)]
    assert views('grep "builtin_str" requests/sessions.py', "from x\n") == [
        ("requests/sessions.py", None, None)]
    assert views("grep -C 5 regex sites.py", "a\nb\n") == [("sites.py", None, None)]


# --- printed lines without numbers: kept as text, to be placed from the source -----------------


def test_grep_without_numbers_keeps_each_line_as_text() -> None:
    # every match is a line of the file, in file order, each one a chunk of its own
    assert texts("grep foo a.py", "x = foo\n  foo()\n") == [(("x = foo",), ("  foo()",))]
    assert texts("grep -v '^#' a.py | head -n 2", "a\nb\n") == [(("a",), ("b",))]
    assert texts("head -50 a.py | grep x", "x1\n") == [(("x1",),)]
    # context: groups of consecutive lines, split at grep's "--"
    assert texts("grep -C1 x a.py", "a\nx\nb\n--\nc\nx\n") == [
        (("a", "x", "b"), ("c", "x"))]
    assert texts("grep -2 x a.py", "a\nx\n") == [(("a", "x"),)]
    # a filter after context keeps single lines; a "--" is never taken for a file line
    assert texts("grep -A1 x a.py | grep -v y", "x\n--\nx\n") == [(("x",), ("x",))]


def test_grep_without_numbers_over_several_files() -> None:
    out = ("src/a.py:x = foo\n"
           "src/a.py-y = {\"a\": 1}\n"  # a context line whose text holds a colon
           "--\n"
           "src/b.py:  foo()\n"
           "src/b.py-z\n")
    assert views("grep -A1 -r foo src", out) == [("src/a.py", None, None),
                                                 ("src/b.py", None, None)]
    assert texts("grep -A1 -r foo src", out) == [(("x = foo", 'y = {"a": 1}'),),
                                                 (("  foo()", "z"),)]
    out = "./a.py:one\n./b.py:two\n./a.py:three\n"  # (interleaved: xargs runs several greps)
    assert texts("grep -r o .", out) == [(("one",), ("three",)), (("two",),)]
    # names come from the output: the text of a glob's files too
    assert texts("grep foo *.py", "a.py:foo\n") == [(("foo",),)]


def test_selecting_filters_keep_text_rewriting_ones_do_not() -> None:
    assert texts("sed -n '/def f/,/return/p' a.py", "def f():\n  return 1\n") == [
        (("def f():",), ("  return 1",))]
    assert texts("sed '/^#/d' a.py", "x\n") == [(("x",),)]
    assert texts("awk '/x/' a.py", "x1\n") == [(("x1",),)]
    assert texts("cat -s a.py", "a\n\nb\n") == [(("a",), ("",), ("b",))]
    assert texts("tail -n 3 a.py", "a\nb\nc\n") == [(("a", "b", "c"),)]
    assert texts("head -n -2 a.py", "a\nb\n") == [(("a", "b"),)]
    # these print something else than the file's lines: file level, no text
    for cmd in ("grep -o foo a.py", "grep -b foo a.py", "awk '{print $1}' a.py",
                "sed -n 's/a/b/p' a.py", "sed -n '3,4{=;p}' a.py", "sed '/x/p' a.py",
                "cut -c1-5 a.py", "sort a.py", "grep --color=always foo a.py",
                "rg -r X foo a.py", "cat -n a.py b.py"):
        assert texts(cmd, "x\ny\n") in ([None], []), cmd


def test_text_keeps_lines_cut_by_a_middle_truncation_as_printed_in_part() -> None:
    # the elision cut "x3 partial" and "x97 partial": the agent saw the start of the one and
    # the end of the other; both are kept, marked (View.partial), to be placed by that part
    head = "x1\nx2\nx3 par"
    tail = "tial\nx98\nx99\n"
    assert texts("grep x a.py", mini_truncated(head, tail)) == [
        (("x1",), ("x2",), ("x3 par",), ("tial",), ("x98",), ("x99",))]
    assert partials("grep x a.py", mini_truncated(head, tail)) == [
        ("", "", "end", "start", "", "")]
    assert texts("tail -n 500 a.py", mini_truncated(head, tail)) == [
        (("x1", "x2", "x3 par"), ("tial", "x98", "x99"))]
    assert partials("tail -n 500 a.py", mini_truncated(head, tail)) == [("end", "start")]
    # nothing but blanks of a cut line printed: nothing of it was seen
    assert texts("tail -n 500 a.py", mini_truncated("x1\n   ", "  \nx99\n")) == [
        (("x1",), ("x99",))]
    assert partials("tail -n 500 a.py", mini_truncated("x1\n   ", "  \nx99\n")) == [None]
    # a grep -r line whose file name the elision cut cannot be attributed: left out
    out = "src/a.py:1\nsrc/b.py:2\nsrc/b.py:3 cut"
    assert texts("grep -r x src", mini_truncated(out, "z\nsrc/b.py:98\nsrc/c.py:99\n")) == [
        (("1",),), (("2",), ("3 cut",), ("98",)), (("99",),)]
    # stopped early (a timeout): the last printed line is cut, its end unknown: dropped
    assert texts("grep x a.py", "x1\nx2 cu", truncated=True) == [(("x1",),)]


def test_openhands_middle_truncation() -> None:
    # OpenHands keeps the first and last halves of a long output, cut anywhere in a line
    out = (plain(40) + "lin\n[... Observation truncated due to length ...]\ne 960\n"
           + "".join(f"line {i}\n" for i in range(961, 964)))
    assert views("cat big.py", out) == [("big.py", 1, 41), ("big.py", None, None)]
    assert texts("cat big.py", out)[1] == (("e 960", "line 961", "line 962", "line 963"),)
    assert partials("cat big.py", out)[1] == ("start",)
    out = (numbered(1, 30) + "    3\n[... Observation truncated due to length ...]\n"
           + "9\tx\n" + numbered(900, 902))  # "9\tx" is the cut end of line 899
    assert views("nl -ba big.py", out) == [("big.py", 1, 30), ("big.py", 900, 902)]
    # cut in the padding: the number of the line printed in part is whole
    out = (numbered(1, 30) + "  \n[... Observation truncated due to length ...]\n"
           + "   899\tx\n" + numbered(900, 902))
    assert views("nl -ba big.py", out) == [("big.py", 1, 30), ("big.py", 899, 902)]


def test_codex_and_claude_code_truncation() -> None:
    # Codex: "Total output lines: N", the head, "[... omitted K of N lines ...]", the tail
    # (it cuts between lines: the tail's first line is whole)
    out = ("Total output lines: 400\n\n" + plain(20)
           + "\n[... omitted 370 of 400 lines ...]\n\n" + "".join(
               f"line {i}\n" for i in range(391, 401)))
    assert views("cat big.py", out) == [("big.py", 1, 20), ("big.py", None, None)]
    assert texts("cat big.py", out)[1] == (tuple(f"line {i}" for i in range(391, 401)),)
    assert partials("cat big.py", out)[1] is None
    out = ("Total output lines: 400\n\n" + numbered(1, 20)
           + "\n[... omitted 370 of 400 lines ...]\n\n" + numbered(391, 400))
    assert views("nl -ba big.py", out) == [("big.py", 1, 20), ("big.py", 391, 400)]
    # Claude Code keeps the head and says how many lines it dropped
    out = plain(30) + "\n\n... [638 lines truncated] ..."
    assert views("cat big.py", out) == [("big.py", 1, 30)]
    assert views("nl -ba big.py", numbered(1, 30) + "\n\n... [638 lines truncated] ...") == [
        ("big.py", 1, 30)]


def matches(command: str, output: str, **kw) -> list[str | None]:
    return [v.matches for v in read_shell(command, output, **kw).views]


def test_which_matches_a_content_filter_printed() -> None:
    # grep without context selects lines by their content: every copy of a printed line was
    # printed, or the first (head, -m, cut output) or the last (tail) copies
    assert matches("grep foo a.py", "foo\n") == ["all"]
    assert matches("cat a.py | grep foo | grep -v bar", "foo\n") == ["all"]
    assert matches("grep foo a.py | head -3", "foo\n") == ["first"]
    assert matches("grep -m 2 foo a.py", "foo\n") == ["first"]
    assert matches("head -50 a.py | grep foo", "foo\n") == ["first"]
    assert matches("grep foo a.py | tail -n 2", "foo\n") == ["last"]
    assert matches("tail -n +9 a.py | grep foo", "foo\n") == ["last"]
    assert matches("grep foo a.py", "foo\nfoo cu", truncated=True) == ["first"]
    # not by content alone, or a region in the middle: no rule (the general placement applies)
    for cmd in ("grep -A1 foo a.py", "sed -n 5,9p a.py | grep foo", "grep foo a.py | sed -n 2p",
                "grep foo a.py | head -3 | tail -1", "sed -n '/a/,/b/p' a.py",
                "tail -n 5 a.py", "grep foo a.py | tail -n +2"):
        assert matches(cmd, "foo\n") == [None], cmd
    # several files: grep prints file by file, so a head cuts only the last file printed
    out = "src/a.py:foo\nsrc/b.py:foo\nsrc/b.py:foo 2\n"
    assert matches("grep -r foo src", out) == ["all", "all"]
    assert matches("grep -r foo src | head -n 3", out) == ["all", "first"]
    assert matches("grep -r foo src | tail -n 3", out) == ["last", "all"]
    assert matches("grep -r -m1 foo src", out) == [None, None]
    assert matches("grep -r foo src", mini_truncated(out, "x\nsrc/c.py:foo\n")) == [
        None, None, None]


def test_grep_hits_told_from_another_commands_output() -> None:
    # real (django__django-11163, mini-swe-agent 1.x): the listing's length is unknown, so the
    # grep's lines cannot be found by position; "./django:" looks like a hit of an empty line
    out = ("./django:\n./django/apps:\n./django/bin:\n./Django.egg-info:\n./tests:\n"
           "./django/forms/models.py:def model_to_dict(instance, fields=None, exclude=None):\n")
    cmd = 'ls -R | grep ":$" | head -n 5 && grep -r "def model_to_dict" .'
    assert views(cmd, out, cwd="/testbed") == [("/testbed/django/forms/models.py", None, None)]
    # basic regular expressions: \| alternates, a bare | is literal; -i, -w, -F, -v
    cmd = 'ls; grep -r "def \\(model\\|x\\)_to_dict" .'
    assert views(cmd, out, cwd="/t") == [("/t/django/forms/models.py", None, None)]
    assert views('ls; grep -r "a|b" .', "./x:\n./y.py:a|b\n./z.py:a\n") == [("./y.py", None, None)]
    assert views('ls; grep -riw "MODEL_TO_DICT" .', out) == [
        ("./django/forms/models.py", None, None)]
    assert views('ls; grep -rF "x(" .', "./d:\n./a.py:x(1)\n") == [("./a.py", None, None)]
    assert views('ls; grep -rv "^$" .', "./d:\n./a.py:x\n") == [("./a.py", None, None)]


def test_text_is_not_kept_after_an_edit() -> None:
    reading = read_shell("sed -i 's/a/b/' f.py && grep b f.py", "b\n")
    assert [(v.post_edit, v.text) for v in reading.views] == [(True, None)]


def test_listing_and_counting_are_not_views() -> None:
    assert views("ls -la; find . -name x.py; grep -l foo a.py", "x\n./x.py\na.py\n") == []
    assert views("grep -c foo a.py", "3\n") == []
    assert views("grep -q foo a.py && echo yes", "yes\n") == []
    assert views("cat a.py | wc -l", "40\n") == []
    assert views("git diff --stat", " a.py | 2 +-\n") == []
    assert views("python reproduce.py", "Traceback\n") == []


def test_git_diff_shows_the_edited_files() -> None:
    # the agent's changes against the base commit: each file of the diff was shown, as edited
    out = ("diff --git a/requests/auth.py b/requests/auth.py\nindex 1a2..3b4 100644\n"
           "--- a/requests/auth.py\n+++ b/requests/auth.py\n@@ -144,7 +144,7 @@\n x\n-y\n+z\n"
           "diff --git a/b.py b/b.py\nnew file mode 100644\n")
    assert views("git diff", out, cwd="/testbed") == [("requests/auth.py", None, None, "post_edit"),
                                                      ("b.py", None, None, "post_edit")]
    assert views("git status && git diff requests/auth.py", "On branch main\n" + out) == [
        ("requests/auth.py", None, None, "post_edit"), ("b.py", None, None, "post_edit")]
    for cmd in ("git diff --stat", "git diff --name-only", "git log -p", "git show",
                "git stash show", "git stash show -p --stat", "git stash list"):
        assert views(cmd, out) == [], cmd
    # stashed changes of the working tree, printed as git diff prints them (a real OpenCode
    # session, avltree9798/kiseki session-ses_36de.md, step 19)
    assert views("git stash show -p stash@{0} | head -200", out) == [
        ("requests/auth.py", None, None, "post_edit"), ("b.py", None, None, "post_edit")]
    # the same diff saved to a file and printed: the file, and the files of the diff
    assert views("git diff > p.txt && cat p.txt", out) == [
        ("p.txt", 1, None, "post_edit"), ("requests/auth.py", None, None, "post_edit"),
        ("b.py", None, None, "post_edit")]


def test_xargs_grep_names_files_in_output() -> None:
    out = "./a.py:3:foo\n./b/c.py:9:foo\n"
    assert views("find . -name '*.py' | xargs grep -n foo", out, cwd="/t") == [
        ("/t/a.py", 3, 3), ("/t/b/c.py", 9, 9)]


def test_find_exec_grep() -> None:
    out = "./a.py:3:foo\n"
    assert views("find . -name '*.py' -exec grep -n foo {} +", out) == [("./a.py", 3, 3)]
    # one file per grep call: no names printed, nothing can be attributed
    assert views("find . -name '*.py' -exec grep -n foo {} \\;", "3:foo\n") == []
    assert views("find . -name '*.py' -exec grep -l foo {} +", "./a.py\n") == []


def test_expansions_name_no_file() -> None:
    assert views("cat $F", "x\n") == []
    assert views('cat "$DIR/a.py"', "x\n") == []
    assert views("head -n 5 ~/x.py", "a\n") == []
    assert views("cat src/*.py", "x\n") == []
    assert views('cat "pages/[id].js"', "x\n") == [("pages/[id].js", 1, None)]  # quoted: literal
    # grep prints the names a glob expanded to, when there were several
    assert views("grep -n foo *.py", "a.py:3:foo\nb.py:4:foo\n") == [
        ("a.py", 3, 3), ("b.py", 4, 4)]
    assert views("grep -n foo *.py", "3:foo\n") == []  # one match: no name printed
    assert views("grep foo *.py", "a.py:foo\n") == [("a.py", None, None)]
    assert read_shell("echo x > $OUT; sed -i s/a/b/ $F", "").edits == []
    assert split_commands('FOO=$BAR cat "$X" *.py') == [["FOO=$BAR", "cat", "$X", "*.py"]]


def test_bash_c_is_read_inside() -> None:
    out = numbered(2, 3)
    r = read_shell("bash -c \"cd sub && nl -ba a.py | sed -n 2,3p\"", out, cwd="/t")
    assert r.views == [View("/t/sub/a.py", 2, 3)]
    assert r.kinds == ["bash", "cd", "nl", "sed"]
    assert views("sh -c 'cat a.py' && cat b.py", "x\n", cwd="/t") == [
        ("/t/a.py", 1, None), ("/t/b.py", 1, None)]  # the sh -c cd does not leak


# --- several outputs in one command ------------------------------------------------------------


def test_multi_file_cat_and_head_headers() -> None:
    assert views("cat a.py b.py", "x\ny\n") == [("a.py", 1, None), ("b.py", 1, None)]
    out = "==> e.txt <==\nl1\n\n\n==> d/x.py <==\na\nfoo\n"
    assert views("head -n 2 e.txt d/x.py", out) == [("e.txt", 1, 2), ("d/x.py", 1, 2)]
    out = "==> a.py <==\n1\n2\n\n==> b.py <==\n1\n"
    assert views("tail -n +3 a.py b.py", out) == [("a.py", 3, None), ("b.py", 3, None)]


def test_echo_separators_split_outputs() -> None:
    out = plain(5) + "----\n" + plain(3)
    assert views("head -n 5 a.py && echo ---- && head -n 3 b.py", out) == [
        ("a.py", 1, 5), ("b.py", 1, 3)]
    out = "=== a ===\n" + plain(2) + "=== b ===\n" + plain(4)
    assert views("echo '=== a ==='; cat a.py; echo '=== b ==='; sed -n '5,8p' b.py", out) == [
        ("a.py", 1, None), ("b.py", 5, 8)]


def test_numbered_outputs_in_sequence() -> None:
    out = "3:foo\n7:foo\n" + numbered(10, 12)
    assert views("grep -n foo a.py; nl -ba b.py | sed -n 10,12p", out) == [
        ("a.py", 3, 3), ("a.py", 7, 7), ("b.py", 10, 12)]


def test_unknown_output_before_a_numbered_one() -> None:
    out = "Traceback: boom\n12:def f():\n"
    assert views("python t.py; grep -n 'def f' a.py", out) == [("a.py", 12, 12)]


# --- truncation and failures -------------------------------------------------------------------


def mini_truncated(head: str, tail: str) -> str:
    return (f"<output_head>\n{head}\n</output_head>\n<elided_chars>\n10569 characters elided\n"
            f"</elided_chars>\n<output_tail>\n{tail}\n</output_tail>")


def test_truncated_cat_credits_the_head_and_keeps_the_tail_as_text() -> None:
    head = "".join(f"code {i}\n" for i in range(1, 134)) + "        for model i"
    tail = "ate or 'admin/login.html',\n        }\nsite = DefaultAdminSite()\n"
    # 134 lines shown from the top (the last one cut mid-line); the tail's position is unknown
    # without the source: a file-level view carrying the tail, whose first line is the end of
    # a line (printed in part)
    assert views("cat sites.py", mini_truncated(head, tail)) == [("sites.py", 1, 134),
                                                                 ("sites.py", None, None)]
    shown = ("ate or 'admin/login.html',", "        }", "site = DefaultAdminSite()")
    assert texts("cat sites.py", mini_truncated(head, tail)) == [None, (shown,)]
    assert partials("cat sites.py", mini_truncated(head, tail)) == [None, ("start",)]
    # the tail of ``cat a b`` is the end of b
    assert texts("cat a.py b.py", mini_truncated(head, tail))[-1:] == [(shown,)]
    assert views("cat a.py b.py", mini_truncated(head, tail))[-1] == ("b.py", None, None)


def test_truncated_numbered_output_reads_the_tail_too() -> None:
    head = numbered(1, 50) + "    5"
    tail = "1\tpartial line\n" + numbered(900, 910)
    assert views("nl -ba big.py", mini_truncated(head, tail)) == [
        ("big.py", 1, 50), ("big.py", 900, 910)]
    head = "a.py:1:x\na.py:2:x\n"
    tail = "x\nz.py:40:x\n"
    assert views("grep -rn x .", mini_truncated(head, tail)) == [
        ("a.py", 1, 2), ("z.py", 40, 40)]


def test_timeout_output_is_cut() -> None:
    assert views("cat big.py", plain(40), truncated=True) == [("big.py", 1, 40)]
    assert views("cat big.py", plain(40)) == [("big.py", 1, None)]


def test_failures_show_nothing() -> None:
    assert views("cat nope.py", "cat: nope.py: No such file or directory\n", returncode=1) == []
    assert views("head -n 3 missing.py",
                 "head: cannot open 'missing.py' for reading: No such file or directory\n") == []
    assert views("nl -ba /t/a.py | sed -n '1,20p'",
                 "nl: /t/a.py: No such file or directory\n") == []
    assert views("sed -n 1,5p gone.py", "sed: can't read gone.py: No such file or directory\n",
                 returncode=2) == []
    assert views("grep -n x dir", "grep: dir: Is a directory\n", returncode=2) == []
    assert views("cat x.py", "", returncode=1) == []
    # a command the shell could not find: zsh (a real OpenCode session on macOS,
    # karthikiyer56/stellar-full-history-ingestion session-ses_4283.md, step 17), bash, dash
    assert views('rg -n "time\\.|Duration" --type go', "zsh:1: command not found: rg\n") == []
    assert views("rg -n foo", "zsh: command not found: rg\n", returncode=127) == []
    assert views("grep -rn foo .", "bash: line 1: grep: command not found\n") == []
    assert views("rg -n foo", "sh: 1: rg: not found\n", returncode=127) == []
    # one of two files missing: the other one was shown
    out = "a\nb\ncat: b.py: No such file or directory\n"
    assert views("cat a.py b.py", out, returncode=1) == [("a.py", 1, None)]


def test_content_that_looks_like_an_error_is_content() -> None:
    out = "a\n  path: No such file or directory\nmsg: cannot open it\n"
    assert views("sed -n 1,3p f.py", out) == [("f.py", 1, 3)]


def test_empty_file_shown_whole_when_the_command_succeeded() -> None:
    assert views("cat ledger/__init__.py", "", returncode=0) == [("ledger/__init__.py", 1, None)]


# --- edits -----------------------------------------------------------------------------------


def edits(command: str, output: str = "", **kw) -> list[str]:
    return read_shell(command, output, **kw).edits


def test_edits_from_redirections_and_heredocs() -> None:
    assert edits("cat <<'EOF' > reproduce.py\nprint(1)\nEOF", cwd="/testbed") == [
        "/testbed/reproduce.py"]
    assert edits("cat > a.py << 'EOF'\nx\nEOF\npython a.py") == ["a.py"]
    assert edits("cat <<'EOF' >> tests/t.py\nx\nEOF") == ["tests/t.py"]
    assert edits("echo hi > out.txt; python x.py > /dev/null 2>&1") == ["out.txt"]
    assert edits("python x.py 2>&1 | tee log.txt") == ["log.txt"]


def test_edits_from_tools() -> None:
    assert edits("sed -i 's/a/b/' f.py") == ["f.py"]
    assert edits("sed -i.bak -e 's/a/b/' -e 's/c/d/' f.py g.py") == ["f.py", "g.py"]
    assert edits("sed -i '428s/x/y/' requests/sessions.py", cwd="/testbed") == [
        "/testbed/requests/sessions.py"]
    assert edits("perl -pi -e 's/a/b/' f.py") == ["f.py"]
    assert edits("patch -p1 < fix.diff", "patching file src/a.py\n") == ["src/a.py"]
    assert edits("git apply <<'EOF'\ndiff --git a/p.py b/p.py\n--- a/p.py\n+++ b/p.py\nEOF") == [
        "p.py"]
    assert edits("git checkout pyproject.toml") == ["pyproject.toml"]
    assert edits("git checkout -- a.py b.py") == ["a.py", "b.py"]
    assert edits("cp a.py a.py.bak && mv a.py.bak a.py") == ["a.py.bak", "a.py"]
    assert edits("mv game.py 2048.py") == ["game.py", "2048.py"]  # the source is gone
    assert edits("python3 - <<EOF\nopen('o.py', 'w').write('x')\nEOF") == ["o.py"]
    assert edits("python -c \"from pathlib import Path; Path('p.py').write_text('x')\"") == [
        "p.py"]


def test_edits_are_not_views_and_later_views_are_post_edit() -> None:
    r = read_shell("sed -i 's/a/b/' f.py && cat f.py", "x\ny\n")
    assert r.edits == ["f.py"]
    assert r.views == [View("f.py", 1, None, post_edit=True)]
    r = read_shell("cat > f.py <<'EOF'\nx = 1\nEOF", "")
    assert r.views == [] and r.edits == ["f.py"]


def test_reading_commands_edit_nothing() -> None:
    assert edits("cat a.py | grep -n x 2>&1") == []
    assert edits("python x.py 2>/dev/null") == []


# --- kinds -----------------------------------------------------------------------------------


def test_kinds() -> None:
    r = read_shell("cd /testbed && timeout 30 python3 -m pytest -x | tail -5; git grep -n x; "
                   "FOO=1 sed -n 1p a.py", "")
    assert r.kinds == ["cd", "python", "tail", "git grep", "sed"]
    assert read_shell("grep -n x a.py | grep -v y | head", "").kinds == ["grep", "head"]
    assert read_shell('echo "$(cat a.py)"', "").kinds == ["echo", "cat"]


def test_result_type() -> None:
    r = read_shell("cat a.py", "x\n")
    assert isinstance(r, ShellReading)
    assert all(isinstance(v, View) for v in r.views)


# --- never raises ------------------------------------------------------------------------------

_SHELLISH = st.text(alphabet=st.sampled_from(list("catsednlhigrep -|&;()<>'\"\\$`\n\t{}#=+,"
                                                   "0123456789abfpy./:")), max_size=120)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(command=st.text(max_size=200), output=st.text(max_size=300),
       returncode=st.one_of(st.none(), st.integers(-5, 300)), cwd=st.one_of(st.none(), st.text()))
def test_read_shell_never_raises_on_arbitrary_text(command: str, output: str,
                                                   returncode: int | None,
                                                   cwd: str | None) -> None:
    r = read_shell(command, output, cwd=cwd, returncode=returncode)
    assert isinstance(r, ShellReading)
    assert isinstance(split_commands(command), list)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(command=_SHELLISH, output=_SHELLISH, truncated=st.booleans())
def test_read_shell_never_raises_on_shell_like_text(command: str, output: str,
                                                    truncated: bool) -> None:
    r = read_shell(command, output, truncated=truncated)
    for v in r.views:
        assert v.start_line is None or v.start_line >= 1
        assert v.end_line is None or v.start_line is None or v.end_line >= v.start_line
    assert isinstance(split_commands(command), list)


def test_a_python_script_written_earlier_edits_what_it_opens_for_writing():
    """A heredoc script run in a later command (found on real mini-swe-agent runs)."""
    scripts: dict[str, str] = {}
    write = ("cat > /testbed/fix.py << 'EOF'\n"
             "src = open('pkg/mod.py').read()\n"
             "open('pkg/mod.py', 'w').write(src.replace('a', 'b'))\n"
             "EOF")
    first = read_shell(write, "", cwd="/testbed", scripts=scripts)
    assert first.edits == ["/testbed/fix.py"]
    run = read_shell("python fix.py", "done\n", cwd="/testbed", scripts=scripts)
    assert run.edits == ["/testbed/pkg/mod.py"]
    # without the memory the same command edits nothing known
    assert read_shell("python fix.py", "done\n", cwd="/testbed").edits == []
