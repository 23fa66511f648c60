"""Results of MCP tools ctxeval has no reader for: what can be read without knowing the server.

A tool no module recognises is read by rules that hold for any server, and every view they
give is a guess, counted in the row's warnings (``mcp: N views of unknown tools guessed``):

- **a JSON object with a path and numbered content**: an object anywhere in the result with a
  path (``path``, ``file``, ``filePath``, ``file_path``, ``relative_path``, ``filename``, or the
  key it is grouped under) and content (``content``, ``text``, ``snippet``, ``code``, ``body``,
  ``preview``, ``lines``) whose lines carry their numbers (``N: ``, ``N→``, ``N\\t``, ``N|``,
  ``   N  ``) credits those lines; the last number printed, when empty and last, is taken for a
  trailer and left out;
- **a JSON object with a path, a first line and content**: an object with ``startLine``/
  ``start_line``/``lineStart``/``line_start``/``line`` (1-based; a 0-based
  ``start_line`` cannot be told apart, which is why this is a guess) and unnumbered content
  credits as many lines as the content has from there, stopping at its ``endLine``/
  ``end_line``/``lineEnd``/``line_end`` when that comes first;
- **a path and content without numbers**: placed at the base commit (``View.text``);
- **a resource** that Claude Code printed as ``[Resource from <server> at <uri>] <text>``
  with a ``file://`` URI (or a path): its text placed at the base commit;
- **numbered text with a path argument** (the whole result lines ``N: ...`` and the call's
  ``path``/``file``/``file_path``/``relative_path`` argument): those lines.

A path without content, or start/end numbers without content, is a mention: nothing was shown.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import (
    Call,
    Reading,
    line_views,
    local_path,
    numbered,
    printed_lines,
    repo_key,
    repo_path,
    resources,
    result_json,
    span_views,
    text_view,
)

KIND = "generic"

_NUMBERED = re.compile(r"^\s*(?P<n>\d+)(?::\s?|→|\t|\s?\|\s?|\s{2,})(?P<body>.*)$")
_PATH_KEYS = ("path", "file", "filePath", "file_path", "relative_path", "filename", "uri")
_CONTENT_KEYS = ("content", "text", "snippet", "code", "body", "preview", "lines")
_START_KEYS = ("startLine", "start_line", "lineStart", "line_start", "line")
_END_KEYS = ("endLine", "end_line", "lineEnd", "line_end")


def _num(obj: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for k in keys:
        v = obj.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _file(value: Any, cwd: str | None) -> str | None:
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        return None
    s = value.strip()
    if s.startswith("file://"):
        s = s[len("file://"):]
    elif "://" in s:
        return None
    return local_path(s, cwd) if s.startswith("/") else repo_path(s)


def _numbers(content: str) -> list[int]:
    found = numbered(content, _NUMBERED)
    lines = content.split("\n")
    if len(found) < max(1, len([ln for ln in lines if ln.strip()]) // 2):
        return []  # not a numbered text: most of its lines carry no number
    if found and found[-1][1] == "" and lines and _NUMBERED.match(lines[-1].rstrip()) \
            and lines[-1].strip() == str(found[-1][0]) + ":":
        found.pop()
    return [n for n, _ in found]


def read(call: Call) -> Reading:
    out = Reading()
    for uri, body in resources(call.text):
        file = _file(uri, call.cwd)
        if file:
            view = text_view(file, [printed_lines(body)])
            if view is not None:
                out.add([view])
    doc = result_json(call)
    _visit(doc, None, repo_key(call.args.get("repo")), None, call.cwd, out)
    if doc is None and not out.views:
        for k in ("path", "file", "file_path", "filePath", "relative_path"):
            file = _file(call.args.get(k), call.cwd)
            if file:
                nums = _numbers(call.text)
                if nums:
                    out.add(line_views(file, nums), repo_key(call.args.get("repo")))
                break
    out.guessed = len(out.views)
    return out


def _visit(value: Any, file: str | None, origin: str | None, key: str | None,
           cwd: str | None, out: Reading) -> None:
    """Read one JSON value; ``file`` and ``origin`` are the nearest enclosing object's path
    and repository (a chunk inherits its block's file)."""
    if isinstance(value, list):
        for v in value:
            _visit(v, file, origin, key, cwd, out)
        return
    if not isinstance(value, dict):
        return
    obj = value
    own = next((f for k in _PATH_KEYS if (f := _file(obj.get(k), cwd))), None)
    if own is None and key is not None and ("/" in key or "." in key) \
            and any(isinstance(obj.get(k), str) for k in _CONTENT_KEYS):
        own = _file(key, cwd)  # entries grouped under their path
    here = own or file
    before = len(out.views)
    origin = repo_key(obj.get("repo") or obj.get("repository")) or origin
    content = next((obj[k] for k in _CONTENT_KEYS if isinstance(obj.get(k), str)), None)
    if isinstance(obj.get("lines"), list) and obj["lines"] \
            and all(isinstance(x, str) for x in obj["lines"]):
        content = "\n".join(obj["lines"])
    if here and isinstance(content, str) and content.strip():
        nums = _numbers(content)
        start = _num(obj, _START_KEYS)
        if nums:
            out.add(line_views(here, nums), origin)
        elif start is not None and start >= 1:
            count = len(printed_lines(content))
            end = _num(obj, _END_KEYS)
            if end is not None and end >= start:
                count = min(count, end - start + 1)
            out.add(span_views(here, start, count), origin)
        else:
            view = text_view(here, [printed_lines(content)])
            if view is not None:
                out.add([view], origin)
    for k, v in obj.items():
        if isinstance(v, (dict, list)):
            _visit(v, here, origin, k, cwd, out)
    if own and len(out.views) == before:
        out.mention(own)
