"""Time to the first new row of ``ctxeval evaluate --resume`` on a large existing output.

A scheduler that kills a job every few seconds leaves it no progress unless ``--resume`` gets
to new rows quickly. The workload (``benchmarks/workload.py``) is evaluated once whole; the
output is then cut to its first ``--keep`` rows (1,240 by default) and resumed, JSONL and
Parquet (a complete Parquet output of the kept rows), and the time from the start of the
command to the first new row on disk is taken. The baseline, in the same process, is a fresh
evaluation of exactly the work left (the runs' files holding only the trajectories whose rows
are not kept): its first row is the same instance's, so the ratio is what the rows already there
cost. Wall and CPU seconds (user and system, of the ctxeval process) are both given: on a
machine shared with other work the CPU figure is the steadier.

    python benchmarks/resume.py [--instances 250] [--runs 5] [--keep 1240] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import child_env
from workload import generate


def _command(wl: Path, out: Path, *extra: str, runs: str = "runs") -> list[str]:
    cmd = [sys.executable, "-m", "ctxeval", "evaluate", "--gold", str(wl / "gold.jsonl"),
           "--repos", str(wl / "repos"), "--out", str(out), "-q", "--no-cache", *extra]
    for r in sorted((wl / runs).glob("*.jsonl")):
        cmd += ["--run", f"{r.stem}={r}"]
    return cmd


def _rest(wl: Path, kept: bytes) -> None:
    """``wl/rest/``: each run's file with only the trajectories whose rows are not kept."""
    import orjson

    done = {(r["run"], r["instance_id"]) for r in map(orjson.loads, kept.splitlines())}
    (wl / "rest").mkdir()
    for path in sorted((wl / "runs").glob("*.jsonl")):
        lines = [line for line in path.read_bytes().splitlines(keepends=True)
                 if (path.stem, orjson.loads(line)["instance_id"]) not in done]
        if lines:
            (wl / "rest" / path.name).write_bytes(b"".join(lines))


class _Rows:
    """Whole rows on disk, counted as they come: the lines of a JSONL output, or of a Parquet
    output's journal. Only the bytes added since the last look are read (reading 11 MB every
    few milliseconds would take the CPU the evaluation being timed needs)."""

    def __init__(self, out: Path) -> None:
        self.path = out if out.suffix == ".jsonl" else out.with_name(out.name + ".partial")
        self.offset = 0
        self.count = 0

    def __call__(self) -> int:
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return self.count
        if size < self.offset:  # truncated (a new run): count again
            self.offset = self.count = 0
        if size > self.offset:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read(size - self.offset)
            self.offset += len(chunk)
            self.count += chunk.count(b"\n")
        return self.count


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its threads (Linux /proc), children not
    included (the git readers do little before the first row)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_new_row(wl: Path, out: Path, have: int, *extra: str, runs: str = "runs"
                  ) -> tuple[float, float]:
    """(wall seconds, CPU seconds) from the start of the command until a row beyond the
    ``have`` rows already there is on disk; the command is then stopped. On a machine shared
    with other work the CPU seconds are the steadier figure."""
    rows = _Rows(out)
    t = time.perf_counter()
    proc = subprocess.Popen(_command(wl, out, *extra, runs=runs), env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while rows() <= have:
            if proc.poll() is not None:
                raise SystemExit(f"the evaluation ended first: {proc.stderr.read().decode()}")
            time.sleep(0.002)
        return time.perf_counter() - t, _cpu_seconds(proc.pid)
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
        _rest(wl, kept)
        for suffix in a.formats:
            fresh = tmp / f"fresh{suffix}"
            base = []
            for _ in range(a.repeat):
                for p in tmp.glob(f"fresh{suffix}*"):
                    p.unlink()
                base.append(first_new_row(wl, fresh, 0, runs="rest"))
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
                # a Parquet output's journal holds only the rows added to the complete file
                have = a.keep if suffix == ".jsonl" else 0
                resumed.append(first_new_row(wl, out, have, "--resume"))
            for k, what in ((0, "wall"), (1, "CPU")):
                b, r = min(x[k] for x in base), min(x[k] for x in resumed)
                print(f"{suffix[1:]:8s} {what:4s} first row of the work left, fresh {b:5.2f}s; "
                      f"first new row of --resume over {a.keep} rows {r:5.2f}s; "
                      f"ratio {r / b:5.2f}")


def _parquet_of(kept: bytes, out: Path) -> None:
    """A Parquet results file holding the rows of ``kept`` (JSONL)."""
    import orjson
    import pyarrow.parquet as pq

    from ctxeval.evaluation.output.results_parquet import SCHEMA, rows_to_table

    rows = [orjson.loads(line) for line in kept.splitlines()]
    pq.write_table(rows_to_table(rows).cast(SCHEMA), out)


if __name__ == "__main__":
    main()
