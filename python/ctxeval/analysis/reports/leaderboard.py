"""The leaderboard: one row per run (and per ``--by`` group), the ContextBench layout.

Macro columns are means over instances with nulls left out (and counted); micro columns rebuild
Σ intersection / Σ size through ``_core.score`` so that the engine's empty-set conventions hold
for aggregates too. Trajectory metrics, sizes and usage are always means over instances.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ... import _core
from ...errors import InputError
from .column_sets import COLUMN_SETS, expand, legend, set_names
from .rows import field_value, group_rows, numbers, repeated, scored_rows
from .table import Cell, Column, Report, Row, Table

GRANS = ("file", "symbol", "span", "line")
_GRAN_LABEL = {"file": "File", "symbol": "Sym", "span": "Span", "line": "Line"}
_STAT_LABEL = {"coverage": "cov", "precision": "prec", "f1": "F1", "recall": "rec"}


def _columns() -> dict[str, Column]:
    cols: list[Column] = [Column("n", "n", None, 0, "instances scored (ok + agent failures)"),
                          Column("agent_failures", "fail", None, 0, "agent failures (scored 0)"),
                          Column("errors", "err", None, 0, "evaluator errors (left out)")]
    for g in GRANS:
        for s in ("coverage", "precision", "f1"):
            cols.append(Column(f"{g}.{s}", f"{_GRAN_LABEL[g]} {_STAT_LABEL[s]}", "higher"))
    for lvl, prefix in (("", "EditLoc"), ("file.", "EditLoc file")):
        for s in ("recall", "precision", "f1"):
            cols.append(Column(f"editloc.{lvl}{s}", f"{prefix} {_STAT_LABEL[s]}", "higher"))
    cols += [Column("files", "#files", None, 1, "mean final predicted files"),
             Column("lines", "#lines", None, 1, "mean final predicted lines"),
             Column("steps", "steps", None, 1, "mean steps")]
    for g in GRANS:
        cols.append(Column(f"auc.{g}", f"AUC {g}", "higher", 3, "mean AUC-coverage"))
    for g in GRANS:
        cols.append(Column(f"redundancy.{g}", f"Red. {g}", "lower", 3, "mean redundancy"))
    cols += [Column("resolved", "resolved", "higher", 3, "resolved rate"),
             Column("input_tokens", "in tok", "lower", 0, "mean input tokens"),
             Column("output_tokens", "out tok", "lower", 0, "mean output tokens"),
             Column("cost", "cost", "lower", 4, "mean cost"),
             Column("mean_score", "score", "higher", 3, "mean of the score field"),
             Column("pass_rate", "pass", "higher", 3, "pass rate"),
             Column("cost_of_pass", "cost/pass tok", "lower", 0,
                    "output tokens per passing instance"),
             Column("cost_of_pass_cost", "cost/pass", "lower", 4, "cost per passing instance"),
             Column("token_efficiency", "tok eff", "higher", 3,
                    "mean score x (100 / mean input tokens)^0.1"),
             Column("pareto", "Pareto", "lower", 0, "Pareto rank on (score, cost)")]
    return {c.key: c for c in cols}


COLUMNS: dict[str, Column] = _columns()

#: The compact default (``column_sets.COLUMN_SETS["default"]``); ``--metrics full`` is the
#: 28 columns that were the default before.
DEFAULT_METRICS: tuple[str, ...] = COLUMN_SETS["default"]

#: columns whose value is a micro ratio when --micro is given.
MICRO_KEYS = frozenset(
    [f"{g}.{s}" for g in GRANS for s in ("coverage", "precision", "f1")]
    + [f"editloc.{lvl}{s}" for lvl in ("", "file.") for s in ("recall", "precision", "f1")])

_COST_KEYS = ("mean_score", "pass_rate", "cost_of_pass", "cost_of_pass_cost",
              "token_efficiency", "pareto")


@dataclass(frozen=True, slots=True)
class CostOptions:
    """How tokens.py scores a run: the score field, and what counts as a pass."""

    score_field: str = "final.line.f1"
    threshold: float | None = None
    use_resolved: bool | None = None  # None: when the rows record resolution
    pareto_cost: str = "auto"  # auto | cost | input_tokens | output_tokens


def select_metrics(spec: str | Sequence[str] | None) -> list[Column]:
    """Columns named by ``--metrics``: names of column sets (:mod:`.column_sets`), column keys
    or shell patterns such as ``line.*``, mixed, in order."""
    if spec is None:
        return [COLUMNS[k] for k in DEFAULT_METRICS]
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    out: list[Column] = []
    for item in filter(None, items):
        hits = expand(item, list(COLUMNS))
        if hits is None:
            hits = [k for k in COLUMNS if fnmatch.fnmatchcase(k, item)]
        if not hits:
            raise InputError(f"unknown metric {item!r}; column sets: {', '.join(set_names())}; "
                             f"columns: {', '.join(COLUMNS)}", field="--metrics")
        out.extend(COLUMNS[k] for k in hits if COLUMNS[k] not in out)
    return out


# ----------------------------------------------------------------------------- per-column values


def _macro(values: list[Any], ci: bool) -> Cell:
    stats = importlib.import_module("ctxeval.analysis.stats")
    vals, nulls = numbers(values)
    cell = Cell(stats.mean(vals), n=len(vals), nulls=nulls)
    if ci and vals:
        got = stats.bootstrap_ci(vals)
        cell.ci = (float(got[0]), float(got[1])) if got else None
    return cell


def _counts(part: dict[str, Any] | None) -> tuple[int, int, int] | None:
    """(intersection, gold_size, pred_size) of a metric, None unless all three are integers.
    Negative counts are kept: the ContextBench evaluator writes some (a reversed prediction
    range gives pred_size -3 in the parity suite) and its own micro sums include them."""
    if not isinstance(part, dict):
        return None
    got = [part.get(k) for k in ("intersection", "gold_size", "pred_size")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in got):
        return None
    return got[0], got[1], got[2]


def _micro(parts: list[dict[str, Any] | None], stat: str, preset: str) -> Cell:
    present = [c for c in map(_counts, parts) if c is not None]
    if not present:
        return Cell(None, 0, len(parts))
    score = _core.score(sum(c[0] for c in present), sum(c[1] for c in present),
                        sum(c[2] for c in present), preset)
    value = score["coverage" if stat == "recall" else stat]
    return Cell(value, n=len(present), nulls=len(parts) - len(present))


def _metric_part(row: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The dict holding (intersection, gold_size, pred_size) behind a ratio column."""
    head, _, rest = key.partition(".")
    if head == "editloc":
        e = row.get("editloc")
        if not isinstance(e, dict):
            return None
        return e.get("file") if rest.startswith("file.") else e
    final = row.get("final")
    return final.get(head) if isinstance(final, dict) else None


