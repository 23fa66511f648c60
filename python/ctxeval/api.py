"""The Python API, mirroring the command line: :func:`evaluate`, :func:`report`, :func:`compare`.

Each returns a typed object instead of printing: the rows and the run summary, a
:class:`~ctxeval.analysis.reports.Report` that renders to any format, the list of
:class:`~ctxeval.analysis.comparison.Comparison`. They are re-exported as ``ctxeval.evaluate`` etc.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .analysis.comparison import Comparison, compare_rows, render_comparison
from .analysis.reports import (
    Report,
    build_exploration,
    build_leaderboard,
    build_localization,
    build_outcome,
    load_rows,
    render,
)
from .evaluation.output.results import read_rows
from .evaluation.pipeline import RunSpec, Summary
from .evaluation.pipeline import evaluate as _evaluate
from .evaluation.prepare.preparer import FinalPolicy

Rows = Sequence[Mapping[str, Any]]
Paths = str | Path | Sequence[str | Path]


@dataclass(slots=True)
class Evaluation:
    """What :func:`evaluate` produced: the rows (also written to ``out`` when given) and the
    summary of ok rows, failures, errors and unreadable inputs."""

    rows: list[dict[str, Any]]
    summary: Summary
    out: Path | None = None

    def report(self, **options: Any) -> Report:
        """The leaderboard (or another view) of these rows; see :func:`report`."""
        return report(self.rows, **options)


def _paths(p: Paths) -> list[str]:
    return [str(p)] if isinstance(p, (str, Path)) else [str(x) for x in p]


def _runs(runs: Mapping[str, Paths] | Sequence[RunSpec] | Paths) -> list[RunSpec]:
    if isinstance(runs, Mapping):
        return [RunSpec(name, _paths(p)) for name, p in runs.items()]
    if isinstance(runs, (str, Path)):
        return [RunSpec(Path(str(runs).rstrip("/")).name, [str(runs)])]
    specs = list(runs)
    if all(isinstance(r, RunSpec) for r in specs):
        return specs  # type: ignore[return-value]
    return [RunSpec(Path(str(p).rstrip("/")).name, [str(p)]) for p in specs]


def evaluate(gold: Paths, runs: Mapping[str, Paths] | Sequence[RunSpec] | Paths,
             repos: str | Path | None = None, *, out: str | Path | None = None,
             preset: str = "strict", final: FinalPolicy = "declared", all_gold: bool = False,
             jobs: int = 1, fetch: bool = False, resume: bool = False, text: bool = False,
             results: Mapping[str, Paths] | None = None, cache_dir: str | Path | None = None,
             incremental: bool = True, progress: bool = False, views: bool = False,
             engine: str = "local", address: str | None = None,
             git_timeout: float | None = None) -> Evaluation:
    """Score agent runs against gold, as ``ctxeval evaluate`` does.

    ``runs`` maps run names to their inputs (files, directories, globs), or is a list of
    inputs (each a run named after it). ``results`` maps run names to results files giving
    resolved status. The rows are returned and, with ``out``, also written there (with the
    ``.meta.json`` sidecar). ``cache_dir`` keeps parsed definitions and file lists on disk
    (None: no disk cache).
    ``views`` (with ``out``) also writes what each step displayed to ``<out>.views.jsonl``, for
    ``ctxeval view`` (``docs/viewer.md``). ``engine="ray"`` evaluates on a Ray cluster
    (``address``, default the running or a local Ray instance; ``jobs`` actors), the same rows
    (``docs/scaling.md``); ``out`` ending in ``.parquet`` writes Parquet.
    """
    specs = _runs(runs)
    for name, paths in (results or {}).items():
        for spec in specs:
            if spec.name == name:
                spec.results.extend(_paths(paths))
    buf = None if out is not None else io.BytesIO()
    options: dict[str, Any] = dict(
        gold=_paths(gold), runs=specs, repos=repos, out=out, preset=preset, final_policy=final,
        all_gold=all_gold, fetch=fetch, resume=resume, progress=progress, stream=buf,
        text=text, cache_dir=cache_dir, incremental=incremental, argv=[],
        git_timeout=git_timeout)
    if engine == "ray":
        from .evaluation.ray_engine import evaluate as evaluate_ray

        summary = evaluate_ray(**options, jobs=None if jobs == 1 else jobs, address=address,
                               views=views and out is not None)
    elif engine == "local":
        summary = _evaluate(**options, jobs=jobs, views=views)
    else:
        raise ValueError(f"unknown engine {engine!r}: 'local' or 'ray'")
    if buf is not None:
        rows = [orjson.loads(line) for line in buf.getvalue().splitlines()]
        return Evaluation(rows, summary)
    # An evaluation may write no row (nothing readable; then no file is left): that is its
    # result, not an error. An output that is not a file (a pipe) is not read back.
    path = Path(out)  # type: ignore[arg-type]
    from .evaluation.output.outfile import is_parquet

    readable = path.is_file() or (path.is_dir() and is_parquet(path))  # a Ray dataset
    rows = list(read_rows(path, allow_empty=True)) if readable else []
    return Evaluation(rows, summary, path)


def load_results(results: Paths, *, to: str = "arrow") -> Any:
    """Results files (JSONL, Parquet, or the Ray engine's Parquet dataset directories; any mix)
    as one table with the typed, flattened
    columns of ``docs/results-parquet.md``: a pyarrow Table (``to="arrow"``), or a pandas or
    polars DataFrame (``to="pandas"``/``"polars"``, when that library is installed).

    The bookkeeping columns that make Parquet files read back as the exact JSONL rows
    (``_absent``, ``_null``, ``_extra``) are left out: for analysis, a missing field is null.
    """
    import pyarrow as pa

    from .evaluation.output.results import read_rows
    from .evaluation.output.results_parquet import SCHEMA, is_parquet, read_table, rows_to_table

    tables = [read_table(p).cast(SCHEMA) if is_parquet(p) else rows_to_table(read_rows(p))
              for p in _paths(results)]
    table = pa.concat_tables(tables) if tables else SCHEMA.empty_table()
    table = table.drop_columns([c for c in table.column_names if c.startswith("_")])
    if to == "arrow":
        return table
    if to == "pandas":
        return table.to_pandas()
    if to == "polars":
        import polars

        return polars.from_arrow(table)
    raise ValueError(f"unknown table kind {to!r}: 'arrow', 'pandas' or 'polars'")


def _rows(results: Rows | Paths) -> list[dict[str, Any]]:
    if isinstance(results, (str, Path)):
        return load_rows([results])
    items = list(results)
    if items and all(isinstance(r, (str, Path)) for r in items):
        return load_rows(items)  # type: ignore[arg-type]
    return [dict(r) for r in items]  # type: ignore[arg-type]


def report(results: Rows | Paths, *, view: str = "leaderboard", by: str | None = None,
           metrics: str | Sequence[str] | None = None, micro: bool = False,
           ci: bool = False) -> Report:
    """The leaderboard (``view="leaderboard"``), exploration, localization or outcome view of
    result rows (or of results files). Render it with
    ``ctxeval.analysis.reports.render(report, "latex")``; the outcome view's ``metrics`` are
    row paths or patterns (``docs/report.md``)."""
    rows = _rows(results)
    if view == "exploration":
        return build_exploration(rows, by=by)
    if view == "localization":
        return build_localization(rows, by=by, ci=ci)
    if view == "outcome":
        return build_outcome(rows, metrics=metrics)
    if view != "leaderboard":
        raise ValueError(f"unknown view {view!r}: 'leaderboard', 'exploration', "
                         "'localization' or 'outcome'")
    return build_leaderboard(rows, by=by, metrics=metrics, micro=micro, ci=ci)


def compare(results: Rows | Paths, *, baseline: str | None = None,
            metrics: Sequence[str] | None = None, n: int = 10000, seed: int = 0,
            level: float = 0.95, alpha: float = 0.05) -> list[Comparison]:
    """Paired comparison of every run with ``baseline`` on the instances they share:
    bootstrap intervals, randomization tests (McNemar's for resolved), Holm–Bonferroni, effect
    sizes; see ``ctxeval compare``. ``metrics`` default: ``DEFAULT_METRICS``, and ``resolved``
    where the rows record it.
    Render with :func:`ctxeval.analysis.comparison.render_comparison`."""
    return compare_rows(_rows(results), baseline=baseline, metrics=metrics, n=n, seed=seed,
                        level=level, alpha=alpha)


__all__ = ["Evaluation", "compare", "evaluate", "load_results", "render", "render_comparison",
           "report"]
