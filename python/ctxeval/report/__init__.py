"""Reports: the statistics are computed once per run (:func:`summarise`); each output format
is a view of that summary."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from .. import _core
from ..results import finite, read_rows

GRANS = ("file", "symbol", "span", "line")

#: (column, label) of the leaderboard table, in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("file.coverage", "File cov"), ("file.precision", "File prec"), ("file.f1", "File F1"),
    ("symbol.coverage", "Sym cov"), ("symbol.precision", "Sym prec"), ("symbol.f1", "Sym F1"),
    ("span.coverage", "Span cov"), ("span.precision", "Span prec"), ("span.f1", "Span F1"),
    ("line.coverage", "Line cov"), ("line.precision", "Line prec"), ("line.f1", "Line F1"),
    ("editloc.recall", "EditLoc rec"), ("editloc.precision", "EditLoc prec"),
    ("auc.line", "AUC line"), ("redundancy.line", "Red. line"),
    ("files", "#files"), ("lines", "#lines"), ("steps", "steps"),
)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def summarise(rows: Sequence[dict[str, Any]], *, micro: bool = False) -> dict[str, Any]:
    """Per-run aggregates of ok and agent-failure rows (errors are left out and counted)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    errors: dict[str, int] = {}
    preset = "strict"
    for r in rows:
        run = str(r.get("run"))
        if r.get("status") == "error":
            errors[run] = errors.get(run, 0) + 1
            runs.setdefault(run, [])
            continue
        preset = r.get("preset", preset)
        runs.setdefault(run, []).append(r)
    out: dict[str, Any] = {}
    for run, rs in runs.items():
        s: dict[str, Any] = {"n": len(rs), "errors": errors.get(run, 0),
                             "agent_failures": sum(r.get("status") == "agent_failure"
                                                   for r in rs)}
        for g in GRANS:
            finals = [r["final"][g] for r in rs if r.get("final")]
            if micro:
                sc = _core.score(sum(f["intersection"] for f in finals),
                                 sum(f["gold_size"] for f in finals),
                                 sum(f["pred_size"] for f in finals), preset)
                for k in ("coverage", "precision", "f1"):
                    s[f"{g}.{k}"] = sc[k] if finals else None
            else:
                for k in ("coverage", "precision", "f1"):
                    s[f"{g}.{k}"] = _mean(f.get(k) for f in finals)
            s[f"auc.{g}"] = _mean(r["trajectory"]["auc_coverage"][g] for r in rs
                                  if r.get("trajectory"))
            s[f"redundancy.{g}"] = _mean(r["trajectory"]["redundancy"][g] for r in rs
                                         if r.get("trajectory"))
        edits = [r["editloc"] for r in rs if r.get("editloc")]
        s["editloc.recall"] = _mean(e.get("recall") for e in edits)
        s["editloc.precision"] = _mean(e.get("precision") for e in edits)
        s["files"] = _mean(r["final"]["file"]["pred_size"] for r in rs if r.get("final"))
        s["lines"] = _mean(r["final"]["line"]["pred_size"] for r in rs if r.get("final"))
        s["steps"] = _mean(r.get("num_steps") for r in rs)
        resolved = [r.get("resolved") for r in rs if r.get("resolved") is not None]
        s["resolved_rate"] = (sum(bool(x) for x in resolved) / len(resolved)) if resolved else None
        out[run] = s
    return out


def _fmt(v: Any, key: str) -> str:
    if v is None:
        return "-"
    if key in ("n", "errors"):
        return str(v)
    if key in ("files", "lines", "steps"):
        return f"{v:.1f}"
    return f"{v:.3f}"


def _table(summary: dict[str, Any], markdown: bool) -> str:
    header = ["run", *(label for _, label in COLUMNS)]
    body = [[run, *(_fmt(s.get(k), k) for k, _ in COLUMNS)] for run, s in summary.items()]
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines) + "\n"
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row) for row in body]
    return "\n".join(lines) + "\n"


def render_report(paths: Sequence[str | Path], *, fmt: str = "table", micro: bool = False) -> str:
    rows = [r for p in paths for r in read_rows(p)]
    summary = summarise(rows, micro=micro)
    if fmt == "json":
        return orjson.dumps(finite(summary), option=orjson.OPT_INDENT_2).decode() + "\n"
    note = "micro averages" if micro else "macro means over instances"
    return _table(summary, markdown=(fmt == "md")) + f"({note}; errors left out)\n"
