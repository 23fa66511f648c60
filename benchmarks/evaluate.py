"""Time ``ctxeval evaluate`` against the parse floor, first on a real repository's history.

Two workloads, leaderboard-shaped (R runs over the same N instances, each at its own commit):

* **real history** (``--real CLONE --repo owner/name``, first): instances at real base commits
  of a real repository (SWE-bench's, completed with commits spread between them), real files,
  synthetic steps (``benchmarks/realhistory.py``);
* **synthetic** (second, and the default without ``--real``): ``benchmarks/workload.py``.

For each, in one run of this script: the **parse floor** (tree-sitter parsing, once, every
distinct blob the runs make the evaluator read; no evaluator parsing from scratch can do less),
the **incremental floor** (the same blobs, each re-parsed from its path's previous version, the
line diff included), and evaluations, each a fresh ``ctxeval evaluate`` process (best of
``--repeat``): cold (no disk cache) with ``-j 1`` and ``-j 2``, with and without incremental
parsing, ``-j 1`` also pinned to one CPU (threads and git children included), and warm (the
disk cache filled by an earlier evaluation); whether their rows are byte-identical; the
ratios the targets are stated in; given its environment (``benchmarks/reference.md``), the
published ContextBench evaluator on the same workload; and, last, where the cold one-core run's
CPU goes, stage by stage (``benchmarks/stages.py``).

``--memory N...`` instead measures the peak resident anonymous memory of the **whole process
tree** (ctxeval and every ``git`` child; pages shared between them counted once,
by proportional share), sampled every 50 ms, of one cold evaluation at each instance count,
over one repository per 50 instances.

    python benchmarks/evaluate.py --real CLONE --repo pydata/xarray [--synthetic]
        [--reference-python VENV/bin/python --reference-source CHECKOUT/Context-Bench]
    python benchmarks/evaluate.py [--instances 100] [--runs 5] [--repos 4] [--workload DIR]
    python benchmarks/evaluate.py --memory 1000 10000 [-j 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floors import incremental_floor, parse_floor, parse_floor_times, touched_blobs
from timing import child_env, command, on_the_pinned_cpu, timed, timed_cpu
from workload import generate

# ---------------------------------------------------------------------------------------------
# Evaluations (each in a child process).

def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def parallel_ceiling(n: int = 8_000_000) -> float:
    """How much faster this machine runs two CPU-bound processes side by side than one after
    the other, now: the most ``-j 2`` can gain at this moment. A virtual machine's second
    core may be shared with other guests; this says how much of it there was."""
    import multiprocessing

    t = time.perf_counter()
    _spin(n)
    _spin(n)
    seq = time.perf_counter() - t
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # started
        t = time.perf_counter()
        pool.map(_spin, [n, n])
        par = time.perf_counter() - t
    return seq / par


def best(cmd_of: Callable[[int], list[str]], repeat: int, one_cpu: bool = False) -> float:
    """Best wall time of ``repeat`` runs (``cmd_of(k)`` is the k-th run's command)."""
    return min(timed([cmd_of(k)], one_cpu) for k in range(repeat))


# ---------------------------------------------------------------------------------------------
# Memory: the whole process tree (ctxeval and every git child).

def _anon_bytes(pid: int, status: dict[str, str]) -> int:
    """The process's resident anonymous memory, pages shared with other processes counted by
    their share (``Pss_Anon``): a child forked and not yet exec'd shares its parent's pages,
    which ``RssAnon`` would count twice. ``RssAnon`` where
    the kernel gives no ``smaps_rollup``."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(status.get("RssAnon", "0 kB").split()[0]) * 1024


def _tree_rss_anon(root: int) -> int:
    """Resident anonymous memory (bytes) of ``root`` and all its descendants (Linux), the
    smaller of two readings in a row: a child forked while the processes are being read (the
    parent read before the fork, the child after it, as for every ``git`` started) would
    otherwise have its parent's shared pages counted one and a half times."""
    return min(_tree_reading(root), _tree_reading(root))


def _tree_reading(root: int) -> int:
    children: dict[int, list[int]] = {}
    status: dict[int, dict[str, str]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            text = Path(f"/proc/{d}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        pid, ppid = int(d), int(fields.get("PPid", "0").strip() or 0)
        children.setdefault(ppid, []).append(pid)
        status[pid] = fields
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        if pid in status:
            total += _anon_bytes(pid, status[pid])
        stack.extend(c for c in children.get(pid, ())
                     if c in status and not _shares_memory(status[c], status[pid]))
    return total


def _shares_memory(child: dict[str, str], parent: dict[str, str]) -> bool:
    """Whether a child is still in its parent's memory: started by vfork (as git is) and not
    yet exec'd, it runs in the parent's address space itself, which Pss_Anon would count
    twice (its resident anonymous size is then exactly the parent's). ctxeval starts no
    process that stays in its memory, so none is left out wrongly."""
    return child.get("RssAnon") == parent.get("RssAnon") and child.get("Name") == parent.get(
        "Name")


def peak_tree_memory(cmd: list[str], every: float = 0.05) -> tuple[float, int, int]:
    """(seconds, peak resident anonymous bytes of the process tree, most processes seen)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=child_env())
    peak = most = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_anon(proc.pid))
        most = max(most, _count_tree(proc.pid))
        time.sleep(every)
    if proc.returncode:
        raise SystemExit(f"evaluation failed: {proc.returncode}")
    return time.perf_counter() - t, peak, most


def _count_tree(root: int) -> int:
    try:
        out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True,
                             check=False).stdout
    except OSError:
        return 0
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    n, stack = 0, [root]
    while stack:
        pid = stack.pop()
        n += 1
        stack.extend(children.get(pid, ()))
    return n


def memory(counts: list[int], seed: int, repos: int | None, jobs: int) -> None:
    """Peak memory of the whole process tree of one cold evaluation (one run) at several
    instance counts, over ``repos`` repositories (default: one per 50 instances): it should
    stay flat as the count grows."""
    for n in counts:
        with tempfile.TemporaryDirectory(prefix="ctxeval-mem-") as tmp_s:
            tmp = Path(tmp_s)
            wl = tmp / "workload"
            n_repos = repos or max(4, n // 50)
            generate(wl, instances=n, runs=1, repos=n_repos, files_per_repo=20, seed=seed)
            runs = sorted((wl / "runs").glob("*.jsonl"))
            cmd = command(wl, runs, wl / "gold.jsonl", tmp / "out.jsonl", None, True, jobs,
                           True)
            dt, peak, most = peak_tree_memory(cmd)
            print(f"  {n:6d} instances over {n_repos:3d} repositories, -j {jobs}: peak "
                  f"resident anonymous memory (PSS) of the process tree {peak / 2**20:6.0f} MiB "
                  f"(at most {most} processes), {dt:6.1f}s")


# ---------------------------------------------------------------------------------------------

Timing = Callable[[], tuple[float, float]]


def paired(evaluation: Timing, against: Timing, n: int) -> list[tuple[float, float]]:
    """``n`` pairs, each ``evaluation`` then ``against`` at once: per pair the ratio of their
    wall seconds and of their CPU seconds. On a shared machine whose speed moves by a fifth
    from one minute to the next, the spread of ratios taken seconds apart says more than one
    ratio of two figures each the least of its own minutes."""
    out = []
    for _ in range(n):
        wall, cpu = evaluation()
        wall_b, cpu_b = against()
        out.append((wall / wall_b, cpu / cpu_b))
    return out


def _spread(label: str, ratios: list[float], target: str, met: Callable[[float], bool]) -> None:
    r = sorted(ratios)
    print(f"  {label}: median {statistics.median(r):.2f}, range {r[0]:.2f} to {r[-1]:.2f}; "
          f"{sum(map(met, r))} of {len(r)} pairs {target}")


def measure(wl: Path, tmp: Path, repeat: int, reference: tuple[str, Path] | None,
            pairs: int = 0) -> None:
    """Every figure of one workload, in one run; ``pairs``: then the paired ratios of the
    targets (:func:`paired`)."""
    meta = json.loads((wl / "workload.json").read_text())
    gold = wl / "gold.jsonl"
    runs = sorted((wl / "runs").glob("*.jsonl"))
    rows = sum(1 for r in runs for _ in r.open())
    blobs = touched_blobs(wl)
    mb = sum(len(d) for _o, _p, d in blobs) / 1e6
    with on_the_pinned_cpu():
        floor = parse_floor(blobs)
        inc_floor = incremental_floor(blobs)
    kind = meta.get("kind", "synthetic")
    print(f"workload ({kind}{', ' + meta['repo'] if 'repo' in meta else ''}): "
          f"{meta['instances']} instances x {meta['runs']} runs = {rows} rows, "
          f"{meta['steps']} steps; {len(blobs)} distinct blobs touched ({mb:.1f} MB)")
    print(f"parse floor:       {floor:7.2f}s  (tree-sitter parse of each distinct blob)")
    print(f"incremental floor: {inc_floor:7.2f}s  ({inc_floor / floor:.2f}x the floor: each "
          f"blob parsed from its path's previous version, edits included)")
    print("evaluations (each a fresh `ctxeval evaluate` process, the configurations in turn, "
          f"best of {repeat} rounds); seconds, rows/s, time / parse floor:")
    out = tmp / "out"
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, float] = {}

    def report(label: str, secs: float) -> None:
        results[label] = secs
        print(f"  {label:34s} {secs:7.2f}s  {rows / secs:8.1f} rows/s  "
              f"{secs / floor:5.2f}x floor")

    def cmd(name: str, cache: str | None, incremental: bool, jobs: int
            ) -> Callable[[int], list[str]]:
        def of(_k: int) -> list[str]:
            # each run writes anew (ctxeval says so when it replaces earlier rows)
            (out / f"{name}.jsonl").unlink(missing_ok=True)
            return command(wl, runs, gold, out / f"{name}.jsonl", cache, incremental, jobs,
                           True)
        return of

    # The configurations are run in turn, round after round (best of ``repeat`` each), with a
    # pass of the parse floor and of the two-process ceiling in every round: on a shared
    # machine whose speed moves by a tenth or more within minutes, each ratio then compares
    # figures taken over the same minutes, not one configuration's fast minute with another's
    # slow one.
    pin = hasattr(os, "sched_setaffinity")
    cold: dict[str, tuple[Callable[[int], list[str]], bool]] = {
        "cold, -j 1 (default: incremental)": (cmd("cold", None, True, 1), False),
        "cold, -j 1, --no-incremental": (cmd("scratch", None, False, 1), False),
        **({"cold, -j 1, pinned to one CPU": (cmd("pinned", None, True, 1), True)}
           if pin else {}),
        "cold, -j 2": (cmd("cold2", None, True, 2), False),
        "cold, -j 2, --no-incremental": (cmd("scratch2", None, False, 2), False),
    }
    cache = tmp / "cache"

    def fill(k: int) -> list[str]:
        shutil.rmtree(cache, ignore_errors=True)
        return command(wl, runs, gold, out / "fill.jsonl", str(cache), True, 1, True)

    warm: dict[str, tuple[Callable[[int], list[str]], bool]] = {
        "warm, -j 1 (disk cache filled)": (cmd("warm", str(cache), True, 1), False),
        "warm, -j 2": (cmd("warm2", str(cache), True, 2), False),
    }
    times: dict[str, float] = {}
    # The ratios to the floor take the floor passes of the cold rounds only, one per round
    # beside the cold configurations, each the best of as many passes as they are: the least
    # of more passes, or of passes from other minutes, would compare the floor's fastest
    # minute with the evaluations' usual ones. The pinned run's CPU seconds (its process
    # tree's) against the floor's: the ratio steal time cannot move.
    pinned_cpu, floor_cpu = float("inf"), float("inf")
    floor = float("inf")

    def floor_pass() -> float:
        nonlocal floor_cpu
        with on_the_pinned_cpu():
            wall, cpu = parse_floor_times(blobs, repeat=1)
        floor_cpu = min(floor_cpu, cpu)
        return wall

    ceilings: list[float] = []
    for k in range(repeat):
        for label, (of, one) in cold.items():
            wall, cpu = timed_cpu([of(k)], one)
            times[label] = min(times.get(label, float("inf")), wall)
            if one:
                pinned_cpu = min(pinned_cpu, cpu)
        ceilings.append(parallel_ceiling())
        floor = min(floor, floor_pass())
    best(fill, 1)
    for k in range(repeat):
        for label, (of, one) in warm.items():
            times[label] = min(times.get(label, float("inf")), timed([of(k)], one))
    ceiling = sum(ceilings) / len(ceilings)
    print(f"parse floor, least of the {repeat} passes of the cold rounds, on the CPU the "
          f"pinned runs use: {floor:.2f}s")
    for label in [*cold, *warm]:
        report(label, times[label])
    names = ["cold", "scratch", "cold2", "scratch2", "fill", "warm", "warm2"]
    names += ["pinned"] if "cold, -j 1, pinned to one CPU" in results else []
    first = (out / "cold.jsonl").read_bytes()
    same = all((out / f"{n}.jsonl").read_bytes() == first for n in names)
    print(f"rows byte-identical across {', '.join(names)}: {same}")
    c1 = results["cold, -j 1 (default: incremental)"]
    print(f"cold / parse floor:      {c1 / floor:.2f}")
    pinned = results.get("cold, -j 1, pinned to one CPU")
    if pinned is not None:
        print(f"  pinned to one CPU:     {pinned / floor:.2f}  (target <= 1.5, issue 24; the parse "
              "floor runs on the same CPU)")
        print(f"    in CPU seconds:      {pinned_cpu / floor_cpu:.2f}  (the process tree's, "
              f"{pinned_cpu:.2f}s, against the floor's, {floor_cpu:.2f}s: steal time left out)")
    gain = c1 / results["cold, -j 2"]
    print(f"-j 2 / -j 1 (cold):      {gain:.2f}  (target >= 1.6; two CPU-bound processes "
          f"gained {ceiling:.2f}x on this machine meanwhile: -j 2 gained {gain / ceiling:.0%} "
          "of that)")
    print(f"-j 2 / -j 1 (warm):      "
          f"{results['warm, -j 1 (disk cache filled)'] / results['warm, -j 2']:.2f}")
    print(f"cold / warm:             {c1 / results['warm, -j 1 (disk cache filled)']:.2f}")
    if pairs:
        print(f"paired ratios ({pairs} pairs each, taken one after the other):")
        if pin:
            def floor_on_pin() -> tuple[float, float]:
                with on_the_pinned_cpu():
                    return parse_floor_times(blobs, repeat=1)

            got = paired(lambda: timed_cpu([cold["cold, -j 1, pinned to one CPU"][0](0)], True),
                         floor_on_pin, pairs)
            _spread("pinned / parse floor, wall", [w for w, _c in got], "<= 1.5",
                    lambda x: x <= 1.5)
            _spread("pinned / parse floor, CPU", [c for _w, c in got], "<= 1.5",
                    lambda x: x <= 1.5)
        got = paired(lambda: timed_cpu([cold["cold, -j 1 (default: incremental)"][0](0)]),
                     lambda: timed_cpu([cold["cold, -j 2"][0](0)]), pairs)
        _spread("-j 1 / -j 2, wall", [w for w, _c in got], ">= 1.6", lambda x: x >= 1.6)
    if reference is not None:
        from reference import run_reference

        (tmp / "ref").mkdir(exist_ok=True)
        ref = run_reference(reference[0], reference[1], wl, tmp / "ref")
        print(f"published evaluator:     {ref:7.2f}s  {rows / ref:8.1f} rows/s")
        print(f"  throughput vs it, cold -j 1: {ref / c1:6.1f}x")
        if pinned is not None:
            print(f"    pinned to one CPU:         {ref / pinned:6.1f}x  (target >= 13)")
        print(f"  throughput vs it, warm -j 1: "
              f"{ref / results['warm, -j 1 (disk cache filled)']:6.1f}x  (target >= 50)")
    if pin:
        from stages import split

        print("where the cold one-core run goes (benchmarks/stages.py), stage by stage:")
        with on_the_pinned_cpu():
            print("\n".join("  " + line for line in split(wl, repeat)))
    print(f"cpus: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", type=Path, metavar="CLONE",
                    help="a local clone of a real repository: build the real-history workload "
                         "from it (benchmarks/realhistory.py) and measure it first")
    ap.add_argument("--repo", help="owner/name of --real, as in SWE-bench (pydata/xarray)")
    ap.add_argument("--real-instances", type=int, default=22)
    ap.add_argument("--workload", type=Path, help="an existing workload directory")
    ap.add_argument("--synthetic", action="store_true",
                    help="also measure the synthetic workload (the default without --real)")
    ap.add_argument("--instances", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repos", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per figure (best kept)")
    ap.add_argument("--pairs", type=int, default=0, metavar="N",
                    help="then N pairs of the pinned run and a floor pass, and of -j 1 and "
                         "-j 2, one after the other: the spread of their ratios")
    ap.add_argument("--reference-python", help="the published evaluator's Python "
                    "(benchmarks/reference.md); with --reference-source, it is timed too")
    ap.add_argument("--reference-source", type=Path)
    ap.add_argument("--memory", type=int, nargs="+", metavar="N",
                    help="only measure peak memory of one run at these instance counts")
    ap.add_argument("--memory-repos", type=int, help="repositories of the memory workload "
                    "(default: one per 50 instances)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="extraction threads (--memory)")
    a = ap.parse_args()
    if a.memory:
        memory(a.memory, a.seed, a.memory_repos, a.jobs)
        return
    reference = (a.reference_python, a.reference_source) \
        if a.reference_python and a.reference_source else None
    with tempfile.TemporaryDirectory(prefix="ctxeval-bench-") as tmp_s:
        tmp = Path(tmp_s)
        if a.real is not None:
            if not a.repo:
                ap.error("--real needs --repo owner/name")
            from realhistory import generate as real_generate

            wl = tmp / "real"
            real_generate(a.real, wl, repo=a.repo, instances=a.real_instances, runs=a.runs)
            measure(wl, tmp / "m-real", a.repeat, reference, a.pairs)
            print()
        if a.workload is not None:
            measure(a.workload, tmp / "m-given", a.repeat, reference, a.pairs)
        elif a.real is None or a.synthetic:
            wl = tmp / "synthetic"
            generate(wl, instances=a.instances, runs=a.runs, repos=a.repos, seed=a.seed)
            print("second case, synthetic (benchmarks/workload.py):")
            measure(wl, tmp / "m-synth", a.repeat, reference, a.pairs)


if __name__ == "__main__":
    main()
