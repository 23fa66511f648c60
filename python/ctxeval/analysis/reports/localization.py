"""The localization view: the table the localisation papers print (LocAgent, Loc-Bench,
Agentless), from the rows' ``ranking`` blocks.

One row per run (and ``--by`` group): file Acc@1/3/5, module Acc@5/10, function Acc@5/10,
MRR and nDCG@5 of each level (``localization``); every ranked metric at every k of the rows
(``by_k``, what the HTML report plots against k); and when the first gold item was shown and
the budgeted recall (``first_gold``).

Each value is the mean over the rows where it is defined: a null (no gold at that level, an
instance LocAgent's rules leave out, a level that needs a repository that was missing) is left
out and counted. A row whose repository could not be read is an evaluator error, left out of
every other view; when it still has ranked levels (a localiser's output: the file level and the
levels a dataset's gold carries need no repository) they count here, and the notes say how many.
LocAgent prints its numbers rounded to four decimals; so does this view.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...model import PAPER_RANKING, RANKING_LEVELS
from .rows import field_value, group_rows, is_error, numbers
from .table import Cell, Column, Report, Row, Table

METRICS = ("acc", "recall", "precision", "ndcg", "map")
_NAME = {"acc": "Acc", "recall": "Recall", "precision": "P", "ndcg": "nDCG", "map": "MAP",
         "mrr": "MRR"}
_LEVEL = {"file": "File", "module": "Module", "function": "Function"}

#: The paper table's columns: (level, metric key).
PAPER: tuple[tuple[str, str], ...] = (
    *PAPER_RANKING, ("file", "ndcg@5"), ("module", "ndcg@5"), ("function", "ndcg@5"),
)
_KEY = re.compile(r"^(acc|recall|precision|ndcg|map)@(\d+)$")


def _label(level: str, key: str) -> str:
    metric, _, k = key.partition("@")
    return f"{_LEVEL[level]} {_NAME[metric]}" + (f"@{k}" if k else "")


def ranked_rows(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows with a ranking block, and how many of them are evaluator errors (a
    localiser's output whose repository was missing)."""
    ranked = [r for r in rows if isinstance(r.get("ranking"), dict)]
    return ranked, sum(1 for r in ranked if is_error(r))


def ks_of(rows: Sequence[dict[str, Any]]) -> list[int]:
    """Every k the rows' ranking blocks hold, ascending."""
    ks: set[int] = set()
    for r in rows:
        for level in RANKING_LEVELS:
            block = field_value(r, f"ranking.{level}")
            if isinstance(block, dict):
                ks.update(int(m.group(2)) for key in block if (m := _KEY.match(key)))
    return sorted(ks)


def mean_cell(values: list[Any], *, ci: bool = False) -> Cell:
    """The mean of the defined values, with the count and the nulls left out."""
    vals, nulls = numbers(values)
    if not vals:
        return Cell(None, 0, nulls)
    cell = Cell(sum(vals) / len(vals), len(vals), nulls)
    if ci:
        from ..stats import bootstrap_ci

        cell.ci = bootstrap_ci(vals)
    return cell


