"""Property tests: the Rust core against the set-based oracle in ``tests/oracle.py``."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle
from ctxeval import _core

LAWS = settings(max_examples=500, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- interval laws

line_pairs = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8)
byte_pairs = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=8)


def line_atoms(pairs) -> set[int]:
    out: set[int] = set()
    for a, b in pairs:
        lo, hi = min(a, b), max(a, b)
        out.update(range(max(lo, 1), hi + 1))
    return out


def byte_atoms(pairs) -> set[int]:
    out: set[int] = set()
    for a, b in pairs:
        out.update(range(min(a, b), max(a, b)))
    return out


def is_normal(pairs, inclusive: bool) -> bool:
    gap = 1 if inclusive else 0
    ok = all((a <= b) if inclusive else (a < b) for a, b in pairs)
    return ok and all(p[1] + gap < q[0] for p, q in itertools.pairwise(pairs))


@LAWS
@given(line_pairs)
def test_lines_normalize_keeps_atoms_and_is_canonical(a):
    n = _core.lines_normalize(a)
    assert line_atoms(n) == line_atoms(a)
    assert is_normal(n, inclusive=True)
    assert _core.lines_measure(a) == len(line_atoms(a))


@LAWS
@given(line_pairs, line_pairs)
def test_line_set_operations(a, b):
    A, B = line_atoms(a), line_atoms(b)
    assert line_atoms(_core.lines_union(a, b)) == A | B
    assert line_atoms(_core.lines_intersection(a, b)) == A & B
    assert line_atoms(_core.lines_difference(a, b)) == A - B
    assert is_normal(_core.lines_union(a, b), inclusive=True)
    assert is_normal(_core.lines_difference(a, b), inclusive=True)


@LAWS
@given(byte_pairs, byte_pairs)
def test_byte_set_operations(a, b):
    A, B = byte_atoms(a), byte_atoms(b)
    assert byte_atoms(_core.bytes_normalize(a)) == A
    assert is_normal(_core.bytes_normalize(a), inclusive=False)
    assert byte_atoms(_core.bytes_union(a, b)) == A | B
    assert byte_atoms(_core.bytes_intersection(a, b)) == A & B
    assert byte_atoms(_core.bytes_difference(a, b)) == A - B
    assert _core.bytes_measure(a) == len(A)


@LAWS
@given(st.lists(st.integers(1, 80), max_size=30))
def test_lines_from_numbers(nums):
    r = _core.lines_from_numbers(nums)
    assert line_atoms(r) == set(nums)
    assert is_normal(r, inclusive=True)


# ---------------------------------------------------------------- line index

file_bytes = st.lists(
    st.tuples(st.text(alphabet="ab é\t", max_size=6), st.sampled_from(["\n", "\r\n"])),
    max_size=8,
).flatmap(lambda lines: st.booleans().map(
    lambda drop_last_nl: _join(lines, drop_last_nl)))


def _join(lines, drop_last_nl: bool) -> bytes:
    text = "".join(t + nl for t, nl in lines)
    if drop_last_nl and lines:
        text = text[: -len(lines[-1][1])]
    return text.encode()


@LAWS
@given(file_bytes)
def test_line_index_matches_split(data):
    ix = _core.LineIndex(data)
    expected = oracle.split_lines(data)
    assert ix.line_count == len(expected)
    assert ix.byte_len == len(data)
    for k, rng in enumerate(expected, start=1):
        assert ix.line_bytes(k) == rng
        for b in range(*rng):
            assert ix.line_of(b) == k
    assert ix.line_bytes(len(expected) + 1) is None
    assert ix.line_of(len(data)) is None


# ---------------------------------------------------------------- the engine


@st.composite
def instances(draw):
    n_files = draw(st.integers(1, 3))
    files = []
    for _ in range(n_files):
        absent = draw(st.booleans().filter(lambda _: True)) and draw(st.integers(0, 5)) == 0
        data = None if absent else draw(file_bytes)
        syms = []
        if data:
            for _ in range(draw(st.integers(0, 4))):
                s = draw(st.integers(0, len(data) - 1))
                e = draw(st.integers(s + 1, len(data)))
                syms.append((s, e))
        files.append(oracle.OracleFile(data, syms))

    def line_count(f):
        return len(oracle.split_lines(files[f].data or b""))

    @st.composite
    def view_sets(d):
        lines = []
        for _ in range(d(st.integers(0, 3))):
            f = d(st.integers(0, n_files - 1))
            n = line_count(f)
            start = d(st.integers(-2, n + 3))
            end = d(st.one_of(st.none(), st.integers(-2, n + 3)))
            lines.append((f, start, end))
        file_only = d(st.lists(st.integers(0, n_files - 1), max_size=2))
        syms = []
        for f in range(n_files):
            for k in range(len(files[f].symbols)):
                if d(st.integers(0, 6)) == 0:
                    syms.append((f, k))
        return {"lines": lines, "files": file_only, "symbols": syms,
                "symbols_only": d(st.integers(0, 5)) == 0}

    gold = draw(view_sets())
    gold["files"] = []
    gold["symbols"] = []
    gold["symbols_only"] = False
    steps = draw(st.lists(view_sets(), max_size=6))
    final = draw(st.one_of(st.none(), view_sets()))
    return files, {"gold": gold, "steps": steps, "final": final}


def core_input(files, inst):
    return {
        "files": [
            {"index": None if f.data is None else _core.LineIndex(f.data), "symbols": f.symbols}
            for f in files
        ],
        **inst,
    }


def approx(x):
    return None if x is None else pytest.approx(x, rel=1e-12, abs=1e-15)


@LAWS
@given(instances())
def test_engine_matches_oracle(case):
    files, inst = case
    got = _core.evaluate_instance(core_input(files, inst), "strict")
    want = oracle.evaluate(files, inst)
    assert got["num_steps"] == want["num_steps"]
    for g in oracle.GRANS:
        gs, ws = got["final"][g], want["final"][g]
        for key in ("intersection", "gold_size", "pred_size"):
            assert gs[key] == ws[key], (g, key)
        for key in ("coverage", "precision", "f1"):
            assert gs[key] == approx(ws[key]), (g, key)
        traj = got["trajectory"]
        assert [s["coverage"][g] for s in traj["steps"]] == [approx(s[g]) for s in want["steps"]]
        assert traj["auc_coverage"][g] == approx(want["auc_coverage"][g]), g
        assert traj["redundancy"][g] == approx(want["redundancy"][g]), g
        assert traj["first_gold_step"][g] == want["first_gold_step"][g], g
        assert traj["seen_gold"][g] == want["seen_gold"][g], g
        assert traj["evidence_drop"][g] == want["evidence_drop"][g], g


@LAWS
@given(st.lists(instances(), min_size=1, max_size=6), st.integers(1, 3))
def test_batch_equals_single_and_keeps_order(cases, threads):
    inputs = [core_input(f, i) for f, i in cases]
    batch = _core.evaluate_batch(inputs, "strict", threads)
    assert batch == [_core.evaluate_instance(i, "strict") for i in inputs]


@LAWS
@given(st.lists(st.integers(1, 40), max_size=10), st.lists(st.integers(1, 40), max_size=10))
def test_editloc_strict_matches_sets(gold_lines, pred_lines):
    data = b"".join(b"x\n" for _ in range(40))
    inst = {
        "files": [{"index": _core.LineIndex(data)}],
        "gold_edits": {"files": [0] if gold_lines else [],
                       "lines": [(0, ln, ln) for ln in gold_lines]},
        "pred_edits": {"files": [0] if pred_lines else [],
                       "lines": [(0, ln, None) for ln in pred_lines]},
    }
    e = _core.evaluate_instance(inst, "strict")["editloc"]
    want = oracle.strict_score(len(set(gold_lines) & set(pred_lines)), len(set(gold_lines)),
                               len(set(pred_lines)))
    assert (e["intersection"], e["gold_size"], e["pred_size"]) == (
        want["intersection"], want["gold_size"], want["pred_size"])
    assert e["recall"] == approx(want["coverage"])
    assert e["precision"] == approx(want["precision"])
