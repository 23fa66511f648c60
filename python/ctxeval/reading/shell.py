"""Read what a shell command showed: the views, edits and command kinds of one agent step.

Shell-based agents (mini-swe-agent, OpenHands ``execute_bash``, Codex, Claude Code ``Bash``) run
arbitrary bash. The command is evidence, the observation is the truth: ``read_shell`` parses the
command into pipelines, models what each pipeline prints (which lines of which file, in which
order, with which line-number prefixes) and then reads the observation to credit only what was
really printed. Where the output prints line numbers they win over what the command implies.

Paths stay as the command wrote them, joined with the working directory when one is known (``cd``
moves it for the later commands of the same string; ``bash -c`` and ``( … )`` run in a child).
Files named by an expansion (``$F``, ``*.py``, ``~``) are never credited under that name. A view of
a file the same command edited before (``sed -i … f && cat f``) is ``post_edit``.

Lines printed without their positions are kept as evidence, not credited: a filtered stream
without numbers (``grep x f`` without ``-n``, ``grep -r x dir``, ``sed -n '/re/,/re/p'``,
``tail -n N f``) gives a file-level view (``start_line=None``) per file whose ``text`` holds the
printed lines, and so does the tail of an output truncated in the middle (mini-swe-agent's
``<output_head>``/``<output_tail>``, OpenHands' and Codex's marker lines) unless its lines carry
their own numbers. With the source at hand (``convert --repos``, ``evaluate``),
:mod:`ctxeval.reading.placing` turns the lines that fit in one place only into line views. Text is
kept only where every printed line is a file line unchanged and in file order (``grep -o``, ``cut``,
``sort``, ``sed s///p`` keep none).

Known limits (deliberately conservative, never crediting what may not have been shown):

- a filtered stream of several files without names in front of its lines (``cat a b | grep x``)
  gives nothing;
- a line cut by truncation (the last of ``<output_head>``, the first of ``<output_tail>``, the
  last before a timeout) counts as shown: part of it was. Kept as text, the lines on either side
  of a cut inside a line are marked as printed in part (``View.partial``) and placed by that
  part; the last line of an output stopped early is left out of the text (its end is unknown);
  a numbered line printed in part counts only when its number was printed whole;
- several unnumbered outputs in one command (``cat a; cat b``) cannot be split without the
  source: each is credited whole when the output is complete and the command succeeded, else at
  file level.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..linesets import line_runs
from ..model import View

__all__ = ["ShellReading", "read_shell", "split_commands"]


@dataclass(slots=True)
class ShellReading:
    """What one shell command displayed, modified and used."""

    views: list[View] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Parsing: a small bash tokenizer and parser (words, quotes, operators, redirections, heredocs,
# subshells and command substitutions). It never raises: malformed input ends the current word.
# ---------------------------------------------------------------------------------------------

_DYNAMIC = "\x00"  # marks a word the shell expands (variables, globs, substitutions)
_EXPANSION_RE = re.compile(r"\$[A-Za-z_{(0-9@*#?$!-]|`")
_REDIR_RE = re.compile(r"(\d*|&)(>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)")
_OPERATORS = ("&&", "||", ";;", "|&", "|", ";", "&", "(", ")")
_RESERVED = {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
             "time", "function", "esac"}


@dataclass(slots=True)
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    body: str = ""


@dataclass(slots=True)
class _Simple:
    """One simple command: its words, its redirections and its heredoc body if any."""

    argv: list[str] = field(default_factory=list)
    redirs: list[tuple[str, str]] = field(default_factory=list)
    heredoc: _Heredoc | None = None
    herestring: str | None = None


@dataclass(slots=True)
class _Group:
    """A ``( ... )`` subshell: its own list of pipelines."""

    body: list[_Pipeline]


@dataclass(slots=True)
class _Pipeline:
    parts: list[_Simple | _Group] = field(default_factory=list)


@dataclass(slots=True)
class _Tok:
    kind: str  # "word", "op", "redir", "nl"
    text: str = ""
    heredoc: _Heredoc | None = None


class _Lexer:
    """Turn bash text into tokens; command substitutions are parsed recursively into ``subs``."""

    def __init__(self, text: str, subs: list[list[_Pipeline]]) -> None:
        self.s = text
        self.i = 0
        self.subs = subs
        self.pending: list[_Heredoc] = []

    def tokens(self) -> list[_Tok]:
        out: list[_Tok] = []
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c == "\n":
                self.i += 1
                self._read_heredocs()
                out.append(_Tok("nl"))
                continue
            if c in " \t\r":
                self.i += 1
                continue
            if c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if c == "#":
                while self.i < n and s[self.i] != "\n":
                    self.i += 1
                continue
            m = _REDIR_RE.match(s, self.i)
            if m and (m.group(1) == "" or m.group(1) == "&" or self._at_word_start()):
                self.i = m.end()
                op = m.group(0)
                if m.group(2) in ("<<", "<<-"):
                    word, _ = self._word()
                    doc = _Heredoc(word.replace(_DYNAMIC, ""), m.group(2) == "<<-")
                    self.pending.append(doc)
                    out.append(_Tok("redir", op, doc))
                else:
                    out.append(_Tok("redir", op))
                continue
            op = next((o for o in _OPERATORS if s.startswith(o, self.i)), None)
            if op is not None:
                self.i += len(op)
                out.append(_Tok("op", op))
                continue
            before = self.i
            word, _ = self._word()
            if self.i == before:  # cannot happen for valid input; never loop forever
                self.i += 1
                continue
            out.append(_Tok("word", word))
        return out

    def _at_word_start(self) -> bool:
        return self.i == 0 or self.s[self.i - 1] in " \t\r\n;&|()<>"

    def _word(self) -> tuple[str, bool]:
        """Read one word at ``self.i``; returns its unquoted value and whether it had quotes.

        A word whose value the shell computes (``$VAR``, ``$(…)``, unquoted globs, ``~``) comes
        back prefixed with :data:`_DYNAMIC`, so that no file is credited under a name it may not
        have had.
        """
        s, n = self.s, len(self.s)
        buf: list[str] = []
        quoted = False
        dynamic = False
        while self.i < n and s[self.i] in " \t\r":
            self.i += 1
        if self.i < n and s[self.i] == "~":
            dynamic = True
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n;&|()<>":
                break
            if (c in "$`" and _EXPANSION_RE.match(s, self.i)) or c in "*?[":
                dynamic = True
            if c == "\\":
                if self.i + 1 < n:
                    if s[self.i + 1] != "\n":
                        buf.append(s[self.i + 1])
                    self.i += 2
                else:
                    self.i += 1
                quoted = True
                continue
            if c == "'":
                end = s.find("'", self.i + 1)
                end = n if end < 0 else end
                buf.append(s[self.i + 1:end])
                self.i = end + 1
                quoted = True
                continue
            if c == '"':
                self.i += 1
                quoted = True
                while self.i < n and s[self.i] != '"':
                    d = s[self.i]
                    if d in "$`" and _EXPANSION_RE.match(s, self.i):
                        dynamic = True
                    if d == "\\" and self.i + 1 < n and s[self.i + 1] in '"\\$`\n':
                        if s[self.i + 1] != "\n":
                            buf.append(s[self.i + 1])
                        self.i += 2
                    elif d == "$" and s.startswith("$(", self.i):
                        buf.append(self._substitution())
                    elif d == "`":
                        buf.append(self._backtick())
                    else:
                        buf.append(d)
                        self.i += 1
                self.i += 1
                continue
            if c == "$" and s.startswith("$(", self.i):
                buf.append(self._substitution())
                continue
            if c == "$" and s.startswith("${", self.i):
                end = s.find("}", self.i)
                end = n - 1 if end < 0 else end
                buf.append(s[self.i:end + 1])
                self.i = end + 1
                continue
            if c == "`":
                buf.append(self._backtick())
                continue
            buf.append(c)
            self.i += 1
        word = "".join(buf)
        return (_DYNAMIC + word if dynamic else word), quoted

    def _substitution(self) -> str:
        """Skip ``$( ... )`` (or ``$(( ... ))``) at ``self.i``, parsing the inner command."""
        s, n = self.s, len(self.s)
        start = self.i
        arith = s.startswith("$((", self.i)
        self.i += 2
        depth = 1
        while self.i < n and depth:
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = s.find("'", self.i + 1)
                self.i = n if end < 0 else end + 1
                continue
            if c == '"':
                j = self.i + 1
                while j < n and s[j] != '"':
                    j += 2 if s[j] == "\\" else 1
                self.i = j + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            self.i += 1
        inner = s[start + 2:self.i - 1 if depth == 0 else self.i]
        if not arith:
            self.subs.append(_parse(inner, self.subs))
        return s[start:self.i]

    def _backtick(self) -> str:
        s = self.s
        end = s.find("`", self.i + 1)
        end = len(s) if end < 0 else end
        inner = s[self.i + 1:end]
        self.subs.append(_parse(inner, self.subs))
        text = s[self.i:end + 1]
        self.i = end + 1
        return text

    def _read_heredocs(self) -> None:
        """After a newline: read the bodies of the heredocs opened on the line just ended."""
        s = self.s
        for doc in self.pending:
            lines: list[str] = []
            while self.i <= len(s):
                end = s.find("\n", self.i)
                line = s[self.i:] if end < 0 else s[self.i:end]
                self.i = len(s) + 1 if end < 0 else end + 1
                check = line.lstrip("\t") if doc.strip_tabs else line
                if check.rstrip("\r") == doc.delimiter:
                    break
                lines.append(check if doc.strip_tabs else line)
            doc.body = "\n".join(lines)
            self.i = min(self.i, len(s))
        self.pending = []


def _parse(text: str, subs: list[list[_Pipeline]]) -> list[_Pipeline]:
    """Parse ``text`` into a list of pipelines (connectors are irrelevant to what was shown)."""
    lexer = _Lexer(text, subs)
    toks = lexer.tokens()
    if lexer.pending:  # heredoc without a following newline: empty body
        lexer.pending = []
    pos = 0

    def parse_list(stop_at_paren: bool) -> list[_Pipeline]:
        nonlocal pos
        result: list[_Pipeline] = []
        cur = _Pipeline()
        simple: _Simple | None = None
        while pos < len(toks):
            tok = toks[pos]
            pos += 1
            if tok.kind == "word":
                if simple is None:
                    if tok.text in _RESERVED:
                        continue
                    simple = _Simple()
                    cur.parts.append(simple)
                simple.argv.append(tok.text)
            elif tok.kind == "redir":
                if simple is None:
                    simple = _Simple()
                    cur.parts.append(simple)
                target = ""
                if tok.heredoc is not None:
                    simple.heredoc = tok.heredoc
                    target = tok.heredoc.delimiter
                elif pos < len(toks) and toks[pos].kind == "word":
                    target = toks[pos].text
                    pos += 1
                    if tok.text.endswith("&"):  # 2>&1, >&2: a descriptor, not a file
                        target = "&" + target
                if tok.text.endswith("<<<"):
                    simple.herestring = target
                simple.redirs.append((tok.text, target))
            elif tok.kind == "op" and tok.text == "(":
                group = _Group(parse_list(True))
                cur.parts.append(group)
                simple = None
            elif tok.kind == "op" and tok.text == ")":
                if stop_at_paren:
                    break
            elif tok.kind == "op" and tok.text in ("|", "|&"):
                simple = None
            else:  # && || ; & ;; newline
                if cur.parts:
                    result.append(cur)
                cur = _Pipeline()
                simple = None
        if cur.parts:
            result.append(cur)
        return result

    return parse_list(False)


def _simples(pipelines: list[_Pipeline]) -> list[_Simple]:
    out: list[_Simple] = []
    for pl in pipelines:
        for part in pl.parts:
            if isinstance(part, _Group):
                out.extend(_simples(part.body))
            else:
                out.append(part)
    return out


def split_commands(command: str) -> list[list[str]]:
    """The simple commands of ``command`` as argument lists, in order, command substitutions last.

    Quotes and escapes are removed, heredoc bodies skipped, subshells flattened; ``cd X`` stays a
    command of its own (use :func:`read_shell` for its effect on paths).
    """
    subs: list[list[_Pipeline]] = []
    try:
        main = _parse(command, subs)
    except RecursionError:
        return []
    out = [_plain(s.argv) for s in _simples(main) if s.argv]
    for sub in subs:
        out.extend(_plain(s.argv) for s in _simples(sub) if s.argv)
    return out


def _plain(argv: list[str]) -> list[str]:
    return [a.replace(_DYNAMIC, "") for a in argv]


# ---------------------------------------------------------------------------------------------
# Command model: which stream each pipeline prints.
# ---------------------------------------------------------------------------------------------

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


_GREP_VALUE_OPTS = {"-e", "-f", "-A", "-B", "-C", "-m", "--max-count", "--include", "--exclude",
                    "--exclude-dir", "--context", "--after-context", "--before-context",
                    "--regexp", "--file", "--color", "--colour", "-d", "-D", "--label", "-g",
                    "--glob", "-t", "--type", "-T", "--type-not", "-M", "--max-columns",
                    "-j", "--threads", "--sort", "--sortr", "-E", "--encoding"}


@dataclass(slots=True)
class _Ctx:
    cwd: str | None
    edited: set[str]
    #: Script files written so far in the trajectory (path -> text), kept by the caller across
    #: commands so that ``python fix.py`` is known to edit what ``fix.py`` writes.
    scripts: dict[str, str] | None = None

    def path(self, p: str) -> str:
        return _join(self.cwd, p)


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


# ---------------------------------------------------------------------------------------------
# Edits
# ---------------------------------------------------------------------------------------------

_PY_WRITE_RE = re.compile(
    r"open\(\s*(['\"])([^'\"]+)\1\s*,\s*(?:mode\s*=\s*)?['\"][^'\"]*[wax+][^'\"]*['\"]"
    r"|Path\(\s*(['\"])([^'\"]+)\3\s*\)\s*\.write_(?:text|bytes)\(")
_DIFF_FILE_RE = re.compile(r"^(?:\+\+\+ (?:b/)?(\S+)|diff --git a/\S+ b/(\S+))", re.M)


def _edits_of(simple: _Simple, argv: list[str], ctx: _Ctx, output: str) -> list[str]:
    """Files one simple command modifies (as written, joined with the working directory).

    Targets named by an expansion (``> $OUT``) are unknown and left out.
    """
    return [e for e in _edit_targets(simple, argv, ctx, output) if _DYNAMIC not in e]


def _edit_targets(simple: _Simple, argv: list[str], ctx: _Ctx, output: str) -> list[str]:
    out: list[str] = []
    for op, target in simple.redirs:
        # any descriptor written to a file modifies it (2>err.log too); 2>&1 and /dev/null do not
        if ">" in op and not op.endswith("&") and target and target != "/dev/null" \
                and not target.startswith("&"):
            out.append(ctx.path(target))
            if ctx.scripts is not None and simple.heredoc is not None:
                prior = ctx.scripts.get(ctx.path(target), "") if op.endswith(">>") else ""
                ctx.scripts[ctx.path(target)] = prior + simple.heredoc.body
    if not argv:
        return out
    name = posixpath.basename(argv[0])
    args = argv[1:]
    if name == "sed" and any(a.startswith("-i") or a.startswith("--in-place") or
                             (re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z.]*", a) is not None)
                             for a in args):
        opts, rest = _split_opts([a for a in args if not a.startswith("-i")
                                  and not a.startswith("--in-place")],
                                 {"-e", "--expression", "-f", "--file"})
        if "-e" not in opts and "--expression" not in opts and "-f" not in opts and rest:
            rest = rest[1:]
        out.extend(ctx.path(f) for f in rest)
    elif name == "perl" and any(re.fullmatch(r"-\w*i\S*", a) for a in args):
        opts, rest = _split_opts(args, {"-e", "-E", "-M", "-I"})
        if "-e" not in opts and "-E" not in opts and rest:
            rest = rest[1:]
        out.extend(ctx.path(f) for f in rest)
    elif name == "tee":
        _, rest = _split_opts(args, set())
        out.extend(ctx.path(f) for f in rest if f != "/dev/null")
    elif name in ("cp", "mv", "install") and len(args) >= 2:
        _, rest = _split_opts(args, {"-t", "--target-directory", "-S", "--suffix"})
        if len(rest) >= 2:
            if name == "mv":  # the sources are gone from where they were
                out.extend(ctx.path(f) for f in rest[:-1])
            out.append(ctx.path(rest[-1]))
    elif name == "patch":
        opts, rest = _split_opts(args, {"-p", "-d", "-i", "-o", "-r", "-B", "-F", "-V", "-z",
                                        "--input", "--directory"})
        base = ctx.path(opts["-d"]) if "-d" in opts else ctx.cwd
        for m in re.finditer(r"^patching file '?([^'\n]+?)'?$", output, re.M):
            out.append(_join(base, m.group(1)))
        if not out and simple.heredoc is not None:
            out.extend(_join(base, a or b) for a, b in _DIFF_FILE_RE.findall(simple.heredoc.body))
    elif name == "git" and len(args) >= 1:
        sub_i = next((i for i, a in enumerate(args) if not a.startswith("-")
                      and a not in _git_opt_values(argv)), None)
        if sub_i is None:
            return out
        sub, rest = args[sub_i], args[sub_i + 1:]
        if sub == "apply" and simple.heredoc is not None and "--check" not in rest \
                and "--stat" not in rest:
            out.extend(ctx.path(a or b) for a, b in _DIFF_FILE_RE.findall(simple.heredoc.body))
        elif sub in ("checkout", "restore") and "--" in rest:
            out.extend(ctx.path(f) for f in rest[rest.index("--") + 1:])
        elif sub == "restore":
            out.extend(ctx.path(f) for f in rest if not f.startswith("-"))
        elif sub == "checkout":
            out.extend(ctx.path(f) for f in rest if not f.startswith("-")
                       and ("." in posixpath.basename(f) or "/" in f))
    elif re.fullmatch(r"python[\d.]*", name):
        opts, rest = _split_opts(args, {"-c", "-m", "-W", "-X"})
        code = opts.get("-c") or (simple.heredoc.body if simple.heredoc is not None else "")
        if not code and "-m" not in opts and rest and ctx.scripts:
            code = ctx.scripts.get(ctx.path(rest[0]), "")
        for m in _PY_WRITE_RE.finditer(code or ""):
            path = m.group(2) or m.group(4)
            out.append(ctx.path(path))
    return out


# ---------------------------------------------------------------------------------------------
# Reading the observation
# ---------------------------------------------------------------------------------------------

_ERROR_RE = re.compile(
    r"(No such file or directory|Is a directory|[Cc]annot open|can't read|Permission denied|"
    r"Not a directory|cannot access|[Nn]o such file)")
_CONTEXT_NUM_RE = re.compile(r"-(\d+)-")
_TAB_RE = re.compile(r"^\s*(\d+)\t")
_GPOS_RE = re.compile(r"^(\d+)([:-])")
_HEADER_RE = re.compile(r"^==> (.*) <==$")
_TOOL_MESSAGE_RE = re.compile(r"^(?:grep|egrep|fgrep|rg|git|ag): ")  # warnings, not matches
#: The line agents put where they dropped the middle of a long output: OpenHands (first and
#: last halves around it) and Codex CLI (which also prefixes "Total output lines: N").
_MIDDLE_CUT_RE = re.compile(
    r"\n\[\.\.\. (?:Observation truncated due to length|omitted \d+ of \d+ lines|output "
    r"truncated to fit \d+ bytes|removed \d+ bytes to fit \d+ byte limit) \.\.\.\]\n\n?")
_TOTAL_LINES_RE = re.compile(r"^Total output lines: \d+\n\n")
#: The line Claude Code puts after the head of a long output, whose end it dropped.
_END_CUT_RE = re.compile(r"\n\n?\.\.\. \[\d+ lines truncated\] \.\.\.\s*$")
_TRUNC_RE = re.compile(
    r"<output_head>\n?(.*?)\n?</output_head>\s*<elided_chars>.*?</elided_chars>\s*"
    r"<output_tail>\n?(.*?)\n?</output_tail>", re.S)


def _lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines]


_TOOL_PREFIX_RE = re.compile(
    r"^(?:cat|nl|sed|head|tail|grep|egrep|fgrep|rg|ag|awk|gawk|mawk|less|more|bat|batcat|cut|"
    r"sort|wc|tee|xargs|find|ls|git|fatal|python[\d.]*|(?:/usr)?/bin/\w+|(?:ba|z|da)?sh"
    r"(?:: line \d+)?): ")


def _is_error(line: str) -> bool:
    """A tool's error message (``cat: f: No such file or directory``), not file content."""
    return bool(_TOOL_PREFIX_RE.match(line)) and bool(_ERROR_RE.search(line))


