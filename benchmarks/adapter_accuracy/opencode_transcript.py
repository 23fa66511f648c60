"""Rebuild the tool parts of a real OpenCode session from its Markdown transcript.

OpenCode writes a transcript of a session (``/export``, ``session-ses_XXXX.md``) with
``formatPart`` (``packages/opencode/src/cli/cmd/tui/util/transcript.ts``): every tool part as
``**Tool: <name>**``, ``**Input:**`` and the input as indented JSON, then ``**Output:**`` and
``state.output`` verbatim between code fences (``**Error:**`` and ``state.error`` for a failed
call). Until early 2026 the same, inside an outer fence (``Tool: <name>`` on its own line).
People commit these transcripts; they are the only public record found of OpenCode runs on
real code. This module turns one back into the ``opencode export`` document OpenCode would have
written for its tool parts (the text parts and usage are not needed), so that ctxeval's
``opencode`` adapter reads real tool outputs exactly as it reads them in a session store.

A tool output is taken up to its closing fence (see ``_close``): a ``read`` or ``grep`` output
cannot hold a fence line (every line of theirs starts with a number or a path); a ``bash``
output that printed one (``cat`` of a Markdown file) is told from its closing fence by what
follows.

    python opencode_transcript.py TRANSCRIPT.md --show [--from N --to M]   # for annotating
    python opencode_transcript.py TRANSCRIPT.md --export OUT.json --cwd DIR
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass

_HEADER = re.compile(r"^(?:\*\*Tool: (?P<new>[^*\n]+)\*\*|Tool: (?P<old>\S+))$", re.M)
_INPUT = "**Input:**\n```json\n"
_OUTPUT = re.compile(r"\*\*(?P<kind>Output|Error):\*\*\n```\n")


@dataclass
class Call:
    index: int
    tool: str
    input: dict
    output: str | None  # None: the call failed (the transcript shows its error) or printed none
    error: str | None
    at: int  # offset of the header in the transcript


def calls(text: str) -> list[Call]:
    heads = list(_HEADER.finditer(text))
    out: list[Call] = []
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        block = text[m.end():end]
        tool = (m.group("new") or m.group("old")).strip()
        inp: dict = {}
        i = block.find(_INPUT)
        pos = 0
        if 0 <= i < 40:
            j = block.find("\n```", i + len(_INPUT))
            inp = json.loads(block[i + len(_INPUT):j])
            pos = j + 4
        o = _OUTPUT.search(block, pos)
        output = error = None
        if o is not None and o.start() - pos < 8:
            body = block[o.end():_close(block, o.end() - 1, outer=m.group("old") is not None)]
            if o.group("kind") == "Output":
                output = body
            else:
                error = body
        out.append(Call(len(out), tool, inp, output, error, m.start()))
    return out


def _close(block: str, start: int, outer: bool) -> int:
    """Where the output fence that opened at ``start`` closes. An output may print fence lines
    of its own (``cat`` of a Markdown file): in the older layout the output's fence is closed
    and the outer fence right after it (two fence lines in a row); in the newer one the
    closing fence is followed by a blank line and the next part (a tool, a thinking block, the
    end of the message) or by the end of the message."""
    if outer:
        k = block.find("\n```\n```", start)
        return k if k >= 0 else _first(block, start)
    k = start
    while (k := block.find("\n```\n", k)) >= 0:
        after = block[k + 5:]
        if not after.strip() or after.startswith(("\n**Tool:", "\n---\n", "\n_Thinking:_")):
            return k
        k += 1
    return _first(block, start)


def _first(block: str, start: int) -> int:
    k = block.find("\n```\n", start)
    return len(block) if k < 0 else k


def export(text: str, cwd: str, session: str = "ses_transcript") -> dict:
    """An ``opencode export`` document holding one assistant message per tool call."""
    messages = []
    for c in calls(text):
        mid = f"msg_{c.index:05d}"
        state: dict = {"input": c.input, "time": {"start": 0, "end": 0}}
        if c.error is not None:
            state.update(status="error", error=c.error)
        else:
            state.update(status="completed", output=c.output or "", title="", metadata={})
        part = {"id": f"prt_{c.index:05d}", "sessionID": session, "messageID": mid,
                "type": "tool", "callID": f"call_{c.index:05d}", "tool": c.tool, "state": state}
        info = {"id": mid, "sessionID": session, "role": "assistant",
                "path": {"cwd": cwd, "root": cwd}, "modelID": "unknown"}
        messages.append({"info": info, "parts": [part]})
    return {"info": {"id": session, "directory": cwd, "version": "transcript"},
            "messages": messages}


def _show(text: str, lo: int, hi: int) -> None:
    for c in calls(text)[lo:hi]:
        print(f"=== [{c.index}] {c.tool} {json.dumps(c.input, ensure_ascii=False)[:300]}")
        if c.error is not None:
            print(f"    ERROR: {c.error[:200]!r}")
            continue
        lines = (c.output or "").split("\n")
        if c.tool in ("grep", "glob", "list") or len(lines) <= 40:
            for ln in lines:
                print(f"    | {ln[:160]}")
        else:
            for ln in lines[:6]:
                print(f"    | {ln[:160]}")
            print(f"    | ... ({len(lines) - 12} lines) ...")
            for ln in lines[-6:]:
                print(f"    | {ln[:160]}")


if __name__ == "__main__":
    src = sys.argv[1]
    with open(src, encoding="utf-8") as fh:
        body = fh.read()
    args = sys.argv[2:]
    if "--show" in args:
        lo = int(args[args.index("--from") + 1]) if "--from" in args else 0
        hi = int(args[args.index("--to") + 1]) if "--to" in args else 10**9
        _show(body, lo, hi)
    elif "--export" in args:
        cwd = args[args.index("--cwd") + 1]
        with open(args[args.index("--export") + 1], "w", encoding="utf-8") as fh:
            json.dump(export(body, cwd), fh, indent=1, ensure_ascii=False)
