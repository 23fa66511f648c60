"""Installed versions read without importlib.metadata give importlib.metadata's answers."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from ctxeval.truth import installed
from ctxeval.truth.grammars import _GRAMMAR_PACKAGES


def _stdlib(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@pytest.mark.parametrize("dist", [*_GRAMMAR_PACKAGES, "orjson", "tree_sitter", "Tree-Sitter",
                                  "ctxeval", "no-such-distribution-here"])
def test_the_installed_distributions_as_importlib_metadata_reads_them(dist: str) -> None:
    assert installed.version(dist) == _stdlib(dist)


def _dist(where: Path, dirname: str, metadata: str | None) -> None:
    d = where / dirname
    d.mkdir(parents=True)
    if metadata is not None:
        (d / ("METADATA" if dirname.endswith(".dist-info") else "PKG-INFO")).write_text(
            metadata)


def test_first_on_the_path_wins_names_normalise_and_other_layouts_defer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Foo_Bar-2.0.dist-info", "Metadata-Version: 2.1\nName: foo-bar\n"
          "Version: 2.0\n\nVersion: not this (the body)\n")
    _dist(second, "foo.bar-1.0.dist-info", "Name: foo.bar\nVersion: 1.0\n")
    # an egg-info met first is importlib.metadata's to read
    _dist(first, "eggy-3.1.egg-info", "Name: eggy\nVersion: 3.1\n")
    _dist(second, "eggy-0.1.dist-info", "Name: eggy\nVersion: 0.1\n")
    # a dist-info without a Version field: importlib.metadata decides (it says None too)
    _dist(first, "bare-1.0.dist-info", "Name: bare\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    importlib.invalidate_caches()
    for dist, want in [("foo-bar", "2.0"), ("FOO.bar", "2.0"), ("eggy", "3.1"),
                       ("bare", None), ("nothing", None)]:
        assert installed.version(dist) == want, dist
        assert _stdlib(dist) == want, dist


def test_an_evaluation_does_not_import_importlib_metadata() -> None:
    """What an evaluation imports and records (the grammar versions) leaves the e-mail parser
    out: importlib.metadata is 30 ms of every start."""
    code = ("import sys\n"
            "from ctxeval import cli\n"
            "cli.build_parser('evaluate')\n"
            "import ctxeval.evaluation.pipeline\n"
            "from ctxeval.truth.grammars import grammar_versions\n"
            "assert grammar_versions()['tree-sitter-python']\n"
            "print(sorted(m for m in ('importlib.metadata', 'email') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
