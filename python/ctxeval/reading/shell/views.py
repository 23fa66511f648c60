"""From each pipeline's printed lines to views.

Line numbers printed by the tool win over what the command implies; numbered lines are
credited as printed; lines printed without numbers are kept as text for placing (with which of
them a content filter printed); grep output is read per file (names and numbers in front of
the lines); ``==> f <==`` headers split the output of ``head``/``tail`` of several files.
"""

from __future__ import annotations

import re

from ...linesets import line_runs
from ...model import View
from .output import (
    _CONTEXT_NUM_RE,
    _ELIDED,
    _ELISIONS,
    _GPOS_RE,
    _HEADER_RE,
    _TAB_RE,
    _TOOL_MESSAGE_RE,
    _is_error,
)
from .pipeline import _DIFF_FILE_HEADER_RE, _head_of, _join, _Plan, _Seg

Text = tuple[tuple[str, ...], ...]


def _text_chunks(lines: list[str], mode: str | None, cut: bool
                 ) -> tuple[Text | None, tuple[str, ...] | None]:
    """Printed lines as chunks of consecutive file lines (``View.text``) and which of their
    end lines were printed in part (``View.partial``); (None, None) if unusable.

    A line cut by a middle truncation (``_ELIDED``: the one before the cut, the first after it)
    was shown in part: it is kept, marked, unless nothing but blanks of it was printed. The last
    line of an output stopped early (``cut``) is dropped: its end is unknown, and a content
    filter's rule (``View.matches``) counts whole lines.
    """
    if mode is None:
        return None, None
    parts: list[list[str]] = [[]]
    flags: list[list[bool]] = [[False, False]]  # per part: first line partial, last partial
    for ln in lines:
        if ln in _ELISIONS:
            in_line = ln == _ELIDED
            if parts[-1] and in_line:
                if parts[-1][-1].strip():
                    flags[-1][1] = True
                else:
                    parts[-1].pop()
            parts.append([])
            flags.append([in_line, False])
        elif ln == "--" and mode != "block":
            parts.append([])  # grep's group separator, never credited as a file line
            flags.append([False, False])
        elif flags[-1][0] and not parts[-1] and not ln.strip():
            flags[-1][0] = False  # only blanks of the cut line were printed: nothing of it
        else:
            parts[-1].append(ln)
    if cut and parts[-1]:
        parts[-1].pop()
        flags[-1][1] = False
    chunks: list[tuple[str, ...]] = []
    partial: list[str] = []
    for p, (first, last) in zip(parts, flags, strict=True):
        if not p:
            continue
        if mode == "lines":
            for k, ln in enumerate(p):
                chunks.append((ln,))
                partial.append(_partial(first and k == 0, last and k == len(p) - 1))
        else:
            chunks.append(tuple(p))
            partial.append(_partial(first, last))
    if not chunks:
        return None, None
    return tuple(chunks), tuple(partial) if any(partial) else None


def _partial(first: bool, last: bool) -> str:
    return "both" if first and last else "start" if first else "end" if last else ""


def _ranges(file: str, numbers: list[int], post_edit: bool,
            texts: dict[int, str] | None = None) -> list[View]:
    """Line views of the printed ``numbers``; with ``texts`` (each number's printed text),
    each keeps the lines it printed (``read_shell``'s ``printed``)."""
    out = []
    for a, b in line_runs(numbers):
        text = None
        if texts is not None and all(n in texts for n in range(a, b + 1)):
            text = (tuple(texts[n] for n in range(a, b + 1)),)
        out.append(View(file, a, b, post_edit, text))
    return out


