"""``ctxeval evaluate --views`` and ``ctxeval view``: the sidecar against hand-computed ranges and
the engine's own counts, the pages' structure, the report's links, and the pages as rendered by
headless Chromium (skipped when no chromium binary is on PATH). The parity suite's runs are
drawn too (skipped without ``../shared``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, PARITY, evaluate_example, requires_parity
from ctxeval import _core
from ctxeval.analysis.reports.viewer_data import page_name, run_anchor, slug
from ctxeval.cli import main
from ctxeval.evaluation.output.views_sidecar import short_action, sidecar_path
from ctxeval.evaluation.pipeline import RunSpec, evaluate

EX = FIXTURES / "example"


_evaluate = evaluate_example


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "results.jsonl"
    _evaluate(out, "--views")
    return out


@pytest.fixture(scope="module")
def pages(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pages") / "view"
    assert main(["view", str(results), "--out", str(out)]) == 0
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _records(results: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["run"], r["instance_id"]): r for r in _jsonl(sidecar_path(results))}


# -- the sidecar ---------------------------------------------------------------------------


def test_sidecar_leaves_rows_unchanged(results: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    _evaluate(plain)
    assert not sidecar_path(plain).exists()  # off by default
    assert plain.read_bytes() == results.read_bytes()
    assert sidecar_path(results) == results.with_name("results.views.jsonl")
    assert len(_jsonl(sidecar_path(results))) == len(_jsonl(results)) == 4


def test_sidecar_ranges_by_hand(results: Path) -> None:
    recs = _records(results)
    a1 = recs[("agent-a", "example__calc-1")]
    assert a1["format"] == "ctxeval-views/1" and a1["status"] == "ok"
    assert a1["gold"] == {"calc/ops.py": [[16, 18], [31, 32]]}
    # ls; grep -n 'def div' (line 16); cat (the whole 35-line file); sed -n 28,35p; the edit
    assert [s["lines"] for s in a1["steps"]] == [
        {}, {"calc/ops.py": [[16, 16]]}, {"calc/ops.py": [[1, 35]]},
        {"calc/ops.py": [[28, 35]]}, {}]
    assert [s["tool"] for s in a1["steps"]] == ["bash"] * 4 + ["str_replace_editor"]
    assert a1["steps"][4]["edits"] == ["calc/ops.py"]  # /testbed/ prefix normalised away
    assert a1["steps"][1]["tokens"] == {"input": 1000, "output": 30}
    assert a1["final_source"] == "union" and a1["final"]["lines"] == {"calc/ops.py": [[1, 35]]}
    ops = a1["gold_files"]["calc/ops.py"]
    assert ops["line_count"] == 35
    assert ["div", "function_definition", 16, 18] in ops["definitions"]
    assert ["Calculator.divide", "function_definition", 31, 32] in ops["definitions"]
    # agent-b shows definitions by name: their lines are the definitions' lines
    b1 = recs[("agent-b", "example__calc-1")]
    assert [s["lines"] for s in b1["steps"]] == [{"calc/ops.py": [[16, 18]]},
                                                 {"calc/ops.py": [[31, 32]]}]
    # definitions are listed for gold files only: ops.py is not gold in calc-2
    b2 = recs[("agent-b", "example__calc-2")]
    assert list(b2["gold_files"]) == ["calc/parse.py"]
    assert b2["steps"][1]["lines"] == {"calc/ops.py": [[1, 35]]}
    a2 = recs[("agent-a", "example__calc-2")]
    assert a2["final_source"] == "declared"
    assert a2["final"]["lines"] == {"calc/parse.py": [[20, 26]]}


def test_sidecar_agrees_with_the_engine_counts(results: Path) -> None:
    """Each step's ranges measure what the engine counted as viewed; gold and final ranges
    measure the final line metric's gold and prediction sizes."""
    recs = _records(results)
    for row in _jsonl(results):
        rec = recs[(row["run"], row["instance_id"])]
        assert len(rec["steps"]) == row["num_steps"]
        for step, counted in zip(rec["steps"], row["trajectory"]["steps"], strict=True):
            shown = sum(_core.lines_measure([tuple(r) for r in rs])
                        for rs in step["lines"].values())
            assert shown == counted["viewed"]["line"], (row["run"], counted["step"])
        for key, size in (("gold", "gold_size"), ("final", "pred_size")):
            sets = rec[key] if key == "gold" else rec[key]["lines"]
            total = sum(_core.lines_measure([tuple(r) for r in rs]) for rs in sets.values())
            assert total == row["final"]["line"][size]


