"""Ranked metrics of real trajectories (``../shared/corpus``) against hand counts made from
their observations.

The repositories are not in the corpus: each test builds the snapshot the counts need. The
mini-swe-agent run on ``psf__requests-2317`` is checked at file level, its files stubbed with
enough lines; the OpenHands run on ``astropy__astropy-12907`` also at module level, with
``separable.py`` rebuilt from the ``cat -n`` listing the agent was shown (the file at the base
commit, before its edit), so its definitions are the real ones.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import CORPUS, requires_shared

from ctxeval.evaluation.pipeline import RunSpec, evaluate

pytestmark = requires_shared


def _rows(tmp: Path, instance: str, traj: Path) -> list[dict]:
    out = tmp / "rows.jsonl"
    evaluate(gold=[CORPUS / instance / "gold.json"], runs=[RunSpec("run", [str(traj)])],
             repos=tmp / "repos", out=out, progress=False, cache_dir=None)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_mini_swe_agent_requests_2317_by_hand(tmp_path: Path) -> None:
    """Hand count from the observations of ``mini-swe-agent_1.15.0_gemini3pro.traj.json``:

    step 1 ``ls -R`` (a listing: no file shown); step 2 ``grep -n "method = builtin_str(method)"
    requests/sessions.py`` prints ``428: ...``: the gold file (the gold patch edits
    requests/sessions.py) is shown first, at step 2; then requests/compat.py (step 5, ``cat``),
    requests/utils.py (step 10, ``grep "def "``) and requests/models.py (step 15, ``grep -n``);
    later steps show only these four (step 24's ``grep -r`` lists them again). So the file
    ranking is sessions, compat, utils, models: MRR 1, Acc@1 = Acc@3 = 1, Precision@3 1/3.
    Tokens before the gold file was shown: the calls of steps 1 and 2 (``extra.response.usage``
    of messages 2 and 4): 1525 + 3720 prompt, 163 + 70 completion tokens, $0.005006 + $0.00828.
    """
    snap = tmp_path / "repos" / "psf__requests-2317" / "requests"
    snap.mkdir(parents=True)
    for name in ("sessions.py", "compat.py", "utils.py", "models.py", "__init__.py"):
        (snap / name).write_text("#\n" * 800)
    traj = CORPUS / "psf__requests-2317" / "trajs" / "mini-swe-agent_1.15.0_gemini3pro.traj.json"
    [row] = _rows(tmp_path, "psf__requests-2317", traj)
    rk = row["ranking"]
    assert rk["source"] == "steps" and rk["gold"] == "patch"
    f = rk["file"]
    assert (f["gold_size"], f["pred_size"]) == (1, 4)
    assert f["mrr"] == 1.0
    assert f["acc@1"] == f["acc@3"] == f["acc@5"] == 1.0
    assert f["precision@3"] == pytest.approx(1 / 3)
    before = rk["before_first_gold"]["file"]
    assert (before["step"], before["steps_before"]) == (2, 1)
    assert (before["input_tokens"], before["output_tokens"]) == (1525 + 3720, 163 + 70)
    assert before["cost"] == pytest.approx(0.005006 + 0.00828, abs=1e-12)


def _listing(completions: Path, path: str) -> str:
    """The file as the ``cat -n`` view of ``path`` printed it (numbers and tabs taken off)."""
    last = sorted(completions.iterdir())[-1]
    for msg in json.loads(last.read_text())["messages"]:
        text = msg.get("content")
        if isinstance(text, list):
            text = "".join(part.get("text", "") for part in text if isinstance(part, dict))
        if msg.get("role") == "tool" and isinstance(text, str) \
                and text.startswith(f"Here's the result of running `cat -n` on {path}:"):
            body = text.split("\n", 1)[1]
            return "".join(re.sub(r"^\s*\d+\t", "", line) + "\n"
                           for line in body.splitlines())
    raise AssertionError(f"no cat -n listing of {path}")


def test_openhands_astropy_12907_by_hand(tmp_path: Path) -> None:
    """Hand count from the ten LLM calls of ``openhands_v0.15.0_claude35__llm_completions``:

    call 1 ``ls -R`` (no file shown), call 2 creates /workspace/reproduce_separability.py
    (outside the repository), call 3 runs it, call 4 views astropy/modeling/separable.py, the
    gold file, whole: it is shown first, at the fourth step. The listing's top-level definitions
    are, in order, is_separable, separability_matrix, _compute_n_outputs, _arith_oper,
    _coord_matrix, _cstack, _cdot, _separable; the gold patch edits ``_cstack``, the sixth: module
    MRR 1/6, Acc@5 0, Acc@10 1 (all eight are shown at once, in file order). Tokens before the
    gold file was shown: calls 1-4 (``response.usage``): 2154 + 13902 + 14300 + 14571 prompt,
    118 + 374 + 74 + 156 completion tokens, cost 0.008232 + 0.047316 + 0.04401 + 0.046053.
    """
    trajs = CORPUS / "astropy__astropy-12907" / "trajs"
    completions = trajs / "openhands_v0.15.0_claude35__llm_completions"
    path = "astropy/modeling/separable.py"
    target = tmp_path / "repos" / "astropy__astropy-12907" / path
    target.parent.mkdir(parents=True)
    target.write_text(_listing(completions, f"/workspace/astropy__astropy__4.3/{path}"))
    [row] = _rows(tmp_path, "astropy__astropy-12907", completions)
    rk = row["ranking"]
    f, m = rk["file"], rk["module"]
    assert (f["mrr"], f["acc@1"], f["pred_size"]) == (1.0, 1.0, 1)
    assert m["gold_size"] == 1 and m["pred_size"] == 8
    assert m["mrr"] == pytest.approx(1 / 6)
    assert (m["acc@1"], m["acc@5"], m["acc@10"]) == (0.0, 0.0, 1.0)
    assert m["ndcg@10"] == pytest.approx(1 / __import__("math").log2(7))
    before = rk["before_first_gold"]["file"]
    assert (before["step"], before["steps_before"]) == (4, 3)
    assert before["input_tokens"] == 2154 + 13902 + 14300 + 14571
    assert before["output_tokens"] == 118 + 374 + 74 + 156
    assert before["cost"] == pytest.approx(0.008232 + 0.047316 + 0.04401 + 0.046053, abs=1e-12)
    assert rk["before_first_gold"]["module"]["step"] == 4


@pytest.mark.parametrize("traj", [
    "psf__requests-2317/trajs/swe-agent_0.x_gpt4-0125__cost_2_1.traj",
    "astropy__astropy-12907/trajs/mini-swe-agent_2.2.7_deepseek-chat.traj.json",
])
def test_rankings_are_present_on_other_formats(traj: str, tmp_path: Path) -> None:
    """SWE-agent and mini-swe-agent v2 rows have the block too; SWE-agent 0.x records no
    per-call usage, so its tokens before the first gold file are null (its steps are not)."""
    instance = traj.split("/")[0]
    gold = json.loads((CORPUS / instance / "gold.json").read_text())
    from ctxeval.truth.patches import edit_locations

    root = tmp_path / "repos" / instance
    for p in edit_locations(gold["patch"]).files:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text("#\n" * 1200)
    [row] = _rows(tmp_path, instance, CORPUS / traj)
    f = row["ranking"]["file"]
    assert f["mrr"] is not None and f["acc@1"] is not None
    before = row["ranking"]["before_first_gold"]["file"]
    assert before is not None and before["steps_before"] >= 0
    if "swe-agent_0.x" in traj:
        assert before["input_tokens"] is None
    else:
        assert isinstance(before["input_tokens"], int)


def _django_fields_stub(root: Path) -> None:
    """``django/db/models/fields/__init__.py`` at the instance's base commit, reduced to what
    the hand count needs: ``Field`` (lines 100-320) with ``__init__`` at 158, ``check`` at 200
    and ``_check_choices`` at 244-300 (its nested ``is_value`` at 245, as the gold patch's hunk
    headers name it), then ``CharField`` with ``__init__``, ``check`` at 954 and
    ``_check_max_length_attribute`` at 960, at the lines Agentless names."""
    lines = ["#"] * 1000
    lines[99] = "class Field:"
    for i in range(100, 320):
        lines[i] = "    x = 1"
    for at, name in ((158, "__init__"), (200, "check")):
        lines[at - 1] = f"    def {name}(self):"
        lines[at] = "        return 1"
    lines[243] = "    def _check_choices(self):"
    lines[244] = "        def is_value(value, accept_promise=True):"
    lines[245] = "            return True"
    for i in range(246, 300):
        lines[i] = "        y = 1"
    lines[320] = "class CharField(Field):"
    for i in range(321, 1000):
        lines[i] = "    z = 1"
    for at, name in ((330, "__init__"), (954, "check"), (960, "_check_max_length_attribute")):
        lines[at - 1] = f"    def {name}(self):"
        lines[at] = "        return 1"
    f = root / "django" / "db" / "models" / "fields" / "__init__.py"
    f.parent.mkdir(parents=True)
    f.write_text("\n".join(lines) + "\n")


def test_agentless_django_11742_by_hand(tmp_path: Path) -> None:
    """Hand count from ``agentless_v1_gpt4o__loc_outputs.jsonl`` (Agentless's own ranked
    output, the ranking declared, not derived from steps): ``found_files`` ranks
    ``fields/__init__.py`` (the gold patch's one file) first of 4. Its functions, in the order
    of its four ``found_edit_locs`` samples and then ``found_related_locs``, each once:
    ``Field._check_choices``, ``Field.__init__``, ``CharField._check_max_length_attribute``,
    ``CharField.check``, ``Field.check``, ``CharField.__init__`` (6); its modules ``Field``,
    ``CharField``. The gold patch adds lines inside ``Field._check_choices`` only (around 260
    and 273-290; its nested ``is_value`` is not a function of its own): module gold
    ``Field``, function gold ``Field._check_choices``, both ranked first. So every level has
    MRR 1 and Acc@1 1; function Precision@3 1/3."""
    traj = CORPUS / "django__django-11742" / "trajs" / "agentless_v1_gpt4o__loc_outputs.jsonl"
    no_repo = tmp_path / "bare"
    (no_repo / "repos").mkdir(parents=True)
    [row] = _rows(no_repo, "django__django-11742", traj)
    assert row["status"] == "error" and row["error"]["kind"] == "missing_repo"
    rk = row["ranking"]  # a localiser's file ranking needs no repository
    assert rk["source"] == "declared" and rk["repository"] is False
    assert (rk["file"]["mrr"], rk["file"]["acc@1"], rk["file"]["pred_size"]) == (1.0, 1.0, 4)
    assert rk["module"] is None and rk["function"] is None

    _django_fields_stub(tmp_path / "repos" / "django__django-11742")
    [row] = _rows(tmp_path, "django__django-11742", traj)
    rk = row["ranking"]
    assert rk["source"] == "declared" and rk["gold"] == "patch"
    for level, pred in (("file", 4), ("module", 2), ("function", 6)):
        got = rk[level]
        assert (got["gold_size"], got["pred_size"]) == (1, pred), level
        assert got["mrr"] == got["acc@1"] == got["acc@5"] == got["ndcg@10"] == 1.0, level
    assert rk["function"]["precision@3"] == pytest.approx(1 / 3)
