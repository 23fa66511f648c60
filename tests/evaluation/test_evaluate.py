"""``ctxeval evaluate`` end to end on the bundled example, with numbers worked out by hand.

The example repository (fixtures/example/repos) has ``calc/ops.py`` (35 lines: add 4-5, sub 8-9,
mul 12-13, div 16-18, class Calculator 21-35 with __init__ 24-25, apply 27-29, divide 31-32,
reset 34-35) and ``calc/parse.py`` (26 lines: tokenize 8-17, parse 20-26).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from conftest import FIXTURES
from ctxeval.cli import main

EX = FIXTURES / "example"


def evaluate(tmp_path: Path, *args: str) -> tuple[int, list[dict]]:
    out = tmp_path / "results.jsonl"
    code = main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--out", str(out), "-q", *args])
    rows = [orjson.loads(x) for x in out.read_bytes().splitlines()] if out.exists() else []
    return code, rows


@pytest.fixture
def example_rows(tmp_path):
    code, rows = evaluate(tmp_path, "--run", f"agent-a={EX / 'runs/agent-a.jsonl'}",
                          "--run", f"agent-b={EX / 'runs/agent-b.jsonl'}")
    assert code == 0
    return {(r["run"], r["instance_id"]): r for r in rows}, rows


def test_rows_in_input_order(example_rows):
    _, rows = example_rows
    assert [(r["run"], r["instance_id"]) for r in rows] == [
        ("agent-a", "example__calc-1"), ("agent-a", "example__calc-2"),
        ("agent-b", "example__calc-1"), ("agent-b", "example__calc-2")]
    assert all(r["status"] == "ok" for r in rows)


def test_agent_a_instance_1_by_hand(example_rows):
    r = example_rows[0][("agent-a", "example__calc-1")]
    # steps: ls (nothing), grep hit at 16, cat (all 35 lines), sed 28-35, an edit
    assert r["num_steps"] == 5
    line = r["final"]["line"]  # final = union = the whole file; gold 16-18 + 31-32
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (5, 5, 35)
    assert line["precision"] == pytest.approx(5 / 35)
    sym = r["final"]["symbol"]  # gold: div, Calculator (encloses 31-32), divide; pred: all 9
    assert (sym["intersection"], sym["gold_size"], sym["pred_size"]) == (3, 3, 9)
    cov = [s["coverage"]["line"] for s in r["trajectory"]["steps"]]
    assert cov == [0.0, pytest.approx(0.2), 1.0, 1.0, 1.0]
    assert r["trajectory"]["auc_coverage"]["line"] == pytest.approx(3.2 / 5)
    # viewed 0 + 1 + 35 + 8 + 0 = 44 lines, 35 distinct
    assert r["trajectory"]["redundancy"]["line"] == pytest.approx(1 - 35 / 44)
    # gold patch replaces line 17; the model inserts after line 31: no common line
    e = r["editloc"]
    assert (e["intersection"], e["gold_size"], e["pred_size"]) == (0, 1, 1)
    assert e["file"]["recall"] == 1.0
    assert r["usage"] == {"input_tokens": 7700, "output_tokens": 330,
                          "cost": pytest.approx(0.016), "api_calls": None}
    assert r["final_source"] == "union"


def test_agent_a_instance_2_declared_final(example_rows):
    r = example_rows[0][("agent-a", "example__calc-2")]
    assert r["final_source"] == "declared"
    line = r["final"]["line"]  # declared 20-26 against gold 5 + 20-26
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (7, 8, 7)
    assert r["trajectory"]["auc_coverage"]["line"] == pytest.approx((7 / 8 + 1 + 1) / 3)
    assert r["trajectory"]["redundancy"]["line"] == pytest.approx(1 - 19 / 28)
    # line 5 was seen in step 2 but is not in the declared final context
    assert r["trajectory"]["evidence_drop"]["line"] == 1
    assert r["editloc"]["recall"] == 1.0 and r["resolved"] is True


def test_agent_b_symbol_views_resolve(example_rows):
    r = example_rows[0][("agent-b", "example__calc-1")]
    line, sym = r["final"]["line"], r["final"]["symbol"]
    assert (line["coverage"], line["precision"]) == (1.0, 1.0)
    assert (sym["intersection"], sym["gold_size"], sym["pred_size"]) == (3, 3, 3)
    r2 = example_rows[0][("agent-b", "example__calc-2")]
    # tokenize (8-17) and all of ops.py: no gold line; parse.py is the gold file
    assert r2["final"]["line"]["intersection"] == 0
    assert r2["final"]["file"]["precision"] == 0.5
    # no model patch: EditLoc with an empty prediction, never the gold patch
    assert (r2["editloc"]["pred_size"], r2["editloc"]["recall"]) == (0, 0.0)


def test_meta_sidecar(tmp_path):
    code, _ = evaluate(tmp_path, "--pred", str(EX / "runs/agent-a.jsonl"))
    meta = json.loads((tmp_path / "results.jsonl.meta.json").read_text())
    assert code == 0
    assert meta["preset"] == "strict" and meta["final_policy"] == "declared"
    assert meta["gold_sources"][0]["sha256"] and len(meta["gold_sources"][0]["sha256"]) == 64
    assert "tree-sitter-abi" in meta["grammars"] and "tree-sitter-python" in meta["grammars"]


def test_failures_are_rows_and_the_run_finishes(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    # a corrupt trajectory named after a gold instance, and a trajectory with no gold row
    (runs / "example__calc-1.traj.json").write_text('{"messages": [', encoding="utf-8")
    good = (EX / "runs/agent-a.jsonl").read_text().splitlines()[1]
    stray = json.loads(good) | {"instance_id": "example__nope-9"}
    (runs / "more.jsonl").write_text(good + "\n" + json.dumps(stray) + "\n", encoding="utf-8")
    code, rows = evaluate(tmp_path, "--pred", str(runs), "--all-gold")
    assert code == 0
    by = {r["instance_id"]: r for r in rows}
    assert by["example__calc-1"]["status"] == "agent_failure"
    assert by["example__calc-1"]["final"]["line"]["coverage"] == 0.0
    assert by["example__calc-2"]["status"] == "ok"
    assert by["example__nope-9"]["status"] == "error"
    assert by["example__nope-9"]["error"]["kind"] == "missing_gold"


def test_missing_repository_is_an_error_row(tmp_path):
    repos = tmp_path / "empty"
    repos.mkdir()
    out = tmp_path / "r.jsonl"
    code = main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(repos),
                 "--pred", str(EX / "runs/agent-a.jsonl"), "--out", str(out), "-q"])
    rows = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert code == 0
    assert {r["status"] for r in rows} == {"error"}
    msg = rows[0]["error"]["message"]
    assert "example__calc" in msg and str(tmp_path) not in msg


def test_exit_status(tmp_path, capsys):
    # usage errors: 2; no gold loadable: 1
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl")]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not gold\n")
    assert main(["evaluate", "--gold", str(bad), "--pred", str(EX / "runs"), "-q",
                 "--repos", str(EX / "repos")]) == 1


RUNS = ("--run", f"agent-a={EX / 'runs/agent-a.jsonl'}",
        "--run", f"agent-b={EX / 'runs/agent-b.jsonl'}")


def test_jobs_and_resume_keep_rows(tmp_path):
    code, rows1 = evaluate(tmp_path, *RUNS, "-j", "2")
    assert code == 0 and len(rows1) == 4
    out = tmp_path / "results.jsonl"
    first = out.read_bytes().splitlines()
    out.write_bytes(b"\n".join(first[:2]) + b"\n")
    code, rows2 = evaluate(tmp_path, *RUNS, "--resume")
    assert code == 0
    assert sorted(orjson.dumps(r) for r in rows2) == sorted(orjson.dumps(r) for r in rows1)


def test_no_nan_in_output(tmp_path):
    code, _ = evaluate(tmp_path, "--pred", str(EX / "runs"))
    text = (tmp_path / "results.jsonl").read_text()
    assert code == 0 and "NaN" not in text and "Infinity" not in text


def test_report_runs_on_the_rows(tmp_path, capsys):
    evaluate(tmp_path, *RUNS)
    assert main(["report", str(tmp_path / "results.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "agent-a" in out and "agent-b" in out


def test_snapshot_copy_is_read_at_its_commit(tmp_path):
    # the repository may also be a plain snapshot named after the instance
    repos = tmp_path / "repos"
    src = next((EX / "repos").iterdir())
    shutil.copytree(src, repos / "example__calc-1")
    shutil.copytree(src, repos / "example__calc-2")
    out = tmp_path / "r.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(repos),
                 "--pred", str(EX / "runs/agent-a.jsonl"), "--out", str(out), "-q"]) == 0
    rows = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"]


def _git(cwd: Path, *args: str) -> None:
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_git_repository_gives_the_same_rows_as_the_snapshot(tmp_path, example_rows):
    """The example tree committed to a git repository (then moved on) is read at the commit."""
    src = next((EX / "repos").iterdir())
    work = tmp_path / "calc"
    shutil.copytree(src, work)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "base")
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True,
                            text=True, check=True).stdout.strip()
    (work / "calc" / "ops.py").write_text("# moved on\n")  # the work tree no longer matches
    _git(work, "commit", "-qam", "later")
    repos = tmp_path / "repos"
    repos.mkdir()
    (repos / "example__calc").symlink_to(work)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(
        json.dumps(json.loads(line) | {"base_commit": commit}) + "\n"
        for line in (EX / "gold.jsonl").read_text().splitlines()))
    out = tmp_path / "r.jsonl"
    assert main(["evaluate", "--gold", str(gold), "--repos", str(repos), "-q", "--out", str(out),
                 "--run", f"agent-b={EX / 'runs/agent-b.jsonl'}"]) == 0
    rows = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    snap = example_rows[0]
    for r in rows:
        want = snap[("agent-b", r["instance_id"])]
        assert r["status"] == "ok"
        assert r["final"] == want["final"]
        assert r["trajectory"] == want["trajectory"]
    # symbol metrics come from the git blobs: Calculator.divide resolved by name
    assert rows[0]["final"]["symbol"]["intersection"] == 3


def test_results_file_sets_resolved(tmp_path):
    traj = json.loads((EX / "runs/agent-a.jsonl").read_text().splitlines()[0])
    del traj["resolved"]
    pred = tmp_path / "t.jsonl"
    pred.write_text(json.dumps(traj) + "\n")
    res = tmp_path / "final_report.json"
    res.write_text(json.dumps({"resolved": ["example__calc-1"]}))
    code, rows = evaluate(tmp_path, "--run", f"a={pred}", "--results", f"a={res}")
    assert code == 0 and rows[0]["resolved"] is True
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"a={pred}",
                 "--results", f"zzz={res}"]) == 2


def test_text_overlap_of_context_and_patch(tmp_path):
    from ctxeval.reading.textmatch import tokens

    code, rows = evaluate(tmp_path, "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--text")
    assert code == 0
    text = rows[1]["text"]  # declared final context 20-26 against gold 5 + 20-26
    src = next((EX / "repos").iterdir()) / "calc" / "parse.py"
    lines = src.read_text().splitlines(keepends=True)
    final, gold = "".join(lines[19:26]), lines[4] + "".join(lines[19:26])
    # the final context is a sub-multiset of the gold text: precision 1, recall by counting
    assert text["context_token_precision"] == 1.0
    assert text["context_token_recall"] == pytest.approx(len(tokens(final)) / len(tokens(gold)))
    assert (text["patch_exact_match"], text["patch_token_f1"]) == (1.0, 1.0)
    assert "text" not in evaluate(tmp_path, "--run", f"a={EX / 'runs/agent-a.jsonl'}")[1][0]


def test_progress_bar_only_on_a_terminal():
    import io

    from ctxeval.evaluation.pipeline import _Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = _Progress(stream, enabled=True)
        p.begin("run-a", 4)
        p.instance()
        p.input_done()
        p.input_done()
        p.draw(force=True)
        p.done()
    assert "run-a: [############" in tty.getvalue() and "2/4 inputs" in tty.getvalue()
    assert "ETA" in tty.getvalue()
    assert pipe.getvalue() == ""


def test_worker_processes_give_the_same_rows_in_order(tmp_path):
    base = ["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"), "-q"]
    for agent in ("a", "b"):  # one directory per run (a run has one row per instance)
        runs = tmp_path / f"split-{agent}"
        runs.mkdir()
        lines = (EX / f"runs/agent-{agent}.jsonl").read_text().splitlines()
        for k, line in enumerate(lines):  # one trajectory per file, in a known order
            (runs / f"{k:02d}.jsonl").write_text(line + "\n")
        (runs / "99-broken.jsonl").write_text('{"format": "ctxeval-trajectory/1", "steps": [}\n')
        base += ["--run", f"split-{agent}={runs}"]
    out1, out2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main([*base, "--out", str(out1)]) == 0
    assert main([*base, "--out", str(out2), "-j", "2"]) == 0
    one, two = out1.read_bytes(), out2.read_bytes()
    assert one == two
    rows = [orjson.loads(x) for x in one.splitlines()]
    assert [r["instance_id"] for r in rows] == ["example__calc-1", "example__calc-2"] * 2


def test_lru_cache_forgets_the_least_recently_used():
    from ctxeval.evaluation.prepare.preparer import LruCache

    c = LruCache(2)
    c["a"], c["b"] = 1, 2
    assert c.get("a") == 1  # a is now the most recent
    c["c"] = 3
    assert list(c) == ["a", "c"] and c.get("b") is None


def test_sized_lru_forgets_beyond_its_characters():
    """The lines kept for placing patches are bounded by their characters (a line break
    each), not their count, and the newest entry is kept whatever its size."""
    from ctxeval.evaluation.prepare.preparer import SizedLru

    c = SizedLru(10)
    c["a"], c["b"] = ["xx"], ["yyy"]  # 3 + 4
    assert c.held == 7 and c.get("a") == ["xx"]  # a is now the most recent
    c["c"] = ["zz"]  # 10: all kept
    assert list(c) == ["b", "a", "c"] and c.held == 10
    c["d"] = ["w"]  # 12: b goes
    assert list(c) == ["a", "c", "d"] and c.held == 8
    c["a"] = ["v" * 20]  # replaced, and bigger than the limit: only it is kept
    assert list(c) == ["a"] and c.held == 21


def test_cold_warm_and_uncached_runs_give_the_same_rows(tmp_path):
    cache = tmp_path / "cache"
    outs = []
    for extra in (["--cache-dir", str(cache)], ["--cache-dir", str(cache)], ["--no-cache"],
                  ["--no-cache", "--no-incremental"]):
        out = tmp_path / f"r{len(outs)}.jsonl"
        assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                     "-q", *RUNS, "--out", str(out), *extra]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2] == outs[3]
    assert any((cache / "symbols").rglob("*"))  # the first run filled the cache
    meta = json.loads((tmp_path / "r1.jsonl.meta.json").read_text())
    assert meta["symbol_cache"]["disk_stats"]["hits"] > 0


def test_worker_processes_split_one_big_input(tmp_path):
    """Few inputs: the parent reads them and workers score chunks of their trajectories. (Twelve
    instances: copies of the example's two under other ids, at the same commit; a run has one
    row per instance.)"""
    golds = [orjson.loads(x) for x in (EX / "gold.jsonl").read_bytes().splitlines()]
    trajs = [orjson.loads(x) for agent in ("a", "b")
             for x in (EX / f"runs/agent-{agent}.jsonl").read_bytes().splitlines()]
    gold, big = tmp_path / "gold.jsonl", tmp_path / "all.jsonl"
    with gold.open("wb") as g, big.open("wb") as b:
        for k in range(6):
            for rec in golds:
                g.write(orjson.dumps({**rec, "instance_id": f"{rec['instance_id']}-{k}"}) + b"\n")
            for t in trajs[2 * (k % 2): 2 * (k % 2) + 2]:
                b.write(orjson.dumps({**t, "instance_id": f"{t['instance_id']}-{k}"}) + b"\n")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"r{jobs}.jsonl"
        assert main(["evaluate", "--gold", str(gold), "--repos", str(EX / "repos"),
                     "-q", "--run", f"big={big}", "--out", str(out), "-j", jobs]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    rows = [orjson.loads(x) for x in outs[0].splitlines()]
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}


def test_a_bad_record_among_good_ones_is_reported_and_skipped(tmp_path):
    lines = (EX / "runs/agent-a.jsonl").read_text().splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(lines[0] + "\n" + '{"format": "ctxeval-trajectory/1"}\n' + lines[1] + "\n")
    out = tmp_path / "r.jsonl"
    from ctxeval.evaluation.pipeline import RunSpec
    from ctxeval.evaluation.pipeline import evaluate as run_eval

    summary = run_eval(gold=[EX / "gold.jsonl"], runs=[RunSpec("m", [str(mixed)])],
                       repos=EX / "repos", out=out, progress=False, cache_dir=None)
    rows = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert len(summary.unreadable) == 1
    p = summary.unreadable[0]
    assert (p.line, p.field) == (2, "instance_id")


def test_text_overlap_under_the_contextbench_preset(tmp_path):
    code, rows = evaluate(tmp_path, "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--text",
                          "--preset", "contextbench")
    assert code == 0 and [r["status"] for r in rows] == ["ok", "ok"]
    assert rows[1]["text"]["context_token_precision"] == 1.0


def test_a_gold_patch_offset_from_its_base_commit_is_scored_where_it_applies(tmp_path):
    """SWE-bench gold patches can be made against another revision than the record's base
    commit (10 of the 217 Lite hunks checked apply at an offset): the gold lines and EditLoc
    are where the hunk applies, as with the exact patch, and the row says so."""
    import ctxeval

    rec = json.loads((EX / "gold.jsonl").read_text().splitlines()[0])
    exact = {k: rec[k] for k in ("instance_id", "repo", "base_commit", "patch")}
    offset = dict(exact, patch=exact["patch"].replace("@@ -14,7 +14,8 @@", "@@ -9,7 +9,8 @@"))
    assert offset["patch"] != exact["patch"]
    rows = {}
    for name, record in (("exact", exact), ("offset", offset)):
        gold = tmp_path / f"{name}.jsonl"
        gold.write_text(json.dumps(record) + "\n")
        ev = ctxeval.evaluate(gold, {"agent-a": EX / "runs" / "agent-a.jsonl"},
                              EX / "repos")
        (rows[name],) = [r for r in ev.rows if r["instance_id"] == rec["instance_id"]]
    warnings = rows["offset"].pop("warnings")
    assert warnings == ["gold patch: hunks apply at an offset at the base commit in calc/ops.py;"
                        " its edit locations are taken where they apply"]
    assert "warnings" not in rows["exact"]
    assert rows["offset"] == rows["exact"]
    assert rows["exact"]["final"]["line"]["gold_size"] == 1  # the removed comment, line 17
