"""``ctxeval compare``: paired comparison of runs for research tables (``spec/metrics.md``,
"Comparing runs").

Every run is compared with one baseline on each metric, on the instances the two runs share:

- rows with ``status`` ``ok`` or ``agent_failure`` take part (an agent failure is a scored 0);
  ``error`` rows are left out, so an instance the evaluator could not score is not paired,
  except through their ranked metrics (``ranking.*``), which a localiser's output whose
  repository is missing still has at the levels that need none;
- a metric is read from a row by dotted path (``final.line.f1``, ``trajectory.auc_coverage.line``,
  ``editloc.f1``, ``usage.input_tokens``, ``resolved`` as 0/1); a null on either side drops the
  pair;
- the difference is mean(run) - mean(baseline) over the pairs, with a paired percentile
  bootstrap interval and a paired sign-flip randomization test (:mod:`ctxeval.analysis.stats`);
- Holm–Bonferroni adjusts the p-values over all comparisons of the table (all metrics and
  runs); a comparison is significant when its adjusted p is below ``alpha``;
- wins/ties/losses count the pairs where the run is better/equal/worse than the baseline in the
  metric's direction (lower is better for redundancy, usage and step counts);
- a binary metric (``resolved``, compared by default where the rows record it) is tested with
  McNemar's exact test instead of the randomization test: its wins and losses are the
  discordant pairs; its p-value is Holm-adjusted with the others;
- beside every difference, two effect sizes: Cohen's d of the paired differences (d_z, mean
  over standard deviation) and Cliff's delta of the run's values against the baseline's;
- below five pairs (the outcome view's rule, :data:`ctxeval.analysis.outcome.MIN_N`) the
  interval, the test (so it is not counted by Holm) and both effect sizes are null, never NaN,
  with ``reason: "n < 5"``; the means, the difference and W/T/L are still given;
- :func:`ctxeval.analysis.correlations.metric_correlations` gives Spearman's ρ between the
  compared metrics, pooled over the rows: which metrics say the same thing.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from ..evaluation.rows import has_path
from ..model import PAPER_RANKING
from . import stats
from .correlations import Correlations, metric_correlations, render_correlations
from .outcome import MIN_N
from .tokens import get_path

__all__ = [
    "DEFAULT_METRICS",
    "LOCALIZATION_METRICS",
    "Comparison",
    "add_parser",
    "compare_rows",
    "default_metrics",
    "higher_is_better",
    "records_resolved",
    "render_comparison",
    "run",
]

DEFAULT_METRICS: tuple[str, ...] = (
    "final.file.f1", "final.symbol.f1", "final.span.f1", "final.line.f1",
    "trajectory.auc_coverage.line", "trajectory.redundancy.line", "editloc.f1",
)
FORMATS = ("table", "md", "latex", "json")
DAGGER = "†"
#: ``--metrics localization``: the ranked metrics of the localisation papers' table.
LOCALIZATION_METRICS: tuple[str, ...] = tuple(f"ranking.{level}.{key}"
                                              for level, key in PAPER_RANKING)

_LOWER_BETTER_PARTS = {"redundancy", "usage", "num_steps", "pred_size", "before_first_gold"}


def higher_is_better(metric: str) -> bool:
    """Direction of a metric: lower is better for redundancy, usage (tokens, cost, calls),
    step counts, prediction sizes and what was spent before the first gold item; higher for
    everything else."""
    return not (_LOWER_BETTER_PARTS & set(metric.split(".")))


@dataclass(frozen=True, slots=True)
class Comparison:
    """One metric, one run against the baseline, on their shared instances."""

    metric: str
    run: str
    baseline: str
    n_pairs: int          # shared instances where both values are defined
    n_shared: int         # shared instances (before dropping null pairs)
    mean_a: float | None  # the run's mean over the pairs
    mean_b: float | None  # the baseline's mean over the pairs
    diff: float | None    # mean_a - mean_b
    ci: tuple[float, float] | None  # bootstrap interval of diff at `level`
    p: float | None       # randomization test, two-sided, unadjusted
    p_holm: float | None  # Holm–Bonferroni over the whole table
    significant: bool     # p_holm < alpha
    wins: int             # pairs where the run is better (in the metric's direction)
    ties: int
    losses: int
    higher_is_better: bool
    level: float
    #: "randomization" (paired sign flips) or "mcnemar" (exact, for a binary metric)
    test: str = "randomization"
    cohens_d: float | None = None  # mean(a - b) / sd(a - b) over the pairs (d_z)
    #: why d is null: "n < 5" (as every inferential field, see ``reason``),
    #: "constant differences"
    cohens_d_reason: str | None = None
    cliffs_delta: float | None = None  # (#{a > b} - #{a < b}) / (n_a n_b), run vs baseline
    #: "n < 5": fewer than five pairs, so ci, p, p_holm, cohens_d and cliffs_delta are null
    #: (the outcome view's rule); None otherwise
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci"] = list(self.ci) if self.ci is not None else None
        return d


def _value(row: Mapping[str, Any], metric: str, where: str) -> float | None:
    v = get_path(row, metric)
    if v is None:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    raise ValueError(f"{where}: metric {metric!r} is not a number but {type(v).__name__} "
                     "(name a leaf, e.g. final.line.f1)")


def _metric_value(row: Mapping[str, Any], metric: str, where: str) -> float | None:
    """:func:`_value`, but an error row has only its ranked metrics (None otherwise)."""
    if row.get("status") == "error" and not metric.startswith("ranking."):
        return None
    return _value(row, metric, where)


def _index(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """run -> instance_id -> row, runs in order of first appearance; error rows left out but
    for those with ranked metrics (read only through them, see :func:`_metric_value`)."""
    by_run: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        run = str(r.get("run"))
        inst = by_run.setdefault(run, {})
        if r.get("status") == "error" and not isinstance(r.get("ranking"), Mapping):
            continue
        iid = str(r.get("instance_id"))
        if iid in inst:
            raise ValueError(f"run {run!r} has two rows for instance {iid!r}; "
                             "give each run's rows once")
        inst[iid] = r
    return by_run


def records_resolved(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row records a resolved status."""
    return any(isinstance(r.get("resolved"), bool) for r in rows)


