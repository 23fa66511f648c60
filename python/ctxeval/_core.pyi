"""Type stubs of the native module ``ctxeval._core`` (Rust, PyO3).

The engine's input is a plain dict (see :func:`evaluate_instance`); file ids are positions in
its ``files`` list, symbol ids are ``(file id, position in that file's symbols)``.
"""

from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypedDict

__version__: str
#: The newest tree-sitter language ABI the native runtime reads.
TREE_SITTER_LANGUAGE_VERSION: int

#: ``locagent`` scores context as ``strict`` does; it changes only the ranking rules.
Preset = Literal["strict", "contextbench", "locagent"]
LineTriple = tuple[int, int, int | None]

DefinitionTuple = tuple[str, str, str, int, int, int, int]

class DefinitionExtractor:
    """Definitions of file versions: parsing, the query pass and naming in native code with the
    GIL released; the versions of one key (path) re-parsed from one another; different keys on
    different threads in :meth:`extract_many`."""

    def __init__(self, tree_bytes: int | None = None, scratch_fraction: float | None = None,
                 scratch_edits: int | None = None) -> None: ...
    def add_grammar(self, name: str, language: object,
                    presets: Sequence[tuple[str, str, bool, Sequence[str]]],
                    node_types: tuple[Sequence[tuple[str, Sequence[str]]], Sequence[str]]
                    | None = None) -> None:
        """Register a language: a grammar package's ``language()`` capsule and, per preset,
        ``(name, query source, heuristic naming, parent-dependent node types)``;
        ``node_types``: ``(kinds, extras)`` of :func:`ctxeval.truth.node_types.resolved`, so
        that walks skip the subtrees no definition can be in."""
    def has_grammar(self, name: str) -> bool: ...
    def walks(self, lang: str, preset: str) -> bool:
        """Whether whole trees are searched by a walk comparing node kinds (not the query)."""
    def prunes(self, lang: str, preset: str) -> bool:
        """Whether that walk skips the subtrees no definition can be in."""
    def extract(self, lang: str, preset: str, key: str, data: bytes
                ) -> list[DefinitionTuple] | None:
        """``(kind, name, qualified_name, start_line, end_line, start_byte, end_byte)`` sorted
        by bytes; None for an unregistered language or a failed parse."""
    def extract_many(self, items: Sequence[tuple[str, str, str, bytes]], threads: int = 1
                     ) -> list[list[DefinitionTuple] | None]:
        """:meth:`extract` of many ``(lang, preset, key, data)``, in order, on ``threads``."""
    def stats(self) -> dict[str, int]:
        """``parsed``, ``incremental``, ``reused``, ``queried``, ``kept_bytes``."""

class LineIndex:
    """Line ↔ byte mapping of one file's exact bytes; lines include their newline."""

    def __init__(self, data: bytes) -> None: ...
    @property
    def line_count(self) -> int: ...
    @property
    def byte_len(self) -> int: ...
    @property
    def ends_with_newline(self) -> bool: ...
    def line_bytes(self, line: int) -> tuple[int, int] | None:
        """Half-open byte range of a 1-based line, newline included."""
    def lines_bytes(self, first: int, last: int) -> tuple[int, int] | None: ...
    def line_of(self, byte: int) -> int | None:
        """The 1-based line holding a byte offset."""
    def clip(self, start: int, end: int | None = None) -> tuple[int, int] | None:
        """Clip an inclusive range to the file (None end: to the end; reversed: swapped)."""
    def __len__(self) -> int: ...

class FileEntry(TypedDict, total=False):
    index: LineIndex | None  # None: the file does not exist at the base commit
    symbols: Sequence[tuple[int, int]]  # definitions as half-open byte ranges

class ViewSet(TypedDict, total=False):
    lines: Sequence[LineTriple]  # (file, start, end or None = to the end)
    files: Sequence[int]  # file-level-only views
    symbols: Sequence[tuple[int, int]]  # definitions shown by name
    symbols_only: bool  # do not add definitions overlapped by the lines

class EditSet(TypedDict, total=False):
    files: Sequence[int]
    lines: Sequence[LineTriple]

