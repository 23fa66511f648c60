"""What ``--resume`` needs to know of the rows already in an output, read fast.

``--resume`` used to read the kept rows through the full results reader (every metric of every
step checked) and then read every trajectory of every input again only to skip it: on 1,240
kept rows that was most of a second before the first new row (``docs/reliability.md``), which
under a scheduler that kills often is the difference between progress and none. What is
needed is much less:

* the (run, instance) of each kept row, so that they are not evaluated again;
* which inputs are done. Rows are written in input order, runs one after the other, so every
  input of a run whose rows are followed by a row from another input (or by the agent failures
  ``--all-gold`` writes at a run's end) was read to its end, and every run followed by another
  run's rows is complete: none of those inputs is read again. Only the input of each run's last
  row may hold trajectories not yet evaluated;
* the preset and final policy the rows record, for outputs without metadata.

No metric is looked at (these rows were written by ctxeval, and ``report`` checks every value
when it reads them): a row line is read for its instance id, run and input only, at its start
and at its ``pred_file`` key (:func:`fast_keys`), and parsed whole only when it is not shaped as
ctxeval writes rows. A line that is not a JSON object with an instance id stops ``--resume``
with its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ...errors import InputError


@dataclass(slots=True)
class RunKept:
    """The kept rows of one run."""

    instances: set[str] = field(default_factory=set)
    #: Inputs (``pred_file``) in the order their rows come.
    inputs: list[str | None] = field(default_factory=list)
    #: Whether a later run has rows: then this one was evaluated to its end.
    complete: bool = False

    def done_inputs(self) -> frozenset[str]:
        """The inputs read to their end: all but the one of the run's last row (all of them
        when the run is complete)."""
        names = frozenset(p for p in self.inputs if p is not None)
        last = self.inputs[-1] if self.inputs else None
        if self.complete or last is None:
            return names
        return names - {last}


@dataclass(slots=True)
class Kept:
    """The rows an output holds when ``--resume`` begins."""

    count: int = 0
    runs: dict[str, RunKept] = field(default_factory=dict)
    preset: str | None = None
    final_policy: str | None = None
    _last: str | None = None

    def done(self) -> set[tuple[str, str]]:
        """(run, instance) of every kept row."""
        return {(run, iid) for run, kept in self.runs.items() for iid in kept.instances}

    def add(self, run: str, instance_id: str, pred_file: str | None) -> None:
        """One more kept row, in file order."""
        kept = self.runs.get(run)
        if run != self._last and self._last is not None:
            self.runs[self._last].complete = True  # rows of another run follow its rows
        if kept is None:
            kept = self.runs[run] = RunKept()
        self._last = run
        kept.instances.add(instance_id)
        if not kept.inputs or kept.inputs[-1] != pred_file:
            kept.inputs.append(pred_file)
        self.count += 1

    def extend(self, later: Kept) -> None:
        """The rows of ``later``, which come after these (a Parquet output's journal after
        the complete file). Runs do not interleave, so ``later``'s runs come in order."""
        for run, kept in later.runs.items():
            if self._last is not None and run != self._last:
                self.runs[self._last].complete = True
            mine = self.runs.setdefault(run, RunKept())
            for pred in kept.inputs:
                if not mine.inputs or mine.inputs[-1] != pred:
                    mine.inputs.append(pred)
            mine.instances |= kept.instances
            mine.complete = mine.complete or kept.complete
            self._last = run
        self.count += later.count
        if self.preset is None:
            self.preset, self.final_policy = later.preset, later.final_policy


def scan_rows(path: Path) -> Kept:
    """The kept rows of a JSON-lines output (or a Parquet output's journal); an absent file
    holds none."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return Kept()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    with fh:
        return _scan(_json_lines(fh, path), path)


def scan_parquet(path: Path) -> Kept:
    """The kept rows of a complete Parquet output, from the few columns needed (the metric
    columns are not read)."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
        table = pq.read_table(path, columns=[c for c in _COLUMNS if c in names])
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"cannot read: {exc}", path=str(path)) from exc
    return _scan(enumerate(table.to_pylist(), start=1), path)


_COLUMNS = ("instance_id", "run", "pred_file", "preset", "final_policy")


#: The start of a row as ctxeval writes it (orjson, keys in the row's order): its instance id
#: and run are read from there without parsing the line.
_HEAD = re.compile(rb'\{"instance_id":("(?:[^"\\]|\\.)*"),"run":(null|"(?:[^"\\]|\\.)*"),')
#: A top-level key: inside a JSON string a quote is always escaped, so this byte sequence is a
#: key wherever it occurs; a row has no other ``pred_file`` key.
_PRED = b',"pred_file":'
_STRING = re.compile(rb'null|"(?:[^"\\]|\\.)*"')


def fast_keys(raw: bytes) -> dict[str, Any] | None:
    """The instance id, run and input of a row line written by ctxeval, read from the line's
    start and its ``pred_file`` key without parsing the rest (the rows' metrics are most of
    their bytes); None when the line is not shaped so (an older writer, a hand-made row): then
    it is parsed whole. Checked against the full parse in the tests."""
    head = _HEAD.match(raw)
    if head is None or not raw.rstrip().endswith(b"}"):
        return None
    out = {"instance_id": orjson.loads(head.group(1)), "run": orjson.loads(head.group(2)),
           "pred_file": None}
    k = raw.rfind(_PRED)
    if k >= 0:
        value = _STRING.match(raw, k + len(_PRED))
        if value is None:
            return None
        out["pred_file"] = orjson.loads(value.group(0))
    return out


def _json_lines(fh: Any, path: Path) -> Iterator[tuple[int, Any]]:
    first = True
    for lineno, raw in enumerate(fh, start=1):
        if not raw.strip():
            continue
        got = None if first else fast_keys(raw)  # the first row whole: its preset, its policy
        first = False
        if got is not None:
            yield lineno, got
            continue
        try:
            yield lineno, orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=str(path), line=lineno) from exc


def _scan(rows: Iterable[tuple[int, Any]], path: Path) -> Kept:
    out = Kept()
    for lineno, row in rows:
        iid = row.get("instance_id") if isinstance(row, dict) else None
        if not isinstance(iid, str) or not iid:
            raise InputError("not a result row: a result row needs an instance id (a "
                             "non-empty string)", path=str(path), line=lineno,
                             field="instance_id")
        pred = row.get("pred_file")
        out.add(str(row.get("run")), iid, pred if isinstance(pred, str) else None)
        if out.count == 1:
            out.preset = row.get("preset") if isinstance(row.get("preset"), str) else None
            fp = row.get("final_policy")
            out.final_policy = fp if isinstance(fp, str) else None
    return out