_FIELD_OF: dict[str, Callable[[dict[str, Any]], Any]] = {
    "files": lambda r: field_value(r, "final.file.pred_size"),
    "lines": lambda r: field_value(r, "final.line.pred_size"),
    "steps": lambda r: r.get("num_steps"),
    "input_tokens": lambda r: field_value(r, "usage.input_tokens"),
    "output_tokens": lambda r: field_value(r, "usage.output_tokens"),
    "cost": lambda r: field_value(r, "usage.cost"),
    "resolved": lambda r: None if r.get("resolved") is None else float(bool(r["resolved"])),
}


def _value_of(row: dict[str, Any], key: str) -> Any:
    if key in _FIELD_OF:
        return _FIELD_OF[key](row)
    head, _, rest = key.partition(".")
    if head == "auc":
        return field_value(row, f"trajectory.auc_coverage.{rest}")
    if head == "redundancy":
        return field_value(row, f"trajectory.redundancy.{rest}")
    part = _metric_part(row, key)
    return None if part is None else part.get(key.rsplit(".", 1)[1])


def _use_resolved(rows: Sequence[dict[str, Any]], opts: CostOptions) -> bool:
    """Pass on resolved when asked, or by default when no threshold is given and the rows
    record resolution; decided once for all runs so that their pass rates are comparable."""
    if opts.use_resolved is not None:
        return opts.use_resolved
    return opts.threshold is None and any(r.get("resolved") is not None for r in rows)


def _threshold(opts: CostOptions) -> float:
    if opts.threshold is not None:
        return opts.threshold
    return float(importlib.import_module("ctxeval.analysis.tokens").DEFAULT_THRESHOLD)


def _cost_cells(rows: list[dict[str, Any]], opts: CostOptions, use_resolved: bool
                ) -> dict[str, Cell]:
    tokens = importlib.import_module("ctxeval.analysis.tokens")
    m = tokens.run_cost_metrics(rows, score_field=opts.score_field, threshold=opts.threshold,
                                use_resolved=use_resolved)
    n = len(rows)
    n_pass = int(m.get("n_pass_known") or 0)
    n_score = int(m.get("n_scored") or 0)
    no_pass = "no_pass" if m.get("no_pass") else None
    return {
        "mean_score": Cell(m.get("mean_score"), n_score, n - n_score),
        "pass_rate": Cell(m.get("pass_rate"), n_pass, n - n_pass),
        "cost_of_pass": Cell(m.get("cost_of_pass_tokens"), n_pass, n - n_pass, flag=no_pass),
        "cost_of_pass_cost": Cell(m.get("cost_of_pass_cost"), n_pass, n - n_pass,
                                  flag=no_pass),
        "token_efficiency": Cell(m.get("token_efficiency"), n_score, n - n_score),
    }


