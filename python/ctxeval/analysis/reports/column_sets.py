"""Named sets of leaderboard columns, and the legend of the columns a table shows.

The leaderboard has 37 columns; all of them at once is 269 characters wide, which a terminal
wraps and a paper page cannot hold. So the default is a compact set (fits 100 columns of
text with run names of up to 17 characters, and a LaTeX ``table*``), and ``--metrics`` takes
set names as well as column keys and patterns, mixed (``--metrics contextbench``,
``--metrics default,cost``, ``--metrics final,auc.*``):

``default``
    instances, F1 of the final context at file, symbol and line level, EditLoc F1, AUC and
    redundancy at line level, resolved rate, cost.
``contextbench``
    the main table of the ContextBench paper ("Main ContextBench leaderboard", in its
    evaluator's README, ``anonymousUser2026/ContextBench``, ``Context-Bench/README.md``):
    coverage and precision at file, symbol and span level and of EditLoc, context size in
    files and lines, AUC-coverage and redundancy (span: on its one-step Agentless rows the
    AUC equals span coverage, 0.056), Pass@1 (resolved). Macro averages, as the paper's; for
    the paper's own conventions evaluate with ``--preset contextbench``.
``contextbench-backbone``
    its backbone table: coverage, precision and F1 at file, symbol and span level, AUC and
    redundancy.
``final``, ``trajectory``, ``editloc``, ``usage``
    every column of one part of the rows.
``full``
    the 28 columns that were the default before issue 23; ``all``: every column.
"""

from __future__ import annotations

from .table import Column

GRANS = ("file", "symbol", "span", "line")

COLUMN_SETS: dict[str, tuple[str, ...]] = {
    "default": ("n", "file.f1", "symbol.f1", "line.f1", "editloc.f1", "auc.line",
                "redundancy.line", "resolved", "cost"),
    "contextbench": ("file.coverage", "file.precision", "symbol.coverage", "symbol.precision",
                     "span.coverage", "span.precision", "editloc.recall", "editloc.precision",
                     "files", "lines", "auc.span", "redundancy.span", "resolved"),
    "contextbench-backbone": (
        *(f"{g}.{s}" for g in ("file", "symbol", "span") for s in ("coverage", "precision",
                                                                     "f1")),
        "auc.span", "redundancy.span"),
    "final": ("n", *(f"{g}.{s}" for g in GRANS for s in ("coverage", "precision", "f1"))),
    "trajectory": ("n", "steps", *(f"auc.{g}" for g in GRANS),
                   *(f"redundancy.{g}" for g in GRANS)),
    "editloc": ("n", *(f"editloc.{lvl}{s}" for lvl in ("", "file.")
                       for s in ("recall", "precision", "f1"))),
    "usage": ("n", "resolved", "input_tokens", "output_tokens", "cost", "mean_score",
              "pass_rate", "cost_of_pass", "cost_of_pass_cost", "token_efficiency", "pareto"),
    "full": ("n", *(f"{g}.{s}" for g in GRANS for s in ("coverage", "precision", "f1")),
             "editloc.recall", "editloc.precision", "editloc.f1",
             "files", "lines", "steps", "auc.line", "redundancy.line", "resolved",
             "input_tokens", "output_tokens", "cost", "cost_of_pass", "token_efficiency"),
}


def set_names() -> list[str]:
    return [*COLUMN_SETS, "all"]


def expand(item: str, keys: list[str]) -> list[str] | None:
    """The column keys a set name stands for (``all``: ``keys``, every column), None when
    ``item`` names no set."""
    if item == "all":
        return list(keys)
    got = COLUMN_SETS.get(item)
    return list(got) if got is not None else None


#: What an abbreviation in a column label means (the legend names only those shown).
ABBREVIATIONS: dict[str, str] = {
    "n": "instances scored (ok rows and agent failures)",
    "cov": "coverage: the share of the gold context the final context holds (recall)",
    "prec": "precision: the share of the final context that is gold",
    "rec": "recall",
    "F1": "harmonic mean of precision and coverage",
    "Sym": "symbol: definitions (functions, classes, methods) at the base commit",
    "Span": "byte ranges",
    "EditLoc": "the lines the model patch edits against those the gold patch edits",
    "AUC": "area under the per-step coverage curve (mean coverage over the steps)",
    "Red.": "redundancy: the share of viewing spent on what was already seen (lower is better)",
    "#files": "files in the final context", "#lines": "lines in the final context",
    "steps": "agent steps", "resolved": "share of instances resolved (where the rows record it)",
    "in tok": "input tokens", "out tok": "output tokens",
    "cost": "cost as the agent recorded it (mean per instance)",
    "score": "mean of the score field (--score)", "pass": "pass rate (--pass-threshold)",
    "cost/pass tok": "output tokens per passing instance ('inf': none passed)",
    "cost/pass": "cost per passing instance",
    "tok eff": "token efficiency: mean score x (100 / mean input tokens)^0.1",
    "Pareto": "Pareto rank on (score, cost); 1 is the front",
    "fail": "agent failures (scored 0)", "err": "evaluator errors (left out of every mean)",
}


def legend(columns: list[Column]) -> str:
    """One line explaining the abbreviations of the labels shown, in the order met."""
    seen: dict[str, str] = {}
    for col in columns:
        label = col.label
        if label in ABBREVIATIONS:
            seen.setdefault(label, ABBREVIATIONS[label])
            continue
        for word in label.split():
            if word in ABBREVIATIONS:
                seen.setdefault(word, ABBREVIATIONS[word])
    return "columns: " + "; ".join(f"{k} = {v}" for k, v in seen.items())
