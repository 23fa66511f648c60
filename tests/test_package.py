"""The package surface: the stub matches the native module, the CLI teaches."""

from __future__ import annotations

import ast
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
    typed_only = {"FileEntry", "ViewSet", "EditSet", "Instance"}  # TypedDicts of the input
    assert stub_names() - typed_only == native


def test_native_names_are_reexported():
    api = {"evaluate", "report", "compare", "Evaluation"}
    assert set(ctxeval.__all__) - api == {n for n in dir(_core) if not n.startswith("_")} | {
        "__version__"}
    assert (STUB.parent / "py.typed").exists()


@pytest.mark.parametrize("cmd", ["evaluate", "report", "compare", "convert", "inspect",
                                 "symbols"])
def test_every_command_has_help(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: ctxeval " + cmd in out and len(out) > 200


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
