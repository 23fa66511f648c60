"""``ctxeval evaluate --engine ray``: the same evaluation as a Ray Data pipeline.

Past one machine (RL training runs: a million rollouts over a few dozen repositories), the
evaluation is spread over a Ray cluster; the rows are the local engine's, in input order.

* **units**: the driver lists every run's inputs as the local engine does (files, walked
  directories, globs; and inputs on any filesystem pyarrow opens: ``s3://``, ``gs://``,
  ``file://``), and Parquet trajectory datasets (one trajectory per row, the agent's raw record
  in one column) one row group at a time. A unit is the smallest piece that the local engine
  would read on its own, tagged with its place in the input order.
* **actors**: an actor pool (``ray.data.Dataset.map_batches`` with a class) runs plan →
  extract → score on each unit with a warm :class:`~ctxeval.evaluation.run.Evaluator`: its
  repository readers (``--repos``, a path every node sees, or ``--fetch``), its in-memory
  definitions and the definition cache directory (which may be shared storage) live as long
  as the actor. The stages stay fused in the actor: a planned instance holds open readers of
  its repository, which do not travel between processes, and the extract stage's work is
  mostly already in the cache.
* **output**: a Parquet ``--out`` (``.parquet``, ``.pq``) is a **dataset directory**
  (:mod:`ctxeval.evaluation.output.results_dataset`): each actor writes each unit's rows as a
  part file, and sends back only each row's run, instance, input and status. A JSONL ``--out``
  or standard output: the actors send the rows, and the driver writes them (one core).
* **driver**: the units' reports come back in input order (Ray Data's ``preserve_order``);
  the driver applies what only a whole run knows (an unreadable input named after an instance
  an earlier input covered gives no row; one row per run and instance; ``--all-gold`` rows,
  which it makes and writes as a part of their own), moves each part into the dataset (a
  rename; a rewrite only when it drops a row), writes the ``.meta.json`` and sums the summary.

A unit is re-run whole when its actor dies (Ray restarts the actor and retries the task), and
its rows are delivered once: no row is lost or duplicated.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import AdapterError, CtxevalError, InputError, Problem
from ..model import Trajectory
from ..reading.adapters import ReadOptions, dataset
from ..reading.adapters.dataset import row_trajectories
from ..reading.inputs import list_inputs
from ..truth.gold import GoldSet, load_gold
from .output.destination import Destination
from .output.meta import command_line
from .output.outfile import views_name
from .output.results import RowWriter, finite
from .output.results_dataset import (
    DatasetOutput,
    run_end_part,
    unit_part,
    write_part,
    write_views,
)
from .output.views_sidecar import ROW_KEY
from .prepare.preparer import FinalPolicy
from .ranking import DEFAULT_RANKING, RankingSettings
from .run import RunSpec, Summary, _Progress, settings_of, start
from .scorer import Scorer

#: Most units one actor call evaluates (see :func:`_results`).
UNITS_PER_CALL = 16
EXTRA_HINT = 'the Ray engine needs the ray extra: pip install "ctxeval[ray]"'


def _is_uri(spec: str) -> bool:
    return "://" in spec


def _is_dataset(spec: str) -> bool:
    return spec.rstrip("/").lower().endswith((".parquet", ".pq"))


def _filesystem(uri: str) -> tuple[Any, str]:
    from pyarrow import fs

    try:
        return fs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot open the filesystem of {uri}: {exc}", path=uri) from exc


def _remote_files(uri: str) -> list[tuple[str, bool]] | None:
    """The files under a URI, sorted, as (uri, explicit); None when nothing is there."""
    from pyarrow import fs

    filesystem, path = _filesystem(uri)
    info = filesystem.get_file_info(path)
    if info.type == fs.FileType.NotFound:
        return None
    if info.type == fs.FileType.File:
        return [(uri, True)]
    scheme = uri[: uri.index("://") + 3]
    found = filesystem.get_file_info(fs.FileSelector(path, recursive=True))
    root = path.rstrip("/") + "/"
    keep = []
    for f in found:
        rel = f.path[len(root):] if f.path.startswith(root) else f.base_name
        if f.type == fs.FileType.File and not any(p.startswith(".") for p in rel.split("/")):
            keep.append(scheme + f.path.lstrip("/") if scheme != "file://" else
                        "file://" + f.path)
    return [(u, False) for u in sorted(keep)]


def _fetch_local(uri: str, into: Path) -> Path:
    """A remote file copied into ``into`` under its own name."""
    filesystem, path = _filesystem(uri)
    dest = into / Path(path).name
    with filesystem.open_input_stream(path) as src, dest.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return dest


def _row_groups(spec: str) -> list[tuple[str, int]]:
    """(file, row group) of a Parquet dataset (a file or a directory of files), in order."""
    import pyarrow.parquet as pq

    if _is_uri(spec):
        filesystem = _filesystem(spec)[0]
        files = [u for u, _ in _remote_files(spec) or [] if _is_dataset(u)]
    else:
        filesystem, files = None, [spec]
    out = []
    for f in files:
        local = _filesystem(f)[1] if _is_uri(f) else f
        pf = pq.ParquetFile(local, filesystem=filesystem)
        if dataset.RECORD_COLUMN not in pf.schema_arrow.names:
            raise InputError(f"not a trajectory dataset: no column {dataset.RECORD_COLUMN!r} "
                             "holding the records", path=f)
        out.extend((f, k) for k in range(pf.metadata.num_row_groups))
    return out


def plan_units(runs: Sequence[RunSpec], fmt: str | None) -> list[dict[str, Any]]:
    """Every unit of work, in input order: what one actor call evaluates."""
    units: list[dict[str, Any]] = []
    for r, spec in enumerate(runs):
        for given in spec.inputs:
            s = str(given)
            if _is_dataset(s) and _is_uri(s):
                units.extend({"run": r, "kind": "dataset", "path": f, "group": g}
                             for f, g in _row_groups(s))
            elif _is_uri(s):
                files = _remote_files(s)
                if files is None:
                    units.append({"run": r, "kind": "missing", "path": s})
                units.extend({"run": r, "kind": "remote", "path": u, "explicit": e}
                             for u, e in files or [])
            else:
                for item in list_inputs([s], fmt):
                    if isinstance(item, Problem):
                        units.append({"run": r, "kind": "missing", "path": s})
                    elif fmt in (None, dataset.FORMAT) and _is_dataset(str(item[0])) \
                            and _dataset_file(item[0]):
                        units.extend({"run": r, "kind": "dataset", "path": str(item[0]),
                                      "group": g} for _, g in _row_groups(str(item[0])))
                    else:
                        units.append({"run": r, "kind": "file", "path": str(item[0]),
                                      "explicit": item[1]})
    return units


def _dataset_file(path: Path) -> bool:
    """Whether a local file is a trajectory dataset (read a row group per unit)."""
    try:
        with path.open("rb") as fh:
            return dataset.detect(path, fh.read(4))
    except OSError:
        return False


def _problems(items: Sequence[Problem]) -> list[dict[str, Any]]:
    return [p.to_json() for p in items]


def _problem(obj: dict[str, Any]) -> Problem:
    return Problem(obj["kind"], obj["message"], path=obj.get("path"), line=obj.get("line"),
                   field=obj.get("field"))


class UnitEvaluator:
    """One actor's state: a warm evaluator, and how each kind of unit is read. Also usable
    without Ray (the tests check a unit's rows against the local engine's this way)."""

    def __init__(self, gold: GoldSet, runs: Sequence[RunSpec], *, repos: str | None,
                 fetch: bool, preset: str, final_policy: FinalPolicy, fmt: str | None,
                 text: bool, cache_dir: str | None, incremental: bool,
                 skip: set[tuple[str, str]],
                 on_unit: Callable[[dict[str, Any]], None] | None = None,
                 git_timeout: float | None = None, parts: str | None = None,
                 generation: int = 0, views: bool = False, split_runs: bool = True,
                 ranking: RankingSettings | None = DEFAULT_RANKING) -> None:
        self.runs = list(runs)
        #: Where this actor writes each unit's rows as a part file (a dataset ``--out``,
        #: :mod:`ctxeval.evaluation.output.results_dataset`); None: the rows go back to the
        #: driver.
        self.parts = Path(parts) if parts is not None else None
        self.generation = generation
        #: Whether a part ends where a run does (``--all-gold``: the driver's part of a run's
        #: failure rows goes between).
        self.split_runs = split_runs
        self.fmt = fmt
        self.preset = preset
        self.skip = skip
        self.on_unit = on_unit
        self._failure = False
        # The in-process scorer's warm state: the gold, repository readers, definitions.
        self.scorer = Scorer(gold, repos, preset=preset, final=final_policy, fetch=fetch,
                             cache_dir=cache_dir, incremental=incremental, text=text,
                             git_timeout=git_timeout, ranking=ranking)
        self.ev = self.scorer.evaluator
        #: ``--views``: rows carry their views record, written beside the unit's part.
        self.ev.views = views
        self.records = self.scorer.records

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        """Ray Data's call: a batch of units (``seq``, ``unit``) → their rows and reports."""
        seqs, rows, infos = [], [], []
        # With a dataset --out: one part per call, named by its first unit with rows; with
        # --all-gold, one per run among the call's units (a run's --all-gold part then sorts
        # between them). Parts of a few hundred rows, not one per unit: a part's footer
        # describes every column (tens of kB), which a part of 20 rows would mostly be.
        group: dict[str, Any] | None = None
        for seq, unit in zip(batch["seq"], batch["unit"], strict=True):
            u = orjson.loads(unit)
            got, info = self.unit(u)
            seqs.append(int(seq))
            if self.parts is None:
                rows.append(b"".join(orjson.dumps(r) + b"\n" for r in got))
            else:
                marks = [r.pop(ROW_KEY, None) for r in got]
                if got:
                    if group is None or (self.split_runs and group["run"] != u["run"]):
                        self._write_group(group)
                        group = {"run": u["run"], "rows": [], "records": [],
                                 "name": unit_part(self.generation, int(seq))}
                    # as JSON would hold them (no NaN), as in the local engine's file
                    group["rows"].extend(finite(r) for r in got)
                    group["records"].extend(m for m in marks if m is not None)
                    info["part"] = group["name"]
                info["keys"] = [_keys(r, m is not None) for r, m in zip(got, marks,
                                                                       strict=True)]
                rows.append(b"")
            infos.append(orjson.dumps(info).decode())
        self._write_group(group)
        return {"seq": seqs, "rows": rows, "info": infos}

    def _write_group(self, group: dict[str, Any] | None) -> None:
        if group is None or self.parts is None:
            return
        if group["records"]:  # the views part first: a part in place has its views
            write_views(self.parts / views_name(group["name"]), group["records"])
        write_part(self.parts / group["name"], group["rows"])

    def unit(self, unit: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The rows of one unit, in order, and what the run's summary needs of it."""
        if self.on_unit is not None:
            self.on_unit(unit)
        spec = self.runs[unit["run"]]
        summary = Summary()
        self._failure = False
        before = {k: dict(c) if c is not None else None for k, c in self._counters().items()}
        if unit["kind"] == "dataset":
            rows = self._dataset(spec.name, unit, summary)
        else:
            rows = self._file(spec, unit, summary)
        info: dict[str, Any] = {
            "unreadable": _problems(summary.unreadable), "failure": self._failure,
            "without_gold": summary.without_gold, "duplicates": summary.duplicates,
            "skipped": summary.skipped_resume, "notes": self.ev.notes}
        for name, now in self._counters().items():
            was = before[name]
            info[name] = None if now is None or was is None else \
                {k: v - was.get(k, 0) for k, v in now.items()}
        return rows, info

    def _counters(self) -> dict[str, dict[str, int] | None]:
        """This actor's running counts, by the name a unit's report gives its share: how
        definitions were found, and the disk cache's hits and writes of definitions and of
        commits' file lists (None without a disk cache); the driver adds them up."""
        disk, listings = self.ev.symbols.disk, self.scorer.repos.listings
        return {"stats": self.ev.symbols.stats,
                "disk_stats": disk.stats if disk is not None else None,
                "listing_stats": listings.stats if listings is not None else None}

    def _file(self, spec: RunSpec, unit: dict[str, Any], summary: Summary
              ) -> list[dict[str, Any]]:
        given = unit["path"]
        if unit["kind"] == "missing":
            listed = [Problem("missing_input", "no such file, directory or glob match",
                              path=given)]
        elif unit["kind"] == "remote":
            # One directory per remote input, removed when it is read: Ray ends actors
            # without running their clean-up, so nothing may outlive the unit.
            slot = Path(tempfile.mkdtemp(prefix="ctxeval-ray-"))
            try:
                local = _fetch_local(given, slot)
                listed = [(local, bool(unit["explicit"]))]
                rows = self._run(spec, summary, listed)
            finally:
                shutil.rmtree(slot, ignore_errors=True)
            return _renamed(rows, summary, str(local), given)
        else:
            listed = [(Path(given), bool(unit["explicit"]))]
        return self._run(spec, summary, listed)

    def _run(self, spec: RunSpec, summary: Summary, listed: list[Any]) -> list[dict[str, Any]]:
        """The local engine on one listed input. Rows without a trajectory behind them are
        the failure row of an unreadable input (:attr:`_failure`), which the driver keeps
        only when no earlier input of the run covered that instance."""
        counter = _Progress(sys.stderr, False)
        rows = list(self.ev.run(RunSpec(spec.name, [], spec.results), summary, fmt=self.fmt,
                                skip=self.skip, listed=listed, progress=counter))
        self._failure = bool(rows) and counter.instances == 0
        return rows

    def _dataset(self, run: str, unit: dict[str, Any], summary: Summary
                 ) -> list[dict[str, Any]]:
        """One row group of a trajectory dataset, read as the local engine reads the whole
        file (:mod:`ctxeval.reading.adapters.dataset`): a bad row is reported and skipped, the rows
        name the dataset as their ``pred_file``."""
        import pyarrow.parquet as pq

        path = unit["path"]
        filesystem, local = _filesystem(path) if _is_uri(path) else (None, path)
        pf = pq.ParquetFile(local, filesystem=filesystem)
        names = set(pf.schema_arrow.names)
        columns = [c for c in (dataset.RECORD_COLUMN, "instance_id", "name") if c in names]
        table = pf.read_row_group(unit["group"], columns=columns)
        first = sum(pf.metadata.row_group(k).num_rows for k in range(unit["group"]))
        opts = ReadOptions(preset=self.preset, run=run)
        trajs: list[Trajectory] = []
        for k, rec in enumerate(table.to_pylist()):
            got = row_trajectories(self.records, rec, first + k, path, opts)
            if isinstance(got, AdapterError):
                summary.unreadable.append(got.to_problem())
                continue
            for traj in got:
                if (run, traj.instance_id) in self.skip:
                    summary.skipped_resume += 1
                    continue
                if self.ev.gold.get(traj.instance_id) is None:
                    summary.without_gold.append(traj.instance_id)
                trajs.append(traj)
        return self.ev.rows_of(trajs, run, pred_file=path) if trajs else []

    def close(self) -> None:
        self.scorer.close()


def _keys(row: dict[str, Any], views: bool = False) -> dict[str, Any]:
    """What the driver needs of a row an actor wrote into a part: to decide whether the local
    engine would write it (:meth:`_Runs.keep`) and to count it in the summary; ``v``: the row
    has a record in the unit's views part."""
    out = {k: row[k] for k in ("instance_id", "gold_instance_id", "pred_file", "status")
           if k in row}
    if row.get("status") == "error":
        out["error"] = row.get("error")
    if views:
        out["v"] = True
    return out


def _renamed(rows: list[dict[str, Any]], summary: Summary, local: str, uri: str
             ) -> list[dict[str, Any]]:
    """Rows and problems of a file read from a local copy, naming the file by its URI."""
    for row in rows:
        if row.get("pred_file") == local:
            row["pred_file"] = uri
    summary.unreadable = [Problem(p.kind, p.message, path=uri if p.path == local else p.path,
                                  line=p.line, field=p.field) for p in summary.unreadable]
    return rows


class _Runs:
    """What the driver keeps per run while the units come back in order."""

    def __init__(self, gold: GoldSet, name: str = "", preset: str = "strict") -> None:
        self.gold = gold
        self.name = name
        #: The ContextBench evaluator scores a repeated record too; its preset keeps the rows.
        self.keep_duplicates = preset == "contextbench"
        self.covered: set[str] = set()
        #: Instance -> the input and unit of the run's row for it (one row per run and
        #: instance).
        self.seen: dict[str, tuple[str | None, int]] = {}
        self.duplicates: list[str] = []

    def keep(self, row: dict[str, Any], failure: bool, unit: int = -1) -> bool:
        """Whether a unit's row is one the local engine writes. A unit is evaluated without
        the run's earlier inputs: the failure row of an unreadable input (``failure``) named
        after an instance they covered is not written there, nor the row of a trajectory of
        an instance the run already has a row for (the first trajectory read counts)."""
        gold = self.gold.get(str(row.get("gold_instance_id") or row["instance_id"]))
        key = gold.instance_id if gold is not None else str(row["instance_id"])
        if key in self.seen:
            first, first_unit = self.seen[key]
            if failure:
                return False
            if first_unit != unit:  # a unit reports the duplicates within it itself
                self.duplicates.append(f"run {self.name}, instance {row['instance_id']}: "
                                       f"{row.get('pred_file')} (the row is {first}'s)")
            if not self.keep_duplicates:
                return False
        self.seen.setdefault(key, (row.get("pred_file"), unit))
        if gold is not None:
            self.covered.add(gold.instance_id)
        return True


def _ray():
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise CtxevalError(EXTRA_HINT) from exc
    return ray


def _localized_gold(gold: Sequence[str | Path], into: Path) -> tuple[list[str], dict[str, str]]:
    """Gold paths readable here: URIs copied into ``into``; and local name → URI."""
    out, names = [], {}
    for g in gold:
        s = str(g)
        if _is_uri(s):
            local = _fetch_local(s, Path(tempfile.mkdtemp(dir=into)))
            names[str(local)] = s
            out.append(str(local))
        else:
            out.append(s)
    return out, names


def _results(
    ray: Any, units: list[dict[str, Any]], actors: int, kwargs: dict[str, Any]
) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Each unit's rows and report, in input order, from an actor pool on the cluster."""
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    try:
        yield from _ordered(ray, units, actors, kwargs)
    finally:  # the process's other Ray Data work keeps its own settings
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved


def _ordered(
    ray: Any, units: list[dict[str, Any]], actors: int, kwargs: dict[str, Any]
) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """:func:`_results` under the settings it needs (input order kept)."""
    items = [{"seq": k, "unit": orjson.dumps(u).decode()} for k, u in enumerate(units)]
    # Units per actor call: one while there are few (every actor busy, a retry redoes
    # little), up to UNITS_PER_CALL when there are many (Ray's cost per task, a few
    # milliseconds over its processes, is then spread over hundreds of rows).
    per_call = max(1, min(UNITS_PER_CALL, len(items) // (8 * actors)))
    ds = ray.data.from_items(items, override_num_blocks=max(1, min(len(items) // per_call,
                                                                   64 * actors)))
    out = ds.map_batches(_Actor, fn_constructor_kwargs=kwargs, batch_size=per_call,
                         compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=1,
                         batch_format="numpy")
    expect = 0
    for rec in out.iter_rows():
        if int(rec["seq"]) != expect:  # order and completeness, whatever Ray did
            raise RuntimeError(f"the Ray pipeline returned unit {rec['seq']} where unit "
                               f"{expect} was due")
        expect += 1
        rows = [orjson.loads(line) for line in bytes(rec["rows"]).splitlines()]
        info = orjson.loads(rec["info"])
        yield info.pop("keys", rows), info
    if expect != len(units):
        raise RuntimeError(f"the Ray pipeline returned {expect} of {len(units)} units")


class _Actor(UnitEvaluator):
    """The actor class Ray Data instantiates (per actor, once)."""


def evaluate(*, gold: Sequence[str | Path], runs: Sequence[RunSpec], repos: str | Path | None,
             out: str | Path | None = None, preset: str = "strict",
             final_policy: FinalPolicy = "declared", all_gold: bool = False,
             jobs: int | None = None, fetch: bool = False, resume: bool = False,
             fmt: str | None = None, progress: bool = True, stream: IO[bytes] | None = None,
             argv: list[str] | None = None, text: bool = False,
             cache_dir: str | Path | None = None, incremental: bool = True,
             address: str | None = None,
             on_unit: Callable[[dict[str, Any]], None] | None = None,
             git_timeout: float | None = None, notices: bool | None = None,
             views: bool = False, ranking: RankingSettings | None = DEFAULT_RANKING
             ) -> Summary:
    """:func:`ctxeval.evaluation.run.evaluate` on a Ray cluster: the same rows, in the same
    order, in the same files. ``jobs``: actors (default: the cluster's CPUs); ``address``:
    the cluster to join (default: the running Ray instance, else a local one);
    ``on_unit`` is called in the actor before each unit (tests kill actors with it);
    ``views``: each actor writes the views records of its rows beside their part (needs a
    Parquet ``out``, a dataset)."""
    ray = _ray()
    t0 = time.monotonic()
    # Held before anything is read (:mod:`ctxeval.evaluation.output.destination`), as by the
    # local engine.
    dataset = out is not None and stream is None and \
        Path(out).suffix.lower() in (".parquet", ".pq")
    if out is not None and _is_uri(str(out)):
        raise InputError("--out must be a path the driver and every node see (shared "
                         "storage), not a URI: the actors write the dataset's parts there "
                         "and the driver moves them", path=str(out))
    if views and not dataset:
        raise InputError("--views with --engine ray needs a Parquet --out (results.parquet: "
                         "a dataset directory, whose parts the actors write with their views)",
                         path=str(out) if out is not None else None)
    dest: Any = DatasetOutput.open(out, resume=resume) if dataset else \
        Destination.open(out, stream=stream, resume=resume)
    scratch = Path(tempfile.mkdtemp(prefix="ctxeval-driver-"))
    try:
        local_gold, gold_names = _localized_gold(gold, scratch)
        gold_set = load_gold(local_gold)
        gold_set.sources = [(gold_names.get(p, p), h) for p, h in gold_set.sources]
        dest.meta_extra = {"command": command_line(argv),
                           "runs": [{"name": r.name, "inputs": list(r.inputs)} for r in runs]}
        summary, kept = start(gold_set, dest, settings_of(gold_set, preset=preset,
                                                          final_policy=final_policy,
                                                          text=text, fmt=fmt,
                                                          ranking=ranking),
                              say=progress if notices is None else notices)
        skip = kept.done()
        units = plan_units(runs, fmt)
        parts = dest.start() if dataset else None
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        actors = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actors = max(1, min(actors, len(units)))  # no actor without a unit to evaluate
        kwargs = {"gold": gold_set, "runs": list(runs),
                  "repos": str(repos) if repos is not None else None, "fetch": fetch,
                  "preset": preset, "final_policy": final_policy, "fmt": fmt, "text": text,
                  "cache_dir": str(cache_dir) if cache_dir is not None else None,
                  "incremental": incremental, "skip": skip,
                  "on_unit": on_unit, "git_timeout": git_timeout,
                  "parts": str(parts) if parts is not None else None,
                  "generation": dest.generation if dataset else 0, "views": views,
                  "split_runs": all_gold, "ranking": ranking}
        writer = RowWriter(dest)
        # Where each run's driver-made rows go in a dataset: before the next run's first unit.
        ends = [sum(1 for u in units if u["run"] <= r) for r in range(len(runs))]
        emit = _Emit(writer, dest if dataset else None, ends)
        moving = _Moving(dest if dataset else None)
        parts_run = -1
        bar = _Progress(sys.stderr, progress)
        bar.begin("ray", len(units))
        stats: dict[str, int] = {}
        disk_stats: dict[str, int] = {}
        listing_stats: dict[str, int] = {}
        covered_any: set[str] = set()
        tracked = [_Runs(gold_set, r.name, preset) for r in runs]
        local: UnitEvaluator | None = None
        # The driver's CPU from the pipeline's start to its last unit: this process (its own
        # loop, and Ray's threads in it: the streaming executor, fetching blocks), and its
        # main thread, before the first unit came back (Ray Data's imports, shipping the
        # actor class and the gold) and from then on (the work per unit and per row).
        cpu0, thread0, wall0 = _process_cpu(), time.thread_time(), time.monotonic()
        first_unit: float | None = None
        try:
            results = _results(ray, units, actors, kwargs) if units else iter(())
            done_run = -1
            for k, (unit, (rows, info)) in enumerate(zip(units, results, strict=False)):
                if first_unit is None:
                    first_unit = time.thread_time()
                r = unit["run"]
                if dataset and all_gold and r != parts_run:  # a part ends with its run, and
                    moving.flush()  # is moved in before the run's --all-gold part is written
                    parts_run = r
                while done_run < r - 1:  # runs without units of their own
                    done_run += 1
                    local = _close_run(done_run, runs, tracked, summary, all_gold, skip,
                                       emit, local, kwargs)
                done_run = max(done_run, r - 1)
                keep = [tracked[r].keep(row, info["failure"], k) for row in rows]
                for row, kept_row in zip(rows, keep, strict=True):
                    if kept_row:
                        if dataset:
                            writer.count(row)
                        else:
                            writer.write(row, parsed=True)
                        if (row.get("error") or {}).get("kind") == "missing_gold":
                            summary.without_gold.append(str(row["instance_id"]))
                if dataset and rows:
                    moving.add(info["part"], keep,
                               [f for f, row in zip(keep, rows, strict=True) if row.get("v")])
                summary.unreadable.extend(_problem(p) for p in info["unreadable"])
                summary.duplicates.extend(info.get("duplicates") or [])
                summary.notes.extend(n for n in info["notes"] if n not in summary.notes)
                for total, name in ((stats, "stats"), (disk_stats, "disk_stats"),
                                    (listing_stats, "listing_stats")):
                    for k, v in (info.get(name) or {}).items():
                        total[k] = total.get(k, 0) + v
                bar.instances += len(rows)
                bar.input_done()
            moving.flush()
            for r in range(done_run + 1, len(runs)):
                local = _close_run(r, runs, tracked, summary, all_gold, skip, emit, local,
                                   kwargs)
            writer.flush()
        finally:
            bar.done()
            if local is not None:
                local.close()
        thread1 = time.thread_time()
        driver_cpu = {"process_cpu_s": round(_process_cpu() - cpu0, 3),
                      "main_thread_cpu_s": round(thread1 - thread0, 3),
                      "main_thread_before_first_unit_cpu_s":
                          round((first_unit or thread1) - thread0, 3),
                      "main_thread_from_first_unit_cpu_s":
                          round(thread1 - (first_unit or thread1), 3),
                      "wall_s": round(time.monotonic() - wall0, 3)}
        for t in tracked:
            covered_any |= t.covered
            summary.duplicates.extend(t.duplicates)
        summary.rows = writer.counts
        summary.errors = writer.errors
        summary.uncovered_by_any = sum(1 for g in gold_set.instances
                                       if g.instance_id not in covered_any)
        summary.seconds = time.monotonic() - t0
        dest.finish({"engine": {"name": "ray", "actors": actors, "units": len(units),
                                "output": "dataset" if dataset else "driver",
                                "driver": driver_cpu},
                     "symbol_stats": stats,
                     "symbol_cache": {
                         "disk": cache_dir is not None, "incremental": incremental,
                         # the actors' counts added up (as the local engine's, one process)
                         "disk_stats": disk_stats if cache_dir is not None else None,
                         "listing_stats": listing_stats if cache_dir is not None else None}})
        return summary
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        dest.close()


class _Moving:
    """The part being decided: the keep flags of its units' rows gathered in order, until its
    last unit; then it is moved into the dataset (:meth:`DatasetOutput.take`)."""

    def __init__(self, dataset: DatasetOutput | None) -> None:
        self.dataset = dataset
        self.name: str | None = None
        self.keep: list[bool] = []
        self.views: list[bool] = []

    def add(self, name: str, keep: list[bool], views: list[bool]) -> None:
        if name != self.name:
            self.flush()
            self.name = name
        self.keep.extend(keep)
        self.views.extend(views)

    def flush(self) -> None:
        if self.name is not None and self.dataset is not None:
            self.dataset.take(self.name, self.keep, self.views)
        self.name, self.keep, self.views = None, [], []


class _Emit:
    """Where the driver's own rows go: through the writer (a file, a stream), or, for a
    dataset, into a part of their own at the end of their run (and counted)."""

    def __init__(self, writer: RowWriter, dataset: DatasetOutput | None, ends: list[int]
                 ) -> None:
        self.writer = writer
        self.dataset = dataset
        self.ends = ends

    def rows(self, r: int, rows: list[dict[str, Any]]) -> None:
        if self.dataset is None:
            for row in rows:
                self.writer.write(row)
            return
        self.dataset.write(run_end_part(self.dataset.generation, self.ends[r], r), rows)
        for row in rows:
            self.writer.count(row)


def _process_cpu() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _close_run(r: int, runs: Sequence[RunSpec], tracked: list[_Runs], summary: Summary,
               all_gold: bool, skip: set[tuple[str, str]], emit: _Emit,
               local: UnitEvaluator | None, kwargs: dict[str, Any]) -> UnitEvaluator | None:
    """A run's last rows (``--all-gold``: a failure row per gold instance it lacks, scored
    here: they need no trajectory) and its line of the summary."""
    name = runs[r].name
    t = tracked[r]
    if all_gold:
        missing = [g.instance_id for g in t.gold.instances
                   if g.instance_id not in t.covered and (name, g.instance_id) not in skip]
        if missing:
            local = local or UnitEvaluator(**{**kwargs, "parts": None})
            made: list[dict[str, Any]] = []
            for k in range(0, len(missing), 64):
                chunk = missing[k:k + 64]
                made.extend(local.ev.rows_of([], name, failed=[
                    (gid, "no trajectory for this instance") for gid in chunk]))
                t.covered.update(chunk)
            emit.rows(r, made)
    summary.uncovered[name] = sum(1 for g in t.gold.instances
                                  if g.instance_id not in t.covered)
    return local
