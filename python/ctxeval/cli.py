"""The ``ctxeval`` command.

Each subcommand is a thin shell over a Python function of the package: argument parsing, human
messages and exit codes live here, nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ._core import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

_EPILOG = """\
examples:
  ctxeval evaluate --gold gold.jsonl --pred trajs/ --repos repos/ --out results.jsonl
  ctxeval evaluate --gold gold.parquet --run agentA=runs/a --run agentB=runs/b \\
      --repos repos/ --out results.jsonl --preset contextbench
  ctxeval report results.jsonl
  ctxeval view results.jsonl --out view/
  ctxeval convert run/*.traj.json --out trajs.jsonl
  ctxeval inspect trajs.jsonl --instance django__django-11099
  ctxeval symbols src/module.py --json

Run 'ctxeval COMMAND --help' for the options of a command.
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help that fits a terminal: prose paragraphs of descriptions and epilogs are wrapped to
    its width; indented blocks (examples, tables) are kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        out = []
        for para in text.split("\n\n"):
            lines = para.splitlines()
            if not lines or any(ln.startswith(" ") for ln in lines) or (len(lines) > 1 and \
                    lines[0].rstrip().endswith(":")):
                out.append("\n".join(indent + ln for ln in lines))
            else:
                out.append(textwrap.fill(" ".join(para.split()), width,
                                         initial_indent=indent, subsequent_indent=indent,
                                         break_on_hyphens=False))
        return "\n\n".join(out)


#: ``--git-timeout``'s default (ctxeval.truth.gitproc.DEFAULT_TIMEOUT, without importing it).
DEFAULT_GIT_TIMEOUT = 60.0


def _seconds(text: str) -> float:
    """A positive number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def _err(msg: str) -> None:
    print(f"ctxeval: {msg}", file=sys.stderr)


def os_error_text(exc: OSError, where: str) -> str:
    """An ``OSError`` in words that name the file: its own file name, else ``where`` (an
    error raised by a write has none: "No space left on device: None" told nobody which disk
    was full)."""
    what = exc.strerror or str(exc) or type(exc).__name__
    return f"{what}: {exc.filename or where}"


# ------------------------------------------------------------------------------ evaluate


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .errors import CtxevalError
    from .evaluation.output.meta import ResumeConflict
    from .evaluation.pipeline import RunSpec, evaluate

    runs: list[RunSpec] = []
    for spec in args.run or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            _err(f"--run takes NAME=PATH, got {spec!r}")
            return EXIT_USAGE
        for r in runs:
            if r.name == name:
                r.inputs.append(path)
                break
        else:
            runs.append(RunSpec(name, [path]))
    for p in args.pred or []:
        runs.append(RunSpec(Path(p.rstrip("/")).name or p, [p]))
    if not runs:
        _err("evaluate needs --pred PATH or --run NAME=PATH")
        return EXIT_USAGE
    for spec in args.results or []:
        name, sep, path = spec.partition("=")
        targets = [r for r in runs if r.name == name] if sep else runs
        if sep and not targets:
            _err(f"--results names run {name!r}, which is not among the runs")
            return EXIT_USAGE
        for r in targets:
            r.results.append(path if sep else spec)
    if args.jobs < 1 or (args.actors is not None and args.actors < 1):
        _err("-j/--jobs and --actors must be at least 1")
        return EXIT_USAGE
    if args.engine != "ray" and (args.address or args.actors):
        _err("--address and --actors go with --engine ray")
        return EXIT_USAGE
    if args.engine == "ray" and args.views and not str(args.out or "").lower().endswith(
            (".parquet", ".pq")):
        _err("--views with --engine ray needs a Parquet --out (results.parquet: a dataset "
             "directory, whose parts the actors write with their views)")
        return EXIT_USAGE
    if args.repos and not Path(args.repos).is_dir() and (Path(args.repos).exists()
                                                         or not args.fetch):
        _err(f"--repos {args.repos}: not a directory (give the directory that holds the "
             "repositories or snapshots)")
        return EXIT_USAGE
    from .evaluation.ranking import RankingSettings, parse_ks

    try:
        ranking = RankingSettings(parse_ks(args.k), args.budget_lines)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    from .truth.gitproc import timeout_from

    try:
        timeout_from(args.git_timeout)  # $CTXEVAL_GIT_TIMEOUT is checked before anything runs
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    out = None if args.out == "-" else args.out
    from .truth.cache import default_cache_dir

    cache_dir = None if args.no_cache else (args.cache_dir or default_cache_dir())
    options: dict[str, Any] = dict(
        gold=args.gold, runs=runs, repos=args.repos, out=out, preset=args.preset,
        final_policy=args.final, all_gold=args.all_gold, fetch=args.fetch, resume=args.resume,
        fmt=args.format, progress=not args.quiet, text=args.text, cache_dir=cache_dir,
        incremental=not args.no_incremental, git_timeout=args.git_timeout,
        notices=True)
    try:
        if args.engine == "ray":
            from .evaluation.ray_engine import evaluate as evaluate_ray

            summary = evaluate_ray(**options, jobs=args.actors, address=args.address,
                                   views=args.views, ranking=ranking)
        else:
            if _ENDS_WITH_COMMAND:
                from .evaluation import run as evaluation_run

                evaluation_run.kept_until_exit = []  # left to the OS: see run()
                _collect_less()
            summary = evaluate(**options, jobs=args.jobs, views=args.views, ranking=ranking)
    except ResumeConflict as exc:  # what to do instead is the user's choice: a usage error
        _err(str(exc))
        return EXIT_USAGE
    except CtxevalError as exc:
        _err(str(exc))
        return EXIT_FAILED
    except BrokenPipeError:
        raise  # standard output piped into a program that stopped reading: see main()
    except OSError as exc:
        _err(f"cannot write output: {os_error_text(exc, out or 'standard output')}")
        return EXIT_FAILED
    if not args.quiet:
        for line in summary.lines():
            print(line, file=sys.stderr)
    if not sum(summary.rows.values()) and not summary.skipped_resume:
        # Nothing evaluated: every input unreadable (gold or results given as a run) or empty.
        why = str(summary.unreadable[0]) if summary.unreadable else \
            "no trajectory found in " + ", ".join(p for r in runs for p in r.inputs)
        _err(f"nothing was evaluated: no trajectory of any run could be read ({why})")
        return EXIT_FAILED
    return EXIT_OK


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate", formatter_class=_Formatter,
        help="score agent runs against gold context",
        description="Score agent runs against gold context: which files, definitions, lines "
                    "and bytes each agent looked at, per step and at the end, and whether it "
                    "edited the right places. Writes one JSON row per (run, instance), in input "
                    "order, and <out>.meta.json beside it.",
        epilog="Predictions are files, directories (walked, following links) or globs in any "
               "supported agent format, detected per file (see 'ctxeval convert --help'), or "
               "neutral JSONL. Repositories are looked up under --repos as <instance_id>/, "
               "<owner>__<name>@<commit>/ (snapshots), or <owner>__<name>, <owner>/<name>, "
               "<name> (git repositories read at the base commit without checkout).\n\n"
               "Exit status: 0 when every input was processed (error rows included), 1 when "
               "nothing could be evaluated (no gold, no readable trajectory, --out held by "
               "another evaluation or not writable), 2 for a usage error.\n\n"
               "--out is held for the whole run: a second evaluation given the same file "
               "stops at once, naming the process that holds it. Rows are written whole; an "
               "interrupted run (Ctrl-C, SIGTERM, SIGHUP, even SIGKILL) is finished by the "
               "same command with --resume. Only a file that holds results is written over.\n\n"
               "examples:\n"
               "  ctxeval evaluate --gold gold.jsonl --run agent-a=runs/a --run agent-b=runs/b \\\n"
               "      --repos repos/ --out results.jsonl\n"
               "  ctxeval evaluate --gold gold.parquet --pred trajs/ --repos repos/ \\\n"
               "      --out results.parquet --preset contextbench -j 2\n"
               "  ctxeval evaluate ... --out results.jsonl --resume    # finish a stopped run")
    p.add_argument("--gold", action="append", required=True, metavar="G",
                   help="gold file or directory (neutral JSONL, ContextBench parquet/JSON/"
                        "annot.json, LocAgent/Loc-Bench localisation gold, SWE-bench "
                        "records); repeatable")
    p.add_argument("--pred", action="append", metavar="P",
                   help="one run's trajectories (file, directory or glob); repeatable, each "
                        "a run named after the path")
    p.add_argument("--run", action="append", metavar="NAME=PATH",
                   help="a named run; repeat a NAME to give it several paths")
    p.add_argument("--results", action="append", metavar="[NAME=]PATH",
                   help="benchmark results giving resolved status (SWE-bench report JSON, a "
                        "run summary with resolved ids, or a directory of them) for run NAME, "
                        "or for every run without NAME; repeatable")
    p.add_argument("--repos", metavar="DIR", required=True,
                   help="directory of the repositories or snapshots (required: every "
                        "instance's files are read at its base commit; with --fetch, where "
                        "missing ones are cloned)")
    p.add_argument("--fetch", action="store_true",
                   help="clone missing repositories (blobless) into --repos")
    p.add_argument("--out", default="-", metavar="FILE",
                   help="results file: JSONL, or Parquet when FILE ends in .parquet (typed "
                        "columns, docs/results-parquet.md); default: JSONL on standard output")
    p.add_argument("--preset", choices=("strict", "contextbench", "locagent"),
                   default="strict",
                   help="strict (default): ctxeval's conventions; contextbench: reproduce the "
                        "published ContextBench evaluator number for number; locagent: "
                        "context as strict, the ranked metrics as LocAgent's eval_metric.py "
                        "computes them (docs/presets.md)")
    p.add_argument("--k", default="1,3,5,10", metavar="K[,K...]",
                   help="cut-offs of the ranked localisation metrics in each row's ranking "
                        "block (Acc@k, Recall@k, Precision@k, nDCG@k, MAP@k at file, module "
                        "and function level; docs/metrics.md); under --preset locagent Recall "
                        "divides by min(gold, the largest k), so give LocAgent's own list "
                        "(1,3,5 for files, 5,10 for modules and functions) to match its tables")
    p.add_argument("--budget-lines", type=int, default=500, metavar="N",
                   help="budgeted recall: the share of gold lines and files among the first "
                        "N distinct lines shown (default 500, SWE-Explore's budget)")
    p.add_argument("--final", choices=("declared", "union", "last"), default="declared",
                   help="final context: the declared one where there is one, else the union "
                        "of views (declared, default); always the union; the last step")
    p.add_argument("--format", metavar="F", help="force one input format (no detection)")
    p.add_argument("--all-gold", action="store_true",
                   help="write an agent_failure row for every gold instance a run lacks")
    p.add_argument("--text", action="store_true",
                   help="add SQuAD-style token overlap of the final context's text with the "
                        "gold context's text, and of the model patch with the gold patch")
    p.add_argument("--views", action="store_true",
                   help="also write what each step displayed and edited to <out>.views.jsonl "
                        "(results.jsonl -> results.views.jsonl), for 'ctxeval view'; the rows "
                        "stay as they are")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="threads that parse definitions while the evaluation reads, plans "
                        "and scores beside them (default 1); the work is shared out by file "
                        "path, so one repository keeps every thread busy; rows are the same "
                        "and keep the input order")
    p.add_argument("--cache-dir", metavar="D",
                   help="keep parsed definitions and commits' file lists here across "
                        "evaluations (default: $CTXEVAL_CACHE_DIR, else the user cache "
                        "directory)")
    p.add_argument("--no-cache", action="store_true",
                   help="no on-disk cache of definitions and file lists")
    p.add_argument("--no-incremental", action="store_true",
                   help="parse every file version from scratch (by default a version is "
                        "re-parsed from an earlier version's tree where the two differ little; "
                        "the definitions are the same)")
    p.add_argument("--resume", action="store_true",
                   help="keep the rows already in --out and evaluate only the rest (refused "
                        "when the rows were made with other gold, --preset, --final, --text "
                        "or ctxeval version)")
    p.add_argument("--git-timeout", type=_seconds, metavar="S",
                   help="seconds a git request may take before it is stopped and its "
                        f"instances become error rows (default {DEFAULT_GIT_TIMEOUT:g}, or "
                        "$CTXEVAL_GIT_TIMEOUT; --fetch gets ten times as long)")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local (default): this machine; ray: a Ray cluster (Ray Data actor "
                        "pools; needs pip install \"ctxeval[ray]\"), the same rows in the same "
                        "order; inputs and gold may also be s3://, gs://, file:// URIs; "
                        "trajectory datasets (.parquet) are shared out a row group at a time")
    p.add_argument("--address", metavar="ADDR",
                   help="the Ray cluster to join (default: RAY_ADDRESS, else a local Ray "
                        "instance); --repos must be a path every node sees, or use --fetch")
    p.add_argument("--actors", type=int, metavar="N",
                   help="with --engine ray: the evaluating actors (default: the cluster's CPUs)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    p.set_defaults(func=_cmd_evaluate)


# ------------------------------------------------------------------------------ convert / inspect


def _cmd_convert(args: argparse.Namespace) -> int:
    from .errors import CtxevalError, RepoError
    from .evaluation.resolve import TrajectoryResolver
    from .reading.adapters import ReadOptions
    from .reading.adapters.neutral import dumps
    from .reading.inputs import read_inputs
    from .truth.extraction import SymbolExtractor
    from .truth.gold import load_gold
    from .truth.repo import RepoCache

    opts = ReadOptions(preset=args.preset, instance_id=args.instance_id, run=args.run)
    try:
        gold = load_gold(args.gold) if args.gold else None
    except CtxevalError as exc:
        _err(str(exc))
        return EXIT_FAILED
    if args.out != "-":
        from .evaluation.output.ownership import check_ours

        try:
            check_ours(args.out, "trajectories")
        except CtxevalError as exc:
            _err(str(exc))
            return EXIT_FAILED
    repos = RepoCache(Path(args.repos), fetch=args.fetch, git_timeout=args.git_timeout) \
        if args.repos else None
    symbols = SymbolExtractor()
    out = sys.stdout.buffer if args.out == "-" else open(args.out, "wb")  # noqa: SIM115
    n = bad = unresolved = 0
    try:
        for res in read_inputs(args.inputs, fmt=args.format, options=opts):
            if res.problem is not None:
                bad += 1
                _err(str(res.problem))
                continue
            for traj in res.trajectories:
                if repos is not None:
                    g = gold.get(traj.instance_id) if gold is not None else None
                    repo = g.repo if g is not None else traj.repo
                    commit = g.base_commit if g is not None else traj.base_commit
                    try:
                        snap = repos.open(instance_id=traj.instance_id, repo=repo,
                                          commit=commit)
                    except RepoError as exc:
                        _err(f"{traj.instance_id}: not resolved: {exc.message}")
                    else:
                        traj, report = TrajectoryResolver(snap, symbols, args.preset).resolve(
                            traj)
                        for msg in report.messages():
                            unresolved += 1
                            _err(f"{traj.instance_id}: {msg}")
                out.write(dumps(traj))
                n += 1
    except BrokenPipeError:
        raise  # standard output piped into a program that stopped reading: see main()
    except OSError as exc:
        _err(f"cannot write output: {os_error_text(exc, args.out)}")
        return EXIT_FAILED
    finally:
        if out is not sys.stdout.buffer:
            with contextlib.suppress(OSError):
                out.close()
        if repos is not None:
            repos.close()
    if not n:
        _err(f"nothing converted: {bad} inputs unreadable" if bad else
             "no trajectory found in " + ", ".join(args.inputs))
        return EXIT_FAILED
    print(f"converted {n} trajectories" + (f"; {bad} inputs unreadable" if bad else "")
          + (f"; {unresolved} views left unresolved" if unresolved else ""), file=sys.stderr)
    return EXIT_OK


def _add_convert(sub: argparse._SubParsersAction) -> None:
    from .reading.adapters import formats

    p = sub.add_parser(
        "convert", formatter_class=_Formatter,
        help="convert agent outputs to the neutral trajectory format",
        description="Read agent outputs in their own formats and write neutral trajectory "
                    "JSONL (ctxeval-trajectory/1), one line per (run, instance).",
        epilog="Formats (detected per file or directory): " + ", ".join(formats())
               + "\n\nexamples:\n"
                 "  ctxeval convert run/*.traj.json --out trajs.jsonl\n"
                 "  ctxeval convert outputs/ --format swe-agent --run gpt4 --out trajs.jsonl\n"
                 "  ctxeval convert run/ --repos repos/ --gold gold.jsonl "
                 "--out resolved.jsonl\n"
                 "      # with --repos: suffix paths, symbols and printed text as line views\n"
                 "  ctxeval convert session.jsonl --instance-id django__django-11099 "
                 "--out trajs.jsonl")
    p.add_argument("inputs", nargs="+", help="files, directories or globs")
    p.add_argument("--out", default="-", help="output JSONL (default: standard output)")
    p.add_argument("--format", metavar="F", help="force one input format")
    p.add_argument("--instance-id", metavar="ID",
                   help="instance id where the files do not carry one")
    p.add_argument("--run", metavar="NAME", help="run name to record")
    p.add_argument("--preset", choices=("strict", "contextbench", "locagent"),
                   default="strict",
                   help="read as ctxeval does (strict; locagent reads the same) or as the "
                        "ContextBench evaluator does")
    p.add_argument("--repos", metavar="DIR",
                   help="repositories (as for evaluate): resolve suffix paths, symbol views "
                        "and lines printed without numbers (grep without -n, the tail of a "
                        "truncated output) to repo paths and line views at the base commit")
    p.add_argument("--gold", action="append", metavar="G",
                   help="gold giving each instance's repository and base commit")
    p.add_argument("--fetch", action="store_true", help="clone missing repositories")
    p.add_argument("--git-timeout", type=_seconds, metavar="S",
                   help="seconds a git request may take (as for evaluate)")
    p.set_defaults(func=_cmd_convert)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .reading.adapters import ReadOptions
    from .reading.inputs import read_inputs

    shown = 0
    for res in read_inputs([args.traj], fmt=args.format,
                           options=ReadOptions(preset=args.preset)):
        if res.problem is not None:
            _err(str(res.problem))
            return EXIT_FAILED
        for t in res.trajectories:
            if args.instance and t.instance_id != args.instance:
                continue
            shown += 1
            print(f"== {t.instance_id}  run={t.run or '-'}  agent={t.agent or '-'}  "
                  f"model={t.model or '-'}  steps={len(t.steps)}  ({res.fmt})")
            for number, s in enumerate(t.steps, start=1):  # as rows and the viewer number
                action = " ".join(s.action.split())
                if len(action) > 100:
                    action = action[:97] + "..."
                sub = f" (subagent {s.subagent})" if s.subagent else ""
                print(f"  [{number}] {s.tool or '-'}{sub}: {action}")
                for v in s.views:
                    rng = "file only" if v.file_only else \
                        f"{v.start_line}-{'end' if v.end_line is None else v.end_line}"
                    mark = " (post-edit)" if v.post_edit else ""
                    if v.text and not v.post_edit:
                        n = sum(len(c) for c in v.text)
                        mark = f" ({n} printed line{'s' * (n != 1)} to place from the source)"
                    print(f"      view {v.file}:{rng}{mark}")
                for sym in s.symbols:
                    print(f"      symbol {sym.file}:{sym.name}")
                for e in s.edits:
                    print(f"      edit {e}")
            if t.final_context is not None:
                print("  final context (declared):")
                for v in t.final_context:
                    print(f"      {v.file}:{v.start_line}-{v.end_line}")
            if t.ranking is not None:
                print("  ranking (declared, best first):")
                for level, items in t.ranking.levels().items():
                    if items is not None:
                        print(f"      {level}: " + (", ".join(items) or "(empty)"))
            if t.model_patch:
                print(f"  model patch: {len(t.model_patch.splitlines())} lines")
    if not shown:
        _err(f"{args.traj}: no trajectory" + (f" of instance {args.instance!r}"
                                              if args.instance else " found"))
        return EXIT_FAILED
    return EXIT_OK


def _add_inspect(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("inspect", formatter_class=_Formatter,
                       help="show a trajectory's steps and what each displayed",
                       description="Show the steps of a trajectory (any supported format) with "
                                   "the views, symbol views and edits read from each. Steps "
                                   "are numbered from 1, as in result rows and 'ctxeval view'.",
                       epilog="examples:\n"
                              "  ctxeval inspect run/django__django-11099.traj.json\n"
                              "  ctxeval inspect trajs.jsonl --instance django__django-11099\n"
                              "  ctxeval inspect run.traj --preset contextbench\n"
                              "      # as the ContextBench evaluator reads it")
    p.add_argument("traj", help="trajectory file or directory")
    p.add_argument("--instance", metavar="ID", help="only this instance")
    p.add_argument("--format", metavar="F", help="force one input format")
    p.add_argument("--preset", choices=("strict", "contextbench"), default="strict",
                   help="read as ctxeval does (strict, default) or as the ContextBench "
                        "evaluator does (its steps and final context)")
    p.set_defaults(func=_cmd_inspect)


# ------------------------------------------------------------------------------ symbols


def _cmd_symbols(args: argparse.Namespace) -> int:
    import orjson

    from .truth.grammars import normalise_lang
    from .truth.symbols import extract, format_symbols, language_for_path, symbols_json

    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        _err(f"{args.file}: {exc.strerror}")
        return EXIT_FAILED
    if args.lang is not None and normalise_lang(args.lang) is None:
        from .truth.grammars import GRAMMARS

        _err(f"unknown language {args.lang!r}; one of: {', '.join(GRAMMARS)}")
        return EXIT_USAGE
    lang = args.lang or language_for_path(args.file)
    defs = extract(data, args.file, preset=args.preset, lang=args.lang)
    if defs is None:
        _err(f"{args.file}: no symbols: "
             + ("unknown language (use --lang)" if lang is None else f"cannot parse as {lang}"))
        return EXIT_FAILED
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(symbols_json(defs)) + b"\n")
    else:
        print(format_symbols(defs))
    return EXIT_OK


def _add_symbols(sub: argparse._SubParsersAction) -> None:
    from .truth.grammars import GRAMMARS

    p = sub.add_parser("symbols", formatter_class=_Formatter,
                       help="list the definitions tree-sitter finds in a file",
                       description="List the definitions (the units of the symbol "
                                   "granularity) that ctxeval finds in a source file.",
                       epilog="examples:\n"
                              "  ctxeval symbols src/module.py\n"
                              "  ctxeval symbols lib/shapes.h --lang cpp --json\n"
                              "  ctxeval symbols src/module.py --preset contextbench")
    p.add_argument("file", help="the source file")
    p.add_argument("--lang", help="language, when the extension does not say: "
                                  + ", ".join(GRAMMARS) + " (or js, ts, py, c++, c#, rs, rb, kt)")
    p.add_argument("--preset", choices=("strict", "contextbench"), default="strict",
                   help="which definition kinds count")
    p.add_argument("--json", action="store_true", help="one JSON array of objects")
    p.set_defaults(func=_cmd_symbols)


# ------------------------------------------------------------------------------ report / compare


def _add_report(sub: argparse._SubParsersAction) -> None:
    from .analysis.reports.cli import add_parser

    add_parser(sub)


def _add_compare(sub: argparse._SubParsersAction) -> None:
    from .analysis.comparison import add_parser

    add_parser(sub)


# ------------------------------------------------------------------------------ view


def _cmd_view(args: argparse.Namespace) -> int:
    from .analysis.reports.viewer import write_view
    from .errors import CtxevalError

    try:
        written = write_view(args.results, args.out, instances=args.instance or (),
                             runs=args.run or ())
    except CtxevalError as exc:
        _err(str(exc))
        return EXIT_FAILED
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        _err(f"cannot write {exc.filename or args.out}: {exc.strerror or exc}")
        return EXIT_FAILED
    print(f"wrote {len(written)} page{'s' * (len(written) != 1)} to {args.out}",
          file=sys.stderr)
    return EXIT_OK


def _add_view(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view", formatter_class=_Formatter,
        help="HTML pages of what each agent looked at, per instance",
        description="Draw, per instance, what each run looked at: the per-step coverage "
                    "curves of all runs on one plot (line and symbol granularity, first gold "
                    "step marked); for each gold file a strip of its lines with the gold "
                    "ranges and definitions, and per run the lines each step showed, the "
                    "final context and the gold lines seen but dropped from it; and each "
                    "run's timeline (tool, action, tokens, what it viewed and edited, whether "
                    "it showed gold). Pages are self-contained: inline SVG and CSS, a few "
                    "lines of inline script, nothing loaded from anywhere.",
        epilog="The ranges come from the views sidecar that 'ctxeval evaluate --views' writes "
               "beside the rows (results.jsonl -> results.views.jsonl); the scores from the "
               "rows. See docs/viewer.md.\n\n"
               "examples:\n"
               "  ctxeval evaluate --gold gold.jsonl --run a=runs/a --run b=runs/b \\\n"
               "      --repos repos/ --out results.jsonl --views\n"
               "  ctxeval view results.jsonl --out view/          # index.html + one page "
               "per instance\n"
               "  ctxeval view results.jsonl --instance django__django-11099 --out page.html\n"
               "  ctxeval report results.jsonl --format html --out report.html --link-views view/")
    p.add_argument("results", nargs="+", help="results JSONL written by 'ctxeval evaluate "
                                              "--views' (the sidecar is found beside each)")
    p.add_argument("--out", required=True, metavar="DIR|PAGE.html",
                   help="a directory (index.html and one page per instance), or one .html "
                        "file when a single instance is selected")
    p.add_argument("--instance", action="append", metavar="ID",
                   help="only this instance; repeatable")
    p.add_argument("--run", action="append", metavar="NAME",
                   help="only this run; repeatable")
    p.set_defaults(func=_cmd_view)


# ------------------------------------------------------------------------------ main


#: The commands, in the order ``ctxeval --help`` lists them.
COMMANDS = ("evaluate", "report", "compare", "view", "convert", "inspect", "symbols")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, a parser that knows that one command alone.

    ``main`` builds only the command it is given: the parsers of ``report`` and ``compare``
    import the analysis stage (0.25 s, an eighth of a cold evaluation on the real-history
    benchmark) to list their choices, which ``evaluate`` never uses."""
    parser = argparse.ArgumentParser(
        prog="ctxeval", formatter_class=_Formatter,
        description="Score how coding agents find context: which files, definitions, lines "
                    "and bytes an agent looked at compared with what it needed, how fast it "
                    "got there and what it re-read.",
        epilog=_EPILOG)
    parser.add_argument("--version", action="version", version=f"ctxeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    adders = dict(zip(COMMANDS, (_add_evaluate, _add_report, _add_compare, _add_view,
                                 _add_convert, _add_inspect, _add_symbols), strict=True))
    for name, add in adders.items():
        if only is None or name == only:
            add(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stopped as an interrupt is (rows written so far are complete, the
    extraction threads stopped, ``--resume`` finishes the run), with the signal's exit status."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def _on_termination() -> dict[int, Any]:
    """Job schedulers stop with SIGTERM (and a closed terminal sends SIGHUP): unwind as for
    Ctrl-C instead of dying on the spot, which would leave a torn last row behind. Returns
    the handlers replaced, to be put back when the command returns."""
    import signal
    import threading

    replaced: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return replaced
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            replaced[sig] = signal.signal(sig, _raise_terminated)
    return replaced


#: The cyclic collector's thresholds for a command's local evaluation (:func:`_collect_less`).
COLLECTOR_THRESHOLDS = (20000, 10, 10)


def _collect_less() -> None:
    """Before a local evaluation whose process ends with it: what the imports made is frozen
    out of the cyclic collector, and it runs less often (:data:`COLLECTOR_THRESHOLDS`).

    An evaluation keeps most of what it makes (definitions, line indexes, kept rows), so the
    default thresholds (700, 10, 10) had the collector walk the same survivors again and
    again: 190 collections and 0.04 s of CPU in a cold run of the real-history benchmark,
    7% of a warm one; 3 collections and 0.013 s with these. Reference counting still frees
    everything that is not in a cycle at once, and cycles are still collected, every 20,000
    new container objects. The API and in-process :func:`main` keep the caller's settings."""
    import gc

    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


#: Whether the process ends when the command returns (:func:`run`).
_ENDS_WITH_COMMAND = False


def run() -> NoReturn:
    """The ``ctxeval`` command (and ``python -m ctxeval``): :func:`main`, then the process
    ends.

    After a local evaluation it ends at once (``os._exit``): every output is written, closed
    and flushed by then, the ``git`` readers stopped and the threads joined, and what is left
    (parse trees, caches: :data:`ctxeval.evaluation.run.kept_until_exit`) is the operating
    system's to reclaim, not the interpreter's to free object by object. Any other command
    exits as usual (the Ray engine's clean-up, for one, runs at exit)."""
    global _ENDS_WITH_COMMAND
    _ENDS_WITH_COMMAND = True
    code = main()
    evaluation = sys.modules.get("ctxeval.evaluation.run")
    if evaluation is None or not evaluation.kept_until_exit:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone: nothing more to say
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    replaced = _on_termination()
    try:
        return int(args.func(args))
    except Terminated as exc:
        _err(f"stopped by signal {exc.signum}")
        return 128 + exc.signum
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        # Output piped into a program that stopped reading (e.g. head): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    finally:
        import signal

        for sig, handler in replaced.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
