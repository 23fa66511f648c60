"""ctxeval: score how coding agents find context.

The native core (:mod:`ctxeval._core`, Rust) does all interval and metric arithmetic, and
parses and names definitions; it is re-exported here. Its source is the Rust workspace beside
this tree: ``rust/ctxeval-core`` (the engine, a plain Rust crate) and ``rust/ctxeval-py`` (the
PyO3 bindings that become ``ctxeval._core``; ``_core.pyi`` describes them).

The Python layer follows one instance through four stages, each a subpackage that imports
only the ones below it (``docs/architecture.md``)::

    truth       gold, the repository at the base commit, patches, definitions
    reading     trajectories as the agents wrote them → neutral views
    evaluation  plan → extract → score: result rows, and the files they are written to
    analysis    reports, comparisons, statistics, the viewer

with :mod:`ctxeval.api` and :mod:`ctxeval.cli` on top, and the shared model
(:mod:`ctxeval.model`, :mod:`ctxeval.errors`, ...) at the bottom. :func:`evaluate`,
:func:`report` and :func:`compare` mirror the ``ctxeval`` commands::

    result = ctxeval.evaluate("gold.jsonl", {"agent-a": "runs/a"}, repos="repos")
    print(ctxeval.analysis.reports.render(result.report(), "md"))
"""

from typing import TYPE_CHECKING, Any

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
    definition_owners,
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
    rank_scores,
    score,
    stats_auroc,
    stats_auroc_ci,
    stats_betainc,
    stats_binom_cdf,
    stats_bootstrap_mean_ci,
    stats_cliffs_delta,
    stats_cohens_dz,
    stats_correlation_p,
    stats_fsum,
    stats_ln_gamma,
    stats_mcnemar,
    stats_mt_random,
    stats_outcome_many,
    stats_pearson,
    stats_randomization_test,
    stats_spearman,
    stats_spearman_matrix,
)

if TYPE_CHECKING:
    from .api import Evaluation, compare, evaluate, load_results, report
    from .evaluation.scorer import Row, Scorer

#: Names imported on first use (PEP 562), not by ``import ctxeval``: the API and its stages
#: import most of the package (0.2 s, a tenth of a cold evaluation), which the ``ctxeval``
#: command, importing this package first, does not need.
_LAZY = {"Evaluation": ".api", "compare": ".api", "evaluate": ".api", "load_results": ".api",
         "report": ".api", "Row": ".evaluation.scorer", "Scorer": ".evaluation.scorer"}
_STAGES = ("truth", "reading", "evaluation", "analysis", "api", "cli")


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    if name in _STAGES:  # ``ctxeval.analysis.reports...`` after a bare ``import ctxeval``
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_STAGES})


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
    "definition_owners",
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
    "rank_scores",
    "report",
    "score",
    "stats_auroc",
    "stats_auroc_ci",
    "stats_betainc",
    "stats_binom_cdf",
    "stats_bootstrap_mean_ci",
    "stats_cliffs_delta",
    "stats_cohens_dz",
    "stats_correlation_p",
    "stats_fsum",
    "stats_ln_gamma",
    "stats_mcnemar",
    "stats_mt_random",
    "stats_outcome_many",
    "stats_pearson",
    "stats_randomization_test",
    "stats_spearman",
    "stats_spearman_matrix",
]
