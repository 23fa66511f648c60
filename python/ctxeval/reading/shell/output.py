"""Output matching: the observation split among the pipelines that printed it.

Truncation markers (mini-swe-agent's ``<output_head>``/``<output_tail>``, OpenHands' and
Codex's marker lines) are recognised, error lines and tool messages told from printed lines,
and each plan is given the lines it printed (:func:`_assign`); where a middle truncation cut,
the lines carry the elision markers (``_ELIDED``, ``_ELIDED_LINES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .pipeline import _DIFF_LINE_RE, _bounded_length, _Plan

_ERROR_RE = re.compile(
    r"(No such file or directory|Is a directory|[Cc]annot open|can't read|Permission denied|"
    r"Not a directory|cannot access|[Nn]o such file|command not found|: not found$)")
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


#: ... and the shells' own: ``bash: line 1: rg: command not found``, zsh's ``zsh:1: command not
#: found: rg`` (``zsh: command not found: rg`` interactively), dash's ``sh: 1: rg: not found``.
_TOOL_PREFIX_RE = re.compile(
    r"^(?:cat|nl|sed|head|tail|grep|egrep|fgrep|rg|ag|awk|gawk|mawk|less|more|bat|batcat|cut|"
    r"sort|wc|tee|xargs|find|ls|git|fatal|python[\d.]*|(?:/usr)?/bin/\w+|(?:ba|z|da)?sh"
    r"(?:: line \d+|:\d+|: \d+)?): ")


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
