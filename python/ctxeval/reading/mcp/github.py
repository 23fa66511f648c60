"""GitHub's MCP server (``github/github-mcp-server``, ``pkg/github/repositories.go`` and
``search.go``).

- ``get_file_contents`` (``owner``, ``repo``, ``path``, ``ref``/``sha``): since June 2025 a
  text file comes back as a text part ``successfully downloaded text file (SHA: <blob>)`` and
  an embedded resource holding the file's text, which Claude Code shows the model as
  ``[Resource from <server> at repo://<owner>/<repo>/.../contents/<path>] <text>``. The text has
  no line numbers and is the file at the ref asked for (the default branch when none is), so
  it is placed in the file at the base commit: where it fits, its lines are credited; where the
  file differs, only the file. A directory comes back as a JSON list of entries (mentions); a
  binary file, a file over 1 MB (a resource link) or a client that does not pass the resource
  on (``[non-text content: resource]``) shows nothing. Before June 2025 the result was the
  GitHub contents object, whose ``content`` is base64: the model saw no line of it, and
  nothing is credited.
- ``search_code`` (``query``): JSON ``{"total_count", "items": [{"path", "repository",
  "text_matches": [{"fragment", ...}]}]}``; each ``fragment`` is an excerpt of the file
  without line numbers that may start and end inside a line: placed on its own (one view per
  fragment, its first and last line allowed to be parts of lines). Items without fragments
  are mentions.
- ``create_or_update_file``, ``push_files``, ``delete_file``: they change the remote
  repository, not the agent's checkout: neither views nor edits.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import (
    Call,
    Reader,
    Reading,
    load_json,
    nothing,
    printed_lines,
    repo_path,
    resources,
    text_view,
)

KIND = "github"

_DOWNLOADED = re.compile(r"^successfully downloaded (?:text|empty|binary) file \(SHA: [0-9a-f]+\)"
                         r".*$", re.M)
_CONTENTS_URI = re.compile(r"^repo://(?P<owner>[^/]+)/(?P<repo>[^/]+)/.*?contents/(?P<path>.+)$")


def recognises(server: str, tool: str) -> bool:
    return "github" in server.lower()


def _repo(args: dict[str, Any]) -> str | None:
    owner, name = args.get("owner"), args.get("repo")
    if isinstance(owner, str) and isinstance(name, str) and owner and name:
        return f"{owner}/{name}"
    return name if isinstance(name, str) and "/" in name else None


def get_file_contents(call: Call) -> Reading:
    out = Reading()
    repo = _repo(call.args)
    path = repo_path(call.args.get("path"))
    found = resources(call.text)
    if found:
        for uri, body in found:
            m = _CONTENTS_URI.match(uri)
            file = repo_path(m.group("path")) if m else path
            if not file:
                continue
            view = text_view(file, [printed_lines(body)])
            if view is not None:
                out.add([view], f"{m.group('owner')}/{m.group('repo')}" if m else repo)
            else:
                out.mention(file)
        return out
    doc = load_json(call.text)
    if isinstance(doc, list):  # a directory
        for entry in doc:
            if isinstance(entry, dict) and entry.get("type") == "file":
                out.mention(repo_path(entry.get("path")))
        return out
    if isinstance(doc, dict):  # the contents object of older releases: base64, nothing shown
        out.mention(repo_path(doc.get("path")) or path)
        return out
    body = _DOWNLOADED.sub("", call.text, count=1)
    if _DOWNLOADED.search(call.text) and body.strip() and path \
            and not body.strip().startswith("[non-text content"):
        # a client that appended the resource's text without Claude Code's prefix
        view = text_view(path, [printed_lines(body.lstrip("\n"))])
        if view is not None:
            out.add([view], repo)
            return out
    if path:
        out.mention(path)
    return out


def search_code(call: Call) -> Reading:
    out = Reading()
    doc = load_json(call.text)
    items = doc.get("items") if isinstance(doc, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        path = repo_path(item.get("path"))
        repo = item.get("repository")
        if isinstance(repo, dict):
            repo = repo.get("full_name")
        repo = repo if isinstance(repo, str) else None
        if not path:
            continue
        shown = False
        for match in item.get("text_matches") or []:
            frag = match.get("fragment") if isinstance(match, dict) else None
            if isinstance(frag, str) and match.get("property", "content") == "content":
                # a fragment may start inside a line, and end inside one unless it ends with
                # a newline
                cut = "start" if frag.endswith("\n") else "both"
                view = text_view(path, [printed_lines(frag)], partial=[cut])
                if view is not None:
                    out.add([view], repo)
                    shown = True
        if not shown:
            out.mention(path)
    return out


TOOLS: dict[str, Reader] = {
    "get_file_contents": get_file_contents,
    "search_code": search_code,
    "create_or_update_file": nothing,
    "push_files": nothing,
    "delete_file": nothing,
}
