"""ctxeval report --format html: one self-contained page, checked as written and as rendered by
headless Chromium (skipped when no chromium binary is on PATH)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import FIXTURES
from ctxeval.analysis.reports import load_rows, render_html
from ctxeval.analysis.reports import plots as plotting
from ctxeval.cli import main


class _Refs(HTMLParser):
    """Collects every attribute that could load something, and the tags seen."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "srcset", "data", "action") and value:
                self.refs.append(value)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "results.jsonl"
    ex = FIXTURES / "example"
    assert main(["evaluate", "--gold", str(ex / "gold.jsonl"),
                 "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}",
                 "--run", f"agent-b={ex / 'runs' / 'agent-b.jsonl'}",
                 "--repos", str(ex / "repos"), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def page(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("page") / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(out), "--ci"]) == 0
    return out


def test_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    parser = _Refs()
    parser.feed(text)
    # nothing is loaded from anywhere: only in-page anchors (#id) may be referenced
    assert all(ref.startswith("#") for ref in parser.refs), parser.refs
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I)
    assert "<link" not in text and "<script" not in text and "@import" not in text
    head = text.split("</head>", 1)[0]
    assert "<style>" in head and "table.ctxeval" in head  # the page's CSS is inline
    # leaderboard, per instance, distributions, the tool mix (rows record each step's tool),
    # the localization view's three tables (rows carry ranked metrics), and, as the example's
    # rows record resolution, the outcome view, its bins and the correlations
    assert parser.tags.count("table") == 10
    assert "Tool mix" in text and 'id="view-outcome"' in text
    assert 'id="table-localization"' in text and 'id="table-by_k"' in text
    assert parser.tags.count("svg") == 6
    assert 'data-plot="ranking_by_k"' in text


def test_plot_ids_do_not_collide(page: Path) -> None:
    ids = re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids))


def test_page_without_matplotlib_says_so(results: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    assert not plotting.have_matplotlib()
    text = render_html(load_rows([results]))
    assert "<svg" not in text
    assert "plots need matplotlib" in text
    assert 'id="table-leaderboard"' in text
    # said under the title, before the tables; no "Plots" section over nothing (it showed as
    # a large blank area at the end of the page, issue 23)
    assert text.index("plots need matplotlib") < text.index('id="table-leaderboard"')
    assert 'id="plots"' not in text and "<h2>Plots</h2>" not in text


def _chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                        "google-chrome")) if p), None)


def test_rendered_dom_has_tables_and_plots(page: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    lead = re.search(r'<table class="ctxeval" id="table-leaderboard">(.*?)</table>', dom, re.S)
    assert lead is not None
    body = lead.group(1)
    assert body.count("<tr>") == 3  # header and two runs
    assert "<td>agent-a</td>" in body and "<td>agent-b</td>" in body
    # agent-a line F1 0.592, the better of the two (0.500): marked best
    f1 = re.search(r'<td class="([^"]*)" data-key="line.f1"[^>]*>0\.592', body)
    assert f1 is not None and "best" in f1.group(1)
    assert 'id="table-instances"' in dom and 'id="table-distributions"' in dom
    plots = re.findall(r'<svg class="plot" data-plot="(\w+)"', dom)
    assert plots == ["coverage_by_step", "quality_vs_cost", "by_language", "ranking_by_k",
                     "outcome_by_bin", "auroc_by_metric"]
    # text kept as text in the SVG: axis labels are there to read
    assert "mean cumulative coverage" in dom and "Pareto" in dom
