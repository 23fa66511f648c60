"""SWE-bench records as gold: the gold patch's edit locations stand in for the gold context.

SWE-bench has no annotated context, only the fix; the lines the fix edits are the least an agent
had to see, so they are the gold (``gold_kind="patch"``, so reports can say it is a proxy).
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath
from typing import Any

from ...errors import PatchError
from ...linesets import line_runs
from ...model import GoldInstance, View
from ..patches import EditLocations, edit_locations
from .common import BAD, WARN, RowCtx, opt_str

_EXT_LANG = {
    ".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".java": "java", ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".cs": "c_sharp", ".php": "php", ".rb": "ruby", ".kt": "kotlin", ".scala": "scala",
    ".swift": "swift",
}


def is_swebench(rec: dict[str, Any]) -> bool:
    return "patch" in rec and ("instance_id" in rec or "repo" in rec)


def patch_views(patch: str, *, origin: str | None = None) -> list[View]:
    """The patch's edit locations as views (:func:`location_views`), at its hunks' header
    numbers: the evaluator, which has the base files, moves a hunk that applies at an offset
    (:func:`ctxeval.truth.locations.placed_locations`)."""
    return location_views(edit_locations(patch, origin=origin))


def location_views(locs: EditLocations) -> list[View]:
    """Edit locations as views, consecutive lines merged. A file without base lines (created,
    binary, mode-only) is a file-only view: it counts at file level only."""
    views: list[View] = []
    for path, fe in locs.files.items():
        if not fe.lines:
            views.append(View(path, None, None))
        views += [View(path, s, e) for s, e in line_runs(list(fe.lines))]
    return views


def _language(views: list[View]) -> str | None:
    langs = Counter(_EXT_LANG.get(PurePosixPath(v.file).suffix.lower()) for v in views)
    langs.pop(None, None)
    return langs.most_common(1)[0][0] if langs else None


def parse_swebench(rec: dict[str, Any], ctx: RowCtx) -> GoldInstance | None:
    """One SWE-bench record, or None (reported) without an id or a readable patch."""
    iid = opt_str(rec.get("instance_id"))
    if iid is None:
        ctx.report(BAD, "missing or empty 'instance_id'; instance left out", "instance_id")
        return None
    patch = rec.get("patch")
    if not isinstance(patch, str) or not patch.strip():
        ctx.report(BAD, f"{iid} has no gold patch; instance left out", "patch")
        return None
    try:
        views = patch_views(patch, origin=ctx.path)
    except PatchError as exc:
        ctx.report(BAD, f"gold patch of {iid} cannot be read: {exc.message}; instance left out",
                   "patch")
        return None
    if not views:
        ctx.report(BAD, f"gold patch of {iid} edits no file; instance left out", "patch")
        return None
    for key in ("repo", "base_commit"):
        if opt_str(rec.get(key)) is None:
            ctx.report(WARN, f"missing '{key}' for {iid}", key)
    aliases = rec.get("aliases") if isinstance(rec.get("aliases"), list) else []
    return GoldInstance(
        instance_id=iid,
        repo=opt_str(rec.get("repo")),
        base_commit=opt_str(rec.get("base_commit")),
        context=views,
        patch=patch,
        language=opt_str(rec.get("language")) or _language(views),
        source=opt_str(rec.get("source")) or "SWE-bench",
        aliases=[a for a in aliases if isinstance(a, str) and a and a != iid],
        gold_kind="patch",
        context_text=[],
        origin=ctx.path,
    )
