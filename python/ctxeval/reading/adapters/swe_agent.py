"""SWE-agent ``.traj`` files, 0.x (windowed editor) and 1.x (``str_replace_editor``, tool bundles).

What a step displayed is read from its observation, never guessed from the command: the
windowed editor prints ``[File: <path> (N lines total)]`` followed by ``N:code`` lines,
``str_replace_editor`` prints ``cat -n`` style ``   N<TAB>code`` lines, and both are taken line
number by line number.
Shell commands go through :func:`ctxeval.reading.shell.read_shell`.

Edits move line numbers. Where the edit's shape is known exactly (0.x ``edit a:b`` checked against
the file's new line count, or a unified diff) later views are mapped back to base lines; otherwise
views of that file become ``post_edit`` (file-level credit only).

The parsing helpers in the first half are shared with the two OpenHands adapters, whose editor
prints the same ``cat -n`` blocks.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import AdapterError
from ...linesets import line_runs
from ...model import Step, Trajectory, Usage, View
from ..shell import read_shell
from . import ReadOptions
from . import cb_sweagent_patch_context as pc
from ._fields import FieldNotes, is_number
from .contextbench import is_contextbench

FORMAT = "swe-agent"
PRIORITY = 40

# --------------------------------------------------------------------------------------------
# Numbered-line parsing (shared with the OpenHands adapters)
# --------------------------------------------------------------------------------------------

CATN_HEADER = re.compile(
    r"Here's the result of running `cat -n` on (?:a snippet of )?(?P<path>.+?):\s*$")
_CATN_LINE = re.compile(r"^ *(\d+)\t")
_ABBR_LINE = re.compile(r"^ *(\d+) ")
_ELIDED = re.compile(r"^ *\d+ \.\.\. eliding lines \d+-\d+ \.\.\.")
_WINDOW_HEADER = re.compile(r"^\[File: (?P<path>.+?) \((?P<total>\d+) lines total\)\]\s*$")
_WINDOW_LINE = re.compile(r"^(\d+):")
_EDITED_FILE = re.compile(r"The file (?P<path>\S.*?) has been edited\.")


def split_lines(text: str) -> list[str]:
    """Lines of an observation; ``\\r\\n`` and ``\\n`` only (a form feed is part of a line)."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def ranges_of(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, merged inclusive ranges of the given line numbers."""
    return line_runs(numbers)


def numbered_run(lines: Sequence[str], start: int, pattern: re.Pattern[str],
                 elided: re.Pattern[str] | None = None) -> tuple[list[int], int]:
    """Line numbers of the run of numbered lines at ``lines[start:]``, and where the run ends.

    A run ends at the first line that is not numbered or whose number does not increase (the
    numbers are the truth, so a run never goes backwards). Elision markers are skipped: the lines
    they stand for were not shown.
    """
    nums: list[int] = []
    i = start
    last = 0
    while i < len(lines):
        line = lines[i]
        if elided is not None and elided.match(line):
            i += 1
            continue
        m = pattern.match(line)
        if not m:
            break
        n = int(m.group(1))
        if n <= last or n < 1:
            break
        nums.append(n)
        last = n
        i += 1
    return nums, i


@dataclass(slots=True)
class Block:
    """One block of numbered lines in an observation; ``path`` None when the block names none."""

    path: str | None
    ranges: list[tuple[int, int]]
    total: int | None = None
    preview: bool = False


def catn_blocks(text: str, default_path: str | None = None) -> list[Block]:
    """``cat -n`` blocks (``str_replace_editor`` / OpenHands editor), including abbreviated views.

    A header naming "the edited file" takes its path from the "The file X has been edited" line;
    an abbreviated view (no header, ``N code`` lines with elisions) takes ``default_path``.
    """
    lines = split_lines(text)
    blocks: list[Block] = []
    edited = _EDITED_FILE.search(text)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = CATN_HEADER.search(line)
        if m:
            path: str | None = m.group("path").strip()
            if path == "the edited file":
                path = edited.group("path") if edited else default_path
            nums, i = numbered_run(lines, i + 1, _CATN_LINE)
            if nums:
                blocks.append(Block(path, ranges_of(nums)))
            continue
        if "Showing abbreviated version" in line:
            nums, i = numbered_run(lines, i + 1, _ABBR_LINE, _ELIDED)
            if nums:
                blocks.append(Block(default_path, ranges_of(nums)))
            continue
        i += 1
    return blocks