def _plan_pattern(plan: _Plan) -> Callable[[str], bool] | None:
    """A test recognising the lines a plan prints, when they are self-describing."""
    style = plan.stream.style
    if plan.kind != "view":
        return None
    if style == "tab":
        return lambda ln: bool(_TAB_RE.match(ln))
    if style == "gpos":
        return lambda ln: bool(_GPOS_RE.match(ln)) or ln == "--"
    if style == "gfile":
        return lambda ln: bool(re.match(r"^.+?[:-]\d+[:-]", ln)) or ln == "--"
    if style == "diff":
        return lambda ln: bool(_DIFF_LINE_RE.match(ln))
    return None


def _assign(plans: list[_Plan], head: list[str], truncated: bool, tail: list[str] | None,
            in_line: bool = True) -> None:
    """Share the printed lines out among the pipelines that print, in order.

    ``in_line``: a middle truncation cut inside a line (by characters or bytes, not by lines),
    so the tail's first line is the end of a line, printed in part.
    """
    active = [p for p in plans if p.kind != "silent"]
    cursor = 0
    lost = False  # an earlier output's end could not be found: positions are unknown from here
    for k, plan in enumerate(active):
        nxt = active[k + 1] if k + 1 < len(active) else None
        if cursor >= len(head) and truncated:
            plan.cut = True
            continue
        pattern = _plan_pattern(plan)
        if lost and pattern is None:
            plan.ambiguous = True
            plan.cut = truncated
            plan.lines = head[cursor:]
            continue
        if lost and pattern is not None:
            cursor = next((i for i in range(cursor, len(head)) if pattern(head[i])), len(head))
        if nxt is None:
            plan.lines = head[cursor:]
            cursor = len(head)
            plan.cut = truncated
            continue
        end = _plan_end(plan, head, cursor, nxt)
        plan.lines = head[cursor:end]
        if plan.ambiguous:
            lost = True
            plan.cut = truncated
            plan.lines = head[cursor:]
        if end >= len(head) and truncated:
            plan.cut = True
        cursor = end
    if tail and active:
        last = active[-1]
        pattern = _plan_pattern(last)
        marker = _ELIDED if in_line else _ELIDED_LINES
        if pattern is not None:
            # a numbered line printed in part keeps its number only when the cut fell in the
            # padding before it (``cat -n``/``nl`` pad numbers with spaces)
            first = tail[0] if not in_line or (
                last.stream.style == "tab" and re.match(r"^\s+\d+\t", tail[0])) else None
            last.lines = last.lines + [ln for ln in ([first] if first else []) + tail[1:]
                                       if pattern(ln)]
        elif last.kind == "view":
            # cut inside a line, the tail's first line is the end of one: the reader keeps it
            # as printed in part, to be placed by what was printed of it
            last.tail = tail
            last.elision = marker
            if last.stream.style == "gname":  # the names are printed: the tail names its files
                # (a file name cut by the elision cannot be read: that line is left out)
                last.lines = [*last.lines, marker, *(tail[1:] if in_line else tail)]


