"""Fault injection: what a job scheduler, a shared disk and a hurried user do to an evaluation.

Each fault is applied to real evaluations of a small synthetic workload (the benchmark's
generator: git repositories with a history, two runs) and judged against an uninterrupted run of
the same command: the rows must come out equal as sets, with no duplicate, no torn line and no
process left behind, or as error rows and clear exits -- never as a silently wrong row.
``docs/reliability.md`` lists every fault tried here and what happened.

"Random points" are seeded: each signal case waits for its own row count (drawn from a
generator seeded with the case's name) before the signal is sent, so a case is reproducible;
what is asserted does not depend on where the signal landed.
"""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FIXTURES, child_pids, evaluate_example, process_alive, workload_module
from ctxeval.cli import main
from ctxeval.evaluation.output.outfile import LineFile, OutputBusy, lock_holder

EX = FIXTURES / "example"
ROWS = 48  # 24 instances x 2 runs


@pytest.fixture(scope="module")
def wl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults-wl")
    workload_module().generate(out, instances=24, runs=2, repos=2, files_per_repo=12, seed=11)
    return out


def _argv(wl: Path, out: Path, *extra: str, jobs: int = 1) -> list[str]:
    argv = ["evaluate", "--gold", str(wl / "gold.jsonl"), "--repos", str(wl / "repos"),
            "--out", str(out), "-j", str(jobs)]
    for r in sorted((wl / "runs").glob("*.jsonl")):
        argv += ["--run", f"{r.stem}={r}"]
    return argv + list(extra)


def _cmd(wl: Path, out: Path, *extra: str, jobs: int = 1) -> list[str]:
    return [sys.executable, "-m", "ctxeval", *_argv(wl, out, *extra, jobs=jobs)]