def _plan_views(plan: _Plan, ok: bool, printed: bool = False) -> list[View]:
    """The views of one pipeline from the lines it printed (``printed``: line views keep the
    lines they printed, see ``read_shell``)."""
    st = plan.stream
    failed: set[str] = set()
    lines: list[str] = []
    for ln in plan.lines:
        if _is_error(ln):
            for joined, written in plan.raw_files.items():
                if written and (f" {written}:" in ln or f"'{written}'" in ln
                                or f"{written}: " in ln or f"‘{written}’" in ln):
                    failed.add(joined)
            continue
        lines.append(ln)

    def pe(f: str) -> bool:
        return f in plan.after_edit

    views: list[View] = []
    if st.style == "tab":
        found = [(int(m.group(1)), ln[m.end():]) for ln in lines if (m := _TAB_RE.match(ln))]
        f = st.files[0] if st.files else None
        if f is not None and f not in failed:
            views.extend(_ranges(f, [n for n, _ in found], pe(f),
                                 dict(found) if printed else None))
        return views
    if st.style == "gpos":
        if not st.files or st.files[0] in failed:
            return views
        positions: list[int] = []
        texts: dict[int, str] = {}
        for ln in lines:
            m = _GPOS_RE.match(ln)
            if not m:
                continue
            if st.inner_tab:
                t = _TAB_RE.match(ln[m.end():])
                if t:
                    positions.append(int(t.group(1)))
                    texts[int(t.group(1))] = ln[m.end():][t.end():]
            else:
                positions.append(int(m.group(1)))
                texts[int(m.group(1))] = ln[m.end():]
        if st.inner_tab:
            return _ranges(st.files[0], positions, pe(st.files[0]), texts if printed else None)
        if not st.segs:
            if positions and len(st.files) == 1:
                return [View(st.files[0], None, None, pe(st.files[0]))]
            return views
        by_file: dict[str, list[int]] = {}
        by_line: dict[str, dict[int, str]] = {}
        for p in positions:
            hit = _locate(st.segs, p)
            if hit is not None:
                by_file.setdefault(hit[0], []).append(hit[1])
                by_line.setdefault(hit[0], {})[hit[1]] = texts[p]
        for f, nums in by_file.items():
            views.extend(_ranges(f, nums, pe(f), by_line[f] if printed else None))
        return views
    if st.style in ("gfile", "gname"):
        return _grep_file_views(plan, lines, failed)
    if st.style == "diff":
        # a diff of the working tree shows the files the agent changed, as they now are:
        # file-level views, after an edit (paths are relative to the repository's root)
        return [View(m.group(2), None, None, post_edit=True)
                for ln in lines if (m := _DIFF_FILE_HEADER_RE.match(ln))]
    if st.style == "headers":
        return _header_views(plan, lines, ok)
    if st.style == "files" or st.style == "bytes":
        files = [f for f in st.files if f not in failed]
        if (lines or plan.tail) and len(files) == 1:
            body = [ln for ln in lines if not _TOOL_MESSAGE_RE.match(ln)]
            if plan.tail:
                body += [plan.elision, *plan.tail]
            text, partial = (None, None) if pe(files[0]) or st.style == "bytes" else \
                _text_chunks(body, st.text, plan.cut and not plan.tail)
            rule = None if plan.tail or text is None else \
                _head_of(st.matches) if plan.cut else st.matches
            return [View(files[0], None, None, pe(files[0]), text, rule, partial)]
        return views
    if st.style != "" or plan.kind != "view":
        return views
    # positional: the printed lines are the stream's first lines
    n = len(lines)
    if plan.ambiguous:
        if ok and not plan.cut:
            return [View(s.file, s.start, s.end, pe(s.file)) for s in st.segs
                    if s.file not in failed]
        files = sorted({s.file for s in st.segs} - failed)
        return [View(f, None, None, pe(f)) for f in files] if len(files) == 1 and n else []
    if n == 0 and not plan.tail:  # (only a tail printed: an output whose head was dropped)
        if st.whole and ok and not plan.cut and len(st.segs) == 1 and st.segs[0].file \
                not in failed:
            return [View(st.segs[0].file, 1, None, pe(st.segs[0].file))]
        return views
    remaining = n
    live = [s for s in st.segs if s.file not in failed]
    for seg in live:
        if remaining <= 0:
            break
        length = seg.length
        if length is None:  # to the end of the file
            if plan.cut or (not ok and len(live) > 1):
                # what was printed, all of it credited to the first file (the others unknown)
                views.append(View(seg.file, seg.start, seg.start + remaining - 1, pe(seg.file)))
                break
            # complete output: every file of the stream was printed to its end (cat a b)
            views.append(View(seg.file, seg.start, None, pe(seg.file)))
            continue
        take = min(length, remaining)
        if take > 0:
            text = (tuple(lines[n - remaining:n - remaining + take]),) if printed else None
            views.append(View(seg.file, seg.start, seg.start + take - 1, pe(seg.file), text))
        remaining -= take
    if plan.tail and live and not pe(live[-1].file):
        # the end of the stream, after a middle truncation: its position is found from the
        # source (``ctxeval.reading.placing``); the last file printed is where it ends
        text, partial = _text_chunks([plan.elision, *plan.tail], "block", False)
        if text is not None:
            views.append(View(live[-1].file, None, None, False, text, partial=partial))
    return views


