"""The ranking block of a row: ranked localisation metrics at the file, module and function
levels, the budgeted recall, and what was spent before the first gold item was shown.

This module only builds id lists: the gold items of each level (read from the dataset, or
derived from the gold patch or context by :mod:`ctxeval.truth.locations`), the predicted
ranking (a localiser's declared one, :attr:`~ctxeval.model.Trajectory.ranking`, or the order in
which the steps first showed each file and definition, which the engine finds), and the items
of each file and definition. The native engine does the arithmetic
(``rust/ctxeval-core/src/ranking.rs``) in the same call that scores the rest of the row.

Items are strings (``path``, ``path:Name``, ``path:Class.method``) interned as integers once
per evaluation, so the items of a file's definitions are computed once per blob and reused by
every instance and run that shows it.

Two sets of rules (``docs/presets.md``):

- ``strict`` (presets ``strict`` and ``contextbench``): a predicted path is resolved against
  the repository as views are, a predicted name through the file's definitions (``C.m`` finds
  ``Outer.C.m``; a nested function counts as the function around it), so that it meets the
  gold's naming; the IR definitions of the metrics.
- ``locagent``: items compared as LocAgent compares them, exact strings as given; LocAgent's
  arithmetic; the instances in LocAgent's ``filtered_instances`` have no ranked values.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..errors import PatchError
from ..model import RANKING_LEVELS, GoldInstance, Trajectory
from ..paths import normalise_path
from ..truth.extraction import SymbolExtractor
from ..truth.locations import FileNames, Locations, context_locations, file_lines, patch_locations
from ..truth.patches import edit_locations, kept_edit_locations
from ..truth.symbols import Definition, resolve_name

#: The cut-offs of the ranked metrics unless ``--k`` says otherwise.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
#: Lines of the budgeted recall (SWE-Explore's budget) unless ``--budget-lines`` says otherwise.
DEFAULT_BUDGET = 500
RULES = ("strict", "locagent")
METRICS = ("acc", "recall", "precision", "ndcg", "map")

#: LocAgent's ``filtered_instances`` (``evaluation/eval_metric.py``): ids its evaluation
#: leaves out (26 of SWE-bench Lite, 12 of Loc-Bench).
LOCAGENT_FILTERED = frozenset({
    "pytest-dev__pytest-5227", "sympy__sympy-15345", "sympy__sympy-21614",
    "scikit-learn__scikit-learn-13439", "sympy__sympy-11400", "sympy__sympy-19487",
    "sympy__sympy-15308", "django__django-12915", "sympy__sympy-20590", "sympy__sympy-17022",
    "django__django-11099", "django__django-13220", "django__django-11964",
    "matplotlib__matplotlib-25332", "django__django-10914", "django__django-14915",
    "django__django-11049", "django__django-11564", "sympy__sympy-17655",
    "sympy__sympy-16106", "sympy__sympy-12171", "django__django-15400",
    "django__django-14411", "sympy__sympy-21055", "django__django-15213",
    "django__django-15902",
    "tobymao__sqlglot-4477", "pyodide__pyodide-1215", "django__django-17811",
    "tobymao__sqlglot-4497", "optuna__optuna-5778", "sagemath__sage-36814",
    "tobymao__sqlglot-4457", "tobymao__sqlglot-4505", "tobymao__sqlglot-4430",
    "raft-tech__TANF-app-3234", "AllenNeuralDynamics__foraging-behavior-browser-106",
    "Australian-Text-Analytics-Platform__atap-corpus-slicer-3",
})
EXCLUDED_REASON = "in LocAgent's filtered_instances"


def locagent_excluded(gold: GoldInstance) -> str | None:
    """Why LocAgent's evaluation leaves an instance out, or None. Its gold-file path
    (``cal_metrics_w_file``) filters ``filtered_instances``; its dataset path
    (``cal_metrics_w_dataset``, the published tables) does not, the datasets it reads
    (``edit_functions``) having left those ids out already. Gold in any other spelling (SWE-bench
    patches, the gold LocAgent's outputs carry) is filtered: that is the set the published
    tables stand on (SWE-bench Lite less the 26)."""
    if gold.instance_id not in LOCAGENT_FILTERED:
        return None
    if gold.locations is not None and gold.locations.origin == "edit_functions":
        return None
    return EXCLUDED_REASON


@dataclass(frozen=True, slots=True)
class RankingSettings:
    """What the ranking block computes: the cut-offs, the line budget (None: none) and the
    rules (``strict`` or ``locagent``)."""

    ks: tuple[int, ...] = DEFAULT_KS
    budget: int | None = DEFAULT_BUDGET
    rules: str = "strict"

    def __post_init__(self) -> None:
        if self.rules not in RULES:
            raise ValueError(f"unknown ranking rules {self.rules!r}")
        if not self.ks or any(k < 1 for k in self.ks):
            raise ValueError("every k must be a positive integer")
        if self.budget is not None and self.budget < 1:
            raise ValueError("the line budget must be a positive integer")


#: The ranking block every evaluation computes unless told otherwise.
DEFAULT_RANKING = RankingSettings()


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,3,5,10"`` -> (1, 3, 5, 10): distinct, in the order given (``--k``)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"--k takes positive integers separated by commas, not {part!r}")
        if int(part) not in out:
            out.append(int(part))
    if not out:
        raise ValueError("--k needs at least one cut-off")
    return tuple(out)


def _blob(data: bytes) -> str:
    """The git blob id of bytes (a content address, so the extractor may cache by it)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(slots=True)
class _Names:
    """A file's definitions as items: per definition the module and function item ids (-1:
    none) as the engine takes them (native i64 bytes, read in place), and the names by which
    predicted names are resolved."""

    names: FileNames
    module: bytes
    function: bytes


@dataclass(slots=True)
class Prepared:
    """What a row's ranking block needs besides the engine's result."""

    gold_source: str
    declared: bool
    excluded: str | None = None
    notes: list[str] = field(default_factory=list)


class Ranker:
    """Builds each instance's ranking input for the engine; held by the preparer for a whole
    evaluation (its caches are per blob)."""

    def __init__(self, settings: RankingSettings, symbols: SymbolExtractor,
                 cache: Any) -> None:
        self.settings = settings
        self.symbols = symbols
        self.cache = cache
        self._ids: dict[str, int] = {}

    def intern(self, item: str) -> int:
        return self._ids.setdefault(item, len(self._ids))

    def _items(self, path: str, names: list[str | None]) -> bytes:
        """The items ``path:name`` of a file's definitions (-1: no name), as the engine takes
        them; interned in the order :meth:`intern` would, each distinct name formatted once
        (a class's methods share its module name)."""
        mine: dict[str | None, int] = {None: -1, "": -1}
        out = array("q")
        for name in names:
            k = mine.get(name)
            if k is None:
                k = mine[name] = self.intern(f"{path}:{name}")
            out.append(k)
        return out.tobytes()

    # -- per file ------------------------------------------------------------------------------

    def _definitions(self, path: str, data: bytes, blob: str | None = None
                     ) -> list[Definition] | None:
        return self.symbols.get(blob or _blob(data), data, path, "strict")

    def _file_names(self, table: Any, fid: int) -> _Names | None:
        f = table.files[fid]
        if not f.exists or not f.defs:
            return None
        key = ("ranknames", table.snap.blob_id(f.path) or f"path:{f.path}", f.path)
        got = self.cache.get(key)
        if got is None:
            snap = table.snap
            names = FileNames(f.path, f.defs, lambda: file_lines(snap.read(f.path) or b""),
                              spans=f.spans)
            got = _Names(names, self._items(f.path, names.module),
                         self._items(f.path, names.function))
            self.cache[key] = got
        return got

    # -- gold ----------------------------------------------------------------------------------

    def _gold(self, gold: GoldInstance, table: Any) -> tuple[Locations, str]:
        if gold.locations is not None:
            loc = gold.locations
            return Locations(list(loc.files), list(loc.modules), list(loc.functions)), "dataset"
        snap = table.snap
        if gold.gold_kind == "patch" and gold.patch:
            # parsed once, with the preparer's reading of it (the same cache)
            locs = kept_edit_locations(self.cache, gold.patch, "gold patch")
            if isinstance(locs, PatchError):  # unreadable: the row's warnings say so already
                return Locations(), "patch"
            # the same patch on the same file versions has the same gold
            key = ("rankgold", gold.patch, tuple(snap.blob_id(p) for p in locs.files))
            got = self.cache.get(key)
            if got is None:
                got = self.cache[key] = patch_locations(locs, snap.read, self._definitions)
            return got, "patch"
        # the same gold object at the same file versions (another run's row): derived once
        key = ("rankctx", id(gold), tuple(snap.blob_id(normalise_path(v.file, gold.repo))
                                          for v in gold.context))
        cached = self.cache.get(key)
        if cached is not None and cached[0] is gold:
            return cached[1], "context"
        ranges: list[tuple[str, int, int]] = []
        for v in gold.context:
            path = normalise_path(v.file, gold.repo)
            if not snap.exists(path):
                continue
            fid = table.id(path)
            ix = table.files[fid].index
            if v.file_only or ix is None:
                ranges.append((path, 1, 0))  # the file, no line
                continue
            clipped = ix.clip(v.start_line or 1, v.end_line)
            if clipped is not None:
                ranges.append((path, clipped[0], clipped[1]))

        def names(path: str) -> FileNames | None:
            got = self._file_names(table, table.id(path))
            return got.names if got is not None else None

        found = context_locations(ranges, names)
        self.cache[key] = (gold, found)  # the object kept: its id cannot be reused meanwhile
        return found, "context"

    # -- predictions ---------------------------------------------------------------------------

    def _strict_item(self, level: str, item: str, table: Any) -> str:
        """A predicted item in the gold's naming: its path resolved as a view's is, its name
        through the file's definitions (unchanged where nothing, or more than one item,
        fits)."""
        raw_path, sep, name = item.partition(":") if level != "file" else (item, "", "")
        path = table.snap.resolve(raw_path) or normalise_path(raw_path, None)
        if level == "file" or not sep:
            return path
        if not table.snap.exists(path):
            return f"{path}:{name}"
        fid = table.id(path)
        if table.files[fid].index is None:
            table.load()  # a file the plan had not named: its definitions now
        got = self._file_names(table, fid)
        if got is None:
            return f"{path}:{name}"
        defs = got.names.defs
        hits = resolve_name(defs, name)
        per = got.names.module if level == "module" else got.names.function
        found = {per[defs.index(d)] for d in hits} - {None}
        if len(found) > 1:
            exact = [d for d in hits if d.qualified_name == name]
            found = {per[defs.index(d)] for d in exact} - {None}
        if len(found) == 1:
            return f"{path}:{found.pop()}"
        return f"{path}:{name}"

    # -- one instance --------------------------------------------------------------------------

    def prepare(self, gold: GoldInstance, traj: Trajectory | None, table: Any
                ) -> tuple[dict[str, Any], Prepared]:
        """The engine's ranking input of one instance (``inst["ranking"]``) and what its row
        needs. New files may be named in ``table`` (predicted files): the caller loads them."""
        s = self.settings
        locagent = s.rules == "locagent"
        excluded = locagent_excluded(gold) if locagent else None
        locs, gold_source = self._gold(gold, table)
        gold_levels = {"file": locs.files, "module": locs.modules, "function": locs.functions}
        declared = traj.ranking.levels() if traj is not None and traj.ranking is not None \
            else None
        budget_lines = None
        if declared is not None and traj is not None and traj.ranking is not None \
                and traj.ranking.lines is not None:
            budget_lines = []
            for v in traj.ranking.lines:
                path = table.snap.resolve(v.file)
                if path is not None and not v.file_only:
                    budget_lines.append((table.id(path), v.start_line or 1, v.end_line))
        levels = []
        for level in RANKING_LEVELS:
            gold_items = list(gold_levels[level]) if locagent else \
                list(dict.fromkeys(gold_levels[level]))
            if excluded is not None:
                gold_items = []
            spec: dict[str, Any] = {"gold": [self.intern(i) for i in gold_items]}
            if declared is not None:
                items = declared[level] or []
                if not locagent:
                    items = [self._strict_item(level, i, table) for i in items]
                spec["pred"] = [self.intern(i) for i in items]
            levels.append(spec)
        # a declared ranking without ranked lines has no budgeted recall (not a zero one)
        budget = None if declared is not None and budget_lines is None else s.budget
        return {"ks": list(s.ks), "rules": s.rules, "levels": levels, "budget": budget,
                "budget_lines": budget_lines}, Prepared(gold_source, declared is not None,
                                                         excluded)

    def without_repository(self, gold: GoldInstance, traj: Trajectory | None
                           ) -> dict[str, Any] | None:
        """The ranking block of a localiser's output whose repository could not be read:
        the levels that need no repository (the file level, and the levels a dataset's gold
        carries), scored on the paths and names as written (normalised, not resolved); the
        others are null. None for a trajectory without a declared ranking (its ranking is
        what its steps showed, which needs the files). ``traj`` None (an agent failure): an
        empty ranking where the gold is a localisation dataset's (LocAgent scores a missing
        output as empty), else None (the run may be of trajectories, whose other rows have
        no block: zeros of its failures alone would bias its means)."""
        if traj is None and gold.locations is None:
            return None
        if traj is not None and traj.ranking is None:
            return None
        locagent = self.settings.rules == "locagent"
        excluded = locagent_excluded(gold) if locagent else None
        if gold.locations is not None:
            known: dict[str, list[str] | None] = {
                "file": list(gold.locations.files), "module": list(gold.locations.modules),
                "function": list(gold.locations.functions)}
            source = "dataset"
        else:
            files: list[str] = []
            if gold.gold_kind == "patch" and gold.patch:
                try:
                    files = [p for p, fe in edit_locations(gold.patch).files.items()
                             if not fe.created]
                except PatchError:
                    files = []
                source = "patch"
            else:
                files = [normalise_path(v.file, gold.repo) for v in gold.context]
                source = "context"
            known = {"file": list(dict.fromkeys(files)), "module": None, "function": None}
        declared = traj.ranking.levels() if traj is not None and traj.ranking is not None \
            else dict.fromkeys(RANKING_LEVELS)
        levels: list[dict[str, Any] | None] = []
        for level in RANKING_LEVELS:
            gold_items = known[level]
            if gold_items is None:
                levels.append(None)
                continue
            if not locagent:
                gold_items = list(dict.fromkeys(gold_items))
            if excluded is not None:
                gold_items = []
            pred = declared[level] or []
            if not locagent:
                pred = [normalise_path(i, gold.repo) if level == "file" else
                        "{}{}{}".format(normalise_path(i.partition(":")[0], gold.repo),
                                        *i.partition(":")[1:]) for i in pred]
            got = _core.rank_scores([self.intern(i) for i in pred],
                                    [self.intern(i) for i in gold_items], list(self.settings.ks),
                                    self.settings.rules)
            levels.append({**got, "first_gold_step": None, "declared": True})
        block = ranking_block({"levels": levels, "budget": None},
                              Prepared(source, True, excluded), traj)
        if block is not None:
            block["repository"] = False
        return block

    def items_of_files(self, inst: dict[str, Any], table: Any) -> None:
        """The item of every file and definition of the loaded ``table``: what the engine
        maps the steps' views to (a trajectory's ranking, the first gold step)."""
        levels = inst["ranking"]["levels"]
        file_items = [self.intern(f.path) if f.exists else -1 for f in table.files]
        modules: list[bytes] = []
        functions: list[bytes] = []
        for fid in range(len(table.files)):
            got = self._file_names(table, fid)
            modules.append(got.module if got is not None else b"")
            functions.append(got.function if got is not None else b"")
        levels[0]["file_items"] = file_items
        levels[1]["symbol_items"] = modules
        levels[2]["symbol_items"] = functions


def prepare_ranking(ranker: Ranker, inst: dict[str, Any], notes: Any, table: Any,
                    gold: GoldInstance, traj: Trajectory | None) -> Prepared:
    """Put the ranking input into a finished engine input (``inst``), loading any file the
    ranking named that the plan had not."""
    before = len(table.files)
    inst["ranking"], prepared = ranker.prepare(gold, traj, table)
    if len(table.files) != before:
        table.load()
        inst["files"] = table.to_core()
        notes.paths = [f.path for f in table.files]
    # the items of what the steps showed: the ranking of a trajectory, and for every
    # ranking the step at which a gold item was first shown
    ranker.items_of_files(inst, table)
    return prepared


def _usage_before(traj: Trajectory | None, step: int | None) -> dict[str, Any]:
    """Tokens and cost of steps 1..``step`` where every one of them recorded the field."""
    out: dict[str, Any] = {"input_tokens": None, "output_tokens": None, "cost": None}
    if traj is None or step is None or step > len(traj.steps):
        return out
    parts = [s.usage for s in traj.steps[:step]]
    for key in out:
        values = [getattr(u, key) if u is not None else None for u in parts]
        if values and all(v is not None for v in values):
            out[key] = sum(values)
    return out


def ranking_block(result: dict[str, Any] | None, prepared: Prepared,
                  traj: Trajectory | None) -> dict[str, Any] | None:
    """The row's ``ranking`` object from the engine's ranking result."""
    if result is None:
        return None
    out: dict[str, Any] = {"source": "declared" if prepared.declared else "steps",
                           "gold": prepared.gold_source}
    if prepared.excluded is not None:
        out["excluded"] = prepared.excluded
    before: dict[str, Any] = {}
    for level, lvl in zip(RANKING_LEVELS, result["levels"], strict=True):
        if lvl is None:  # not computable (no repository)
            out[level] = before[level] = None
            continue
        block: dict[str, Any] = {}
        for at in lvl["at"]:
            for m in METRICS:
                block[f"{m}@{at['k']}"] = at[m]
        block["mrr"] = lvl["mrr"]
        block["gold_size"] = lvl["gold_size"]
        block["pred_size"] = lvl["pred_size"]
        out[level] = block
        step = lvl["first_gold_step"] if lvl["gold_size"] else None
        before[level] = None if step is None else \
            {"step": step, "steps_before": step - 1, **_usage_before(traj, step)}
    out["before_first_gold"] = before
    out["budget"] = result["budget"]
    return out


def level_metric_names(ks: Sequence[int] = DEFAULT_KS) -> list[str]:
    """The metric keys of one level of the block, in row order."""
    return [f"{m}@{k}" for k in ks for m in METRICS] + ["mrr"]
