"""``ctxeval.Scorer``: one rollout at a time, the same row ``ctxeval evaluate`` writes."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from tests.conftest import FIXTURES, PARITY, requires_parity

import ctxeval
from ctxeval.errors import AdapterError
from ctxeval.reading.adapters import neutral

EX = FIXTURES / "example"


def _without_pred_file(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "pred_file"}


@pytest.fixture(scope="module")
def local_rows():
    ev = ctxeval.evaluate(EX / "gold.jsonl", {"rollout": EX / "runs" / "agent-a.jsonl"},
                          repos=EX / "repos")
    return [_without_pred_file(r) for r in ev.rows]


def test_every_way_of_passing_a_rollout_gives_the_local_row(local_rows):
    lines = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines()
    trajs = neutral.read(EX / "runs" / "agent-a.jsonl")
    with ctxeval.Scorer(gold=EX / "gold.jsonl", repos=EX / "repos") as scorer:
        for k, line in enumerate(lines):
            want = local_rows[k]
            assert scorer.score(orjson.loads(line)) == want
            assert scorer.score(line) == want
            assert scorer.score(line.decode()) == want
            assert scorer.score(trajs[k]) == want
        assert [_without_pred_file(r) for r in scorer.score_all(EX / "runs" / "agent-a.jsonl")
                ] == local_rows
        # Warm: the hundredth call is the first one's row.
        for _ in range(20):
            assert scorer.score(lines[0]) == local_rows[0]


def test_reward_is_one_number_of_the_row(local_rows):
    line = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines()[1]
    with ctxeval.Scorer(gold=[EX / "gold.jsonl"], repos=EX / "repos") as scorer:
        assert scorer.reward(line) == local_rows[1]["final"]["line"]["f1"]
        assert scorer.reward(line, "trajectory.auc_coverage.symbol") == \
            local_rows[1]["trajectory"]["auc_coverage"]["symbol"]
        assert scorer.reward(line, "no.such.metric", default=-1.0) == -1.0


def test_a_bad_rollout_is_an_agent_failure_row_or_an_error(tmp_path):
    gold_id = json.loads((EX / "gold.jsonl").read_text().splitlines()[0])["instance_id"]
    with ctxeval.Scorer(gold=EX / "gold.jsonl", repos=EX / "repos") as scorer:
        row = scorer.score(b"this is not a trajectory", instance_id=gold_id)
        assert row["status"] == "agent_failure"
        assert row["instance_id"] == gold_id
        assert row["reason"].startswith("unreadable trajectory")
        assert row["final"]["line"]["coverage"] == 0.0
        with pytest.raises(AdapterError, match="no adapter recognises"):
            scorer.score(b"this is not a trajectory")
        with pytest.raises(AdapterError, match="expected one trajectory"):
            scorer.score(EX / "runs" / "agent-a.jsonl")
        # An instance the gold does not have is the local run's error row.
        line = orjson.loads((EX / "runs" / "agent-a.jsonl").read_bytes().splitlines()[0])
        line["instance_id"] = "nobody__nothing-1"
        row = scorer.score(line)
        assert row["status"] == "error" and row["error"]["kind"] == "missing_gold"


@requires_parity
def test_parity_files_scored_one_by_one_match_the_local_run():
    """Eight agent formats under the contextbench preset, each file scored on its own from
    its bytes (read under its own name), against a local evaluation of the same files."""
    index = json.loads((PARITY / "trajs_index.json").read_text())["trajectories"]
    files = [PARITY / t["pred_file"] for t in index
             if (PARITY / t["pred_file"]).is_file() and "_batch" not in t["pred_file"]]
    ev = ctxeval.evaluate(PARITY / "gold.jsonl", {"rollout": [str(f) for f in files]},
                          repos=PARITY / "repos", preset="contextbench")
    by_file: dict[str, list[dict]] = {}
    for row in ev.rows:
        by_file.setdefault(Path(row["pred_file"]).name + "|" + row["pred_file"], []).append(
            _without_pred_file(row))
    scored = 0
    with ctxeval.Scorer(gold=PARITY / "gold.jsonl", repos=PARITY / "repos",
                        preset="contextbench") as scorer:
        for f in files:
            want = by_file.get(f.name + "|" + str(f))
            if not want:
                continue  # an unreadable file without a row locally
            got = scorer.score_all(f.read_bytes(), name=f.name,
                                   instance_id=want[0]["instance_id"])
            assert got == want, f
            scored += 1
    assert scored >= 30


def test_a_str_that_names_a_file_is_the_file(local_rows, tmp_path):
    """``score("run.traj.json")`` read the path as the record's text and gave an agent_failure
    row (issue 23): a str naming an existing file is that file; JSON text is a record; a str
    that is neither is an error that says what to give; other text comes as bytes or text=."""
    one = tmp_path / "one.jsonl"
    line = (EX / "runs" / "agent-a.jsonl").read_bytes().splitlines()[0]
    one.write_bytes(line + b"\n")
    with ctxeval.Scorer(gold=EX / "gold.jsonl", repos=EX / "repos") as scorer:
        assert scorer.score(str(one)) == local_rows[0]  # was an agent_failure row
        assert scorer.score(one) == local_rows[0]
        assert scorer.score(line.decode()) == local_rows[0]  # JSON text is still a record
        assert scorer.score(text=line.decode()) == local_rows[0]
        assert scorer.reward(str(one)) == local_rows[0]["final"]["line"]["f1"]
        gid = local_rows[0]["instance_id"]
        for wrong in (str(tmp_path / "missing.traj.json"), "run.traj.json", "not json at all"):
            with pytest.raises(ValueError, match="names no existing file and is not JSON"):
                scorer.score(wrong, instance_id=gid)
        with pytest.raises(TypeError, match="not both"):
            scorer.score(line, text=line.decode())
    # text in a format that is not JSON, given with text=: a Prometheus log of the parity
    # fixtures, as the local run reads the file
    log = FIXTURES / "parity" / "trajs" / "toy__polyglot-4" / "t2" / "toy__polyglot-4.log"
    ev = ctxeval.evaluate(FIXTURES / "parity" / "gold.jsonl", {"rollout": log},
                          repos=FIXTURES / "parity" / "repos", preset="contextbench")
    with ctxeval.Scorer(gold=FIXTURES / "parity" / "gold.jsonl",
                        repos=FIXTURES / "parity" / "repos", preset="contextbench") as scorer:
        want = _without_pred_file(ev.rows[0])
        assert scorer.score(text=log.read_text(), name=log.name) == want
        assert scorer.score(log.read_bytes(), name=log.name) == want
        assert scorer.score(str(log)) == want
        with pytest.raises(ValueError, match="is not JSON"):
            scorer.score(log.read_text(), name=log.name)
