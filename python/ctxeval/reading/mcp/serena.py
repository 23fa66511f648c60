"""Serena (``oraios/serena``: ``src/serena/tools/file_tools.py``, ``symbol_tools.py``,
``util/text_utils.py``, ``symbol.py``).

Paths are relative to the project root (the agent's working directory in the runs ctxeval
reads). Serena counts lines from 0 (``start_line``, ``end_line``, ``body_location``,
displayed line numbers), so every number read here is shifted by one.

- ``read_file`` (``relative_path``, ``start_line`` = 0, ``end_line`` = None): the lines
  ``start_line``..``end_line`` (inclusive) joined with ``\\n``, without numbers. Their position
  is known from the arguments: lines ``start_line + 1`` .. ``start_line + k``. A negative
  ``start_line`` counts from the end: the lines are placed at the base commit.
- ``find_symbol``: a JSON list of symbols (``name_path``, ``kind``, ``relative_path``,
  ``body_location {start_line, end_line}``, and ``body`` when ``include_body``). A body is
  the symbol's text from its first line: lines ``start_line + 1`` on, as many as it has. A
  symbol without a body is a mention of its file.
- ``find_referencing_symbols``: symbols grouped by file and kind, each with a
  ``content_around_reference`` printed as ``search_for_pattern`` prints lines (below), with
  numbers: line views.
- ``search_for_pattern``: ``{file: ["  >  12:<line>\\n...  13:<line>", ...]}``. Until Serena of
  23 April 2026 these numbers counted from 1, since then from 0, and the log does not say which
  Serena ran: the printed lines are placed at the base commit instead of trusting the numbers
  (each match on its own; all matches of a file together, every copy of a line counted, when
  no context was asked for). Its shortened forms (``Matched lines per file``: each match's
  first line, possibly cut to 60 characters and ``...``) are placed as parts of lines; counts
  and bare line numbers show nothing.
- ``get_symbols_overview``, ``list_dir``, ``find_file``: names, mentions at most.
- Editing tools (``replace_symbol_body``, ``insert_after_symbol``, ``insert_before_symbol``,
  ``replace_content``, ``replace_regex``, ``create_text_file``, ``delete_lines``,
  ``replace_lines``, ``insert_at_line``, ``rename_symbol``): edits of their file.

An answer over ``max_answer_chars`` is replaced by ``The answer is too long (...)``; a failed
call returns its error as the result (``Error executing tool: ...`` before June 2026, an MCP
error since): neither shows a line.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import (
    Call,
    Reader,
    Reading,
    line_views,
    load_json,
    printed_lines,
    repo_path,
    span_views,
    text_view,
    walk,
)

KIND = "serena"

_SHOWN = re.compile(r"^(?:  >|\.\.\.)\s*(?P<n>\d+):(?P<body>.*)$")
_FAILED = re.compile(r"^Error(?: executing tool)?: [A-Za-z_][\w.]*(?: - |: )")
_TOO_LONG = "The answer is too long ("
_EDITS = ("replace_symbol_body", "insert_after_symbol", "insert_before_symbol",
          "replace_content", "replace_regex", "create_text_file", "delete_lines",
          "replace_lines", "insert_at_line", "rename_symbol")


def recognises(server: str, tool: str) -> bool:
    return "serena" in server.lower()


def _int(v: Any, default: int | None = None) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _failed(text: str) -> bool:
    return bool(_FAILED.match(text)) or text.startswith(_TOO_LONG)


def read_file(call: Call) -> Reading:
    out = Reading()
    file = repo_path(call.args.get("relative_path"))
    if not file or _failed(call.text):
        return out
    start = _int(call.args.get("start_line"), 0)
    end = _int(call.args.get("end_line"))
    lines = call.text.split("\n")
    if end is None and lines and lines[-1] == "":
        lines.pop()  # the empty string after the file's final newline
    if start is not None and start >= 0:
        out.add(span_views(file, start + 1, len(lines)))
    else:
        view = text_view(file, [lines])
        if view is not None:
            out.add([view])
    if not out.views:
        out.mention(file)
    return out


def _body_views(obj: dict[str, Any], file: str) -> list[Any]:
    loc = obj.get("body_location")
    body = obj.get("body")
    if not isinstance(loc, dict) or not isinstance(body, str):
        return []
    start = _int(loc.get("start_line"))
    if start is None or start < 0:
        return []
    return span_views(file, start + 1, len(printed_lines(body)))


def find_symbol(call: Call) -> Reading:
    out = Reading()
    if _failed(call.text):
        return out
    doc = load_json(call.text)
    if doc is None:
        text = call.text
        k = text.find("\n")
        doc = load_json(text[k + 1:]) if k >= 0 else None  # "Matched N>... symbols.\n{...}"
        if isinstance(doc, dict):
            for key in doc:
                out.mention(repo_path(key))
        return out
    for obj, _ in walk(doc):
        file = repo_path(obj.get("relative_path")) or repo_path(call.args.get("relative_path"))
        if not file:
            continue
        views = _body_views(obj, file)
        if views:
            out.add(views)
        elif "relative_path" in obj:
            out.mention(file)
    return out


def references(call: Call) -> Reading:
    out = Reading()
    if _failed(call.text):
        return out
    doc = load_json(call.text)
    if doc is None:
        k = call.text.find("\n")
        doc = load_json(call.text[k + 1:]) if k >= 0 else None  # a shortened answer
        for obj, key in walk(doc):
            out.mention(repo_path(obj.get("relative_path")) or repo_path(key))
        return out
    for obj, _ in walk(doc):
        shown = obj.get("content_around_reference")
        if not isinstance(shown, str):
            continue
        file = repo_path(obj.get("relative_path")) or _file_key(doc, obj)
        if not file:
            continue
        nums = [int(m.group("n")) + 1 for ln in shown.split("\n") if (m := _SHOWN.match(ln))]
        out.add(line_views(file, nums))
    return out


def _file_key(doc: Any, target: dict[str, Any]) -> str | None:
    """The file an entry is grouped under (``{file: {kind: [entries]}}``)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if any(obj is target for obj, _ in walk(value)):
                return repo_path(key)
    return None


