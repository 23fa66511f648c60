"""ContextBench gold: the HF parquet files, the JSON/JSONL exports and ``annot.json`` trees.

The two parquet encodings of ``gold_context`` (a JSON list, or ``context0：`` text blocks with a
full-width colon) must give the same gold, and Multi-SWE-bench rows must be turned into
``owner/name`` plus repository-relative paths, or nothing downstream can find the files.

The instance id is the upstream id (``original_inst_id``, what agents' trajectories are named
by), and ContextBench's own id is an alias; either finds the instance.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...model import GoldInstance
from .common import BAD, WARN, RowCtx, opt_str, parse_items

#: keys only ContextBench records carry (neutral and SWE-bench records have none of them)
CB_KEYS = frozenset({"inst_id", "original_inst_id", "gold_ctx", "init_ctx", "add_ctx",
                     "repo_url", "commit"})

#: ContextBench's ``source`` column and id prefixes, mapped to benchmark names
SOURCES = {
    "verified": "Verified",
    "swe-bench-verified": "Verified",
    "multi": "Multi-SWE-bench",
    "multi-swe-bench": "Multi-SWE-bench",
    "poly": "SWE-PolyBench",
    "swe-polybench": "SWE-PolyBench",
    "pro": "SWE-bench-Pro",
    "swe-bench-pro": "SWE-bench-Pro",
}

_BLOCK_HEAD = re.compile(
    r"context(\d+)[：:][ \t]*\r?\nfile:[ \t]*(.*?)\r?\nstart_line:[ \t]*(.*?)\r?\n"
    r"end_line:[ \t]*(.*?)(?:\r?\n|$)")
_WORKSPACE_DIR = re.compile(r"^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+?)__[^/]+$")
_UPSTREAM_ID = re.compile(r"^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)-\d+$")
_GITHUB = re.compile(r"github\.com[/:]([^/\s]+)/([^/\s]+?)(?:\.git)?/?$")


def is_contextbench(rec: dict[str, Any]) -> bool:
    return bool(CB_KEYS & rec.keys()) or isinstance(rec.get("gold_context"), str)


def parse_text_blocks(text: str) -> list[dict[str, str]] | None:
    """The items of ``context0：\\nfile: …\\nstart_line: …\\nend_line: …\\n<code>`` blocks
    (separated by a blank line), or None when the text is not in that form at all."""
    if not text.strip():
        return []
    items: list[dict[str, str]] = []
    index = 0
    m = _BLOCK_HEAD.match(text)
    if m is None or int(m.group(1)) != 0:
        return None
    while m is not None:
        sep = re.compile(rf"\r?\n\r?\n(?=context{index + 1}[：:][ \t]*\r?\nfile:)")
        following = sep.search(text, m.end())
        end = following.start() if following else len(text)
        items.append({"file": m.group(2), "start_line": m.group(3), "end_line": m.group(4),
                      "content": text[m.end():end]})
        if following is None:
            break
        index += 1
        m = _BLOCK_HEAD.match(text, following.end())
        if m is None:
            return None
    return items


def normalize_path(path: str, ctx: RowCtx, fld: str) -> str | None:
    """A repository-relative path from an annotated one (``/testbed/…``, ``/workspace/<owner>
    __<repo>__<ver>/…``, absolute, ``./…``). A ``/workspace/<name>`` path with no repository
    directory is a file outside the repository: kept as ``<name>`` (as ContextBench does) with
    a warning."""
    p = path.replace("\\", "/").strip()
    if p.startswith("/testbed/"):
        return p[len("/testbed/"):]
    if p.startswith("/workspace/"):
        head, sep, tail = p[len("/workspace/"):].partition("/")
        if sep and tail:
            return tail
        ctx.report(WARN, f"{path!r} is outside any repository directory under /workspace; "
                   f"kept as {head!r}", fld)
        return head or None
    if p.startswith("/"):
        return p.lstrip("/")
    while p.startswith("./"):
        p = p[2:]
    return p


def contextbench_normalize_path(path: str) -> str:
    """ContextBench's own path normalisation, for the ``contextbench`` preset: as
    :func:`normalize_path`, except that a relative path loses *every* leading ``.`` and ``/``
    (``.size-limit.js`` becomes ``size-limit.js``) and nothing is reported."""
    if not path:
        return ""
    p = path.replace("\\", "/")
    if p.startswith("/testbed/"):
        return p[len("/testbed/"):]
    if p.startswith("/workspace/"):
        parts = p[len("/workspace/"):].split("/", 1)
        return parts[1] if len(parts) == 2 else parts[0]
    if p.startswith("/"):
        return p.lstrip("/")
    return p.lstrip("./")


def _benchmark_prefix(cb_id: str | None) -> str | None:
    """The benchmark a ContextBench id starts with (``SWE-PolyBench__python__…``), if any."""
    if cb_id and "__" in cb_id:
        head = cb_id.split("__", 1)[0].lower()
        if head in SOURCES:
            return head
    return None


def _source(rec: dict[str, Any], cb_id: str | None) -> str | None:
    raw = opt_str(rec.get("source")) or _benchmark_prefix(cb_id)
    if raw is None:
        return None
    return SOURCES.get(raw.lower(), raw)


def _language(rec: dict[str, Any], cb_id: str | None) -> str | None:
    lang = opt_str(rec.get("language"))
    if lang is None and cb_id and _benchmark_prefix(cb_id) and cb_id.count("__") >= 2:
        lang = cb_id.split("__")[1]
    return lang


def _repo(rec: dict[str, Any], ids: list[str], raw_files: list[str],
          ctx: RowCtx) -> str | None:
    """``owner/name``: from ``repo`` when it has an owner, else ``repo_url``, else the
    upstream id (``owner__name-123``), else a ``/workspace/<owner>__<name>__<ver>/`` path."""
    repo = opt_str(rec.get("repo"))
    if repo is not None:
        m = _GITHUB.search(repo)
        if m:
            return f"{m.group(1)}/{m.group(2)}"
        if "/" in repo.strip("/"):
            return repo.strip("/")
    url = opt_str(rec.get("repo_url"))
    if url is not None:
        m = _GITHUB.search(url)
        if m:
            return f"{m.group(1)}/{m.group(2)}"
    bare = repo.lower() if repo else None
    candidates: list[tuple[str, str]] = []
    for iid in ids:
        m = _UPSTREAM_ID.match(iid)
        if m:
            candidates.append((m.group(1), m.group(2)))
    for f in raw_files:
        if f.startswith("/workspace/"):
            m = _WORKSPACE_DIR.match(f[len("/workspace/"):].split("/", 1)[0])
            if m:
                candidates.append((m.group(1), m.group(2)))
    for owner, name in candidates:
        if bare is None or name.lower() == bare:
            return f"{owner}/{name}"
    if repo is not None:
        ctx.report(WARN, f"repository {repo!r} has no owner and none could be recovered", "repo")
    else:
        ctx.report(WARN, "missing 'repo'", "repo")
    return repo


def _context_items(rec: dict[str, Any], ctx: RowCtx) -> list[tuple[str, list[Any]]] | None:
    """The item lists with the field each came from, or None when unreadable (reported)."""
    init, add = rec.get("init_ctx"), rec.get("add_ctx")
    if (isinstance(init, list) and init) or (isinstance(add, list) and add):
        out = []
        for name, value in (("init_ctx", init), ("add_ctx", add)):
            if value is None:
                continue
            if not isinstance(value, list):
                ctx.report(BAD, f"'{name}' is not a list; ignored", name)
                continue
            out.append((name, value))
        return out
    for name in ("gold_ctx", "gold_context"):
        value = rec.get(name)
        if value is None:
            continue
        if isinstance(value, list):
            return [(name, value)]
        if isinstance(value, str):
            stripped = value.lstrip()
            if stripped.startswith("["):
                try:
                    decoded = json.loads(value)
                except ValueError as exc:
                    ctx.report(BAD, f"'{name}' is not valid JSON ({exc}); instance left out",
                               name)
                    return None
                if isinstance(decoded, list):
                    return [(name, decoded)]
            else:
                blocks = parse_text_blocks(value)
                if blocks is not None:
                    return [(name, blocks)]
        ctx.report(BAD, f"'{name}' is neither a list, a JSON list nor context text blocks; "
                   "instance left out", name)
        return None
    if isinstance(init, list) and isinstance(add, list):
        return [("init_ctx", [])]
    ctx.report(BAD, "no gold context ('gold_context', 'gold_ctx' or 'init_ctx'/'add_ctx'); "
               "instance left out", "gold_context")
    return None


def parse_contextbench(rec: dict[str, Any], ctx: RowCtx) -> GoldInstance | None:
    """One ContextBench record (parquet row, export row or ``annot.json``), or None."""
    cb_id = next((i for i in (opt_str(rec.get("inst_id")), opt_str(rec.get("instance_id")))
                  if _benchmark_prefix(i)), None)
    upstream = opt_str(rec.get("original_inst_id"))
    ids = [i for i in (upstream, opt_str(rec.get("inst_id")), opt_str(rec.get("instance_id")))
           if i]
    ids = list(dict.fromkeys(ids))
    if not ids:
        ctx.report(BAD, "no 'original_inst_id', 'inst_id' or 'instance_id'; instance left out",
                   "instance_id")
        return None
    lists = _context_items(rec, ctx)
    if lists is None:
        return None
    raw_files = [it.get("file") for _, items in lists for it in items
                 if isinstance(it, dict) and isinstance(it.get("file"), str)]
    views, texts = [], []
    for name, items in lists:
        v, t = parse_items(items, ctx, name, normalize_path)
        views += v
        texts += t
    if not views and any(items for _, items in lists):
        ctx.report(BAD, f"no usable gold context item for {ids[0]}; instance left out",
                   lists[0][0])
        return None
    commit = opt_str(rec.get("base_commit")) or opt_str(rec.get("commit"))
    if commit is None:
        ctx.report(WARN, f"missing 'base_commit'/'commit' for {ids[0]}", "base_commit")
    return GoldInstance(
        instance_id=ids[0],
        repo=_repo(rec, ids, raw_files, ctx),
        base_commit=commit,
        context=views,
        patch=opt_str(rec.get("patch")),
        language=_language(rec, cb_id),
        source=_source(rec, cb_id),
        aliases=ids[1:],
        gold_kind="context",
        context_text=texts,
        origin=ctx.path,
    )
