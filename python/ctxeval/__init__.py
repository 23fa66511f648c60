"""ctxeval: score how coding agents find context.

The native core (:mod:`ctxeval._core`, Rust) does all interval and metric arithmetic; it is
re-exported here. The Python layer reads inputs (gold, trajectories, repositories), reports and
drives the command line.
"""

from ._core import (
    LineIndex,
    __version__,
    bytes_difference,
    bytes_intersection,
    bytes_measure,
    bytes_normalize,
    bytes_union,
    evaluate_batch,
    evaluate_instance,
    lines_difference,
    lines_from_numbers,
    lines_intersection,
    lines_measure,
    lines_normalize,
    lines_union,
    score,
)

__all__ = [
    "LineIndex",
    "__version__",
    "bytes_difference",
    "bytes_intersection",
    "bytes_measure",
    "bytes_normalize",
    "bytes_union",
    "evaluate_batch",
    "evaluate_instance",
    "lines_difference",
    "lines_from_numbers",
    "lines_intersection",
    "lines_measure",
    "lines_normalize",
    "lines_union",
    "score",
]
