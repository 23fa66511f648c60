"""ctxeval: score how coding agents find context.

The native core (:mod:`ctxeval._core`, Rust) does all interval and metric arithmetic, and
parses and names definitions; it is re-exported here. The Python layer reads inputs (gold,
trajectories, repositories), reports and drives the command line; :func:`evaluate`,
:func:`report` and :func:`compare` mirror the ``ctxeval`` commands::

    result = ctxeval.evaluate("gold.jsonl", {"agent-a": "runs/a"}, repos="repos")
    print(ctxeval.reports.render(result.report(), "md"))
"""

from ._core import (
    TREE_SITTER_LANGUAGE_VERSION,
    DefinitionExtractor,
    LineIndex,
    __version__,
    bytes_difference,
    bytes_intersection,
    bytes_measure,
    bytes_normalize,
    bytes_union,
    carry_over,
    evaluate_batch,
    evaluate_instance,
    line_edits,
    line_edits_within,
    lines_difference,
    lines_from_numbers,
    lines_intersection,
    lines_measure,
    lines_merge_raw,
    lines_normalize,
    lines_union,
    score,
)
from .api import Evaluation, compare, evaluate, load_results, report
from .scorer import Row, Scorer

__all__ = [
    "TREE_SITTER_LANGUAGE_VERSION",
    "DefinitionExtractor",
    "Evaluation",
    "LineIndex",
    "Row",
    "Scorer",
    "__version__",
    "bytes_difference",
    "bytes_intersection",
    "bytes_measure",
    "bytes_normalize",
    "bytes_union",
    "carry_over",
    "compare",
    "evaluate",
    "evaluate_batch",
    "evaluate_instance",
    "line_edits",
    "line_edits_within",
    "lines_difference",
    "lines_from_numbers",
    "lines_intersection",
    "lines_measure",
    "lines_merge_raw",
    "lines_normalize",
    "lines_union",
    "load_results",
    "report",
    "score",
]
