"""LocAgent's published table from its released outputs, and the size of each difference
between the ``locagent`` and ``strict`` presets on them.

    python benchmarks/locagent_table.py LOC_OUTPUTS [--gold GOLD] [--repos DIR]

``LOC_OUTPUTS`` is ``evaluation/loc_output/locagent/claude_3-5/loc_outputs.jsonl`` of
``gersteinlab/LocAgent``; ``--gold`` the gold (default: the gold the outputs carry,
``meta_data.gt_file_changes``; or SWE-bench Lite's records, whose module and function gold
ctxeval derives from the patches and needs ``--repos``). It prints:

1. the table of each preset (the means of the rows, as ``ctxeval report --view localization``
   prints them), evaluated through ctxeval;
2. the differences one at a time, from ``locagent`` to ``strict``: the instances LocAgent
   leaves out, its arithmetic (Acc@k with the gold cut at k, Recall@k over the gold cut at the
   largest k, MAP@k over k, repeats counted), and the comparison of items as written against
   items resolved in the repository; each as the change of every table number and the count of
   instances it changes. The arithmetic is the native core's (``_core.rank_scores``) on the
   lists as the outputs and the gold give them.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ctxeval import _core, report
from ctxeval.evaluation.pipeline import RunSpec, evaluate
from ctxeval.evaluation.ranking import LOCAGENT_FILTERED
from ctxeval.truth.gold import load_gold

TABLE = [("file", "acc", 1), ("file", "acc", 3), ("file", "acc", 5), ("module", "acc", 5),
         ("module", "acc", 10), ("function", "acc", 5), ("function", "acc", 10)]
EXTRA = [("file", "recall", 5), ("function", "recall", 10), ("function", "map", 5),
         ("module", "ndcg", 10), ("function", "mrr", 0)]
KEYS = {"file": "found_files", "module": "found_modules", "function": "found_entities"}
LEVEL_KS = {"file": [1, 3, 5], "module": [5, 10], "function": [5, 10]}


def _name(level: str, metric: str, k: int) -> str:
    return f"{level} {metric}" + (f"@{k}" if k else "")


def _rows(loc: Path, gold: Path, repos: Path | None, preset: str, tmp: Path
          ) -> list[dict[str, Any]]:
    out = tmp / f"{preset}.jsonl"
    evaluate(gold=[gold], runs=[RunSpec("locagent", [str(loc)])], repos=repos, out=out,
             preset=preset, all_gold=False, progress=False, cache_dir=None)
    return [json.loads(line) for line in out.read_text().splitlines()]


def _means(rows: list[dict[str, Any]]) -> dict[str, tuple[float | None, int]]:
    """(mean, n) of every table number over the rows where it is defined."""
    out = {}
    for level, metric, k in [*TABLE, *EXTRA]:
        key = "mrr" if metric == "mrr" else f"{metric}@{k}"
        vals = [r["ranking"][level][key] for r in rows
                if isinstance(r.get("ranking"), dict) and r["ranking"].get(level)
                and r["ranking"][level].get(key) is not None]
        out[_name(level, metric, k)] = (sum(vals) / len(vals) if vals else None, len(vals))
    return out


def _raw_means(loc: Path, gold: Path, rules: str, keep: Any) -> dict[str, Any]:
    """The table on the lists as written (no repository), under ``rules``; ``keep(iid)``
    says which instances count. Per instance values too, to count what a change moves."""
    preds = {json.loads(x)["instance_id"]: json.loads(x) for x in loc.read_text().splitlines()}
    golds = load_gold([gold])
    per: dict[str, dict[str, float]] = {}
    for inst in golds.instances:
        if not keep(inst.instance_id) or inst.locations is None:
            continue
        levels = {"file": list(inst.locations.files), "module": list(inst.locations.modules),
                  "function": list(inst.locations.functions)}
        rec = preds.get(inst.instance_id, {})
        ids: dict[str, int] = {}
        vals: dict[str, float] = {}
        for level, gold_items in levels.items():
            if not gold_items:
                continue
            pred = rec.get(KEYS[level]) or []
            ks = sorted({k for lv, _m, k in [*TABLE, *EXTRA] if lv == level and k}
                        | set(LEVEL_KS[level]))
            if rules == "locagent":  # the largest k of LocAgent's own list for the level
                ks = [k for k in ks if k <= max(LEVEL_KS[level])] or ks
            got = _core.rank_scores([ids.setdefault(x, len(ids)) for x in pred],
                                    [ids.setdefault(x, len(ids)) for x in gold_items], ks, rules)
            for at in got["at"]:
                for m in ("acc", "recall", "ndcg", "map"):
                    vals[_name(level, m, at["k"])] = at[m]
            vals[_name(level, "mrr", 0)] = got["mrr"]
        per[inst.instance_id] = vals
    means = {}
    for level, metric, k in [*TABLE, *EXTRA]:
        name = _name(level, metric, k)
        v = [x[name] for x in per.values() if name in x]
        means[name] = (sum(v) / len(v) if v else None, len(v))
    return {"means": means, "per": per}


def _moved(a: dict[str, Any], b: dict[str, Any], name: str) -> int:
    return sum(1 for iid, x in a["per"].items()
               if name in x and iid in b["per"] and b["per"][iid].get(name) != x[name])


def _fmt(v: tuple[float | None, int]) -> str:
    return "-" if v[0] is None else f"{v[0]:.4f} (n={v[1]})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("loc_outputs", type=Path)
    ap.add_argument("--gold", type=Path)
    ap.add_argument("--repos", type=Path)
    args = ap.parse_args(argv)
    gold = args.gold or args.loc_outputs
    with tempfile.TemporaryDirectory(prefix="ctxeval-locagent-") as tmp_s:
        tmp = Path(tmp_s)
        tables = {p: _means(_rows(args.loc_outputs, gold, args.repos, p, tmp))
                  for p in ("locagent", "strict")}
        paper = report(tmp / "locagent.jsonl", view="localization").tables[0]
    print("1. the table through ctxeval (means; n = instances with a value)")
    for name in tables["locagent"]:
        print(f"  {name:<20} locagent {_fmt(tables['locagent'][name]):<22} "
              f"strict {_fmt(tables['strict'][name])}")
    print(f"  (localization report, locagent: {paper.rows[0].cells['file.acc@1'].value:.4f} "
          "file Acc@1)")
    if gold != args.loc_outputs and args.gold is not None and \
            load_gold([gold]).instances[0].locations is None:
        print("2. (the decomposition needs gold with locations: run with the outputs' own gold)")
        return 0
    steps = [
        ("LocAgent (its arithmetic, its instances)", "locagent",
         lambda i: i not in LOCAGENT_FILTERED),
        ("+ the 26 filtered instances", "locagent", lambda i: True),
        ("+ the IR arithmetic (strict), items as written", "strict", lambda i: True),
    ]
    results = [(label, _raw_means(args.loc_outputs, gold, rules, keep))
               for label, rules, keep in steps]
    print("2. one difference at a time (lists as written, no repository)")
    for name in tables["locagent"]:
        cells = []
        for k, (_label, r) in enumerate(results):
            v = r["means"][name]
            if not k:
                moved = ""
            elif v[1] != results[k - 1][1]["means"][name][1]:
                moved = f", {v[1] - results[k - 1][1]['means'][name][1]:+d} instances"
            else:
                moved = f", {_moved(r, results[k - 1][1], name)} changed"
            cells.append(f"{_fmt(v)}{moved}")
        print(f"  {name:<20} " + " | ".join(cells))
    print("   columns: " + " | ".join(label for label, _ in results))
    longer = {}
    for inst in load_gold([gold]).instances:
        loc = inst.locations
        if loc is None:
            continue
        for level, items in (("file", loc.files), ("module", loc.modules),
                             ("function", loc.functions)):
            for k in LEVEL_KS[level]:
                longer[(level, k)] = longer.get((level, k), 0) + (len(set(items)) > k)
    print("   instances whose gold is longer than k (where Acc@k's rules differ): "
          + ", ".join(f"{lv}@{k} {n}" for (lv, k), n in longer.items()))
    print("   last step, resolving items in the repository (strict, through ctxeval) minus the "
          "strict arithmetic on items as written:")
    for name in tables["strict"]:
        a, b = tables["strict"][name], results[-1][1]["means"][name]
        if a[0] is not None and b[0] is not None:
            print(f"  {name:<20} {a[0] - b[0]:+.4f} (n {a[1]} / {b[1]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