def _printed_diff_views(plan: _Plan) -> list[View]:
    """A file printed whole that holds a git diff (``cat patch.txt`` after ``git diff >
    patch.txt``) shows the files of the diff too, as a ``git diff`` would: file level, edited."""
    if plan.stream.style != "" or not plan.lines:
        return []
    return [View(m.group(2), None, None, post_edit=True)
            for ln in plan.lines if (m := _DIFF_FILE_HEADER_RE.match(ln))]


def _locate(segs: list[_Seg], pos: int) -> tuple[str, int] | None:
    base = 1
    for seg in segs:
        length = seg.length
        if length is None or pos < base + length:
            return (seg.file, seg.start + pos - base) if pos >= base else None
        base += length
    return None


def _grep_file_views(plan: _Plan, lines: list[str], failed: set[str]) -> list[View]:
    """``file:N:text`` / ``file-N-text`` (numbered) or ``file:text`` lines of a multi-file grep.

    Without numbers, each file's printed lines become the text of its file-level view
    (``View.text``), to be placed from the source.
    """
    cwd = plan.cwd
    numbered = plan.stream.style == "gfile"
    st = plan.stream
    if plan.ambiguous and not numbered and st.hit is not None and st.text is not None:
        # another command's output may be mixed in: keep the lines that are hits of this grep
        hit = st.hit
        lines = [ln for ln in lines if ln in ("--", *_ELISIONS) or (
            (m := re.match(r"^(.+?):", ln)) is not None and hit(ln[m.end():]))]
    elided = any(ln in _ELISIONS for ln in lines)
    cut = plan.cut and not elided
    body = [ln for ln in lines if ln != "--" and not ln.startswith("Binary file")
            and not _TOOL_MESSAGE_RE.match(ln) and ln not in _ELISIONS]
    if st.multi_grep_files and st.files and body and st.files[0] not in failed:
        only = st.files[0]
        written = plan.raw_files.get(only, only)
        post = only in plan.after_edit
        if numbered and all(_GPOS_RE.match(ln) for ln in body):
            return _ranges(only, [int(m.group(1)) for ln in body if (m := _GPOS_RE.match(ln))],
                           post)
        if not numbered and not any(ln.startswith(written) for ln in body):
            text, partial = (None, None) if post else _text_chunks(
                [ln for ln in lines if not ln.startswith("Binary file")
                 and not _TOOL_MESSAGE_RE.match(ln)], st.text, cut)
            rule = None if elided or text is None else \
                _head_of(st.matches) if cut else st.matches
            return [View(only, None, None, post, text, rule, partial)]
    hits: dict[str, list[int]] = {}
    names: list[str] = []
    match_re = re.compile(r"^(.+?):(\d+):") if numbered else re.compile(r"^(.+?):")
    for ln in lines:
        if ln.startswith("Binary file ") or ln in ("--", *_ELISIONS) \
                or _TOOL_MESSAGE_RE.match(ln):
            continue
        m = match_re.match(ln)
        if not m:
            continue
        name = m.group(1)
        if name not in names:
            names.append(name)
        if numbered:
            hits.setdefault(name, []).append(int(m.group(2)))
    if not numbered:
        # a context line (``file-text``) whose text holds a colon looks like ``name:``: its
        # "name" starts with a real file name and a dash
        names = [n for n in names if not any(n != o and n.startswith(o + "-") for o in names)]
    if numbered:
        known = set(names)
        for ln in lines:  # context lines (file-N-text) name a file already seen in a match line
            if match_re.match(ln):
                continue
            for m in _CONTEXT_NUM_RE.finditer(ln):
                if ln[:m.start()] in known:
                    hits[ln[:m.start()]].append(int(m.group(1)))
                    break
    texts = {} if numbered else _texts_by_name(lines, names)
    views: list[View] = []
    for i, name in enumerate(names):
        joined = _join(cwd, name)
        if joined in failed:
            continue
        post = joined in plan.after_edit
        if numbered:
            views.extend(_ranges(joined, hits.get(name, []), post))
        else:
            text, partial = (None, None) if post else _text_chunks(
                texts.get(name, []), st.text, cut and name == names[-1])
            rule = None if text is None else _file_matches(st.matches, i, len(names), cut,
                                                           elided)
            views.append(View(joined, None, None, post, text, rule, partial))
    return views