def catn_lines(text: str) -> dict[int, str]:
    """Line number -> text of the first ``cat -n`` block in ``text`` (for checking edits)."""
    lines = split_lines(text)
    for i, line in enumerate(lines):
        if CATN_HEADER.search(line):
            out: dict[int, str] = {}
            last = 0
            for row in lines[i + 1:]:
                m = _CATN_LINE.match(row)
                if not m or int(m.group(1)) <= last:
                    break
                last = int(m.group(1))
                out[last] = row[m.end():]
            return out
    return {}


_SNIPPET = 4
"""Context lines the Anthropic-style editor prints around an edit (SWE-agent 1.x, OpenHands)."""


def editor_hunk(command: str, args: dict[str, Any], result: str) -> list[Hunk] | None:
    """The exact change of a successful ``str_replace``/``insert``, or None when not provable.

    The position is derived from the snippet the editor printed (it starts ``_SNIPPET`` lines
    before the change) and accepted only if the snippet really shows ``new_str`` there.
    """
    shown = catn_lines(result)
    if not shown:
        return None
    new = args.get("new_str")
    new = "" if new is None and command == "str_replace" else new
    if not isinstance(new, str):
        return None
    nc = new.count("\n")

    def shows(first: int) -> bool:
        rows = [shown.get(first + k) for k in range(nc + 1)]
        if any(r is None for r in rows):
            return False
        text = "\n".join(r for r in rows if r is not None).expandtabs()
        return new.expandtabs() in text if new.strip() else True

    if command == "insert":
        at = args.get("insert_line")
        if isinstance(at, str) and at.strip().isdigit():
            at = int(at)
        if not isinstance(at, int) or isinstance(at, bool) or at < 0:
            return None
        if min(shown) != max(1, at - _SNIPPET + 1) or not shows(at + 1):
            return None
        return [(at + 1, 0, nc + 1)]
    if command == "str_replace":
        old = args.get("old_str")
        if not isinstance(old, str) or not old:
            return None
        if not new.strip():  # nothing to recognise the place by (editors differ by a line)
            return None
        start, end = min(shown), max(shown)
        if start > 1:
            first = start + _SNIPPET
        else:  # the snippet starts at line 1: only its end can place the change
            first = end - _SNIPPET - nc
            if first < 1 or first > _SNIPPET + 1:
                return None
        if end > first + _SNIPPET + nc:
            return None
        # new_str must be shown there and not one line off (some editor versions print the
        # snippet one line later): anything ambiguous stays unmapped
        if [p for p in (first - 1, first, first + 1) if shows(p)] != [first]:
            return None
        return [(first, old.count("\n") + 1, nc + 1)]
    return None


def window_blocks(text: str) -> list[Block]:
    """Windowed-editor blocks (``[File: p (N lines total)]`` + ``N:code`` lines).

    A block under "This is how your edit would have looked if applied" shows a file that never
    existed and is flagged ``preview``; one under "This is the original code before your edit" is
    the file as it is.
    """
    lines = split_lines(text)
    blocks: list[Block] = []
    preview = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "would have looked if applied" in line:
            preview = True
        elif "original code before your edit" in line:
            preview = False
        m = _WINDOW_HEADER.match(line)
        if not m:
            i += 1
            continue
        j = i + 1
        if j < len(lines) and re.match(r"^\(\d+ more lines above\)$", lines[j]):
            j += 1
        nums, i = numbered_run(lines, j, _WINDOW_LINE)
        if nums:
            blocks.append(Block(m.group("path").strip(), ranges_of(nums), int(m.group("total")),
                                preview))
    return blocks


