"""Time symbol extraction against tree-sitter's bare parse on a generated ~1 MB Python file.

Extraction (parse + one query pass + names) should stay within 1.5x of the parse alone.
Run: ``python benchmarks/symbols.py [--size-mb 1.0] [--repeat 5] [--preset strict]``.
"""

from __future__ import annotations

import argparse
import time

import tree_sitter_python
from tree_sitter import Language, Parser

from ctxeval.symbols import extract


def generate_python(target_bytes: int) -> bytes:
    """Realistic-looking module: classes with methods, nested helpers, and plain functions."""
    chunks: list[str] = ['"""Generated module."""\n\nimport os\n\n']
    size, i = 0, 0
    while size < target_bytes:
        chunk = (
            f"class Widget{i}(object):\n"
            f'    """Widget number {i}."""\n\n'
            f"    def __init__(self, value: int = {i}) -> None:\n"
            f"        self.value = value\n"
            f"        self.items = [x * 2 for x in range(value % 7)]\n\n"
            f"    def compute(self, factor: float) -> float:\n"
            f"        def helper(x):\n"
            f"            return x * factor + {i}\n"
            f"        total = 0.0\n"
            f"        for item in self.items:\n"
            f"            if item % 3 == 0:\n"
            f"                total += helper(item)\n"
            f"            else:\n"
            f"                total -= item / (factor or 1)\n"
            f"        return total\n\n"
            f"    @property\n"
            f"    def label(self) -> str:\n"
            f"        return f'widget-{{self.value}}-' + os.sep\n\n\n"
            f"def make_widget_{i}(n):\n"
            f"    return Widget{i}(n)\n\n\n"
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
    args = ap.parse_args()

    data = generate_python(int(args.size_mb * 1024 * 1024))
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
