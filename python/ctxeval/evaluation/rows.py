"""Result rows: one JSON object per (run, instance), as ``spec/results-format.md`` lays out.

The engine's metrics are put together with what the row says about how the instance was read
(the notes of the plan), the trajectory's usage and resolved status, and the optional text
overlap metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import GoldInstance, Trajectory, Usage
from ..reading.textmatch import overlap, tokens
from .prepare.preparer import Notes, context_text


def _usage(traj: Trajectory) -> Usage | None:
    return traj.usage or Usage.total([s.usage for s in traj.steps])


def _read_warnings(traj: Trajectory | None) -> list[str]:
    """What the adapter guessed, skipped or coerced while reading the trajectory
    (``extra["read_warnings"]``): a row says how its instance was read."""
    found = traj.extra.get("read_warnings") if traj is not None else None
    return [w for w in found if isinstance(w, str)] if isinstance(found, list) else []


def make_row(gold: GoldInstance, traj: Trajectory | None, run: str, preset: str, final_policy: str,
         notes: Notes, metrics: dict[str, Any], status: str, pred_file: str | None,
         reason: str | None = None, resolved: bool | None = None) -> dict[str, Any]:
    traj_metrics = metrics["trajectory"]
    if traj is not None and len(traj.steps) == len(traj_metrics["steps"]):
        # The tool of each step, for the tool mix of the exploration report.
        for step, out in zip(traj.steps, traj_metrics["steps"], strict=True):
            out["tool"] = step.tool
    row: dict[str, Any] = {
        "instance_id": traj.instance_id if traj is not None else gold.instance_id,
        "run": run,
        "preset": preset,
        "final_policy": final_policy,
        "final_source": notes.final_source,
        "gold_kind": gold.gold_kind,
        "gold_missing_files": notes.gold_missing_files,
        "status": status,
    }
    if reason:
        row["reason"] = reason
    row.update({
        "language": gold.language,
        "source": gold.source,
        "repo": gold.repo,
        "num_steps": metrics["num_steps"],
        "final": metrics["final"],
        "trajectory": traj_metrics,
        "editloc": metrics["editloc"],
    })
    if metrics["editloc"] is None:
        row["editloc_reason"] = "no gold patch" if not gold.patch else "gold patch unreadable"
    usage = _usage(traj) if traj is not None else None
    row["usage"] = None if usage is None else usage.to_json()
    row["resolved"] = traj.resolved if traj is not None and traj.resolved is not None \
        else resolved
    row["unresolved_paths"] = sorted(set(notes.unresolved_paths))
    row["unresolved_symbols"] = sorted(set(notes.unresolved_symbols))
    row["unplaced_lines"] = notes.unplaced_lines
    warnings = [*notes.warnings, *_read_warnings(traj)]
    if warnings:
        row["warnings"] = warnings
    if pred_file is not None:
        row["pred_file"] = pred_file
    if traj is not None and gold.instance_id != traj.instance_id:
        row["gold_instance_id"] = gold.instance_id
    return row


def text_metrics(gold: GoldInstance, traj: Trajectory | None, inst: dict[str, Any],
                 notes: Notes, snap: Any) -> dict[str, Any]:
    """SQuAD-style token overlap of the final context's text with the gold context's text, and
    of the model patch with the gold patch (null where a side is missing)."""
    gold_text = "".join(gold.context_text) if gold.context_text else \
        context_text(inst, notes.paths, snap, "gold")
    final_text = context_text(inst, notes.paths, snap, "final")
    out: dict[str, Any]
    if not tokens(gold_text):
        # No gold text (every gold file missing from the checkout, or gold without lines): as
        # for an empty gold set (spec metrics.md, "Empty sets"), recall and F1 are undefined,
        # and precision is 0 when the final context has text, undefined when it has none. (The
        # overlap's own convention, 1.0 against an empty reference, credited everything.)
        out = {"context_token_precision": 0.0 if tokens(final_text) else None,
               "context_token_recall": None, "context_token_f1": None}
    else:
        ctx = overlap(final_text, gold_text)
        out = {f"context_token_{k}": ctx[k] for k in ("precision", "recall", "f1")}
    patch = traj.model_patch if traj is not None else None
    if gold.patch and patch:
        p = overlap(patch, gold.patch)
        out.update({"patch_exact_match": p["exact_match"], "patch_token_f1": p["f1"]})
    else:
        out.update({"patch_exact_match": None, "patch_token_f1": None})
    return out


def field_value(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (``final.line.f1``), None where any step is missing."""
    cur: Any = row
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def has_path(row: Mapping[str, Any], path: str) -> bool:
    """Whether the dotted path exists in the row, a null on the way counting as existing (a
    null ``editloc`` still names the metric); only a missing key means a wrong path."""
    cur: Any = row
    for part in path.split("."):
        if cur is None:
            return True
        if not isinstance(cur, Mapping) or part not in cur:
            return False
        cur = cur[part]
    return True
