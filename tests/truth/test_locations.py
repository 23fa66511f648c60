"""The localisation gold derived from a patch or gold lines (``truth/locations.py``): each naming
rule of docs/metrics.md ("Ranked localisation metrics") on a small file written for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxeval.truth.locations import (
    FileNames,
    apply_hunks,
    context_locations,
    file_lines,
    patch_locations,
    place_hunks,
    placed_locations,
)
from ctxeval.truth.patches import edit_locations
from ctxeval.truth.symbols import extract

BASE = """\
import os

LIMIT = 3


class Shop:
    \"\"\"A shop.\"\"\"

    rate = 2

    def __init__(self, name):
        self.name = name

    @property
    def label(self):
        return self.name.upper()

    def total(self, items):
        def price(item):
            return item * self.rate
        return sum(price(i) for i in items)

    class Meta:
        def key(self):
            return "shop"


def helper(x):
    y = x + 1
    return y
"""


def _patch(path: str, old: str, new: str) -> str:
    """A unified diff of ``old`` -> ``new`` (one hunk over the whole file, all context)."""
    import difflib

    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def _gold(new: str, old: str = BASE, path: str = "shop.py") -> tuple[list, list, list]:
    files = {path: old.encode()}
    locs = patch_locations(edit_locations(_patch(path, old, new)), files.get,
                           lambda p, data: extract(data, p))
    return locs.files, locs.modules, locs.functions


def test_a_method_line_is_its_class_and_method() -> None:
    assert _gold(BASE.replace("item * self.rate", "item * self.rate * 2")) == (
        ["shop.py"], ["shop.py:Shop"], ["shop.py:Shop.total"])


def test_a_nested_function_counts_as_the_function_around_it() -> None:
    """``price`` is nested in ``total``: the function level names ``Shop.total``."""
    _, _, functions = _gold(BASE.replace("return item * self.rate", "return item"))
    assert functions == ["shop.py:Shop.total"]


def test_a_method_of_a_nested_class_is_named_through_both_classes() -> None:
    assert _gold(BASE.replace('return "shop"', 'return "store"'))[1:] == (
        ["shop.py:Shop"], ["shop.py:Shop.Meta.key"])


def test_a_class_body_line_has_a_module_but_no_function() -> None:
    assert _gold(BASE.replace("rate = 2", "rate = 3"))[1:] == (["shop.py:Shop"], [])


def test_init_is_a_method_like_any_other() -> None:
    assert _gold(BASE.replace("self.name = name", "self.name = name.strip()"))[2] == [
        "shop.py:Shop.__init__"]


def test_a_decorator_belongs_to_the_definition_it_decorates() -> None:
    assert _gold(BASE.replace("@property", "@functools.cached_property"))[1:] == (
        ["shop.py:Shop"], ["shop.py:Shop.label"])
    # a decorator added above a definition too (located in the patched file)
    added = BASE.replace("def helper(x):", "@staticmethod\ndef helper(x):")
    assert _gold(added)[1:] == (["shop.py:helper"], ["shop.py:helper"])


def test_pure_additions() -> None:
    """A new method makes its class gold at module level, not itself; a new top-level function
    is gold at file level only; lines added at the end of a body (Python: by indentation, in
    the patched file) belong to that body."""
    new_method = BASE.replace("    class Meta:", "    def discount(self):\n        return 0\n\n"
                              "    class Meta:")
    assert _gold(new_method) == (["shop.py"], ["shop.py:Shop"], [])
    new_function = BASE + "\n\ndef other():\n    return 1\n"
    assert _gold(new_function) == (["shop.py"], [], [])
    tail = BASE.replace("    return y\n", "    return y\n    # unreachable\n    y += 1\n")
    assert _gold(tail)[1:] == (["shop.py:helper"], ["shop.py:helper"])


def test_a_deleted_definition_is_gold() -> None:
    gone = BASE.replace("    @property\n    def label(self):\n        return "
                        "self.name.upper()\n\n", "")
    assert _gold(gone)[1:] == (["shop.py:Shop"], ["shop.py:Shop.label"])


def test_whitespace_and_top_level_lines() -> None:
    assert _gold(BASE.replace("    rate = 2\n\n", "    rate = 2\n\n\n")) == (["shop.py"], [], [])
    assert _gold(BASE.replace("import os", "import sys")) == (["shop.py"], [], [])
    assert _gold(BASE.replace("LIMIT = 3", "LIMIT = 4")) == (["shop.py"], [], [])


def test_created_and_deleted_files() -> None:
    created = "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n" \
              "+++ b/new.py\n@@ -0,0 +1,2 @@\n+def f():\n+    return 1\n"
    locs = patch_locations(edit_locations(created), {}.get, lambda p, d: extract(d, p))
    assert (locs.files, locs.modules, locs.functions) == ([], [], [])
    deleted = "diff --git a/shop.py b/shop.py\ndeleted file mode 100644\n--- a/shop.py\n" \
              "+++ /dev/null\n@@ -1,2 +0,0 @@\n-import os\n-\n"
    locs = patch_locations(edit_locations(deleted), {"shop.py": BASE.encode()}.get,
                           lambda p, d: extract(d, p))
    assert locs.files == ["shop.py"]
    assert set(locs.modules) == {"shop.py:Shop", "shop.py:helper"}
    assert "shop.py:Shop.Meta.key" in locs.functions


def test_a_hunk_is_placed_where_its_lines_are() -> None:
    """A header 10 lines off (as gold patches have: 10 of SWE-bench Lite's hunks checked) is
    applied where its context and removed lines are, as git apply does."""
    import re

    patch = _patch("shop.py", BASE, BASE.replace("y = x + 1", "y = x + 2"))
    header = next(line for line in patch.splitlines() if line.startswith("@@"))
    a, n, b, m = map(int, re.findall(r"\d+", header))
    moved = patch.replace(header, f"@@ -{a - 10},{n} +{b - 10},{m} @@")
    fe = edit_locations(moved).files["shop.py"]
    base = file_lines(BASE.encode())
    assert place_hunks(base, fe.hunks) == [a]
    new, added, removed = apply_hunks(base, fe)
    assert "".join(f"{x}\n" for x in new) == BASE.replace("y = x + 1", "y = x + 2")
    assert [base[n - 1] for n in removed] == ["    y = x + 1"]
    assert [new[n - 1] for n in added] == ["    y = x + 2"]


def test_lines_split_at_newlines_only() -> None:
    """A form feed in a file is not a line break (str.splitlines would shift every line)."""
    assert file_lines(b"a\x0cb\nc\n") == ["a\x0cb", "c"]


def test_other_languages() -> None:
    java = ("class Cart {\n    int total() {\n        return 1;\n    }\n"
            "    Cart() {\n        init();\n    }\n}\n")
    assert _gold(java.replace("return 1", "return 2"), java, "Cart.java")[1:] == (
        ["Cart.java:Cart"], ["Cart.java:Cart.total"])
    assert _gold(java.replace("init()", "setup()"), java, "Cart.java")[2] == ["Cart.java:Cart.Cart"]


def test_context_lines() -> None:
    names = FileNames("shop.py", extract(BASE.encode(), "shop.py"), file_lines(BASE.encode()))
    locs = context_locations([("shop.py", 15, 19), ("README", 1, 0)],
                             lambda p: names if p == "shop.py" else None)
    assert locs.files == ["shop.py", "README"]
    assert locs.modules == ["shop.py:Shop"]
    assert locs.functions == ["shop.py:Shop.label", "shop.py:Shop.total"]


@pytest.mark.parametrize("line, expected", [
    (6, ("Shop", None)), (12, ("Shop", "Shop.__init__")), (14, ("Shop", "Shop.label")),
    (20, ("Shop", "Shop.total")), (28, ("helper", "helper")), (1, (None, None)),
])
def test_names_of_lines(line: int, expected: tuple[str | None, str | None]) -> None:
    names = FileNames("shop.py", extract(BASE.encode(), "shop.py"), file_lines(BASE.encode()))
    assert names.at_line(line) == expected


def test_placed_locations_move_an_offset_hunk_with_its_lines() -> None:
    """Two hunks, the second's header 7 lines off: its edit line moves to where the hunk
    applies; the first stays; a patch that applies where it says is returned as it is."""
    new = BASE.replace("    rate = 2", "    rate = 3").replace("y = x + 1", "y = x + 2")
    patch = _patch_hunks("shop.py", BASE, new)
    headers = [line for line in patch.splitlines() if line.startswith("@@")]
    assert len(headers) == 2
    exact = edit_locations(patch)
    base = BASE.splitlines()
    want = [base.index("    rate = 2") + 1, base.index("    y = x + 1") + 1]
    assert exact.files["shop.py"].lines == tuple(want)

    def read(path: str) -> bytes | None:
        return BASE.encode() if path == "shop.py" else None

    assert placed_locations(exact, read) is exact
    a, n, b, m = (int(x) for x in re.findall(r"\d+", headers[1]))
    off = edit_locations(patch.replace(headers[1], f"@@ -{a + 7},{n} +{b + 7},{m} @@"))
    assert off.files["shop.py"].lines == (want[0], want[1] + 7)  # as written
    placed = placed_locations(off, read)
    assert placed.files["shop.py"].lines == tuple(want)
    assert placed.files["shop.py"].removed == tuple(want)
    # a file that cannot be read keeps its header numbers
    assert placed_locations(off, lambda p: None) is off
    # the lines kept by the caller place it as the bytes read do (nothing is read then)
    asked: list[str] = []

    def lines(path: str) -> list[str] | None:
        asked.append(path)
        return file_lines(BASE.encode()) if path == "shop.py" else None

    def unread(path: str) -> bytes | None:
        raise AssertionError("read although the lines were given")

    assert placed_locations(off, unread, lines=lines) == placed and asked == ["shop.py"]
    assert placed_locations(exact, unread, lines=lines) is exact
    assert placed_locations(off, unread, lines=lambda p: None) is off


def _patch_hunks(path: str, old: str, new: str) -> str:
    """A unified diff with one line of context, so that separate edits are separate hunks."""
    import difflib

    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}", n=1)
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


SAMPLES = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "symbols").iterdir())


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_names_of_real_definitions_follow_the_set_oracle(sample: Path) -> None:
    """Which definitions hold which, in every language's sample: the module name of a
    definition is its outermost holder's, its function name its outermost function's (the
    set-based oracle of ``tests/oracle.py`` over the same spans)."""
    import oracle
    from ctxeval.truth.locations import is_function_kind

    defs = extract(sample.read_bytes(), sample.name)
    assert defs
    spans = [(d.start_byte, d.end_byte) for d in defs]
    modules, functions = oracle.definition_owners(spans, [is_function_kind(d.kind)
                                                          for d in defs])
    names = FileNames(sample.name, defs)
    assert names.module == [defs[k].name or None for k in modules]
    assert names.function == [(defs[k].qualified_name or defs[k].name or None) if k >= 0
                              else None for k in functions]
