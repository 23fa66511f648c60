"""Viewing commands: what ``cat``/``less``/``bat``, ``nl``, ``head``/``tail``, ``sed`` and ``awk``
print, and the one dispatch from a command name to the stream it prints (:func:`_stage`).

Search commands are handed to :mod:`.search` (``grep`` and friends, ``git grep``, ``xargs grep``,
``find -exec grep {} +``); filters (``sort``, ``cut``, ``tr``, ...) keep the lines but not their
positions; ``python -c`` that prints a file reads it whole.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace

from .lexer import _DYNAMIC
from .pipeline import (
    _DIFF_SUMMARIES,
    _bounded_length,
    _Ctx,
    _file_stream,
    _filtered,
    _git_opt_values,
    _head_of,
    _kind,
    _opt_values,
    _split_opts,
    _Stream,
    _tail_of,
    _take,
    _take_ranges,
)
from .search import _grep_stage

_SED_ADDR = r"(\d+|\$|/(?:[^/\\]|\\.)*/)"
_SED_CMD_RE = re.compile(
    rf"^\s*{_SED_ADDR}?\s*(?:,\s*(\+?\d+|~\d+|\$|/(?:[^/\\]|\\.)*/))?\s*(!?)\s*(.*)$", re.S)


def _sed_script_ranges(scripts: list[str], quiet: bool) -> tuple[list[tuple[int, int | None]],
                                                                 str]:
    """Line ranges a ``sed`` script prints, and how: ``ranges``, ``all``, ``some`` or ``none``.

    With ``-n`` only ``p`` commands print; without it every line is printed (``Nq`` stops).
    """
    ranges: list[tuple[int, int | None]] = []
    regex = False
    other = False
    quit_at: int | None = None
    for script in scripts:
        for cmd in _sed_commands(script):
            m = _SED_CMD_RE.match(cmd)
            if not m:
                other = True
                continue
            a, b, neg, rest = m.groups()
            rest = rest.strip()
            body = rest[1:-1].strip() if rest.startswith("{") and rest.endswith("}") else rest
            body_cmds = [c.strip() for c in body.split(";") if c.strip()]
            prints = "p" in body_cmds
            if prints and any(c != "p" for c in body_cmds):
                other = True  # e.g. "=;p" interleaves line numbers: positions no longer map
                continue
            if rest.startswith("q") or rest.startswith("Q"):
                if a and a.isdigit():
                    quit_at = int(a) - (1 if rest.startswith("Q") else 0)
                continue
            if rest.startswith("s") or rest.startswith("y"):
                if quiet and rest.rstrip().endswith("p"):
                    regex = True
                continue
            if not prints:
                if rest.startswith("d") or rest.startswith("=") or not rest:
                    other = other or rest.startswith("d")
                else:
                    other = True
                continue
            if neg or a is None:
                if a is None:
                    ranges.append((1, None))
                else:
                    regex = True
                continue
            if a.startswith("/") or (b is not None and (b.startswith("/") or b.startswith("~"))):
                regex = True
                continue
            if a == "$":
                regex = True
                continue
            start = int(a)
            if b is None:
                ranges.append((start, start))
            elif b == "$":
                ranges.append((start, None))
            elif b.startswith("+"):
                ranges.append((start, start + int(b[1:])))
            else:
                ranges.append((start, max(start, int(b))))
    if not quiet:
        if other or regex or ranges:
            return [], "some"
        return [(1, quit_at)], "all"
    if quit_at is not None:
        ranges = [(a, b if b is not None and b <= quit_at else quit_at) for a, b in ranges
                  if a <= quit_at]
    if regex or other:
        return ranges, "some"
    return ranges, "ranges" if ranges else "none"


_SED_ADDR_ONLY = re.compile(r"[\d$,+~\s!]*(?:/(?:[^/\\]|\\.)*/[\d$,+~\s!]*)*")


def _sed_commands(script: str) -> list[str]:
    """Split a sed script on ``;`` and newlines outside ``{}``, regexes and ``s///`` commands."""
    out: list[str] = []
    buf: list[str] = []
    depth = 0
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c == "\\":
            buf.append(script[i:i + 2])
            i += 2
            continue
        current = re.split(r"[{;]", "".join(buf))[-1]
        if c == "/" and _SED_ADDR_ONLY.fullmatch(current):
            j = i + 1
            while j < n and script[j] != "/":
                j += 2 if script[j] == "\\" else 1
            buf.append(script[i:j + 1])
            i = j + 1
            continue
        if c in "sy" and i + 1 < n and _SED_ADDR_ONLY.fullmatch(current):
            delim = script[i + 1]
            j, seen = i + 2, 0
            while j < n and seen < 2:
                if script[j] == "\\":
                    j += 2
                    continue
                seen += script[j] == delim
                j += 1
            while j < n and script[j] not in ";\n}":
                j += 1
            buf.append(script[i:j])
            i = j
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if depth <= 0 and c in ";\n":
            out.append("".join(buf))
            buf = []
            depth = 0
        else:
            buf.append(c)
        i += 1
    out.append("".join(buf))
    return [c.strip() for c in out if c.strip()]


