"""The reference filesystem server (``modelcontextprotocol/servers``, ``src/filesystem``:
``index.ts`` and ``lib.ts``).

It reads the agent's own file system, so its paths are made relative to the working directory
as the Read tool's are, and what it prints is the working copy (a file the agent changed
earlier is marked post-edit by the adapter, as for any other view).

- ``read_text_file`` / ``read_file`` (``path``, ``head``, ``tail``): the file's text without
  line numbers (``readFileContent``; ``headFile`` the first N lines, ``tailFile`` the last N,
  joined with ``\\n``). The whole file, or its head, starts at line 1: lines 1..k, k the lines
  printed (as for ``cat``/``head``). A tail's position is the file's length, known only at the
  base commit: its lines are placed there.
- ``read_multiple_files`` (``paths``): each file as ``<path>:\\n<text>\\n``, joined by
  ``\\n---\\n``; a file that failed prints ``<path>: Error - <message>`` and shows nothing. Read
  by the requested paths in order, so a file whose text holds ``---`` is not cut.
- ``search_files``, ``list_directory``, ``list_directory_with_sizes``, ``directory_tree``,
  ``get_file_info``, ``list_allowed_directories``: listings and metadata, mentions at most.
- ``write_file``, ``edit_file`` (unless ``dryRun``), ``create_directory``, ``move_file``:
  edits of the files they name; their output is a confirmation or a diff, not a view.
- ``read_media_file``: images and audio, nothing.
"""

from __future__ import annotations

from typing import Any

from ._common import Call, Reader, Reading, local_path, printed_lines, span_views, strs, text_view

KIND = "filesystem"


def recognises(server: str, tool: str) -> bool:
    s = server.lower()
    return "filesystem" in s or s in ("fs", "files") or s.endswith(("-fs", "_fs"))


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _file_text(file: str, body: str, head: int | None, tail: int | None) -> Reading:
    out = Reading()
    lines = printed_lines(body)
    if tail is not None and head is None:
        view = text_view(file, [lines])
        if view is not None:
            out.add([view])
        return out
    if head is not None:
        lines = lines[:head]
    views = span_views(file, 1, len(lines))
    out.add(views)
    if not views:
        out.mention(file)
    return out


def read_text_file(call: Call) -> Reading:
    file = local_path(call.args.get("path"), call.cwd)
    if not file:
        return Reading()
    return _file_text(file, call.text, _int(call.args.get("head")), _int(call.args.get("tail")))


def read_multiple_files(call: Call) -> Reading:
    out = Reading()
    text = call.text
    pos = 0
    entries: list[tuple[int, str, bool]] = []  # (start, path, failed)
    for p in strs(call.args.get("paths")):
        ok, bad = text.find(f"{p}:\n", pos), text.find(f"{p}: Error - ", pos)
        if ok < 0 and bad < 0:
            continue
        failed = ok < 0 or 0 <= bad < ok
        k = bad if failed else ok
        entries.append((k, p, failed))
        pos = k + len(p) + 1
    for i, (k, p, failed) in enumerate(entries):
        if failed:
            continue
        end = entries[i + 1][0] - len("\n---\n") if i + 1 < len(entries) else len(text)
        body = text[k + len(p) + 2:max(end, k + len(p) + 2)]
        if body.endswith("\n"):
            body = body[:-1]  # the newline each entry ends with
        file = local_path(p, call.cwd)
        if file:
            got = _file_text(file, body, None, None)
            out.add(got.views)
            out.mentions.extend(m for m in got.mentions if m not in out.mentions)
    return out


def listing(call: Call) -> Reading:
    return Reading()


def edit(call: Call) -> Reading:
    out = Reading()
    if call.tool == "edit_file" and call.args.get("dryRun") is True:
        return out
    for key in ("path", "source", "destination"):
        f = local_path(call.args.get(key), call.cwd)
        if f and call.tool != "create_directory":
            out.edits.append(f)
    return out


TOOLS: dict[str, Reader] = {
    "read_text_file": read_text_file,
    "read_file": read_text_file,
    "read_multiple_files": read_multiple_files,
    "search_files": listing,
    "list_directory": listing,
    "list_directory_with_sizes": listing,
    "directory_tree": listing,
    "get_file_info": listing,
    "list_allowed_directories": listing,
    "read_media_file": listing,
    "write_file": edit,
    "edit_file": edit,
    "move_file": edit,
    "create_directory": edit,
}
