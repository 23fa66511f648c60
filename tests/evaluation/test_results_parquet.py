"""Parquet results: ``--out results.parquet`` holds the JSONL rows as typed columns, and every
reader (``read_rows``, ``report``, ``compare``, ``load_results``) gives back the same rows."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.conftest import FIXTURES, PARITY, evaluate_example, requires_parity

import ctxeval
from ctxeval.cli import main
from ctxeval.errors import InputError
from ctxeval.evaluation.output.results import read_rows
from ctxeval.evaluation.output.results_parquet import SCHEMA, flat_row, rows_to_table, table_to_rows

EX = FIXTURES / "example"


_evaluate = evaluate_example


def test_parquet_out_holds_the_jsonl_rows_key_for_key(tmp_path):
    _evaluate(tmp_path / "r.jsonl", "--text")
    _evaluate(tmp_path / "r.parquet", "--text")
    jsonl = list(read_rows(tmp_path / "r.jsonl"))
    parquet = list(read_rows(tmp_path / "r.parquet"))
    assert len(jsonl) == 4
    assert parquet == jsonl
    assert [list(r) for r in parquet] == [list(r) for r in jsonl]  # key order too
    assert (tmp_path / "r.parquet.meta.json").is_file()
    assert not (tmp_path / "r.parquet.partial").exists()


def test_columns_are_typed_and_flat_with_steps_as_a_list(tmp_path):
    _evaluate(tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.schema.equals(SCHEMA)
    assert table.schema.field("final.line.f1").type == pa.float64()
    assert table.schema.field("final.line.intersection").type == pa.int64()
    assert table.schema.field("usage.input_tokens").type == pa.int64()
    assert table.schema.field("resolved").type == pa.bool_()
    steps = table.schema.field("trajectory.steps").type
    assert pa.types.is_list(steps) and pa.types.is_struct(steps.value_type)
    assert not any(pa.types.is_struct(f.type) for f in table.schema)
    # The first row's numbers, from the JSONL row written by the same evaluation.
    first = json.loads((FIXTURES / "example" / "gold.jsonl").read_text().splitlines()[0])
    assert table.column("instance_id")[0].as_py() == first["instance_id"]
    assert table.column("trajectory.steps")[0].as_py()[1]["coverage"]["line"] == 0.2


def test_absent_null_and_foreign_values_survive_the_round_trip():
    rows = [
        {"instance_id": "a", "run": "r", "status": "error", "pred_file": None,
         "error": {"kind": "missing_repo", "message": "no clone"}},
        {"instance_id": "b", "run": "r", "status": "ok", "editloc": None,
         "usage": {"input_tokens": None, "output_tokens": None, "cost": None, "api_calls": None},
         "trajectory": {"steps": [{"step": 1, "coverage": {"file": 0.5}}]},
         "final": {"file": {"coverage": 1, "precision": None}},
         "num_steps": "seven", "new_field": [1, {"x": 2}], "resolved": True},
    ]
    table = rows_to_table(rows)
    assert table.schema.equals(SCHEMA)
    back = list(table_to_rows(table))
    assert back == rows
    assert "usage" in back[1] and back[1]["editloc"] is None and "editloc" not in back[0]
    # A step missing keys is kept whole, outside the typed column.
    assert table.column("trajectory.steps")[1].as_py() is None
    assert json.loads(table.column("_extra")[1].as_py())["new_field"] == [1, {"x": 2}]


def test_arrow_conversion_and_the_row_by_row_path_agree(tmp_path):
    """Usual rows are converted by Arrow in one call; the typed row-by-row path (taken when
    a row holds something foreign) gives the same table."""
    _evaluate(tmp_path / "r.jsonl", "--text")
    rows = list(read_rows(tmp_path / "r.jsonl"))
    rows.append({"instance_id": "x", "run": "r", "preset": "strict", "status": "error",
                 "error": {"kind": "missing_repo", "message": "m"}, "pred_file": None})
    fast = rows_to_table(rows)
    slow = pa.Table.from_pylist([flat_row(r) for r in rows], schema=SCHEMA)
    assert fast.equals(slow)
    assert fast.column("_absent")[4].as_py()[:3] == ["final_policy", "final_source",
                                                      "gold_kind"]


def test_report_and_compare_read_parquet_as_jsonl(tmp_path, capsys):
    _evaluate(tmp_path / "r.jsonl")
    _evaluate(tmp_path / "r.parquet")
    outs = []
    for name in ("r.jsonl", "r.parquet"):
        assert main(["report", str(tmp_path / name), "--format", "json"]) == 0
        assert main(["compare", str(tmp_path / name), "--baseline", "agent-a", "--n", "200",
                     "--format", "json"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert '"agent-b"' in outs[0]


def test_resume_keeps_the_parquet_rows(tmp_path):
    out = tmp_path / "r.parquet"
    _evaluate(out)
    before = list(read_rows(out))
    _evaluate(out, "--resume")
    assert list(read_rows(out)) == before


def test_load_results_gives_one_table_for_jsonl_and_parquet(tmp_path):
    _evaluate(tmp_path / "r.jsonl")
    _evaluate(tmp_path / "r.parquet")
    table = ctxeval.load_results([tmp_path / "r.jsonl", tmp_path / "r.parquet"])
    assert table.num_rows == 8
    assert "_absent" not in table.column_names
    f1 = table.column("final.line.f1").to_pylist()
    assert f1[:4] == f1[4:]
    assert f1[:4] == [r["final"]["line"]["f1"] for r in read_rows(tmp_path / "r.jsonl")]
    pd = pytest.importorskip("pandas")
    frame = ctxeval.load_results(tmp_path / "r.parquet", to="pandas")
    assert isinstance(frame, pd.DataFrame) and list(frame["run"]) == ["agent-a"] * 2 + [
        "agent-b"] * 2
    with pytest.raises(ValueError, match="unknown table kind"):
        ctxeval.load_results(tmp_path / "r.parquet", to="excel")


def test_a_parquet_file_that_is_not_results_is_an_error(tmp_path):
    bad = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [1]}), bad)
    with pytest.raises(InputError, match=r"not a results file .* it looks like a Parquet file"):
        list(read_rows(bad))
    broken = tmp_path / "y.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="cannot read"):
        list(read_rows(broken))


@requires_parity
def test_parity_rows_round_trip_through_parquet(tmp_path):
    """The contextbench preset's rows (error rows among them) on the parity suite."""
    index = json.loads((PARITY / "trajs_index.json").read_text())["trajectories"]
    runs = {"parity": [str(PARITY / t["pred_file"]) for t in index]}
    ev = ctxeval.evaluate(PARITY / "gold.jsonl", runs, repos=PARITY / "repos",
                          preset="contextbench", out=tmp_path / "p.jsonl")
    pq_ev = ctxeval.evaluate(PARITY / "gold.jsonl", runs, repos=PARITY / "repos",
                             preset="contextbench", out=tmp_path / "p.parquet")
    assert len(ev.rows) >= 40
    assert {r["status"] for r in ev.rows} >= {"ok", "error"}
    assert pq_ev.rows == ev.rows


