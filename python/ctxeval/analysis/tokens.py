"""Token, cost and pass metrics of a run (``spec/metrics.md``, "Token, cost and answer metrics").

The formulas are those of the reference documents the spec defers to:

- ``cost_of_pass = total output tokens / number of passing instances`` (arXiv:2504.13359); no
  pass means infinity, written here as None with ``no_pass: True`` (JSON has no Infinity).
- ``token_efficiency = mean(score) * (100 / mean(input_tokens)) ** 0.1`` and
  ``token_efficiency_raw = mean(score) / (mean(input_tokens) / 1000)``.
- A pass is ``score >= threshold`` (default 0.7, the reference's default) or, with
  ``use_resolved``, the row's ``resolved`` flag.

Which rows count: ``ok`` and ``agent_failure`` rows (an agent failure is a scored 0 and a
fail); ``error`` rows are left out and counted. Each mean is taken over the rows where its value
is known (usage is null, never 0, when the agent recorded none), and the number of such rows is
returned beside it (``n_input_tokens`` ...), so a table can say when usage was incomplete
(``usage_complete: False``). The totals of cost of pass are over the rows whose pass outcome is
known (score defined, or ``resolved`` not null), the same rows as the pass count. An undefined
value (no rows, mean input tokens of 0) is None with a flag, never an infinity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .stats import mean

__all__ = [
    "DEFAULT_THRESHOLD",
    "USAGE_FIELDS",
    "cost_metrics_by_run",
    "get_path",
    "pareto_front",
    "pareto_ranks",
    "run_cost_metrics",
]

#: Pass threshold of the reference CostOfPass/PassRate metrics.
DEFAULT_THRESHOLD = 0.7
USAGE_FIELDS = ("input_tokens", "output_tokens", "cost", "api_calls")

_MISSING = object()


def get_path(row: Mapping[str, Any], path: str, default: Any = None) -> Any:
    """The value at a dotted path (``final.line.f1``); ``default`` where any step is absent or
    not an object."""
    cur: Any = row
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return default
        cur = cur[part]
    return cur


def _number(v: Any) -> float | None:
    """A numeric value as float; booleans count as 0/1 (``resolved``); anything else None."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        return float(v)
    return None


def _total(values: list[float]) -> float | None:
    return math.fsum(values) if values else None


def run_cost_metrics(rows: Sequence[Mapping[str, Any]], *, score_field: str = "final.line.f1",
                     threshold: float | None = None,
                     use_resolved: bool = False) -> dict[str, Any]:
    """Quality, pass and cost aggregates of the rows of one run (see the module docstring).

    Raises ValueError when the rows belong to more than one run: pooling runs silently would
    make every number meaningless.
    """
    runs = {r.get("run") for r in rows if r.get("run") is not None}
    if len(runs) > 1:
        raise ValueError(f"rows of several runs given ({', '.join(sorted(map(str, runs)))}); "
                         "group them by run first (cost_metrics_by_run)")
    thr = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    scored = [r for r in rows if r.get("status") != "error"]
    n_errors = len(rows) - len(scored)

    scores = [_number(get_path(r, score_field)) for r in scored]
    known_scores = [s for s in scores if s is not None]

    if use_resolved:
        passes = [None if r.get("resolved") is None else bool(r.get("resolved"))
                  for r in scored]
    else:
        passes = [None if s is None else s >= thr for s in scores]
    known_passes = [p for p in passes if p is not None]
    num_passing = sum(known_passes)

    usage: dict[str, list[float]] = {f: [] for f in USAGE_FIELDS}
    for r in scored:
        u = r.get("usage")
        for f in USAGE_FIELDS:
            v = _number(u.get(f)) if isinstance(u, Mapping) else None
            if v is not None:
                usage[f].append(v)

    # cost of pass: spending and passes over the same rows, those whose outcome is known
    spent: dict[str, list[float]] = {"output_tokens": [], "cost": []}
    for r, p in zip(scored, passes, strict=True):
        u = r.get("usage")
        if p is None or not isinstance(u, Mapping):
            continue
        for f in spent:
            v = _number(u.get(f))
            if v is not None:
                spent[f].append(v)

    mean_score = mean(known_scores)
    mean_in = mean(usage["input_tokens"])
    total_out = _total(spent["output_tokens"])
    total_cost = _total(spent["cost"])

    no_pass = bool(known_passes) and num_passing == 0
    cop_tokens = total_out / num_passing if total_out is not None and num_passing else None
    cop_cost = total_cost / num_passing if total_cost is not None and num_passing else None

    zero_input = mean_in is not None and mean_in <= 0
    if mean_score is not None and mean_in is not None and not zero_input:
        eff: float | None = mean_score * (100.0 / mean_in) ** 0.1
        eff_raw: float | None = mean_score / (mean_in / 1000.0)
    else:
        eff = eff_raw = None

    out: dict[str, Any] = {
        "score_field": score_field,
        "pass_basis": "resolved" if use_resolved else "score>=threshold",
        "threshold": None if use_resolved else thr,
        "n": len(scored),
        "n_errors": n_errors,
        "agent_failures": sum(r.get("status") == "agent_failure" for r in scored),
        "n_scored": len(known_scores),
        "mean_score": mean_score,
        "n_pass_known": len(known_passes),
        "num_passing": num_passing,
        "pass_rate": num_passing / len(known_passes) if known_passes else None,
        "total_output_tokens": total_out,
        "total_cost": total_cost,
        "cost_of_pass_tokens": cop_tokens,
        "cost_of_pass_cost": cop_cost,
        "no_pass": no_pass,
        "token_efficiency": eff,
        "token_efficiency_raw": eff_raw,
        "zero_input_tokens": zero_input,
        "mean_input_tokens": mean_in,
        "mean_output_tokens": mean(usage["output_tokens"]),
        "mean_cost": mean(usage["cost"]),
        "mean_api_calls": mean(usage["api_calls"]),
    }
    for f in USAGE_FIELDS:
        out[f"n_{f}"] = len(usage[f])
    out["usage_complete"] = all(len(usage[f]) == len(scored)
                                for f in ("input_tokens", "output_tokens"))
    return out


def cost_metrics_by_run(rows: Sequence[Mapping[str, Any]], *, score_field: str = "final.line.f1",
                        threshold: float | None = None,
                        use_resolved: bool = False) -> dict[str, dict[str, Any]]:
    """:func:`run_cost_metrics` per run, runs in order of first appearance."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(str(r.get("run")), []).append(r)
    return {run: run_cost_metrics(rs, score_field=score_field, threshold=threshold,
                                  use_resolved=use_resolved)
            for run, rs in groups.items()}


def pareto_ranks(points: Mapping[str, tuple[float | None, float | None]]
                 ) -> dict[str, int | None]:
    """Rank of each run on (quality, cost): 1 + the number of runs strictly better on both
    (higher quality and lower cost). A run with an undefined coordinate has no rank (None) and
    is not compared with the others."""
    defined = {k: (float(q), float(c)) for k, (q, c) in points.items()
               if _number(q) is not None and _number(c) is not None}
    ranks: dict[str, int | None] = {}
    for name in points:
        if name not in defined:
            ranks[name] = None
            continue
        q, c = defined[name]
        ranks[name] = 1 + sum(1 for other, (q2, c2) in defined.items()
                              if other != name and q2 > q and c2 < c)
    return ranks


def pareto_front(points: Mapping[str, tuple[float | None, float | None]]) -> list[str]:
    """The runs of rank 1, in input order."""
    return [k for k, r in pareto_ranks(points).items() if r == 1]
