"""Neutral gold JSONL (``spec/gold-and-repos.md`` 1): ctxeval's own format, read as written."""

from __future__ import annotations

from typing import Any

from ...model import GoldInstance
from .common import BAD, WARN, RowCtx, opt_str, parse_items


def is_neutral(rec: dict[str, Any]) -> bool:
    return "gold_context" in rec and not isinstance(rec.get("gold_context"), str)


def parse_neutral(rec: dict[str, Any], ctx: RowCtx) -> GoldInstance | None:
    """One neutral row, or None (reported) when it has no id or no readable context."""
    iid = opt_str(rec.get("instance_id"))
    if iid is None:
        ctx.report(BAD, "missing or empty 'instance_id'; instance left out", "instance_id")
        return None
    raw = rec.get("gold_context")
    if not isinstance(raw, list):
        ctx.report(BAD, f"'gold_context' of {iid} is not a list; instance left out",
                   "gold_context")
        return None
    views, texts = parse_items(raw, ctx, "gold_context")
    if raw and not views:
        ctx.report(BAD, f"no usable gold context item for {iid}; instance left out",
                   "gold_context")
        return None
    for key in ("repo", "base_commit"):
        if opt_str(rec.get(key)) is None:
            ctx.report(WARN, f"missing '{key}' for {iid}", key)
    aliases_raw = rec.get("aliases") or []
    aliases = [a for a in aliases_raw if isinstance(a, str) and a and a != iid] \
        if isinstance(aliases_raw, list) else []
    kind = rec.get("gold_kind")
    return GoldInstance(
        instance_id=iid,
        repo=opt_str(rec.get("repo")),
        base_commit=opt_str(rec.get("base_commit")),
        context=views,
        patch=opt_str(rec.get("patch")),
        language=opt_str(rec.get("language")),
        source=opt_str(rec.get("source")),
        aliases=aliases,
        gold_kind="patch" if kind == "patch" else "context",
        context_text=texts,
        origin=ctx.path,
    )
