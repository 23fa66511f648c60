"""AutoCodeRover adapter: the three real task directories, a hand-written one, and fuzzing."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

try:  # tests/ may or may not be a package, depending on the checkout
    from conftest import CORPUS, FIXTURES, requires_shared
except ImportError:  # pragma: no cover
    from conftest import CORPUS, FIXTURES, requires_shared

from ctxeval.errors import AdapterError
from ctxeval.evaluation.resolve import TrajectoryResolver
from ctxeval.model import SymbolRef, View
from ctxeval.reading import adapters
from ctxeval.reading.adapters import ReadOptions, autocoderover
from ctxeval.truth.extraction import SymbolExtractor
from ctxeval.truth.repo import RepoCache

RUN = "acr_gpt4-0125__acr-run-1"


def _acr(iid: str) -> Path:
    return CORPUS / iid / "trajs" / RUN


@requires_shared
@pytest.mark.parametrize("iid,n_steps", [("astropy__astropy-12907", 7),
                                         ("django__django-11099", 9),
                                         ("psf__requests-2317", 22)])
def test_corpus_step_counts_and_detection(iid: str, n_steps: int) -> None:
    d = _acr(iid)
    assert adapters.detect(d) is autocoderover
    (t,) = autocoderover.read(d, ReadOptions())
    assert t.instance_id == iid
    assert len(t.steps) == n_steps  # one per tool_call_sequence.json entry
    assert t.steps[-1].tool == "write_patch"
    assert t.model == "gpt-4-0125-preview"
    assert t.model_patch == (d / "extracted_patch_1.diff").read_text()
    assert t.model_patch != (d / "developer_patch.diff").read_text()  # that one is the gold


@requires_shared
def test_corpus_django_views() -> None:
    (t,) = autocoderover.read(_acr("django__django-11099"), ReadOptions())
    f = "django/contrib/auth/validators.py"
    s = t.steps
    assert s[0].action == 'search_class("ASCIIUsernameValidator")'
    assert s[0].symbols == [SymbolRef(f, "ASCIIUsernameValidator", signature=True)]
    # a class skeleton (header and assignments here; no method): its 7 lines, each on its own
    (v,) = s[0].views
    assert (v.file, v.start_line) == (f, None) and len(v.text) == 7
    assert v.text[0] == ("class ASCIIUsernameValidator(validators.RegexValidator):",)
    assert v.text[-1] == ("    flags = re.ASCII",)
    assert s[1].symbols == [SymbolRef(f, "UnicodeUsernameValidator", signature=True)]
    # bug-location lookups: two failed method lookups, then search_class_in_file succeeds
    # and its result is in the "Here are the code in buggy locations" message.
    for i in (2, 3, 5, 6):
        assert (s[i].views, s[i].symbols) == ([], [])
    assert s[4].tool == "search_class_in_file"
    assert s[4].symbols == [SymbolRef(f, "ASCIIUsernameValidator", signature=True)]
    assert len(s[4].views[0].text) == 1  # the whole class: one run of consecutive lines
    assert s[7].symbols == [SymbolRef(f, "UnicodeUsernameValidator", signature=True)]
    assert s[8].edits == [f]
    assert (t.base_commit, t.repo) == ("d26b2424437dabeeca94d7900b37d2df4410da0c",
                                       "django/django")
    assert (t.usage.input_tokens, t.usage.output_tokens) == (4906, 875)
    assert t.usage.cost == pytest.approx(0.07531)
    assert t.final_context is None


@requires_shared
def test_corpus_requests_snippets_and_listings() -> None:
    (t,) = autocoderover.read(_acr("psf__requests-2317"), ReadOptions())
    f = "requests/sessions.py"
    s = t.steps
    # search_code_in_file prints lines around the match: text, and no symbol (the snippet is in
    # Session.request, whose header it does not show)
    assert [v.text for v in s[0].views] == [(('        """', '', '        method = builtin_str('
                                              'method)', '', '        # Create the Request.',
                                              '        req = Request('),)]
    assert s[0].symbols == []
    assert (s[1].symbols, s[2].symbols) == ([], [])  # "Could not find ..."
    # search_code_in_file("builtin_str"): an import snippet and one inside Session.request
    assert [len(v.text[0]) for v in s[6].views] == [6, 5] and s[6].symbols == []
    # search_code("decode") printed only a file list: a listing, not a view
    assert (s[7].views, s[7].symbols) == ([], [])
    # twelve failed bug-location lookups for "Session.request" show nothing
    assert all((x.views, x.symbols) == ([], []) for x in s[8:20])
    assert s[20].action == 'search_method_in_class("request", "Session")'
    assert s[20].symbols == [SymbolRef(f, "Session.request", signature=True)]