def _file_matches(rule: str | None, i: int, n: int, cut: bool, elided: bool) -> str | None:
    """``View.matches`` of the i-th of n files in a grep's output, which prints file by file.

    A ``head`` (or an output cut short) keeps every match of the files before the last one
    printed, and the first ones of the last; a ``tail`` the last ones of the first file.
    """
    if elided or rule is None:
        return None
    if rule == "first":
        rule = "first" if i == n - 1 else "all"
    elif rule == "last":
        rule = "last" if i == 0 else "all"
    if cut and i == n - 1:
        rule = _head_of(rule)
    return rule


def _texts_by_name(lines: list[str], names: list[str]) -> dict[str, list[str]]:
    """The printed lines of each file of an unnumbered multi-file grep, with chunk breaks.

    ``name:text`` is a match and ``name-text`` a context line; a separator, an elision or a
    change of file ends a run of consecutive lines.
    """
    by_length = sorted(names, key=len, reverse=True)
    out: dict[str, list[str]] = {n: [] for n in names}
    current: str | None = None
    for ln in lines:
        if ln in ("--", *_ELISIONS):
            if current is not None:  # (the lines by an elision are cut: _text_chunks marks them)
                out[current].append(ln)
            current = None
            continue
        name = next((n for n in by_length if ln.startswith(n) and ln[len(n):len(n) + 1]
                     in (":", "-")), None)
        if name is None:
            continue
        if current is not None and name != current and out[current] \
                and out[current][-1] != "--":
            out[current].append("--")
        current = name
        out[name].append(ln[len(name) + 1:])
    return out


def _header_views(plan: _Plan, lines: list[str], ok: bool) -> list[View]:
    """``head``/``tail`` of several files: split at the ``==> f <==`` headers."""
    assert plan.stream.header_op is not None
    op, k = plan.stream.header_op
    by_written = {w: j for j, w in plan.raw_files.items()}
    sections: list[tuple[str, list[str]]] = []
    for ln in lines:
        m = _HEADER_RE.match(ln)
        if m and m.group(1) in by_written:
            sections.append((by_written[m.group(1)], []))
        elif sections:
            sections[-1][1].append(ln)
    views: list[View] = []
    for i, (f, body) in enumerate(sections):
        if i < len(sections) - 1 and body and body[-1] == "":
            body = body[:-1]  # the blank line before the next header
        n = len(body)
        post = f in plan.after_edit
        last_cut = plan.cut and i == len(sections) - 1
        if op == "head" and n:
            views.append(View(f, 1, min(n, k), post))
        elif op == "tail+" and n:
            views.append(View(f, k, None if not last_cut and ok else k + n - 1, post))
        elif n:
            views.append(View(f, None, None, post))
    return views