def default_metrics(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """:data:`DEFAULT_METRICS`, and ``resolved`` where the rows record it."""
    return [*DEFAULT_METRICS, *(["resolved"] if records_resolved(rows) else [])]


def _binary(rows: Sequence[Mapping[str, Any] | None], metric: str) -> bool:
    """Whether every value of the metric the rows hold is a boolean (``resolved``)."""
    vals = [get_path(r, metric) for r in rows if r is not None]
    vals = [v for v in vals if v is not None]
    return bool(vals) and all(isinstance(v, bool) for v in vals)


def compare_rows(rows: Sequence[Mapping[str, Any]], *, baseline: str | None = None,
                 metrics: Sequence[str] | None = None, n: int = 10000, seed: int = 0,
                 level: float = 0.95, alpha: float = 0.05) -> list[Comparison]:
    """Compare every run with ``baseline`` (default: the first run in the rows) on each metric
    (default: :func:`default_metrics`).

    Comparisons are ordered by metric, then run. Raises ValueError for fewer than two runs, an
    unknown baseline, duplicate rows or a metric path that names no number.
    """
    if metrics is None:
        metrics = default_metrics(rows)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if not metrics:
        raise ValueError("no metric to compare")
    by_run = _index(rows)
    if len(by_run) < 2:
        raise ValueError(f"need at least two runs to compare, found {len(by_run)}"
                         + (f" ({next(iter(by_run))})" if by_run else ""))
    base = baseline if baseline is not None else next(iter(by_run))
    if base not in by_run:
        raise ValueError(f"baseline run {base!r} not found; runs: {', '.join(by_run)}")
    others = [r for r in by_run if r != base]
    base_rows = by_run[base]
    for metric in metrics:
        if not any(has_path(r, metric) for inst in by_run.values() for r in inst.values()):
            raise ValueError(f"metric {metric!r} is absent from every row "
                             "(check the dotted path)")

    raw: list[dict[str, Any]] = []
    for metric in metrics:
        hib = higher_is_better(metric)
        for name in others:
            run_rows = by_run[name]
            shared = [iid for iid in run_rows if iid in base_rows]
            a = [_metric_value(run_rows[i], metric, f"run {name!r}, instance {i!r}")
                 for i in shared]
            b = [_metric_value(base_rows[i], metric, f"run {base!r}, instance {i!r}")
                 for i in shared]
            pairs = stats.paired(a, b)
            binary = _binary([run_rows[i] for i in shared] + [base_rows[i] for i in shared],
                             metric)
            d: float | None = None
            d_why: str | None = None
            delta: float | None = None
            ci: tuple[float, float] | None = None
            p: float | None = None
            # below MIN_N pairs no test, interval or effect size (the outcome view's rule)
            why = f"n < {MIN_N}" if len(pairs) < MIN_N else None
            if pairs:
                pa, pb = [x for x, _ in pairs], [y for _, y in pairs]
                mean_a, mean_b = stats.mean(pa), stats.mean(pb)
                diff = stats.mean([x - y for x, y in pairs])
                w, t, lo = stats.win_tie_loss(pa, pb)
                if why is None:
                    ci = stats.paired_bootstrap_ci(pa, pb, level=level, n=n, seed=seed)
                    p = (stats.mcnemar([x == 1.0 for x in pa], [y == 1.0 for y in pb]).p
                         if binary else stats.paired_randomization_test(pa, pb, n=n, seed=seed))
                    d, d_why = stats.cohens_dz(pa, pb)
                    delta = stats.cliffs_delta(pa, pb)
            else:
                mean_a = mean_b = diff = None
                w, t, lo = 0, 0, 0
            if why is not None:
                d_why = why
            if not hib:
                w, lo = lo, w
            raw.append(dict(metric=metric, run=name, baseline=base, n_pairs=len(pairs),
                            n_shared=len(shared), mean_a=mean_a, mean_b=mean_b, diff=diff,
                            ci=ci, p=p, wins=w, ties=t, losses=lo, higher_is_better=hib,
                            level=level, test="mcnemar" if binary else "randomization",
                            cohens_d=d, cohens_d_reason=d_why, cliffs_delta=delta,
                            reason=why))
    adjusted = stats.holm_bonferroni([c["p"] for c in raw])
    return [Comparison(**c, p_holm=ph, significant=ph is not None and ph < alpha)
            for c, ph in zip(raw, adjusted, strict=True)]


# ------------------------------------------------------------------------------ rendering


def _digits(v: float) -> int:
    """Three decimals for scores, fewer for token counts and other large values."""
    return 3 if abs(v) < 100 else 1


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.{_digits(v)}f}"