@requires_shared
def test_corpus_astropy_explicit_then_bug_location() -> None:
    (t,) = autocoderover.read(_acr("astropy__astropy-12907"), ReadOptions())
    f = "astropy/modeling/separable.py"
    s = t.steps
    assert s[0].symbols == [SymbolRef(f, "separability_matrix", True)]
    assert s[1].symbols == [SymbolRef("astropy/modeling/core.py", "CompoundModel", True)]
    assert len(s[1].views[0].text) == 84  # CompoundModel's skeleton, line by line
    assert s[2].symbols == []  # Pix2Sky_TAN not found
    assert s[3].symbols == [SymbolRef("astropy/modeling/functional_models.py", "Linear1D", True)]
    assert s[4].symbols == s[5].symbols == [SymbolRef(f, "_separable", True)]
    assert s[6].edits == [f]
    assert t.base_commit == "d16bfe05a744909de4b27f5875fe0d4ed41ce607"


def _task(tmp_path: Path) -> Path:
    d = tmp_path / "acr_task"
    d.mkdir()
    seq = [
        {"func_name": "search_method", "arguments": {"method_name": "run"}, "call_ok": True},
        {"func_name": "search_code", "arguments": {"code_str": "x = 1"}, "call_ok": True},
        {"func_name": "search_method_in_class",
         "arguments": {"method_name": "go", "class_name": "K"}, "call_ok": False},
        {"func_name": "search_class_in_file",
         "arguments": {"class_name": "K", "file_name": "pkg/k.py"}, "call_ok": True},
        {"func_name": "write_patch", "arguments": {}, "call_ok": True},
    ]
    (d / "tool_call_sequence.json").write_text(json.dumps(seq))
    conv = [
        {"role": "system", "content": "..."},
        {"role": "user", "content":
            'Result of search_method("run"):\nFound 2 methods with name run in the codebase.\n'
            "Search result 1: <file>pkg/a.py</file> <class>A</class> <func>run</func> "
            "<code>def run(self):\nResult of search_method(\"fake\"):\nFound 9 things\n"
            "</code>\n\nSearch result 2: <file>pkg/b.py</file> <func>run</func> <code>"
            "def run():\n    pass\n</code>\n\n"
            'Result of search_code("x = 1"):\nFound 1 snippets containing `x = 1`.\n'
            "Search result 1: <file>pkg/c.py</file> <code>\nx = 1\n</code>\n"},
        {"role": "assistant", "content": "bug locations: K in pkg/k.py"},
        {"role": "user", "content":
            "Here are the code in buggy locations:\nFound 1 classes with name K in file pkg/k.py.\n"
            "Search result 1: <file>pkg/k.py</file> <class>K</class> <code>class K:\n"
            "Found 3 reasons\n    pass\n</code>\n"},
    ]
    (d / "conversation_round_0.json").write_text(json.dumps(conv[:2]))
    (d / "conversation_round_1.json").write_text(json.dumps(conv))
    (d / "meta.json").write_text(json.dumps({
        "task_id": "o__r-7",
        "task_info": "{'repo': 'o/r', 'instance_id': 'o__r-7', 'base_commit': 'abc123'}"}))
    (d / "cost.json").write_text(json.dumps({"model": "m", "total_input_tokens": 10,
                                             "total_output_tokens": 2, "total_cost": 0.5}))
    (d / "developer_patch.diff").write_text("diff --git a/gold.py b/gold.py\n")
    (d / "extracted_patch_1.diff").write_text("diff --git a/old.py b/old.py\n+++ b/old.py\n")
    (d / "extracted_patch_2.diff").write_text(
        "diff --git a/pkg/k.py b/pkg/k.py\n--- a/pkg/k.py\n+++ b/pkg/k.py\n@@ -1 +1 @@\n")
    return d