def search_for_pattern(call: Call) -> Reading:
    out = Reading()
    text = call.text
    if text.startswith(_TOO_LONG):
        return _shortened(text)
    if _failed(text):
        return out
    doc = load_json(text)
    if not isinstance(doc, dict):
        return out
    context = (_int(call.args.get("context_lines_before"), 0) or 0) + \
        (_int(call.args.get("context_lines_after"), 0) or 0)
    for key, matches in doc.items():
        file = repo_path(key)
        if not file or not isinstance(matches, list):
            continue
        chunks = _shown_chunks([m for m in matches if isinstance(m, str)])
        if not context and chunks and all(len(c) == 1 for c in chunks):
            view = text_view(file, chunks, matches="all")
            if view is not None:
                out.add([view])
            continue
        for c in chunks:
            view = text_view(file, [c])
            if view is not None:
                out.add([view])
        if not chunks:
            out.mention(file)
    return out


def _shown_chunks(matches: list[str]) -> list[list[str]]:
    """The lines each match printed, without their prefixes.

    Serena printed ``<prefix><n>: <line>`` until May 2025 and ``<prefix><n>:<line>`` since.
    The older form is recognised by an empty line, printed as ``<n>: ``; without one, the
    current form is taken (indented code starts with a space in both). A wrong guess leaves
    the lines unplaced, never placed elsewhere."""
    parsed = [[g.group("body") for ln in m.split("\n") if (g := _SHOWN.match(ln))]
              for m in matches]
    bodies = [b for c in parsed for b in c]
    spaced = bool(bodies) and all(b.startswith(" ") for b in bodies) and " " in bodies
    return [[b[1:] if spaced else b for b in c] for c in parsed if c]


def _shortened(text: str) -> Reading:
    """``Matched lines per file ...:\\n{file: [{"line", "text"}]}``: each match's first line,
    stripped and possibly cut to 60 characters and ``...``."""
    out = Reading()
    k = text.find("\n{")
    doc = load_json(text[k + 1:]) if k >= 0 else None
    if not isinstance(doc, dict):
        return out
    for key, entries in doc.items():
        file = repo_path(key)
        if not file:
            continue
        for e in entries if isinstance(entries, list) else []:
            t = e.get("text") if isinstance(e, dict) else None
            if isinstance(t, str) and t.strip():
                if t.endswith("...") and "truncated" in text[:k]:
                    t = t[:-3]
                view = text_view(file, [[t]], partial=["both"])
                if view is not None:
                    out.add([view])
        if isinstance(entries, (list, int)):
            out.mention(file)
    return out


def overview(call: Call) -> Reading:
    out = Reading()
    out.mention(repo_path(call.args.get("relative_path")))
    return out


def listing(call: Call) -> Reading:
    return Reading()


def edit(call: Call) -> Reading:
    out = Reading()
    f = repo_path(call.args.get("relative_path"))
    if f:
        out.edits.append(f)
    return out


TOOLS: dict[str, Reader] = {
    "read_file": read_file,
    "find_symbol": find_symbol,
    "find_referencing_symbols": references,
    "search_for_pattern": search_for_pattern,
    "get_symbols_overview": overview,
    "list_dir": listing,
    "find_file": listing,
    **dict.fromkeys(_EDITS, edit),
}