def _plan_end(plan: _Plan, lines: list[str], cursor: int, nxt: _Plan) -> int:
    anchor: Callable[[str], bool] | None = None
    if nxt.kind == "echo" and nxt.echo is not None:
        first = (nxt.echo.split("\n") or [""])[0]
        anchor = (lambda ln: ln == first)  # noqa: E731
    else:
        anchor = _plan_pattern(nxt)
    if plan.kind == "echo" and plan.echo is not None:
        return min(len(lines), cursor + len(plan.echo.split("\n")))
    pattern = _plan_pattern(plan)
    if pattern is not None:
        i = cursor
        while i < len(lines) and (pattern(lines[i]) or _is_error(lines[i])):
            if anchor is not None and nxt.kind == "echo" and anchor(lines[i]):
                break
            i += 1
        return i
    count = _bounded_length(plan.stream) if plan.kind == "view" and plan.stream.style == "" \
        else None
    limit = len(lines) if count is None else min(len(lines), cursor + count)
    if anchor is not None:
        for i in range(cursor, len(lines)):
            if anchor(lines[i]) and (count is None or i <= limit):
                return i
    if count is not None:
        return limit
    plan.ambiguous = True
    return cursor


_ELIDED = "\x00elided"  # where a middle truncation cut inside a line, in a plan's lines
_ELIDED_LINES = "\x00elided-lines"  # where a middle truncation removed whole lines
_ELISIONS = (_ELIDED, _ELIDED_LINES)

