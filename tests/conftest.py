"""Shared test helpers: where ``../shared`` is, and a marker that skips cleanly without it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
PARITY = SHARED / "parity"

requires_shared = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
requires_parity = pytest.mark.skipif(not PARITY.is_dir(), reason="../shared/parity is absent")


def evaluate_example(out: Path, *extra: str) -> None:
    """``ctxeval evaluate`` of the bundled example's two runs into ``out``."""
    from ctxeval.cli import main

    ex = FIXTURES / "example"
    assert main(["evaluate", "--gold", str(ex / "gold.jsonl"),
                 "--run", f"agent-a={ex / 'runs' / 'agent-a.jsonl'}",
                 "--run", f"agent-b={ex / 'runs' / 'agent-b.jsonl'}",
                 "--repos", str(ex / "repos"), "--out", str(out), "--quiet", *extra]) == 0


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Evaluations in tests use a cache directory of their own, never the user's."""
    import os

    old = os.environ.get("CTXEVAL_CACHE_DIR")
    os.environ["CTXEVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("ctxeval-cache"))
    yield
    if old is None:
        os.environ.pop("CTXEVAL_CACHE_DIR", None)
    else:
        os.environ["CTXEVAL_CACHE_DIR"] = old
