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


# ---------------------------------------------------------------- ranked metrics

def _discount(i: int) -> float:
    import math

    return 1.0 / math.log2(i + 2)


def rank_strict(pred: list[int], gold: list[int], ks: list[int]) -> dict:
    """The IR literature's ranked metrics, written from their definitions on Python sets:
    distinct predictions in first-seen order, gold a set; undefined (None) without gold."""
    p = list(dict.fromkeys(pred))
    g = set(gold)
    out: dict = {"at": [], "gold_size": len(g), "pred_size": len(p)}
    if not g:
        out["mrr"] = out["first_hit"] = None
        out["at"] = [dict.fromkeys(("acc", "recall", "precision", "ndcg", "map")) | {"k": k}
                     for k in ks]
        return out
    ranks = [i + 1 for i, x in enumerate(p) if x in g]
    out["first_hit"] = ranks[0] if ranks else None
    out["mrr"] = 1 / ranks[0] if ranks else 0.0
    for k in ks:
        if k == 0:
            out["at"].append(dict.fromkeys(("acc", "recall", "precision", "ndcg", "map"))
                             | {"k": 0})
            continue
        top = p[:k]
        found = g & set(top)
        dcg = sum(_discount(i) for i, x in enumerate(top) if x in g)
        idcg = sum(_discount(i) for i in range(min(k, len(g))))
        precisions = [len(g & set(top[:i + 1])) / (i + 1)
                      for i, x in enumerate(top) if x in g]
        out["at"].append({"k": k, "acc": 1.0 if found == g else 0.0,
                          "recall": len(found) / len(g), "precision": len(found) / k,
                          "ndcg": dcg / idcg, "map": sum(precisions) / min(k, len(g))})
    return out


def rank_locagent(pred: list[str | int], gold: list[str | int], ks: list[int]) -> dict:
    """LocAgent's ``evaluation/eval_metric.py`` arithmetic for one instance, transcribed with
    lists for its tensors (the labels it builds, then each metric's own lines): gold labels
    ``min(len(gold), max_k)`` ones, prediction labels ``l in gold`` over the first ``max_k``
    predictions. An instance with an empty gold list is one LocAgent skips (all None)."""
    max_k = max(ks)
    out: dict = {"at": [], "gold_size": len(gold), "pred_size": len(pred)}
    hits_all = [1 if x in gold else 0 for x in pred]
    first = next((i + 1 for i, h in enumerate(hits_all) if h), None)
    if not gold:
        out["mrr"] = out["first_hit"] = None
        out["at"] = [dict.fromkeys(("acc", "recall", "precision", "ndcg", "map")) | {"k": k}
                     for k in ks]
        return out
    out["first_hit"] = first
    out["mrr"] = 1 / first if first else 0.0
    gt_labels = [1 if i < len(gold) else 0 for i in range(max_k)]
    pred_labels = [0] * max_k
    for i, x in enumerate(pred[:max_k]):
        if x in gold:
            pred_labels[i] = 1

    def dcg(labels: list[int]) -> float:
        return sum(t / __import__("math").log2(i + 2) for i, t in enumerate(labels))

    for k in ks:
        p, t = pred_labels[:k], gt_labels[:k]
        relevant, total_k = sum(p), sum(t)
        idcg = dcg(t)
        ap, count = 0.0, 0
        for j in range(k):
            if pred_labels[j] == 1:
                count += 1
                ap += count / (j + 1)
        out["at"].append({"k": k, "acc": 1.0 if relevant == total_k else 0.0,
                          "recall": relevant / sum(gt_labels) if sum(gt_labels) else 0.0,
                          "precision": relevant / k,
                          "ndcg": dcg(p) / idcg if idcg else 0.0, "map": ap / k})
    return out


def first_seen(files: list[OracleFile], steps: list[dict], file_items: list[int] | None,
               symbol_items: list[list[int]] | None) -> list[tuple[int, int]]:
    """(item, step) in the order the steps first showed each item: a step's new files in the
    order its views name them (line views, then file views, then named symbols' files), then
    its new definitions by their file's place and their order in the file."""
    ids = symbol_ids(files)
    sym_file = {s: f for f, group in enumerate(ids) for s in group}
    seen_f: set[int] = set()
    seen_s: set[int] = set()
    seen_i: set[int] = set()
    out: list[tuple[int, int]] = []
    for t, vs in enumerate(steps, start=1):
        a = resolve(files, vs)
        named = [f for f, _s, _e in vs.get("lines", [])] + list(vs.get("files", [])) \
            + [f for f, _k in vs.get("symbols", [])]
        pos = {f: named.index(f) for f in named}
        new_f = sorted(a.files - seen_f, key=lambda f: (pos.get(f, 10**9), f))
        seen_f |= a.files
        new_s = sorted(a.symbols - seen_s, key=lambda s: (pos.get(sym_file[s], 10**9), s))
        seen_s |= a.symbols
        items = []
        if file_items is not None:
            items += [file_items[f] for f in new_f]
        if symbol_items is not None:
            items += [symbol_items[sym_file[s]][s - ids[sym_file[s]][0]] for s in new_s]
        for item in items:
            if item >= 0 and item not in seen_i:
                seen_i.add(item)
                out.append((item, t))
    return out


def budget(files: list[OracleFile], views: list[tuple[int, int, int | None]],
           gold: dict, lines: int) -> dict:
    """The first ``lines`` distinct lines the views show, in order (each view's lines in file
    order), against the gold's lines and files."""
    taken: list[tuple[int, int]] = []
    have: set[tuple[int, int]] = set()
    for vs in [{"lines": [v]} for v in views]:
        for atom in sorted(resolve(files, vs).lines):
            if len(taken) >= lines:
                break
            if atom not in have:
                have.add(atom)
                taken.append(atom)
    g = resolve(files, {"lines": gold.get("lines", [])}).lines
    gfiles = {f for f, _ in g}
    return {"lines": lines, "used": len(taken),
            "line": len(have & g) / len(g) if g else None,
            "file": len({f for f, _ in have} & gfiles) / len(gfiles) if gfiles else None}



def definition_owners(spans: list[tuple[int, int]], functions: list[bool]
                      ) -> tuple[list[int], list[int]]:
    """Per definition of a file, on Python sets: its holders are the definitions whose span
    holds its own (of equal spans, the first given holds the others); the module owner is the
    outermost holder (itself when none), the function owner the outermost function among the
    holders and itself (-1: none). For nested spans, as a tree's definitions are."""
    n = len(spans)

    def holds(j: int, i: int) -> bool:
        if spans[j] == spans[i]:
            return j < i
        return spans[j][0] <= spans[i][0] and spans[i][1] <= spans[j][1]

    def outermost(c: list[int]) -> int:
        return min(c, key=lambda j: (spans[j][0], -spans[j][1], j))

    module, function = [], []
    for i in range(n):
        holders = [j for j in range(n) if holds(j, i)]
        module.append(outermost(holders) if holders else i)
        fns = [j for j in [*holders, i] if functions[j]]
        function.append(outermost(fns) if fns else -1)
    return module, function
