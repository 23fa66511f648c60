"""Time symbol extraction against tree-sitter's bare parse on a generated ~1 MB Python file.

Extraction (parse + one query pass + names) should stay within 1.5x of the parse alone.
Run: ``python benchmarks/symbols.py [--size-mb 1.0] [--repeat 5] [--preset strict]``.
"""

from __future__ import annotations

import argparse
import time

import tree_sitter_python
from tree_sitter import Language, Parser

from ctxeval.truth.symbols import extract


def _method(i: int, j: int) -> str:
    """A method of ordinary size (about 16 lines): docstring, comments, branches, a loop."""
    return (
        f"    def process_{j}(self, records: list[dict], limit: int = {j + 10}) -> dict:\n"
        f'        """Aggregate the records of kind {j} for widget {i}, up to ``limit``."""\n'
        f"        # Skip records that were already seen in an earlier pass.\n"
        f"        totals: dict[str, float] = {{}}\n"
        f"        for index, record in enumerate(records):\n"
        f"            if index >= limit:\n"
        f"                break\n"
        f"            key = record.get('key', 'default-{j}')\n"
        f"            value = float(record.get('value', 0)) * self.factor\n"
        f"            if value < 0 and not self.allow_negative:\n"
        f"                raise ValueError(f'negative value {{value}} in record {{index}}')\n"
        f"            totals[key] = totals.get(key, 0.0) + value\n"
        f"        self.history.append((len(records), sum(totals.values())))\n"
        f"        return {{k: round(v, {j % 5}) for k, v in sorted(totals.items())}}\n\n"
    )


def generate_python(target_bytes: int, *, dense: bool = False) -> bytes:
    """A module of classes with methods and plain functions, ``target_bytes`` long.

    The default shape has about 600 bytes per definition, like the standard library; ``dense``
    (one-line bodies, nested helpers) has about 110, a worst case for extraction overhead.
    """
    chunks: list[str] = ['"""Generated module."""\n\nimport os\n\n']
    size, i = 0, 0
    while size < target_bytes:
        if dense:
            chunk = (
                f"class Widget{i}(object):\n"
                f"    def __init__(self, value: int = {i}) -> None:\n"
                f"        self.value = value\n\n"
                f"    def compute(self, factor: float) -> float:\n"
                f"        def helper(x):\n"
                f"            return x * factor + {i}\n"
                f"        return sum(helper(x) for x in range(self.value % 7))\n\n"
                f"    @property\n"
                f"    def label(self) -> str:\n"
                f"        return f'widget-{{self.value}}-' + os.sep\n\n\n"
                f"def make_widget_{i}(n):\n"
                f"    return Widget{i}(n)\n\n\n"
            )
        else:
            chunk = (
                f"class Widget{i}:\n"
                f'    """Widget number {i}: aggregates records by key."""\n\n'
                f"    def __init__(self, factor: float = {i}.5) -> None:\n"
                f"        self.factor = factor\n"
                f"        self.allow_negative = {i % 2 == 0}\n"
                f"        self.history: list[tuple[int, float]] = []\n\n"
                + "".join(_method(i, j) for j in range(4))
                + f"\n\ndef make_widget_{i}(factor: float) -> Widget{i}:\n"
                f'    """Build a widget, checking the factor first."""\n'
                f"    if factor <= 0:\n"
                f"        raise ValueError('factor must be positive: ' + os.fspath(str(factor)))\n"
                f"    return Widget{i}(factor)\n\n\n"
            )
        chunks.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(chunks).encode("utf-8")


def best_of(repeat: int, func) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size-mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--preset", default="strict", choices=["strict", "contextbench"])
    ap.add_argument("--dense", action="store_true",
                    help="one definition per ~110 bytes instead of ~600 (worst case)")
    args = ap.parse_args()

    data = generate_python(int(args.size_mb * 1024 * 1024), dense=args.dense)
    parser = Parser(Language(tree_sitter_python.language()))
    defs = extract(data, "bench.py", preset=args.preset)  # warm-up: loads grammar and query
    assert defs is not None

    t_parse = best_of(args.repeat, lambda: parser.parse(data))
    t_extract = best_of(args.repeat, lambda: extract(data, "bench.py", preset=args.preset))
    lines = data.count(b"\n")
    print(f"file: {len(data):,} bytes, {lines:,} lines, {len(defs):,} definitions "
          f"(preset {args.preset})")
    print(f"parse only:  {t_parse * 1000:8.1f} ms (best of {args.repeat})")
    print(f"extract:     {t_extract * 1000:8.1f} ms (best of {args.repeat})")
    print(f"ratio extract/parse: {t_extract / t_parse:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
