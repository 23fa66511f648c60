"""The package surface: the stub matches the native module, the CLI teaches."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxeval
from ctxeval import _core
from ctxeval.cli import main

STUB = Path(ctxeval.__file__).with_name("_core.pyi")


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_matches_native_module():
    native = {n for n in dir(_core) if not n.startswith("_")} | {"__version__"}
    # TypedDicts of the input
    typed_only = {"FileEntry", "ViewSet", "EditSet", "Instance", "RankLevel", "RankingInput"}
    assert stub_names() - typed_only == native


def test_native_names_are_reexported():
    api = {"evaluate", "report", "compare", "Evaluation", "load_results", "Scorer", "Row"}
    assert set(ctxeval.__all__) - api == {n for n in dir(_core) if not n.startswith("_")} | {
        "__version__"}
    assert (STUB.parent / "py.typed").exists()


@pytest.mark.parametrize("cmd", ["evaluate", "report", "compare", "convert", "inspect",
                                 "symbols"])
def test_every_command_has_help(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: ctxeval " + cmd in out and len(out) > 200


def test_evaluate_imports_neither_the_analysis_stage_nor_the_api(tmp_path):
    """``import ctxeval`` and ``ctxeval evaluate`` leave the analysis stage and the API
    unimported (a fresh interpreter: this one has imported everything): building every
    command's parser imported them, 0.14 s of CPU of the example's 0.74 s. The lazy names
    still resolve."""
    from conftest import python_lines

    ex = Path(__file__).resolve().parent.parent / "fixtures" / "example"
    script = (
        "import sys, ctxeval\n"
        "from ctxeval.cli import main\n"
        f"code = main(['evaluate', '--gold', {str(ex / 'gold.jsonl')!r}, '--run',"
        f" 'a=' + {str(ex / 'runs' / 'agent-a.jsonl')!r}, '--repos', {str(ex / 'repos')!r},"
        f" '--out', {str(tmp_path / 'r.jsonl')!r}, '-q', '--no-cache'])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('ctxeval.analysis')"
        " or m == 'ctxeval.api'))\n"
        "print(ctxeval.Scorer.__name__, ctxeval.analysis.__name__)\n")
    assert python_lines(script) == ["0 []", "Scorer ctxeval.analysis"]
    assert set(dir(ctxeval)) >= set(ctxeval.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = ctxeval.nothing


def test_every_command_is_built_alone_as_main_builds_it(capsys):
    """``main`` builds only the parser of the command it is given: each alone parses its own
    help as the whole parser does."""
    from ctxeval.cli import COMMANDS, build_parser

    whole = build_parser()
    for cmd in COMMANDS:
        alone = build_parser(cmd)
        for p in (whole, alone):
            with pytest.raises(SystemExit):
                p.parse_args([cmd, "--help"])
        first, second = capsys.readouterr().out.split("usage: ctxeval " + cmd)[1:]
        assert first == second, cmd


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "evaluate" in capsys.readouterr().err


def test_symbols_command(tmp_path, capsys):
    import json

    src = tmp_path / "m.py"
    src.write_text("class A:\n    def f(self):\n        pass\n")
    assert main(["symbols", str(src), "--json"]) == 0
    defs = json.loads(capsys.readouterr().out)
    assert [(d["kind"], d["qualified_name"], d["start_line"], d["end_line"]) for d in defs] == [
        ("class_definition", "A", 1, 3), ("function_definition", "A.f", 2, 3)]
    assert set(defs[0]) == {"kind", "name", "qualified_name", "start_line", "end_line",
                            "start_byte", "end_byte"}
    assert main(["symbols", str(src)]) == 0
    assert "A.f" in capsys.readouterr().out
    odd = tmp_path / "notes.xyz"
    odd.write_text("hello")
    assert main(["symbols", str(odd)]) == 1
    assert "unknown language" in capsys.readouterr().err


def _modules() -> dict[str, Path]:
    """Every Python module of the package, by dotted name (a package by its ``__init__``)."""
    root = Path(ctxeval.__file__).resolve().parent
    out = {}
    for p in root.rglob("*.py"):
        parts = ["ctxeval", *p.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _package_imports(module: str, modules: dict[str, Path]) -> set[str]:
    """The ctxeval modules ``module`` imports anywhere in its source (function-level imports
    included: they are dependencies too); the native core is not a Python module."""
    import ast

    path = modules[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names.extend(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    out = set()
    for name in names:
        if not name.startswith("ctxeval") or name.startswith("ctxeval._core"):
            continue
        while name and name not in modules:  # an imported name: its module
            name = name.rsplit(".", 1)[0] if "." in name else ""
        if name and name != module:
            out.add(name)
    return out


def test_no_import_cycles():
    """Each module can be read knowing only what it imports: no two modules import each
    other, directly or through others."""
    modules = _modules()
    graph = {m: _package_imports(m, modules) for m in modules}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, m, d]))
            if d not in state:
                visit(d, [*path, m])
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            visit(m, [])


def test_definitions_are_found_in_one_direction():
    """grammars (what the native core is given) ← symbols (parsing) ← cache (disk) ←
    extraction (memory, disk and the native core together): none of them imports one above
    it."""
    modules = _modules()
    layers = ["ctxeval.truth.grammars", "ctxeval.truth.symbols", "ctxeval.truth.cache",
              "ctxeval.truth.extraction"]
    allowed = {
        "ctxeval.truth.grammars": set(),
        "ctxeval.truth.symbols": {"ctxeval.truth.grammars"},
        "ctxeval.truth.cache": {"ctxeval.truth.grammars", "ctxeval.truth.symbols"},
        "ctxeval.truth.extraction": {"ctxeval.truth.grammars", "ctxeval.truth.symbols",
                                     "ctxeval.truth.cache"},
    }
    for module in layers:
        assert _package_imports(module, modules) & set(layers) == allowed[module], module


@pytest.mark.parametrize("old", ["ctxeval.shell", "ctxeval.symbols", "ctxeval.adapters",
                                 "ctxeval.gold", "ctxeval.reports", "ctxeval._moved"])
def test_the_old_flat_module_paths_are_gone(old: str):
    """The flat paths of the release before the package was cut into stages served their
    deprecation release and are removed: importing one is an ordinary ``ModuleNotFoundError``
    (not a warning and the module at its new path), and the package has no such attribute."""
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
    with pytest.raises(AttributeError):
        getattr(ctxeval, old.rpartition(".")[2])


COMMANDS = ["evaluate", "report", "compare", "view", "convert", "inspect", "symbols"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_teaches_with_examples_and_helps_every_option(cmd, capsys):
    """A newcomer's first hour (issue 23): convert had no example, inspect --preset no help."""
    from ctxeval.cli import build_parser

    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"  ctxeval {cmd} " in out.split("examples:", 1)[1]
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[cmd]
    bare = [a.option_strings for a in sub._actions if a.option_strings and not a.help]
    assert bare == []