def _signed(v: float | None) -> str:
    return "-" if v is None else f"{v:+.{_digits(v)}f}"


def _p(v: float | None) -> str:
    if v is None:
        return "-"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{_signed(ci[0])}, {_signed(ci[1])}]"


@dataclass(frozen=True, slots=True)
class _Cell:
    """One mean of the wide table."""

    mean: float
    significant: bool
    best: bool


def _wide(comps: Sequence[Comparison]
          ) -> tuple[list[str], list[str], dict[tuple[str, str], _Cell]]:
    """Runs (baseline first), metrics, and the defined cells keyed by (run, metric)."""
    metrics = list(dict.fromkeys(c.metric for c in comps))
    base = comps[0].baseline
    runs = [base, *dict.fromkeys(c.run for c in comps)]
    cells: dict[tuple[str, str], _Cell] = {}
    for m in metrics:
        mc = [c for c in comps if c.metric == m]
        # The baseline's mean depends on the pairs; show it over the largest pair set.
        ref = max(mc, key=lambda c: c.n_pairs)
        means: dict[str, tuple[float | None, bool]] = {base: (ref.mean_b, False)}
        means.update((c.run, (c.mean_a, c.significant)) for c in mc)
        vals = [v for v, _ in means.values() if v is not None]
        if not vals:
            continue
        best = max(vals) if mc[0].higher_is_better else min(vals)
        for r, (v, sig) in means.items():
            if v is not None:
                cells[(r, m)] = _Cell(v, sig, abs(v - best) <= 1e-12)
    return runs, metrics, cells


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _note(comps: Sequence[Comparison], alpha: float) -> str:
    c = comps[0]
    tests = _plural(sum(x.p is not None for x in comps), "comparison")
    mcnemar = any(x.test == "mcnemar" for x in comps)
    return (f"Baseline: {c.baseline}. Means over the instances each run shares with the "
            f"baseline (error rows and null values left out); {DAGGER}: Holm-adjusted "
            f"p < {alpha:g} (paired sign-flip randomization test"
            + ("; McNemar's exact test for binary metrics (resolved)" if mcnemar else "")
            + f", Holm–Bonferroni over {tests}); CI: {c.level:.0%} paired "
            f"bootstrap of the difference; d: Cohen's d of the paired differences; "
            f"δ: Cliff's delta; W/T/L: pairs where the run is better/equal/worse."
            + (f" -: below {MIN_N} pairs, no interval, test or effect size."
               if any(x.reason for x in comps) else ""))


