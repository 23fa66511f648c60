"""Stage 3, score: planned instances finished with their definitions, scored, made rows.

The definitions are in memory by now (the extract stage put them there); finishing an
instance loads its files' line indexes and definitions, resolves the symbol names its views
named, and hands the engine input over. All instances of a batch go to the native engine in
one call, with the GIL released. Rows come back in the items' order; an item that was a row
already (an evaluator error) keeps its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _core
from ..errors import InstanceError, RepoError
from ..reading.resolved import ResolvedTable
from .output.results import error_row
from .output.views_sidecar import ROW_KEY, definitions_from, views_record
from .plan import Item
from .prepare.preparer import Notes, PreparerBase
from .ranking import Prepared, prepare_ranking, ranking_block
from .rows import make_row, text_metrics


def _with_preset(row: dict[str, Any], preset: str) -> dict[str, Any]:
    """An error row that says which preset produced it (its keys first, as in every row)."""
    return {"instance_id": row["instance_id"], "run": row.get("run"), "preset": preset, **row}


def _ranking(preparer: PreparerBase, inst: dict[str, Any], notes: Notes, item: Item
             ) -> Prepared | None:
    """The ranking input of a finished instance; a failure there costs the row its ranking
    block (said in its warnings), not the row."""
    if preparer.ranker is None or item.planned is None or item.gold is None:
        return None
    try:
        return prepare_ranking(preparer.ranker, inst, notes, item.planned.table, item.gold,
                               item.traj)
    except (InstanceError, OSError, RepoError):
        raise
    except Exception as exc:  # one instance's ranking must not stop a run
        inst.pop("ranking", None)
        notes.warnings.append(f"ranked metrics not computed: {type(exc).__name__}: {exc}")
        return None


def score(items: Sequence[Item], preparer: PreparerBase, *, run: str, final_policy: str,
          resolved: ResolvedTable, text: bool = False, views: bool = False
          ) -> list[dict[str, Any]]:
    """The rows of ``items``, in order. ``views``: each scored row also carries its views
    sidecar record under :data:`ctxeval.evaluation.output.views_sidecar.ROW_KEY` (taken off before
    writing)."""
    preset = preparer.name
    ready: list[tuple[Item, dict[str, Any], Notes, dict[str, Any] | None,
                      dict[str, Any] | None, Prepared | None]] = []
    rows: list[dict[str, Any] | None] = []
    for item in items:
        if item.planned is None:
            assert item.row is not None
            row = _with_preset(item.row, preset)
            if preparer.ranker is not None and item.gold is not None:
                # a localiser's output whose repository is missing: the ranked levels that
                # need no repository (its other metrics stay missing, its status an error)
                block = preparer.ranker.without_repository(item.gold, item.traj)
                if block is not None:
                    row["ranking"] = block
            rows.append(row)
            continue
        assert item.gold is not None
        try:
            inst, notes = preparer.finish(item.planned)
            ranked = _ranking(preparer, inst, notes, item)
        except InstanceError as exc:
            rows.append(_with_preset(error_row(item.instance_id, run, exc.kind, exc.message,
                                               pred_file=item.pred_file), preset))
            continue
        except (OSError, RepoError) as exc:
            rows.append(_with_preset(error_row(item.instance_id, run, "repo_read_failed",
                                               str(exc), pred_file=item.pred_file), preset))
            continue
        extra = text_metrics(item.gold, item.traj, inst, notes, item.snap) if text else None
        record = views_record(item.gold, item.traj, inst, notes, run=run, preset=preset,
                              status=item.status,
                              definitions=definitions_from(item.snap, preparer)) \
            if views else None
        ready.append((item, inst, notes, extra, record, ranked))
        rows.append(None)
    results = iter(_core.evaluate_batch([r[1] for r in ready], preparer.preset, 1)
                   if ready else [])
    made = iter(ready)
    out: list[dict[str, Any]] = []
    for row in rows:
        if row is not None:
            out.append(row)
            continue
        item, _inst, notes, extra, record, ranked = next(made)
        assert item.gold is not None
        metrics = next(results)
        row = make_row(item.gold, item.traj, run, preset, final_policy, notes, metrics,
                       item.status, item.pred_file, item.reason,
                       resolved.get(item.instance_id))
        if ranked is not None:
            row["ranking"] = ranking_block(metrics.get("ranking"), ranked, item.traj)
        if extra is not None:
            row["text"] = extra
        if record is not None:
            row[ROW_KEY] = record
        out.append(row)
    return out
