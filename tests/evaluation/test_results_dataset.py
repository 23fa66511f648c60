"""The Ray engine's output, a directory of Parquet parts (``results_dataset``), read by every
reader as the one file the local engine writes; and held as the local engine holds a file.
These tests make datasets by hand (no Ray); ``test_ray_engine.py`` makes them with Ray."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.conftest import evaluate_example

import ctxeval
from ctxeval.cli import main
from ctxeval.errors import InputError
from ctxeval.evaluation.output import results_dataset as rd
from ctxeval.evaluation.output.outfile import OutputBusy
from ctxeval.evaluation.output.results import read_rows


def _dataset(tmp_path, rows, name="d.parquet", cut=(1, 3)):
    """``rows`` as parts of a dataset, cut at ``cut``, with names that sort in row order
    (a run-end part among them), written in reverse order."""
    out = tmp_path / name
    out.mkdir()
    pieces = [rows[:cut[0]], rows[cut[0]:cut[1]], rows[cut[1]:]]
    names = [rd.unit_part(0, 0), rd.run_end_part(0, 1, 0), rd.unit_part(0, 1)]
    for piece, part in reversed(list(zip(pieces, names, strict=True))):
        rd.write_part(out / part, piece)
    return out


def test_a_dataset_reads_as_the_file_in_part_name_order(tmp_path, capsys):
    evaluate_example(tmp_path / "r.jsonl")
    rows = list(read_rows(tmp_path / "r.jsonl"))
    ds = _dataset(tmp_path, rows)
    assert sorted(p.name for p in ds.iterdir()) == [p.name for p in rd.parts(ds)]
    assert list(read_rows(ds)) == rows
    assert [list(r) for r in read_rows(ds)] == [list(r) for r in rows]
    # load_results, report and compare: as from the JSONL file
    assert ctxeval.load_results(ds).equals(ctxeval.load_results(tmp_path / "r.jsonl"))
    assert ctxeval.load_results([ds, tmp_path / "r.jsonl"]).num_rows == 2 * len(rows)
    outs = []
    for path in (tmp_path / "r.jsonl", ds):
        assert main(["report", str(path), "--format", "json"]) == 0
        assert main(["compare", str(path), "--baseline", "agent-a", "--n", "200",
                     "--format", "json"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    # a directory named otherwise is a dataset by its parts
    other = tmp_path / "plain"
    ds.rename(other)
    assert list(read_rows(other)) == rows
    assert ctxeval.report(other).to_json() == ctxeval.report(tmp_path / "r.jsonl").to_json()


def test_a_directory_that_is_not_a_dataset_is_an_error(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="a directory, not a results file"):
        list(read_rows(tmp_path / "dir"))
    empty = tmp_path / "e.parquet"
    empty.mkdir()
    with pytest.raises(InputError, match="no result rows"):
        list(read_rows(empty))
    assert list(read_rows(empty, allow_empty=True)) == []
    bad = tmp_path / "b.parquet"
    bad.mkdir()
    pq.write_table(pa.table({"a": [1]}), bad / rd.unit_part(0, 0))
    with pytest.raises(InputError, match="not a results table"):
        list(read_rows(bad))


def test_a_directory_not_ours_is_refused_and_left_as_it_was(tmp_path):
    mine = tmp_path / "mine.parquet"
    mine.mkdir()
    (mine / "keep.txt").write_text("precious")
    with pytest.raises(InputError, match="not a results dataset ctxeval wrote"):
        rd.DatasetOutput.open(mine)
    assert (mine / "keep.txt").read_text() == "precious"
    # a part name over a table that is not results: refused too
    other = tmp_path / "other.parquet"
    other.mkdir()
    pq.write_table(pa.table({"instance_id": ["x"]}), other / rd.unit_part(0, 0))
    with pytest.raises(InputError, match="refusing to overwrite"):
        rd.DatasetOutput.open(other)
    # a file that is not results, where the dataset would go
    text = tmp_path / "t.parquet"
    text.write_text("hello\n")
    with pytest.raises(InputError, match="refusing to overwrite"):
        rd.DatasetOutput.open(text)
    assert text.read_text() == "hello\n"


def test_a_dataset_is_held_by_one_evaluation(tmp_path):
    ds = tmp_path / "d.parquet"
    ds.mkdir()
    held = rd.DatasetOutput.open(ds)
    try:
        with pytest.raises(OutputBusy, match="another evaluation"):
            rd.DatasetOutput.open(ds)
    finally:
        held.close()
    rd.DatasetOutput.open(ds).close()


def test_dropped_rows_leave_the_part_or_remove_it(tmp_path):
    evaluate_example(tmp_path / "r.jsonl")
    rows = list(read_rows(tmp_path / "r.jsonl"))
    src = tmp_path / "p"
    src.mkdir()
    rd.write_part(src / "a", rows)
    rd.keep_rows(src / "a", tmp_path / "a.parquet", [True, False, True, False])
    assert list(read_rows(tmp_path / "a.parquet")) == [rows[0], rows[2]]
    rd.write_part(src / "b", rows)
    rd.keep_rows(src / "b", tmp_path / "b.parquet", [False] * 4)
    assert not (tmp_path / "b.parquet").exists() and not list(src.iterdir())
