"""The command model: which stream each pipeline stage prints.

A :class:`_Stream` is what a stage prints: segments of files (which lines, in which order) and a
style saying how the lines are prefixed (numbers, names, nothing); :class:`_Plan` is a
pipeline's stream with what it needs to read the observation; :class:`_Ctx` the working
directory and what the command string edited so far. Here too are what every command family
shares: wrappers (``sudo``, ``timeout``, ``VAR=x``), command kinds, option splitting, and the
operations on streams (taking line ranges, filtering).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .lexer import _DYNAMIC, _plain

_WRAPPERS = {"sudo", "env", "nohup", "command", "exec", "builtin", "nice", "stdbuf", "unbuffer"}


def _strip_wrappers(argv: list[str]) -> list[str]:
    """Drop ``VAR=x`` prefixes and wrappers such as ``timeout 30`` or ``env``."""
    i = 0
    while i < len(argv):
        a = argv[i].replace(_DYNAMIC, "")
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", a):
            i += 1
        elif a in _WRAPPERS:
            i += 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 1
        elif a == "timeout":
            i += 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 1
            i += 1  # the duration
        else:
            break
    return argv[i:]


def _kind(argv: list[str]) -> str:
    argv = _plain(argv)
    name = posixpath.basename(argv[0]) if argv else ""
    if re.fullmatch(r"python[\d.]*", name):
        return "python"
    if name == "git":
        values = _git_opt_values(argv)
        sub = next((a for a in argv[1:] if not a.startswith("-") and a not in values), "")
        return f"git {sub}".strip()
    return name


def _git_opt_values(argv: list[str]) -> set[str]:
    vals = set()
    for i, a in enumerate(argv[:-1]):
        if a in ("-C", "-c", "--git-dir", "--work-tree"):
            vals.add(argv[i + 1])
    return vals


@dataclass(slots=True)
class _Seg:
    """Consecutive lines ``start..end`` of ``file``, one output line per file line."""

    file: str
    start: int
    end: int | None

    @property
    def length(self) -> int | None:
        return None if self.end is None else max(0, self.end - self.start + 1)


@dataclass(slots=True)
class _Stream:
    """What flows through a pipeline stage, as far as it maps back to files.

    ``style`` says how line numbers can be read from the printed text: ``""`` (by position through
    ``segs``), ``"tab"`` (``   N\\t`` of ``nl -ba``/``cat -n``), ``"gpos"`` (``N:`` of ``grep -n``
    on one stream: stream positions), ``"gfile"`` (``file:N:``), ``"gname"`` (``file:`` without
    numbers), ``"headers"`` (``==> f <==`` sections), ``"files"`` (content without positions),
    ``"bytes"`` or ``"none"`` (nothing that maps to files).
    """

    style: str = "none"
    segs: list[_Seg] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    inner_tab: bool = False  # gpos prefixes on top of tab-numbered lines
    whole: bool = False  # the segs are whole files (credit them even if empty output)
    header_op: tuple[str, int] | None = None
    multi_grep_files: bool = False
    #: How the printed lines of a ``files``/``gname`` stream are the file's own lines (see
    #: ``_TEXT_MODES``); None when a stage changed them (``cut``, ``sort``, ``grep -o``).
    text: str | None = None
    #: When the lines were selected by their content alone (``grep`` without context), which
    #: of a file's matching lines were printed: ``all``, the ``first`` ones (a ``head`` after
    #: the filter) or the ``last`` ones (``View.matches``).
    matches: str | None = None
    #: The test a line of a ``gname`` grep satisfies (its pattern), to tell its lines from
    #: another command's where the outputs cannot be split by position.
    hit: Callable[[str], bool] | None = None


@dataclass(slots=True)
class _Plan:
    """One pipeline: its final stream, its files as written (for error lines) and output text."""

    kind: str  # "silent", "echo", "view", "other"
    stream: _Stream = field(default_factory=_Stream)
    echo: str | None = None
    raw_files: dict[str, str] = field(default_factory=dict)  # joined path -> as written
    cwd: str | None = None  # where relative paths printed by the command are relative to
    after_edit: set[str] = field(default_factory=set)
    lines: list[str] = field(default_factory=list)
    cut: bool = False
    ambiguous: bool = False
    tail: list[str] = field(default_factory=list)  # the lines after a middle truncation
    #: where the middle truncation fell: ``_ELIDED`` inside a line (the first line of ``tail``
    #: and the line before the cut were printed in part), ``_ELIDED_LINES`` between lines
    elision: str = ""


def _join(cwd: str | None, path: str) -> str:
    if not path or cwd is None or path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _split_opts(args: list[str], with_value: set[str]) -> tuple[dict[str, str], list[str]]:
    """Split getopt-style options from operands; values of ``with_value`` options are kept."""
    opts: dict[str, str] = {}
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            operands.extend(args[i + 1:])
            break
        if a.startswith("--") and len(a) > 2:
            key, eq, val = a.partition("=")
            if not eq and key in with_value and i + 1 < len(args):
                val = args[i + 1]
                i += 1
            opts[key] = val
        elif a.startswith("-") and len(a) > 1 and not re.fullmatch(r"-\d+", a):
            j = 1
            while j < len(a):
                ch = "-" + a[j]
                if ch in with_value:
                    val = a[j + 1:]
                    if not val and i + 1 < len(args):
                        val = args[i + 1]
                        i += 1
                    opts[ch] = val
                    break
                opts[ch] = ""
                j += 1
        elif re.fullmatch(r"-\d+", a):
            opts["-NUM"] = a[1:]
        else:
            operands.append(a)
        i += 1
    return opts, operands


def _file_stream(files: list[str], style: str = "") -> _Stream:
    return _Stream(style=style, segs=[_Seg(f, 1, None) for f in files], files=list(files),
                   whole=True)


# styles whose printed lines say where they come from (or that map to nothing): a filter that only
# selects lines keeps them as they are
_SELF_DESCRIBING = ("tab", "gpos", "gfile", "gname", "files", "bytes", "none", "diff")
_DIFF_SUMMARIES = ("--stat", "--name-only", "--name-status", "--numstat", "--shortstat",
                   "--summary", "--quiet", "--exit-code", "--no-patch", "-s", "--raw",
                   "--dirstat", "--check")
_DIFF_LINE_RE = re.compile(r"^(?:[ +\-@\\]|diff |index |new file|deleted file|similarity |"
                           r"rename |old mode|new mode|Binary files)")
_DIFF_FILE_HEADER_RE = re.compile(r"^diff --git a/(.+?) b/(.+)$")


def _take(stream: _Stream, first: int, last: int | None) -> _Stream:
    """Stream lines ``first..last`` (1-based positions, ``last=None`` to the end)."""
    if stream.style in _SELF_DESCRIBING:
        return _keep(stream)
    if stream.style != "":
        return _Stream("files" if len(stream.files) == 1 else "none", [], stream.files)
    out: list[_Seg] = []
    pos = 1
    for seg in stream.segs:
        length = seg.length
        seg_last = None if length is None else pos + length - 1
        lo = max(first, pos)
        hi = seg_last if last is None else (last if seg_last is None else min(last, seg_last))
        if hi is None or lo <= hi:
            out.append(_Seg(seg.file, seg.start + lo - pos,
                            None if hi is None else seg.start + hi - pos))
        if seg_last is None:
            break
        pos = seg_last + 1
        if last is not None and pos > last:
            break
    return _Stream("", out, stream.files)


def _take_ranges(stream: _Stream, ranges: list[tuple[int, int | None]]) -> _Stream:
    if not ranges:
        return _Stream("none")
    if stream.style != "":
        return _take(stream, 1, None)
    segs: list[_Seg] = []
    for a, b in sorted(ranges, key=lambda r: r[0]):
        segs.extend(_take(stream, a, b).segs)
    return _Stream("", segs, stream.files)


# How printed lines relate to the file when their positions are unknown, weakest first:
# ``lines`` (some of its lines, verbatim, in file order), ``groups`` (runs of consecutive lines
# separated by ``--``, as grep prints context) and ``block`` (one run of consecutive lines).
_TEXT_MODES = ("lines", "groups", "block")


def _weaker(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return None
    return a if _TEXT_MODES.index(a) <= _TEXT_MODES.index(b) else b


def _filtered(stream: _Stream, text: str | None = None, matches: str | None = None
              ) -> _Stream:
    """Some lines of the stream, positions unknown: numbered styles survive, raw ones do not.

    ``text`` says how the lines the filter keeps relate to its input (``_TEXT_MODES``; None: it
    changes them), so that printed lines can later be placed in the file by their content;
    ``matches`` which of the matching lines it keeps, for a filter by content alone.
    """
    if stream.style in _SELF_DESCRIBING:
        return replace(_keep(stream), text=_weaker(stream.text, text), matches=matches)
    return _Stream("files", [], stream.files, text=text if stream.style == "" else None,
                   matches=matches if stream.style == "" else None)


def _keep(stream: _Stream) -> _Stream:
    """The same stream after a line filter: printed numbers (and their mapping) still hold."""
    return replace(stream, whole=False, matches=None)


def _content_filter(src: _Stream) -> str | None:
    """Which matching lines of the file a filter by content alone prints, reading ``src``.

    Every line equal to a printed line matches too, so a whole file gives ``all`` of them, its
    first lines (``head -n 50 f | grep x``) the ``first`` ones, its last lines the ``last``.
    """
    if src.style in ("files", "gname"):
        return src.matches
    if src.style != "" or len(src.segs) != 1:
        return None
    seg = src.segs[0]
    if seg.start == 1:
        return "all" if seg.end is None else "first"
    return "last" if seg.end is None else None


def _head_of(matches: str | None) -> str | None:
    """The rule after keeping the first lines of a stream (``head``, an output cut short)."""
    return "first" if matches in ("all", "first") else None


def _tail_of(matches: str | None) -> str | None:
    return "last" if matches in ("all", "last") else None


@dataclass(slots=True)
class _Ctx:
    cwd: str | None
    edited: set[str]
    #: Script files written so far in the trajectory (path -> text), kept by the caller across
    #: commands so that ``python fix.py`` is known to edit what ``fix.py`` writes.
    scripts: dict[str, str] | None = None

    def path(self, p: str) -> str:
        return _join(self.cwd, p)


def _opt_values(args: list[str], names: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    i = 0
    while i < len(args):
        a = args[i]
        for nm in names:
            if a == nm and i + 1 < len(args):
                out.append((nm, args[i + 1]))
                i += 1
                break
            if nm.startswith("--") and a.startswith(nm + "="):
                out.append((nm, a[len(nm) + 1:]))
                break
            if not nm.startswith("--") and a.startswith(nm) and len(a) > len(nm):
                out.append((nm, a[len(nm):]))
                break
        i += 1
    return out


def _bounded_length(stream: _Stream) -> int | None:
    total = 0
    for seg in stream.segs:
        if seg.length is None:
            return None
        total += seg.length
    return total
