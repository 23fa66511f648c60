"""``ctxeval evaluate``'s former home: the evaluation now lives in :mod:`ctxeval.evaluation`,
in its three stages (plan → extract → score); these names stay importable from here."""

from __future__ import annotations

from ..truth.extraction import SymbolSettings
from .rows import make_row, text_metrics
from .run import (
    BATCH,
    CHUNK,
    REPO_CACHE_BYTES,
    Evaluator,
    RunSpec,
    Summary,
    _Progress,
    evaluate,
    make_preparer,
)

__all__ = [
    "BATCH",
    "CHUNK",
    "REPO_CACHE_BYTES",
    "Evaluator",
    "RunSpec",
    "Summary",
    "SymbolSettings",
    "_Progress",
    "evaluate",
    "make_preparer",
    "make_row",
    "text_metrics",
]