_DETAIL_HEAD = ["metric", "run", "n", "run mean", "base mean", "diff", "CI", "p", "p_holm",
                "d", "δ", "W/T/L"]


def _effect(v: float | None) -> str:
    return "-" if v is None else f"{v:+.2f}"


def _detail_cells(c: Comparison) -> list[str]:
    return [c.metric, c.run, str(c.n_pairs), _f(c.mean_a), _f(c.mean_b),
            _signed(c.diff) + (DAGGER if c.significant else ""), _ci(c.ci), _p(c.p),
            _p(c.p_holm), _effect(c.cohens_d), _effect(c.cliffs_delta),
            f"{c.wins}/{c.ties}/{c.losses}"]


def _text_table(head: list[str], body: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i < 2 else '>'}{w}}}" for i, w in enumerate(widths))
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    return "\n".join([*lines, *(fmt.format(*r) for r in body)]) + "\n"


def _md(comps: Sequence[Comparison], alpha: float) -> str:
    runs, metrics, cells = _wide(comps)
    out = ["| run | " + " | ".join(f"`{m}`" for m in metrics) + " |",
           "|---|" + "---:|" * len(metrics)]
    for r in runs:
        row = []
        for m in metrics:
            cell = cells.get((r, m))
            if cell is None:
                row.append("-")
                continue
            txt = _f(cell.mean) + (DAGGER if cell.significant else "")
            row.append(f"**{txt}**" if cell.best else txt)
        out.append(f"| {r} | " + " | ".join(row) + " |")
    out += ["", "| " + " | ".join(_DETAIL_HEAD) + " |",
            "|---|---|" + "---:|" * (len(_DETAIL_HEAD) - 2)]
    for c in comps:
        cells_ = _detail_cells(c)
        cells_[0] = f"`{cells_[0]}`"
        out.append("| " + " | ".join(cells_) + " |")
    out += ["", _note(comps, alpha) + " Bold: best value per column."]
    return "\n".join(out) + "\n"


_TEX_ESC = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_TEX_ESC.get(ch, ch) for ch in s)


