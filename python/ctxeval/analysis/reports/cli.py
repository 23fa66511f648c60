"""``ctxeval report``: arguments and the command, delegated to from :mod:`ctxeval.cli`."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..outcome import OutcomeTable
    from .leaderboard import CostOptions

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _cost_options(args: argparse.Namespace) -> CostOptions:
    from .leaderboard import CostOptions

    return CostOptions(score_field=args.score, threshold=args.pass_threshold,
                       use_resolved=True if args.pass_resolved else None,
                       pareto_cost=args.pareto_cost)


def run(args: argparse.Namespace) -> int:
    from ...errors import CtxevalError
    from ...evaluation.output.ownership import check_ours
    from . import (
        build_exploration,
        build_leaderboard,
        build_localization,
        load_rows,
        render,
        render_html,
    )
    from .plots import write_plots

    if args.format == "html" and not args.out:
        print("ctxeval: --format html needs --out FILE", file=sys.stderr)
        return EXIT_USAGE
    if args.view == "outcome" and args.by and args.format != "html":
        print("ctxeval: --by does not split the outcome view (each run is one population); "
              "give each group's rows as a run of its own", file=sys.stderr)
        return EXIT_USAGE
    cost = _cost_options(args)
    outcome = None
    try:
        if args.out:  # before any work: --out results.jsonl by mistake is refused at once
            check_ours(args.out, "report")
        rows = load_rows(args.results)
        if args.format == "html":
            text = render_html(rows, by=args.by, metrics=args.metrics, micro=args.micro,
                               ci=args.ci, cost=cost, sources=args.results,
                               views=args.link_views)
        elif args.view == "exploration":
            text = render(build_exploration(rows, by=args.by), args.format, ci=args.ci)
        elif args.view == "localization":
            text = render(build_localization(rows, by=args.by, ci=args.ci), args.format,
                          ci=args.ci)
        elif args.view == "outcome":
            text, outcome = _outcome(rows, args)
        else:
            report = build_leaderboard(rows, by=args.by, metrics=args.metrics,
                                       micro=args.micro, ci=args.ci, cost=cost)
            text = render(report, args.format, ci=args.ci)
        if args.plots:
            written = write_plots(rows, args.plots, cost, outcome=outcome)
            print(f"wrote {len(written)} plot files to {args.plots}", file=sys.stderr)
    except CtxevalError as exc:
        print(f"ctxeval: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ImportError as exc:  # stats/tokens helpers missing in a partial install
        print(f"ctxeval: report needs {exc.name}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"ctxeval: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
            return EXIT_FAILED
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _outcome(rows: list, args: argparse.Namespace) -> tuple[str, OutcomeTable | None]:
    """The outcome view as text (its AUROC intervals always shown), and its statistics for the
    plots."""
    from . import render
    from .outcome import build_outcome

    report = build_outcome(rows, metrics=args.metrics, resamples=args.resamples, seed=args.seed,
                           bins=args.bins)
    return render(report, args.format, ci=True), report.outcome


def _wrap(text: str) -> str:
    return textwrap.fill(text, 79, initial_indent="  ", subsequent_indent="  ")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from ..outcome import DEFAULT_METRICS as OUTCOME_METRICS
    from . import FORMATS
    from .column_sets import COLUMN_SETS
    from .leaderboard import COLUMNS

    p = sub.add_parser(
        "report", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="tables, plots and an HTML report of result rows",
        description=textwrap.fill(
            "Summarise result rows per run. The leaderboard view (default) has the "
            "ContextBench layout: file/symbol/span/line coverage, precision and F1, EditLoc, "
            "sizes, AUC-coverage, redundancy, resolved rate, usage and cost. The exploration "
            "view shows how each run explored: steps, lines per step, re-reads, steps to the "
            "first gold file and line, evidence drop. The localization view prints the table "
            "localisation papers print from the rows' ranked metrics: file Acc@1/3/5, module "
            "Acc@5/10, function Acc@5/10, MRR and nDCG, every metric against k, and when the "
            "first gold item was shown. The outcome view sets each context metric "
            "of each run against resolution: AUROC with a bootstrap interval, the "
            "point-biserial correlation, the resolution rate per quantile bin, and Spearman's "
            "rho between the metrics.", 79),
        epilog="column sets (--metrics NAME; mix them with columns: 'default,in*'):\n"
               + "\n".join(_wrap(f"{name}: {', '.join(keys)}") for name, keys
                           in COLUMN_SETS.items())
               + "\n" + _wrap("all: every column") + "\n"
               + _wrap("contextbench is the ContextBench paper's main table (add --preset "
                       "contextbench when evaluating for its conventions); default fits a "
                       "100-column terminal and a LaTeX page")
               + "\n\ncolumns (--metrics, comma-separated keys or patterns such as 'line.*'):\n"
               + _wrap(", ".join(COLUMNS))
               + "\n\noutcome view (--view outcome; rows without a resolved status are left out "
                 "and counted):\n" + _wrap(", ".join(OUTCOME_METRICS)) + "\n  (patterns stand "
                 "for the numeric leaves the rows have; --metrics takes row paths there)"
               + "\n\nexamples:\n  ctxeval report results.jsonl\n"
                 "  ctxeval report results.jsonl --format latex --by language --ci\n"
                 "  ctxeval report results.jsonl --metrics contextbench --format latex\n"
                 "  ctxeval report results.jsonl --metrics default,usage\n"
                 "  ctxeval report results.jsonl --view exploration --format md\n"
                 "  ctxeval report results.jsonl --view localization --format latex\n"
                 "  ctxeval report results.jsonl --view outcome --format json --out o.json\n"
                 "  ctxeval report results.jsonl --format html --out report.html\n"
                 "  ctxeval view results.jsonl --out view/ && \\\n"
                 "      ctxeval report results.jsonl --format html --out report.html "
                 "--link-views view/\n"
                 "  ctxeval report results.jsonl --plots plots/")
    p.add_argument("results", nargs="+",
                   help="results (JSONL or Parquet) written by 'ctxeval evaluate'")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="output format (default: table); html needs --out")
    p.add_argument("--out", metavar="FILE", help="write to a file instead of standard output")
    p.add_argument("--link-views", metavar="DIR",
                   help="html: link each run and instance to the pages 'ctxeval view' wrote "
                        "into DIR (a path relative to the report page)")
    p.add_argument("--view", choices=("leaderboard", "exploration", "localization", "outcome"),
                   default="leaderboard",
                   help="which tables (html holds them all; localization where the rows have "
                        "ranked metrics; outcome where rows record resolution)")
    p.add_argument("--by", metavar="FIELD",
                   help="split rows by a row field: language, source, repo or any (dotted) "
                        "field")
    p.add_argument("--metrics", metavar="SET|COLUMNS",
                   help="leaderboard columns: names of column sets, keys or patterns, "
                        "comma-separated (default: the set 'default'; see below); with --view "
                        "outcome, dotted row paths or patterns (final.line.*,ranking.*)")
    agg = p.add_mutually_exclusive_group()
    agg.add_argument("--macro", dest="micro", action="store_false",
                     help="macro means over instances, nulls left out (default)")
    agg.add_argument("--micro", dest="micro", action="store_true",
                     help="micro averages (Σ intersection / Σ size) for final and EditLoc")
    p.add_argument("--ci", action="store_true",
                   help="bootstrap 95%% intervals of each mean")
    p.add_argument("--plots", metavar="DIR",
                   help="also write the plots as PNG and SVG into DIR (needs ctxeval[plot])")
    p.add_argument("--score", default="final.line.f1", metavar="FIELD",
                   help="score field of pass rate, cost of pass, token efficiency and Pareto "
                        "(default: final.line.f1)")
    p.add_argument("--pass-threshold", type=float, metavar="X",
                   help="a pass is score >= X (default: resolved, where the rows record it)")
    p.add_argument("--pass-resolved", action="store_true",
                   help="a pass is a resolved instance")
    p.add_argument("--pareto-cost", choices=("auto", "cost", "input_tokens", "output_tokens"),
                   default="auto",
                   help="cost axis of the Pareto rank (auto: cost where every run has it, "
                        "else input tokens)")
    out = p.add_argument_group("outcome view (--view outcome)")
    out.add_argument("--bins", type=_positive, default=5, metavar="N",
                     help="quantile bins of each metric (default 5)")
    out.add_argument("--resamples", type=_positive, default=10000, metavar="N",
                     help="bootstrap resamples of the AUROC intervals (default 10000)")
    out.add_argument("--seed", type=int, default=0, metavar="S",
                     help="random seed; the output is deterministic given it (default 0)")
    p.set_defaults(func=run, micro=False)
    return p
