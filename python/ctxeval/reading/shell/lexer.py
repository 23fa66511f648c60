"""The shell lexer and parser: a command string into pipelines of simple commands.

A small bash tokenizer and parser (words, quotes, operators, redirections, heredocs, subshells
and command substitutions). It never raises: malformed input ends the current word. Words the
shell would expand (variables, globs, substitutions) are marked with ``_DYNAMIC``.
:func:`split_commands` gives the plain argv of every simple command.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

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


def cwd_after(command: str, cwd: str) -> str | None:
    """The directory a persistent shell is in after running ``command`` from ``cwd``, as its
    top-level ``cd`` and ``pushd`` commands say, each taken to succeed (those in a subshell,
    ``( … )`` or ``bash -c``, do not move it): ``cwd`` when it has none, None when one goes
    somewhere the command does not name (``cd`` alone, ``cd -``, ``cd ~``, ``cd $D``, ``popd``).

    For logs that keep no directory per call (Claude Code's stream-json): its Bash tool keeps
    the directory a command ends in for the next one."""
    try:
        pipelines = _parse(command, [])
    except RecursionError:
        return None
    cur: str | None = cwd
    for pl in pipelines:
        if len(pl.parts) != 1 or isinstance(pl.parts[0], _Group):
            continue
        argv = pl.parts[0].argv
        if argv and argv[0] == "popd":
            cur = None
        if not argv or argv[0] not in ("cd", "pushd"):
            continue
        target = next((a for a in argv[1:] if not a.startswith("-")), None)
        if target is None or _DYNAMIC in target or target == "-" or target.startswith("~"):
            cur = None
        elif target.startswith("/"):
            cur = posixpath.normpath(target)
        elif cur is not None:
            cur = posixpath.normpath(posixpath.join(cur, target))
    return cur


def _plain(argv: list[str]) -> list[str]:
    return [a.replace(_DYNAMIC, "") for a in argv]
