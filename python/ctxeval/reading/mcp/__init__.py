"""What an agent saw through MCP tools: one reader per (server, tool) behind one registry.

Agents in 2026 find context through retrieval servers as much as through their own tools. A
call to an MCP tool reaches the log under a name that carries the server and the tool
(``mcp__<server>__<tool>`` in Claude Code and ATIF; an ``mcp_tool_call`` item with ``server`` and
``tool`` in Codex; ``<server>__<tool>`` or a ``serverName`` field in other CLIs). Every agent
adapter hands such a call to :func:`read_call`, which finds the reader of that server's tool and
returns what the result displayed, so that one server's output shapes are read by one piece of
code whatever agent called it.

Contract of :func:`read_call` (every adapter relies on it):

- ``server``: the server's name as the agent configured it (``sourcegraph``, ``github``,
  ``filesystem``, ``serena``, ...); readers are looked up by the server's *kind*, recognised
  from that name and from the tool's name, so ``sg``/``sourcegraph-mcp`` reach the Sourcegraph
  readers;
- ``tool``: the tool's name without the server prefix;
- ``args``: the call's arguments (a dict; anything else is read as ``{}``);
- ``text``: the text the model was shown (text content parts joined with newlines); a
  ``<persisted-output>`` result (Claude Code kept it on disk) is read from its preview, up to
  its last whole line;
- ``is_error``: the tool or the client reported a failure: nothing was shown;
- ``cwd``: the agent's working directory, where known;
- ``structured``: the result's ``structuredContent`` where the log kept it, else None.

It returns an :class:`McpReading` and never raises.

Servers and what each tool credits are listed in ``docs/mcp-tools.md``; the modules are
:mod:`.sourcegraph`, :mod:`.github`, :mod:`.filesystem`, :mod:`.serena`, and :mod:`.generic`
for tools no module knows (its views are guesses, counted in the row's warnings).

**Repositories.** A retrieval server addresses its own copy of a repository
(``github.com/sg-evals/linux--07c4ee00`` plus a path); a view's file is the path inside it,
and the reading says which repository each view came from (``McpReading.origins``). One run
may read several repositories: :class:`McpRun` (what adapters use for a whole run) settles
that at the end. The run's own repository is the instance's when the adapter knows it, else
the one the run took most line views from; views of every other repository are kept as
``repo://<repository>/<path>``, which names no file of the instance's tree and credits
nothing, and the row's warnings name them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from ...model import Step, View
from . import filesystem, generic, github, serena, sourcegraph
from ._common import Call, Reading, persisted, preview_text, same_repo

__all__ = ["KINDS", "McpReading", "McpRun", "read_call", "server_kind", "split_tool_name"]

_CLAUDE_NAME = re.compile(r"^mcp__(?P<server>[^_].*?)__(?P<tool>.+)$")
# Claude Code's answer when an MCP result is over its limit: the result goes to a file
_SAVED = re.compile(r"exceeds maximum allowed tokens\. Output has been saved to (?P<path>\S+?)\.?$",
                    re.MULTILINE)
# a line of a numbered printout as a shell command shows it (``N: text``), after an optional
# ``grep -n`` prefix of the command's own (``K:`` or ``K-``)
_SAVED_LINE = re.compile(r"^(?:\d+[:-])?(?P<n>\d+):(?: (?P<body>.*))?$")

#: The server kinds with a reader module, in the order they are tried.
KINDS: tuple[ModuleType, ...] = (sourcegraph, github, serena, filesystem)


@dataclass(slots=True)
class McpReading:
    """What one MCP tool result displayed.

    ``views`` are the lines shown (numbered lines as line views; unnumbered file text as a
    file-level view carrying ``text`` to be placed at the base commit, as shell output is);
    ``mentions`` are paths named without content (listings, search hits without lines): kept for
    the record, never credited. ``warnings`` say what was guessed or skipped; adapters put them
    in the trajectory's ``extra["read_warnings"]``, which reaches the row's ``warnings``.
    ``origins`` give, per view, the repository its file belongs to (None: the agent's own
    file system, or not said); ``edits`` the files the call changed; ``kind`` the reader that
    read it (``sourcegraph``, ..., ``generic``); ``guessed`` how many views the generic reader
    inferred.
    """

    views: list[View] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    origins: list[str | None] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    kind: str | None = None
    guessed: int = 0


def split_tool_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of a tool named ``mcp__<server>__<tool>`` (Claude Code, ATIF);
    None for any other name."""
    m = _CLAUDE_NAME.match(name or "")
    return (m.group("server"), m.group("tool")) if m else None


def server_kind(server: str, tool: str) -> ModuleType:
    """The reader module of a server: the first kind that recognises the server's name (or
    the tool's), else :mod:`.generic`."""
    for mod in KINDS:
        if mod.recognises(server or "", tool or ""):
            return mod
    return generic


def read_call(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
              cwd: str | None = None, structured: Any = None) -> McpReading:
    """The views of one MCP tool result (see the module docstring). Never raises."""
    server = server if isinstance(server, str) else ""
    tool = tool if isinstance(tool, str) else ""
    mod = server_kind(server, tool)
    if is_error:
        return McpReading(kind=mod.KIND)
    name = mod.tool_name(tool) if hasattr(mod, "tool_name") else tool
    reader = getattr(mod, "TOOLS", {}).get(name)
    if reader is None:
        mod, reader = generic, generic.read
    text = text if isinstance(text, str) else ""
    notes: list[str] = []
    kept = persisted(text)
    if kept is not None:
        # Claude Code kept the result on disk: the model saw its first characters only
        text, structured = preview_text(kept), None
        notes.append(f"mcp: {server}/{tool}: a result Claude Code kept on disk; only its "
                     "preview was shown, read up to its last whole line")
    call = Call(server, name, args if isinstance(args, dict) else {}, text, structured, cwd)
    try:
        got: Reading = reader(call)
    except Exception as exc:  # a reader must never stop a run: the call shows nothing
        return McpReading(kind=mod.KIND, warnings=[
            f"mcp: {server}/{tool}: result not read ({type(exc).__name__}); nothing credited"])
    warnings = [*notes, *got.warnings]
    if mod is generic and got.views:
        warnings.append(f"mcp: {server}/{tool} read by the generic reader: "
                        f"{len(got.views)} views guessed")
    return McpReading(views=got.views, mentions=got.mentions, warnings=warnings,
                      origins=got.origins or [None] * len(got.views), edits=got.edits,
                      kind=mod.KIND, guessed=got.guessed)


