"""``ctxeval report``: arguments and the command, delegated to from :mod:`ctxeval.cli`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from ..errors import CtxevalError
    from . import render_report

    try:
        text = render_report(args.results, fmt=args.format, micro=args.micro)
    except CtxevalError as exc:
        print(f"ctxeval: {exc}", file=sys.stderr)
        return 1
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("report", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="summarise result rows per run",
                       description="Summarise result rows per run in the ContextBench "
                                   "leaderboard layout: file/symbol/span/line coverage, "
                                   "precision and F1, EditLoc, AUC-coverage and redundancy.")
    p.add_argument("results", nargs="+", help="results JSONL written by 'ctxeval evaluate'")
    p.add_argument("--format", choices=("table", "md", "json"), default="table")
    p.add_argument("--micro", action="store_true",
                   help="micro averages (Σ intersection / Σ size) instead of macro means")
    p.add_argument("--out", help="write to a file instead of standard output")
    p.set_defaults(func=run)
    return p