Text = tuple[tuple[str, ...], ...]


def _text_chunks(lines: list[str], mode: str | None, cut: bool
                 ) -> tuple[Text | None, tuple[str, ...] | None]:
    """Printed lines as chunks of consecutive file lines (``View.text``) and which of their
    end lines were printed in part (``View.partial``); (None, None) if unusable.

    A line cut by a middle truncation (``_ELIDED``: the one before the cut, the first after it)
    was shown in part: it is kept, marked, unless nothing but blanks of it was printed. The last
    line of an output stopped early (``cut``) is dropped: its end is unknown, and a content
    filter's rule (``View.matches``) counts whole lines.
    """
    if mode is None:
        return None, None
    parts: list[list[str]] = [[]]
    flags: list[list[bool]] = [[False, False]]  # per part: first line partial, last partial
    for ln in lines:
        if ln in _ELISIONS:
            in_line = ln == _ELIDED
            if parts[-1] and in_line:
                if parts[-1][-1].strip():
                    flags[-1][1] = True
                else:
                    parts[-1].pop()
            parts.append([])
            flags.append([in_line, False])
        elif ln == "--" and mode != "block":
            parts.append([])  # grep's group separator, never credited as a file line
            flags.append([False, False])
        elif flags[-1][0] and not parts[-1] and not ln.strip():
            flags[-1][0] = False  # only blanks of the cut line were printed: nothing of it
        else:
            parts[-1].append(ln)
    if cut and parts[-1]:
        parts[-1].pop()
        flags[-1][1] = False
    chunks: list[tuple[str, ...]] = []
    partial: list[str] = []
    for p, (first, last) in zip(parts, flags, strict=True):
        if not p:
            continue
        if mode == "lines":
            for k, ln in enumerate(p):
                chunks.append((ln,))
                partial.append(_partial(first and k == 0, last and k == len(p) - 1))
        else:
            chunks.append(tuple(p))
            partial.append(_partial(first, last))
    if not chunks:
        return None, None
    return tuple(chunks), tuple(partial) if any(partial) else None