def build_localization(rows: Sequence[dict[str, Any]], *, by: str | None = None,
                       ci: bool = False) -> Report:
    """The localization view of result rows (see the module docstring)."""
    ranked, errors = ranked_rows(rows)
    ks = ks_of(ranked)
    label = [("run", "run")] + ([(by, by)] if by else [])
    paper_cols = [Column(f"{level}.{key}", _label(level, key), "higher", 4)
                  for level, key in PAPER]
    paper_rows: list[Row] = []
    k_rows: list[Row] = []
    first_rows: list[Row] = []
    k_cols = [Column(f"@{k}", f"@{k}", "higher", 4) for k in ks]
    first_cols = [
        Column("n", "n", None, 0, "rows with a ranking block"),
        *(Column(f"steps_before.{lvl}", f"steps to 1st {lvl}", "lower", 2,
                 f"mean steps before the first gold {lvl} was shown")
          for lvl in RANKING_LEVELS),
        Column("input_tokens.file", "in tok to 1st file", "lower", 0,
               "mean input tokens spent up to the step that showed the first gold file"),
        Column("cost.file", "cost to 1st file", "lower", 4,
               "mean cost up to the step that showed the first gold file"),
        Column("budget.line", "line recall@budget", "higher", 4,
               "gold lines among the first N distinct lines shown"),
        Column("budget.file", "file recall@budget", "higher", 4,
               "gold files with a line among the first N distinct lines shown"),
    ]
    for (run, group), members in group_rows(ranked, by).items():
        base = {"run": run, **({by: group} if by else {})}
        cells = {"n": Cell(len(members), len(members))}
        for level, key in PAPER:
            cells[f"{level}.{key}"] = mean_cell(
                [field_value(r, f"ranking.{level}.{key}") for r in members], ci=ci)
        paper_rows.append(Row(base, cells))
        for level in RANKING_LEVELS:
            for metric in (*METRICS, "mrr"):
                if metric == "mrr":
                    cell = mean_cell([field_value(r, f"ranking.{level}.mrr") for r in members])
                    row_cells = {c.key: cell for c in k_cols}
                else:
                    row_cells = {f"@{k}": mean_cell(
                        [field_value(r, f"ranking.{level}.{metric}@{k}") for r in members])
                        for k in ks}
                k_rows.append(Row({**base, "level": level, "metric": _NAME[metric]},
                                  row_cells))
        fc = {"n": Cell(len(members), len(members))}
        for lvl in RANKING_LEVELS:
            fc[f"steps_before.{lvl}"] = mean_cell(
                [field_value(r, f"ranking.before_first_gold.{lvl}.steps_before")
                 for r in members])
        fc["input_tokens.file"] = mean_cell(
            [field_value(r, "ranking.before_first_gold.file.input_tokens") for r in members])
        fc["cost.file"] = mean_cell(
            [field_value(r, "ranking.before_first_gold.file.cost") for r in members])
        for g in ("line", "file"):
            fc[f"budget.{g}"] = mean_cell([field_value(r, f"ranking.budget.{g}")
                                           for r in members])
        first_rows.append(Row(base, fc))
    n_col = Column("n", "n", None, 0, "rows with a ranking block")
    paper = Table("localization", "Localization (means over instances)", label,
                  [n_col, *paper_cols], paper_rows, block_key=by)
    by_k = Table("by_k", "Ranked metrics against k",
                 [*label, ("level", "level"), ("metric", "metric")], k_cols, k_rows,
                 mark_best=False)
    first = Table("first_gold", "First gold item shown, and the budgeted recall", label,
                  first_cols, first_rows, block_key=by)
    notes = ["means over the rows where a value is defined; nulls (no gold at that level, "
             "left out by the preset, or a level that needs the missing repository) are left "
             "out and counted",
             "Acc@k: every gold item among the first k predictions; MRR over the whole "
             "ranking; the rows' preset decides the definitions (docs/metrics.md, "
             "docs/presets.md)",
             "steps/tokens/cost to the first gold item: means over the rows that showed one; "
             "tokens and cost only where every step up to it recorded them"]
    if errors:
        notes.append(f"{errors} rows are evaluator errors (their repository could not be "
                     "read) whose ranked levels that need no repository are counted here")
    if not ranked:
        notes.append("no row has a ranking block (rows written before ranked metrics, or "
                     "evaluator errors)")
    return Report("localization", [paper, by_k, first], notes,
                  meta={"by": by, "ks": ks})


def metric_curves(rows: Sequence[dict[str, Any]], level: str, metric: str
                  ) -> dict[str, list[tuple[int, float]]]:
    """Per run, (k, mean of ``ranking.<level>.<metric>@k``) at every k with a defined mean:
    what the HTML report plots against k."""
    ranked, _ = ranked_rows(rows)
    ks = ks_of(ranked)
    out: dict[str, list[tuple[int, float]]] = {}
    for (run, _), members in group_rows(ranked, None).items():
        points = []
        for k in ks:
            cell = mean_cell([field_value(r, f"ranking.{level}.{metric}@{k}") for r in members])
            if isinstance(cell.value, float):
                points.append((k, cell.value))
        out[run] = points
    return out