@pytest.fixture(scope="module")
def baseline(wl: Path, tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The rows of an uninterrupted run, one per line."""
    out = tmp_path_factory.mktemp("faults-base") / "full.jsonl"
    subprocess.run(_cmd(wl, out, "-q", "--no-cache"), check=True, capture_output=True)
    lines = out.read_bytes().splitlines(keepends=True)
    assert len(lines) == ROWS
    return lines


def _key(line: bytes) -> tuple[str, str]:
    row = json.loads(line)
    return row["run"], row["instance_id"]


def _assert_same_rows(path: Path, baseline: list[bytes]) -> None:
    """The file holds exactly the baseline's rows (any order), each once, all lines whole."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), "torn last line"
    lines = data.splitlines(keepends=True)
    keys = [_key(x) for x in lines]
    assert len(keys) == len(set(keys)), "duplicate rows"
    assert sorted(lines) == sorted(baseline)


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        for k in child_pids(todo.pop()):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def _assert_all_gone(pids: set[int], within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    alive = {p for p in pids if process_alive(p)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {p for p in alive if process_alive(p)}
    assert not alive, "processes left behind: " + "; ".join(
        f"{p} {Path(f'/proc/{p}/cmdline').read_bytes().replace(bytes(1), b' ')[:120]!r}"
        for p in sorted(alive) if process_alive(p))


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return -1


def _wait_for(proc: subprocess.Popen, path: Path, rows: int, seen: set[int]) -> None:
    """Until ``path`` exists with ``rows`` whole rows (or the process ends), collecting the
    process's descendants (the git readers) as they appear."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        seen |= _descendants(proc.pid)
        if _lines(path) >= rows:
            return
        time.sleep(0.005)


# ------------------------------------------------------------------------------ signals

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_at_a_random_point_then_resume_gives_the_uninterrupted_rows(
        wl: Path, baseline: list[bytes], tmp_path: Path, sig: signal.Signals, jobs: int) -> None:
    at = random.Random(f"{sig.name}-{jobs}").randrange(0, ROWS - 8)
    out = tmp_path / "out.jsonl"
    seen: set[int] = set()
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache", jobs=jobs),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        _wait_for(proc, out, at, seen)
        proc.send_signal(sig)
        _stdout, stderr = proc.communicate(timeout=60)
    expected = -sig if sig == signal.SIGKILL else 128 + sig
    assert proc.returncode in (expected, 0), stderr  # 0: it finished first
    _assert_all_gone(seen)
    data = out.read_bytes() if out.exists() else b""  # stopped before it began: no file
    whole = data[:data.rfind(b"\n") + 1]
    if sig != signal.SIGKILL:
        assert data == whole, "an interrupt left a torn line"
    assert set(whole.splitlines(keepends=True)) <= set(baseline)
    with subprocess.Popen(_cmd(wl, out, "--resume", "--no-cache", jobs=jobs),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        seen = _descendants(proc.pid)
        _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert (b"dropped an unfinished last line" in stderr) == (data != whole)
    _assert_all_gone(seen)
    _assert_same_rows(out, baseline)


def test_resume_repairs_a_torn_last_line(wl: Path, baseline: list[bytes], tmp_path: Path
                                         ) -> None:
    """A SIGKILL (or power cut) in the middle of writing a row: ``--resume`` drops the piece and
    evaluates that row again. (On main, --resume failed on the piece: 'not valid JSON'.)"""
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"".join(baseline[:10]) + baseline[10][:57])
    code = main([*_argv(wl, out, "--resume", "--no-cache")])
    assert code == 0
    _assert_same_rows(out, baseline)


# ------------------------------------------------------------------------------ writers


def test_a_second_writer_of_one_out_stops_at_once_naming_the_holder(
        wl: Path, baseline: list[bytes], tmp_path: Path) -> None:
    """Two evaluations into one --out: the second exits 1 at once, naming the file and the pid of
    the first, and leaves the file alone; the first finishes with exactly its rows. (On main
    both printed success and the file lost rows to torn, interleaved lines.)"""
    out = tmp_path / "out.jsonl"
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as first:
        _wait_for(first, out, 3, set())
        first.send_signal(signal.SIGSTOP)  # holds the lock while the second one tries
        try:
            second = subprocess.run(_cmd(wl, out, "--no-cache"), capture_output=True,
                                    timeout=60)
            held = out.read_bytes()
        finally:
            first.send_signal(signal.SIGCONT)
        _stdout, stderr = first.communicate(timeout=60)
    assert second.returncode == 1
    msg = second.stderr.decode()
    assert str(out) in msg and f"process {first.pid}" in msg, msg
    assert held.count(b"\n") >= 3 and held.endswith(b"\n")
    assert first.returncode == 0, stderr
    assert out.read_bytes() == b"".join(baseline)


def test_the_views_sidecar_is_held_too(tmp_path: Path, capsys) -> None:
    out = tmp_path / "results.jsonl"
    side = tmp_path / "results.views.jsonl"
    with LineFile(side):
        assert lock_holder(side) == os.getpid()
        code = main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                     "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "--views",
                     "-q", "--no-cache"])
    assert code == 1
    assert f"{side}: is being written by another evaluation (process {os.getpid()})" in \
        capsys.readouterr().err
    with LineFile(out) as again:  # both released
        assert again.begin(resume=True) == 0


def test_a_lock_is_released_however_its_holder_ends(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    code = ("from ctxeval.evaluation.output.outfile import LineFile\n"
            f"f = LineFile({str(path)!r})\nprint(1, flush=True)\nimport time\ntime.sleep(60)\n")
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stdout.readline()
        with pytest.raises(OutputBusy, match=f"process {proc.pid}"):
            LineFile(path)
        proc.kill()
    with LineFile(path):  # the kernel dropped the lock with the process
        pass


def test_concurrent_evaluations_sharing_a_cache_dir_keep_entries_valid(
        wl: Path, baseline: list[bytes], tmp_path: Path) -> None:
    from ctxeval.truth.cache import _open_seal, decode_definitions

    cache = tmp_path / "cache"
    outs = [tmp_path / f"out{k}.jsonl" for k in range(2)]
    procs = [subprocess.Popen(_cmd(wl, o, "-q", "--cache-dir", str(cache), jobs=2),
                              stderr=subprocess.PIPE) for o in outs]
    for p in procs:
        _stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
    for o in outs:
        _assert_same_rows(o, baseline)
    entries = [p for p in (cache / "symbols").rglob("*") if p.is_file()]
    assert entries and not [p for p in entries if ".tmp-" in p.name]
    for p in entries:
        ns, blob = p.parent.parent.name, p.parent.name + p.name
        payload = _open_seal(f"{blob}\0{ns}".encode(), p.read_bytes())
        assert payload is not None, p
        decode_definitions(payload)
    # the file lists of the commits too: whole, one per commit, each valid
    listings = [p for p in (cache / "listings").rglob("*") if p.is_file()]
    commits = {json.loads(line)["base_commit"]
               for line in (wl / "gold.jsonl").read_text().splitlines()}
    assert sorted(p.parent.name + p.name for p in listings) == sorted(commits)
    for p in listings:
        key = f"{p.parent.name + p.name}\0listing\0{p.parent.parent.name}".encode()
        assert _open_seal(key, p.read_bytes()) is not None, p
    # A truncated entry is a miss, parsed again and rewritten; the rows do not change.
    for p in entries[:3]:
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    warm = tmp_path / "warm.jsonl"
    assert main(_argv(wl, warm, "-q", "--cache-dir", str(cache))) == 0
    _assert_same_rows(warm, baseline)
    stats = json.loads(warm.with_name("warm.jsonl.meta.json").read_text())
    disk = stats["symbol_cache"]["disk_stats"]
    assert disk["corrupt"] == 3 and disk["hits"] > 0 and disk["writes"] == 3
    listed = stats["symbol_cache"]["listing_stats"]
    assert listed["hits"] == len(commits) and listed["writes"] == listed["misses"] == 0


# ------------------------------------------------------------------------------ repositories


def _rows_with(wl: Path, fault, jobs: int = 1) -> Iterator[tuple[bytes, dict]]:
    """Rows of the workload evaluated in this process, ``fault()`` called after the first."""
    from ctxeval.evaluation.output.results import dumps_row
    from ctxeval.evaluation.run import Evaluator, RunSpec, Summary
    from ctxeval.truth.extraction import SymbolExtractor
    from ctxeval.truth.gold import load_gold
    from ctxeval.truth.repo import RepoCache

    gold = load_gold([wl / "gold.jsonl"])
    with RepoCache(wl / "repos") as repos, \
            Evaluator(gold, repos, jobs=jobs, symbols=SymbolExtractor(incremental=True)) as ev:
        first = True
        for r in sorted((wl / "runs").glob("*.jsonl")):
            for row in ev.run(RunSpec(r.stem, [str(r)]), Summary()):
                yield dumps_row(row), row
                if first:
                    fault()
                    first = False


def _judge(rows: list[tuple[bytes, dict]], baseline: list[bytes]) -> dict[str, int]:
    """Every row is the uninterrupted run's or an error row that says why; counts by outcome."""
    assert len(rows) == ROWS
    out = {"same": 0, "error": 0}
    for line, row in rows:
        if line in baseline:
            out["same"] += 1
        else:
            assert row["status"] == "error" and row["error"]["message"], row
            out["error"] += 1
    return out


def test_a_repository_removed_mid_run_gives_error_rows_never_wrong_ones(
        wl: Path, baseline: list[bytes], tmp_path: Path) -> None:
    repos = tmp_path / "wl"
    shutil.copytree(wl, repos)
    victim = repos / "repos" / "synth__repo1"
    got = list(_rows_with(repos, lambda: shutil.rmtree(victim)))
    counts = _judge([(line.replace(str(repos).encode(), str(wl).encode()), row)
                     for line, row in got], baseline)
    assert counts["error"] > 0  # the other repository's instances could not be read


def test_a_git_cat_file_that_dies_changes_no_row(wl: Path, baseline: list[bytes]) -> None:
    killed: list[int] = []

    def kill_cat_files() -> None:
        for pid in _descendants(os.getpid()):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"cat-file" in cmdline:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    counts = _judge(list(_rows_with(wl, kill_cat_files)), baseline)
    assert killed and counts == {"same": ROWS, "error": 0}


# ------------------------------------------------------------------------------ disk full


def test_a_full_disk_stops_with_whole_lines_and_resume_finishes(
        wl: Path, baseline: list[bytes], tmp_path: Path) -> None:
    """The output cannot grow past a limit (RLIMIT_FSIZE: the kernel refuses the write, as on a
    full disk): exit 1 naming the file, only whole rows kept, no process left; --resume with room
    again completes the run."""
    out = tmp_path / "out.jsonl"
    limit = len(b"".join(baseline)) // 2

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with subprocess.Popen(_cmd(wl, out, "--no-cache", jobs=2), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, preexec_fn=small_disk) as proc:
        seen = _descendants(proc.pid)
        _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert f"cannot write output: File too large: {out}".encode() in stderr, stderr
    _assert_all_gone(seen)
    data = out.read_bytes()
    assert data.endswith(b"\n") and 0 < len(data) <= limit
    assert set(data.splitlines(keepends=True)) <= set(baseline)
    assert main(_argv(wl, out, "--resume", "-q", "--no-cache")) == 0
    _assert_same_rows(out, baseline)


def test_a_failed_write_is_cut_back_to_whole_lines(tmp_path: Path, monkeypatch) -> None:
    """ENOSPC in the middle of a line (half of it written): the half is removed before the
    error is raised, and the error names the file."""
    import ctxeval.evaluation.output.outfile as outfile

    real = os.write

    def half_then_full(fd: int, data) -> int:
        if len(data) > 4:
            return real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    path = tmp_path / "out.jsonl"
    with LineFile(path) as f:
        f.begin(resume=False)
        f.write(b'{"a": 1}\n')
        monkeypatch.setattr(outfile.os, "write", half_then_full)
        with pytest.raises(OSError) as exc:
            f.write(b'{"b": 2, "c": 3}\n')
        monkeypatch.setattr(outfile.os, "write", real)
    assert exc.value.errno == errno.ENOSPC and exc.value.filename == str(path)
    assert path.read_bytes() == b'{"a": 1}\n'


# ------------------------------------------------------------------------------ wrong files


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file of each kind a command reads or writes."""
    d = tmp_path_factory.mktemp("kinds")
    results = d / "results.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(results), "--views",
                 "-q", "--no-cache"]) == 0
    report = d / "report.json"
    assert main(["report", str(results), "--format", "json", "--out", str(report)]) == 0
    snapshot = next((EX / "repos").iterdir())
    return {"gold": EX / "gold.jsonl", "trajectory": EX / "runs" / "agent-a.jsonl",
            "results": results, "views": d / "results.views.jsonl",
            "meta": d / "results.jsonl.meta.json", "report": report,
            "source": snapshot / "calc" / "ops.py", "repos": EX / "repos"}


#: Each command's own input kinds (everything else is the wrong file for it).
COMMANDS = {
    "report": ({"results"}, lambda f, o: ["report", str(f)]),
    "compare": ({"results"}, lambda f, o: ["compare", str(f)]),
    "view": ({"results"}, lambda f, o: ["view", str(f), "--out", str(o / "pages")]),
    "convert": ({"trajectory"}, lambda f, o: ["convert", str(f), "--out", str(o / "t.jsonl")]),
    "inspect": ({"trajectory"}, lambda f, o: ["inspect", str(f)]),
    "symbols": ({"source"}, lambda f, o: ["symbols", str(f)]),
    "evaluate --gold": ({"gold"}, lambda f, o: [
        "evaluate", "--gold", str(f), "--run", f"a={EX / 'runs/agent-a.jsonl'}",
        "--repos", str(EX / "repos"), "--out", str(o / "r.jsonl"), "-q"]),
    "evaluate --run": ({"trajectory"}, lambda f, o: [
        "evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"a={f}",
        "--repos", str(EX / "repos"), "--out", str(o / "r.jsonl"), "-q"]),
    "evaluate --results": (set(), lambda f, o: [
        "evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"a={EX / 'runs/agent-a.jsonl'}",
        "--results", str(f), "--repos", str(EX / "repos"), "--out", str(o / "r.jsonl"), "-q"]),
    "evaluate --repos": ({"repos"}, lambda f, o: [
        "evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"a={EX / 'runs/agent-a.jsonl'}",
        "--repos", str(f), "--out", str(o / "r.jsonl"), "-q"]),
}
KINDS = ["gold", "trajectory", "results", "views", "meta", "report", "source", "repos"]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_given_every_other_commands_files_says_so_and_fails(
        files: dict[str, Path], tmp_path: Path, command: str, capsys) -> None:
    own, argv = COMMANDS[command]
    for kind in KINDS:
        if kind in own:
            continue
        path = files[kind]
        code = main(argv(path, tmp_path))
        err = capsys.readouterr().err
        assert code != 0, (command, kind, err)
        assert err.startswith("ctxeval: ") and str(path) in err, (command, kind, err)
        assert "Traceback" not in err


def test_resume_repairs_a_torn_views_sidecar_too(tmp_path: Path) -> None:
    """Killed while writing a views record: the record is cut, its row was never written (the
    record goes first); --resume drops the piece and writes both again, and the pages draw."""
    argv = ["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
            "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--views", "-q", "--no-cache"]
    full = tmp_path / "full" / "results.jsonl"
    assert main([*argv, "--out", str(full)]) == 0
    rows = full.read_bytes().splitlines(keepends=True)
    records = full.with_name("results.views.jsonl").read_bytes().splitlines(keepends=True)
    assert len(rows) == len(records) == 2
    out = tmp_path / "cut" / "results.jsonl"
    out.parent.mkdir()
    out.write_bytes(rows[0])
    side = out.with_name("results.views.jsonl")
    side.write_bytes(records[0] + records[1][:100])
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    assert out.read_bytes() == full.read_bytes()
    assert side.read_bytes() == b"".join(records)
    assert main(["view", str(out), "--out", str(tmp_path / "pages")]) == 0


# ------------------------------------------------------------------------------ silent mistakes


def _example_argv(out: Path, *extra: str, run: Path | None = None) -> list[str]:
    return ["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
            "--run", f"a={run or EX / 'runs/agent-a.jsonl'}", "--out", str(out),
            "--no-cache", *extra]


def test_report_by_a_field_no_row_has_is_an_error_listing_the_fields(files, capsys) -> None:
    """``--by langauge`` (a typo) used to make one group "(none)" and exit 0."""
    assert main(["report", str(files["results"]), "--by", "langauge"]) == 1
    err = capsys.readouterr().err
    assert "--by langauge: no row has this field" in err
    assert "did you mean language?" in err
    assert "instance_id" in err and "repo" in err  # the fields there are, listed
    # a dotted path into the rows is a field; a field that some rows leave null is too
    assert main(["report", str(files["results"]), "--by", "usage.api_calls"]) == 0
    assert main(["report", str(files["results"]), "--by", "resolved"]) == 0


def test_view_of_an_unknown_instance_or_run_names_it(files, tmp_path: Path, capsys) -> None:
    code = main(["view", str(files["results"]), "--instance", "example__calc-9",
                 "--out", str(tmp_path / "pages")])
    err = capsys.readouterr().err
    assert code == 2
    assert "no instance example__calc-9 in the results" in err
    assert "example__calc-1" in err  # the instances there are, named
    code = main(["view", str(files["results"]), "--instance", "example__calc-1",
                 "--run", "b", "--out", str(tmp_path / "pages")])
    err = capsys.readouterr().err
    assert code == 2 and "no run b in the results (runs: a)" in err
    assert not (tmp_path / "pages").exists()


@pytest.mark.parametrize("kind", ["neutral", "swebench", "contextbench parquet"])
def test_gold_given_as_a_run_is_called_gold(tmp_path: Path, kind: str, capsys) -> None:
    """It used to say only "no adapter recognises this input"."""
    if kind == "neutral":
        gold = EX / "gold.jsonl"
    elif kind == "swebench":
        gold = tmp_path / "swe.json"
        gold.write_text(json.dumps([{"instance_id": "o__r-1", "repo": "o/r",
                                     "base_commit": "a" * 40, "patch": "",
                                     "problem_statement": "x"}]))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        gold = tmp_path / "gold.parquet"
        pq.write_table(pa.table({"instance_id": ["x"], "gold_context": ["[]"],
                                 "repo": ["o/r"], "base_commit": ["a" * 40]}), gold)
    code = main(_example_argv(tmp_path / "r.jsonl", "-q", run=gold))
    err = capsys.readouterr().err
    assert code == 1
    assert f"{gold}: this is " in err, err  # what the file is, said first
    said = err.split(f"{gold}: this is ", 1)[1]
    assert "gold" in said.split("no adapter recognises", 1)[0], err


def test_an_empty_gold_file_is_called_empty(tmp_path: Path, capsys) -> None:
    for content in (b"", b"\n  \n"):
        gold = tmp_path / "gold.jsonl"
        gold.write_bytes(content)
        code = main(["evaluate", "--gold", str(gold), "--repos", str(EX / "repos"),
                     "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--out",
                     str(tmp_path / "r.jsonl"), "-q"])
        err = capsys.readouterr().err
        assert code == 1
        assert f"ctxeval: {gold}: the file is empty" in err, err


def test_replacing_earlier_results_says_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "results.jsonl"
    assert main(_example_argv(out)) == 0
    assert "replacing" not in capsys.readouterr().err
    assert main(_example_argv(out)) == 0
    err = capsys.readouterr().err
    assert f"ctxeval: {out}: replacing the 2 rows of an earlier evaluation" in err
    assert "--resume" in err
    assert main(_example_argv(out, "--resume")) == 0
    assert "replacing" not in capsys.readouterr().err
    assert main(_example_argv(out, "-q")) == 0  # said even with --quiet: it is a warning
    assert "replacing the 2 rows" in capsys.readouterr().err


def test_a_run_that_evaluates_nothing_leaves_nothing_behind(tmp_path: Path, capsys) -> None:
    """No rows: no empty results file and no .meta.json (they used to stay); results that were
    there before are kept as they were (the output is truncated at its first row)."""
    out = tmp_path / "new" / "results.jsonl"
    argv = _example_argv(out, run=tmp_path / "missing.jsonl")
    assert main(argv) == 1
    assert "nothing was evaluated" in capsys.readouterr().err
    assert sorted(p.name for p in out.parent.iterdir()) == []
    kept = tmp_path / "old" / "results.jsonl"
    assert main(_example_argv(kept, "--views")) == 0
    before = {p.name: p.read_bytes() for p in kept.parent.iterdir()}
    assert main(_example_argv(kept, "--views", run=tmp_path / "missing.jsonl")) == 1
    assert {p.name: p.read_bytes() for p in kept.parent.iterdir()} == before
    parquet = tmp_path / "pq" / "results.parquet"
    assert main(_example_argv(parquet, run=tmp_path / "missing.jsonl")) == 1
    assert sorted(p.name for p in parquet.parent.iterdir()) == []


# ------------------------------------------------------------------------------ foreign outputs


def _foreign(tmp_path: Path) -> dict[str, tuple[Path, bytes]]:
    """Files a mistyped --out may name, none of them results: (path, content)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    made: dict[str, tuple[Path, bytes]] = {}
    text = tmp_path / "p.txt"
    text.write_bytes(b"precious\n")
    config = tmp_path / "config.json"
    config.write_bytes(b'{"setting": 1}\n')
    gold = tmp_path / "gold.parquet"  # ContextBench gold: Parquet with an instance_id column
    pq.write_table(pa.table({"instance_id": ["x"], "original_inst_id": ["x"],
                             "gold_context": ["[]"], "repo": ["o/r"]}), gold)
    traj = tmp_path / "run.jsonl"
    traj.write_bytes((EX / "runs" / "agent-a.jsonl").read_bytes())
    for name, p in (("text", text), ("json config", config), ("gold parquet", gold),
                    ("trajectory", traj)):
        made[name] = (p, p.read_bytes())
    return made


def test_out_never_overwrites_a_file_that_is_not_results(tmp_path: Path, capsys) -> None:
    """``--out p.txt`` used to replace a text file, a JSON config, a ContextBench gold Parquet
    (exit 0): only a file that holds results (or nothing) is written over."""
    for name, (path, before) in _foreign(tmp_path).items():
        for out in (path, tmp_path / f"link-{path.name}"):
            if out != path:
                out.symlink_to(path.name)  # behind a symbolic link: judged by its target
            code = main(_example_argv(out, "-q"))
            err = capsys.readouterr().err
            assert code == 1, (name, out, err)
            assert "refusing to overwrite" in err and str(out) in err, (name, err)
            assert path.read_bytes() == before, name
            assert not out.with_name(out.name + ".meta.json").exists()
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to("nowhere/results.jsonl")
    assert main(_example_argv(dangling, "-q")) == 1
    assert "a symbolic link to nowhere/results.jsonl, which does not exist" in \
        capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()
    results = tmp_path / "link-to-results.jsonl"  # a link to results: written through
    (tmp_path / "real.jsonl").write_bytes(b"")
    results.symlink_to("real.jsonl")
    assert main(_example_argv(results, "-q")) == 0
    assert results.is_symlink() and (tmp_path / "real.jsonl").read_bytes().count(b"\n") == 2


def test_the_files_beside_the_out_are_checked_too(tmp_path: Path, capsys) -> None:
    """The --views sidecar had no check at all; the metadata and a Parquet journal neither."""
    out = tmp_path / "r.jsonl"
    side = tmp_path / "r.views.jsonl"
    side.write_bytes(b"precious\n")
    assert main(_example_argv(out, "--views", "-q")) == 1
    err = capsys.readouterr().err
    assert f"{side}: refusing to overwrite: the --views sidecar is not a views sidecar" in err
    assert side.read_bytes() == b"precious\n" and not out.exists()
    meta = tmp_path / "r.jsonl.meta.json"
    meta.write_bytes(b'{"mine": true}\n')
    side.unlink()
    assert main(_example_argv(out, "-q")) == 1
    assert f"{meta}: refusing to overwrite" in capsys.readouterr().err
    assert meta.read_bytes() == b'{"mine": true}\n'
    meta.unlink()
    pq_out = tmp_path / "r.parquet"
    journal = tmp_path / "r.parquet.partial"
    journal.write_bytes(b"precious\n")
    assert main(_example_argv(pq_out, "-q")) == 1
    assert f"{journal}: refusing to overwrite" in capsys.readouterr().err
    assert journal.read_bytes() == b"precious\n"
    journal.unlink()
    # written once, each of them is ours and is written over the next time
    assert main(_example_argv(out, "--views", "-q")) == 0
    assert main(_example_argv(out, "--views", "-q")) == 0
    assert main(_example_argv(pq_out, "-q")) == 0
    assert main(_example_argv(pq_out, "-q")) == 0


def test_report_and_resume_of_a_parquet_that_is_not_results_say_so(tmp_path: Path,
                                                                   capsys) -> None:
    """They raised pyarrow's schema ValueError, with a traceback."""
    gold = _foreign(tmp_path)["gold parquet"][0]
    for argv in (["report", str(gold)], ["compare", str(gold)],
                 _example_argv(gold, "--resume", "-q")):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 1, (argv, err)
        assert err.startswith(f"ctxeval: {gold}: ") and "Traceback" not in err, err
        assert "Parquet" in err


# ------------------------------------------------------------------------------ pipes and FIFOs


def _ctxeval(*argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxeval", *argv], capture_output=True,
                          timeout=60, **kw)


def test_out_dev_stdout_into_a_pipe_writes_the_rows(tmp_path: Path) -> None:
    """It used to hang for ever: the output was opened again to be read back, and a pipe's
    read end given back by /dev/stdout waits for data that never comes."""
    full = tmp_path / "full.jsonl"
    assert main(_example_argv(full, "-q")) == 0
    argv = _example_argv(Path("/dev/stdout"), "-q")
    got = _ctxeval(*argv)  # killed after 60 s: a hang fails the test instead of stalling it
    out, err = got.stdout, got.stderr
    assert got.returncode == 0, err
    assert out == full.read_bytes()
    assert not Path("/dev/stdout.meta.json").exists()
    for extra in ("--resume", "--views"):  # nothing is read back from a stream or put beside
        got = _ctxeval(*_example_argv(Path("/dev/stdout"), extra, "-q"))
        assert got.returncode == 1 and b"needs --out to be a file" in got.stderr, got.stderr


def test_out_a_fifo_writes_to_its_reader_and_refuses_when_none(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    got = _ctxeval(*_example_argv(fifo, "-q"))  # no reader: an error, not a hang
    assert got.returncode == 1
    assert b"no process is reading" in got.stderr, got.stderr
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    time.sleep(0.2)  # the reader opens the FIFO first
    got = _ctxeval(*_example_argv(fifo, "-q"))
    reader.join(timeout=60)
    assert got.returncode == 0, got.stderr
    assert received and received[0].count(b"\n") == 2
    assert not fifo.with_name("rows.fifo.meta.json").exists()


def test_a_fifo_given_as_an_input_is_refused_without_waiting_for_a_writer(
        tmp_path: Path) -> None:
    """``--run a=fifo`` with no writer blocked for ever in format detection."""
    fifo = tmp_path / "traj.fifo"
    os.mkfifo(fifo)
    got = _ctxeval(*_example_argv(tmp_path / "r.jsonl", "-q", run=fifo))
    assert got.returncode == 1
    assert f"{fifo}: is a FIFO (named pipe), not a file".encode() in got.stderr, got.stderr
    got = _ctxeval("evaluate", "--gold", str(fifo), "--repos", str(EX / "repos"), "--run",
                   f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(tmp_path / "r.jsonl"))
    assert got.returncode == 1
    assert f"{fifo}: is a FIFO (named pipe), not a file".encode() in got.stderr, got.stderr


def test_report_compare_and_convert_outputs_never_overwrite_data(tmp_path: Path, capsys) -> None:
    """``report results.jsonl --out results.jsonl`` replaced the results with a table;
    ``convert run --out gold.jsonl`` replaced the gold."""
    results = tmp_path / "results.jsonl"
    evaluate_example(results)  # two runs: compare has something to compare
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes((EX / "gold.jsonl").read_bytes())
    for argv, target in ((["report", str(results), "--out", str(results)], results),
                         (["compare", str(results), "--out", str(results)], results),
                         (["report", str(results), "--out", str(gold)], gold),
                         (["convert", str(EX / "runs/agent-a.jsonl"), "--out", str(gold)], gold)):
        before = target.read_bytes()
        assert main(argv) == 1, argv
        assert "refusing to overwrite" in capsys.readouterr().err
        assert target.read_bytes() == before
    rendered = tmp_path / "table.tex"  # a rendering is written over by the next one
    for _ in range(2):
        assert main(["report", str(results), "--format", "latex", "--out", str(rendered)]) == 0
    as_json = tmp_path / "report.json"
    for _ in range(2):
        assert main(["report", str(results), "--format", "json", "--out", str(as_json)]) == 0
    converted = tmp_path / "trajs.jsonl"
    for _ in range(2):
        assert main(["convert", str(EX / "runs/agent-a.jsonl"), "--out", str(converted)]) == 0
    # a stream is written to, not checked (convert --out /dev/stdout | ...)
    got = _ctxeval("convert", str(EX / "runs/agent-a.jsonl"), "--out", "/dev/stdout")
    assert got.returncode == 0 and got.stdout.count(b"\n") == 2


# ------------------------------------------------------------------------------ --resume honesty


def test_resume_refuses_rows_made_with_other_gold_preset_final_or_text(tmp_path: Path,
                                                                      capsys) -> None:
    """--resume after the gold, --preset, --final or --text changed kept the old rows (exit 0):
    agent-a's line F1 stayed 0.25 and 0.93 where the new gold gives 0.0, and the metadata named
    only the new gold. Now it refuses (exit 2), names what changed and how to go on."""
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes((EX / "gold.jsonl").read_bytes())
    out = tmp_path / "results.jsonl"

    def argv(*extra: str, g: Path = gold) -> list[str]:
        return ["evaluate", "--gold", str(g), "--repos", str(EX / "repos"), "--run",
                f"agent-a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "-q", "--no-cache",
                *extra]

    assert main(argv()) == 0
    capsys.readouterr()
    first = out.read_bytes()
    out.write_bytes(first.splitlines(keepends=True)[0])  # as a killed run leaves it
    kept = out.read_bytes()
    meta = out.with_name("results.jsonl.meta.json").read_bytes()
    # the gold moves its gold context to lines no agent read
    changed = [json.loads(line) for line in gold.read_text().splitlines()]
    for rec in changed:
        for item in rec["gold_context"]:
            item["start_line"] = item["end_line"] = 1
    gold.write_text("".join(json.dumps(r) + "\n" for r in changed))
    for extra, words in ((["--resume"], "the gold changed: made with gold"),
                         (["--resume", "--preset", "contextbench"],
                          "preset strict (now contextbench)"),
                         (["--resume", "--final", "union"], "--final declared (now union)"),
                         (["--resume", "--text"], "--text False (now True)")):
        if extra != ["--resume"]:
            gold.write_bytes((EX / "gold.jsonl").read_bytes())
        code = main(argv(*extra))
        err = capsys.readouterr().err
        assert code == 2, (extra, err)
        assert f"ctxeval: {out}: --resume cannot add to the 1 row there" in err, err
        assert words in err, (words, err)
        assert "evaluate into a new --out, or leave out --resume" in err
        assert out.read_bytes() == kept
        assert out.with_name("results.jsonl.meta.json").read_bytes() == meta
    # The same gold given by another path is the same gold: resuming is fine.
    other = tmp_path / "same-gold.jsonl"
    other.write_bytes((EX / "gold.jsonl").read_bytes())
    assert main(argv("--resume", g=other)) == 0
    assert out.read_bytes() == first


def test_rows_of_a_killed_run_carry_their_metadata(wl: Path, tmp_path: Path) -> None:
    """The metadata is written with the first row (it used to come only at the end), so the
    rows a SIGKILL leaves can be checked by --resume."""
    out = tmp_path / "out.jsonl"
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        _wait_for(proc, out, 2, set())
        proc.kill()
        proc.communicate(timeout=60)
    assert out.read_bytes().count(b"\n") >= 2
    meta = json.loads(out.with_name("out.jsonl.meta.json").read_bytes())
    assert meta["preset"] == "strict" and meta["gold_sources"][0]["sha256"]
    assert "symbol_stats" not in meta  # the end's figures never came
    code = main(_argv(wl, out, "--resume", "-q", "--no-cache", "--preset", "contextbench"))
    assert code == 2


def test_resume_of_rows_without_metadata_checks_what_the_rows_record(tmp_path: Path,
                                                                     capsys) -> None:
    out = tmp_path / "results.jsonl"
    assert main(_example_argv(out, "-q")) == 0
    out.write_bytes(out.read_bytes().splitlines(keepends=True)[0])
    out.with_name("results.jsonl.meta.json").unlink()  # as an earlier version left it
    assert main(_example_argv(out, "--resume", "-q", "--preset", "contextbench")) == 2
    assert "preset strict (now contextbench)" in capsys.readouterr().err
    assert main(_example_argv(out, "--resume")) == 0
    assert "could not be checked" in capsys.readouterr().err
    assert out.read_bytes().count(b"\n") == 2


# --------------------------------------------------------------------------- progress under kills


def test_resume_reads_again_only_the_input_it_stopped_in(wl: Path, baseline: list[bytes],
                                                          tmp_path: Path, monkeypatch) -> None:
    """--resume used to parse every trajectory of every input again only to skip it (most of
    its time to the first new row on 1,240 kept rows, docs/reliability.md): inputs whose rows
    are followed by other rows were read to their end and are passed over, and the records of
    kept instances in the input it stopped in are not read whole."""
    import ctxeval.reading.adapters.neutral as neutral

    out = tmp_path / "out.jsonl"
    out.write_bytes(b"".join(baseline[:30]))  # run 0 whole (24 rows), 6 rows of run 1
    parsed: list[str] = []
    real = neutral.parse_record

    def counting(obj, origin, line):
        parsed.append(obj.get("instance_id"))
        return real(obj, origin, line)

    monkeypatch.setattr(neutral, "parse_record", counting)
    assert main(_argv(wl, out, "--resume", "-q", "--no-cache")) == 0
    _assert_same_rows(out, baseline)
    assert len(parsed) == ROWS - 30  # the work left, and nothing else


def test_fast_keys_agree_with_the_full_parse(baseline: list[bytes]) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ctxeval.evaluation.output.resume_scan import fast_keys

    def expect(line: bytes) -> dict:
        row = json.loads(line)
        return {"instance_id": row["instance_id"], "run": row["run"],
                "pred_file": row.get("pred_file")}

    for line in baseline:
        assert fast_keys(line) == expect(line)
    text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
        ['a"b', "c\\d", ',"pred_file":"x"', '"}', "\n", "\u2028"])

    @settings(max_examples=300, deadline=None)
    @given(st.text(min_size=1, max_size=8) | st.sampled_from(['i"d', "i\\d"]),
           st.none() | text, st.none() | text, st.lists(text, max_size=3))
    def agree(iid: str, run, pred, warnings) -> None:
        from ctxeval.evaluation.output.results import dumps_row

        row = {"instance_id": iid, "run": run, "status": "ok", "warnings": warnings,
               "final": {"line": {"f1": 0.5}}}
        if pred is not None:
            row["pred_file"] = pred
        row["gold_instance_id"] = ',"pred_file":"no"'
        line = dumps_row(row)
        got = fast_keys(line)
        assert got is None or got == expect(line)

    agree()


def test_a_killed_parquet_out_keeps_its_rows_and_resume_finishes(
        wl: Path, baseline: list[bytes], tmp_path: Path) -> None:
    """A Parquet --out was written whole at the end (a row group every 2048 rows into a file
    without a footer until closed): a kill lost every row. Rows now go to a JSON-lines journal
    as they come; --resume continues it, and the Parquet file is made at the end."""
    from ctxeval.evaluation.output.results import dumps_row, read_rows

    def same(path: Path) -> None:
        got = sorted(dumps_row(r) for r in read_rows(path))
        assert got == sorted(baseline)

    out = tmp_path / "out.parquet"
    journal = tmp_path / "out.parquet.partial"
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        _wait_for(proc, journal, 20, set())
        proc.kill()
        proc.communicate(timeout=60)
    assert not out.exists() and journal.read_bytes().count(b"\n") >= 20
    assert main(_argv(wl, out, "--resume", "-q", "--no-cache")) == 0
    assert not journal.exists()
    same(out)
    # --resume of a complete Parquet output adds to it (its rows are not converted again)
    first = sorted((wl / "runs").glob("*.jsonl"))[0]
    part = tmp_path / "part.parquet"
    argv = ["evaluate", "--gold", str(wl / "gold.jsonl"), "--repos", str(wl / "repos"),
            "--out", str(part), "-q", "--no-cache", "--run", f"{first.stem}={first}"]
    assert main(argv) == 0
    assert main(_argv(wl, part, "--resume", "-q", "--no-cache")) == 0
    same(part)
    # stopped between renaming the Parquet file into place and removing its journal: the
    # journal's rows are all in the file, and the journal is dropped, not added again
    journal = tmp_path / "part.parquet.partial"
    journal.write_bytes(b"".join(baseline[:5]))
    assert main(_argv(wl, part, "--resume", "-q", "--no-cache")) == 0
    same(part)


# ------------------------------------------------------------------------------ duplicates


def test_the_same_run_and_instance_twice_gives_one_row_and_says_so(tmp_path: Path,
                                                                   capsys) -> None:
    """Two trajectories of one instance in a run gave two ok rows and no word, and report
    counted n = 4 for 2 instances. The first trajectory read is the row; the others are
    listed in the summary."""
    lines = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines(keepends=True)
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_bytes(lines[0] + b"".join(lines))  # instance 1 twice in one file
    again = tmp_path / "again.jsonl"
    again.write_bytes(lines[1])  # instance 2 again, in a second input of the run
    out = tmp_path / "results.jsonl"
    code = main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--run", f"a={doubled}", "--run", f"a={again}", "--out", str(out),
                 "--no-cache"])
    err = capsys.readouterr().err
    assert code == 0
    rows = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert sorted(r["instance_id"] for r in rows) == ["example__calc-1", "example__calc-2"]
    reference = tmp_path / "reference.jsonl"
    assert main(_example_argv(reference, "-q")) == 0
    assert [r["pred_file"] for r in rows] == [str(doubled)] * 2
    assert "duplicate trajectories, not scored" in err and ": 2" in err
    assert f"run a, instance example__calc-2: {again} (the row is {doubled}'s)" in err
    assert main(["report", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tables"][0]["rows"][0]["values"]["n"]["value"] == 2


def test_report_and_compare_refuse_two_rows_of_one_run_and_instance(tmp_path: Path,
                                                                    capsys) -> None:
    out = tmp_path / "results.jsonl"
    evaluate_example(out)
    for argv in (["report", str(out), str(out)], ["compare", str(out), str(out)]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{out}:1: a second row of run agent-a, instance example__calc-1 (the first " \
               f"is at {out}:1)" in err, err
    glued = tmp_path / "glued.jsonl"  # rows of one run put together (an earlier version's)
    lines = out.read_bytes().splitlines(keepends=True)
    glued.write_bytes(b"".join(lines) + lines[0])
    assert main(["report", str(glued)]) == 1
    assert f"{glued}:5: a second row of run agent-a" in capsys.readouterr().err
    assert main(["view", str(glued), "--out", str(tmp_path / "pages")]) == 1  # no sidecar
    assert "a second row" not in capsys.readouterr().err  # view draws duplicates side by side


# ------------------------------------------------------------------------------ impossible values


@pytest.mark.parametrize(("field", "value", "says"), [
    ("final.line.coverage", 1.5, "a ratio must be between 0 and 1, not 1.5"),
    ("final.line.f1", -0.3, "a ratio must be between 0 and 1, not -0.3"),
    ("final.file.f1", 1e308, "a ratio must be between 0 and 1, not 1e+308"),
    ("final.line.pred_size", -2, "a size must be 0 or more, not -2"),
    ("final.line.gold_size", 2.5, "a size must be a whole number, not 2.5"),
    ("trajectory.auc_coverage.line", 7, "a ratio must be between 0 and 1, not 7"),
    ("trajectory.redundancy.span", -0.5, "a redundancy must be between 0 and 1, not -0.5"),
    ("trajectory.first_gold_step.line", 0, "a step must be 1 or more, not 0"),
    ("trajectory.steps[1].viewed.line", -4, "a count must be 0 or more, not -4"),
    ("usage.input_tokens", 12.5, "a count must be a whole number, not 12.5"),
    ("usage.cost", -1.0, "a cost must be 0 or more, not -1.0"),
    ("editloc.file.recall", 1.0000001, "a ratio must be between 0 and 1"),
])
def test_report_refuses_impossible_values_naming_file_line_and_field(
        files, tmp_path: Path, field: str, value, says: str, capsys) -> None:
    """A coverage of 1.5, an F1 of -0.3 or 1e308 were averaged in: a results file is checked
    for ranges as well as types."""
    rows = [json.loads(x) for x in files["results"].read_bytes().splitlines()]
    target = rows[1]
    *parents, leaf = field.replace("[1]", ".1").split(".")
    for p in parents:
        target = target[int(p)] if p.isdigit() else target[p]
    assert leaf in target
    target[leaf] = value
    bad = tmp_path / "results.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for command in ("report", "compare"):
        assert main([command, str(bad)]) == 1
        err = capsys.readouterr().err
        assert f"{bad}:2, field '{field}': not a result row: {says}" in err, err


def test_the_contextbench_conventions_keep_their_quirks(files, tmp_path: Path) -> None:
    """The ContextBench evaluator writes a negative pred_size for a reversed range and then a
    negative redundancy (both in the parity suite): its rows and its preset's may."""
    from ctxeval.evaluation.output.results import row_problem

    row = json.loads(files["results"].read_bytes().splitlines()[0])
    row["final"]["line"]["pred_size"] = -3
    row["trajectory"]["redundancy"]["line"] = -0.2857142857142858
    assert row_problem(row) is not None  # a strict row may not
    assert row_problem({**row, "preset": "contextbench"}) is None
    reference = {k: v for k, v in row.items() if k != "status"}
    assert row_problem(reference) is None
    row["final"]["line"]["coverage"] = 1.5  # a ratio out of range is wrong under any preset
    assert row_problem({**row, "preset": "contextbench"}) is not None


# ------------------------------------------------------------------------------ --text


def test_text_credits_nothing_when_no_gold_file_is_in_the_checkout(tmp_path: Path) -> None:
    """Every gold file missing from the checkout gave token precision, recall and F1 of 1.0
    (the overlap's convention against an empty reference) while file F1 was null."""
    gold = tmp_path / "gold.jsonl"
    recs = [json.loads(x) for x in (EX / "gold.jsonl").read_text().splitlines()]
    for rec in recs:
        for item in rec["gold_context"]:
            item["file"] = "calc/not_there.py"
    gold.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "r.jsonl"
    assert main(["evaluate", "--gold", str(gold), "--repos", str(EX / "repos"), "--run",
                 f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "-q", "--text"]) == 0
    for row in (json.loads(x) for x in out.read_bytes().splitlines()):
        assert row["gold_missing_files"] == ["calc/not_there.py"]
        assert row["final"]["file"]["f1"] is None
        assert row["text"]["context_token_recall"] is None
        assert row["text"]["context_token_f1"] is None
        assert row["text"]["context_token_precision"] == 0.0  # the agent's context has text
    # with the gold files there, the figures are numbers as before
    assert main(_example_argv(tmp_path / "ok.jsonl", "-q", "--text")) == 0
    for row in (json.loads(x) for x in (tmp_path / "ok.jsonl").read_bytes().splitlines()):
        assert 0 < row["text"]["context_token_recall"] <= 1


# ------------------------------------------------------------------------------ errors name files


def _limited(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_at_the_metadata_names_it_and_leaves_no_temporary_file(
        tmp_path: Path) -> None:
    """'No space left on device: None', and *.meta.json.tmp-PID left behind. (RLIMIT_FSIZE
    below the metadata's size: the kernel refuses the write as a full disk does.)"""
    out = tmp_path / "r.jsonl"
    got = subprocess.run([sys.executable, "-m", "ctxeval", *_example_argv(out, "-q")],
                         capture_output=True, timeout=60, preexec_fn=_limited(600))
    err = got.stderr.decode()
    assert got.returncode == 1
    assert f"ctxeval: cannot write output: File too large: {out}.meta.json" in err, err
    assert "None" not in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # no temporary file, no empty results file


def test_a_full_disk_at_the_parquet_file_names_it_and_keeps_the_journal(
        tmp_path: Path) -> None:
    """The Parquet writer's errno 28 named no file. Its journal fits under the limit, the
    Parquet file (its schema is larger than two rows) does not; the rows stay in the journal
    and --resume with room again makes the file."""
    out = tmp_path / "r.parquet"
    got = subprocess.run([sys.executable, "-m", "ctxeval", *_example_argv(out, "-q")],
                         capture_output=True, timeout=60, preexec_fn=_limited(20000))
    err = got.stderr.decode()
    assert got.returncode == 1
    assert f"ctxeval: cannot write output: File too large: {out}" in err, err
    assert "None" not in err and "Traceback" not in err
    assert (tmp_path / "r.parquet.partial").read_bytes().count(b"\n") == 2
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert main(_example_argv(out, "-q", "--resume")) == 0
    assert out.stat().st_size > 20000 and not (tmp_path / "r.parquet.partial").exists()


def test_standard_output_closed_early_is_not_an_error(wl: Path) -> None:
    """``ctxeval evaluate ... | head`` said 'cannot write output: Broken pipe: None' (exit 1)."""
    argv = [a for a in _argv(wl, Path("-"), "-q", "--no-cache") if a not in ("--out", "-")]
    with subprocess.Popen([sys.executable, "-m", "ctxeval", *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        first = proc.stdout.read(100)
        proc.stdout.close()  # as head does once it has its lines
        _out, err = proc.communicate(timeout=60)
    assert first.startswith(b'{"instance_id"')
    assert proc.returncode == 0 and err == b"", err


# ------------------------------------------------------------------------------ a git that hangs


@pytest.fixture
def hanging_git(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``git`` hangs (as one waiting for a lock on a network disk does):
    a script first on PATH that writes its pid and sleeps in its own process."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    pids = tmp_path / "git-pids"
    git = bindir / "git"
    git.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 600\n")
    git.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "HT_GIT_PIDS": str(pids)}


def test_a_hanging_git_becomes_error_rows_after_the_timeout(
        wl: Path, tmp_path: Path, hanging_git: dict[str, str]) -> None:
    """It stalled the whole evaluation for ever with 0 rows. Now each repository's first
    request is given up after --git-timeout and its instances are error rows (a repository
    that timed out once is not asked again); nothing is left running."""
    from ctxeval.cli import DEFAULT_GIT_TIMEOUT
    from ctxeval.truth.gitproc import DEFAULT_TIMEOUT

    assert DEFAULT_GIT_TIMEOUT == DEFAULT_TIMEOUT
    out = tmp_path / "out.jsonl"
    t = time.monotonic()
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache", "--git-timeout", "1"),
                          env=hanging_git, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        seen: set[int] = set()
        while proc.poll() is None and time.monotonic() - t < 60:
            seen |= _descendants(proc.pid)
            time.sleep(0.05)
        if proc.poll() is None:  # stalled: fail, do not hang the suite
            proc.kill()
        _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert time.monotonic() - t < 30  # two repositories, one second each, and the rest
    rows = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert len(rows) == ROWS and {r["status"] for r in rows} == {"error"}
    assert {r["error"]["kind"] for r in rows} == {"git_timeout"}
    assert "did not answer within 1 s" in rows[0]["error"]["message"]
    assert "--git-timeout" in rows[0]["error"]["message"]
    _assert_all_gone(seen | {int(p) for p in Path(hanging_git["HT_GIT_PIDS"]).read_text()
                             .split()})


def test_a_hanging_git_dies_with_a_killed_evaluation(
        wl: Path, tmp_path: Path, hanging_git: dict[str, str]) -> None:
    """After a SIGKILL of ctxeval, the hung git it started was orphaned (it does not read the
    pipes whose closing would end it): children now carry the parent-death signal."""
    out = tmp_path / "out.jsonl"
    pids = Path(hanging_git["HT_GIT_PIDS"])
    with subprocess.Popen(_cmd(wl, out, "-q", "--no-cache"), env=hanging_git,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().strip()) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        hung = {int(p) for p in pids.read_text().split()}
        assert hung and all(process_alive(p) for p in hung)
        proc.kill()
        proc.communicate(timeout=60)
    _assert_all_gone(hung, within=5)


def test_a_bad_git_timeout_is_a_usage_error(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CTXEVAL_GIT_TIMEOUT", "soon")
    assert main(_example_argv(tmp_path / "r.jsonl", "-q")) == 2
    assert "$CTXEVAL_GIT_TIMEOUT must be a number of seconds, not 'soon'" in \
        capsys.readouterr().err
    monkeypatch.delenv("CTXEVAL_GIT_TIMEOUT")
    assert main(_example_argv(tmp_path / "r.jsonl", "--git-timeout", "0")) == 2
    assert "--git-timeout: must be more than 0 seconds, not 0" in capsys.readouterr().err


# ------------------------------------------------------------------------------ bounded error rows


def test_error_rows_quote_excerpts_not_whole_fields(tmp_path: Path) -> None:
    """A 200 MB base_commit was copied whole into its error row (through the OS error of a
    file name too long), and the results file became 200 MB. (20 MB here.)"""
    recs = [json.loads(x) for x in (EX / "gold.jsonl").read_text().splitlines()]
    recs[0]["base_commit"] = "a" * 20_000_000
    recs[1]["repo"] = "o/" + "r" * 20_000_000
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "r.jsonl"
    assert main(["evaluate", "--gold", str(gold), "--repos", str(EX / "repos"), "--run",
                 f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "-q"]) == 0
    lines = out.read_bytes().splitlines()
    assert len(lines) == 2 and max(map(len, lines)) < 2000
    first, second = (json.loads(x) for x in lines)
    assert first["error"]["kind"] == "missing_commit"
    assert "the base commit is not a commit id (aaaa" in first["error"]["message"]
    assert "(20,000,000 characters in all)" in first["error"]["message"]
    assert second["error"]["kind"] == "missing_repo"
    assert "(20,000,002 characters in all)" in second["error"]["message"]


def test_an_error_row_bounds_any_message(tmp_path: Path) -> None:
    from ctxeval.evaluation.output.results import MESSAGE_LIMIT, error_row

    row = error_row("i", "a", "repo_read_failed", "x" * 10_000_000)
    assert len(row["error"]["message"]) < MESSAGE_LIMIT + 50
    assert row["error"]["message"].endswith("(10,000,000 characters in all)")


# ------------------------------------------------------------------------------ deep JSON


def _nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def test_gold_nested_ten_thousand_levels_is_an_error_not_a_traceback(tmp_path: Path,
                                                                     capsys) -> None:
    """RecursionError in truth/gold/__init__.py (json.loads)."""
    for name, text in (("array.jsonl", '{"instance_id": "x", "gold_context": '
                        + "[" * 10_000 + "]" * 10_000 + "}\n"),
                       ("lines.jsonl", (EX / "gold.jsonl").read_text()
                        + '{"instance_id": "y", "gold_context": ' + _nested(10_000) + "}\n")):
        gold = tmp_path / name
        gold.write_text(text)
        code = main(["evaluate", "--gold", str(gold), "--repos", str(EX / "repos"), "--run",
                     f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(tmp_path / "r.jsonl")])
        err = capsys.readouterr().err
        assert "Traceback" not in err and "RecursionError" not in err, err
        if name == "array.jsonl":
            assert code == 1 and "nested too deeply" in err, err
        else:  # the one deep line is skipped and said to be; the rest is evaluated
            assert code == 0 and "nested too deeply" in err, err


@pytest.mark.parametrize("depth", [10_000, 1_020])
def test_a_results_row_nested_deep_is_an_error_in_every_reader(files, tmp_path: Path,
                                                               depth: int, capsys) -> None:
    """report, compare, view and --resume raised RecursionError on a row nested 10,000
    levels (orjson refuses past 1,024; below that the row check walked past Python's
    stack)."""
    row = files["results"].read_text().splitlines()[0]
    deep = row.replace('"usage":{', '"usage":{"x":' + _nested(depth) + ",", 1)
    assert deep != row
    bad = tmp_path / "results.jsonl"
    bad.write_text(deep + "\n")
    side = tmp_path / "results.views.jsonl"
    side.write_bytes(files["views"].read_bytes())
    for argv in (["report", str(bad)], ["compare", str(bad)],
                 ["view", str(bad), "--out", str(tmp_path / "pages")],
                 _example_argv(bad, "--resume", "-q")):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 1, (argv, err)
        assert err.startswith(f"ctxeval: {bad}") and "Traceback" not in err, err