def test_a_parquet_out_is_held_for_its_whole_run(tmp_path, capsys):
    """As a JSONL one: a second evaluation into the same Parquet output while the first holds
    it (through the partial file the rows are written to) exits 1 naming it."""
    from ctxeval.evaluation.output.destination import Destination
    from ctxeval.evaluation.output.outfile import lock_holder

    out = tmp_path / "results.parquet"
    with Destination.open(out) as held:
        assert held.file is not None
        assert held.file.path == tmp_path / "results.parquet.partial"
        assert lock_holder(held.file.path) is not None
        ex = FIXTURES / "example"
        code = main(["evaluate", "--gold", str(ex / "gold.jsonl"), "--repos", str(ex / "repos"),
                     "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}", "--out", str(out),
                     "-q"])
        assert code == 1
        assert "is being written by another evaluation" in capsys.readouterr().err
        assert not out.exists()
    evaluate_example(out)  # free again: the run completes and the partial file is gone
    assert read_rows(out) and not (tmp_path / "results.parquet.partial").exists()


def test_a_parquet_out_that_is_not_results_is_not_overwritten(tmp_path, capsys):
    gold = tmp_path / "gold.parquet"
    pq.write_table(pa.table({"original_inst_id": ["x"], "gold_ctx": ["[]"]}), gold)
    before = gold.read_bytes()
    ex = FIXTURES / "example"
    code = main(["evaluate", "--gold", str(ex / "gold.jsonl"), "--repos", str(ex / "repos"),
                 "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}", "--out", str(gold), "-q"])
    assert code == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert gold.read_bytes() == before