# --------------------------------------------------------------------------------------------
# Edit tracking: map edited coordinates back to base lines where the edit is known exactly
# --------------------------------------------------------------------------------------------

Hunk = tuple[int, int, int]
"""(old_start, old_len, new_len) in the coordinates before the edit; ``old_start`` is the first
replaced line, or for a pure insertion the line the new text starts at."""


def hunks_from_diff(diff: str) -> list[Hunk] | None:
    """Exact change runs of a unified diff (context lines are not treated as changed).

    None when the diff cannot be read, so the caller falls back to ``post_edit``.
    """
    out: list[Hunk] = []
    lines = split_lines(diff)
    i = 0
    seen = False
    while i < len(lines):
        m = re.match(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[i])
        if not m:
            i += 1
            continue
        seen = True
        old = int(m.group(1))
        old_len = int(m.group(2)) if m.group(2) is not None else 1
        new_len = int(m.group(4)) if m.group(4) is not None else 1
        if old_len == 0:
            old += 1
        i += 1
        pos = old
        olds = news = 0
        run_start: int | None = None
        run_old = run_new = 0
        while i < len(lines) and (olds < old_len or news < new_len):
            ch = lines[i][:1]
            if ch in ("-", "+"):
                if run_start is None:
                    run_start, run_old, run_new = pos, 0, 0
                if ch == "-":
                    run_old += 1
                    olds += 1
                    pos += 1
                else:
                    run_new += 1
                    news += 1
            elif ch in (" ", "") or lines[i].startswith("\\"):
                if lines[i].startswith("\\"):
                    i += 1
                    continue
                if run_start is not None:
                    out.append((run_start, run_old, run_new))
                    run_start = None
                olds += 1
                news += 1
                pos += 1
            else:
                return None
            i += 1
        if run_start is not None:
            out.append((run_start, run_old, run_new))
        if olds != old_len or news != new_len:
            return None
    return out if seen else None


def _back(line: int, hunks: list[Hunk]) -> int | None:
    """The pre-edit line of post-edit ``line``; None for a line the edit wrote."""
    delta = 0
    for old_start, old_len, new_len in sorted(hunks):
        new_start = old_start + delta
        if line < new_start:
            return line - delta
        if line < new_start + new_len:
            return None
        delta += new_len - old_len
    return line - delta


@dataclass(slots=True)
class _FileEdits:
    history: list[list[Hunk]] = field(default_factory=list)
    mappable: bool = True


@dataclass(slots=True)
class EditTracker:
    """Which files a trajectory changed, and whether their edits can be undone line by line."""

    files: dict[str, _FileEdits] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    #: Script files written by shell commands (see ``read_shell``'s ``scripts``).
    scripts: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def key(path: str, cwd: str | None) -> str:
        p = path.strip()
        if not p.startswith("/") and cwd:
            p = posixpath.join(cwd, p)
        return posixpath.normpath(p)

    def edited(self, key: str) -> bool:
        return key in self.files

    def record(self, key: str, hunks: list[Hunk] | None) -> None:
        """Record an edit of ``key``; ``None`` hunks mean the change is not known exactly."""
        st = self.files.setdefault(key, _FileEdits())
        if hunks is None:
            st.mappable = False
        else:
            st.history.append(hunks)

    def undo(self, key: str) -> None:
        """``undo_edit``: drop the last exact edit; after an inexact one nothing is known."""
        st = self.files.get(key)
        if st is not None and st.mappable and st.history:
            st.history.pop()
        else:
            self.record(key, None)

    def views(self, path: str, ranges: list[tuple[int, int]], cwd: str | None,
              extra: list[Hunk] | None = None, unknown: bool = False) -> list[View]:
        """Views of ``ranges`` of ``path`` as currently numbered, in base coordinates if possible.

        ``extra`` is one more (hypothetical) edit on top of the file's history; ``unknown`` marks
        the display as not mappable at all (post-edit).
        """
        k = self.key(path, cwd)
        st = self.files.get(k)
        if unknown or (st is not None and not st.mappable):
            return [View(path, s, e, post_edit=True) for s, e in ranges]
        history = list(st.history) if st is not None else []
        if extra:
            history.append(extra)
        if not history:
            return [View(path, s, e) for s, e in ranges]
        base: list[int] = []
        for s, e in ranges:
            for n in range(s, e + 1):
                cur: int | None = n
                for hunks in reversed(history):
                    cur = _back(cur, hunks)
                    if cur is None:
                        break
                if cur is not None and cur >= 1:
                    base.append(cur)
        return [View(path, s, e) for s, e in ranges_of(base)]

    def adjust(self, views: Iterable[View], cwd: str | None) -> list[View]:
        """Shell views: those of edited files are mapped (bounded ranges) or marked post-edit."""
        out: list[View] = []
        for v in views:
            k = self.key(v.file, cwd)
            if v.post_edit or k not in self.files:
                out.append(v)
            elif v.start_line is not None and v.end_line is not None \
                    and self.files[k].mappable:
                out.extend(self.views(v.file, [(v.start_line, v.end_line)], cwd))
            else:
                out.append(replace(v, post_edit=True))
        return out


