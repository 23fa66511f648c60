"""The staged evaluator (``ctxeval.evaluation``): plan → extract → score.

Rows must not depend on how definitions were extracted: in this process or in workers, from
scratch or incrementally, from the disk cache or not, with a worker killed half-way. The
workload is the benchmark's synthetic one (git repositories whose files change by a few lines
from commit to commit), kept small.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import process_alive, workload_module
from ctxeval.evaluation.extract import PathShards, ordered
from ctxeval.evaluation.plan import needs, plan_item
from ctxeval.evaluation.run import Evaluator, RunSpec, Summary, evaluate
from ctxeval.extraction import SymbolExtractor
from ctxeval.gold import load_gold
from ctxeval.prepare import Preparer
from ctxeval.repo import RepoCache


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("workload")
    workload_module().generate(out, instances=12, runs=2, repos=2, files_per_repo=12, seed=3)
    return out


def _evaluate(wl: Path, out: Path, **kw) -> bytes:
    runs = [RunSpec(r.stem, [str(r)]) for r in sorted((wl / "runs").glob("*.jsonl"))]
    summary = evaluate(gold=[wl / "gold.jsonl"], runs=runs, repos=wl / "repos", out=out,
                       progress=False, **kw)
    assert summary.rows.get("ok") == 24 and not summary.errors
    return out.read_bytes()


def test_rows_do_not_depend_on_how_definitions_were_found(workload: Path, tmp_path: Path
                                                          ) -> None:
    base = _evaluate(workload, tmp_path / "a.jsonl", incremental=False)
    assert _evaluate(workload, tmp_path / "b.jsonl") == base  # incremental, one process
    assert _evaluate(workload, tmp_path / "c.jsonl", jobs=2) == base
    assert _evaluate(workload, tmp_path / "d.jsonl", jobs=2, incremental=False) == base
    cache = tmp_path / "cache"
    assert _evaluate(workload, tmp_path / "e.jsonl", jobs=2, cache_dir=cache) == base  # cold
    assert _evaluate(workload, tmp_path / "f.jsonl", cache_dir=cache) == base  # warm
    meta = json.loads((tmp_path / "c.jsonl.meta.json").read_text())
    # The workers did the parsing, and their counts reach the sidecar.
    assert meta["symbol_stats"]["parsed"] > 0 and meta["symbol_stats"]["incremental"] > 0
    warm = json.loads((tmp_path / "f.jsonl.meta.json").read_text())["symbol_stats"]
    assert warm["parsed"] == 0 and warm["disk_cached"] > 0


def test_a_worker_killed_mid_run_changes_no_row(workload: Path, tmp_path: Path) -> None:
    base = _evaluate(workload, tmp_path / "base.jsonl")
    gold = load_gold([workload / "gold.jsonl"])
    runs = sorted((workload / "runs").glob("*.jsonl"))
    from ctxeval.results import dumps_row

    with RepoCache(workload / "repos") as repos, \
            Evaluator(gold, repos, jobs=2, symbols=SymbolExtractor(incremental=True)) as ev:
        pids = ev._extract_stage().pool.pids()  # type: ignore[union-attr]
        assert len(pids) == 2
        lines = []
        summary = Summary()
        for k, r in enumerate(runs):
            for row in ev.run(RunSpec(r.stem, [str(r)]), summary):
                if k == 0 and not lines:
                    os.kill(pids[0], signal.SIGKILL)
                lines.append(dumps_row(row))
        assert ev.notes and "worker process failed" in ev.notes[0]
    assert b"".join(lines) == base


def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    """However the evaluation ends (SIGKILL included), no worker process stays behind."""
    code = (
        "import sys, time\n"
        "from ctxeval.evaluation.workers import ExtractPool\n"
        "from ctxeval.extraction import SymbolSettings\n"
        "pool = ExtractPool(2, SymbolSettings())\n"
        "print(' '.join(map(str, pool.pids())), flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        proc.kill()
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in pids if process_alive(p)]
    assert alive == []


def test_needs_list_each_blob_once_and_skip_what_is_known(workload: Path) -> None:
    gold = load_gold([workload / "gold.jsonl"])
    symbols = SymbolExtractor()
    prep = Preparer(symbols)
    with RepoCache(workload / "repos") as repos:
        trajs = [json.loads(line) for line in
                 (workload / "runs" / "run0.jsonl").read_text().splitlines()][:6]
        from ctxeval.adapters.neutral import parse_record

        items = [plan_item(prep, repos, g, t, "run0", "ok", None)
                 for t in (parse_record(r, "x", i) for i, r in enumerate(trajs))
                 if (g := gold.get(t.instance_id)) is not None]
        assert len(items) == 6 and all(i.planned is not None for i in items)
        wanted = needs(items, symbols, "strict")
        keys = [n.key for n in wanted]
        assert len(keys) == len(set(keys)) > 0
        # Exactly the blobs the finished instances read: every existing file of their tables.
        files = {(i.snap.blob_id(p), p) for i in items for p, _ in i.planned.table.needs()}
        assert {(n.blob, n.path) for n in wanted} <= files
        assert {n.blob for n in wanted} == {b for b, _ in files}
        # Once extracted (in path order, each path's versions oldest first), nothing is left.
        order = ordered(wanted)
        assert all(a.shard < b.shard or (a.shard == b.shard and a.order <= b.order)
                   for a, b in itertools.pairwise(order))
        for n in order:
            symbols.get(n.blob, n.snap.read(n.path) or b"", n.lang_path, n.preset)
        assert needs(items, symbols, "strict") == []
        assert needs(items, SymbolExtractor(), "strict", pending=set(keys)) == []


def test_path_shards_keep_a_path_on_one_worker_and_spread_new_paths() -> None:
    shards = PathShards(2)
    # New paths go largest first to the least loaded worker: a (100) then b (60) and c (50).
    homes = shards.assign([(("r", "c.py"), 50), (("r", "a.py"), 100), (("r", "b.py"), 60)])
    assert homes[1] != homes[2] == homes[0]
    assert sorted(shards.load) == [100, 110]
    # A path's later versions stay where it began, whatever the load.
    assert shards.assign([(("r", "a.py"), 500), (("r", "c.py"), 5)]) == [homes[1], homes[0]]
    a, c = homes[1], homes[0]
    assert shards.load[a] == 600 and shards.load[c] == 115
    # Versions of one path first seen together count once, together.
    (d1, d2) = shards.assign([(("r", "d.py"), 10), (("r", "d.py"), 10)])
    assert d1 == d2 == c


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_evaluation_leaves_complete_rows_no_process_and_resumes(
        tmp_path: Path, sig: signal.Signals) -> None:
    """A job scheduler's SIGTERM (or SIGHUP) stops ``-j 2`` as Ctrl-C does: exit 128+N, only
    whole rows written, no worker left holding the caller's pipes (``communicate`` returns),
    and ``--resume`` completes the run to exactly the rows of an uninterrupted one."""
    wl = tmp_path / "wl"
    workload_module().generate(wl, instances=60, runs=3, repos=2, files_per_repo=20, seed=5)
    base = [sys.executable, "-m", "ctxeval", "evaluate", "--gold", str(wl / "gold.jsonl"),
            "--repos", str(wl / "repos"), "-q", "--no-cache", "-j", "2"]
    for r in sorted((wl / "runs").glob("*.jsonl")):
        base += ["--run", f"{r.stem}={r}"]
    full = tmp_path / "full.jsonl"
    subprocess.run([*base, "--out", str(full)], check=True, capture_output=True)
    out = tmp_path / "out.jsonl"
    with subprocess.Popen([*base, "--out", str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not (
                out.exists() and out.read_bytes().count(b"\n") >= 1):
            time.sleep(0.005)
        proc.send_signal(sig)
        _stdout, stderr = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the evaluation finished before the signal")
    assert proc.returncode == 128 + sig, stderr
    assert b"stopped by signal" in stderr
    written = out.read_bytes()
    assert written.endswith(b"\n") or written == b""
    assert all(json.loads(line)["instance_id"] for line in written.splitlines())
    subprocess.run([*base, "--out", str(out), "--resume"], check=True, capture_output=True)
    got, want = out.read_bytes().splitlines(), full.read_bytes().splitlines()
    assert len(got) == len(want) and sorted(got) == sorted(want)
