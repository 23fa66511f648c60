"""Hand-computed cases for every metric under both presets.

Each expected number below was worked out by hand from the file bytes written here; the
comments show the arithmetic.
"""

from __future__ import annotations

import pytest

from ctxeval import _core

CRLF = b"x = 1\r\ny = 2\r\nz\r\n"  # lines: [0,7) [7,14) [14,17)
NO_NL = "é\nab".encode()  # lines: [0,3) [3,5): 'é' is two bytes, no final newline
FIVE = b"1\n2\n3\n4\n5\n"  # lines: [0,2) [2,4) [4,6) [6,8) [8,10)


def run(files, gold, steps=(), final=None, preset="strict", **extra):
    inst = {"files": [{"index": _core.LineIndex(data), "symbols": syms}
                      for data, syms in files],
            "gold": {"lines": gold}, "steps": list(steps), "final": final, **extra}
    return _core.evaluate_instance(inst, preset)


def lines(*triples):
    return {"lines": list(triples)}


def test_crlf_bytes_include_carriage_return():
    r = run([(CRLF, [])], gold=[(0, 2, 3)], steps=[lines((0, 1, 2))])
    span, line = r["final"]["span"], r["final"]["line"]
    # gold bytes [7,17) = 10; view bytes [0,14) = 14; common [7,14) = 7
    assert (span["intersection"], span["gold_size"], span["pred_size"]) == (7, 10, 14)
    assert span["coverage"] == pytest.approx(0.7) and span["precision"] == pytest.approx(0.5)
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (1, 2, 2)


@pytest.mark.parametrize("preset", ["strict", "contextbench"])
def test_multibyte_without_final_newline(preset):
    r = run([(NO_NL, [])], gold=[(0, 2, 2)], steps=[lines((0, 1, 5))], preset=preset)
    span = r["final"]["span"]
    # gold line 2 = bytes [3,5); the view reaches past the end and is cut at byte 5
    assert (span["intersection"], span["gold_size"], span["pred_size"]) == (2, 2, 5)
    line = r["final"]["line"]
    if preset == "strict":
        assert line["pred_size"] == 2  # clipped to the file's two lines
        assert line["precision"] == pytest.approx(0.5)
    else:
        assert line["pred_size"] == 5  # the reference counts lines 1..5 as given
        assert line["precision"] == pytest.approx(0.2)
    assert line["coverage"] == 1.0


def test_reversed_range_strict_swaps():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], steps=[lines((0, 4, 2))])
    line, span = r["final"]["line"], r["final"]["span"]
    assert (line["intersection"], line["pred_size"]) == (2, 3)
    assert (span["intersection"], span["gold_size"], span["pred_size"]) == (4, 4, 6)


def test_reversed_range_contextbench_keeps_it_raw():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], steps=[lines((0, 4, 2))], preset="contextbench")
    line, span = r["final"]["line"], r["final"]["span"]
    # raw (4,2) has length 2-4+1 = -1 and meets (2,3) nowhere; precision 1.0 as size <= 0
    assert (line["intersection"], line["gold_size"], line["pred_size"]) == (0, 2, -1)
    assert (line["coverage"], line["precision"]) == (0.0, 1.0)
    # bytes: the reversed range collapses to line 4 = [6,8)
    assert (span["intersection"], span["gold_size"], span["pred_size"]) == (0, 4, 2)


@pytest.mark.parametrize(("preset", "gold_lines", "coverage"),
                         [("strict", 2, 1.0), ("contextbench", 6, 2 / 6)])
def test_gold_past_end_of_file(preset, gold_lines, coverage):
    # gold 4..9 on a five-line file: strict clips to 4..5, the reference keeps 6 lines
    r = run([(FIVE, [])], gold=[(0, 4, 9)], steps=[lines((0, 1, None))], preset=preset)
    line = r["final"]["line"]
    assert line["gold_size"] == gold_lines
    assert line["coverage"] == pytest.approx(coverage)


def test_step_that_views_nothing_counts_in_auc():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], steps=[lines(), lines((0, 2, 3))])
    t = r["trajectory"]
    assert r["num_steps"] == 2
    assert [s["coverage"]["line"] for s in t["steps"]] == [0.0, 1.0]
    assert t["auc_coverage"]["line"] == 0.5
    assert t["first_gold_step"]["line"] == 2


def test_empty_gold_strict_is_undefined():
    r = run([(FIVE, [])], gold=[], steps=[lines((0, 1, 1))])
    line = r["final"]["line"]
    assert (line["coverage"], line["precision"], line["f1"]) == (None, 0.0, None)
    assert r["trajectory"]["auc_coverage"]["line"] is None
    assert r["trajectory"]["steps"][0]["coverage"]["line"] is None


def test_empty_gold_contextbench_scores_one_but_line_auc_zero():
    r = run([(FIVE, [])], gold=[], steps=[lines((0, 1, 1))], preset="contextbench")
    line = r["final"]["line"]
    assert (line["coverage"], line["precision"]) == (1.0, 0.0)
    # the reference's per-step line coverage is 0.0 when gold has no line ranges at all,
    # while the file curve follows the 1.0 convention
    assert r["trajectory"]["auc_coverage"]["line"] == 0.0
    assert r["trajectory"]["auc_coverage"]["file"] == 1.0


