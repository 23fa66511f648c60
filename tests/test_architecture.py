"""The package's imports go one way: from a stage to the stages below it, never back up, and
never round in a cycle (``docs/architecture.md``).

Every ``import`` in every module is read from its source (function-level and
``TYPE_CHECKING`` imports included: they are dependencies too), not from a running
interpreter, so an import that only happens on some path is checked as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

import ctxeval

#: The layers from the bottom up, each a list of module prefixes. A module may import modules
#: of its own layer and of the layers below it; nothing above. This is the one place the
#: direction is written down.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("native core", ("ctxeval._core",)),
    ("bottom", ("ctxeval.errors", "ctxeval.model", "ctxeval.paths", "ctxeval.linesets",
                "ctxeval.lfs", "ctxeval.filekinds")),
    ("truth", ("ctxeval.truth",)),
    ("reading", ("ctxeval.reading",)),
    ("evaluation", ("ctxeval.evaluation",)),
    ("analysis", ("ctxeval.analysis",)),
    ("top", ("ctxeval.api", "ctxeval.cli", "ctxeval.__main__", "ctxeval")),
]

ROOT = Path(ctxeval.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    """Every Python module of the package, by dotted name (a package by its ``__init__``)."""
    out = {}
    for p in sorted(ROOT.rglob("*.py")):
        parts = ["ctxeval", *p.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()
KNOWN = set(MODULES) | {"ctxeval._core"}


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the layer ``module`` belongs to (the longest prefix)."""
    best, length = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = i, len(prefix)
    return best


def imports_of(module: str) -> dict[str, int]:
    """The ctxeval modules ``module`` imports, each with the line of its first import.
    ``from P import n`` counts as an import of ``P.n`` when that is a module, else of ``P``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: dict[str, int] = {}

    def add(name: str, line: int) -> None:
        while name not in KNOWN and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in KNOWN and name != module:
            found.setdefault(name, line)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[:len(parts) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("ctxeval"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                add(full if full in KNOWN else target, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ctxeval"):
                    add(alias.name, node.lineno)
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer():
    assert [m for m in KNOWN if layer_of(m) < 0] == []


def test_the_native_core_is_the_bottom():
    assert layer_of("ctxeval._core") == 0
    assert all(layer_of(m) > 0 for m in MODULES)


@pytest.mark.parametrize("stage", ["truth", "reading", "evaluation", "analysis"])
def test_each_stage_says_what_enters_what_leaves_and_what_it_may_import(stage: str):
    doc = ast.get_docstring(ast.parse((ROOT / stage / "__init__.py").read_text()))
    assert doc is not None
    for word in ("Enters", "Leaves", "May import"):
        assert word in doc, (stage, word)


def test_imports_only_point_down():
    """No module imports one of a higher layer (a shared piece belongs in the lower one)."""
    upward = [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line}: {m} ({LAYERS[layer_of(m)][0]}) imports "
        f"{t} ({LAYERS[layer_of(t)][0]})"
        for m, targets in GRAPH.items() for t, line in targets.items()
        if layer_of(t) > layer_of(m)
    ]
    assert upward == []


def cycles_of(graph: dict[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` (strongly connected components of more than one module),
    by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles():
    """No module imports itself back through others (strongly connected components of one)."""
    assert cycles_of(GRAPH) == []


#: The repository's ``benchmarks/`` found from this test file, not from the installed package:
#: CI installs ctxeval into site-packages (not editable), where ``ROOT.parent.parent`` holds none.
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def benchmark_imports() -> dict[str, set[str]]:
    """The benchmark scripts each script imports (they import each other by file name, from
    ``benchmarks/`` and ``benchmarks/adapter_accuracy/`` put on ``sys.path``), function-level
    imports included."""
    scripts = {p.stem: p for p in sorted(BENCHMARKS.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in scripts.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
        graph[name] = {m for m in found if m in scripts and m != name}
    return graph


def test_the_benchmark_scripts_import_no_circle():
    """A script that imports another which imports it back runs one of them as ``__main__``
    and again as a module (two copies of its globals): shared helpers live in a module of
    their own (``benchmarks/timing.py``)."""
    graph = benchmark_imports()
    assert "workload" in graph["evaluate"]  # the walk sees the scripts' imports
    assert cycles_of(graph) == []


def test_the_checks_see_imports():
    """The walk finds plain, relative and function-level imports (a guard against a walk that
    finds nothing and so passes)."""
    assert "ctxeval._core" in GRAPH["ctxeval.linesets"]
    assert "ctxeval.evaluation.pipeline" in GRAPH["ctxeval.cli"]  # inside a function
    assert "ctxeval.truth.repo" in GRAPH["ctxeval.reading.placing"]


def test_the_shell_reader_is_split_by_command_family():
    """Each module of ``reading/shell`` is a short read, and the package's table of supported
    commands names every one of them."""
    shell = ROOT / "reading" / "shell"
    doc = ast.get_docstring(ast.parse((shell / "__init__.py").read_text())) or ""
    for p in sorted(shell.glob("*.py")):
        assert len(p.read_text().splitlines()) <= 500, p.name
        if p.name != "__init__.py":
            assert f"``{p.stem}``" in doc, p.stem


def test_the_tests_are_laid_out_like_the_package():
    """``tests/<stage>/`` for each stage (and ``tests/core/`` for the native core); the tests of
    the package as a whole stay at the top."""
    tests = Path(__file__).resolve().parent
    dirs = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    stages = {name for name, _ in LAYERS if (ROOT / name / "__init__.py").is_file()}
    assert stages == {"truth", "reading", "evaluation", "analysis"}
    assert dirs == stages | {"core"}
