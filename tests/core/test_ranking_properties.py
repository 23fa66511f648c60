"""Property tests of the ranked metrics: the Rust core against the oracles in ``tests/oracle.py``
(the IR definitions on Python sets, and LocAgent's arithmetic transcribed with lists), and the
engine's first-seen rankings and budgeted recall against the set-based engine oracle."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_properties import core_input, instances

import oracle
from ctxeval import _core

LAWS = settings(max_examples=500, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
KEYS = ("acc", "recall", "precision", "ndcg", "map")

items = st.lists(st.integers(0, 9), max_size=14)
k_lists = st.lists(st.integers(1, 12), min_size=1, max_size=4, unique=True)


def approx(x):
    return None if x is None else pytest.approx(x, rel=1e-12, abs=1e-15)


def same(got: dict, want: dict) -> None:
    assert got["mrr"] == approx(want["mrr"])
    assert got["first_hit"] == want["first_hit"]
    assert (got["gold_size"], got["pred_size"]) == (want["gold_size"], want["pred_size"])
    assert [a["k"] for a in got["at"]] == [a["k"] for a in want["at"]]
    for g, w in zip(got["at"], want["at"], strict=True):
        for key in KEYS:
            assert g[key] == approx(w[key]), (g["k"], key)


@LAWS
@given(items, items, k_lists)
def test_strict_matches_the_set_definitions(pred, gold, ks):
    same(_core.rank_scores(pred, gold, ks, "strict"), oracle.rank_strict(pred, gold, ks))


@LAWS
@given(items, items, k_lists)
def test_locagent_matches_its_arithmetic(pred, gold, ks):
    same(_core.rank_scores(pred, gold, ks, "locagent"), oracle.rank_locagent(pred, gold, ks))


@LAWS
@given(items, st.lists(st.integers(0, 9), min_size=1, max_size=8), k_lists)
def test_strict_laws(pred, gold, ks):
    """Values in [0, 1]; Acc, Recall and nDCG's hits never fall as k grows; Acc@k = 1 exactly
    when Recall@k = 1; duplicates change nothing; MRR is the first hit's reciprocal rank."""
    got = _core.rank_scores(pred, gold, sorted(ks), "strict")
    for a in got["at"]:
        assert all(0.0 <= a[key] <= 1.0 + 1e-12 for key in KEYS)
        assert (a["acc"] == 1.0) == (a["recall"] == pytest.approx(1.0))
    accs = [a["acc"] for a in got["at"]]
    recalls = [a["recall"] for a in got["at"]]
    assert accs == sorted(accs) and recalls == sorted(recalls)
    assert _core.rank_scores(pred + pred[::-1], gold + gold, sorted(ks), "strict") == got
    hit = got["first_hit"]
    assert got["mrr"] == (1 / hit if hit else 0.0)


@LAWS
@given(st.lists(st.integers(0, 9), max_size=12, unique=True),
       st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True), k_lists)
def test_the_rules_agree_where_the_quirks_do_not_bite(pred, gold, ks):
    """Without repeats, Acc and nDCG agree wherever the gold fits in k, Recall wherever it fits
    in the largest k, Precision always; MAP@k differs by its divisor (k against min(k, |G|))."""
    s = _core.rank_scores(pred, gold, ks, "strict")
    la = _core.rank_scores(pred, gold, ks, "locagent")
    for a, b in zip(s["at"], la["at"], strict=True):
        k = a["k"]
        assert a["precision"] == approx(b["precision"])
        if len(gold) <= k:
            assert a["acc"] == b["acc"]
            assert a["ndcg"] == approx(b["ndcg"])
            assert a["map"] * min(k, len(gold)) == approx(b["map"] * k)
        if len(gold) <= max(ks):
            assert a["recall"] == approx(b["recall"])


# ---------------------------------------------------------------- through the engine

@st.composite
def ranked_instances(draw):
    files, inst = draw(instances())
    n_items = draw(st.integers(1, 6))
    file_items = [draw(st.integers(-1, n_items - 1)) for _ in files]
    symbol_items = [[draw(st.integers(-1, n_items - 1)) for _ in f.symbols] for f in files]
    gold_items = draw(st.lists(st.integers(0, n_items - 1), max_size=4))
    declared = draw(st.one_of(st.none(), st.lists(st.integers(0, n_items - 1), max_size=6)))
    ks = sorted(draw(k_lists))
    budget = draw(st.integers(0, 12))
    return files, inst, file_items, symbol_items, gold_items, declared, ks, budget