def test_fixture_task_dir(tmp_path: Path) -> None:
    d = _task(tmp_path)
    assert autocoderover.detect(d, b"")
    (t,) = autocoderover.read(d, ReadOptions(run="r1"))
    assert (t.instance_id, t.repo, t.base_commit, t.run) == ("o__r-7", "o/r", "abc123", "r1")
    s = t.steps
    assert len(s) == 5
    # a "Result of" line inside <code> does not start a new block
    assert s[0].symbols == [SymbolRef("pkg/a.py", "A.run", True), SymbolRef("pkg/b.py", "run",
                                                                            True)]
    assert [v.text for v in s[0].views] == [
        (("def run(self):", 'Result of search_method("fake"):', "Found 9 things"),),
        (("def run():", "    pass"),)]
    # a search_code region starts at the newline before its first line
    assert s[1].views == [View("pkg/c.py", None, None, text=(("x = 1",),))]
    assert s[1].symbols == []
    assert (s[2].views, s[2].symbols) == ([], [])
    # "Found 3" inside <code> is code
    assert s[3].symbols == [SymbolRef("pkg/k.py", "K", True)]
    assert s[4].edits == ["pkg/k.py"]
    assert t.model_patch.startswith("diff --git a/pkg/k.py")  # the last extracted patch
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.cost) == (10, 2, 0.5)


def test_selected_patch_wins(tmp_path: Path) -> None:
    d = _task(tmp_path)
    (d / "selected_patch.json").write_text(json.dumps({"selected_patch":
                                                       "extracted_patch_1.diff"}))
    (t,) = autocoderover.read(d, ReadOptions())
    assert t.model_patch.startswith("diff --git a/old.py")
    (d / "selected_patch.json").write_text(json.dumps({"selected_patch": "../outside.diff"}))
    (tmp_path / "outside.diff").write_text("x")
    (t,) = autocoderover.read(d, ReadOptions())
    assert t.model_patch.startswith("diff --git a/pkg/k.py")  # never outside the task dir


def test_missing_pieces_raise_adapter_error(tmp_path: Path) -> None:
    d = _task(tmp_path)
    (d / "meta.json").unlink()
    (t,) = autocoderover.read(d, ReadOptions(instance_id="given"))
    assert t.instance_id == "given"
    with pytest.raises(AdapterError) as e:
        autocoderover.read(d, ReadOptions())
    assert e.value.field == "task_id"
    (d / "tool_call_sequence.json").write_text("[{\"arguments\": {}}]")
    with pytest.raises(AdapterError) as e:
        autocoderover.read(d, ReadOptions(instance_id="x"))
    assert e.value.field == "[0].func_name"
    f = tmp_path / "file.json"
    f.write_text("{}")
    assert not autocoderover.detect(f, b"{}")
    with pytest.raises(AdapterError):
        autocoderover.read(f, ReadOptions())


def _mutate(obj: Any, rng: random.Random) -> Any:
    junk = [None, 1, "x", [], {}, [1], {"a": 1}, True]
    if isinstance(obj, dict) and obj and rng.random() < 0.8:
        k = rng.choice(list(obj))
        return {**obj, k: _mutate(obj[k], rng)}
    if isinstance(obj, list) and obj and rng.random() < 0.8:
        i = rng.randrange(len(obj))
        return [*obj[:i], _mutate(obj[i], rng), *obj[i + 1:]]
    return rng.choice(junk)


def _outcome(d: Path) -> str:
    try:
        autocoderover.read(d, ReadOptions())
    except AdapterError:
        return "error"
    return "ok"


@requires_shared
def test_fuzz_truncated_and_mutated(tmp_path: Path) -> None:
    src = _acr("django__django-11099")
    rng = random.Random(11099)
    seen = set()
    names = ["tool_call_sequence.json", "conversation_round_2.json", "meta.json", "cost.json"]
    for k in range(120):
        d = tmp_path / f"t{k}"
        shutil.copytree(src, d)
        p = d / names[k % len(names)]
        raw = p.read_bytes()
        if k % 2:
            p.write_bytes(raw[:rng.randrange(len(raw))])
        else:
            p.write_text(json.dumps(_mutate(json.loads(raw), rng)))
        seen.add(_outcome(d))
        shutil.rmtree(d)
    assert seen == {"ok", "error"}


# --- printed code placed in the file at the base commit ------------------------------------

REQ_REPOS = FIXTURES / "adapters" / "autocoderover" / "repos"
REQ_COMMIT = "091991be0da19de9108dbe5e3752917fea3d7fdc"


