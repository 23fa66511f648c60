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
- ``text``: the text the model was shown (text content parts joined with newlines);
- ``is_error``: the tool or the client reported a failure: nothing was shown;
- ``cwd``: the agent's working directory, where known;
- ``structured``: the result's ``structuredContent`` where the log kept it, else None.

It returns an :class:`McpReading` and never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...model import View

_CLAUDE_NAME = re.compile(r"^mcp__(?P<server>[^_].*?)__(?P<tool>.+)$")


@dataclass(slots=True)
class McpReading:
    """What one MCP tool result displayed.

    ``views`` are the lines shown (numbered lines as line views; unnumbered file text as a
    file-level view carrying ``text`` to be placed at the base commit, as shell output is);
    ``mentions`` are paths named without content (listings, search hits without lines): kept for
    the record, never credited. ``warnings`` say what was guessed or skipped; adapters put them
    in the trajectory's ``extra["read_warnings"]``, which reaches the row's ``warnings``.
    """

    views: list[View] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def split_tool_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of a tool named ``mcp__<server>__<tool>`` (Claude Code, ATIF);
    None for any other name."""
    m = _CLAUDE_NAME.match(name or "")
    return (m.group("server"), m.group("tool")) if m else None


def read_call(server: str, tool: str, args: Any, text: str, *, is_error: bool = False,
              cwd: str | None = None, structured: Any = None) -> McpReading:
    """The views of one MCP tool result (see the module docstring). Never raises."""
    if is_error:
        return McpReading()
    return McpReading(warnings=[f"mcp: no reader for {server}/{tool}; nothing credited"])
