"""A small, obviously-correct model of the strict metrics, built on Python sets.

Every quantity is a set of atoms — (file, line) pairs, (file, byte) pairs, file ids, symbol ids —
so union, intersection and size are Python's own set operations. It is slow and only for tests:
the property tests drive the Rust engine against it on random files and trajectories.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def split_lines(data: bytes) -> list[tuple[int, int]]:
    """Half-open byte range of every line, newline included (written without the core)."""
    out = []
    start = 0
    for i, b in enumerate(data):
        if b == 0x0A:
            out.append((start, i + 1))
            start = i + 1
    if start < len(data):
        out.append((start, len(data)))
    return out


@dataclass
class OracleFile:
    data: bytes | None
    symbols: list[tuple[int, int]] = field(default_factory=list)

    @property
    def lines(self) -> list[tuple[int, int]]:
        return split_lines(self.data or b"")


@dataclass
class Atoms:
    files: set[int] = field(default_factory=set)
    symbols: set[int] = field(default_factory=set)
    bytes: set[tuple[int, int]] = field(default_factory=set)
    lines: set[tuple[int, int]] = field(default_factory=set)

    def sizes(self) -> dict[str, int]:
        return {"file": len(self.files), "symbol": len(self.symbols), "span": len(self.bytes),
                "line": len(self.lines)}

    def union(self, other: Atoms) -> Atoms:
        return Atoms(self.files | other.files, self.symbols | other.symbols,
                     self.bytes | other.bytes, self.lines | other.lines)

    def inter(self, other: Atoms) -> dict[str, int]:
        return {"file": len(self.files & other.files),
                "symbol": len(self.symbols & other.symbols),
                "span": len(self.bytes & other.bytes), "line": len(self.lines & other.lines)}


def symbol_ids(files: list[OracleFile]) -> list[list[int]]:
    ids, n = [], 0
    for f in files:
        ids.append(list(range(n, n + len(f.symbols))))
        n += len(f.symbols)
    return ids


def resolve(files: list[OracleFile], vs: dict) -> Atoms:
    """What a view set shows, atom by atom (strict preset)."""
    a = Atoms()
    ids = symbol_ids(files)
    for file, start, end in vs.get("lines", []):
        f = files[file]
        if f.data is None:
            continue
        lines = f.lines
        n = len(lines)
        if end is None:
            lo, hi = start, n
        else:
            lo, hi = min(start, end), max(start, end)
        shown = [ln for ln in range(max(lo, 1), min(hi, n) + 1)]
        if shown or (end is None and n == 0):
            a.files.add(file)
        for ln in shown:
            a.lines.add((file, ln))
            s, e = lines[ln - 1]
            a.bytes.update((file, b) for b in range(s, e))
    for file in vs.get("files", []):
        if files[file].data is not None:
            a.files.add(file)
    for file, k in vs.get("symbols", []):
        a.symbols.add(ids[file][k])
    if not vs.get("symbols_only"):
        for file, f in enumerate(files):
            for k, (s, e) in enumerate(f.symbols):
                if any((file, b) in a.bytes for b in range(s, e)):
                    a.symbols.add(ids[file][k])
    return a


def strict_score(inter: int, gold: int, pred: int) -> dict:
    cov = inter / gold if gold else None
    if pred:
        prec = inter / pred
    elif gold:
        prec = 0.0
    else:
        prec = None
    if cov is None or prec is None:
        f1 = None
    else:
        f1 = 2 * cov * prec / (cov + prec) if cov + prec else 0.0
    return {"coverage": cov, "precision": prec, "f1": f1, "intersection": inter,
            "gold_size": gold, "pred_size": pred}


GRANS = ("file", "symbol", "span", "line")


def evaluate(files: list[OracleFile], inst: dict) -> dict:
    """The strict result of one instance, computed from atoms."""
    gold = resolve(files, inst["gold"])
    gsize = gold.sizes()
    union = Atoms()
    per_step, viewed_total = [], dict.fromkeys(GRANS, 0)
    first = dict.fromkeys(GRANS)
    for t, vs in enumerate(inst["steps"], start=1):
        v = resolve(files, vs)
        for g, n in v.sizes().items():
            viewed_total[g] += n
        union = union.union(v)
        inter = union.inter(gold)
        per_step.append({g: (inter[g] / gsize[g] if gsize[g] else None) for g in GRANS})
        for g in GRANS:
            if first[g] is None and inter[g] > 0:
                first[g] = t
    T = len(per_step)
    auc = {}
    for g in GRANS:
        if not gsize[g]:
            auc[g] = None
        elif T == 0:
            auc[g] = 0.0
        else:
            auc[g] = sum(s[g] for s in per_step) / T
    usize = union.sizes()
    red = {g: (1 - usize[g] / viewed_total[g] if viewed_total[g] else 0.0) for g in GRANS}
    final = resolve(files, inst["final"]) if inst.get("final") is not None else union
    inter = final.inter(gold)
    fsize = final.sizes()
    seen = union.inter(gold)
    kept = {
        "file": len(union.files & gold.files & final.files),
        "symbol": len(union.symbols & gold.symbols & final.symbols),
        "span": len(union.bytes & gold.bytes & final.bytes),
        "line": len(union.lines & gold.lines & final.lines),
    }
    return {
        "num_steps": T,
        "final": {g: strict_score(inter[g], gsize[g], fsize[g]) for g in GRANS},
        "steps": per_step,
        "auc_coverage": auc,
        "redundancy": red,
        "first_gold_step": first,
        "seen_gold": seen,
        "evidence_drop": {g: seen[g] - kept[g] for g in GRANS},
    }
