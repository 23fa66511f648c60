"""``ctxeval evaluate --engine ray``: the local engine's rows, in its order, from a Ray cluster.

A local Ray instance (``ray.init(num_cpus=2)``, no dashboard, nothing on the network) evaluates
the example, the parity suite and the real corpus; every row is compared with the local
engine's. Skipped, saying so, when the ``ray`` extra is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.conftest import (
    CORPUS,
    FIXTURES,
    PARITY,
    requires_parity,
    requires_shared,
    workload_module,
)

import ctxeval
from ctxeval.cli import main
from ctxeval.errors import CtxevalError
from ctxeval.evaluation.output.results import read_rows
from ctxeval.evaluation.run import RunSpec, evaluate

EX = FIXTURES / "example"
NO_RAY = "the ray extra is not installed (pip install 'ctxeval[ray]'): Ray engine tests skipped"


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason=NO_RAY)
    pytest.importorskip("ray.data", reason=NO_RAY)
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    yield ray
    if started:
        ray.shutdown()


def _both(tmp_path: Path, *, runs: list[RunSpec], gold: list[str], repos: str | None,
          **options) -> tuple[list[dict], list[dict], object, object]:
    """Rows (and summaries) of the local engine and of the Ray engine on the same inputs."""
    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    local = evaluate(gold=gold, runs=runs, repos=repos, out=tmp_path / "local.jsonl",
                     progress=False, **options)
    on_ray = evaluate_ray(gold=gold, runs=runs, repos=repos, out=tmp_path / "ray.parquet",
                          progress=False, jobs=2, **options)
    _is_dataset(tmp_path / "ray.parquet")
    return (list(read_rows(tmp_path / "local.jsonl")), list(read_rows(tmp_path / "ray.parquet")),
            local, on_ray)


def _is_dataset(path: Path) -> list[str]:
    """The part names of the Ray engine's Parquet output: a directory of parts the actors
    wrote, nothing else left in it."""
    from ctxeval.evaluation.output.results_dataset import PART, VIEWS_PART

    assert path.is_dir()
    names = sorted(p.name for p in path.iterdir())
    assert names and all(PART.match(n) or VIEWS_PART.match(n) for n in names), names
    meta = json.loads(path.with_name(path.name + ".meta.json").read_text())
    assert meta["output"]["kind"] == "dataset"
    return names


def test_example_through_the_command(ray_local, tmp_path, capsys):
    args = ["evaluate", "--gold", str(EX / "gold.jsonl"),
            "--run", f"agent-a={EX / 'runs' / 'agent-a.jsonl'}",
            "--run", f"agent-b={EX / 'runs' / 'agent-b.jsonl'}",
            "--repos", str(EX / "repos"), "-q", "--text"]
    assert main([*args, "--out", str(tmp_path / "local.jsonl")]) == 0
    assert main([*args, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray"]) == 0
    local = list(read_rows(tmp_path / "local.jsonl"))
    assert len(local) == 4
    # one part per input, each written by the actor that evaluated it
    assert _is_dataset(tmp_path / "ray.parquet") == ["part-0000-000000000-u.parquet",
                                                     "part-0000-000000001-u.parquet"]
    assert list(read_rows(tmp_path / "ray.parquet")) == local
    assert [pq.read_metadata(p).num_rows for p in sorted((tmp_path / "ray.parquet").iterdir())
            ] == [2, 2]
    table = ctxeval.load_results(tmp_path / "ray.parquet")
    assert table.equals(ctxeval.load_results(tmp_path / "local.jsonl"))
    meta = json.loads((tmp_path / "ray.parquet.meta.json").read_text())
    assert meta["engine"]["name"] == "ray" and meta["engine"]["units"] == 2
    assert main(["report", str(tmp_path / "ray.parquet"), "--format", "json"]) == 0
    assert main(["report", str(tmp_path / "local.jsonl"), "--format", "json"]) == 0
    ray_report, local_report = capsys.readouterr().out.split("\n{", 1)
    assert "{" + local_report == ray_report + "\n"


def test_the_actors_disk_cache_counts_reach_the_meta_file(ray_local, tmp_path):
    """The meta file counts the disk cache's definitions and commits' file lists as the local
    engine's does, added up over the actors: a cold run writes them, a warm one finds every
    one of them there; without a disk cache there is nothing to count."""
    wl = tmp_path / "wl"  # git repositories, whose commits' file lists are kept
    workload_module().generate(wl, instances=6, runs=2, repos=2, files_per_repo=6, seed=3)
    args = ["evaluate", "--gold", str(wl / "gold.jsonl"), "--repos", str(wl / "repos"), "-q",
            "--engine", "ray"]
    for r in sorted((wl / "runs").glob("*.jsonl")):
        args += ["--run", f"{r.stem}={r}"]
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def counts(name: str) -> dict:
        meta = json.loads((tmp_path / f"{name}.parquet.meta.json").read_text())
        return meta["symbol_cache"]

    assert main([*args, *cache, "--out", str(tmp_path / "cold.parquet")]) == 0
    assert main([*args, *cache, "--out", str(tmp_path / "warm.parquet")]) == 0
    assert main([*args, "--no-cache", "--out", str(tmp_path / "none.parquet")]) == 0
    cold, warm = counts("cold"), counts("warm")
    assert cold["disk_stats"]["writes"] > 0 and cold["listing_stats"]["writes"] > 0
    # (how many depends on how the units fell to the actors: each actor counts its own)
    assert warm["disk_stats"]["hits"] > 0
    assert warm["disk_stats"]["misses"] == warm["disk_stats"]["writes"] == 0
    assert warm["listing_stats"]["hits"] > 0
    assert warm["listing_stats"]["misses"] == warm["listing_stats"]["writes"] == 0
    assert counts("none")["disk_stats"] is None and counts("none")["listing_stats"] is None


def test_the_ranking_options_reach_the_actors(ray_local, tmp_path):
    """``--k`` and ``--budget-lines`` under Ray give the local engine's ranking block (they
    were refused: the actors built the default one)."""
    args = ["evaluate", "--gold", str(EX / "gold.jsonl"),
            "--run", f"agent-a={EX / 'runs' / 'agent-a.jsonl'}",
            "--repos", str(EX / "repos"), "-q", "--k", "2,4", "--budget-lines", "3"]
    assert main([*args, "--out", str(tmp_path / "local.jsonl")]) == 0
    assert main([*args, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray"]) == 0
    local = list(read_rows(tmp_path / "local.jsonl"))
    assert list(read_rows(tmp_path / "ray.parquet")) == local
    file_level = local[0]["ranking"]["file"]
    assert "acc@2" in file_level and "acc@4" in file_level and "acc@5" not in file_level
    assert local[0]["ranking"]["budget"]["lines"] == 3
    meta = json.loads((tmp_path / "ray.parquet.meta.json").read_text())
    assert meta["ranking"] == {"k": [2, 4], "budget_lines": 3}  # what --resume compares


@requires_parity
@pytest.mark.parametrize("preset", ["contextbench", "strict"])
def test_parity_suite_rows_are_the_local_rows(ray_local, tmp_path, preset):
    runs = [RunSpec("batch", [str(PARITY / "trajs" / "_batch")]),
            RunSpec("all", [str(PARITY / "trajs")])]
    local, on_ray, ls, rs = _both(tmp_path, runs=runs, gold=[str(PARITY / "gold.jsonl")],
                                  repos=str(PARITY / "repos"), preset=preset)
    keys = {(r["run"], r["instance_id"]) for r in local}
    if preset == "contextbench":  # every record scored, a repeated one too, as its evaluator
        assert len(local) >= 46 and {r["status"] for r in local} >= {"ok", "error"}
    else:  # one row per run and instance: the first trajectory read
        assert len(local) == len(keys) >= 16 and {r["status"] for r in local} >= {"ok"}
    assert on_ray == local
    assert rs.rows == ls.rows
    assert [str(p) for p in rs.unreadable] == [str(p) for p in ls.unreadable]
    # an actor call's units of one run share a part
    meta = json.loads((tmp_path / "ray.parquet.meta.json").read_text())
    parts = [n for n in _is_dataset(tmp_path / "ray.parquet") if n.startswith("part-")]
    assert len(parts) < meta["engine"]["units"], (len(parts), meta["engine"]["units"])


@requires_shared
def test_real_corpus_rows_are_the_local_rows(ray_local, tmp_path):
    """Every agent format of the corpus (no repositories: error rows, agent failures of
    --all-gold, trajectories without gold, unreadable inputs)."""
    gold = [str(p) for p in sorted(CORPUS.glob("*/gold.json"))]
    gold.append(str(CORPUS / "contextbench" / "contextbench_verified_test.parquet"))
    runs = [RunSpec(p.name, [str(p / "trajs")]) for p in sorted(CORPUS.glob("*"))
            if (p / "trajs").is_dir()]
    runs += [RunSpec("swe-agent-1.x", [str(CORPUS / "swe-agent-1.x")]),
             RunSpec("cb", [str(CORPUS / "contextbench" / "swe-agent-checkpoints")]),
             RunSpec("sessions", [str(CORPUS / "session-logs")])]
    local, on_ray, ls, rs = _both(tmp_path, runs=runs, gold=gold, repos=None, all_gold=True)
    assert len(local) > 300
    assert {r["error"]["kind"] for r in local} >= {"missing_repo", "missing_gold"}
    assert on_ray == local
    assert rs.uncovered == ls.uncovered and rs.uncovered_by_any == ls.uncovered_by_any
    assert len(rs.without_gold) == len(ls.without_gold) > 0
    assert len(rs.unreadable) == len(ls.unreadable)


def _bad_inputs(tmp_path: Path) -> tuple[list[RunSpec], str]:
    lines = (EX / "runs" / "agent-a.jsonl").read_text().splitlines()
    gid = json.loads(lines[0])["instance_id"]
    bad = tmp_path / "in"
    bad.mkdir()
    # a bad record between good ones; a file named after an instance, unreadable
    (bad / "a-mixed.jsonl").write_text(lines[0] + "\n{\"format\": \"ctxeval-trajectory/1\"}\n"
                                       + lines[1] + "\n")
    (bad / f"{gid}.traj.json").write_text("{ not json")
    late = tmp_path / "late"
    late.mkdir()
    (late / f"{gid}.traj.json").write_text("{ not json")
    lone = str(late / f"{gid}.traj.json")  # named explicitly: reported, not skipped
    runs = [RunSpec("r1", [str(bad), str(tmp_path / "missing.jsonl"), lone]),
            RunSpec("r2", [lone])]
    return runs, gid


def test_bad_inputs_behave_as_locally(ray_local, tmp_path):
    runs, gid = _bad_inputs(tmp_path)
    local, on_ray, ls, rs = _both(tmp_path, runs=runs, gold=[str(EX / "gold.jsonl")],
                                  repos=str(EX / "repos"))
    assert on_ray == local
    # r1 covered the instance before its unreadable twin: no row; r2 did not: a failure row
    assert [(r["run"], r["status"]) for r in local if r["instance_id"] == gid] == [
        ("r1", "ok"), ("r2", "agent_failure")]
    assert [str(p) for p in rs.unreadable] == [str(p) for p in ls.unreadable]
    assert len(ls.unreadable) == 4  # the bad record, the missing input, the lone file twice


def _kill_once(marker: str, victim: str):
    """An ``on_unit`` hook: the first actor to start ``victim`` dies there (SIGKILL)."""
    def hook(unit: dict) -> None:
        if unit["path"].endswith(victim):
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return hook


@requires_parity
def test_an_actor_killed_mid_run_loses_and_duplicates_no_row(ray_local, tmp_path):
    from ray import cloudpickle

    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    runs = [RunSpec("all", [str(PARITY / "trajs")])]
    gold = [str(PARITY / "gold.jsonl")]
    local = evaluate(gold=gold, runs=runs, repos=str(PARITY / "repos"),
                     out=tmp_path / "local.jsonl", progress=False, preset="contextbench")
    files = sorted({r["pred_file"] for r in read_rows(tmp_path / "local.jsonl")})
    victim = files[len(files) // 2]
    marker = tmp_path / "killed"
    on_ray = evaluate_ray(gold=gold, runs=runs, repos=str(PARITY / "repos"),
                          out=tmp_path / "ray.parquet", progress=False, preset="contextbench",
                          jobs=2, on_unit=_kill_once(str(marker), victim))
    assert marker.exists(), "no actor was killed"
    _is_dataset(tmp_path / "ray.parquet")  # the unit retried wrote its part once
    assert list(read_rows(tmp_path / "ray.parquet")) == list(
        read_rows(tmp_path / "local.jsonl"))
    assert on_ray.rows == local.rows


def test_uris_and_a_parquet_dataset_of_raw_records(ray_local, tmp_path):
    """Inputs and gold named by URI (``file://``: any pyarrow filesystem reads the same way),
    and trajectories as rows of a Parquet dataset."""
    gold = (EX / "gold.jsonl").resolve().as_uri()
    runs = [RunSpec("a", [(EX / "runs").resolve().as_uri()])]
    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    evaluate_ray(gold=[gold], runs=runs, repos=str(EX / "repos"), out=tmp_path / "u.jsonl",
                 progress=False, jobs=2)
    local = ctxeval.evaluate(EX / "gold.jsonl", {"a": EX / "runs"}, repos=EX / "repos")
    got = list(read_rows(tmp_path / "u.jsonl"))
    assert [r["pred_file"] for r in got] == [
        (EX / "runs" / Path(r["pred_file"]).name).resolve().as_uri() for r in local.rows]
    strip = [{k: v for k, v in r.items() if k != "pred_file"} for r in got]
    assert strip == [{k: v for k, v in r.items() if k != "pred_file"} for r in local.rows]
    meta = json.loads((tmp_path / "u.jsonl.meta.json").read_text())
    assert meta["gold_sources"][0]["path"] == gold

    records = [orjson.loads(line) for p in sorted((EX / "runs").glob("*.jsonl"))
               for line in p.read_bytes().splitlines()]
    gid = records[0]["instance_id"]
    table = pa.table({"trajectory": [orjson.dumps(r).decode() for r in records[:2]]
                      + ["garbage"] + [orjson.dumps(r).decode() for r in records[2:]],
                      "instance_id": [r["instance_id"] for r in records[:2]] + [gid]
                      + [r["instance_id"] for r in records[2:]]})
    ds = tmp_path / "ds.parquet"
    pq.write_table(table, ds, row_group_size=2)
    local_ds = ctxeval.evaluate(EX / "gold.jsonl", {"ds": ds}, repos=EX / "repos")
    ev = ctxeval.evaluate(EX / "gold.jsonl", {"ds": ds}, repos=EX / "repos", engine="ray",
                          jobs=2)
    assert ev.rows == local_ds.rows
    # agent-a's and agent-b's records of the two instances in one run: the first of each is
    # its row (agent-a's)
    first = records[:2]
    assert len(ev.rows) == len(first) and {r["pred_file"] for r in ev.rows} == {str(ds)}
    assert len(ev.summary.duplicates) == len(local_ds.summary.duplicates) == 2
    assert [str(p) for p in ev.summary.unreadable] == [
        str(p) for p in local_ds.summary.unreadable]
    assert len(ev.summary.unreadable) == 1 and ev.summary.unreadable[0].line == 3
    with ctxeval.Scorer(gold=EX / "gold.jsonl", repos=EX / "repos", run="ds") as scorer:
        want = [scorer.score(r) for r in first]
    assert [{k: v for k, v in r.items() if k != "pred_file"} for r in ev.rows] == want


def test_without_the_extra_the_engine_says_how_to_get_it(monkeypatch, tmp_path):
    from ctxeval.evaluation import ray_engine

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(CtxevalError, match=r"pip install \"ctxeval\[ray\]\""):
        ray_engine.evaluate(gold=[str(EX / "gold.jsonl")],
                            runs=[RunSpec("a", [str(EX / "runs")])], repos=str(EX / "repos"),
                            out=tmp_path / "r.jsonl", progress=False)
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--pred", str(EX / "runs"),
                 "--repos", str(EX / "repos"), "--engine", "ray",
                 "--out", str(tmp_path / "r.jsonl"), "-q"]) == 1


def test_duplicate_trajectories_give_the_local_engines_one_row(ray_local, tmp_path):
    """The first trajectory read of a (run, instance) is its row, on Ray as locally, also when
    the duplicate is in another unit (another input of the run)."""
    lines = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines(keepends=True)
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_bytes(lines[0] + b"".join(lines))
    again = tmp_path / "again.jsonl"
    again.write_bytes(lines[1])
    local, on_ray, s_local, s_ray = _both(
        tmp_path, runs=[RunSpec("a", [str(doubled), str(again)])],
        gold=[str(EX / "gold.jsonl")], repos=str(EX / "repos"))
    assert len(local) == 2 and on_ray == local
    assert len(s_local.duplicates) == len(s_ray.duplicates) == 2


def test_all_gold_rows_go_in_a_part_at_their_runs_end(ray_local, tmp_path):
    """``--all-gold``'s failure rows, which only the whole run knows, are the driver's own
    part, read between the run's last unit and the next run's first."""
    lines = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines(keepends=True)
    one = tmp_path / "one.jsonl"
    one.write_bytes(lines[0])
    runs = [RunSpec("a", [str(one)]), RunSpec("none", [str(tmp_path / "nothing.jsonl")]),
            RunSpec("b", [str(EX / "runs" / "agent-b.jsonl")])]
    local, on_ray, ls, rs = _both(tmp_path, runs=runs, gold=[str(EX / "gold.jsonl")],
                                  repos=str(EX / "repos"), all_gold=True)
    assert on_ray == local
    assert [(r["run"], r["status"]) for r in local] == [
        ("a", "ok"), ("a", "agent_failure"), ("none", "agent_failure"),
        ("none", "agent_failure"), ("b", "ok"), ("b", "ok")]
    assert _is_dataset(tmp_path / "ray.parquet") == [
        "part-0000-000000000-u.parquet", "part-0000-000000001-a000000.parquet",
        "part-0000-000000002-a000001.parquet", "part-0000-000000002-u.parquet"]
    assert rs.rows == ls.rows and rs.uncovered == ls.uncovered


def test_resume_of_a_dataset_adds_parts_after_the_kept_ones(ray_local, tmp_path, capsys):
    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    gold = [str(EX / "gold.jsonl")]
    first = [RunSpec("agent-a", [str(EX / "runs" / "agent-a.jsonl")])]
    both = [*first, RunSpec("agent-b", [str(EX / "runs" / "agent-b.jsonl")])]
    evaluate(gold=gold, runs=both, repos=str(EX / "repos"), out=tmp_path / "local.jsonl",
             progress=False)
    out = tmp_path / "ray.parquet"
    evaluate_ray(gold=gold, runs=first, repos=str(EX / "repos"), out=out, progress=False,
                 jobs=2)
    kept = out / "part-0000-000000000-u.parquet"
    stamp = kept.stat().st_mtime_ns
    (out / ".pending-0003").mkdir()  # a killed evaluation's leftovers
    (out / ".pending-0003" / "part-0003-000000001-u.parquet").write_bytes(b"torn")
    summary = evaluate_ray(gold=gold, runs=both, repos=str(EX / "repos"), out=out,
                           progress=False, jobs=2, resume=True)
    assert summary.skipped_resume == 2 and summary.rows["ok"] == 2
    assert _is_dataset(out) == ["part-0000-000000000-u.parquet",
                                "part-0001-000000001-u.parquet"]
    assert kept.stat().st_mtime_ns == stamp  # the kept rows are not written again
    assert list(read_rows(out)) == list(read_rows(tmp_path / "local.jsonl"))
    assert main(["report", str(out), "--format", "json"]) == 0
    assert main(["report", str(tmp_path / "local.jsonl"), "--format", "json"]) == 0
    ray_report, local_report = capsys.readouterr().out.split("\n{", 1)
    assert "{" + local_report == ray_report + "\n"
    # without --resume, the dataset is replaced: generation 0 again
    evaluate_ray(gold=gold, runs=first, repos=str(EX / "repos"), out=out, progress=False,
                 jobs=2)
    assert _is_dataset(out) == ["part-0000-000000000-u.parquet"]


def test_an_out_that_is_not_ours_is_refused_before_ray_starts(tmp_path, capsys):
    args = ["evaluate", "--gold", str(EX / "gold.jsonl"), "--pred", str(EX / "runs"),
            "--repos", str(EX / "repos"), "--engine", "ray", "-q"]
    taken = tmp_path / "taken.parquet"
    taken.mkdir()
    (taken / "data.csv").write_text("a,b\n")
    assert main([*args, "--out", str(taken)]) != 0
    assert "not a results dataset ctxeval wrote (it holds data.csv)" in capsys.readouterr().err
    assert sorted(p.name for p in taken.iterdir()) == ["data.csv"]
    assert not (tmp_path / "taken.parquet.meta.json").exists()


def test_an_out_given_as_a_uri_is_refused(tmp_path):
    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    pytest.importorskip("ray", reason=NO_RAY)
    with pytest.raises(CtxevalError, match="not a URI"):
        evaluate_ray(gold=[str(EX / "gold.jsonl")], runs=[RunSpec("a", [str(EX / "runs")])],
                     repos=str(EX / "repos"), out="s3://bucket/results.parquet",
                     progress=False)
    assert not Path("s3:").exists()


def test_a_local_parquet_file_is_replaced_by_the_dataset(ray_local, tmp_path):
    from tests.conftest import evaluate_example

    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    out = tmp_path / "r.parquet"
    evaluate_example(out)
    rows = list(read_rows(out))
    with pytest.raises(CtxevalError, match="resume it with the local engine"):
        evaluate_ray(gold=[str(EX / "gold.jsonl")], runs=[RunSpec("a", [str(EX / "runs")])],
                     repos=str(EX / "repos"), out=out, progress=False, resume=True)
    assert out.is_file()
    summary = evaluate_ray(gold=[str(EX / "gold.jsonl")],
                           runs=[RunSpec("agent-a", [str(EX / "runs" / "agent-a.jsonl")]),
                                 RunSpec("agent-b", [str(EX / "runs" / "agent-b.jsonl")])],
                           repos=str(EX / "repos"), out=out, progress=False, jobs=2)
    assert summary.replaced == 4
    assert out.is_dir() and list(read_rows(out)) == rows


def test_views_under_ray_are_the_local_sidecar_in_parts(ray_local, tmp_path, capsys):
    """``--views``: each actor writes its rows' views records beside their part (the driver
    those of ``--all-gold``'s rows); read in order, they are the local sidecar, and ``ctxeval
    view`` draws the same pages from the dataset."""
    lines = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines(keepends=True)
    one = tmp_path / "one.jsonl"
    one.write_bytes(lines[0])
    args = ["evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"a={one}",
            "--run", f"b={EX / 'runs' / 'agent-b.jsonl'}", "--repos", str(EX / "repos"),
            "-q", "--views", "--all-gold"]
    assert main([*args, "--out", str(tmp_path / "local.jsonl")]) == 0
    out = tmp_path / "ray.parquet"
    assert main([*args, "--out", str(out), "--engine", "ray", "--actors", "2"]) == 0
    assert list(read_rows(out)) == list(read_rows(tmp_path / "local.jsonl"))
    names = _is_dataset(out)
    assert [n for n in names if n.startswith("views-")] == [
        "views-0000-000000000-u.jsonl", "views-0000-000000001-a000000.jsonl",
        "views-0000-000000001-u.jsonl"]
    got = b"".join((out / n).read_bytes() for n in names if n.startswith("views-"))
    assert got == (tmp_path / "local.views.jsonl").read_bytes()
    assert main(["view", str(tmp_path / "local.jsonl"), "--out", str(tmp_path / "vl")]) == 0
    assert main(["view", str(out), "--out", str(tmp_path / "vr")]) == 0
    pages = sorted(p.name for p in (tmp_path / "vl").iterdir())
    assert pages == sorted(p.name for p in (tmp_path / "vr").iterdir()) and len(pages) > 1
    # a JSONL --out is written by the driver: no views there under Ray
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "r.jsonl"), "--engine", "ray"]) == 2
    assert "needs a Parquet --out" in capsys.readouterr().err


@requires_parity
def test_a_driver_stopped_half_way_leaves_a_prefix_that_resume_completes(ray_local, tmp_path,
                                                                         monkeypatch):
    """The parts in the dataset are only those the driver moved in, in order: an evaluation
    stopped half-way leaves whole parts, a prefix of the run, and ``--resume`` adds the rest
    after them; the rows are the local engine's."""
    from ctxeval.evaluation.output.results_dataset import DatasetOutput
    from ctxeval.evaluation.ray_engine import evaluate as evaluate_ray

    runs = [RunSpec("batch", [str(PARITY / "trajs" / "_batch")]),
            RunSpec("all", [str(PARITY / "trajs")])]
    gold = [str(PARITY / "gold.jsonl")]
    evaluate(gold=gold, runs=runs, repos=str(PARITY / "repos"), out=tmp_path / "local.jsonl",
             progress=False)
    local = list(read_rows(tmp_path / "local.jsonl"))
    out = tmp_path / "ray.parquet"
    take = DatasetOutput.take
    moved: list[str] = []

    def stop_after_two(self, name, keep, views=None):
        if len(moved) == 2:
            raise KeyboardInterrupt
        moved.append(name)
        take(self, name, keep, views)

    monkeypatch.setattr(DatasetOutput, "take", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        evaluate_ray(gold=gold, runs=runs, repos=str(PARITY / "repos"), out=out,
                     progress=False, jobs=2)
    monkeypatch.setattr(DatasetOutput, "take", take)
    assert sorted(p.name for p in out.iterdir()) == moved  # no pending directory left
    kept = list(read_rows(out))
    assert 0 < len(kept) < len(local) and kept == local[:len(kept)]
    summary = evaluate_ray(gold=gold, runs=runs, repos=str(PARITY / "repos"), out=out,
                           progress=False, jobs=2, resume=True)
    assert summary.skipped_resume == len(kept)
    assert list(read_rows(out)) == local
