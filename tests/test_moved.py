"""Old module paths still import for one release: a DeprecationWarning naming the new path,
and the very module at the new path (ctxeval._moved)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ctxeval
from ctxeval._moved import MOVED, new_path


def _forget(old: str) -> None:
    """Drop ``old`` (and its submodules) from sys.modules and its parent's attributes, so the
    next import goes through the finder again."""
    for name in [n for n in sys.modules if n == old or n.startswith(old + ".")]:
        del sys.modules[name]
    parent, _, leaf = old.rpartition(".")
    if parent in sys.modules and leaf in vars(sys.modules[parent]):
        delattr(sys.modules[parent], leaf)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_is_the_new_module(old: str):
    new = importlib.import_module(MOVED[old])
    _forget(old)
    with pytest.warns(DeprecationWarning, match=rf"{old} has moved to {MOVED[old]}"):
        mod = importlib.import_module(old)
    assert mod is new
    assert sys.modules[old] is new
    assert new.__spec__.name == MOVED[old] and new.__name__ == MOVED[old]


def test_from_an_old_path_import_a_name():
    from ctxeval.reading.shell import read_shell

    _forget("ctxeval.shell")
    with pytest.warns(DeprecationWarning, match="ctxeval.reading.shell"):
        from ctxeval.shell import read_shell as old
    assert old is read_shell


def test_a_moved_package_brings_its_submodules():
    from ctxeval.reading.adapters import swe_agent
    from ctxeval.truth.gold import swebench

    _forget("ctxeval.adapters")
    _forget("ctxeval.gold")
    with pytest.warns(DeprecationWarning, match="moved to ctxeval.reading.adapters") as seen:
        import ctxeval.adapters.swe_agent as old
    assert old is swe_agent
    assert any("ctxeval.reading.adapters.swe_agent" in str(w.message) for w in seen)
    with pytest.warns(DeprecationWarning, match="ctxeval.truth.gold"):
        from ctxeval.gold import swebench as old_gold
    assert old_gold is swebench
    assert new_path("ctxeval.reports.viewer") == "ctxeval.analysis.reports.viewer"
    assert new_path("ctxeval.evaluation.run") is None
    assert new_path("ctxeval.shellfish") is None


def test_an_old_name_read_as_an_attribute():
    _forget("ctxeval.reports")
    with pytest.warns(DeprecationWarning, match="ctxeval.analysis.reports"):
        reports = ctxeval.reports
    assert reports is ctxeval.analysis.reports
    with pytest.raises(AttributeError):
        _ = ctxeval.no_such_module


def test_the_warning_names_the_importing_line():
    """Shown by Python's default filters (they show DeprecationWarning raised in __main__):
    the warning is attributed to the code that imports, not to the import machinery."""
    proc = subprocess.run([sys.executable, "-c", "import ctxeval.symbols"],
                          capture_output=True, text=True, check=True)
    assert "<string>:1: DeprecationWarning: ctxeval.symbols has moved to ctxeval.truth.symbols" \
        in proc.stderr


def test_new_paths_are_quiet():
    proc = subprocess.run([sys.executable, "-W", "error", "-c",
                           "import ctxeval, ctxeval.cli, ctxeval.reading.shell, "
                           "ctxeval.analysis.reports.viewer, ctxeval.evaluation.ray_engine"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