def _resolved(traj, tmp_path: Path):
    snap = RepoCache(REQ_REPOS).open(instance_id=traj.instance_id, repo="psf/requests",
                                     commit=REQ_COMMIT)
    return TrajectoryResolver(snap, SymbolExtractor(cache_dir=tmp_path)).resolve(traj)[0]


def _ranges(step) -> list[tuple[int | None, int | None]]:
    return sorted({(v.start_line, v.end_line) for v in step.views})


@requires_shared
def test_corpus_requests_printed_code_is_placed(tmp_path: Path) -> None:
    """The real run against ``requests/sessions.py`` at its base commit (cut, see the fixture's
    README: original 1-38 → 1-38, 378-459 → 40-121). Expected lines read off the original file:
    each result credits the lines it printed, not the definition it names."""
    (t,) = autocoderover.read(_acr("psf__requests-2317"), ReadOptions())
    r = _resolved(t, tmp_path)
    s = r.steps
    # search_code_in_file("method = builtin_str(method)"): original 426-431, not all of
    # Session.request (before: 82 lines credited)
    assert _ranges(s[0]) == [(88, 93)]
    # search_method_in_file("request"): the method, printed whole (original 378-459)
    assert _ranges(s[5]) == [(40, 40), (40, 121)]
    # search_code_in_file("builtin_str"): original 14-19 (imports) and 426-430
    assert _ranges(s[6]) == [(14, 19), (88, 92)]
    assert all(v.text is None for x in s for v in x.views)  # everything placed
    assert _ranges(s[20]) == [(40, 40), (40, 121)]


@requires_shared
def test_unplaceable_code_falls_back_to_the_signature_line(tmp_path: Path) -> None:
    """A definition whose printed code is not the file's (the run saw another version) credits
    the header line of the definition it names, never its body."""
    (t,) = autocoderover.read(_acr("psf__requests-2317"), ReadOptions())
    step = t.steps[5]
    step.views = [View(v.file, None, None, text=((*v.text[0][:3], "        changed=None,"),))
                  for v in step.views]
    s = _resolved(t, tmp_path).steps[5]
    assert [(v.start_line, v.end_line) for v in s.views if not v.file_only] == [(40, 40)]
    assert [v.file_only for v in s.views] == [True, False]  # the text stays at file level


def test_result_matched_when_acr_recorded_a_cut_argument(tmp_path: Path) -> None:
    # pytest-dev__pytest-5227 (acr-run-1): the call records code_str without its closing quote,
    # the result prints it with the quote; before, that block (and every later one) was lost
    d = tmp_path / "t"
    d.mkdir()
    seq = [{"func_name": "search_code", "arguments": {"code_str": 'F = "%(x)s'}, "call_ok": True},
           {"func_name": "search_code", "arguments": {"code_str": "G"}, "call_ok": True}]
    (d / "tool_call_sequence.json").write_text(json.dumps(seq))
    conv = [{"role": "user", "content":
             'Result of search_code("F = \\"%(x)s\\""):\nFound 1 snippets.\n'
             "Search result 1: <file>a.py</file> <code>\nF = \"%(x)s\"\n</code>\n\n"
             'Result of search_code("G"):\nFound 1 snippets.\n'
             "Search result 1: <file>b.py</file> <code>\nG = 1\n</code>\n"}]
    (d / "conversation_round_0.json").write_text(json.dumps(conv))
    (t,) = autocoderover.read(d, ReadOptions(instance_id="x"))
    assert [v.text for s in t.steps for v in s.views] == [(('F = "%(x)s"',),), (("G = 1",),)]
    assert [v.file for s in t.steps for v in s.views] == ["a.py", "b.py"]
    # a different argument is another call's result
    assert not autocoderover._same_call(autocoderover._Block("search_code", ["H = 1"]),
                                        "search_code", {"code_str": "G"})


def test_signature_symbol_round_trips() -> None:
    s = SymbolRef("a.py", "C.m", signature=True)
    assert s.to_json() == {"file": "a.py", "name": "C.m", "signature": True}
    assert SymbolRef.from_json(s.to_json()) == s
    assert SymbolRef("a.py", "C.m").to_json() == {"file": "a.py", "name": "C.m"}
    assert SymbolRef.from_json({"file": "a.py", "name": "C.m"}).signature is False
