"""Shared test helpers: where ``../shared`` is, and a marker that skips cleanly without it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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


def workload_module() -> ModuleType:
    """``benchmarks/workload.py`` (the synthetic workload generator), imported once."""
    name = "ctxeval_bench_workload"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "workload.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a parent that is gone counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def child_pids(pid: int) -> set[int]:
    """The pids of ``pid``'s children (Linux /proc); none once ``pid`` has ended."""
    out: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def python_lines(script: str) -> list[str]:
    """The lines a fresh interpreter prints running ``script`` (what a test of imports needs:
    this interpreter has imported everything already)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout.splitlines()
