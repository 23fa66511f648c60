"""Measure the ATIF reader against the hand annotations of the native trajectories.

Usage::

    python benchmarks/adapter_accuracy/atif_measure.py DIR [--details]

``DIR`` holds the annotated trajectories (as for ``measure.py``). Every annotated trajectory of
an agent Harbor converts to ATIF (mini-swe-agent, both message formats) is rendered as ATIF by
``atif_render.py``, read back by the ``atif`` adapter, and compared with the annotations written
for the native file, exactly as ``measure.py`` compares native readings: the ATIF rendering
carries the same observations, so what the agent was shown, and the annotation, is unchanged.
The native reading is compared too, and the steps where the two readings differ are counted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from atif_render import render
from measure import (
    DEFAULT_ANNOTATIONS,
    HEADER,
    Result,
    compare,
    normalize,
    read_one,
    row,
    sha256_of,
)

from ctxeval.reading.adapters import ReadOptions, atif

CONVERTED = ("mini-swe-agent",)


def _key(step, prefixes: list[str]):
    """A step with its paths in repository form: ATIF keeps no working directory, so the
    native ``/testbed/x`` is the rendering's ``x``."""
    return (step.tool, step.action,
            [(normalize(v.file, prefixes), v.start_line, v.end_line, v.post_edit, v.text)
             for v in step.views], [normalize(e, prefixes) for e in step.edits])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--annotations", type=Path, default=DEFAULT_ANNOTATIONS)
    ap.add_argument("--details", action="store_true")
    args = ap.parse_args(argv)
    ann = json.loads(args.annotations.read_text())
    total = Result("all", "atif", aggregate=True)
    differing = compared = 0
    print(HEADER)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in ann["trajectories"]:
            if entry["format"] not in CONVERTED:
                continue
            path = args.directory / entry["local_name"]
            if not path.exists() or sha256_of(path) != entry["sha256"]:
                print(f"skipped {entry['id']}: missing or other bytes", file=sys.stderr)
                continue
            _, native = read_one(path)
            out = Path(tmp) / "trajectory.json"
            out.write_text(json.dumps(render(json.loads(path.read_text()))))
            (via,) = atif.read(out, ReadOptions())
            res = compare(entry, via, skip_ambiguous=False)
            res.name = entry["id"]
            total.merge(res)
            print(row(res))
            if args.details:
                for d in res.diffs:
                    print("   ", d)
            prefixes = [*entry.get("path_prefixes", []), "/testbed/"]
            for a, b in zip(native.steps, via.steps, strict=False):
                compared += 1
                if _key(a, prefixes) != _key(b, prefixes):
                    differing += 1
                    if args.details:
                        print(f"    native/ATIF differ at step {a.index}: {a.action[:60]!r}")
            differing += abs(len(native.steps) - len(via.steps))
    print(row(total))
    print(f"native and ATIF readings: {compared} steps compared, {differing} differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