def test_sidecar_same_with_workers_and_resume(results: Path, tmp_path: Path) -> None:
    """Records made in worker processes, or over a resumed run, are the same records."""
    jobs = tmp_path / "jobs.jsonl"
    _evaluate(jobs, "--views", "-j", "2")
    assert sidecar_path(jobs).read_bytes() == sidecar_path(results).read_bytes()
    resumed = tmp_path / "resumed.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"),
                 "--run", f"agent-a={EX / 'runs' / 'agent-a.jsonl'}",
                 "--repos", str(EX / "repos"), "--out", str(resumed), "--quiet",
                 "--views"]) == 0
    _evaluate(resumed, "--views", "--resume")
    assert sorted(_jsonl(sidecar_path(resumed)), key=lambda r: (r["run"], r["instance_id"])) \
        == sorted(_jsonl(sidecar_path(results)), key=lambda r: (r["run"], r["instance_id"]))


def test_agent_failures_and_errors_drawn(tmp_path: Path) -> None:
    """An instance a run has no trajectory for (--all-gold) is recorded with no steps and
    drawn as never shown; error rows have no record and say why on the page."""
    one = tmp_path / "one.jsonl"
    one.write_text((EX / "runs" / "agent-b.jsonl").read_text().splitlines()[0] + "\n")
    out = tmp_path / "r.jsonl"
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"b={one}",
                 "--repos", str(EX / "repos"), "--out", str(out), "--quiet", "--views",
                 "--all-gold"]) == 0
    recs = {r["instance_id"]: r for r in _jsonl(sidecar_path(out))}
    failed = recs["example__calc-2"]
    assert failed["status"] == "agent_failure" and failed["steps"] == []
    assert failed["gold"] == {"calc/parse.py": [[5, 5], [20, 26]]}
    assert failed["final"] == {"lines": {}, "files": []}
    err = tmp_path / "err.jsonl"  # no repository: every row is an evaluator error
    (tmp_path / "no-repos").mkdir()
    assert main(["evaluate", "--gold", str(EX / "gold.jsonl"), "--run", f"b={one}",
                 "--repos", str(tmp_path / "no-repos"), "--out", str(err), "--quiet",
                 "--views"]) == 0
    assert _jsonl(sidecar_path(err)) == []
    view = tmp_path / "view"
    assert main(["view", str(out), str(err), "--out", str(view)]) == 0
    text = (view / "example__calc-2.html").read_text(encoding="utf-8")
    assert "never shown" in text and "no trajectory for this instance" in text
    text = (view / "example__calc-1.html").read_text(encoding="utf-8")
    assert "not scored: missing_repo" in text


def test_api_writes_the_sidecar(tmp_path: Path) -> None:
    import ctxeval

    out = tmp_path / "api.jsonl"
    ctxeval.evaluate(EX / "gold.jsonl", {"agent-b": EX / "runs" / "agent-b.jsonl"},
                     repos=EX / "repos", out=out, views=True)
    assert [r["run"] for r in _jsonl(sidecar_path(out))] == ["agent-b", "agent-b"]
    assert "_views_record" not in out.read_text()


def test_short_action() -> None:
    assert short_action("grep -n  'x'\n  file.py") == "grep -n 'x' file.py"
    cut = short_action("x" * 500)
    assert len(cut) == 160 and cut.endswith("…")


# -- the pages -----------------------------------------------------------------------------