class McpRun:
    """The MCP calls of one run, read call by call and settled together at the end.

    Adapters call :meth:`observe` for each MCP call (it sets the step's views and edits) and
    :meth:`finish` once the run is read; ``finish`` qualifies the views of repositories other
    than the run's own (see the module docstring) and returns the run's warnings, repeated
    ones counted once."""

    def __init__(self, repo: str | None = None) -> None:
        self.repo = repo
        self._read: list[tuple[Step, McpReading]] = []
        self._warnings: Counter[str] = Counter()
        #: results Claude Code saved to a file instead of showing them: path -> the call
        self.saved: dict[str, tuple[str, str, dict[str, Any]]] = {}

    def observe(self, step: Step, server: str, tool: str, args: Any, text: str, *,
                is_error: bool = False, cwd: str | None = None, structured: Any = None
                ) -> McpReading:
        reading = read_call(server, tool, args, text, is_error=is_error, cwd=cwd,
                            structured=structured)
        m = _SAVED.search(text) if isinstance(text, str) and not reading.views else None
        kept = persisted(text) if isinstance(text, str) else None
        path = m.group("path") if m is not None else kept.path if kept is not None else None
        if path:
            self.saved[path] = (server, tool, args if isinstance(args, dict) else {})
        step.views = list(reading.views)
        if reading.edits:
            step.edits = list(dict.fromkeys([*step.edits, *reading.edits]))
        self._read.append((step, reading))
        self._warnings.update(reading.warnings)
        return reading

    def saved_in(self, *refs: str | None) -> str | None:
        """The saved result a command or path names (its path, or its file name), if any."""
        for path in self.saved:
            name = path.rsplit("/", 1)[-1]
            if any(isinstance(r, str) and (path in r or name in r) for r in refs):
                return path
        return None

    def observe_saved(self, step: Step, path: str, text: str, *, whole: bool = False
                      ) -> McpReading:
        """A command's output over a saved result (``jq -r .content <file> | sed -n ...``):
        the lines it printed with the server's own numbers (``N: text``) are views of the file
        the saved call read, as if the server had shown them; other output shows nothing. Only
        a Sourcegraph ``read_file`` names one file: other saved results credit nothing.
        ``whole``: ``text`` is the saved content itself (a Read of the file), whose last empty
        number is the server's trailer; a command's selection of lines has none."""
        server, tool, args = self.saved[path]
        kind = server_kind(server, tool)
        name = kind.tool_name(tool) if hasattr(kind, "tool_name") else tool
        lines, last = [], 0
        for raw in (text or "").splitlines():
            m = _SAVED_LINE.match(raw)
            if m:
                lines.append(f"{m.group('n')}: {m.group('body') or ''}")
                last = int(m.group("n"))
        if lines and not whole:
            lines.append(f"{last + 1}: ")  # stands for the trailer the reader leaves out
        if kind is not sourcegraph or name != "read_file" or not lines:
            reading = McpReading(kind=kind.KIND)
        else:
            reading = read_call(server, tool, args, "\n".join(lines))
            reading.warnings.append("mcp: lines of a result Claude Code saved to a file, "
                                    "read back by a command, credited to the file it read")
        step.views = list(reading.views)
        self._read.append((step, reading))
        self._warnings.update(reading.warnings)
        return reading

    def finish(self) -> list[str]:
        out = [w if n == 1 else f"{w} (x{n})" for w, n in self._warnings.items()]
        out.extend(self._settle())
        return out

    def _settle(self) -> list[str]:
        lines: Counter[str] = Counter()
        first: dict[str, int] = {}
        for _, reading in self._read:
            for v, origin in zip(reading.views, reading.origins, strict=False):
                if origin:
                    first.setdefault(origin, len(first))
                    lines[origin] += _size(v)
        repos = sorted(first, key=first.__getitem__)
        if len(repos) < 2 and not (self.repo and repos and not same_repo(self.repo, repos[0])):
            return []
        own = next((r for r in repos if self.repo and same_repo(self.repo, r)), None)
        if own is None and self.repo is None:
            own = max(repos, key=lambda r: (lines[r], -first[r]))
        others = [r for r in repos if r != own]
        for step, reading in self._read:
            # an MCP step's views are its reading's, in order (marking views after edits
            # replaces them in place)
            for k, origin in enumerate(reading.origins[:len(step.views)]):
                if origin in others:
                    v = step.views[k]
                    step.views[k] = replace(v, file=f"repo://{origin}/{v.file}")
        why = "the instance's" if self.repo else "taken as the instance's: the one read most"
        head = f"{own} ({why})" if own else "none of them is the instance's"
        return [f"mcp: the run read {len(repos)} repositories; {head}; views of "
                f"{', '.join(others)} are kept as repo://<repository>/<path> and credit nothing"]


def _size(v: View) -> int:
    if v.start_line is None:
        return 1
    return (v.end_line or v.start_line) - v.start_line + 1
