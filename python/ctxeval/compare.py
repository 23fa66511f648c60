"""``ctxeval compare``: paired comparison of runs (not implemented yet)."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    print("ctxeval: 'compare' is not implemented yet", file=sys.stderr)
    return 1


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="paired comparison of runs (not implemented yet)",
                       description="Paired comparison of runs on shared instances. Not "
                                   "implemented yet: exits with status 1.")
    p.add_argument("results", nargs="*")
    p.add_argument("--baseline")
    p.set_defaults(func=run)
    return p
