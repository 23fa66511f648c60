"""What an adapter skipped or coerced in a record it otherwise read, said in the row's warnings.

A trajectory whose message lost its ``role``, whose tool result lost its ``tool_call_id``, whose
observation became an object or whose usage block became a list still reads: the adapter skips
what it cannot use and reads the rest. Without a word, the row would then be scored as if the
file were well formed (a step gone, tokens undercounted). Each adapter that skips or coerces a
field tells a :class:`FieldNotes`, which says it once per kind of defect in the trajectory's
``read_warnings`` (and so in the row's ``warnings``), with how many places and the first few of
them. A value is described by its type and size, never quoted: a 20 MB string in a field must
not become a 20 MB warning.
"""

from __future__ import annotations

from typing import Any

#: Places named per kind of defect; the rest are counted.
_PLACES = 3


def is_number(value: Any) -> bool:
    """A JSON number (``true`` and ``false`` are not counts)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe(value: Any) -> str:
    """A bounded description of a value that is not what the field holds."""
    if value is None:
        return "missing or null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        text = repr(value)
        return f"the number {text if len(text) <= 24 else text[:21] + '...'}"
    if isinstance(value, str):
        if len(value) > 40:
            return f"a {len(value):,}-character string"
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class FieldNotes:
    """Collects ``(field, what was found, what the reader did)`` and renders them as warnings.

    ``field`` is written with ``[]`` where the index goes (``messages[].role``); ``where`` is the
    place itself (``messages[4]``). Notes of one field, description and outcome are one warning.
    """

    def __init__(self) -> None:
        self._kinds: dict[tuple[str, str, str], list[str]] = {}

    def note(self, field: str, found: Any, outcome: str, where: str | None = None) -> None:
        self._add(field, describe(found), outcome, where)

    def missing(self, field: str, outcome: str, where: str | None = None) -> None:
        """A field that is absent (not a wrong value): said as 'missing'."""
        self._add(field, "missing", outcome, where)

    def _add(self, field: str, found: str, outcome: str, where: str | None) -> None:
        self._kinds.setdefault((field, found, outcome), []).append(where or field)

    def __bool__(self) -> bool:
        return bool(self._kinds)

    def warnings(self) -> list[str]:
        out = []
        for (field, found, outcome), places in self._kinds.items():
            n = len(places)
            if n == 1:
                out.append(f"{places[0] if '[]' in field else field} is {found}: {outcome}")
                continue
            named = ", ".join(places[:_PLACES]) + (", ..." if n > _PLACES else "")
            out.append(f"{field} is {found} in {n} places ({named}): {outcome}")
        return out

    def extend_into(self, extra: dict[str, Any]) -> None:
        """Append the notes to ``extra["read_warnings"]`` (made if absent)."""
        if self._kinds:
            extra.setdefault("read_warnings", []).extend(self.warnings())