def test_empty_prediction_strict():
    r = run([(FIVE, [])], gold=[(0, 2, 3)])
    assert r["num_steps"] == 0
    for g in ("file", "symbol", "span", "line"):
        f = r["final"][g]
        if f["gold_size"]:
            assert (f["coverage"], f["precision"], f["f1"]) == (0.0, 0.0, 0.0)
    assert r["trajectory"]["auc_coverage"]["line"] == 0.0
    assert r["trajectory"]["redundancy"]["line"] == 0.0


def test_empty_prediction_contextbench_is_one_step_of_the_final_context():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], preset="contextbench")
    assert r["num_steps"] == 1
    line = r["final"]["line"]
    assert (line["coverage"], line["precision"]) == (0.0, 1.0)


def test_symbols_enclosing_definition_counts():
    # a "class" spanning lines 1-5 and a "method" on lines 2-3 (byte ranges)
    syms = [(0, 10), (2, 6)]
    r = run([(FIVE, syms)], gold=[(0, 3, 3)], steps=[lines((0, 5, 5))])
    sym = r["final"]["symbol"]
    # gold line 3 = [4,6): both overlap; view line 5 = [8,10): only the class
    assert (sym["intersection"], sym["gold_size"], sym["pred_size"]) == (1, 2, 1)


def test_symbol_touch_rule_of_the_reference():
    # a definition ending exactly where the view starts: strict no, contextbench yes
    syms = [(0, 4)]  # lines 1-2
    strict = run([(FIVE, syms)], gold=[], steps=[lines((0, 3, 3))])
    cb = run([(FIVE, syms)], gold=[], steps=[lines((0, 3, 3))], preset="contextbench")
    assert strict["final"]["symbol"]["pred_size"] == 0
    assert cb["final"]["symbol"]["pred_size"] == 1


def test_redundancy_by_hand():
    # views 1-3, 2-4, 1-3: total 9 lines viewed, 4 distinct -> 1 - 4/9
    r = run([(FIVE, [])], gold=[(0, 1, 1)],
            steps=[lines((0, 1, 3)), lines((0, 2, 4)), lines((0, 1, 3))])
    assert r["trajectory"]["redundancy"]["line"] == pytest.approx(1 - 4 / 9)
    assert r["trajectory"]["redundancy"]["file"] == pytest.approx(1 - 1 / 3)


def test_declared_final_context_and_evidence_drop():
    r = run([(FIVE, [])], gold=[(0, 2, 4)], steps=[lines((0, 1, 5))],
            final=lines((0, 4, 4)))
    assert r["final"]["line"]["pred_size"] == 1
    assert r["trajectory"]["seen_gold"]["line"] == 3
    assert r["trajectory"]["evidence_drop"]["line"] == 2  # lines 2 and 3 were seen, then dropped


def test_file_only_view_credits_the_file_not_lines():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], steps=[{"files": [0]}])
    assert r["final"]["file"]["intersection"] == 1
    assert r["final"]["line"]["pred_size"] == 0


def test_editloc_strict_and_missing_model_patch():
    files = [(FIVE, [])]
    r = run(files, gold=[], gold_edits={"files": [0], "lines": [(0, 2, 2), (0, 3, 3)]},
            pred_edits={"files": [0], "lines": [(0, 3, 3)]})
    e = r["editloc"]
    assert (e["recall"], e["precision"]) == (0.5, 1.0)
    assert e["f1"] == pytest.approx(2 / 3)
    assert e["file"]["recall"] == 1.0
    r = run(files, gold=[], gold_edits={"files": [0], "lines": [(0, 2, 2)]})
    assert (r["editloc"]["recall"], r["editloc"]["precision"], r["editloc"]["pred_size"]) == \
        (0.0, 0.0, 0)
    assert run(files, gold=[])["editloc"] is None


def test_editloc_contextbench_counts_removed_lines_in_gold_context():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], preset="contextbench",
            pred_edits={"files": [0], "lines": [(0, 3, 3), (0, 5, 5)]})
    e = r["editloc"]
    assert (e["intersection"], e["gold_size"], e["pred_size"]) == (1, 2, 2)
    assert e["recall"] == e["precision"] == 0.5


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown preset"):
        _core.evaluate_instance({"files": []}, "lenient")


def test_bad_input_names_the_field():
    with pytest.raises(TypeError, match=r"steps\[0\].*lines"):
        _core.evaluate_instance({"files": [], "steps": [{"lines": "nope"}]}, "strict")


@pytest.mark.parametrize(("inter", "gold", "pred", "strict", "cb"), [
    (2, 4, 8, (0.5, 0.25), (0.5, 0.25)),
    (0, 0, 3, (None, 0.0), (1.0, 0.0)),
    (0, 0, 0, (None, None), (1.0, 1.0)),
    (0, 5, 0, (0.0, 0.0), (0.0, 1.0)),
])
def test_score_conventions(inter, gold, pred, strict, cb):
    s = _core.score(inter, gold, pred, "strict")
    c = _core.score(inter, gold, pred, "contextbench")
    assert (s["coverage"], s["precision"]) == strict
    assert (c["coverage"], c["precision"]) == cb


def test_contextbench_editloc_has_no_file_level():
    r = run([(FIVE, [])], gold=[(0, 2, 3)], preset="contextbench",
            pred_edits={"files": [0], "lines": [(0, 3, 3)]})
    assert r["editloc"]["file"] is None