_AWK_NR_RE = re.compile(r"\bF?NR\s*(==|>=|<=|>|<)\s*(\d+)")


def _awk_ranges(prog: str) -> list[tuple[int, int | None]] | None:
    """NR ranges of ``awk 'NR>=a && NR<=b'``-style programs; None when not a pure NR filter."""
    m = re.match(r"^\s*F?NR\s*==\s*(\d+)\s*,\s*F?NR\s*==\s*(\d+)\s*(\{.*\})?\s*$", prog, re.S)
    if m:
        return [(int(m.group(1)), int(m.group(2)))]
    cond = prog.split("{", 1)[0]
    if "||" in cond or not _AWK_NR_RE.search(cond):
        return None
    if re.sub(r"F?NR\s*(==|>=|<=|>|<)\s*\d+|&&|\s|\(|\)", "", cond):
        return None
    lo, hi = 1, None
    for op, num in _AWK_NR_RE.findall(cond):
        v = int(num)
        if op == "==":
            lo, hi = max(lo, v), v if hi is None else min(hi, v)
        elif op == ">=":
            lo = max(lo, v)
        elif op == ">":
            lo = max(lo, v + 1)
        elif op == "<=":
            hi = v if hi is None else min(hi, v)
        else:
            hi = v - 1 if hi is None else min(hi, v - 1)
    if hi is not None and hi < lo:
        return []
    return [(lo, hi)]


def _sed_only_selects(scripts: list[str], quiet: bool) -> bool:
    """A sed script that prints some of its input lines unchanged, each at most once.

    ``/a/,/b/p`` under ``-n``, ``/re/d`` without it: the printed lines are the file's own, in
    order. Substitutions, ``=``, ``a``/``i``/``c`` text or a ``p`` without ``-n`` (printing a
    line twice) rewrite the stream.
    """
    for script in scripts:
        for cmd in _sed_commands(script):
            m = _SED_CMD_RE.match(cmd)
            if not m:
                return False
            rest = m.group(4).strip()
            body = rest[1:-1].strip() if rest.startswith("{") and rest.endswith("}") else rest
            for c in (c.strip() for c in body.split(";")):
                if (c == "p" and quiet) or re.fullmatch(r"d|[qQ]\s*\d*", c):
                    continue
                return False
    return True


def _stage(argv: list[str], stdin: _Stream | None, ctx: _Ctx, raw: dict[str, str]) -> _Stream:
    """The stream a command prints, given what it reads on stdin (None: a terminal/heredoc).

    Files named by an expansion (``cat $F``, ``head *.py``) are unknown: nothing is credited to
    them, except where grep prints the real names in front of its lines.
    """
    stream = _stage_of(argv, stdin, ctx, raw)
    if not any(_DYNAMIC in f for f in stream.files):
        return stream
    known = [f for f in stream.files if _DYNAMIC not in f]
    # (a stream from stdin never names unknown files: each stage is cleaned like this one)
    if stream.style in ("gfile", "gpos"):
        return _Stream("gfile", [], known)  # a glob matching several files: names are printed
    if stream.style in ("gname", "files") and _kind(argv) in ("grep", "egrep", "fgrep", "rg",
                                                              "ag", "git grep"):
        return _Stream("gname", [], known, text=stream.text, matches=stream.matches,
                       hit=stream.hit)
    return _Stream("none")