def test_symbols_lang_lists_the_languages(tmp_path, capsys):
    from ctxeval.truth.grammars import GRAMMARS

    assert main(["symbols", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(lang in out for lang in GRAMMARS)
    src = tmp_path / "notes.txt"
    src.write_text("def f():\n    pass\n")
    assert main(["symbols", str(src), "--lang", "pyhton"]) == 2
    err = capsys.readouterr().err
    assert "unknown language 'pyhton'" in err and "python" in err


def test_inspect_numbers_steps_as_the_rows_and_the_viewer_do(capsys):
    """inspect numbered steps from 0 where rows (trajectory.steps[*].step) and the viewer
    start at 1."""
    import json

    ex = Path(__file__).resolve().parent.parent / "fixtures" / "example"
    assert main(["inspect", str(ex / "runs" / "agent-a.jsonl"), "--instance",
                 "example__calc-1"]) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  [")]
    n = len(json.loads((ex / "runs" / "agent-a.jsonl").read_text().splitlines()[0])["steps"])
    assert [s.split("]")[0] for s in steps] == [f"  [{k}" for k in range(1, n + 1)]


def test_the_readme_synopsis_says_what_the_commands_need():
    """report --format html needs --out, which the synopsis omitted; --repos is required (every
    row was an error without it) and is written so."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    synopsis = readme.split("## Commands", 1)[1].split("```", 2)[1]
    report = synopsis.split("ctxeval report", 1)[1].split("ctxeval view", 1)[0]
    assert "--out FILE" in report and "html" in report
    evaluate = synopsis.split("ctxeval evaluate", 1)[1].split("ctxeval report", 1)[0]
    assert "--repos DIR" in evaluate and "[--repos" not in evaluate
    assert main(["evaluate", "--gold", "g.jsonl", "--run", "a=r.jsonl"]) == 2  # no --repos


@pytest.mark.parametrize("cmd", [None, *COMMANDS])
def test_every_help_fits_a_terminal(cmd, capsys, monkeypatch):
    """--help prose was written as one line per paragraph (evaluate's: 371 characters)."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main([cmd, "--help"] if cmd else ["--help"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100, cmd


def _command(*argv: str) -> subprocess.CompletedProcess[str]:
    """``ctxeval ARGV`` as the command runs it (:func:`ctxeval.cli.run`), in a fresh process
    with no unbuffered streams, and an exit handler that says when it runs."""
    script = ("import atexit, sys\n"
              "atexit.register(lambda: print('exit handlers ran', file=sys.stderr))\n"
              "from ctxeval.cli import run\n"
              f"sys.argv = ['ctxeval', *{list(argv)!r}]\n"
              "run()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, check=False)


def test_the_command_ends_at_once_after_a_local_evaluation_with_everything_written(tmp_path):
    """After a local evaluation the command's process ends without freeing its caches (the
    exit handlers do not run): the rows, on standard output or in ``--out``, the metadata and
    the summary are all there, and the exit code is the command's. Other commands, and the
    API, end as usual."""
    from ctxeval.evaluation import run as evaluation_run

    ex = Path(__file__).resolve().parent.parent / "fixtures" / "example"
    args = ["evaluate", "--gold", str(ex / "gold.jsonl"), "--repos", str(ex / "repos"),
            "--run", f"a={ex / 'runs' / 'agent-a.jsonl'}", "--no-cache"]
    out = tmp_path / "r.jsonl"
    to_file = _command(*args, "--out", str(out))
    assert to_file.returncode == 0, to_file.stderr
    assert "exit handlers ran" not in to_file.stderr and "rows: 2 ok" in to_file.stderr
    rows = out.read_bytes()
    assert rows.count(b"\n") == 2 and out.with_name("r.jsonl.meta.json").is_file()
    to_stdout = _command(*args, "--out", "-", "-q")
    assert to_stdout.returncode == 0 and to_stdout.stdout.encode() == rows
    failed = _command(*args[:1], "--gold", str(tmp_path / "missing.jsonl"), *args[3:],
                      "--out", str(tmp_path / "x.jsonl"))
    assert failed.returncode == 1 and "missing.jsonl" in failed.stderr
    assert "exit handlers ran" in failed.stderr  # nothing was evaluated: the usual exit
    report = _command("report", str(out))
    assert report.returncode == 0 and "exit handlers ran" in report.stderr
    assert evaluation_run.kept_until_exit is None  # in-process (the API, main()): freed


def test_the_collector_runs_less_only_in_the_commands_evaluation(tmp_path, capsys):
    """The command's local evaluation freezes what the imports made and raises the cyclic
    collector's thresholds (its process ends with the evaluation); in-process ``main()``, as
    the API, leaves the caller's collector as it was."""
    import gc

    from ctxeval.cli import COLLECTOR_THRESHOLDS

    ex = Path(__file__).resolve().parent.parent / "fixtures" / "example"
    args = ["evaluate", "--gold", str(ex / "gold.jsonl"), "--repos", str(ex / "repos"),
            "--run", f"a={ex / 'runs' / 'agent-a.jsonl'}", "--no-cache", "-q"]
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    assert main([*args, "--out", str(tmp_path / "in.jsonl")]) == 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    capsys.readouterr()
    script = ("import gc, os, sys\n"
              "real_exit = os._exit\n"
              "def _exit(code):\n"
              "    print('collector', gc.get_threshold(), gc.get_freeze_count() > 0,\n"
              "          file=sys.stderr, flush=True)\n"
              "    real_exit(code)\n"
              "os._exit = _exit\n"
              "from ctxeval.cli import run\n"
              f"sys.argv = ['ctxeval', *{args!r}, '--out', {str(tmp_path / 'cmd.jsonl')!r}]\n"
              "run()\n")
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=False)
    assert got.returncode == 0, got.stderr
    assert f"collector {COLLECTOR_THRESHOLDS} True" in got.stderr
    assert (tmp_path / "cmd.jsonl").read_bytes() == (tmp_path / "in.jsonl").read_bytes()