# --------------------------------------------------------------------------------------------
# Shell commands
# --------------------------------------------------------------------------------------------

def shell_reading(command: str, output: str, cwd: str | None, returncode: int | None = None,
                  scripts: dict[str, str] | None = None, truncated: bool = False
                  ) -> tuple[list[View], list[str]]:
    """Views and edited paths of one shell command, read by the shared shell reader."""
    reading = read_shell(command, output, cwd=cwd, returncode=returncode, scripts=scripts,
                         truncated=truncated)
    return list(reading.views), list(reading.edits)


def apply_shell(step: Step, tracker: EditTracker, command: str, output: str, cwd: str | None,
                returncode: int | None = None, truncated: bool = False) -> None:
    """Fill ``step`` from a shell command: views first (pre-edit state), then its edits."""
    views, edits = shell_reading(command, output, cwd, returncode, tracker.scripts, truncated)
    step.views.extend(tracker.adjust(views, cwd))
    for p in edits:
        tracker.record(tracker.key(p, cwd), None)
        if p not in step.edits:
            step.edits.append(p)


# --------------------------------------------------------------------------------------------
# Instance ids, usage, detection
# --------------------------------------------------------------------------------------------

_INSTANCE_ID = re.compile(r"^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+$")


def instance_id_from_path(path: Path) -> str | None:
    """An instance id spelled by the file's name or one of its parent directories."""
    for name in (path.name.split(".")[0], path.stem, *(p.name for p in path.parents)):
        if _INSTANCE_ID.match(name):
            return name
    return None


def _usage(stats: Any, notes: FieldNotes) -> Usage | None:
    """Usage from ``info.model_stats``; all-zero counters (replays) are unknown, not free. A
    block or a counter of another type is told to ``notes`` (it is then unknown)."""
    if not isinstance(stats, dict):
        if stats is not None:
            notes.note("info.model_stats", stats, "the run's usage is unknown")
        return None

    def num(key: str) -> int | float | None:
        v = stats.get(key)
        if is_number(v):
            return v
        if v is not None:
            notes.note(f"info.model_stats.{key}", v, "it is unknown")
        return None

    sent, recv, cost, calls = (num("tokens_sent"), num("tokens_received"),
                               num("instance_cost"), num("api_calls"))
    if not sent and not recv and not cost:
        sent = recv = cost = None
    u = Usage(int(sent) if sent is not None else None, int(recv) if recv is not None else None,
              float(cost) if cost is not None else None,
              int(calls) if calls else None)
    return None if u.is_empty() else u


_DETECT_TRAJ = re.compile(rb'"trajectory"\s*:\s*\[')


