"""SWE-agent ``<id>.patch_context.txt``: the declared context alone (``File:`` / ``Lines: a-b``).

There are no steps and no model patch. Preset ``contextbench`` makes the declaration the single
final step, exactly as the reference parses it (and fails where it fails, e.g. on a
comma-separated ``Lines:`` value); preset ``strict`` reads it leniently as the final context of a
trajectory without steps.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Trajectory
from . import ReadOptions
from .contextbench import (
    CbStep,
    cb_patch_context,
    cb_trajectory,
    is_contextbench,
    plain_trajectory,
    read_text,
    strict_patch_context,
    swapped,
)

FORMAT = "sweagent-patch-context-txt"
PRIORITY = 10
SUFFIX = "patch_context.txt"


def detect(path: Path, head: bytes) -> bool:
    """A file named ``*patch_context.txt`` (the reference routes on this suffix)."""
    return path.is_file() and path.name.endswith(SUFFIX)


def instance_id_of(path: Path) -> str:
    """The parent directory's name when it looks like an id (has ``__``), else the file stem."""
    parent = path.parent.name
    if parent and "__" in parent:
        return parent
    return path.name.replace(".patch_context.txt", "")


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    text = read_text(path)
    if is_contextbench(options):
        parsed = cb_patch_context(text, path=path)
        final = CbStep(files=sorted(parsed),
                       spans=[(f, a, b) for f, rs in parsed.items() for a, b in rs])
        return [cb_trajectory(instance_id_of(path), [], final, options=options, source=path,
                              agent="swe-agent")]
    warnings: list[str] = []
    final_views = swapped(strict_patch_context(text, warnings))
    return [plain_trajectory(instance_id_of(path), [], final_views, options=options,
                             source=path, agent="swe-agent", warnings=warnings)]
