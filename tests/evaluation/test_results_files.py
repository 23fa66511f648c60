"""Reading results files: every row checked against the results format, in the one reader that
report, compare, view and ``--resume`` share; a file that holds no result row is named for what
it looks like instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, PARITY, requires_parity
from ctxeval.cli import main
from ctxeval.errors import InputError
from ctxeval.evaluation.output.results import read_rows, row_problem

EX = FIXTURES / "example"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("results") / "results.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--run", f"agent-a={EX / 'runs/agent-a.jsonl'}",
                 "--run", f"agent-b={EX / 'runs/agent-b.jsonl'}",
                 "--out", str(out), "-q", "--views", "--no-cache"]) == 0
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("command", ["report", "compare"])
def test_gold_given_as_results_is_an_error_saying_it_is_gold(command: str, capsys) -> None:
    """On main this printed a table of nulls and exited 0."""
    assert main([command, str(EX / "gold.jsonl")]) == 1
    err = capsys.readouterr().err
    assert str(EX / "gold.jsonl") in err and "looks like gold annotations" in err


def test_a_metric_that_is_not_a_number_names_file_line_and_field(results: Path, tmp_path: Path,
                                                                capsys) -> None:
    """On main ``"f1": "abc"`` was read as a null."""
    rows = _rows(results)
    rows[2]["final"]["line"]["f1"] = "abc"
    bad = _write(tmp_path / "bad.jsonl", rows)
    for argv in (["report", str(bad)], ["compare", str(bad)],
                 ["view", str(bad), "--out", str(tmp_path / "pages")]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{bad}:3, field 'final.line.f1'" in err and '"abc"' in err, err
    with pytest.raises(InputError) as exc:
        list(read_rows(bad))
    assert (exc.value.line, exc.value.field) == (3, "final.line.f1")


@pytest.mark.parametrize(("change", "field"), [
    (lambda r: r.update(instance_id=7), "instance_id"),
    (lambda r: r.update(status="fine"), "status"),
    (lambda r: r.pop("final"), "final"),
    (lambda r: r["final"].update(lines={"a.py": 1}), "final.lines"),
    (lambda r: r["trajectory"]["auc_coverage"].update(line=[0.5]),
     "trajectory.auc_coverage.line"),
    (lambda r: r["trajectory"]["steps"][0]["coverage"].update(file=True),
     "trajectory.steps[0].coverage.file"),
    (lambda r: r["editloc"].update(f1={"x": "y"}), "editloc.f1.x"),
    (lambda r: r.update(resolved="yes"), "resolved"),
    (lambda r: r.update(num_steps=2.5), "num_steps"),
    (lambda r: r.update(usage=[1]), "usage"),
    (lambda r: r["final"]["line"].update(steps=[1]), "final.line.steps"),
    (lambda r: r["trajectory"]["steps"].append(0.5), "trajectory.steps[5]"),
    (lambda r: r["trajectory"]["steps"][1].update(tool=["bash"]), "trajectory.steps[1].tool"),
    (lambda r: r["text"].update(patch_exact_match="no") if r.get("text") else
     r.update(text={"patch_exact_match": "no"}), "text.patch_exact_match"),
])
def test_each_malformed_field_is_named(results: Path, change, field: str) -> None:
    row = _rows(results)[0]
    assert row_problem(row) is None
    change(row)
    problem = row_problem(row)
    assert problem is not None and problem[0] == field, problem


def test_rows_that_are_results_pass(results: Path) -> None:
    rows = _rows(results)
    assert [row_problem(r) for r in rows] == [None] * 4
    error = {"instance_id": "x", "run": "a", "status": "error",
             "error": {"kind": "missing_repo", "message": "no clone"}}
    assert row_problem(error) is None
    assert row_problem({**error, "error": "no clone"}) == (
        "error", "an error row needs an error object with a message")


@requires_parity
def test_the_contextbench_evaluators_rows_are_result_rows() -> None:
    """Our rows keep the reference evaluator's shape: its rows (scored and error rows) read."""
    refs = [json.loads(x) for x in (PARITY / "expected" / "results.jsonl").read_text()
            .splitlines()]
    rows = [r for r in refs if "reference_crash" not in r]
    assert len(rows) == 44 and all(row_problem(r) is None for r in rows)
    assert row_problem(next(r for r in refs if "reference_crash" in r))[0] == "instance_id"