def detect(path: Path, head: bytes) -> bool:
    """A JSON object with a ``trajectory`` list of action/observation steps and a ``history``."""
    if path.is_dir() or not head.lstrip().startswith(b"{"):
        return False
    if not _DETECT_TRAJ.search(head):
        return False
    if b'"messages"' in head[:200] and b'"trajectory_format"' in head:
        return False
    has_steps = b'"action"' in head and b'"observation"' in head
    return has_steps or b'"history"' in head


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

_WINDOW_COMMANDS = {"open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert",
                    "search_file", "search_dir", "find_file", "submit", "exit_forfeit",
                    "exit_cost", "exit_context", "exit_error", "exit_format", "skip"}
_SEARCH_FILE_HEAD = re.compile(r'^Found \d+ matches for ".*" in (?P<path>.+):$')
_SEARCH_FILE_HIT = re.compile(r"^Line (\d+):")
_EDIT_0X = re.compile(r"^edit\s+(\d+)\s*:\s*(\d+)[^\n]*\n?(?P<text>.*)$", re.DOTALL)
_EDIT_FAILED = ("Your proposed edit has introduced", "Your changes have NOT been applied")
_ERROR_START = ("Error", "Usage:", "usage:", "No replacement", "ERROR")


@dataclass(slots=True)
class _Ctx:
    tracker: EditTracker = field(default_factory=EditTracker)
    #: 1.x shows the model only the first ``max_observation_length`` characters of an output
    #: (then "<response clipped>"), while the ``.traj`` keeps the whole observation
    max_observation: int | None = None


def _state(entry: dict[str, Any]) -> dict[str, Any]:
    st = entry.get("state")
    if isinstance(st, str):
        try:
            st = json.loads(st)
        except ValueError:
            return {}
    return st if isinstance(st, dict) else {}


def _edit_0x(action: str) -> tuple[int, int, int] | None:
    """(start, end, new line count) of a 0.x ``edit a:b`` block; end_of_edit may be missing."""
    m = _EDIT_0X.match(action.strip("\n"))
    if not m:
        return None
    text = m.group("text")
    text = re.sub(r"\n?end_of_edit\s*$", "", text)
    n_new = 0 if text == "" else text.count("\n") + 1
    return int(m.group(1)), int(m.group(2)), n_new


def _window_step(step: Step, ctx: _Ctx, cmd: str, action: str, obs: str,
                 cwd: str | None) -> None:
    """A windowed-editor command (0.x and 1.x tool bundles)."""
    tr = ctx.tracker
    blocks = window_blocks(obs)
    failed = any(s in obs for s in _EDIT_FAILED)
    edit_hunk: Hunk | None = None
    parsed = _edit_0x(action) if cmd == "edit" else None
    if parsed is not None:
        a, b, n_new = parsed
        if b >= a:
            edit_hunk = (a, b - a + 1, n_new)

    if cmd in ("edit", "insert") and not failed and blocks \
            and not obs.lstrip().startswith(_ERROR_START):
        target = blocks[0].path
        key = tr.key(target, cwd)
        before = tr.totals.get(key)
        exact = edit_hunk is not None and before is not None and blocks[0].total is not None \
            and blocks[0].total == before + edit_hunk[2] - edit_hunk[1]
        tr.record(key, [edit_hunk] if exact and edit_hunk is not None else None)
        step.edits.append(target)
    elif cmd == "create" and blocks and not obs.lstrip().startswith(_ERROR_START):
        tr.record(tr.key(blocks[0].path, cwd), None)
        step.edits.append(blocks[0].path)

    for blk in blocks:
        if blk.path is None:
            continue
        key = tr.key(blk.path, cwd)
        if blk.preview:
            before = tr.totals.get(key)
            exact = edit_hunk is not None and before is not None and blk.total is not None \
                and blk.total == before + edit_hunk[2] - edit_hunk[1]
            step.views.extend(tr.views(blk.path, blk.ranges, cwd,
                                       extra=[edit_hunk] if exact and edit_hunk else None,
                                       unknown=not exact))
            continue
        step.views.extend(tr.views(blk.path, blk.ranges, cwd))
        if blk.total is not None:
            tr.totals[key] = blk.total

    if cmd == "search_file":
        lines = split_lines(obs)
        for i, line in enumerate(lines):
            m = _SEARCH_FILE_HEAD.match(line)
            if not m:
                continue
            nums = []
            for hit in lines[i + 1:]:
                h = _SEARCH_FILE_HIT.match(hit)
                if not h:
                    break
                nums.append(int(h.group(1)))
            if nums:
                step.views.extend(tr.views(m.group("path").strip(), ranges_of(nums), cwd))


