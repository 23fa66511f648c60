"""The staged evaluator (``ctxeval.evaluation``): plan → extract → score.

Rows must not depend on how definitions were extracted: in the calling thread or on native
threads, from scratch or incrementally, from the disk cache or not, with the background
extraction failing half-way; and nothing the evaluation starts may outlive it. The
workload is the benchmark's synthetic one (git repositories whose files change by a few lines
from commit to commit), kept small.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import child_pids, process_alive, workload_module
from ctxeval.evaluation.extract import ThreadExtractor, ordered
from ctxeval.evaluation.plan import needs, plan_item
from ctxeval.evaluation.prepare.preparer import Preparer
from ctxeval.evaluation.run import Evaluator, RunSpec, Summary, evaluate
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.gold import load_gold
from ctxeval.truth.repo import RepoCache


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
    # The native threads did the parsing, incrementally, and the counts reach the sidecar.
    assert meta["symbol_stats"]["parsed"] > 0 and meta["symbol_stats"]["incremental"] > 0
    warm = json.loads((tmp_path / "f.jsonl.meta.json").read_text())["symbol_stats"]
    assert warm["parsed"] == 0 and warm["disk_cached"] > 0


@pytest.mark.parametrize("jobs", [1, 2])  # -j 1 extracts on a background thread too
def test_background_extraction_failing_changes_no_row(workload: Path, tmp_path: Path, jobs: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base = _evaluate(workload, tmp_path / "base.jsonl")
    gold = load_gold([workload / "gold.jsonl"])
    runs = sorted((workload / "runs").glob("*.jsonl"))
    from ctxeval.evaluation.output.results import dumps_row

    symbols = SymbolExtractor(incremental=True)
    calls = []
    real = symbols.get_many

    def failing(items, threads=1):
        calls.append(threading.current_thread().name)
        if len(calls) == 2:
            raise MemoryError("injected")
        return real(items, threads)

    monkeypatch.setattr(symbols, "get_many", failing)
    with RepoCache(workload / "repos") as repos, \
            Evaluator(gold, repos, jobs=jobs, symbols=symbols) as ev:
        lines = []
        summary = Summary()
        for r in runs:
            lines.extend(dumps_row(row) for row in ev.run(RunSpec(r.stem, [str(r)]), summary))
        assert ev.notes and "background extraction failed (MemoryError: injected)" in ev.notes[0]
    # After the failure extraction moved to the calling thread: no background thread started
    # another call, but the one another thread may have had under way when the first failed.
    assert 2 <= len(calls) <= 1 + jobs
    assert all(name.startswith("ctxeval-extract-") for name in calls)
    assert b"".join(lines) == base


def test_runs_are_one_pipeline_with_each_runs_rows_in_order(workload: Path) -> None:
    """``Evaluator.runs`` plans the next run while the last batches of one are in flight (the
    threads would wait at every run's end otherwise), and gives each run's rows as ``run``
    does, run after run; the summary counts each run once all of it is planned."""
    gold = load_gold([workload / "gold.jsonl"])
    specs = [RunSpec(r.stem, [str(r)]) for r in sorted((workload / "runs").glob("*.jsonl"))]
    assert len(specs) == 2
    with RepoCache(workload / "repos") as repos:
        with Evaluator(gold, repos, jobs=2) as ev:
            one_by_one = [(s.name, row) for s in specs for row in ev.run(s, Summary())]
        with Evaluator(gold, repos, jobs=2) as ev:
            events: list[tuple[str, str]] = []
            plan, scored = ev.plan_trajectories, ev._score

            def planning(trajs, pred_file, ctx):  # type: ignore[no-untyped-def]
                events.append(("plan", ctx.name))
                return plan(trajs, pred_file, ctx)

            def scoring(batch, ticket):  # type: ignore[no-untyped-def]
                events.append(("score", batch.ctx.name))
                return scored(batch, ticket)

            ev.plan_trajectories, ev._score = planning, scoring  # type: ignore[method-assign]
            summary = Summary()
            together = list(ev.runs(specs, summary))
    assert together == one_by_one and len(together) == 24
    first, second = specs[0].name, specs[1].name
    # the second run was planned before the first one's last batch was scored
    assert events.index(("plan", second)) < len(events) - 1 - events[::-1].index(
        ("score", first))
    assert summary.uncovered == {first: 0, second: 0}


def _held(wl: Path, open_at: int, timeout: float) -> tuple[int | None, int, list]:
    """Six runs of the same trajectories (the later ones send nothing to extract), evaluated
    with extraction held until ``open_at`` batches are planned, or ``timeout``: the batches
    planned when extraction was first let go by its timeout (None: by the planning), the
    most batches planned and not yet scored, and the rows."""
    gold = load_gold([wl / "gold.jsonl"])
    first = sorted((wl / "runs").glob("*.jsonl"))[0]
    specs = [RunSpec(f"again{k}", [str(first)]) for k in range(6)]  # 3 planned batches each
    symbols = SymbolExtractor()
    gate = threading.Event()
    real = symbols.get_many

    count = {"planned": 0, "scored": 0, "most waiting": 0}
    timed_out: list[int] = []

    def held(items, threads=1):  # type: ignore[no-untyped-def]
        if not gate.wait(timeout=timeout):
            timed_out.append(count["planned"])
            gate.set()
        return real(items, threads)

    symbols.get_many = held  # type: ignore[method-assign]
    with RepoCache(wl / "repos") as repos, Evaluator(gold, repos, jobs=1,
                                                     symbols=symbols) as ev:
        plan, scored = ev.plan_trajectories, ev._score

        def planning(trajs, pred_file, ctx):  # type: ignore[no-untyped-def]
            count["planned"] += 1
            if count["planned"] == open_at:
                gate.set()
            return plan(trajs, pred_file, ctx)

        def scoring(batch, ticket):  # type: ignore[no-untyped-def]
            count["most waiting"] = max(count["most waiting"],
                                        count["planned"] - count["scored"])
            count["scored"] += 1
            return scored(batch, ticket)

        ev.plan_trajectories, ev._score = planning, scoring  # type: ignore[method-assign]
        rows = list(ev.runs(specs, Summary()))
    # each run ends with a batch of its own, with nothing planned in it
    assert count["scored"] == count["planned"] + len(specs)
    assert len(rows) == 6 * 12 and {name for name, _r in rows} == {s.name for s in specs}
    return (timed_out[0] if timed_out else None), count["most waiting"], rows


def test_batches_without_new_blobs_do_not_stop_the_planning(
        workload: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Later runs over the same trajectories send nothing to extract; such batches do not
    count towards the batches in flight, so the calling thread plans on (to the next blobs
    there may be) while the threads are still on the first run's, up to ``MOST_PLANNED``.
    Counted as before, ``MOST_AHEAD`` batches would fill the window, and held extraction
    would be let go only by its timeout."""
    from ctxeval.evaluation import run as evaluation_run

    past = evaluation_run.MOST_AHEAD + 2
    t = time.monotonic()
    timed_out, most, rows = _held(workload, past, timeout=20)
    assert timed_out is None and time.monotonic() - t < 15 and most >= past
    # The bound of all batches planned ahead still holds: with 3 batches in flight at most
    # (the first run's) and 6 in all, planning stops before a 7th batch of trajectories (an
    # end-of-run batch takes a place too), and held extraction is let go by its timeout, not
    # by a 9th batch. (Past 10 batches, planning here needs definitions of the files it
    # places views in, so it waits for held extraction anyway.)
    monkeypatch.setattr(evaluation_run, "MOST_AHEAD", 3)
    monkeypatch.setattr(evaluation_run, "MOST_PLANNED", 6)
    timed_out, most, bounded = _held(workload, 9, timeout=5)
    assert timed_out is not None and 3 < timed_out <= 7 and most <= 7
    assert bounded == rows


def test_rows_in_flight_come_out_before_a_later_run_fails(workload: Path, tmp_path: Path
                                                          ) -> None:
    """A run that cannot be started (here its results file is missing) stops the evaluation
    as before: every row of the runs before it is given first."""
    from ctxeval.errors import InputError

    gold = load_gold([workload / "gold.jsonl"])
    runs = sorted((workload / "runs").glob("*.jsonl"))
    specs = [RunSpec(runs[0].stem, [str(runs[0])]),
             RunSpec(runs[1].stem, [str(runs[1])], [str(tmp_path / "missing.json")])]
    got = []
    with RepoCache(workload / "repos") as repos, Evaluator(gold, repos, jobs=2) as ev, \
            pytest.raises(InputError, match=r"missing\.json"):
        for name, row in ev.runs(specs, Summary()):
            got.append((name, row["instance_id"]))
    assert len(got) == 12 and {name for name, _ in got} == {runs[0].stem}


def test_a_path_keeps_to_its_thread_unless_that_thread_is_behind() -> None:
    """Versions of one path go to one thread (incremental re-parsing); a path moves only when
    its thread has more bytes waiting than the least busy one plus the path's own."""
    ex = ThreadExtractor(SymbolExtractor(), 2)
    try:
        first = ex._thread_of("a.py", 100)
        assert ex._thread_of("a.py", 100) == first
        ex._workers[first].queued = 1_000  # as if a large batch were waiting there
        other = ex._thread_of("b.py", 100)  # a new path goes to the least busy thread
        assert other != first
        assert ex._thread_of("a.py", 5_000) == first  # 1,000 behind, less than the path
        assert ex._thread_of("a.py", 100) == other  # 1,000 behind, more than the path
        assert ex._thread_of("a.py", 100) == other  # and stays there
    finally:
        for w in ex._workers:
            w.queued = 0
        ex.close()


def test_a_batch_is_ready_once_every_thread_is_done_with_its_part() -> None:
    """``ready`` says, without waiting, whether ``collect`` would return at once: the blobs
    are read and handed out, and each thread's part is done (or failed)."""
    from concurrent.futures import Future

    handed: Future[list[Future[None]]] = Future()
    parts: list[Future[None]] = [Future(), Future()]
    ticket = (handed, [])
    assert ThreadExtractor.ready(None)
    assert not ThreadExtractor.ready(ticket)  # not yet read from git
    handed.set_result(parts)
    assert not ThreadExtractor.ready(ticket)
    parts[0].set_result(None)
    assert not ThreadExtractor.ready(ticket)  # one thread still extracting
    parts[1].set_exception(RuntimeError("a thread failed"))
    assert ThreadExtractor.ready(ticket)  # collect returns (and notes the failure)
    failed: Future[list[Future[None]]] = Future()
    failed.set_exception(OSError("git"))
    assert ThreadExtractor.ready((failed, []))


def test_nothing_outlives_a_killed_evaluation(workload: Path, tmp_path: Path) -> None:
    """However the evaluation ends (SIGKILL included), no process it started stays behind:
    extraction runs on threads, and each git reader exits when its pipe closes."""
    cmd = [sys.executable, "-m", "ctxeval", "evaluate", "--gold", str(workload / "gold.jsonl"),
           "--repos", str(workload / "repos"), "-q", "--no-cache", "-j", "2",
           "--out", str(tmp_path / "out.jsonl")]
    cmd += [f"--run={r.stem}={r}" for r in sorted((workload / "runs").glob("*.jsonl"))]
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        children: set[int] = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None and not children:
            children = child_pids(proc.pid)
            time.sleep(0.002)
        if proc.poll() is not None:
            pytest.skip("the evaluation finished before a child process was seen")
        proc.kill()
    deadline = time.monotonic() + 20
    alive = children
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {p for p in children if process_alive(p)}
    assert alive == set()


def test_needs_list_each_blob_once_and_skip_what_is_known(workload: Path) -> None:
    gold = load_gold([workload / "gold.jsonl"])
    symbols = SymbolExtractor()
    prep = Preparer(symbols)
    with RepoCache(workload / "repos") as repos:
        trajs = [json.loads(line) for line in
                 (workload / "runs" / "run0.jsonl").read_text().splitlines()][:6]
        from ctxeval.reading.adapters.neutral import parse_record

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
        assert all((a.repo, a.lang_path) < (b.repo, b.lang_path)
                   or ((a.repo, a.lang_path) == (b.repo, b.lang_path) and a.order <= b.order)
                   for a, b in itertools.pairwise(order))
        for n in order:
            symbols.get(n.blob, n.snap.read(n.path) or b"", n.lang_path, n.preset)
        assert needs(items, symbols, "strict") == []
        assert needs(items, SymbolExtractor(), "strict", pending=set(keys)) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_evaluation_leaves_complete_rows_no_process_and_resumes(
        tmp_path: Path, sig: signal.Signals) -> None:
    """A job scheduler's SIGTERM (or SIGHUP) stops ``-j 2`` as Ctrl-C does: exit 128+N, only
    whole rows written, no process left holding the caller's pipes (``communicate`` returns),
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
