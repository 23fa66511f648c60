"""Sourcegraph's MCP server (``/.api/mcp`` of a Sourcegraph instance).

The server is part of Sourcegraph itself, whose source is not public; its tools and arguments
are documented in ``sourcegraph/docs`` (``docs/api/mcp/index.mdx``: ``read_file``,
``keyword_search``, ``nls_search``, ``list_files``, ``go_to_definition``, ``find_references``,
``commit_search``, ``diff_search``, ``compare_revisions``, ...; up to release 7.0 each name
carried an ``sg_`` prefix, which is how CodeContextBench's runs of March 2026 name them). The
output shapes below are those of real results (CodeContextBench, Claude Code 2.1.63):

- ``read_file`` → ``{"content": "<N>: <line>\\n...", "url": "..."}``: every line printed with its
  number, ``startLine``..``endLine`` when asked for, and one more number after the last line,
  empty (the empty string after the range's final newline). Numbered lines are line views; the
  empty trailer is not a line. A file over 128 KB prints its first 200 lines and a notice: only
  numbered lines count.
- ``keyword_search`` / ``nls_search`` → ``{"blocks": [{"type": "file", "repo", "file",
  "chunks": [{"content": "<N>: <line>\\n...", "startLine", "endLine"}]}]}``; each chunk is
  numbered like ``read_file`` (``endLine`` is the number of its empty trailer). A chunk cut
  short ends in a numbered marker, ``<N>: ... [chunk truncated]``, where ``endLine`` is still
  the end of the uncut chunk: line N and the lines after it up to ``endLine`` are not shown,
  and neither is the marker. A block without chunks (a path match) names its file: a mention.
- ``list_files`` → ``{"files": [{"path", "isDirectory"}]}``: mentions.
- ``go_to_definition`` / ``find_references``: read as search blocks (``file`` + numbered
  ``chunks``) where the result has them, else by the generic reader; no real result of these
  two tools has been observed (see ``docs/mcp-tools.md``).
- ``commit_search``, ``diff_search``, ``compare_revisions``: commits and diffs, lines of other
  revisions than the one the agent works on: files named are mentions, nothing is credited.
- ``list_repos``, ``list_refs``, ``get_contributor_repos``, ``deepsearch``, ``deepsearch_read``,
  ``evaluator``, ``code_finder``: nothing (names of repositories, or prose).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ._common import (
    Call,
    Reader,
    Reading,
    line_views,
    nothing,
    numbered,
    printed_lines,
    repo_key,
    repo_path,
    result_json,
    walk,
)

KIND = "sourcegraph"

_LINE = re.compile(r"^(?P<n>\d+):(?: (?P<body>.*))?$")
_TRUNCATED = "... [chunk truncated]"
_BLOB = re.compile(r"^(?:[a-z]+://[^/]+/)?(?P<repo>.+?)/-/blob/(?P<path>[^?#]+)")


def recognises(server: str, tool: str) -> bool:
    """A server named for Sourcegraph (``sourcegraph``, ``sg``, ``sg-mcp``, ...), or a tool
    carrying Sourcegraph's ``sg_`` prefix."""
    s = server.lower()
    if "sourcegraph" in s or s == "sg" or s.startswith(("sg-", "sg_")):
        return True
    return tool.startswith("sg_") and tool[3:] in TOOLS


def tool_name(tool: str) -> str:
    return tool[3:] if tool.startswith("sg_") else tool


def _shown(content: str) -> list[int]:
    """Numbers of the lines a numbered printout shows: not the empty trailer, not the
    ``... [chunk truncated]`` marker (numbered with the first line it stands for)."""
    return [n for n, body in numbered(content, _LINE, drop_trailer=True)
            if body.strip() != _TRUNCATED]


def _numbered_content(content: str, file: str, start: Any) -> list[int]:
    """Line numbers a printed chunk shows: its numbered lines without the empty trailer or the
    truncation marker; an unnumbered chunk with a ``startLine`` counts its lines from there."""
    if numbered(content, _LINE):
        return _shown(content)
    if isinstance(start, int) and not isinstance(start, bool) and start >= 1:
        lines = printed_lines(content)
        return list(range(start, start + len(lines)))
    return []