def _editor_args(action: str) -> dict[str, Any]:
    """``--name value`` options of a ``str_replace_editor`` command line (shell quoting)."""
    try:
        argv = shlex.split(action)
    except ValueError:
        return {}
    out: dict[str, Any] = {}
    i = 3
    while i < len(argv):
        if argv[i].startswith("--") and i + 1 < len(argv):
            out[argv[i][2:]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return out


_SRE_ARGS = re.compile(r"^str_replace_editor\s+(?P<cmd>\w+)\s+(?P<path>\"[^\"]*\"|'[^']*'|\S+)")


def _editor_step(step: Step, ctx: _Ctx, action: str, obs: str, cwd: str | None) -> None:
    """A ``str_replace_editor`` call (1.x): views from the ``cat -n`` output, edits from success."""
    tr = ctx.tracker
    m = _SRE_ARGS.match(action.strip())
    if not m:
        return
    cmd = m.group("cmd")
    path = m.group("path").strip("\"'")
    head = obs.lstrip()
    if cmd == "view":
        if head.startswith("Here's the files and directories"):
            return
        for blk in catn_blocks(obs, default_path=path):
            step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))
        return
    if cmd in ("create", "str_replace", "insert", "undo_edit"):
        ok = "has been edited" in obs or "File created successfully" in obs \
            or ("undone successfully" in obs) or ("Last edit to" in obs)
        if not ok:
            return
        key = tr.key(path, cwd)
        if cmd == "undo_edit":
            tr.undo(key)
        else:
            exact = cmd in ("str_replace", "insert")
            tr.record(key, editor_hunk(cmd, _editor_args(action), obs) if exact else None)
        step.edits.append(path)
        for blk in catn_blocks(obs, default_path=path):
            step.views.extend(tr.views(blk.path or path, blk.ranges, cwd))


def _read_step(index: int, entry: Any, ctx: _Ctx, cwd: str | None, where: str,
               notes: FieldNotes) -> Step:
    if not isinstance(entry, dict):
        raise AdapterError("a trajectory step must be an object", path=where,
                           field=f"trajectory[{index}]")
    action = entry.get("action")
    obs = entry.get("observation")
    if not isinstance(action, str):
        notes.note("trajectory[].action", action, "the step does nothing",
                   f"trajectory[{index}].action")
    if not isinstance(obs, str) and obs is not None:
        notes.note("trajectory[].observation", obs, "the step shows nothing",
                   f"trajectory[{index}].observation")
    action = action if isinstance(action, str) else ""
    obs = obs if isinstance(obs, str) else ""
    clipped = ctx.max_observation is not None and len(obs) > ctx.max_observation
    if clipped:
        obs = obs[:ctx.max_observation]
    text = action.strip()
    step = Step(index=index, action=text)
    if not text:
        return step
    first = text.split(None, 1)[0]
    if first == "str_replace_editor":
        step.tool = "str_replace_editor"
        _editor_step(step, ctx, text, obs, cwd)
    elif first in _WINDOW_COMMANDS:
        step.tool = first
        _window_step(step, ctx, first, text, obs, cwd)
    else:
        # ContextBench's SWE-agent names the tool ("bash ls -la"); ``bash -c ...`` is a command.
        rest = text[len("bash"):].strip() if first == "bash" else ""
        command = rest if rest and not rest.startswith("-") else text
        step.tool = "bash"
        apply_shell(step, ctx.tracker, command, obs, cwd, truncated=clipped)
    return step


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise AdapterError(f"cannot read: {exc.strerror}", path=str(path)) from exc
    except ValueError as exc:
        raise AdapterError(f"not valid JSON ({exc})", path=str(path)) from exc
    if not isinstance(data, dict):
        raise AdapterError("a SWE-agent .traj must be a JSON object", path=str(path))
    if not isinstance(data.get("trajectory"), list):
        raise AdapterError("missing list 'trajectory'", path=str(path), field="trajectory")
    return data