def _partial(first: bool, last: bool) -> str:
    return "both" if first and last else "start" if first else "end" if last else ""


def _ranges(file: str, numbers: list[int], post_edit: bool) -> list[View]:
    return [View(file, a, b, post_edit) for a, b in line_runs(numbers)]


def _plan_views(plan: _Plan, ok: bool) -> list[View]:
    """The views of one pipeline from the lines it printed."""
    st = plan.stream
    failed: set[str] = set()
    lines: list[str] = []
    for ln in plan.lines:
        if _is_error(ln):
            for joined, written in plan.raw_files.items():
                if written and (f" {written}:" in ln or f"'{written}'" in ln
                                or f"{written}: " in ln or f"‘{written}’" in ln):
                    failed.add(joined)
            continue
        lines.append(ln)

    def pe(f: str) -> bool:
        return f in plan.after_edit

    views: list[View] = []
    if st.style == "tab":
        nums = [int(m.group(1)) for ln in lines if (m := _TAB_RE.match(ln))]
        f = st.files[0] if st.files else None
        if f is not None and f not in failed:
            views.extend(_ranges(f, nums, pe(f)))
        return views
    if st.style == "gpos":
        if not st.files or st.files[0] in failed:
            return views
        positions: list[int] = []
        for ln in lines:
            m = _GPOS_RE.match(ln)
            if not m:
                continue
            if st.inner_tab:
                t = _TAB_RE.match(ln[m.end():])
                if t:
                    positions.append(int(t.group(1)))
            else:
                positions.append(int(m.group(1)))
        if st.inner_tab:
            return _ranges(st.files[0], positions, pe(st.files[0]))
        if not st.segs:
            if positions and len(st.files) == 1:
                return [View(st.files[0], None, None, pe(st.files[0]))]
            return views
        by_file: dict[str, list[int]] = {}
        for p in positions:
            hit = _locate(st.segs, p)
            if hit is not None:
                by_file.setdefault(hit[0], []).append(hit[1])
        for f, nums in by_file.items():
            views.extend(_ranges(f, nums, pe(f)))
        return views
    if st.style in ("gfile", "gname"):
        return _grep_file_views(plan, lines, failed)
    if st.style == "diff":
        # a diff of the working tree shows the files the agent changed, as they now are:
        # file-level views, after an edit (paths are relative to the repository's root)
        return [View(m.group(2), None, None, post_edit=True)
                for ln in lines if (m := _DIFF_FILE_HEADER_RE.match(ln))]
    if st.style == "headers":
        return _header_views(plan, lines, ok)
    if st.style == "files" or st.style == "bytes":
        files = [f for f in st.files if f not in failed]
        if lines and len(files) == 1:
            body = [ln for ln in lines if not _TOOL_MESSAGE_RE.match(ln)]
            if plan.tail:
                body += [plan.elision, *plan.tail]
            text, partial = (None, None) if pe(files[0]) or st.style == "bytes" else \
                _text_chunks(body, st.text, plan.cut and not plan.tail)
            rule = None if plan.tail or text is None else \
                _head_of(st.matches) if plan.cut else st.matches
            return [View(files[0], None, None, pe(files[0]), text, rule, partial)]
        return views
    if st.style != "" or plan.kind != "view":
        return views
    # positional: the printed lines are the stream's first lines
    n = len(lines)
    if plan.ambiguous:
        if ok and not plan.cut:
            return [View(s.file, s.start, s.end, pe(s.file)) for s in st.segs
                    if s.file not in failed]
        files = sorted({s.file for s in st.segs} - failed)
        return [View(f, None, None, pe(f)) for f in files] if len(files) == 1 and n else []
    if n == 0:
        if st.whole and ok and not plan.cut and len(st.segs) == 1 and st.segs[0].file \
                not in failed:
            return [View(st.segs[0].file, 1, None, pe(st.segs[0].file))]
        return views
    remaining = n
    live = [s for s in st.segs if s.file not in failed]
    for seg in live:
        if remaining <= 0:
            break
        length = seg.length
        if length is None:  # to the end of the file
            if plan.cut or (not ok and len(live) > 1):
                # what was printed, all of it credited to the first file (the others unknown)
                views.append(View(seg.file, seg.start, seg.start + remaining - 1, pe(seg.file)))
                break
            # complete output: every file of the stream was printed to its end (cat a b)
            views.append(View(seg.file, seg.start, None, pe(seg.file)))
            continue
        take = min(length, remaining)
        if take > 0:
            views.append(View(seg.file, seg.start, seg.start + take - 1, pe(seg.file)))
        remaining -= take
    if plan.tail and live and not pe(live[-1].file):
        # the end of the stream, after a middle truncation: its position is found from the
        # source (``ctxeval.reading.placing``); the last file printed is where it ends
        text, partial = _text_chunks([plan.elision, *plan.tail], "block", False)
        if text is not None:
            views.append(View(live[-1].file, None, None, False, text, partial=partial))
    return views


