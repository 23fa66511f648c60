"""Old module paths, kept working for one release after the package was cut into stages.

``import ctxeval.shell`` (or ``from ctxeval.symbols import extract``, ``ctxeval.reports`` as an
attribute) still works: it warns with a :class:`DeprecationWarning` naming the new path and
gives the module at the new path itself, so ``ctxeval.symbols is ctxeval.truth.symbols`` and
state, monkeypatching and ``isinstance`` checks are shared. A moved package's submodules
follow it (``ctxeval.adapters.swe_agent`` is ``ctxeval.reading.adapters.swe_agent``).

:data:`MOVED` is the one table of old → new paths. In the release after next, remove this
module and the lines of ``ctxeval/__init__.py`` that use it (the import, ``install()``,
``__getattr__``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import FrameType, ModuleType
from typing import Any

#: Old module path → new module path. A package's submodules move with it.
MOVED: dict[str, str] = {
    # truth: gold, repositories at a commit, patches, definitions
    "ctxeval.gold": "ctxeval.truth.gold",
    "ctxeval.repo": "ctxeval.truth.repo",
    "ctxeval.patches": "ctxeval.truth.patches",
    "ctxeval.symbols": "ctxeval.truth.symbols",
    "ctxeval.extraction": "ctxeval.truth.extraction",
    "ctxeval.grammars": "ctxeval.truth.grammars",
    "ctxeval.cache": "ctxeval.truth.cache",
    # reading: trajectories to neutral views
    "ctxeval.adapters": "ctxeval.reading.adapters",
    "ctxeval.shell": "ctxeval.reading.shell",
    "ctxeval.inputs": "ctxeval.reading.inputs",
    "ctxeval.identify": "ctxeval.reading.identify",
    "ctxeval.records": "ctxeval.reading.records",
    "ctxeval.placing": "ctxeval.reading.placing",
    "ctxeval.textmatch": "ctxeval.reading.textmatch",
    "ctxeval.moatless_spans": "ctxeval.reading.moatless_spans",
    "ctxeval.resolved": "ctxeval.reading.resolved",
    # evaluation: preparation, the stages' drivers, the files written
    "ctxeval.prepare": "ctxeval.evaluation.prepare.preparer",
    "ctxeval.prepare_contextbench": "ctxeval.evaluation.prepare.contextbench",
    "ctxeval.pipeline": "ctxeval.evaluation.pipeline",
    "ctxeval.resolve": "ctxeval.evaluation.resolve",
    "ctxeval.scorer": "ctxeval.evaluation.scorer",
    "ctxeval.ray_engine": "ctxeval.evaluation.ray_engine",
    "ctxeval.results": "ctxeval.evaluation.output.results",
    "ctxeval.outfile": "ctxeval.evaluation.output.outfile",
    "ctxeval.results_parquet": "ctxeval.evaluation.output.results_parquet",
    "ctxeval.views_sidecar": "ctxeval.evaluation.output.views_sidecar",
    # analysis: reports, comparisons, statistics
    "ctxeval.reports": "ctxeval.analysis.reports",
    "ctxeval.comparison": "ctxeval.analysis.comparison",
    "ctxeval.stats": "ctxeval.analysis.stats",
    "ctxeval.tokens": "ctxeval.analysis.tokens",
}


def new_path(old: str) -> str | None:
    """Where the module once at ``old`` lives now; None when it did not move."""
    head = old
    while head:
        if head in MOVED:
            return MOVED[head] + old[len(head):]
        head = head.rpartition(".")[0]
    return None


def _caller() -> FrameType | None:
    """The first frame outside this module, the import machinery and the package's
    ``__getattr__``: the code that asked for the old path."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_globals.get("__name__", "").startswith("importlib")
                                 or (frame.f_globals.get("__name__") == "ctxeval"
                                     and frame.f_code.co_name == "__getattr__")):
        frame = frame.f_back
    return frame


def _warn(old: str, new: str) -> None:
    message = f"{old} has moved to {new}; import it from there ({old} goes in a later release)"
    frame = _caller()
    if frame is None:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return
    glob = frame.f_globals
    warnings.warn_explicit(message, DeprecationWarning, frame.f_code.co_filename,
                           frame.f_lineno, module=glob.get("__name__", "<unknown>"),
                           registry=glob.setdefault("__warningregistry__", {}))


class _Loader(importlib.abc.Loader):
    """Gives the module at the new path as the module at the old one."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self.new)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system gave the module the old path's spec: it keeps its own.
        module.__spec__ = self.spec


class _Finder(importlib.abc.MetaPathFinder):
    """Finds old paths (and only those) before the path finder does."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = new_path(fullname) if fullname.startswith("ctxeval.") else None
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(new))


FINDER = _Finder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, FINDER)


def attribute(package: str, name: str) -> ModuleType:
    """``ctxeval.<name>`` read as an attribute without importing it first (the package's
    ``__getattr__``): the moved module, with the warning; AttributeError for anything else."""
    if f"{package}.{name}" not in MOVED:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return importlib.import_module(f"{package}.{name}")
