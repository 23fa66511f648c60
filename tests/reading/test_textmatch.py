"""ctxeval.reading.textmatch: SQuAD normalisation and token overlap, by hand and on a real patch."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, requires_shared
from ctxeval.reading.textmatch import best_overlap, mean_overlap, normalize_answer, overlap, tokens


@pytest.mark.parametrize(("raw", "norm"), [
    ("The Cat!", "cat"),
    ("An apple, a day.", "apple day"),
    ("  Hello\n\tWORLD  ", "hello world"),
    ("theatre another", "theatre another"),   # articles only as whole words
    ("foo(x) + a.b", "foox ab"),              # punctuation deleted, not replaced by a space
    ("the", ""),
])
def test_normalize_answer(raw: str, norm: str) -> None:
    assert normalize_answer(raw) == norm


def test_reference_example() -> None:
    # AnswerQuality's documented example: tokens (capital, is, paris) against (paris)
    m = overlap("The capital is Paris.", "Paris")
    assert m == pytest.approx({"exact_match": 0.0, "precision": 1 / 3, "recall": 1.0,
                               "f1": 0.5, "contains": 1.0})


def test_exact_match_after_normalisation() -> None:
    m = overlap("The Eiffel Tower!", "eiffel   tower")
    assert m["exact_match"] == 1.0 and m["f1"] == 1.0 and m["contains"] == 1.0


def test_token_multiplicity() -> None:
    # (x, x, y) vs (x, y, y): common = min(2,1) + min(1,2) = 2
    m = overlap("x x y", "x y y")
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert overlap("p q", "r s") == {"exact_match": 0.0, "precision": 0.0, "recall": 0.0,
                                     "f1": 0.0, "contains": 0.0}


def test_empty_reference_and_prediction() -> None:
    assert set(overlap("anything", "").values()) == {1.0}
    assert set(overlap("", "").values()) == {1.0}
    assert set(overlap("", "Paris").values()) == {0.0}
    assert set(overlap("the a an ...", "Paris").values()) == {0.0}


def test_best_overlap_picks_best_reference() -> None:
    m = best_overlap("Paris France", ["London", "Paris", "Lyon France"])
    # Paris: p 1/2, r 1 -> 2/3; Lyon France: p 1/2, r 1/2 -> 1/2
    assert m["f1"] == pytest.approx(2 / 3) and m["recall"] == 1.0
    with pytest.raises(TypeError):
        best_overlap("x", "x")


def test_mean_overlap_autorag_example() -> None:
    # AutoRAG's retrieval token example: gt (do, you, want, to, buy, some) against results of
    # 6, 5, 6 tokens overlapping in 6, 4, 4 tokens.
    m = mean_overlap(["Do you want to buy some?", "I want to buy some",
                      "I want to buy some water"], ["Do you want to buy some?"])
    assert m["n"] == 3
    assert m["precision"] == pytest.approx((1 + 4 / 5 + 4 / 6) / 3)   # 0.8222
    assert m["recall"] == pytest.approx((1 + 4 / 6 + 4 / 6) / 3)      # 0.7778
    # per-result F1: 1, 2*0.8*(2/3)/(0.8+2/3) = 8/11, 2/3 -> mean 0.797979...
    assert m["f1"] == pytest.approx((1 + 8 / 11 + 2 / 3) / 3)
    assert m["f1"] == pytest.approx(0.797979, abs=1e-6)
    # not the F1 of the mean precision and recall (0.79938)
    p, r = m["precision"], m["recall"]
    assert abs(m["f1"] - 2 * p * r / (p + r)) > 1e-3
    assert m["exact_match"] == pytest.approx(1 / 3)


def test_mean_overlap_without_results() -> None:
    m = mean_overlap([], ["gold text"])
    assert m["n"] == 0 and m["f1"] == 0.0


@requires_shared
def test_model_patch_against_gold_patch_real() -> None:
    """psf__requests-2317: the mini-swe-agent (gemini-3-pro) patch makes the gold patch's two
    edits; only the diff metadata differ. Counted by hand from the two patches: the gold patch
    has 63 tokens, of which ``def request(self, method, url,`` (4 tokens: def, requestself,
    method, url) is its own hunk-header context; the model patch has 68 = 63 - 4 + 9 tokens
    (``index d701ff2e..dfce7cf9 100644`` 3, ``from collections import Mapping`` 4, ``class
    Session(SessionRedirectMixin):`` 2). Common 59: precision 59/68, recall 59/63."""
    inst = CORPUS / "psf__requests-2317"
    gold = json.loads((inst / "gold.json").read_text())["patch"]
    model = json.loads((inst / "trajs" / "mini-swe-agent_1.15.0_gemini3pro.traj.json")
                       .read_text())["info"]["submission"]
    assert len(tokens(gold)) == 63 and len(tokens(model)) == 68
    m = overlap(model, gold)
    assert m["precision"] == pytest.approx(59 / 68)
    assert m["recall"] == pytest.approx(59 / 63)
    assert m["f1"] == pytest.approx(118 / 131)
    assert m["exact_match"] == 0.0 and m["contains"] == 0.0