def _stage_of(argv: list[str], stdin: _Stream | None, ctx: _Ctx, raw: dict[str, str]) -> _Stream:
    name = posixpath.basename(argv[0])
    args = argv[1:]
    if name in ("cat", "less", "more", "bat", "batcat"):
        opts, files = _split_opts(args, {"--style", "-r", "--line-range", "-l", "--language"})
        files = [f for f in files if f != "-" and not (name in ("less", "more")
                                                       and f.startswith("+"))]
        if not files:
            return stdin if stdin is not None else _Stream("none")
        paths = [ctx.path(f) for f in files]
        raw.update(zip(paths, files, strict=True))
        numbered = name == "cat" and ("-n" in opts or "--number" in opts)
        if numbered and len(paths) == 1:
            return _file_stream(paths, "tab")
        if numbered or "-b" in opts or "-s" in opts:
            # ``-s`` only squeezes blank lines: what it prints is still the file's lines
            squeezed = not numbered and "-b" not in opts and len(paths) == 1
            return _Stream("files", [], paths, text="lines" if squeezed else None)
        return _file_stream(paths)
    if name == "nl":
        opts, files = _split_opts(args, {"-b", "-w", "-s", "-v", "-i", "-n", "--body-numbering",
                                         "--number-width", "--number-separator"})
        all_lines = opts.get("-b", opts.get("--body-numbering", "t")) == "a"
        src = stdin
        if files:
            paths = [ctx.path(f) for f in files[:1]]
            raw[paths[0]] = files[0]
            src = _file_stream(paths)
        if src is None:
            return _Stream("none")
        if src.style == "" and len(src.segs) == 1 and src.segs[0].start == 1 and all_lines \
                and opts.get("-v", "1") == "1" and opts.get("-i", "1") == "1" \
                and opts.get("-s", "\t") == "\t" and "--number-separator" not in opts:
            return _Stream("tab", src.segs, src.files, whole=src.whole)
        if src.style == "":
            return _Stream("", src.segs, src.files, whole=src.whole)  # positions still map
        return _filtered(src)
    if name in ("head", "tail"):
        opts, files = _split_opts(args, {"-n", "-c", "--lines", "--bytes"})
        n_spec = opts.get("-n", opts.get("--lines", opts.get("-NUM", "10")))
        if files:
            paths = [ctx.path(f) for f in files]
            raw.update(zip(paths, files, strict=True))
            if len(paths) > 1 and "-q" not in opts:
                if "-c" in opts or "--bytes" in opts:
                    return _Stream("none")
                m = re.fullmatch(r"([+-]?)(\d+)", n_spec.strip())
                if not m:
                    return _Stream("none")
                op = name + ("+" if m.group(1) == "+" else "-" if m.group(1) == "-" else "")
                return _Stream("headers", [], paths, header_op=(op, int(m.group(2))))
            src = _file_stream(paths[:1]) if len(paths) == 1 else _Stream("none")
        elif stdin is None:
            return _Stream("none")
        else:
            src = stdin
        if "-c" in opts or "--bytes" in opts:
            return _Stream("bytes", [], src.files if src.style in ("", "tab") else [])
        m = re.fullmatch(r"([+-]?)(\d+)", n_spec.strip())
        if not m:
            return _filtered(src)
        sign, k = m.group(1), int(m.group(2))
        if name == "head":
            if sign == "-":
                return _filtered(src, "block")
            return _take(src, 1, k) if src.style == "" else _filtered(src, "block",
                                                                      _head_of(src.matches))
        if sign == "+":
            return _take(src, max(k, 1), None) if src.style == "" else _filtered(src, "block")
        total = _bounded_length(src)
        if src.style == "" and total is not None:
            return _take(src, max(1, total - k + 1), None)
        return _filtered(src, "block", _tail_of(src.matches) if src.style != "" else None)
    if name == "sed":
        opts, rest = _split_opts(args, {"-e", "--expression", "-f", "--file", "-l"})
        if any(k.startswith("-i") or k == "--in-place" for k in opts) or "-i" in opts:
            return _Stream("none")
        scripts = [v for k, v in _opt_values(args, ("-e", "--expression"))]
        if not scripts and rest:
            scripts, rest = [rest[0]], rest[1:]
        quiet = "-n" in opts or "--quiet" in opts or "--silent" in opts
        if rest:
            paths = [ctx.path(f) for f in rest]
            raw.update(zip(paths, rest, strict=True))
            src = _file_stream(paths)
        elif stdin is None:
            return _Stream("none")
        else:
            src = stdin
        ranges, how = _sed_script_ranges(scripts, quiet)
        if how == "none":
            return _Stream("none")
        if how == "all":
            return _take_ranges(src, ranges)
        if how == "ranges":
            out = _take_ranges(src, ranges)
            return out
        return _filtered(src, "lines" if _sed_only_selects(scripts, quiet) else None)
    if name in ("awk", "gawk", "mawk"):
        opts, rest = _split_opts(args, {"-F", "-v", "-f"})
        if not rest or "-f" in opts:
            return _Stream("none")
        prog, files = rest[0], rest[1:]
        if files:
            paths = [ctx.path(f) for f in files]
            raw.update(zip(paths, files, strict=True))
            src = _file_stream(paths)
        elif stdin is None:
            return _Stream("none")
        else:
            src = stdin
        ranges = _awk_ranges(prog)
        body = prog.split("{", 1)[1] if "{" in prog else ""
        prints_lines = not body or re.fullmatch(r"\s*print(\s+\$0)?\s*;?\s*}\s*", body)
        if ranges is not None and prints_lines:
            return _take_ranges(src, ranges) if src.style == "" else _filtered(src, "block")
        selects = prints_lines and not re.search(r"[^=!<>]=[^=~]|\bprintf\b|\bgetline\b",
                                                  prog.split("{", 1)[0])
        return _filtered(src, "lines" if selects else None)
    if name in ("grep", "egrep", "fgrep", "rg", "ag"):
        return _grep_stage("rg" if name in ("rg", "ag") else "grep", args, stdin, ctx, raw)
    if name == "git":
        sub_i = next((i for i, a in enumerate(args) if not a.startswith("-")
                      and a not in _git_opt_values(argv)), None)
        if sub_i is not None and args[sub_i] == "grep":  # (-C is applied by the caller)
            return _grep_stage("git grep", args[sub_i + 1:], None, ctx, raw)
        if sub_i is not None and args[sub_i] == "diff" and not any(
                a.startswith(_DIFF_SUMMARIES) for a in args[sub_i + 1:]):
            # the agent's changes against the base commit: files it edited, shown as a diff
            return _Stream("diff")
        if sub_i is not None and args[sub_i:sub_i + 2] == ["stash", "show"] and any(
                a in ("-p", "-u", "--patch") for a in args[sub_i + 2:]) and not any(
                a.startswith(_DIFF_SUMMARIES) for a in args[sub_i + 2:]):
            # changes of the working tree put aside, shown as ``git diff`` shows them
            return _Stream("diff")
        return _Stream("none")
    if name == "xargs":
        i = 0
        while i < len(args) and args[i].startswith("-"):  # xargs' own options end at the command
            i += 2 if args[i] in ("-I", "-n", "-P", "-L", "-d", "-a", "-s", "-E") else 1
        rest = args[i:]
        if rest and posixpath.basename(rest[0]) in ("grep", "egrep", "rg"):
            # the files come from stdin, several at a time: names are read from the output
            inner = _grep_stage("grep", ["-r", *rest[1:]], None, ctx, raw)
            if inner.style in ("gfile", "gname") and "-h" not in rest:
                return replace(inner, files=[], multi_grep_files=False)
        return _Stream("none")
    if name == "find" and "-exec" in args:
        cmd = args[args.index("-exec") + 1:]
        if cmd and cmd[-1] == "+" and posixpath.basename(cmd[0]) in ("grep", "egrep", "rg"):
            # ``{} +`` passes many files at once, so grep names them (``{} \;`` does not)
            inner = _grep_stage("grep", ["-r", *[a for a in cmd[1:-1] if a != "{}"]], None, ctx,
                                raw)
            if inner.style in ("gfile", "gname") and "-h" not in cmd:
                return replace(inner, files=[], multi_grep_files=False)
        return _Stream("none")
    if name in ("tee",):
        return stdin if stdin is not None else _Stream("none")
    if name in ("sort", "uniq", "cut", "tr", "column", "fold", "expand", "rev", "fmt"):
        return _filtered(stdin) if stdin is not None else _Stream("none")
    if re.fullmatch(r"python[\d.]*", name):
        opts, rest = _split_opts(args, {"-c", "-m", "-W", "-X"})
        code = opts.get("-c")
        if code:
            m = re.fullmatch(
                r"\s*print\(\s*open\(\s*(['\"])([^'\"]+)\1\s*(?:,\s*['\"]r?['\"]\s*)?\)"
                r"\.read\(\)\s*(?:,\s*end\s*=\s*['\"]['\"]\s*)?\)\s*;?\s*", code)
            if m:
                path = ctx.path(m.group(2))
                raw[path] = m.group(2)
                return _file_stream([path])
            reads = re.findall(r"open\(\s*(['\"])([^'\"]+)\1\s*(?:,\s*['\"]r[bt]?['\"])?\s*\)"
                               r"(?:\.read|\.readlines)\(", code)
            if len(reads) == 1 and "print" in code:
                path = ctx.path(reads[0][1])
                raw[path] = reads[0][1]
                return _Stream("files", [], [path])
        return _Stream("none")
    return _Stream("none")