def _pareto(table_rows: list[Row], opts: CostOptions, block_key: str | None) -> str:
    """Fill the Pareto rank per block from the score and cost cells; returns the cost used."""
    cost_key = opts.pareto_cost
    if cost_key == "auto":
        have_cost = all(r.cells.get("cost") and r.cells["cost"].value is not None
                        for r in table_rows)
        cost_key = "cost" if have_cost else "input_tokens"
    tokens = importlib.import_module("ctxeval.analysis.tokens")
    blocks: dict[str, list[Row]] = {}
    for r in table_rows:
        blocks.setdefault(r.labels.get(block_key, "") if block_key else "", []).append(r)
    for members in blocks.values():
        points = {}
        for r in members:
            q = r.cells["mean_score"].value
            c = r.cells[cost_key].value
            if q is not None and c is not None:
                points[r.labels["run"]] = (float(q), float(c))
        ranks = tokens.pareto_ranks(points) if points else {}
        for r in members:
            rank = ranks.get(r.labels["run"])
            r.cells["pareto"] = Cell(rank, len(points) if rank is not None else 0)
    return cost_key


def _plural(n: int | None, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def build_leaderboard(rows: Sequence[dict[str, Any]], *, by: str | None = None,
                      metrics: str | Sequence[str] | None = None, micro: bool = False,
                      ci: bool = False, cost: CostOptions | None = None) -> Report:
    """The leaderboard report of result rows (see the module doc for what each column means)."""
    columns = select_metrics(metrics)
    keys = {c.key for c in columns}
    cost = cost or CostOptions()
    want_cost = bool(keys & set(_COST_KEYS))
    table_rows: list[Row] = []
    presets = list(dict.fromkeys(str(r["preset"]) for r in rows if r.get("preset")))
    use_resolved = _use_resolved(rows, cost)
    counts: list[str] = []
    for (run, group), members in group_rows(rows, by).items():
        scored, errors = scored_rows(members)
        preset = next((str(r["preset"]) for r in members if r.get("preset")), "strict")
        labels = {"run": run}
        if by:
            labels[by] = group
        cells: dict[str, Cell] = {
            "n": Cell(len(scored), len(scored)),
            "agent_failures": Cell(sum(r.get("status") == "agent_failure" for r in scored),
                                   len(scored)),
            "errors": Cell(errors, errors),
        }
        for col in columns:
            if col.key in cells or col.key in _COST_KEYS:
                continue
            if micro and col.key in MICRO_KEYS:
                cells[col.key] = _micro([_metric_part(r, col.key) for r in scored],
                                        col.key.rsplit(".", 1)[1], preset)
            else:
                cells[col.key] = _macro([_value_of(r, col.key) for r in scored], ci)
        if want_cost:
            cells.update(_cost_cells(scored, cost, use_resolved) if scored else
                         {k: Cell(None) for k in _COST_KEYS if k != "pareto"})
            for k in ("cost", "input_tokens", "output_tokens"):
                if k not in cells:
                    cells[k] = _macro([_value_of(r, k) for r in scored], False)
        table_rows.append(Row(labels, cells))
        failed = cells["agent_failures"].value
        if errors or failed:
            who = " / ".join(labels.values())
            counts.append(f"run {who}: {_plural(errors, 'evaluator error')} left out, "
                          f"{_plural(failed, 'agent failure')} scored 0")
    notes = [
        ("micro averages (Σ intersection / Σ size) for final-context and EditLoc columns"
         if micro else "macro means over instances")
        + "; AUC, redundancy, sizes and usage are means over instances; nulls are left out "
          "and counted; evaluator errors are left out of every average",
    ]
    notes += counts
    again = repeated(rows)
    if again:
        notes.append(f"{again} rows repeat a run and instance and are averaged in, as the "
                     "ContextBench evaluator counts a repeated record (its preset's rows)")
    proxy = sum(1 for r in rows if r.get("gold_kind") == "patch")
    if proxy:
        notes.append(f"{proxy} rows are scored against the gold patch's edit locations "
                     "(no gold context annotated: gold_kind patch)")
    notes.append(legend(columns))
    if ci:
        notes.append("[lo, hi]: bootstrap 95% interval of the mean"
                     + (" (not computed for micro ratios)" if micro else ""))
    cost_used = None
    if want_cost:
        cost_used = _pareto(table_rows, cost, by) if "pareto" in keys else None
        notes.append(f"score field: {cost.score_field}; pass: "
                     + ("resolved" if use_resolved else
                        f"score >= {_threshold(cost)}")
                     + "; 'inf': no instance passed"
                     + (f"; Pareto on (score, {cost_used})" if cost_used else ""))
    for r in table_rows:
        for k in list(r.cells):
            if k not in keys:
                del r.cells[k]
    label_keys = [("run", "run")] + ([(by, by)] if by else [])
    table = Table("leaderboard", "Leaderboard", label_keys, columns, table_rows,
                  block_key=by)
    return Report("leaderboard", [table], notes,
                  meta={"aggregation": "micro" if micro else "macro",
                        "preset": presets[0] if len(presets) == 1 else presets,
                        "by": by, "pareto_cost": cost_used})