_MAX_OBSERVATION_1X = 100_000  # SWE-agent 1.x's default ``templates.max_observation_length``


def _replay_config(data: dict[str, Any]) -> dict[str, Any]:
    rc = data.get("replay_config")
    if isinstance(rc, str):
        try:
            rc = json.loads(rc)
        except ValueError:
            return {}
    return rc if isinstance(rc, dict) else {}


def read(path: Path, options: ReadOptions) -> list[Trajectory]:
    """One trajectory per ``.traj`` file.

    Under preset ``contextbench`` a ``.traj`` file is read as the reference reads it: its
    ``info.patch_context`` alone (``cb_sweagent_patch_context.read_traj_cb``). Under ``strict``
    that declaration, where present, is the final context of the steps read here.
    """
    if is_contextbench(options) and path.name.endswith(pc.TRAJ_SUFFIX):
        return [pc.read_traj_cb(path, options)]
    data = _load(path)
    where = str(path)
    steps_in = data["trajectory"]
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    rc = _replay_config(data)
    v1 = bool(rc) or any(isinstance(e, dict) and isinstance(e.get("state"), dict)
                         for e in steps_in)
    ps = rc.get("problem_statement") if isinstance(rc.get("problem_statement"), dict) else {}
    agent_cfg = rc.get("agent") if isinstance(rc.get("agent"), dict) else {}
    model_cfg = agent_cfg.get("model") if isinstance(agent_cfg.get("model"), dict) else {}

    templates = agent_cfg.get("templates") if isinstance(agent_cfg.get("templates"), dict) \
        else {}
    limit = templates.get("max_observation_length", _MAX_OBSERVATION_1X)
    ctx = _Ctx(max_observation=limit if v1 and isinstance(limit, int) and limit > 0 else None)
    steps: list[Step] = []
    prev_cwd: str | None = None
    notes = FieldNotes()
    for i, entry in enumerate(steps_in):
        st = _state(entry) if isinstance(entry, dict) else {}
        wd = st.get("working_dir") if isinstance(st.get("working_dir"), str) else None
        # 0.x records the state before the action, 1.x the state after it.
        cwd = (prev_cwd or wd) if v1 else wd
        steps.append(_read_step(i, entry, ctx, cwd, where, notes))
        if wd:
            prev_cwd = wd

    instance_id = options.instance_id or (ps.get("id") if isinstance(ps.get("id"), str)
                                          else None) or instance_id_from_path(path) or path.stem
    submission = info.get("submission")
    model = model_cfg.get("name") if isinstance(model_cfg.get("name"), str) else None
    version = info.get("swe_agent_version")
    warnings: list[str] = []
    declared = pc.traj_declared_context(info, warnings)
    extra: dict[str, Any] = {"agent_version": version} if isinstance(version, str) else {}
    if warnings:
        extra["read_warnings"] = warnings
    usage = _usage(info.get("model_stats"), notes)
    notes.extend_into(extra)
    return [Trajectory(
        instance_id=instance_id,
        steps=steps,
        final_context=declared,
        run=options.run,
        agent="swe-agent",
        model=model,
        model_patch=submission if isinstance(submission, str) and submission.strip() else None,
        usage=usage,
        resolved=None,
        source=where,
        extra=extra,
    )]
