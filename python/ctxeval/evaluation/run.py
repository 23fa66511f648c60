"""The evaluation of runs against a gold set: the stages driven over each run's inputs.

:class:`Evaluator` reads a run's inputs in order and turns them into batches (each input's
trajectories, a chunk at a time), and sends each batch through plan → extract → score
(:mod:`ctxeval.evaluation`), with a bounded window of batches in flight so that, with
``-j N``, the native threads extract one batch while this thread plans the next and scores the
one before.
Rows come out in input order. :func:`evaluate` is ``ctxeval evaluate``: it loads the gold,
writes the rows and the sidecar, and says what happened in a :class:`Summary`.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from ..errors import AdapterError, GoldError, Problem
from ..model import GoldInstance, Trajectory
from ..reading.adapters import ReadOptions
from ..reading.inputs import ReadResult, guess_instance_id, iter_input, list_inputs
from ..reading.resolved import ResolvedTable, load_resolved
from ..truth.cache import ListingCache
from ..truth.extraction import SymbolExtractor, SymbolSettings
from ..truth.gold import GoldSet, load_gold
from ..truth.repo import RepoCache
from ..truth.symbols import grammar_versions
from .extract import ThreadExtractor
from .output.destination import Destination
from .output.meta import Settings, command_line
from .output.results import RowWriter, error_row
from .output.resume_scan import Kept
from .plan import Item, needs, plan_item
from .prepare.preparer import FinalPolicy, Preparer, PreparerBase
from .ranking import DEFAULT_RANKING, Ranker, RankingSettings
from .score import score

#: Gold instances planned per batch where the run lists them itself (agent failures of
#: --all-gold).
BATCH = 64
#: Most trajectories of one input planned as one batch.
CHUNK = 16
#: Batches in flight per extraction thread before the oldest is scored once its definitions
#: are in, and at most (then this thread waits for the oldest). Only batches that sent blobs
#: to be extracted count towards the most: a batch whose files are all known or on their way
#: (a later run over the same instances) adds no work, and counting it let such batches fill
#: the window while the threads still had the first run's blobs before them, so that the next
#: new blobs were planned only once the threads had run dry.
AHEAD, MOST_AHEAD = 2, 8
#: Batches planned ahead per extraction thread at most, with blobs to extract or not: what
#: bounds the memory of the plans waiting to be scored.
MOST_PLANNED = 32
#: File bytes kept in memory per run (the rest is read again from git when needed).
REPO_CACHE_BYTES = 64 << 20
#: Set to a list by the ``ctxeval`` command (:func:`ctxeval.cli.run`), whose process ends as
#: soon as the command returns: each evaluation's state (its extractor's parse trees, the
#: blob, index and definition caches, 150 MB and more) is put here at its end and left to the
#: operating system, instead of being freed object by object (0.1 s of a cold evaluation of
#: the real history). None (the API, the tests): freed as usual.
kept_until_exit: list[object] | None = None


@dataclass(slots=True)
class RunSpec:
    """One named run: the inputs holding its trajectories, and optionally its results files
    (resolved status where the trajectories do not record it)."""

    name: str
    inputs: list[str]
    results: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Summary:
    """What an evaluation did, for the closing report and the exit status."""

    rows: dict[str, int] = field(default_factory=dict)
    errors: list[Problem] = field(default_factory=list)
    unreadable: list[Problem] = field(default_factory=list)
    without_gold: list[str] = field(default_factory=list)
    uncovered: dict[str, int] = field(default_factory=dict)
    #: Gold instances that no run had a trajectory for.
    uncovered_by_any: int = 0
    gold_problems: list[Problem] = field(default_factory=list)
    #: Rows kept from the output by --resume.
    skipped_resume: int = 0
    #: Rows of an earlier evaluation in the output that this one replaces (without --resume).
    replaced: int = 0
    seconds: float = 0.0
    #: What went wrong with the evaluator itself but changed no row (extraction that failed
    #: in the background and was done again in the calling thread).
    notes: list[str] = field(default_factory=list)
    #: Bytes of an unterminated last line (a hard crash mid-write) dropped by --resume.
    torn_bytes: int = 0
    #: Trajectories given no row: their run already had one for the instance (the first
    #: trajectory read of a (run, instance) is the one scored).
    duplicates: list[str] = field(default_factory=list)
    #: Whether they were scored all the same (preset contextbench, as its evaluator does).
    duplicates_scored: bool = False

    def lines(self) -> list[str]:
        r = self.rows
        out = [f"rows: {r.get('ok', 0)} ok, {r.get('agent_failure', 0)} agent failures, "
               f"{r.get('error', 0)} evaluator errors"
               + (f", {self.skipped_resume} kept from --resume" if self.skipped_resume else "")
               + f" ({self.seconds:.1f}s)"]
        by_kind: dict[str, int] = {}
        for p in self.errors:
            by_kind[p.kind] = by_kind.get(p.kind, 0) + 1
        for kind, n in sorted(by_kind.items()):
            out.append(f"  evaluator errors [{kind}]: {n}")
        for p in self.errors[:5]:
            out.append(f"    {p}")
        if self.unreadable:
            out.append(f"unreadable inputs: {len(self.unreadable)}")
            out.extend(f"  {p}" for p in self.unreadable[:10])
        if self.without_gold:
            out.append(f"trajectories without a gold row: {len(self.without_gold)}")
        if self.duplicates:
            out.append(f"duplicate trajectories, not scored (the first trajectory read of a run "
                       f"and instance is its row): {len(self.duplicates)}" if not
                       self.duplicates_scored else
                       f"duplicate trajectories, each scored as the ContextBench evaluator "
                       f"does (preset contextbench; report counts them all): "
                       f"{len(self.duplicates)}")
            out.extend(f"  {d}" for d in self.duplicates[:5])
        if self.uncovered_by_any:
            out.append(f"gold instances no run covered: {self.uncovered_by_any}")
        partial = {run: n for run, n in self.uncovered.items() if n > self.uncovered_by_any}
        if partial:
            out.append("gold instances without a trajectory, per run: "
                       + ", ".join(f"{run} {n}" for run, n in partial.items()))
        out.extend(f"note: {n}" for n in self.notes)
        if self.torn_bytes:
            out.append(f"note: --resume dropped an unfinished last line ({self.torn_bytes} "
                       "bytes, left by an evaluation that was killed); its row was evaluated "
                       "again")
        if self.gold_problems:
            out.append(f"gold problems (items dropped or changed): {len(self.gold_problems)}")
            out.extend(f"  {p}" for p in self.gold_problems[:5])
        return out


class _Progress:
    """A one-line progress bar with an ETA on a terminal; silent otherwise (pipes, CI)."""

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled and stream.isatty()
        self.start = time.monotonic()
        self.last = 0.0
        self.label = ""
        self.done_inputs = 0
        self.total_inputs = 0
        self.instances = 0

    def begin(self, label: str, total_inputs: int) -> None:
        self.label, self.total_inputs, self.done_inputs = label, total_inputs, 0
        self.start = time.monotonic()
        self.draw(force=True)

    def input_done(self) -> None:
        self.done_inputs += 1
        self.draw()

    def instance(self) -> None:
        self.instances += 1

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < 0.2):
            return
        self.last = now
        total = max(self.total_inputs, 1)
        frac = min(self.done_inputs / total, 1.0)
        bar = "#" * int(frac * 24)
        elapsed = now - self.start
        eta = f"ETA {elapsed / frac - elapsed:.0f}s" if frac > 0 else "ETA --"
        self.stream.write(f"\r{self.label}: [{bar:<24}] {self.done_inputs}/{self.total_inputs} "
                          f"inputs, {self.instances} instances, {eta}   ")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()


def make_preparer(symbols: SymbolExtractor, preset: str, final_policy: FinalPolicy,
                  ranking: RankingSettings | None = None) -> PreparerBase:
    """The preparer of a preset: ctxeval's own reading, or the ContextBench reference's
    (``locagent`` reads as ``strict``; only its ranking rules differ). ``ranking``: the rows'
    ranking block (None: none)."""
    prep: PreparerBase
    if preset == "contextbench":
        from .prepare.contextbench import ContextBenchPreparer

        prep = ContextBenchPreparer(symbols, preset, final_policy)
    elif preset == "locagent":
        prep = Preparer(symbols, "strict", final_policy)
        prep.name = "locagent"
    else:
        prep = Preparer(symbols, preset, final_policy)
    if ranking is not None:
        rules = "locagent" if preset == "locagent" else "strict"
        prep.ranker = Ranker(replace(ranking, rules=rules), symbols, prep.index_cache)
    return prep


@dataclass(slots=True)
class _Batch:
    """A part of one input (or of the gold listed by the run), planned: the items to score in
    order, then their rows, and what the run's summary needs to know."""

    items: list[Item] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: An unreadable input named after a gold instance: (gold id, input, reason), scored as an
    #: agent failure by the run unless the instance is covered already.
    failure: tuple[str, str, str] | None = None
    unreadable: Problem | None = None
    without_gold: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)
    #: Trajectories of an instance the run already has a row for: (instance, input, first).
    duplicates: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    skipped: int = 0
    instances: int = 0
    #: The last batch of its input (for the progress bar).
    input_done: bool = False
    #: The run the batch belongs to (scored with its settings).
    ctx: _RunContext | None = None
    #: The first batch of its run: (run name, inputs listed), for the progress bar.
    begins: tuple[str, int] | None = None