def _printed_diff_views(plan: _Plan) -> list[View]:
    """A file printed whole that holds a git diff (``cat patch.txt`` after ``git diff >
    patch.txt``) shows the files of the diff too, as a ``git diff`` would: file level, edited."""
    if plan.stream.style != "" or not plan.lines:
        return []
    return [View(m.group(2), None, None, post_edit=True)
            for ln in plan.lines if (m := _DIFF_FILE_HEADER_RE.match(ln))]


def _locate(segs: list[_Seg], pos: int) -> tuple[str, int] | None:
    base = 1
    for seg in segs:
        length = seg.length
        if length is None or pos < base + length:
            return (seg.file, seg.start + pos - base) if pos >= base else None
        base += length
    return None


def _grep_file_views(plan: _Plan, lines: list[str], failed: set[str]) -> list[View]:
    """``file:N:text`` / ``file-N-text`` (numbered) or ``file:text`` lines of a multi-file grep.

    Without numbers, each file's printed lines become the text of its file-level view
    (``View.text``), to be placed from the source.
    """
    cwd = plan.cwd
    numbered = plan.stream.style == "gfile"
    st = plan.stream
    if plan.ambiguous and not numbered and st.hit is not None and st.text is not None:
        # another command's output may be mixed in: keep the lines that are hits of this grep
        hit = st.hit
        lines = [ln for ln in lines if ln in ("--", *_ELISIONS) or (
            (m := re.match(r"^(.+?):", ln)) is not None and hit(ln[m.end():]))]
    elided = any(ln in _ELISIONS for ln in lines)
    cut = plan.cut and not elided
    body = [ln for ln in lines if ln != "--" and not ln.startswith("Binary file")
            and not _TOOL_MESSAGE_RE.match(ln) and ln not in _ELISIONS]
    if st.multi_grep_files and st.files and body and st.files[0] not in failed:
        only = st.files[0]
        written = plan.raw_files.get(only, only)
        post = only in plan.after_edit
        if numbered and all(_GPOS_RE.match(ln) for ln in body):
            return _ranges(only, [int(m.group(1)) for ln in body if (m := _GPOS_RE.match(ln))],
                           post)
        if not numbered and not any(ln.startswith(written) for ln in body):
            text, partial = (None, None) if post else _text_chunks(
                [ln for ln in lines if not ln.startswith("Binary file")
                 and not _TOOL_MESSAGE_RE.match(ln)], st.text, cut)
            rule = None if elided or text is None else \
                _head_of(st.matches) if cut else st.matches
            return [View(only, None, None, post, text, rule, partial)]
    hits: dict[str, list[int]] = {}
    names: list[str] = []
    match_re = re.compile(r"^(.+?):(\d+):") if numbered else re.compile(r"^(.+?):")
    for ln in lines:
        if ln.startswith("Binary file ") or ln in ("--", *_ELISIONS) \
                or _TOOL_MESSAGE_RE.match(ln):
            continue
        m = match_re.match(ln)
        if not m:
            continue
        name = m.group(1)
        if name not in names:
            names.append(name)
        if numbered:
            hits.setdefault(name, []).append(int(m.group(2)))
    if not numbered:
        # a context line (``file-text``) whose text holds a colon looks like ``name:``: its
        # "name" starts with a real file name and a dash
        names = [n for n in names if not any(n != o and n.startswith(o + "-") for o in names)]
    if numbered:
        known = set(names)
        for ln in lines:  # context lines (file-N-text) name a file already seen in a match line
            if match_re.match(ln):
                continue
            for m in _CONTEXT_NUM_RE.finditer(ln):
                if ln[:m.start()] in known:
                    hits[ln[:m.start()]].append(int(m.group(1)))
                    break
    texts = {} if numbered else _texts_by_name(lines, names)
    views: list[View] = []
    for i, name in enumerate(names):
        joined = _join(cwd, name)
        if joined in failed:
            continue
        post = joined in plan.after_edit
        if numbered:
            views.extend(_ranges(joined, hits.get(name, []), post))
        else:
            text, partial = (None, None) if post else _text_chunks(
                texts.get(name, []), st.text, cut and name == names[-1])
            rule = None if text is None else _file_matches(st.matches, i, len(names), cut,
                                                           elided)
            views.append(View(joined, None, None, post, text, rule, partial))
    return views