class _Page(HTMLParser):
    """Tags, loadable references, and the elements the tests look for, with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts_with_src = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "srcset", "data", "action") and value:
                self.refs.append(value)
        if tag == "script" and a.get("src"):
            self.scripts_with_src += 1

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> list[dict[str, Any]]:
        return [a for t, a in self.tags if t == tag
                and (cls is None or cls in (a.get("class") or "").split())
                and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]


def _parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_pages_written(pages: Path) -> None:
    assert sorted(p.name for p in pages.iterdir()) == [
        "example__calc-1.html", "example__calc-2.html", "index.html"]
    for f in pages.iterdir():
        text = f.read_text(encoding="utf-8")
        page = _parse(f)
        local = {"index.html", "example__calc-1.html", "example__calc-2.html"}
        assert all(r.startswith("#") or r.split("#")[0] in local for r in page.refs), page.refs
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I)
        assert "<link" not in text and "@import" not in text and page.scripts_with_src == 0
        assert "/tmp/" not in text and str(FIXTURES) not in text  # no machine paths


def test_page_structure(pages: Path) -> None:
    page = _parse(pages / "example__calc-2.html")
    # curves: line and symbol granularity for each run
    curves = page.find("polyline", "curve")
    assert {(c["data-run"], c["data-gran"]) for c in curves} == {
        (r, g) for r in ("agent-a", "agent-b") for g in ("line", "symbol")}
    # one strip per gold file (parse.py only), with one group per run
    strips = page.find("svg", "file-strip")
    assert [s["data-file"] for s in strips] == ["calc/parse.py"]
    assert [g["data-run"] for g in page.find("g", "strip")] == ["agent-a", "agent-b"]
    # the gold band: line 5 and lines 20-26; definitions tokenize and parse labelled
    assert len(page.find("rect", "gold")) == 2
    text = (pages / "example__calc-2.html").read_text(encoding="utf-8")
    assert ">tokenize<" in text and ">parse<" in text
    # agent-a: 3 steps on parse.py (18-26, 1-10, 18-26), gold shown at steps 1, 2, 3;
    # gold line 5 seen at step 2 but not in the declared final (20-26): dropped
    assert len(page.find("rect", "view")) == 3 + 1  # agent-b's step 1 shows 8-17 (tokenize)
    gold_shown = page.find("rect", "view-gold")
    assert [g["data-goto"] for g in gold_shown] == [
        "run-agent-a-step-1", "run-agent-a-step-2", "run-agent-a-step-3"]
    assert "gold lines 5-5 seen, dropped from the final context" in text
    assert len(page.find("rect", "dropped")) == 1
    # timelines: one table row per step, ids the strips link to
    for run, n in (("agent-a", 3), ("agent-b", 2)):
        rows = [a for t, a in page.tags
                if t == "tr" and (a.get("id") or "").startswith(f"{run_anchor(run)}-step-")]
        assert len(rows) == n
    assert "calc/parse.py:5 (1)" in text  # dropped evidence listed under agent-a


def test_single_page_and_selection(results: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.html"
    assert main(["view", str(results), "--instance", "example__calc-1", "--run", "agent-b",
                 "--out", str(one)]) == 0
    page = _parse(one)
    assert [g["data-run"] for g in page.find("g", "strip")] == ["agent-b"]
    assert "index.html" not in page.refs
    # several instances cannot go to one page; nothing selected is a usage error too
    assert main(["view", str(results), "--out", str(tmp_path / "two.html")]) == 2
    assert main(["view", str(results), "--instance", "nope", "--out", str(tmp_path / "x")]) == 2


def test_missing_sidecar_says_how(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.jsonl"
    _evaluate(plain)
    assert main(["view", str(plain), "--out", str(tmp_path / "v")]) == 1
    err = capsys.readouterr().err
    assert "plain.views.jsonl" in err and "--views" in err


def test_bad_sidecar_line_is_named(results: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "r.jsonl"
    copy.write_bytes(results.read_bytes())
    lines = sidecar_path(results).read_text().splitlines()
    lines[1] = json.dumps({"format": "something-else", "instance_id": "x"})
    sidecar_path(copy).write_text("\n".join(lines) + "\n")
    assert main(["view", str(copy), "--out", str(tmp_path / "v")]) == 1
    assert "r.views.jsonl:2" in capsys.readouterr().err


def test_names_are_safe() -> None:
    assert page_name("django__django-11099") == "django__django-11099.html"
    odd = page_name("a/b c")
    assert re.fullmatch(r"a_b_c-[0-9a-f]{8}\.html", odd)
    assert slug("a/b") != slug("a_b")


def test_report_links_to_pages(results: Path, pages: Path) -> None:
    pytest.importorskip("matplotlib")
    report = pages.parent / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(report),
                 "--link-views", "view"]) == 0
    text = report.read_text(encoding="utf-8")
    assert '<a href="view/index.html#run-agent-a">agent-a</a>' in text
    assert '<a href="view/example__calc-2.html#run-agent-b">example__calc-2</a>' in text
    for href in re.findall(r'href="(view/[^"#]+)#([^"]+)"', text):
        target = pages.parent / href[0]
        assert target.is_file()
        assert f'id="{href[1]}"' in target.read_text(encoding="utf-8")


# -- headless Chromium ---------------------------------------------------------------------


def _chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                        "google-chrome")) if p), None)


def _render(page: Path) -> tuple[str, list[str]]:
    """The DOM after load, and the console messages the page logged."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if ":CONSOLE" in ln]
    return proc.stdout, console


