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

Each line is parsed as JSON (orjson; no metric is looked at: these rows were written by
ctxeval, and ``report`` checks every value when it reads them). A line that is not a JSON object
with an instance id stops ``--resume`` with its file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

    def done(self) -> set[tuple[str, str]]:
        """(run, instance) of every kept row."""
        return {(run, iid) for run, kept in self.runs.items() for iid in kept.instances}


def scan_rows(path: Path) -> Kept:
    """The kept rows of a JSON-lines output (or a Parquet output's journal); an absent file
    holds none."""
    out = Kept()
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return out
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    last_run: str | None = None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc}", path=str(path), line=lineno) from exc
            iid = row.get("instance_id") if isinstance(row, dict) else None
            if not isinstance(iid, str) or not iid:
                raise InputError("not a result row: a result row needs an instance id (a "
                                 "non-empty string)", path=str(path), line=lineno,
                                 field="instance_id")
            run = str(row.get("run"))
            kept = out.runs.get(run)
            if kept is None:
                if last_run is not None:
                    out.runs[last_run].complete = True
                kept = out.runs[run] = RunKept()
            elif run != last_run and last_run is not None:
                out.runs[last_run].complete = True
            last_run = run
            kept.instances.add(iid)
            pred = row.get("pred_file")
            pred = pred if isinstance(pred, str) else None
            if not kept.inputs or kept.inputs[-1] != pred:
                kept.inputs.append(pred)
            if out.count == 0:
                out.preset = row.get("preset") if isinstance(row.get("preset"), str) else None
                fp = row.get("final_policy")
                out.final_policy = fp if isinstance(fp, str) else None
            out.count += 1
    return out
