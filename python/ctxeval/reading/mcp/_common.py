"""What every MCP reader needs: the call, its result as JSON or text, numbered lines, text to
place, and the repository a path belongs to.

Servers print results in a few recurring shapes (a JSON document, lines prefixed by their
number, plain file text, an embedded resource that the client prefixes with where it came
from); the helpers here read each shape once, so that a server's module says only which shape
each of its tools prints and where the path is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...linesets import line_runs
from ...model import View


@dataclass(frozen=True, slots=True)
class Call:
    """One MCP tool call as the readers see it: the server's and the tool's names (the tool
    without a server prefix such as Sourcegraph's ``sg_``), the arguments, the text the model
    was shown, the result's ``structuredContent`` where the log kept it, the working
    directory."""

    server: str
    tool: str
    args: dict[str, Any]
    text: str
    structured: Any = None
    cwd: str | None = None


@dataclass(slots=True)
class Reading:
    """What a reader found: views, each with the repository its file belongs to (None for the
    agent's own file system or an unknown one), paths named without content, files changed,
    and what was guessed or skipped."""

    views: list[View] = field(default_factory=list)
    origins: list[str | None] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    guessed: int = 0  # views the generic reader inferred

    def add(self, views: Iterable[View], origin: str | None = None) -> None:
        for v in views:
            self.views.append(v)
            self.origins.append(origin)

    def mention(self, path: str | None) -> None:
        if path and path not in self.mentions:
            self.mentions.append(path)


Reader = Callable[[Call], Reading]


def nothing(call: Call) -> Reading:
    """A tool whose result shows no file's lines (writes, metadata): nothing is credited."""
    return Reading()


# --- the result -------------------------------------------------------------------------------


def load_json(text: str) -> Any:
    """The JSON value of a result's text, or None when it is not one JSON document."""
    s = text.strip()
    if not s or s[0] not in "{[":
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


def result_json(call: Call) -> Any:
    """The result as JSON: the text when it parses, else the structured content."""
    found = load_json(call.text)
    if found is None and isinstance(call.structured, (dict, list)):
        return call.structured
    return found


# --- Claude Code's preview of a result it kept on disk ----------------------------------------

#: Claude Code shows the first this many characters of a result it kept on disk.
PREVIEW_CHARS = 2000
_PERSISTED_OPEN, _PERSISTED_CLOSE = "<persisted-output>", "</persisted-output>"
_PREVIEW_HEAD = re.compile(r"Preview \(first [^)\n]*\):\n")
_PERSISTED_PATH = re.compile(r"(?:Full output|Tool result) saved to: (?P<path>\S+)")


@dataclass(frozen=True, slots=True)
class Persisted:
    """A result Claude Code kept on disk (``<persisted-output>``): the model saw only
    ``preview``, the result's first characters; ``path`` is where the whole result went;
    ``cut`` says the preview stops at the character limit, so its last line is cut short
    (a preview shorter than the limit was cut where a line ends)."""

    preview: str
    path: str | None
    cut: bool


def persisted(text: str) -> Persisted | None:
    """The preview of a ``<persisted-output>`` result, or None for any other text.

    Claude Code 2.1 writes a result over its size limit to a file and gives the model
    ``<persisted-output>\nOutput too large (50.1KB). Full output saved to: <file>\n\nPreview
    (first 2KB):\n<the first 2,000 characters>\n...\n</persisted-output>`` (older versions add
    advice after the ``...``; the oldest give no preview at all: nothing was shown)."""
    s = text.strip() if isinstance(text, str) else ""
    if not (s.startswith(_PERSISTED_OPEN) and s.endswith(_PERSISTED_CLOSE)):
        return None
    body = s[len(_PERSISTED_OPEN):-len(_PERSISTED_CLOSE)]
    where = _PERSISTED_PATH.search(body)
    path = where.group("path") if where else None
    head = _PREVIEW_HEAD.search(body)
    if head is None:
        return Persisted("", path, False)
    rest = body[head.end():]
    end = rest.rfind("\n...")
    preview = rest[:end] if end >= 0 else rest.rstrip("\n")
    return Persisted(preview, path, len(preview) >= PREVIEW_CHARS)


def preview_text(p: Persisted) -> str:
    """What a reader may take from a preview: whole lines only. A JSON result cut short is
    closed where its last whole value (or, inside a string, its last whole line) ends, so the
    readers see a JSON document holding just what the model saw; plain text loses the line the
    cut fell in."""
    s = p.preview
    if s.lstrip()[:1] in ("{", "["):
        try:
            json.loads(s)
            return s
        except ValueError:
            closed = close_json_prefix(s)
            return json.dumps(closed, ensure_ascii=False) if closed is not None else ""
    if p.cut and "\n" in s:
        return s[:s.rfind("\n") + 1]
    return "" if p.cut else s


def close_json_prefix(s: str) -> Any:
    """The JSON value of the first part of a document cut short, or None.

    A string the cut falls in keeps its text up to its last ``\n`` escape (the lines before
    the cut; a string cut in its first line becomes empty) and is closed; if that leaves no
    valid document (the cut fell in a key, after a ``:``), or the cut fell in a number or a
    literal (which may have lost digits), the document is closed at the last ``,`` before it
    instead, dropping the partial member; open arrays and objects are closed in order."""
    stack: list[str] = []
    commas: list[tuple[int, str]] = []  # (position of a ',' outside strings, closers there)
    in_str = esc = False
    last_nl = -1
    start = -1
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
                if ch == "n":
                    last_nl = i + 1
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str, start, last_nl = True, i, -1
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack:
                stack.pop()
        elif ch == ",":
            commas.append((i, "".join(reversed(stack))))
    closers = "".join(reversed(stack))
    tries = []
    if in_str:
        keep = s[:last_nl] if last_nl > start else s[:start + 1]
        tries.append(keep + '"' + closers)
    elif s.rstrip()[-1:] in ("}", "]", '"'):
        tries.append(s.rstrip() + closers)
    # else the cut fell in a number or a literal, which may be incomplete: drop that member
    tries.extend(s[:pos] + close for pos, close in reversed(commas))
    for t in tries:
        try:
            return json.loads(t)
        except ValueError:
            continue
    return None


_RESOURCE = re.compile(r"^\[Resource from (?P<server>.+?) at (?P<uri>\S+)\] ", re.M)


def resources(text: str) -> list[tuple[str, str]]:
    """``(uri, text)`` of each embedded text resource in a Claude Code tool result.

    Claude Code gives the model an MCP ``resource`` content block as a text block
    ``[Resource from <server> at <uri>] <resource text>``; the text blocks of a result are
    joined with newlines, so a resource runs from its prefix to the next prefix or the end.
    """
    marks = list(_RESOURCE.finditer(text))
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() - 1 if k + 1 < len(marks) else len(text)
        out.append((m.group("uri"), text[m.end():max(end, m.end())]))
    return out


# --- lines ------------------------------------------------------------------------------------


def printed_lines(text: str) -> list[str]:
    """The lines of printed file text; the empty line after a final newline is not a line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def numbered(text: str, pattern: re.Pattern[str], *, drop_trailer: bool = False
             ) -> list[tuple[int, str]]:
    """``(number, content)`` of every line of ``text`` that ``pattern`` (groups ``n`` and
    ``body``) numbers. Lines without a number (notices, truncation markers) are not lines.

    ``drop_trailer``: the tool prints one more number than there are lines, empty, after the
    last line (Sourcegraph numbers the empty string after a final newline); that line is not
    shown and is left out when it is the last line printed and empty.
    """
    out = []
    for ln in text.split("\n"):
        m = pattern.match(ln)
        if m:
            out.append((int(m.group("n")), m.group("body") or ""))
    if drop_trailer and out and out[-1][1] == "" and text.rstrip(" ").endswith(
            f"{out[-1][0]}:"):
        out.pop()
    return out


def line_views(file: str, numbers: Iterable[int]) -> list[View]:
    """Line views of ``file`` covering ``numbers`` (runs of consecutive lines)."""
    return [View(file, a, b) for a, b in line_runs(numbers)]


def span_views(file: str, start: int, count: int) -> list[View]:
    """The ``count`` lines of ``file`` from ``start`` (1-based) on, as one line view."""
    if count <= 0 or start < 1:
        return []
    return [View(file, start, start + count - 1)]


def text_view(file: str, chunks: Iterable[Iterable[str]], *, partial: Iterable[str] | None = None,
              matches: str | None = None) -> View | None:
    """A file-level view whose printed lines are placed at the base commit by the evaluator
    (``View.text``); None when nothing but blank lines was printed."""
    kept: list[tuple[tuple[str, ...], str]] = []
    cuts = list(partial) if partial is not None else None
    for k, chunk in enumerate(chunks):
        c = tuple(chunk)
        if c and any(ln.strip() for ln in c):
            kept.append((c, cuts[k] if cuts is not None else ""))
    if not kept:
        return None
    part = tuple(p for _, p in kept) if cuts is not None else None
    return View(file, None, None, text=tuple(c for c, _ in kept), matches=matches,  # type: ignore[arg-type]
                partial=part)


# --- paths and repositories -------------------------------------------------------------------

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_REV = re.compile(r"@[^/]*$")


def repo_key(address: Any) -> str | None:
    """The repository an address names, as ``host/owner/name`` or ``owner/name`` with the
    revision, a ``.git`` suffix and search anchors (``^…$``) left out:
    ``github.com/sg-evals/linux--07c4ee00@94e1c64`` → ``github.com/sg-evals/linux--07c4ee00``.
    None when it names no repository."""
    if not isinstance(address, str):
        return None
    s = address.strip().strip("^$").strip()
    s = _SCHEME.sub("", s)
    s = s.split("/-/", 1)[0]
    parts = [p for p in s.split("/") if p]
    if parts:
        parts[-1] = _REV.sub("", parts[-1])
        if parts[-1].endswith(".git"):
            parts[-1] = parts[-1][:-4]
    parts = [p for p in parts if p]
    return "/".join(parts) if parts else None


def same_repo(a: str | None, b: str | None) -> bool:
    """Whether two repository keys name one repository (``github.com/o/n`` is ``o/n``)."""
    if not a or not b:
        return False
    pa, pb = a.lower().split("/"), b.lower().split("/")
    n = min(len(pa), len(pb), 2)
    return pa[-n:] == pb[-n:]


def repo_path(path: Any) -> str | None:
    """A path inside a repository as the server printed it, without a leading ``/`` or
    ``./``; None for nothing."""
    if not isinstance(path, str):
        return None
    s = path.strip()
    while s.startswith("./"):
        s = s[2:]
    s = s.lstrip("/")
    return s or None


def local_path(path: Any, cwd: str | None) -> str | None:
    """A path on the agent's own file system, relative to the working directory when it lies
    under it (as the Read tool's paths are)."""
    if not isinstance(path, str) or not path.strip():
        return None
    s = path.strip()
    if cwd:
        base = cwd.rstrip("/") + "/"
        if s.startswith(base):
            return s[len(base):] or None
    return s


def strs(value: Any) -> list[str]:
    """A string or a list of strings as a list; anything else as an empty one."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def walk(value: Any, parent_key: str | None = None) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every JSON object inside ``value`` with the key it was found under (for results that
    group entries under their path)."""
    if isinstance(value, dict):
        yield value, parent_key
        for k, v in value.items():
            yield from walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v, parent_key)
