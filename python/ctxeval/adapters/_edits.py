"""Views after edits, for adapters that cannot map edited coordinates back to base lines.

After the agent changes a file, what it is shown of that file is in edited coordinates. An
adapter that knows the exact shape of each edit maps views back (SWE-agent's ``EditTracker``);
one that does not marks them post-edit so that they count at file level only (spec
``metrics.md``, "What a trajectory contributes").
"""

from __future__ import annotations

from dataclasses import replace

from ..model import Step


def mark_views_after_edits(steps: list[Step]) -> list[Step]:
    """Mark every view of a file edited by an earlier step ``post_edit`` (in place; returned)."""
    edited: set[str] = set()
    for step in steps:
        if edited:
            step.views = [replace(v, post_edit=True) if v.file in edited else v
                          for v in step.views]
        edited.update(step.edits)
    return steps