def _tex_num(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "--"
    return f"${_signed(v)}$" if signed else _f(v)


def _latex(comps: Sequence[Comparison], alpha: float) -> str:
    runs, metrics, cells = _wide(comps)
    out = [r"% requires \usepackage{booktabs}",
           r"\begin{tabular}{l" + "r" * len(metrics) + "}", r"\toprule",
           "Run & " + " & ".join(r"\texttt{" + _tex(m) + "}" for m in metrics) + r" \\",
           r"\midrule"]
    for r in runs:
        row = []
        for m in metrics:
            cell = cells.get((r, m))
            if cell is None:
                row.append("--")
                continue
            txt = _tex_num(cell.mean)
            if cell.best:
                txt = r"\textbf{" + txt + "}"
            row.append(txt + (r"$^{\dagger}$" if cell.significant else ""))
        out.append(_tex(r) + " & " + " & ".join(row) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", "",
            r"\begin{tabular}{llrrrrlrrrrr}", r"\toprule",
            r"Metric & Run & $n$ & Run & Base & $\Delta$ & CI & $p$ & $p_{\mathrm{Holm}}$ & "
            r"$d$ & $\delta$ & W/T/L \\", r"\midrule"]
    for c in comps:
        ci = "--" if c.ci is None else f"${_ci(c.ci)}$"
        diff = _tex_num(c.diff, signed=True) + (r"$^{\dagger}$" if c.significant else "")
        p = "--" if c.p is None else _p(c.p).replace("<", "$<$")
        ph = "--" if c.p_holm is None else _p(c.p_holm).replace("<", "$<$")
        effects = ["--" if v is None else f"${v:+.2f}$" for v in (c.cohens_d, c.cliffs_delta)]
        out.append(" & ".join([r"\texttt{" + _tex(c.metric) + "}", _tex(c.run), str(c.n_pairs),
                               _tex_num(c.mean_a), _tex_num(c.mean_b), diff, ci, p, ph,
                               *effects, f"{c.wins}/{c.ties}/{c.losses}"]) + r" \\")
    note = _note(comps, alpha).replace(DAGGER, r"$^{\dagger}$").replace("<", "$<$")
    note = note.replace("δ", r"$\delta$")
    note = note.replace("%", r"\%").replace("_", r"\_")
    out += [r"\bottomrule", r"\end{tabular}", "", "% " + note + " Bold: best value per column."]
    return "\n".join(out) + "\n"


def render_comparison(comps: Sequence[Comparison], fmt: str = "table", *,
                      alpha: float = 0.05, correlations: Correlations | None = None) -> str:
    """The comparisons as a text table, Markdown, LaTeX (booktabs) or JSON, followed by the
    Spearman matrix of the metrics when ``correlations`` is given.

    Markdown and LaTeX give a wide table (runs x metrics: means, best per column in bold,
    {dagger} where the run differs significantly from the baseline) and a detail table; the
    text table is the detail table; JSON carries every field (no NaN or Infinity).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if fmt == "json":
        from ..evaluation.output.results import finite

        doc = {"baseline": comps[0].baseline if comps else None,
               "test": "paired sign-flip randomization, two-sided; McNemar's exact test for "
                       "binary metrics (resolved)",
               "interval": "paired percentile bootstrap of the mean difference",
               "effect_sizes": "cohens_d: mean / sd of the paired differences (d_z); "
                               "cliffs_delta: (#{a > b} - #{a < b}) / (n_a n_b)",
               "correction": "holm-bonferroni", "alpha": alpha,
               "comparisons": [c.to_json() for c in comps]}
        if correlations is not None:
            doc["correlations"] = correlations.to_json()
        return orjson.dumps(finite(doc), option=orjson.OPT_INDENT_2).decode() + "\n"
    if not comps:
        return "no comparisons\n"
    if fmt == "md":
        text = _md(comps, alpha)
    elif fmt == "latex":
        text = _latex(comps, alpha)
    else:
        text = _text_table(_DETAIL_HEAD, [_detail_cells(c) for c in comps]) + _note(
            comps, alpha) + "\n"
    if correlations is not None and correlations.metrics:
        text += "\n" + render_correlations(correlations, fmt)
    return text


render_comparison.__doc__ = (render_comparison.__doc__ or "").replace("{dagger}", DAGGER)


# ------------------------------------------------------------------------------ command


def run(args: argparse.Namespace) -> int:
    """The ``compare`` command: 0 on success, 1 for unusable input, 2 for bad options."""
    from ..errors import CtxevalError
    from ..evaluation.output.ownership import check_ours
    from ..evaluation.output.results import read_results

    def err(msg: str) -> None:
        print(f"ctxeval: {msg}", file=sys.stderr)

    metrics = [m.strip() for m in (args.metrics or "").split(",") if m.strip()] \
        if args.metrics else None
    if metrics and "localization" in metrics:
        at = metrics.index("localization")
        metrics[at:at + 1] = [m for m in LOCALIZATION_METRICS if m not in metrics]
    if args.n < 1:
        err("--n must be at least 1")
        return 2
    if not 0.0 < args.level < 1.0 or not 0.0 < args.alpha < 1.0:
        err("--level and --alpha must be between 0 and 1")
        return 2
    if metrics is not None and not metrics:
        err("--metrics names no metric")
        return 2
    try:
        if args.out:  # before any work: --out results.jsonl by mistake is refused at once
            check_ours(args.out, "report")
        rows = read_results(args.results)
        comps = compare_rows(rows, baseline=args.baseline, metrics=metrics, n=args.n,
                             seed=args.seed, level=args.level, alpha=args.alpha)
        correlations = None if args.no_correlations else metric_correlations(
            rows, list(dict.fromkeys(c.metric for c in comps)))
    except CtxevalError as exc:
        err(str(exc))
        return 1
    except ValueError as exc:
        err(str(exc))
        return 1
    text = render_comparison(comps, args.format, alpha=args.alpha, correlations=correlations)
    n_err = sum(r.get("status") == "error" for r in rows)
    if n_err:
        err(f"{n_err} evaluator error rows left out of every comparison (but of their ranked "
            "metrics, where they have them)")
    presets = sorted({str(r["preset"]) for r in rows if r.get("preset") is not None})
    if len(presets) > 1:
        err(f"warning: rows of different presets ({', '.join(presets)}) are compared")
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            err(f"cannot write {args.out}: {exc.strerror}")
            return 1
    else:
        sys.stdout.write(text)
    return 0


def _wrap(items: Sequence[str], width: int = 80) -> str:
    lines, cur = [], ""
    for it in items:
        nxt = f"{cur},{it}" if cur else it
        if cur and len(nxt) > width:
            lines.append(cur + ",")
            cur = it
        else:
            cur = nxt
    return "\n           ".join([*lines, cur])


_EPILOG = f"""\
method:
  For each metric and each run, the run is paired with the baseline on the instances both
  have (ok and agent_failure rows; error rows are left out; a null value on either side drops
  the pair). Reported: both means over the pairs, their difference (run - baseline), a paired
  percentile bootstrap interval of the difference, a two-sided paired randomization test
  (random sign flips of the per-instance differences; exact enumeration when 2^pairs <= N),
  Holm-Bonferroni adjusted p-values over all comparisons of the table, and wins/ties/losses
  (in the metric's direction: lower is better for redundancy, usage and step counts).
  resolved (compared by default where the rows record it) is tested with McNemar's exact
  test: its wins and losses are the instances only one of the two runs resolved.
  Beside every difference: Cohen's d of the paired differences (d_z = mean / sd) and
  Cliff's delta of the run's values against the baseline's. Below five pairs the interval,
  the test and the effect sizes are null (reason "n < 5", "-" in the tables); the means,
  the difference and W/T/L are still given. Below the table: Spearman's
  rho between the compared metrics, pooled over the rows of every run (which metrics say
  the same thing; --no-correlations leaves it out).
  {DAGGER} marks adjusted p < alpha; bold marks the best value per column (md, latex).

metrics (dotted paths into result rows):
  final.<g>.coverage|precision|f1   g = file, symbol, span, line
  trajectory.auc_coverage.<g>, trajectory.redundancy.<g>
  editloc.recall|precision|f1, editloc.file.f1, num_steps, resolved (0/1)
  usage.input_tokens|output_tokens|cost|api_calls
  ranking.<l>.acc|recall|precision|ndcg|map@<k>, ranking.<l>.mrr   l = file, module,
    function (k as the rows were evaluated with, 1,3,5,10 by default)
  ranking.before_first_gold.<l>.steps_before|input_tokens|cost, ranking.budget.line|file
  localization: the localisation papers' table
    ({', '.join(LOCALIZATION_METRICS[:3])}, ...)
  default: {_wrap(DEFAULT_METRICS)},
           and resolved where the rows record it

examples:
  ctxeval compare results.jsonl
  ctxeval compare a.jsonl b.jsonl --baseline agent-a --format latex --out table.tex
  ctxeval compare results.jsonl --metrics final.line.f1,editloc.f1 --n 20000 --seed 1
  ctxeval compare localizers.jsonl --metrics localization --format latex
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="paired significance tests between runs (research tables)",
        description="Compare runs with a baseline on the instances they share: mean\n"
                    "differences with bootstrap confidence intervals, paired randomization\n"
                    "tests (McNemar's exact test for resolved) with Holm-Bonferroni\n"
                    "correction, effect sizes, win/tie/loss counts, and Spearman's rho\n"
                    "between the compared metrics.",
        epilog=_EPILOG)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="results (JSONL or Parquet) written by 'ctxeval evaluate' (several "
                        "files are pooled; a run may be split over files)")
    p.add_argument("--baseline", metavar="RUN",
                   help="run every other run is compared with (default: the first run)")
    p.add_argument("--metrics", metavar="M1,M2",
                   help="comma-separated dotted metric paths (default: see below)")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="text table (default), Markdown, LaTeX (booktabs) or JSON")
    p.add_argument("--n", type=int, default=10000, metavar="N",
                   help="bootstrap resamples and random sign flips (default 10000)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="random seed; the output is deterministic given it (default 0)")
    p.add_argument("--level", type=float, default=0.95, metavar="L",
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance threshold on Holm-adjusted p-values (default 0.05)")
    p.add_argument("--no-correlations", action="store_true",
                   help="leave out the Spearman matrix of the compared metrics")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)
    return p