def _file_matches(rule: str | None, i: int, n: int, cut: bool, elided: bool) -> str | None:
    """``View.matches`` of the i-th of n files in a grep's output, which prints file by file.

    A ``head`` (or an output cut short) keeps every match of the files before the last one
    printed, and the first ones of the last; a ``tail`` the last ones of the first file.
    """
    if elided or rule is None:
        return None
    if rule == "first":
        rule = "first" if i == n - 1 else "all"
    elif rule == "last":
        rule = "last" if i == 0 else "all"
    if cut and i == n - 1:
        rule = _head_of(rule)
    return rule


def _texts_by_name(lines: list[str], names: list[str]) -> dict[str, list[str]]:
    """The printed lines of each file of an unnumbered multi-file grep, with chunk breaks.

    ``name:text`` is a match and ``name-text`` a context line; a separator, an elision or a
    change of file ends a run of consecutive lines.
    """
    by_length = sorted(names, key=len, reverse=True)
    out: dict[str, list[str]] = {n: [] for n in names}
    current: str | None = None
    for ln in lines:
        if ln in ("--", *_ELISIONS):
            if current is not None:  # (the lines by an elision are cut: _text_chunks marks them)
                out[current].append(ln)
            current = None
            continue
        name = next((n for n in by_length if ln.startswith(n) and ln[len(n):len(n) + 1]
                     in (":", "-")), None)
        if name is None:
            continue
        if current is not None and name != current and out[current] \
                and out[current][-1] != "--":
            out[current].append("--")
        current = name
        out[name].append(ln[len(name) + 1:])
    return out


def _header_views(plan: _Plan, lines: list[str], ok: bool) -> list[View]:
    """``head``/``tail`` of several files: split at the ``==> f <==`` headers."""
    assert plan.stream.header_op is not None
    op, k = plan.stream.header_op
    by_written = {w: j for j, w in plan.raw_files.items()}
    sections: list[tuple[str, list[str]]] = []
    for ln in lines:
        m = _HEADER_RE.match(ln)
        if m and m.group(1) in by_written:
            sections.append((by_written[m.group(1)], []))
        elif sections:
            sections[-1][1].append(ln)
    views: list[View] = []
    for i, (f, body) in enumerate(sections):
        if i < len(sections) - 1 and body and body[-1] == "":
            body = body[:-1]  # the blank line before the next header
        n = len(body)
        post = f in plan.after_edit
        last_cut = plan.cut and i == len(sections) - 1
        if op == "head" and n:
            views.append(View(f, 1, min(n, k), post))
        elif op == "tail+" and n:
            views.append(View(f, k, None if not last_cut and ok else k + n - 1, post))
        elif n:
            views.append(View(f, None, None, post))
    return views


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------

def _echo_text(argv: list[str]) -> str | None:
    if any(_DYNAMIC in a for a in argv):
        return None
    args = argv[1:]
    if args and args[0] in ("-n", "-e", "-E"):
        return None
    text = " ".join(args)
    return None if "$" in text or "`" in text else text


def _plans(pipelines: list[_Pipeline], ctx: _Ctx, output: str, edits: list[str],
           kinds: list[str]) -> list[_Plan]:
    plans: list[_Plan] = []
    for pl in pipelines:
        if len(pl.parts) == 1 and isinstance(pl.parts[0], _Group):
            sub_ctx = _Ctx(ctx.cwd, ctx.edited, ctx.scripts)
            plans.extend(_plans(pl.parts[0].body, sub_ctx, output, edits, kinds))
            continue
        script = _shell_c(pl)
        if script is not None:  # bash -c '…': read the inner commands, in a child shell
            kinds.append("bash")
            plans.extend(_plans(_parse(script, []), _Ctx(ctx.cwd, ctx.edited, ctx.scripts),
                                output, edits, kinds))
            continue
        plans.append(_pipeline_plan(pl, ctx, output, edits, kinds))
    return plans


def _shell_c(pl: _Pipeline) -> str | None:
    """The script of a lone ``bash -c SCRIPT`` (without redirections), else None."""
    if len(pl.parts) != 1 or not isinstance(pl.parts[0], _Simple) or pl.parts[0].redirs:
        return None
    argv = _strip_wrappers(pl.parts[0].argv)
    if len(argv) < 3 or posixpath.basename(argv[0]) not in ("bash", "sh", "zsh", "dash"):
        return None
    for i, a in enumerate(argv[1:-1], start=1):
        if a.startswith("-") and not a.startswith("--") and "c" in a:
            script = argv[i + 1]
            return None if _DYNAMIC in script else script
        if not a.startswith("-"):
            return None
    return None