class RankLevel(TypedDict, total=False):
    """One level (file, module, function) of a ranking; items are ids >= 0, -1 is no item."""

    gold: Sequence[int]  # the gold items (repeats count under the locagent rules)
    pred: Sequence[int] | None  # a declared ranking; None: the steps' first-seen order
    file_items: Sequence[int]  # the item of each file id
    # per file id, the item of each of its definitions: ints, or native-endian i64 bytes
    # (array("q", ids).tobytes(), read in place)
    symbol_items: Sequence[Sequence[int] | bytes]

class RankingInput(TypedDict, total=False):
    ks: Sequence[int]
    rules: Literal["strict", "locagent"]
    levels: Sequence[RankLevel]
    budget: int | None  # lines of the budgeted recall; None: not computed
    budget_lines: Sequence[LineTriple] | None  # declared ranked lines; None: the steps' lines

class Instance(TypedDict, total=False):
    files: Sequence[FileEntry]
    gold: ViewSet
    steps: Sequence[ViewSet]
    final: ViewSet | None  # None: the union of the steps
    gold_edits: EditSet | None  # None: no gold patch, EditLoc is null
    pred_edits: EditSet | None  # None: no model patch
    ranking: RankingInput | None  # None: no ranking block

def evaluate_instance(instance: Instance, preset: Preset = "strict") -> dict[str, Any]:
    """Every metric of one instance: ``num_steps``, ``final``, ``trajectory``, ``editloc``,
    ``ranking`` (None without a ranking input, else ``{"levels": [...], "budget": ...}``: per
    level the :func:`rank_scores` dict plus ``first_gold_step`` and ``declared``; the budget
    ``{"lines", "used", "line", "file"}`` or None)."""

def evaluate_batch(
    instances: Iterable[Instance], preset: Preset = "strict", threads: int = 0
) -> list[dict[str, Any]]:
    """Many instances on ``threads`` worker threads (0: all cores), GIL released, in order."""

def score(intersection: int, gold_size: int, pred_size: int, preset: Preset = "strict"
          ) -> dict[str, Any]:
    """Coverage, precision and F1 from counts with the preset's empty-set conventions."""

def rank_scores(pred: Sequence[int], gold: Sequence[int], ks: Sequence[int],
                rules: Literal["strict", "locagent"] = "strict") -> dict[str, Any]:
    """Ranked metrics of ``pred`` (rank order) against ``gold``: ``{"at": [{"k", "acc",
    "recall", "precision", "ndcg", "map"}, ...], "mrr", "first_hit", "gold_size",
    "pred_size"}``; every value None when the gold is empty (see ``ranking.rs``)."""

def definition_owners(spans: Sequence[tuple[int, int]], functions: Sequence[bool]
                      ) -> tuple[list[int], list[int]]:
    """Per definition of a file (byte spans, and whether each is of a function kind): the
    index of the outermost definition holding it (itself when none does) and of the
    outermost function among those and itself (-1: none); of equal spans the first given
    holds the others (see ``ranking.rs``)."""

def lines_normalize(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]: ...
def lines_from_numbers(lines: Sequence[int]) -> list[tuple[int, int]]: ...
def lines_union(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                ) -> list[tuple[int, int]]: ...
def lines_intersection(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                       ) -> list[tuple[int, int]]: ...
def lines_difference(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                     ) -> list[tuple[int, int]]: ...
def lines_measure(ranges: Sequence[tuple[int, int]]) -> int: ...
def lines_merge_raw(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ContextBench reference's merge: reversed pairs are kept as given."""
def bytes_normalize(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]: ...
def bytes_union(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                ) -> list[tuple[int, int]]: ...
def bytes_intersection(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                       ) -> list[tuple[int, int]]: ...
def bytes_difference(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]
                     ) -> list[tuple[int, int]]: ...
def bytes_measure(ranges: Sequence[tuple[int, int]]) -> int: ...

EditTuple = tuple[int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]

def line_edits(old: bytes, new: bytes) -> list[EditTuple]:
    """The edits of a minimal line diff turning ``old`` into ``new``, as ``Tree.edit`` takes
    them: ``(start_byte, old_end_byte, new_end_byte, start_point, old_end_point,
    new_end_point)``, each in the coordinates left by the edits before it."""
