"""An in-process scorer for RL loops: one rollout in, one result row out, state kept warm.

A reward function is called once per rollout, thousands of times, from a trainer's process.
Starting ``ctxeval evaluate`` per call would load the gold, open the repositories and parse
definitions every time; :class:`Scorer` does that once and keeps the repository readers (``git
cat-file`` at each base commit, no checkout), the definitions of every file version seen and
the preparer alive across calls. Each call is the same plan → extract → score as ``ctxeval
evaluate`` (:meth:`ctxeval.evaluation.run.Evaluator.rows_of`), so the row is the one the
command would write for that trajectory.

    scorer = ctxeval.Scorer(gold="gold.jsonl", repos="repos/")
    row = scorer.score(rollout)                   # any supported format, or the neutral one
    reward = scorer.reward(rollout, "final.line.f1")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from ..errors import AdapterError, excerpt
from ..model import Trajectory
from ..reading.adapters import ReadOptions
from ..reading.inputs import ReadResult, read_input
from ..reading.records import Raw, RecordReader
from ..truth.cache import ListingCache
from ..truth.extraction import SymbolSettings
from ..truth.gold import GoldSet, load_gold
from ..truth.repo import RepoCache
from .prepare.preparer import FinalPolicy
from .ranking import DEFAULT_RANKING, RankingSettings
from .rows import field_value
from .run import REPO_CACHE_BYTES, Evaluator

#: A result row, as ``ctxeval evaluate`` writes it (``spec/results-format.md``).
Row = dict[str, Any]


class Scorer:
    """Scores single rollouts against a gold set, keeping readers and definitions warm.

    ``gold``: gold files (any format ``ctxeval evaluate --gold`` reads) or a loaded
    :class:`~ctxeval.truth.gold.GoldSet`; ``repos``: the ``--repos`` directory (git repositories are
    read at each rollout's base commit without checkout); ``cache_dir``: the on-disk
    cache of definitions and commits' file lists, shared with other processes (None: memory
    only); ``git_timeout``:
    seconds a git request may take (a late one makes the rollout's row an error). Not
    thread-safe: use one scorer per thread or process.
    """

    def __init__(self, gold: str | Path | Sequence[str | Path] | GoldSet,
                 repos: str | Path | None = None, *, preset: str = "strict",
                 final: FinalPolicy = "declared", run: str = "rollout", fetch: bool = False,
                 cache_dir: str | Path | None = None, incremental: bool = True,
                 text: bool = False, git_timeout: float | None = None,
                 ranking: RankingSettings | None = DEFAULT_RANKING) -> None:
        if isinstance(gold, GoldSet):
            gold_set = gold
        else:
            paths = [gold] if isinstance(gold, (str, Path)) else list(gold)
            gold_set = load_gold([str(p) for p in paths])
        self.gold = gold_set
        self.run = run
        self.preset = preset
        self.repos = RepoCache(Path(repos) if repos is not None else None, fetch=fetch,
                               cache_bytes=REPO_CACHE_BYTES, git_timeout=git_timeout,
                               listings=ListingCache(cache_dir) if cache_dir is not None
                               else None)
        self.evaluator = Evaluator(gold_set, self.repos, preset=preset, final_policy=final,
                                   symbols=SymbolSettings(cache_dir, incremental).extractor(),
                                   text=text, ranking=ranking)
        self.records = RecordReader()

    def _read(self, trajectory: Trajectory | Path | Raw | None, instance_id: str | None,
              fmt: str | None, name: str | None, text: str | bytes | None = None
              ) -> ReadResult:
        trajectory = rollout_input(trajectory, text)
        opts = ReadOptions(preset=self.preset, instance_id=instance_id, run=self.run)
        if isinstance(trajectory, Trajectory):
            return ReadResult(Path(name or "rollout"), trajectories=[trajectory])
        if isinstance(trajectory, Path):
            got = read_input(trajectory, True, fmt=fmt, options=opts)
            assert got is not None
            return got
        return self.records.read(trajectory, instance_id=instance_id, name=name, fmt=fmt,
                                  options=opts)

    def score_all(self, trajectory: Trajectory | Path | Raw | None = None, *,
                  text: str | bytes | None = None, instance_id: str | None = None,
                  fmt: str | None = None, name: str | None = None) -> list[Row]:
        """Every row of one input (a file or record may hold several trajectories); what it
        takes is as for :meth:`score`."""
        got = self._read(trajectory, instance_id, fmt, name, text)
        if got.problem is not None:
            gid = instance_id or (trajectory.get("instance_id")
                                  if isinstance(trajectory, dict) else None)
            if gid is None or self.gold.get(str(gid)) is None:
                raise AdapterError(got.problem.message, path=got.problem.path,
                                   kind=got.problem.kind)
            rows = self.evaluator.rows_of(
                [], self.run, failed=[(str(gid), f"unreadable trajectory: {got.problem.message}")])
        else:
            trajs = got.trajectories
            if instance_id is not None:
                trajs = [t if t.instance_id == instance_id else _with_id(t, instance_id)
                         for t in trajs]
            rows = self.evaluator.rows_of(trajs, self.run)
        for row in rows:  # a rollout has no file: no pred_file, as on the scored rows
            if row.get("pred_file", "") is None:
                del row["pred_file"]
        return rows

    def score(self, trajectory: Trajectory | Path | Raw | None = None, *,
              text: str | bytes | None = None, instance_id: str | None = None,
              fmt: str | None = None, name: str | None = None) -> Row:
        """The row of one rollout, in any supported format: a :class:`~ctxeval.model.Trajectory`;
        a file (a :class:`~pathlib.Path`, or a ``str`` that names an existing file or
        directory); the record itself, parsed (a dict or list), as JSON text (a ``str`` that
        is JSON or JSON lines), or as a file's content (``bytes``, or ``text=`` for text in a
        format that is not JSON, such as a Prometheus log). A ``str`` that is neither an
        existing path nor JSON is a ``ValueError`` (it was once read as a record, and a path
        mistyped gave an ``agent_failure`` row). ``instance_id`` names the gold instance
        where the record does not; ``name`` is the file name the record would have (for
        formats that read the id from it). A record that cannot be read is an
        ``agent_failure`` row when its gold instance is known, else an
        :class:`~ctxeval.errors.AdapterError`."""
        rows = self.score_all(trajectory, text=text, instance_id=instance_id, fmt=fmt,
                              name=name)
        if len(rows) != 1:
            raise AdapterError(f"expected one trajectory, the input holds {len(rows)} "
                               "(use score_all)", path=name)
        return rows[0]

    def reward(self, trajectory: Trajectory | Path | Raw, metric: str = "final.line.f1", *,
               default: float = 0.0, **options: Any) -> float:
        """One number of the rollout's row (a dotted path such as ``final.line.f1`` or
        ``trajectory.auc_coverage.symbol``), ``default`` where it is undefined (null, an
        error row)."""
        value = field_value(self.score(trajectory, **options), metric)
        return float(value) if isinstance(value, (int, float)) and not isinstance(
            value, bool) else default

    def close(self) -> None:
        self.evaluator.close()
        self.repos.close()
        self.records.close()

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rollout_input(trajectory: Trajectory | Path | Raw | None, text: str | bytes | None
                  ) -> Trajectory | Path | Raw:
    """What :meth:`Scorer.score` was given, told apart: a ``str`` naming an existing file is
    that file (as pandas 2.1 stopped reading literal JSON text in ``read_json`` for the same
    ambiguity), a ``str`` of JSON is a record; text in another format comes as ``bytes`` or
    ``text=``."""
    if text is not None:
        if trajectory is not None:
            raise TypeError("give the rollout or text=, not both")
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"text= takes str or bytes, not {type(text).__name__}")
        return text
    if trajectory is None:
        raise TypeError("score() needs a rollout (or text=)")
    if not isinstance(trajectory, str):
        return trajectory
    path = Path(trajectory)
    try:
        exists = path.exists()
    except (OSError, ValueError):  # a long JSON text is no file name (ENAMETOOLONG, NUL)
        exists = False
    if exists:
        return path
    if _is_json(trajectory):
        return trajectory
    shown = excerpt(trajectory, 60)
    raise ValueError(f"score() was given the str {shown!r}, which names no existing file and "
                     "is not JSON: give a path to an existing file (str or Path), a record "
                     "as JSON text or parsed, or a record's text in another format as bytes "
                     "or text=...")


def _is_json(text: str) -> bool:
    """Whether ``text`` is one JSON value, or JSON lines (its first non-blank line is one)."""
    if text.lstrip()[:1] not in ("{", "["):
        return False
    try:
        orjson.loads(text)
        return True
    except orjson.JSONDecodeError:
        pass
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    try:
        orjson.loads(first)
        return True
    except orjson.JSONDecodeError:
        return False


def _with_id(traj: Trajectory, instance_id: str) -> Trajectory:
    return replace(traj, instance_id=instance_id)
