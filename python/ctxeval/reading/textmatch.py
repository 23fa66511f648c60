"""SQuAD-style text overlap (``spec/metrics.md``; the AnswerQuality and retrieval-token seeds).

Used where line numbers cannot be trusted (the content of the final context against the gold
context text, a model patch against the gold patch). Normalisation is SQuAD's, in SQuAD's order:
lower-case, delete punctuation (ASCII ``string.punctuation``, deleted, not replaced by a space,
so ``foo(x)`` becomes ``foox``), delete the articles a/an/the as words, split on white space.

Edge cases follow the AnswerQuality reference: a reference with no tokens scores 1.0 on every
measure; otherwise a prediction with no tokens scores 0.0 on every measure. ``contains`` is
whether the normalised reference is a substring of the normalised prediction (the reference's
case-insensitive substring test, on normalised text so that white space and punctuation
differences do not matter).

Several references or results: the best reference per result (by F1), then the mean over
results; the mean F1 is the mean of per-result F1s, not the F1 of the mean precision and recall.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["MEASURES", "best_overlap", "mean_overlap", "normalize_answer", "overlap", "tokens"]

MEASURES = ("exact_match", "precision", "recall", "f1", "contains")

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    s = s.lower().translate(_PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def tokens(s: str) -> list[str]:
    """Tokens of the normalised text."""
    return normalize_answer(s).split()


def _all(value: float) -> dict[str, float]:
    return dict.fromkeys(MEASURES, value)


def overlap(prediction: str, reference: str) -> dict[str, float]:
    """exact_match, precision, recall, f1, contains of one prediction against one reference."""
    ref = tokens(reference)
    if not ref:
        return _all(1.0)
    pred = tokens(prediction)
    if not pred:
        return _all(0.0)
    ref_text, pred_text = " ".join(ref), " ".join(pred)
    common = sum((Counter(pred) & Counter(ref)).values())
    precision = common / len(pred)
    recall = common / len(ref)
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return {"exact_match": float(pred_text == ref_text), "precision": precision,
            "recall": recall, "f1": f1, "contains": float(ref_text in pred_text)}


def best_overlap(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """Overlap with the reference that gives the highest F1 (the first such on ties); no
    references is treated as one empty reference."""
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not a string")
    best: dict[str, float] | None = None
    for ref in references or [""]:
        cur = overlap(prediction, ref)
        if best is None or cur["f1"] > best["f1"]:
            best = cur
    assert best is not None
    return best


def mean_overlap(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean over results of each result's best overlap; ``n`` is the number of results. No
    results is treated as one empty result (which scores 0 against a non-empty reference)."""
    if isinstance(predictions, str) or isinstance(references, str):
        raise TypeError("predictions and references must be sequences of strings")
    preds = list(predictions) or [""]
    per = [best_overlap(p, references) for p in preds]
    out: dict[str, float] = {m: sum(r[m] for r in per) / len(per) for m in MEASURES}
    out["n"] = len(predictions)
    return out
