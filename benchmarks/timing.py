"""Timed evaluations, each in a child process: what ``evaluate.py`` and ``reference.py`` both
time ctxeval with.

A module of its own so that neither script imports the other (``evaluate.py`` runs the
published evaluator through ``reference.py``, which times ctxeval the same way; when each
imported the other, the one started as ``__main__`` was loaded a second time as a module).
Run as a script it is the child that evaluates through the Python API instead of the command
(``--drive``), for versions of ctxeval whose command has no cache options.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ctxeval.truth.repo import RepoCache


def cli_has_cache() -> bool:
    """Whether ``ctxeval evaluate`` takes ``--cache-dir``, ``--no-cache`` and
    ``--no-incremental``: then the evaluations are timed through the CLI itself."""
    res = subprocess.run([sys.executable, "-m", "ctxeval", "evaluate", "--help"],
                         capture_output=True, text=True, check=False)
    return all(flag in res.stdout for flag in ("--cache-dir", "--no-cache", "--no-incremental"))


def drive(gold: Path, runs: list[Path], repos: Path, out: Path, cache_dir: str | None,
          incremental: bool, jobs: int) -> int:
    """One evaluation through the Python API (what ``ctxeval evaluate`` does); rows written."""
    from ctxeval.evaluation.output.results import RowWriter
    from ctxeval.evaluation.pipeline import Evaluator, RunSpec, Summary
    from ctxeval.truth.extraction import SymbolExtractor
    from ctxeval.truth.gold import load_gold

    gold_set = load_gold([gold])
    n = 0
    with RepoCache(repos) as repo_cache, out.open("wb") as fh:
        ev = Evaluator(gold_set, repo_cache, jobs=jobs,
                       symbols=SymbolExtractor(cache_dir, incremental=incremental))
        writer = RowWriter(fh)
        summary = Summary()
        for r in runs:
            for row in ev.run(RunSpec(r.stem, [str(r)]), summary):
                writer.write(row)
                n += 1
    return n


def command(wl: Path, runs: list[Path], gold: Path, out: Path, cache: str | None,
            incremental: bool, jobs: int, cli: bool) -> list[str]:
    """The command line of one evaluation of workload ``wl``: ``ctxeval evaluate`` (``cli``),
    else this script driving the Python API."""
    if cli:
        cmd = [sys.executable, "-m", "ctxeval", "evaluate", "--gold", str(gold),
               "--repos", str(wl / "repos"), "--out", str(out), "-q", "-j", str(jobs)]
        for r in runs:
            cmd += ["--run", f"{r.stem}={r}"]
        cmd += ["--cache-dir", cache] if cache else ["--no-cache"]
        if not incremental:
            cmd.append("--no-incremental")
        return cmd
    return [sys.executable, __file__, "--drive", json.dumps({
        "gold": str(gold), "runs": [str(r) for r in runs], "repos": str(wl / "repos"),
        "out": str(out), "cache": cache, "incremental": incremental, "jobs": jobs})]


def child_env() -> dict[str, str]:
    """The environment of the timed evaluations: as a user's (bytecode caches allowed)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def one_cpu() -> None:
    """Pins the calling process (and its threads and git children) to one CPU."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


@contextlib.contextmanager
def on_the_pinned_cpu() -> Iterator[None]:
    """This process on the CPU :func:`one_cpu` pins to, meanwhile: a figure it is compared
    with is then taken on the same CPU (a shared machine's CPUs are not equally fast from
    minute to minute: one may be lent to a neighbour while the other is not)."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    was = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(was)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, was)


def timed(cmds: list[list[str]], pinned: bool = False) -> float:
    """Wall seconds for ``cmds`` run concurrently (one process each); ``pinned``: each pinned
    to one CPU, with its threads and git children."""
    return timed_cpu(cmds, pinned)[0]


def timed_cpu(cmds: list[list[str]], pinned: bool = False) -> tuple[float, float]:
    """:func:`timed`, and the CPU seconds (user and system) of the processes and of their
    children (git): on a shared machine the time a CPU is lent to a neighbour (steal) shows in
    the wall seconds only."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    procs = [subprocess.Popen(c, env=child_env(), preexec_fn=one_cpu if pinned else None)
             for c in cmds]
    codes = [p.wait() for p in procs]
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if any(codes):
        raise SystemExit(f"evaluation failed: {codes}")
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drive", required=True, metavar="JSON",
                    help="evaluate through the Python API: gold, runs, repos, out, cache, "
                         "incremental, jobs (as command() writes them)")
    c = json.loads(ap.parse_args().drive)
    drive(Path(c["gold"]), [Path(r) for r in c["runs"]], Path(c["repos"]), Path(c["out"]),
          c["cache"], c["incremental"], c["jobs"])


if __name__ == "__main__":
    main()
