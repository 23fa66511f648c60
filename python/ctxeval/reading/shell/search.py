"""Search commands: ``grep``/``egrep``/``fgrep``, ``rg``, ``ag`` and ``git grep``.

Which files they read and how their output names and numbers the lines (``-n``, ``-H``/``-h``,
``-l``, context options, several files), which lines count as hits (the patterns, read as
Python regular expressions), and where a content filter leaves only text to place.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .lexer import _DYNAMIC
from .pipeline import (
    _content_filter,
    _Ctx,
    _filtered,
    _head_of,
    _opt_values,
    _Seg,
    _split_opts,
    _Stream,
)

_GREP_VALUE_OPTS = {"-e", "-f", "-A", "-B", "-C", "-m", "--max-count", "--include", "--exclude",
                    "--exclude-dir", "--context", "--after-context", "--before-context",
                    "--regexp", "--file", "--color", "--colour", "-d", "-D", "--label", "-g",
                    "--glob", "-t", "--type", "-T", "--type-not", "-M", "--max-columns",
                    "-j", "--threads", "--sort", "--sortr", "-E", "--encoding"}


_GREP_CONTEXT_OPTS = ("-A", "-B", "-C", "-NUM", "--context", "--after-context",
                      "--before-context")
_GREP_REWRITING_OPTS = ("-o", "--only-matching", "-b", "--byte-offset", "--column",
                        "--vimgrep", "--initial-tab", "--json", "-Z", "--null", "--null-data",
                        "-z", "--passthru", "--passthrough")


def _grep_text(name: str, opts: dict[str, str]) -> str | None:
    """How grep's printed lines relate to the file (``_TEXT_MODES``), None if it rewrites them."""
    if any(k in opts for k in _GREP_REWRITING_OPTS) or (name == "grep" and "-T" in opts) \
            or (name == "rg" and ("-r" in opts or "--replace" in opts)) \
            or opts.get("--color", opts.get("--colour", "")) in ("always", "force"):
        return None
    return "groups" if any(k in opts for k in _GREP_CONTEXT_OPTS) else "lines"


_POSIX_CLASSES = {"[:space:]": r"\s", "[:blank:]": r" \t", "[:digit:]": r"0-9",
                  "[:alpha:]": r"a-zA-Z", "[:alnum:]": r"a-zA-Z0-9", "[:upper:]": r"A-Z",
                  "[:lower:]": r"a-z", "[:xdigit:]": r"0-9A-Fa-f", "[:word:]": r"\w"}


def _grep_hit(name: str, opts: dict[str, str], patterns: list[str]
              ) -> Callable[[str], bool] | None:
    """Whether a printed line is a hit of this grep, as far as Python's ``re`` can say.

    Basic regular expressions (grep's default) are translated to Python's syntax (``\\|`` is
    alternation, a bare ``|`` or ``(`` is literal); a pattern that does not translate gives
    None: no test, the caller keeps its conservative reading.
    """
    if not patterns or any(_DYNAMIC in p for p in patterns):
        return None
    fixed = any(k in opts for k in ("-F", "--fixed-strings"))
    extended = name == "rg" or any(k in opts for k in ("-E", "--extended-regexp", "-P",
                                                       "--perl-regexp"))
    parts = []
    for pat in patterns:
        if fixed:
            parts.append(re.escape(pat))
            continue
        for posix, py in _POSIX_CLASSES.items():
            pat = pat.replace(posix, py)
        if "[:" in pat:
            return None
        parts.append(pat if extended else _bre_to_python(pat))
    body = "|".join(f"(?:{p})" for p in parts)
    if "-w" in opts or "--word-regexp" in opts:
        body = rf"(?<!\w)(?:{body})(?!\w)"
    if "-x" in opts or "--line-regexp" in opts:
        body = rf"^(?:{body})$"
    try:
        rx = re.compile(body, re.I if any(k in opts for k in ("-i", "--ignore-case")) else 0)
    except re.error:
        return None
    invert = "-v" in opts or "--invert-match" in opts
    return lambda text: (rx.search(text) is None) == invert


def _bre_to_python(pat: str) -> str:
    """A POSIX basic regular expression in Python's syntax."""
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if c == "\\" and i + 1 < len(pat):
            nxt = pat[i + 1]
            out.append(nxt if nxt in "|(){}+?" else c + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "|(){}+?" else c)
        i += 1
    return "".join(out)


def _grep_stage(name: str, args: list[str], stdin: _Stream | None, ctx: _Ctx,
                raw: dict[str, str]) -> _Stream:
    """``grep``/``egrep``/``rg``/``git grep``: filter stdin or search files, maybe with numbers."""
    value_opts = set(_GREP_VALUE_OPTS)
    if name != "rg":
        value_opts.discard("-E")  # grep -E is a flag; rg -E is an encoding
        value_opts -= {"-t", "-T", "-g", "-M", "-j"}
    opts, operands = _split_opts(args, value_opts)
    if any(k in opts for k in ("-l", "-L", "-c", "-q", "--files-with-matches", "--count",
                               "--quiet", "--silent", "--files-without-match", "--files")):
        return _Stream("none")
    patterns = [v for _, v in _opt_values(args, ("-e", "--regexp"))]
    if "-e" not in opts and "-f" not in opts and "--regexp" not in opts and "--file" not in opts:
        patterns = operands[:1]
        operands = operands[1:]  # the pattern
    numbered = ("-n" in opts or "--line-number" in opts) and "-N" not in opts \
        and "--no-line-number" not in opts
    recursive = name in ("rg", "git grep") or any(k in opts for k in ("-r", "-R", "--recursive",
                                                                       "--dereference-recursive"))
    text = _grep_text(name, opts)
    # by content alone: without context lines, and all matches unless -m stops early
    limited = any(k in opts for k in ("-m", "--max-count"))
    by_content = text == "lines" and "-f" not in opts and "--file" not in opts

    def rule(src_rule: str | None) -> str | None:
        if not by_content:
            return None
        return _head_of(src_rule) if limited else src_rule

    if not operands and not recursive:
        if stdin is None:
            return _Stream("none")
        if not numbered:
            return _filtered(stdin, text, rule(_content_filter(stdin)))
        if stdin.style == "tab":
            return _Stream("gpos", stdin.segs, stdin.files, inner_tab=True)
        if stdin.style == "":
            return _Stream("gpos", stdin.segs, stdin.files)
        return _filtered(stdin)
    files = [ctx.path(f) for f in operands] or ([ctx.cwd] if ctx.cwd else ["."])
    for f, w in zip(files, operands, strict=False):
        raw[f] = w
    no_names = "-h" in opts or "--no-filename" in opts or ("-I" in opts and name == "rg")
    force_names = "-H" in opts or "--with-filename" in opts
    multi = force_names or (not no_names and (recursive or len(files) > 1))
    if not multi:
        if numbered:
            return _Stream("gpos", [_Seg(files[0], 1, None)], files[:1])
        return _Stream("files", [], files[:1], text=text, matches=rule("all"))
    # ``grep -r x file.py`` on a single regular file prints no names: decided from the output
    return _Stream("gfile" if numbered else "gname", [], files,
                   multi_grep_files=len(files) == 1 and not force_names, text=text,
                   matches=None if limited else rule("all"),  # (-m: the first of each file)
                   hit=None if "-f" in opts or "--file" in opts else _grep_hit(name, opts,
                                                                               patterns))
