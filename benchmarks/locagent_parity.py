"""Run LocAgent's own metric code on the project's LocAgent cases and write what it printed.

    python benchmarks/locagent_parity.py --python VENV/bin/python --source LOCAGENT_DIR \
        [--out fixtures/locagent/expected.json]

``LOCAGENT_DIR`` is a checkout of ``gersteinlab/LocAgent`` (its ``evaluation/eval_metric.py``
and ``util/``, unmodified); ``VENV`` a Python 3.12 environment with its requirements' torch,
pandas and datasets (``fixtures/locagent/README.md`` says which versions). The driver imports
``evaluation.eval_metric`` there and calls, on ``fixtures/locagent``:

- ``cal_metrics_w_file`` (the gold of ``gt_location.jsonl``, ``file_changes``; its default
  ``filter_list``, LocAgent's ``filtered_instances``) and ``cal_metrics_w_dataset`` (the gold
  of ``dataset.jsonl``, ``edit_functions``, handed to it in place of ``load_dataset``), at each
  level, with LocAgent's own k lists and with others, all five metrics;
- ``eval_w_file`` and ``evaluate_results``, the functions its notebook makes the paper's table
  with, with their default k lists.

The numbers are written as LocAgent returns them (``round(value.item(), 4)``);
``tests/evaluation/test_locagent_parity.py`` checks ctxeval's ``locagent`` preset against
them at tolerance 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "locagent"

#: (level, key, k lists) of every call.
CALLS = [
    ("file", "found_files", [[1, 3, 5], [1, 2, 10], [4]]),
    ("module", "found_modules", [[5, 10], [1, 3, 5, 10], [2]]),
    ("function", "found_entities", [[5, 10], [1, 3, 5, 10], [2, 3]]),
]
METRICS = ["acc", "ndcg", "precision", "recall", "map"]

DRIVER = r"""
import json, sys
source, cases, calls, metrics = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), \
    json.loads(sys.argv[4])
sys.path.insert(0, source)
from evaluation import eval_metric as em

dataset = [json.loads(line) for line in open(f"{cases}/dataset.jsonl") if line.strip()]
em.load_dataset = lambda name, split=None: dataset   # the cases in place of the HF dataset
gt, loc = f"{cases}/gt_location.jsonl", f"{cases}/loc_outputs.jsonl"
out = {"cal_metrics_w_file": [], "cal_metrics_w_dataset": []}
for level, key, k_lists in calls:
    for ks in k_lists:
        out["cal_metrics_w_file"].append({"level": level, "key": key, "k": ks,
            "result": em.cal_metrics_w_file(gt, loc, key, level, ks, metrics=metrics)})
        out["cal_metrics_w_dataset"].append({"level": level, "key": key, "k": ks,
            "result": em.cal_metrics_w_dataset(loc, key, level, "cases", "test", ks,
                                                metrics)})
keys = {"file": "found_files", "module": "found_modules", "function": "found_entities"}
table = lambda df: {f"{a}.{b}": float(df[(a, b)].iloc[0]) for a, b in df.columns}
out["eval_w_file"] = table(em.eval_w_file(gt, loc, keys))
out["evaluate_results"] = table(em.evaluate_results(loc, keys, dataset="cases",
                                                    metrics=metrics))
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="the Python of LocAgent's environment")
    ap.add_argument("--source", required=True, help="a checkout of gersteinlab/LocAgent")
    ap.add_argument("--out", default=str(CASES / "expected.json"))
    args = ap.parse_args(argv)
    calls = [[level, key, ks] for level, key, ks in CALLS]
    done = subprocess.run(
        [args.python, "-c", DRIVER, args.source, str(CASES), json.dumps(calls),
         json.dumps(METRICS)],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return done.returncode
    result = json.loads(done.stdout.strip().splitlines()[-1])
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