def _pipeline_plan(pl: _Pipeline, ctx: _Ctx, output: str, edits: list[str],
                   kinds: list[str]) -> _Plan:
    stream: _Stream | None = None
    raw: dict[str, str] = {}
    plan_cwd = ctx.cwd
    after_edit = set(ctx.edited)
    stdout_redirected = False
    echo: str | None = None
    n_parts = len(pl.parts)
    for idx, part in enumerate(pl.parts):
        if isinstance(part, _Group):
            inner_kinds: list[str] = []
            _plans(part.body, _Ctx(ctx.cwd, ctx.edited, ctx.scripts), "", edits, inner_kinds)
            kinds.extend(inner_kinds)
            stream = _Stream("none")
            continue
        argv = _strip_wrappers(part.argv)
        if argv:
            kinds.append(_kind(argv))
        if argv and argv[0] in ("cd", "pushd") and n_parts == 1:
            target = next((a for a in argv[1:] if not a.startswith("-")), None)
            if target is None or _DYNAMIC in target or target == "-":
                ctx.cwd = _DYNAMIC  # home, a variable, the previous directory: unknown
            elif ctx.cwd is None or target.startswith("/"):
                ctx.cwd = target
            else:
                ctx.cwd = _join(ctx.cwd, target)
            return _Plan("silent")
        for e in _edits_of(part, argv, ctx, output):
            if e not in edits:
                edits.append(e)
            ctx.edited.add(e)
        if any(op.lstrip("0123456789") in (">", ">>", ">|", "&>", "&>>") and
               not op.startswith("2") for op, _ in part.redirs):
            stdout_redirected = idx == n_parts - 1 or stdout_redirected
        stdin = stream if idx > 0 else None
        if part.heredoc is not None or part.herestring is not None or any(
                op.endswith("<") and op != "<<<" for op, _ in part.redirs):
            src = next((t for op, t in part.redirs if op in ("<", "0<")), None)
            stdin = _file_stream([ctx.path(src)]) if src else None
            if src:
                raw[ctx.path(src)] = src
        if not argv:
            stream = _Stream("none")
            continue
        if argv[0] == "echo" and n_parts == 1:
            echo = _echo_text(argv)
        if argv[0] in ("git",) and "-C" in argv:
            i = argv.index("-C")
            sub = _Ctx(ctx.path(argv[i + 1]) if i + 1 < len(argv) else ctx.cwd, ctx.edited,
                       ctx.scripts)
            stream = _stage(argv, stdin, sub, raw)
            plan_cwd = sub.cwd
        else:
            stream = _stage(argv, stdin, ctx, raw)
    if stdout_redirected:
        return _Plan("silent")
    if echo is not None:
        return _Plan("echo", echo=echo)
    if stream is None or stream.style == "none":
        return _Plan("other")
    return _Plan("view", stream, raw_files=raw, cwd=plan_cwd, after_edit=after_edit)


def read_shell(command: str, output: str, *, cwd: str | None = None,
               returncode: int | None = None, truncated: bool = False,
               scripts: dict[str, str] | None = None) -> ShellReading:
    """Views, edits and command kinds of one shell command, judged by its observation.

    ``output`` is what the agent saw (stdout and stderr as shown). Outputs truncated in the
    middle are understood: mini-swe-agent's
    ``<output_head>…</output_head><elided_chars>…</elided_chars><output_tail>…</output_tail>``,
    OpenHands' ``[... Observation truncated due to length ...]`` and Codex's ``[... omitted N of
    M lines ...]`` lines; so is Claude Code's ``... [N lines truncated] ...`` after a head. The
    head is read as printed; the tail where its lines carry their own line numbers, else it is
    kept as text to be placed from the source (see the module docstring). ``truncated=True``
    says the output stops early for another reason (a timeout, a length limit): its last
    printed line is the last one shown.

    ``scripts`` is the caller's memory of script files written by earlier commands of the same
    trajectory (heredoc redirections into a file); it is updated here, and a later
    ``python fix.py`` then counts the files ``fix.py`` opens for writing as edited. Never raises.
    """
    try:
        return _read_shell(command, output or "", cwd, returncode, truncated, scripts)
    except (RecursionError, ValueError, IndexError, KeyError, AttributeError, TypeError,
            AssertionError):
        return ShellReading(kinds=_safe_kinds(command))


def _safe_kinds(command: str) -> list[str]:
    try:
        return _dedupe([_kind(_strip_wrappers(a)) for a in split_commands(command)
                        if _strip_wrappers(a)])
    except Exception:
        return []


def _dedupe(items: list[str]) -> list[str]:
    seen: list[str] = []
    for it in items:
        if it and it not in seen:
            seen.append(it)
    return seen


def _read_shell(command: str, output: str, cwd: str | None, returncode: int | None,
                truncated: bool, scripts: dict[str, str] | None = None) -> ShellReading:
    subs: list[list[_Pipeline]] = []
    pipelines = _parse(command, subs)
    ctx = _Ctx(cwd, set(), scripts)
    edits: list[str] = []
    kinds: list[str] = []
    plans = _plans(pipelines, ctx, output, edits, kinds)
    for sub in subs:
        for s in _simples(sub):
            argv = _strip_wrappers(s.argv)
            if argv:
                kinds.append(_kind(argv))
    m = _TRUNC_RE.search(output)
    tail: list[str] | None = None
    in_line = True  # mini-swe-agent and OpenHands cut by characters, Codex by lines
    if m:
        head = _lines(m.group(1))
        tail = _lines(m.group(2))
        truncated = True
    elif (cut := _MIDDLE_CUT_RE.search(output)) is not None:  # the head and tail of a long output
        head = _lines(_TOTAL_LINES_RE.sub("", output[:cut.start()], count=1))
        tail = _lines(output[cut.end():])
        in_line = "lines ...]" not in cut.group(0)
        truncated = True
    elif (cut := _END_CUT_RE.search(output)) is not None:  # only the head of a long output
        head = _lines(output[:cut.start()])
        truncated = True
    else:
        head = _lines(output)
    _assign(plans, head, truncated, tail, in_line)
    ok = returncode in (0, None)
    views: list[View] = []
    seen: set[View] = set()
    for plan in plans:
        if plan.kind != "view":
            continue
        for v in _plan_views(plan, ok) + _printed_diff_views(plan):
            if v not in seen and _DYNAMIC not in v.file:  # relative to an unknown directory
                seen.add(v)
                views.append(v)
    return ShellReading(views, edits, _dedupe(kinds))