@requires_parity
def test_the_contextbench_aggregate_is_named_as_such(capsys) -> None:
    assert main(["report", str(PARITY / "expected" / "aggregate.json")]) == 1
    assert "ContextBench evaluator's aggregate" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "looks"), [
    ("runs/agent-a.jsonl", "trajectories in ctxeval's neutral format"),
    ("views", "a views sidecar"),
    ("meta", "the metadata beside a results file"),
    ("source", "a source file"),
    ("empty", "the file is empty"),
])
def test_a_file_without_result_rows_says_what_it_looks_like(results: Path, tmp_path: Path,
                                                            name: str, looks: str) -> None:
    path = {"views": results.with_name("results.views.jsonl"),
            "meta": results.with_name("results.jsonl.meta.json"),
            "source": EX / "repos" / next((EX / "repos").iterdir()).name / "calc" / "ops.py",
            "empty": tmp_path / "empty.jsonl"}.get(name, EX / name)
    if name == "empty":
        path.write_text("\n")
    with pytest.raises(InputError) as exc:
        list(read_rows(path))
    assert looks in exc.value.message and exc.value.path == str(path)


def test_a_bad_row_after_good_ones_is_named_not_the_file(results: Path, tmp_path: Path) -> None:
    rows = _rows(results)
    gold = json.loads((EX / "gold.jsonl").read_text().splitlines()[0])
    mixed = _write(tmp_path / "mixed.jsonl", [*rows[:2], gold])
    with pytest.raises(InputError) as exc:
        list(read_rows(mixed))
    assert (exc.value.line, exc.value.field) == (3, "final")


def test_resume_into_a_file_that_is_not_results_stops(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gold-copy.jsonl"
    out.write_bytes((EX / "gold.jsonl").read_bytes())
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--repos", str(EX / "repos"),
                 "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "--resume",
                 "-q"]) == 1
    assert "looks like gold annotations" in capsys.readouterr().err
    assert out.read_bytes() == (EX / "gold.jsonl").read_bytes()  # untouched


def test_out_that_is_gold_is_not_overwritten(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gold.jsonl"
    out.write_bytes((EX / "gold.jsonl").read_bytes())
    argv = ["evaluate", "--gold", str(out), "--repos", str(EX / "repos"),
            "--run", f"a={EX / 'runs/agent-a.jsonl'}", "--out", str(out), "-q"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"{out}: refusing to overwrite" in err and "looks like gold annotations" in err
    assert out.read_bytes() == (EX / "gold.jsonl").read_bytes()
    results = tmp_path / "results.jsonl"  # results are overwritten, as before
    results.write_text('{"instance_id": "x", "status": "error", "error": {"message": "m"}}\n')
    argv[argv.index("--out") + 1] = str(results)
    argv[2] = str(EX / "gold.jsonl")
    assert main(argv) == 0 and len(_rows(results)) == 2


def test_the_fast_check_and_the_walk_agree(results: Path) -> None:
    """The fast pass decides, the walk explains: on seeded random damage to every kind of
    value in every metric section, each finds a problem exactly when the other does."""
    import random

    from ctxeval.evaluation.output.results import METRIC_SECTIONS, _metric_problem, _metrics_ok

    rng = random.Random(15)
    values = [None, 1, 0.5, -3, True, "x", [], [1], {}, {"a": 1}, {"a": "b"}, [{"a": 1}],
              1.5, -0.3, 1e308, 2, -1, 0, 3.0]

    def leaves(obj, path=()):
        if isinstance(obj, dict):
            for k, v in obj.items():
                yield from leaves(v, (*path, k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                yield from leaves(v, (*path, i))
        yield path

    base = _rows(results)
    checked = 0
    for _ in range(400):
        row = json.loads(json.dumps(rng.choice(base)))
        key = rng.choice([k for k in METRIC_SECTIONS if isinstance(row.get(k), dict)])
        path = rng.choice([p for p in leaves(row[key]) if p])
        target = row[key]
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = rng.choice(values)
        fast = _metrics_ok(row[key], key, key == "trajectory")
        assert fast == (_metric_problem(row[key], key, key) is None), (key, path, row[key])
        loose = _metrics_ok(row[key], key, key == "trajectory", "", True)
        assert loose == (_metric_problem(row[key], key, key, "", True) is None)
        checked += not fast
    assert checked > 100  # most damage is caught


def test_a_row_writes_non_finite_floats_as_null_as_finite_would() -> None:
    """JSON has no NaN: rows are written by orjson directly (no copy through ``finite``), which
    must give the bytes the copy gave: NaN and the infinities as null, tuples as arrays."""
    from ctxeval.evaluation.output.results import dumps_row, finite

    nan, inf = float("nan"), float("inf")
    row = {"a": nan, "b": (1.5, inf, -inf), "c": [{"d": nan, "e": 0.1}], "f": "x", "g": None,
           "h": True, "i": 3}
    assert dumps_row(row) == b'{"a":null,"b":[1.5,null,null],"c":[{"d":null,"e":0.1}],' \
                             b'"f":"x","g":null,"h":true,"i":3}\n'
    assert dumps_row(row) == dumps_row(finite(row))
