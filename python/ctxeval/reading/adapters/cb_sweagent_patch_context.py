"""SWE-agent ``<id>.patch_context.txt``: the declared context alone (``File:`` / ``Lines: a-b``).

There are no steps and no model patch. Preset ``contextbench`` makes the declaration the single
final step, exactly as the reference parses it (and fails where it fails, e.g. on a
comma-separated ``Lines:`` value); preset ``strict`` reads it leniently as the final context of a
trajectory without steps.

The same declaration stored in a SWE-agent ``.traj`` (``info.patch_context``, written by
ContextBench's SWE-agent) is read here too, for the ``swe-agent`` adapter: under preset
``contextbench`` the reference routes every ``.traj`` file to that field alone
(:func:`read_traj_cb`), under ``strict`` it is the trajectory's declared final context
(:func:`traj_declared_context`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...model import Trajectory, View
from . import ReadOptions
from .contextbench import (
    CbStep,
    cb_patch_context,
    cb_trajectory,
    is_contextbench,
    load_json,
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


# --- SWE-agent ``.traj`` with ``info.patch_context`` ---------------------------------------------

TRAJ_SUFFIX = ".traj"


def traj_instance_id(path: Path) -> str:
    """The reference's id of a ``.traj``: the parent directory when it starts with
    ``instance_`` (SWE-bench Pro layouts), else the file name without ``.traj``."""
    parent = path.parent.name
    if parent.startswith("instance_"):
        return parent
    return path.name.replace(TRAJ_SUFFIX, "")


def read_traj_cb(path: Path, options: ReadOptions) -> Trajectory:
    """A ``.traj`` as the reference reads it: ``info.patch_context`` is the single final step.

    No step is read (the reference reads none from a ``.traj``); without a ``patch_context`` the
    final step is empty (``no_context_extracted``). Where the reference would raise (``info``
    not an object, ``patch_context`` neither a string nor empty), AdapterError names the field.
    The model patch is ``info.submission``.
    """
    data = load_json(path)
    text: Any = ""
    submission: Any = None
    if isinstance(data, dict) and "info" in data:
        info = data.get("info")
        if not isinstance(info, dict):
            raise AdapterError("must be an object (the reference raises AttributeError)",
                               path=str(path), field="info")
        text = info.get("patch_context", "")
        submission = info.get("submission")
    if text and not isinstance(text, str):
        raise AdapterError(f"must be a string, got {type(text).__name__} (the reference "
                           "raises AttributeError)", path=str(path), field="info.patch_context")
    parsed = cb_patch_context(text, path=path, field_name="info.patch_context") if text else {}
    final = CbStep(files=sorted(parsed),
                   spans=[(f, a, b) for f, rs in parsed.items() for a, b in rs])
    return cb_trajectory(traj_instance_id(path), [], final, options=options, source=path,
                         agent="swe-agent",
                         model_patch=submission if isinstance(submission, str) else None)


def traj_declared_context(info: dict[str, Any], warnings: list[str]) -> list[View] | None:
    """The final context a ``.traj`` declares (``info.patch_context``), read leniently, or None
    when it declares none."""
    text = info.get("patch_context")
    if not isinstance(text, str) or not text.strip():
        return None
    return swapped(strict_patch_context(text, warnings))