def test_rendered_pages(pages: Path) -> None:
    for name in ("example__calc-1.html", "example__calc-2.html", "index.html"):
        dom, console = _render(pages / name)
        assert console == [], console
        if name == "index.html":
            assert dom.count('<a href="example__calc-1.html#run-agent-') == 2
            continue
        assert len(re.findall(r'<polyline class="curve" data-run="agent-[ab]"', dom)) == 4
        assert len(re.findall(r'<g class="strip" data-run="agent-[ab]"', dom)) == 2
        assert 'class="v timeline"' in dom


def test_clicking_a_strip_finds_the_step(pages: Path, tmp_path: Path) -> None:
    """The page's script: a click on a range of a strip opens and marks its timeline row."""
    probe = tmp_path / "probe.html"
    text = (pages / "example__calc-2.html").read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", (
        "<script>var t=document.querySelector('rect.view-gold[data-goto$=\"-step-2\"]');"
        "t.dispatchEvent(new MouseEvent('click',{bubbles:true}));"
        "document.body.setAttribute('data-hit',Array.from(document.querySelectorAll('tr.hit'))"
        ".map(function(r){return r.id}).join(','));</script></body>")), encoding="utf-8")
    dom, console = _render(probe)
    assert console == [], console
    assert 'data-hit="run-agent-a-step-2"' in dom


# -- the parity suite ----------------------------------------------------------------------


@requires_parity
def test_parity_runs_drawn(tmp_path: Path) -> None:
    """Every trajectory of the parity suite, one run per input format, under both presets:
    rows are the same with and without the sidecar, every scored row has its record, and every
    page has a curve per run and a strip per (gold file, run)."""
    index = json.loads((PARITY / "trajs_index.json").read_text())["trajectories"]
    by_format: dict[str, list[str]] = {}
    for t in index:
        by_format.setdefault(t["format"], []).append(str(PARITY / t["pred_file"]))
    runs = [RunSpec(name, files) for name, files in by_format.items()]
    outs = []
    for preset in ("contextbench", "strict"):
        out = tmp_path / f"{preset}.jsonl"
        plain = tmp_path / f"{preset}-plain.jsonl"
        for target, views in ((out, True), (plain, False)):
            evaluate(gold=[PARITY / "gold.jsonl"], runs=runs, repos=PARITY / "repos",
                     out=target, preset=preset, progress=False, views=views, cache_dir=None)
        assert out.read_bytes() == plain.read_bytes()
        rows = _jsonl(out)
        recs = _jsonl(sidecar_path(out))
        assert len(recs) == sum(1 for r in rows if r.get("status") != "error")
        assert len(recs) >= 42
        outs.append(out)
    view = tmp_path / "view"
    assert main(["view", *map(str, outs), "--out", str(view)]) == 0
    gold_ids = [json.loads(x)["instance_id"]
                for x in (PARITY / "gold.jsonl").read_text().splitlines() if x.strip()]
    written = {p.name for p in view.iterdir()}
    assert "index.html" in written
    covered = {r["instance_id"] for o in outs for r in _jsonl(o)}
    assert written - {"index.html"} == {page_name(i) for i in covered}
    assert covered <= set(gold_ids)
    for name in sorted(written - {"index.html"}):
        page = _parse(view / name)
        strip_runs = [g["data-run"] for g in page.find("g", "strip")]
        files = page.find("svg", "file-strip")
        runs_here = {a["data-run"] for a in page.find("section", "run")}
        assert runs_here and all("[" in r for r in runs_here)  # two presets: labelled
        assert len(strip_runs) == len(files) * len(runs_here)
        curve_runs = {c["data-run"] for c in page.find("polyline", "curve")}
        assert curve_runs <= runs_here
    dom, console = _render(view / page_name("toy__js_queue-5"))
    assert console == [], console
    # the batch file holds this instance twice: the contextbench preset scores both records,
    # as its evaluator does (drawn side by side); strict keeps the first (one row per run and
    # instance)
    assert "unified [contextbench] #2" in dom and "unified [strict] #2" not in dom
