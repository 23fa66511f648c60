"""Line numbers as ranges, for the readers that collect numbered lines from observations."""

from __future__ import annotations

from collections.abc import Iterable

from ._core import lines_from_numbers

#: The largest line number a line range can hold (the core's lines are 32-bit).
MAX_LINE = 2**32 - 2


def line_runs(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Distinct line numbers as sorted inclusive runs of consecutive lines. Numbers below 1,
    or beyond any file, name no line and are left out. The grouping is the core's."""
    return lines_from_numbers([n for n in set(numbers) if 1 <= n <= MAX_LINE])