@dataclass(slots=True)
class _RunContext:
    """Per-run settings every input of the run is processed with."""

    name: str
    fmt: str | None
    #: Instances whose rows ``--resume`` keeps: not evaluated again.
    skip: frozenset[str]
    resolved: ResolvedTable
    #: Inputs ``--resume`` knows were read to their end: not read again.
    done_inputs: frozenset[str] = frozenset()
    #: Instance (the gold's id, else the trajectory's) -> the input of the run's first row for
    #: it: a later trajectory of the same instance is a duplicate and gets no row.
    seen: dict[str, str | None] = field(default_factory=dict)



class Evaluator:
    """Evaluates runs against one gold set; usable from Python as well as from the CLI.

    ``jobs`` is the number of native threads that extract definitions, sharded by path
    (parsing and naming run in the native core with the GIL released); this thread reads,
    plans and scores meanwhile, ``-j 1`` included. Rows come out in input order, identical
    whatever ``jobs`` is.
    """

    def __init__(self, gold: GoldSet, repos: RepoCache, *, preset: str = "strict",
                 final_policy: FinalPolicy = "declared", all_gold: bool = False,
                 jobs: int = 1, symbols: SymbolExtractor | None = None,
                 text: bool = False, views: bool = False,
                 ranking: RankingSettings | None = DEFAULT_RANKING) -> None:
        self.gold = gold
        self.repos = repos
        self.preset = preset
        self.final_policy = final_policy
        self.all_gold = all_gold
        self.jobs = jobs
        self.text = text
        #: Rows carry their views sidecar record (ctxeval.evaluation.output.views_sidecar), for
        #: ``--views``.
        self.views = views
        self.symbols = symbols or SymbolExtractor()
        self.preparer = make_preparer(self.symbols, preset, final_policy, ranking)
        #: Gold ids some run had a trajectory for (or, with all_gold, a row for).
        self.covered: set[str] = set()
        self._extractor: ThreadExtractor | None = None
        self._closed_notes: list[str] = []

    # -- plan --------------------------------------------------------------------------------

    def _plan(self, gold: GoldInstance, traj: Trajectory | None, run: str, status: str,
              pred_file: str | None, reason: str | None = None) -> Item:
        return plan_item(self.preparer, self.repos, gold, traj, run, status, pred_file, reason)

    def _stream(self, item: tuple[Path, bool] | Problem, ctx: _RunContext
                ) -> Iterator[_Batch | tuple[list[Trajectory], str]]:
        """One input as it is read: chunks of its trajectories (``(chunk, input)``), and the
        batches of what could not be read. A file none of whose records can be read is an
        unreadable input; a bad record among good ones is reported and skipped."""
        if isinstance(item, Problem):
            yield self._unreadable(ReadResult(Path(item.path or ""), problem=item))
            return
        got = iter_input(item[0], item[1], fmt=ctx.fmt,
                         options=ReadOptions(preset=self.preset, run=ctx.name, skip=ctx.skip))
        if got is None:
            return
        if isinstance(got, ReadResult):
            if got.problem is not None:
                yield self._unreadable(got)
                return
            records: Iterator[Trajectory | AdapterError] = iter(got.trajectories)
        else:
            records = got[1]
        pred_file = str(item[0])
        chunk: list[Trajectory] = []
        # The first batches are small, so that the extract stage has something to do early.
        limit = 2
        errors: list[AdapterError] = []
        readable = False
        for rec in records:
            if isinstance(rec, AdapterError):
                errors.append(rec)
                if readable:
                    yield _Batch(unreadable=rec.to_problem())
                continue
            if not readable:  # bad records before the first good one are reported now
                readable = True
                for err in errors:
                    yield _Batch(unreadable=err.to_problem())
            if rec.instance_id in ctx.skip:
                # kept by --resume: dropped here, so that the first batches of the work left
                # are small (the extract stage starts early) however many rows are kept
                continue
            chunk.append(rec)
            if len(chunk) >= limit:
                yield chunk, pred_file
                chunk = []
                limit = min(2 * limit, CHUNK)
        if chunk:
            yield chunk, pred_file
        if not readable and errors:
            yield self._unreadable(ReadResult(item[0], problem=errors[0].to_problem()))

    def _unreadable(self, res: ReadResult) -> _Batch:
        assert res.problem is not None
        out = _Batch(unreadable=res.problem)
        guess = guess_instance_id(res.path)
        gold = self.gold.get(guess) if guess else None
        if gold is not None:
            out.failure = (gold.instance_id, str(res.path),
                           f"unreadable trajectory: {res.problem.message}")
        return out

    def plan_trajectories(self, trajs: list[Trajectory], pred_file: str | None,
                          ctx: _RunContext) -> _Batch:
        """Plan trajectories read from one input."""
        out = _Batch()
        for traj in trajs:
            if traj.instance_id in ctx.skip:  # its row is kept from --resume: covered
                out.skipped += 1
                kept = self.gold.get(traj.instance_id)
                if kept is not None:
                    out.covered.append(kept.instance_id)
                continue
            gold = self.gold.get(traj.instance_id)
            key = gold.instance_id if gold is not None else traj.instance_id
            if key in ctx.seen:
                out.duplicates.append((traj.instance_id, pred_file, ctx.seen[key]))
                if self.preset != "contextbench":
                    continue  # one row per (run, instance): the first trajectory read
                # the ContextBench evaluator scores every record, a repeated one too (and its
                # aggregate counts both): its preset does the same, and the summary says so
            ctx.seen.setdefault(key, pred_file)
            out.instances += 1
            if gold is None:
                out.without_gold.append(traj.instance_id)
                out.items.append(Item(None, traj, "error", pred_file, row=error_row(
                    traj.instance_id, ctx.name, "missing_gold",
                    "no gold row for this instance id", pred_file=pred_file)))
                continue
            out.covered.append(gold.instance_id)
            out.items.append(self._plan(gold, traj, ctx.name, "ok", pred_file))
        return out

    def _batches(self, listed: list[tuple[Path, bool] | Problem], ctx: _RunContext
                 ) -> Iterator[_Batch]:
        """The plan stage over a run's inputs, in order; each input's last batch says so.
        Inputs ``--resume`` knows were read to their end are passed over unread."""
        for item in listed:
            name = item.path if isinstance(item, Problem) else str(item[0])
            if name in ctx.done_inputs:
                yield _Batch(input_done=True)
                continue
            last: _Batch | None = None
            for part in self._stream(item, ctx):
                batch = part if isinstance(part, _Batch) else \
                    self.plan_trajectories(part[0], part[1], ctx)
                if last is not None:
                    yield last
                last = batch
            last = last or _Batch()
            last.input_done = True
            yield last

    # -- extract and score -------------------------------------------------------------------

    def _extract_stage(self) -> ThreadExtractor:
        if self._extractor is None:
            self._extractor = ThreadExtractor(self.symbols, max(self.jobs, 1))
        return self._extractor

    def _staged(self, batches: Iterator[_Batch]) -> Iterator[_Batch]:
        """Each batch through extract and score, in order. A few batches are in flight: this
        thread plans the next ones while the native threads extract, across the end of one
        run and the start of the next (the threads would otherwise wait at every run's end,
        and again while its first, small batches are planned). Should planning fail, the
        batches in flight are scored first, so that their rows come out before the error."""
        stage = self._extract_stage()
        jobs = max(self.jobs, 1)
        ahead, most, planned = AHEAD * jobs, MOST_AHEAD * jobs, MOST_PLANNED * jobs
        window: deque[tuple[_Batch, Any]] = deque()
        working = 0  # batches in the window whose blobs are being read or extracted
        todo = iter(batches)
        while True:
            try:
                batch = next(todo)
            except StopIteration:
                break
            except Exception:
                while window:
                    yield self._score(*window.popleft())
                raise
            wanted = needs(batch.items, self.symbols, self.preparer.preset, stage.pending())
            ticket = stage.submit(wanted) if wanted else None
            window.append((batch, ticket))
            working += ticket is not None
            # past ``ahead`` the oldest batch is scored when its definitions are in; until
            # then the next batches are planned (a thread done with its part of a batch would
            # wait otherwise), up to ``most`` of them with blobs in flight and ``planned`` in all
            while working > most or len(window) > planned or \
                    (len(window) > ahead and stage.ready(window[0][1])):
                oldest, its = window.popleft()
                working -= its is not None
                yield self._score(oldest, its)
        while window:
            yield self._score(*window.popleft())

    def _score(self, batch: _Batch, ticket: Any) -> _Batch:
        assert self._extractor is not None and batch.ctx is not None
        self._extractor.collect(ticket)
        batch.rows = score(batch.items, self.preparer, run=batch.ctx.name,
                           final_policy=self.final_policy, resolved=batch.ctx.resolved,
                           text=self.text, views=self.views)
        batch.items = []
        return batch

    def symbol_stats(self) -> dict[str, int]:
        """How definitions were found (see :class:`~ctxeval.truth.extraction.SymbolExtractor`)."""
        return self.symbols.stats

    @property
    def notes(self) -> list[str]:
        """What went wrong with the evaluator itself but changed no row."""
        broken = self._extractor.broken if self._extractor is not None else None
        return [broken] if broken else list(self._closed_notes)

    def close(self) -> None:
        """Stop the extract stage's background thread, if any (the evaluator stays usable)."""
        if self._extractor is not None:
            self._closed_notes = self.notes
            self._extractor.close()
            self._extractor = None

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one run -----------------------------------------------------------------------------

    def rows_of(self, trajs: Sequence[Trajectory], run: str, *, pred_file: str | None = None,
                failed: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
        """Rows of trajectories already read (held in memory: the in-process scorer's and the
        Ray engine's way in), planned, extracted and scored as an input's are, in order;
        ``failed`` are (gold instance id, reason) of records that could not be read, scored
        first as agent failures."""
        ctx = _RunContext(run, None, frozenset(), ResolvedTable())
        batch = self.plan_trajectories(list(trajs), pred_file, ctx)
        batch.ctx = ctx
        for gid, reason in reversed(failed):
            gold = self.gold.get(gid)
            if gold is not None:
                batch.items.insert(0, self._plan(gold, None, run, "agent_failure", pred_file,
                                                 reason))
        return [row for done in self._staged(iter([batch])) for row in done.rows]

    def run(self, spec: RunSpec, summary: Summary, *, fmt: str | None = None,
            skip: set[tuple[str, str]] | None = None, kept: Kept | None = None,
            progress: _Progress | None = None,
            listed: list[tuple[Path, bool] | Problem] | None = None
            ) -> Iterator[dict[str, Any]]:
        """Rows of one run, in input order. ``kept``: the rows ``--resume`` keeps (their
        instances are not evaluated again, and the inputs they show were read to their end are
        not read again), or ``skip``, the (run, instance) of such rows. ``listed``: the inputs
        already listed (a part of the run's, as the Ray engine hands them out) instead of
        ``spec.inputs``."""
        planned = self._planned(spec, summary, fmt=fmt, skip=skip, kept=kept, listed=listed)
        for _spec, row in self._rows(planned, progress):
            yield row

    def runs(self, specs: Sequence[RunSpec], summary: Summary, *, fmt: str | None = None,
             kept: Kept | None = None, progress: _Progress | None = None
             ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(run name, row) of every run in turn, each run's rows in input order, as
        :meth:`run` gives them; one pipeline over all of them, so that the next run is planned
        while the last batches of one are extracted."""
        planned = (batch for spec in specs
                   for batch in self._planned(spec, summary, fmt=fmt, kept=kept))
        yield from self._rows(planned, progress)

    def _rows(self, planned: Iterator[_Batch], progress: _Progress | None
              ) -> Iterator[tuple[str, dict[str, Any]]]:
        for batch in self._staged(planned):
            assert batch.ctx is not None
            if progress is not None and batch.begins is not None:
                progress.begin(*batch.begins)
            for row in batch.rows:
                yield batch.ctx.name, row
            if progress is not None:
                progress.instances += batch.instances
                if batch.input_done:
                    progress.input_done()

    def _planned(self, spec: RunSpec, summary: Summary, *, fmt: str | None,
                 skip: set[tuple[str, str]] | None = None, kept: Kept | None = None,
                 listed: list[tuple[Path, bool] | Problem] | None = None
                 ) -> Iterator[_Batch]:
        """The planned batches of one run (see :meth:`run`), the first one marked as such
        (it may hold nothing); once they are all planned, what the summary says of the run
        (the instances it covers) is known and written."""
        resolved = ResolvedTable()
        for path in spec.results:
            resolved.update(load_resolved(path))
        run_kept = kept.runs.get(spec.name) if kept is not None else None
        done = set(run_kept.instances) if run_kept is not None else set()
        done.update(i for r, i in (skip or ()) if r == spec.name)
        ctx = _RunContext(spec.name, fmt, frozenset(done), resolved,
                          run_kept.done_inputs() if run_kept is not None else frozenset())
        covered: set[str] = {g.instance_id for i in done if (g := self.gold.get(i)) is not None}
        if listed is None:
            listed = list_inputs(spec.inputs, fmt)
        yield _Batch(ctx=ctx, begins=(spec.name, len(listed)))
        for batch in self._batches(listed, ctx):
            batch.ctx = ctx
            if batch.unreadable is not None:
                summary.unreadable.append(batch.unreadable)
            summary.without_gold.extend(batch.without_gold)
            summary.duplicates.extend(f"run {spec.name}, instance {iid}: {where} (the "
                                      f"row is {first}'s)" for iid, where, first
                                      in batch.duplicates)
            covered.update(batch.covered)
            if batch.failure is not None and batch.failure[0] not in covered \
                    and batch.failure[0] not in ctx.seen:
                gid, pred_file, reason = batch.failure
                covered.add(gid)
                ctx.seen[gid] = pred_file
                gold = self.gold.get(gid)
                assert gold is not None
                batch.items.insert(0, self._plan(gold, None, spec.name, "agent_failure",
                                                 pred_file, reason))
            yield batch
        if self.all_gold:
            missing = [g for g in self.gold.instances
                       if g.instance_id not in covered and g.instance_id not in ctx.skip]
            for k in range(0, len(missing), BATCH):
                chunk = missing[k:k + BATCH]
                covered.update(g.instance_id for g in chunk)
                yield _Batch(ctx=ctx, items=[self._plan(g, None, spec.name, "agent_failure",
                                                        None, "no trajectory for this instance")
                                             for g in chunk])
        summary.uncovered[spec.name] = sum(1 for g in self.gold.instances
                                           if g.instance_id not in covered)
        self.covered |= covered

def evaluate(*, gold: Sequence[str | Path], runs: Sequence[RunSpec], repos: str | Path | None,
             out: str | Path | None = None, preset: str = "strict",
             final_policy: FinalPolicy = "declared", all_gold: bool = False, jobs: int = 1,
             fetch: bool = False, resume: bool = False, fmt: str | None = None,
             progress: bool = True, stream: IO[bytes] | None = None,
             argv: list[str] | None = None, text: bool = False,
             cache_dir: str | Path | None = None, incremental: bool = True,
             views: bool = False, ranking: RankingSettings | None = DEFAULT_RANKING,
             git_timeout: float | None = None, notices: bool | None = None) -> Summary:
    """Evaluate ``runs`` against ``gold`` and write rows to ``out`` (or ``stream``).

    ``cache_dir`` keeps parsed definitions and commits' file lists on disk across evaluations
    (None: no disk cache);
    ``incremental`` re-parses a file from its previous version's tree where it can.
    ``views`` writes what each step displayed to ``<out>.views.jsonl`` (needs ``out``).
    ``ranking``: the cut-offs and line budget of the rows' ranking block (None: no block).
    ``git_timeout``: seconds a git request may take (:mod:`ctxeval.truth.gitproc`; None: the
    default or ``$CTXEVAL_GIT_TIMEOUT``); a late one makes its instances error rows.
    ``notices``: say on standard error, at once, that the rows of an earlier evaluation are
    being replaced (default: ``progress``; the command says it even with ``--quiet``).

    Raises :class:`GoldError` when no gold can be loaded at all, :class:`OutputBusy` when
    another evaluation is writing ``out`` (checked first, before anything is read or
    truncated), an :class:`InputError` when ``out`` (or the files beside it) holds something
    that is not ours to overwrite, a :class:`ResumeConflict` when ``resume`` would add rows
    made differently from the rows there, and ``OSError`` (naming the file) when the output
    cannot be written: those are the conditions under which nothing can be evaluated. The
    output is held for the whole run, only ever holds whole lines and is begun at its first
    row (:mod:`ctxeval.evaluation.output.destination`).
    """
    t0 = time.monotonic()
    with Destination.open(out, stream=stream, resume=resume,
                          views=views and out is not None) as dest:
        return _evaluate(gold=gold, runs=runs, repos=repos, dest=dest, preset=preset,
                         final_policy=final_policy, all_gold=all_gold, jobs=jobs, fetch=fetch,
                         fmt=fmt, progress=progress, argv=argv, text=text,
                         cache_dir=cache_dir, incremental=incremental, t0=t0,
                         ranking=ranking, git_timeout=git_timeout,
                         notices=progress if notices is None else notices)


def start(gold_set: GoldSet, dest: Destination, settings: Settings, *, say: bool = False
          ) -> tuple[Summary, Kept]:
    """What every engine does once the gold is loaded and the output held: stop when there is
    no gold at all, begin the output
    (:meth:`~ctxeval.evaluation.output.destination.Destination.begin`); the summary to fill and
    the rows kept by ``--resume``, not to be evaluated again. ``say``: tell standard error now
    that the rows of an earlier evaluation are being replaced."""
    if not gold_set.instances:
        raise GoldError("no gold instance could be loaded"
                        + (f" ({gold_set.problems[0]})" if gold_set.problems else ""))
    summary = Summary(gold_problems=list(gold_set.problems))
    begun = dest.begin(settings)
    summary.torn_bytes = begun.torn_bytes
    summary.duplicates_scored = settings.preset == "contextbench"
    summary.skipped_resume = begun.kept.count
    summary.replaced = begun.replacing
    summary.notes.extend(begun.notes)
    if say and begun.replacing and dest.path is not None:
        print(f"ctxeval: {dest.path}: replacing the {begun.replacing} "
              f"row{'s' * (begun.replacing != 1)} of an earlier evaluation (--resume keeps "
              "them and evaluates only the rest)", file=sys.stderr)
    return summary, begun.kept


def settings_of(gold_set: GoldSet, *, preset: str, final_policy: str, text: bool,
                fmt: str | None, ranking: RankingSettings | None = DEFAULT_RANKING
                ) -> Settings:
    """What the rows of this evaluation are made with, for the metadata."""
    return Settings(preset=preset, final_policy=final_policy, text=text, fmt=fmt,
                    gold_sources=tuple(gold_set.sources), grammars=grammar_versions(),
                    ranking=None if ranking is None else {"k": list(ranking.ks),
                                                          "budget_lines": ranking.budget})


def _evaluate(*, gold: Sequence[str | Path], runs: Sequence[RunSpec], repos: str | Path | None,
              dest: Destination, preset: str, final_policy: FinalPolicy, all_gold: bool,
              jobs: int, fetch: bool, fmt: str | None, progress: bool,
              argv: list[str] | None, text: bool, cache_dir: str | Path | None,
              incremental: bool, t0: float,
              ranking: RankingSettings | None = DEFAULT_RANKING,
              git_timeout: float | None = None, notices: bool = False) -> Summary:
    """:func:`evaluate` once its output is held."""
    gold_set = load_gold(list(gold))
    settings = settings_of(gold_set, preset=preset, final_policy=final_policy, text=text,
                           fmt=fmt, ranking=ranking)
    dest.meta_extra = {"command": command_line(argv),
                       "runs": [{"name": r.name, "inputs": list(r.inputs)} for r in runs]}
    summary, kept = start(gold_set, dest, settings, say=notices)
    repo_cache = RepoCache(Path(repos) if repos is not None else None, fetch=fetch,
                           cache_bytes=REPO_CACHE_BYTES, git_timeout=git_timeout,
                           listings=ListingCache(cache_dir) if cache_dir is not None else None)
    symbols = SymbolSettings(cache_dir, incremental).extractor()
    evaluator = Evaluator(gold_set, repo_cache, preset=preset, final_policy=final_policy,
                          all_gold=all_gold, jobs=jobs, text=text, symbols=symbols,
                          views=dest.sidecar is not None, ranking=ranking)
    bar = _Progress(sys.stderr, progress)
    writer = RowWriter(dest)
    try:
        last = None
        for name, row in evaluator.runs(runs, summary, fmt=fmt, kept=kept, progress=bar):
            if name != last and last is not None:
                writer.flush()  # each run's rows reach the file when the next run's begin
            last = name
            dest.write_views(row)
            writer.write(row)
        writer.flush()
    finally:
        bar.done()
        evaluator.close()
        repo_cache.close()
        if kept_until_exit is not None:
            kept_until_exit.append((evaluator, repo_cache))
    summary.rows = writer.counts
    summary.notes.extend(evaluator.notes)
    summary.uncovered_by_any = sum(1 for g in gold_set.instances
                                   if g.instance_id not in evaluator.covered)
    summary.errors = writer.errors
    summary.seconds = time.monotonic() - t0
    dest.finish({"symbol_stats": evaluator.symbol_stats(),
                 "symbol_cache": {
                     "disk": cache_dir is not None, "incremental": incremental,
                     "disk_stats": dict(evaluator.symbols.disk.stats)
                     if evaluator.symbols.disk is not None else None,
                     "listing_stats": dict(repo_cache.listings.stats)
                     if repo_cache.listings is not None else None}})
    return summary
