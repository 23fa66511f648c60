"""Trajectory datasets: a Parquet file with one raw record per row (column ``trajectory``),
read by each record's own adapter, as the same records in files are."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.conftest import FIXTURES

import ctxeval
from ctxeval.errors import AdapterError
from ctxeval.reading import adapters
from ctxeval.reading.adapters import dataset

EX = FIXTURES / "example"


def _records() -> list[dict]:
    return [orjson.loads(line) for p in sorted((EX / "runs").glob("*.jsonl"))
            for line in p.read_bytes().splitlines()]


def test_a_dataset_gives_the_rows_of_the_same_records_in_files(tmp_path):
    records = _records()
    ds = tmp_path / "rollouts.parquet"
    pq.write_table(pa.table({"trajectory": [orjson.dumps(r) for r in records[:1]] + [b"x"]
                             + [orjson.dumps(r) for r in records[1:]]}), ds, row_group_size=2)
    assert adapters.detect(ds) is dataset
    got = ctxeval.evaluate(EX / "gold.jsonl", {"r": ds}, repos=EX / "repos")
    files = ctxeval.evaluate(EX / "gold.jsonl", {"r": sorted((EX / "runs").glob("*.jsonl"))},
                             repos=EX / "repos")
    # agent-a's and agent-b's records of two instances as one run: one row per instance (the
    # first record read), from the dataset as from the files
    assert len(got.rows) == len({r["instance_id"] for r in records}) == 2
    assert len(got.summary.duplicates) == len(files.summary.duplicates) == 2
    assert [{k: v for k, v in r.items() if k != "pred_file"} for r in got.rows] == [
        {k: v for k, v in r.items() if k != "pred_file"} for r in files.rows]
    assert {r["pred_file"] for r in got.rows} == {str(ds)}
    (bad,) = got.summary.unreadable
    assert (bad.path, bad.line, bad.field) == (str(ds), 2, "trajectory")
    assert "no adapter recognises" in bad.message


def test_only_parquet_with_a_trajectory_column_is_a_dataset(tmp_path):
    other = tmp_path / "gold.parquet"
    pq.write_table(pa.table({"instance_id": ["a"]}), other)
    assert not dataset.detect(other, other.read_bytes()[:64])
    records = _records()
    ds = tmp_path / "d.parquet"
    pq.write_table(pa.table({"trajectory": ["nope"], "instance_id": [records[0]["instance_id"]]}),
                   ds)
    with pytest.raises(AdapterError) as err:
        dataset.read(ds)
    assert err.value.line == 1 and err.value.path == str(ds)


def test_a_json_lines_dataset_reads_as_the_parquet_one(tmp_path):
    records = _records()
    rows = [{"trajectory": records[0]}, {"trajectory": "garbage"}, {"other": 1},
            *({"trajectory": orjson.dumps(r).decode(), "instance_id": r["instance_id"]}
              for r in records[1:])]
    jl = tmp_path / "rollouts.jsonl"
    jl.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    assert adapters.detect(jl) is dataset
    got = ctxeval.evaluate(EX / "gold.jsonl", {"r": jl}, repos=EX / "repos")
    files = ctxeval.evaluate(EX / "gold.jsonl", {"r": sorted((EX / "runs").glob("*.jsonl"))},
                             repos=EX / "repos")
    assert [{k: v for k, v in r.items() if k != "pred_file"} for r in got.rows] == [
        {k: v for k, v in r.items() if k != "pred_file"} for r in files.rows]
    assert [(p.line, p.field) for p in got.summary.unreadable] == [(2, "trajectory"),
                                                                   (3, None)]
    # A neutral JSONL file is not a dataset.
    assert adapters.detect(EX / "runs" / "agent-a.jsonl") is not dataset