def line_edits_within(old: bytes, new: bytes, max_changed: int, max_edits: int
                      ) -> list[EditTuple] | None:
    """:func:`line_edits`, or None when the edits would remove and insert more than
    ``max_changed`` bytes or be more than ``max_edits`` (decided early where it can be)."""
def carry_over(defs: Sequence[tuple[int, int, int, int]], edits: Sequence[EditTuple],
               changed: Sequence[tuple[int, int]]
               ) -> list[tuple[int, int, int, int] | None]:
    """For each old definition ``(start_byte, end_byte, start_line, end_line)``: its place in
    the new version when neither the edits nor the ``changed`` byte ranges touch it, else
    None."""

# Statistics (rust/ctxeval-core/src/stats; docs/statistics.md). Seeds are the key words
# ``random.Random(seed)`` seeds with (``ctxeval.analysis.stats.seed_key``); resampling draws
# are that generator's, draw for draw. Values are floats with undefined ones left out (NaN is a
# ValueError), except in the Spearman matrix, where None marks them.

#: (r, p, n, why undefined)
CorrelationTuple = tuple[float | None, float | None, int, str | None]

def stats_fsum(values: Sequence[float]) -> float:
    """``math.fsum``: the correctly rounded sum."""
def stats_ln_gamma(x: float) -> float:
    """ln |Γ(x)| (CPython's Lanczos approximation)."""
def stats_betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b); NaN for a or b not positive."""
def stats_binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p)."""
def stats_correlation_p(r: float, n: int) -> float | None:
    """Two-sided p-value of a correlation r over n pairs (Student's t, n − 2 degrees of
    freedom); None below three pairs."""
def stats_mt_random(key: Sequence[int], count: int) -> list[float]:
    """The first ``count`` values of ``random.random()`` on the generator seeded by ``key``."""
def stats_bootstrap_mean_ci(values: Sequence[float], level: float, n: int, key: Sequence[int]
                            ) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean (``n`` resamples); None for no value."""
def stats_randomization_test(d: Sequence[float], n: int, key: Sequence[int]) -> float:
    """Two-sided sign-flip randomization p-value of mean(d) = 0 (exact when 2^len(d) <= n)."""
def stats_auroc(values: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Mann–Whitney AUROC, ties counted half; None unless both labels occur."""
def stats_auroc_ci(values: Sequence[float], labels: Sequence[bool], level: float, n: int,
                   key: Sequence[int]) -> tuple[float, float] | None:
    """Stratified percentile bootstrap interval of AUROC."""
def stats_cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float | None:
    """(#{a > b} − #{a < b}) / (n_a n_b); None when a sample is empty."""
def stats_mcnemar(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value for discordant counts b and c."""
def stats_cohens_dz(d: Sequence[float]) -> tuple[float | None, str | None]:
    """Cohen's d of paired differences (mean / sd, n − 1), or None and why."""
def stats_pearson(x: Sequence[float], y: Sequence[float]) -> CorrelationTuple: ...
def stats_spearman(x: Sequence[float], y: Sequence[float]) -> CorrelationTuple: ...
def stats_spearman_matrix(columns: Sequence[Sequence[float | None]], min_n: int = 5
                          ) -> list[CorrelationTuple]:
    """Spearman's ρ between every two columns over pairwise-complete rows, row-major; a cell
    with fewer than ``min_n`` pairs is null."""
def stats_outcome_many(items: Sequence[tuple[Sequence[float], Sequence[bool]]], resamples: int,
                       level: float, bins: int, key: Sequence[int]) -> list[dict[str, Any]]:
    """For each (values, labels): ``n``, ``n_pass``, ``rate``, ``mean_pass``, ``mean_fail``,
    ``auroc``, ``auroc_ci``, ``r``, ``r_p``, ``reason`` (null statistics: ``"n < 5"``,
    ``"all resolved"``, ``"none resolved"``, ``"constant metric"``) and ``bins`` (each ``bin``,
    ``lo``, ``hi``, ``mean``, ``n``, ``n_pass``, ``rate``)."""
