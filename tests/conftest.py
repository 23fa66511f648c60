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
