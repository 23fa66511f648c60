"""CPU seconds of each thread of one ``ctxeval evaluate``: where ``-j 2`` can gain over ``-j 1``.

``-j 1`` already runs on more than one thread: the calling thread reads trajectories, plans
and scores; a reader thread reads blobs from ``git`` (whose processes run beside it); one
extraction thread parses. ``-j 2`` adds a second extraction thread. On two cores, ``-j 2``
can then take at best the whole CPU time over two, and ``-j 1`` at best its longest thread:
the ratio between them is bounded by the work *outside* the extraction threads. This script
shows that work, thread by thread, for a cold ``-j 1``, a cold ``-j 2`` and a warm ``-j 1``
on a workload (``benchmarks/realhistory.py`` makes the real one, first;
``benchmarks/workload.py`` a synthetic one, second), each in a fresh process:

* each Python thread's own CPU time, taken in the thread when it ends (the calling thread's
  when the command returns), by name: ``MainThread`` (start-up, imports, reading, planning,
  scoring, writing), ``ctxeval-read`` (handing blobs from git to the threads),
  ``ctxeval-extract-K`` (the core's parse, walk and naming, and turning its answers into
  Python objects under the GIL);
* ``git`` children (``cat-file``, ``ls-tree``);
* the process's CPU time not in any of those (native threads of libraries, if any);
* the wall time, and for each configuration the bound the threads set: the whole CPU time
  over two cores against the longest thread.

    python benchmarks/threads.py WORKLOAD [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import child_env, command

_CHILD = "--child"


def _child(argv: list[str], report: Path) -> None:
    """Runs ``ctxeval`` with ``argv`` in this process and writes each thread's CPU time."""
    spent: dict[str, float] = {}
    lock = threading.Lock()
    run = threading.Thread.run

    def timed(self: threading.Thread) -> None:
        try:
            run(self)
        finally:
            with lock:
                spent[self.name] = spent.get(self.name, 0.0) + time.thread_time()

    threading.Thread.run = timed  # type: ignore[method-assign]
    t0 = time.perf_counter()
    from ctxeval import cli

    code = cli.main(argv)
    wall = time.perf_counter() - t0
    spent["MainThread"] = time.thread_time()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    report.write_text(json.dumps({
        "code": code, "wall": wall, "threads": spent,
        "process": me.ru_utime + me.ru_stime, "git": kids.ru_utime + kids.ru_stime}))


def _role(name: str) -> str:
    if name.startswith("ctxeval-extract-"):
        return "extraction threads"
    if name == "ctxeval-read":
        return "reader thread"
    if name == "MainThread":
        return "calling thread"
    return "other Python threads"


def measure(cmd: list[str], out: Path, report: Path) -> dict[str, float]:
    out.unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, _CHILD, str(report), *cmd[3:]],
                   env=child_env(), check=True, stdout=subprocess.DEVNULL)
    whole = time.perf_counter() - t0
    got = json.loads(report.read_text())
    roles: dict[str, float] = {"calling thread": 0.0, "reader thread": 0.0,
                               "extraction threads": 0.0, "other Python threads": 0.0}
    longest_extract = 0.0
    for name, secs in got["threads"].items():
        roles[_role(name)] += secs
        if name.startswith("ctxeval-extract-"):
            longest_extract = max(longest_extract, secs)
    roles["native threads"] = max(got["process"] - sum(roles.values()), 0.0)
    roles["git processes"] = got["git"]
    roles["wall (process)"] = whole
    roles["longest extraction thread"] = longest_extract
    return roles


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == _CHILD:
        _child(sys.argv[3:], Path(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", type=Path)
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per configuration (the one of least wall time is shown)")
    a = ap.parse_args()
    wl = a.workload
    runs = sorted((wl / "runs").glob("*.jsonl"))
    gold = wl / "gold.jsonl"
    tmp = Path(tempfile.mkdtemp(prefix="ctxeval-threads-"))
    try:
        out, report, cache = tmp / "rows.jsonl", tmp / "threads.json", tmp / "cache"
        configs: dict[str, list[str]] = {
            "cold -j 1": command(wl, runs, gold, out, None, True, 1, True),
            "cold -j 2": command(wl, runs, gold, out, None, True, 2, True),
        }
        results: dict[str, dict[str, float]] = {}
        for name, cmd in configs.items():
            results[name] = min((measure(cmd, out, report) for _ in range(a.repeat)),
                                key=lambda r: r["wall (process)"])
        shutil.rmtree(cache, ignore_errors=True)
        warm = command(wl, runs, gold, out, str(cache), True, 1, True)
        measure(warm, out, report)  # fills the cache
        results["warm -j 1"] = min((measure(warm, out, report) for _ in range(a.repeat)),
                                   key=lambda r: r["wall (process)"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = list(results)
    print(f"workload: {wl.name}, {len(runs)} runs; CPU seconds per thread, the run of least "
          f"wall time of {a.repeat} per configuration")
    print(f"{'':28s}" + "".join(f"{n:>12s}" for n in names))
    for key in results[names[0]]:
        print(f"{key:28s}" + "".join(f"{results[n][key]:12.3f}" for n in names))
    bounds: dict[str, float] = {}
    for n in names:
        r = results[n]
        cpu = sum(r[k] for k in ("calling thread", "reader thread", "extraction threads",
                                 "other Python threads", "native threads", "git processes"))
        bound = bounds[n] = max(cpu / 2, r["calling thread"], r["longest extraction thread"])
        print(f"{n}: CPU {cpu:.3f} s; on two cores at best {bound:.3f} s (the CPU over two, "
              f"or the longest thread); wall {r['wall (process)']:.3f} s")
    one, two = results["cold -j 1"]["wall (process)"], results["cold -j 2"]["wall (process)"]
    print(f"-j 2 / -j 1, cold: {one / two:.2f}; at most {one / bounds['cold -j 2']:.2f} with "
          "-j 2 at its bound on two whole cores")


if __name__ == "__main__":
    main()