def read_file(call: Call) -> Reading:
    out = Reading()
    doc = result_json(call)
    content = doc.get("content") if isinstance(doc, dict) else call.text
    if not isinstance(content, str):
        return out
    url = doc.get("url") if isinstance(doc, dict) else None
    path = repo_path(call.args.get("path"))
    repo = repo_key(call.args.get("repo"))
    m = _BLOB.match(unquote(url)) if isinstance(url, str) else None
    if m:
        path = path or repo_path(m.group("path"))
        repo = repo or repo_key(m.group("repo"))
    if not path:
        out.warnings.append("mcp: sourcegraph read_file without a path; nothing credited")
        return out
    nums = _shown(content)
    out.add(line_views(path, nums), repo)
    if not nums:
        out.mention(path)
    return out


def search(call: Call) -> Reading:
    """``keyword_search``, ``nls_search`` and the navigation tools: blocks of numbered
    chunks."""
    out = Reading()
    doc = result_json(call)
    blocks = doc.get("blocks") if isinstance(doc, dict) else None
    if not isinstance(blocks, list):
        return out
    for block in blocks:
        if not isinstance(block, dict):
            continue
        path = repo_path(block.get("file") or block.get("path"))
        repo = repo_key(block.get("repo"))
        chunks = block.get("chunks")
        nums: list[int] = []
        for chunk in chunks if isinstance(chunks, list) else []:
            if isinstance(chunk, dict) and isinstance(chunk.get("content"), str) and path:
                nums.extend(_numbered_content(chunk["content"], path, chunk.get("startLine")))
        if path and nums:
            out.add(line_views(path, nums), repo)
        elif path:
            out.mention(path)
    return out


def navigation(call: Call) -> Reading:
    """``go_to_definition`` / ``find_references``: search blocks where the result has them;
    else every object carrying a file and numbered content (the generic reader's rule), whose
    views are guesses: counted in ``guessed`` and in the warnings, as the generic reader's."""
    out = search(call)
    if out.views or out.mentions:
        return out
    doc = result_json(call)
    repo = repo_key(call.args.get("repo"))
    for obj, _ in walk(doc):
        path = repo_path(obj.get("file") or obj.get("path"))
        content = obj.get("content") or obj.get("snippet")
        if not path:
            continue
        nums = _numbered_content(content, path, obj.get("startLine")) \
            if isinstance(content, str) else []
        if nums:
            out.add(line_views(path, nums), repo_key(obj.get("repo")) or repo)
        else:
            out.mention(path)
    if out.views:
        # no real result of these tools has been seen: these views are guesses, counted as the
        # generic reader's are
        out.guessed = len(out.views)
        out.warnings.append(f"mcp: {call.server}/{call.tool} without search blocks, read by the "
                            f"generic reader's rule: {out.guessed} views guessed")
    return out


def list_files(call: Call) -> Reading:
    out = Reading()
    doc = result_json(call)
    for obj, _ in walk(doc):
        if obj.get("isDirectory") is False:
            out.mention(repo_path(obj.get("path")))
    return out


def history(call: Call) -> Reading:
    """Commits and diffs show other revisions' lines: the files they name are mentions."""
    out = Reading()
    for obj, _ in walk(result_json(call)):
        for key in ("file", "path", "newPath", "oldPath", "filePath"):
            out.mention(repo_path(obj.get(key)))
    return out


TOOLS: dict[str, Reader] = {
    "read_file": read_file,
    "keyword_search": search,
    "nls_search": search,
    "go_to_definition": navigation,
    "find_references": navigation,
    "list_files": list_files,
    "commit_search": history,
    "diff_search": history,
    "compare_revisions": history,
    "list_repos": nothing,
    "list_refs": nothing,
    "get_contributor_repos": nothing,
    "deepsearch": nothing,
    "deepsearch_read": nothing,
    "evaluator": nothing,
    "code_finder": nothing,
}
