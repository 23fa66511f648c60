"""Time to the first new row of ``ctxeval evaluate --resume`` on a large existing output.

A scheduler that kills a job every few seconds leaves it no progress unless ``--resume`` gets
to new rows quickly. The workload (``benchmarks/workload.py``) is evaluated once whole; the
output is then cut to its first ``--keep`` rows (1,240 by default) and resumed, JSONL and
Parquet, and the time from the start of the command to the first new row on disk is taken. The
baseline, in the same process, is the same command starting on an empty output: its time to the
first row (loading gold, starting git, the first batch). The ratio says what the rows already
there cost.

    python benchmarks/resume.py [--instances 250] [--runs 5] [--keep 1240] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import child_env
from workload import generate


def _command(wl: Path, out: Path, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "ctxeval", "evaluate", "--gold", str(wl / "gold.jsonl"),
           "--repos", str(wl / "repos"), "--out", str(out), "-q", "--no-cache", *extra]
    for r in sorted((wl / "runs").glob("*.jsonl")):
        cmd += ["--run", f"{r.stem}={r}"]
    return cmd


def _rows_in(out: Path) -> int:
    """Whole rows on disk: the lines of a JSONL output, or of a Parquet output's journal."""
    path = out if out.suffix == ".jsonl" else out.with_name(out.name + ".partial")
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def first_new_row(wl: Path, out: Path, have: int, *extra: str) -> float:
    """Seconds from the start of the command until a row beyond the ``have`` rows already
    there is on disk; the command is then stopped."""
    t = time.perf_counter()
    proc = subprocess.Popen(_command(wl, out, *extra), env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while _rows_in(out) <= have:
            if proc.poll() is not None:
                raise SystemExit(f"the evaluation ended first: {proc.stderr.read().decode()}")
            time.sleep(0.002)
        return time.perf_counter() - t
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=250)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=int, default=1240, help="rows already in the output")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per figure (best kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--formats", nargs="+", default=[".jsonl", ".parquet"],
                    choices=[".jsonl", ".parquet"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxeval-resume-") as tmp_s:
        tmp = Path(tmp_s)
        wl = tmp / "wl"
        generate(wl, instances=a.instances, runs=a.runs, repos=4, seed=a.seed)
        full = tmp / "full.jsonl"
        subprocess.run(_command(wl, full), check=True, env=child_env())
        lines = full.read_bytes().splitlines(keepends=True)
        if len(lines) <= a.keep:
            raise SystemExit(f"the workload has {len(lines)} rows: give more --instances")
        kept = b"".join(lines[:a.keep])
        print(f"workload: {len(lines)} rows; resumed with {a.keep} kept "
              f"({len(kept) / 1e6:.1f} MB of JSONL)")
        for suffix in a.formats:
            fresh = tmp / f"fresh{suffix}"
            base = []
            for _ in range(a.repeat):
                for p in tmp.glob(f"fresh{suffix}*"):
                    p.unlink()
                base.append(first_new_row(wl, fresh, 0))
            out = tmp / f"resumed{suffix}"
            if suffix == ".jsonl":
                out.write_bytes(kept)
            else:  # a complete Parquet output of the kept rows, as an earlier run leaves it
                _parquet_of(kept, out)
            saved = tmp / "saved"
            shutil.copy(out, saved)
            resumed = []
            for _ in range(a.repeat):
                for p in tmp.glob(f"resumed{suffix}*"):
                    p.unlink()
                shutil.copy(saved, out)
                resumed.append(first_new_row(wl, out, a.keep, "--resume"))
            b, r = min(base), min(resumed)
            print(f"{suffix[1:]:8s} first row of a fresh run {b:6.2f}s; first new row of "
                  f"--resume over {a.keep} rows {r:6.2f}s; ratio {r / b:5.2f}")


def _parquet_of(kept: bytes, out: Path) -> None:
    """A Parquet results file holding the rows of ``kept`` (JSONL)."""
    import orjson
    import pyarrow.parquet as pq

    from ctxeval.evaluation.output.results_parquet import SCHEMA, rows_to_table

    rows = [orjson.loads(line) for line in kept.splitlines()]
    pq.write_table(rows_to_table(rows).cast(SCHEMA), out)


if __name__ == "__main__":
    main()