@LAWS
@given(ranked_instances())
def test_engine_rankings_match_first_seen_order(case):
    files, inst, file_items, symbol_items, gold, declared, ks, budget = case
    levels = [
        {"gold": gold, "pred": None, "file_items": file_items},
        {"gold": gold, "pred": None, "symbol_items": symbol_items},
        {"gold": gold, "pred": declared, "file_items": file_items,
         "symbol_items": symbol_items},
    ]
    ranking = {"ks": ks, "rules": "strict", "levels": levels, "budget": budget}
    got = _core.evaluate_instance(core_input(files, {**inst, "ranking": ranking}), "strict")
    rk = got["ranking"]
    orders = [oracle.first_seen(files, inst["steps"], file_items, None),
              oracle.first_seen(files, inst["steps"], None, symbol_items),
              oracle.first_seen(files, inst["steps"], file_items, symbol_items)]
    for lvl, order, spec in zip(rk["levels"], orders, levels, strict=True):
        pred = spec["pred"] if spec["pred"] is not None else [item for item, _ in order]
        same(lvl, oracle.rank_strict(pred, gold, ks))
        assert lvl["declared"] == (spec["pred"] is not None)
        want_step = next((step for item, step in order if item in gold), None)
        assert lvl["first_gold_step"] == want_step
    views = [v for vs in inst["steps"] for v in vs["lines"]]
    assert rk["budget"] == pytest.approx(oracle.budget(files, views, inst["gold"], budget))
    # a file's items as native i64 bytes (what the evaluation passes) read the same
    packed = [array("q", items).tobytes() for items in symbol_items]
    levels_b = [{**lv, "symbol_items": packed} if "symbol_items" in lv else lv for lv in levels]
    got_b = _core.evaluate_instance(
        core_input(files, {**inst, "ranking": {**ranking, "levels": levels_b}}), "strict")
    assert got_b["ranking"] == rk


@LAWS
@given(ranked_instances(), st.lists(st.tuples(st.integers(0, 2), st.integers(-2, 12),
                                               st.one_of(st.none(), st.integers(-2, 12))),
                                     max_size=5))
def test_engine_budget_of_declared_lines(case, lines):
    files, inst, file_items, _symbol_items, gold, _declared, ks, budget = case
    lines = [(f % len(files), a, b) for f, a, b in lines]
    ranking = {"ks": ks, "levels": [{"gold": gold, "file_items": file_items}],
               "budget": budget, "budget_lines": lines}
    got = _core.evaluate_instance(core_input(files, {**inst, "ranking": ranking}), "strict")
    assert got["ranking"]["budget"] == pytest.approx(
        oracle.budget(files, lines, inst["gold"], budget))


def test_no_ranking_input_gives_no_block():
    got = _core.evaluate_instance({"files": [], "steps": []}, "strict")
    assert got["ranking"] is None


@st.composite
def nested_spans(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[bool]]:
    """The definitions of a file as a tree gives them: spans nested or apart (some equal,
    as a node and its only child can be), in any order, some of them functions."""
    spans: list[tuple[int, int]] = []

    def grow(start: int, end: int, depth: int) -> None:
        at = start
        for _ in range(draw(st.integers(0, 3 if depth < 3 else 0))):
            if at >= end:
                break
            s = draw(st.integers(at, end))
            e = draw(st.integers(s, end))
            spans.append((s, e))
            if draw(st.booleans()):
                spans.append((s, e))  # an equal span
            grow(s, e, depth + 1)
            at = e + 1

    grow(0, draw(st.integers(0, 400)), 0)
    order = draw(st.permutations(range(len(spans))))
    return [spans[k] for k in order], draw(st.lists(st.booleans(), min_size=len(spans),
                                                    max_size=len(spans)))


@LAWS
@given(nested_spans())
def test_definition_owners_match_the_set_oracle(case) -> None:
    spans, functions = case
    assert _core.definition_owners(spans, functions) == oracle.definition_owners(spans,
                                                                                  functions)
