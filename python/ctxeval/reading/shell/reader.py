"""The entry point: :func:`read_shell` parses a command, plans each pipeline, reads the
observation against the plans and returns a :class:`ShellReading` (views, edits, kinds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model import View
from .editing import _edits_of
from .interpreters import _echo_text, _shell_c, _shell_file
from .lexer import _DYNAMIC, _Group, _parse, _Pipeline, _simples, split_commands
from .output import _END_CUT_RE, _MIDDLE_CUT_RE, _TOTAL_LINES_RE, _TRUNC_RE, _assign, _lines
from .pipeline import _Ctx, _file_stream, _join, _kind, _Plan, _Stream, _strip_wrappers
from .viewing import _stage
from .views import _plan_views, _printed_diff_views


@dataclass(slots=True)
class ShellReading:
    """What one shell command displayed, modified and used."""

    views: list[View] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


def _plans(pipelines: list[_Pipeline], ctx: _Ctx, output: str, edits: list[str],
           kinds: list[str]) -> list[_Plan]:
    plans: list[_Plan] = []
    for pl in pipelines:
        if len(pl.parts) == 1 and isinstance(pl.parts[0], _Group):
            sub_ctx = _Ctx(ctx.cwd, ctx.edited, ctx.scripts)
            plans.extend(_plans(pl.parts[0].body, sub_ctx, output, edits, kinds))
            continue
        script = _shell_c(pl)
        if script is None:  # bash fix.sh, of a script written earlier: its commands
            script = _shell_file(pl, ctx.scripts, ctx.path)
        if script is not None:  # bash -c '…': read the inner commands, in a child shell
            kinds.append("bash")
            plans.extend(_plans(_parse(script, []), _Ctx(ctx.cwd, ctx.edited, ctx.scripts),
                                output, edits, kinds))
            continue
        plans.append(_pipeline_plan(pl, ctx, output, edits, kinds))
    return plans


def _pipeline_plan(pl: _Pipeline, ctx: _Ctx, output: str, edits: list[str],
                   kinds: list[str]) -> _Plan:
    stream: _Stream | None = None
    raw: dict[str, str] = {}
    plan_cwd = ctx.cwd
    after_edit = set(ctx.edited)
    stdout_redirected = False
    echo: str | None = None
    n_parts = len(pl.parts)
    for idx, part in enumerate(pl.parts):
        if isinstance(part, _Group):
            inner_kinds: list[str] = []
            _plans(part.body, _Ctx(ctx.cwd, ctx.edited, ctx.scripts), "", edits, inner_kinds)
            kinds.extend(inner_kinds)
            stream = _Stream("none")
            continue
        argv = _strip_wrappers(part.argv)
        if argv:
            kinds.append(_kind(argv))
        if argv and argv[0] in ("cd", "pushd") and n_parts == 1:
            target = next((a for a in argv[1:] if not a.startswith("-")), None)
            if target is None or _DYNAMIC in target or target == "-":
                ctx.cwd = _DYNAMIC  # home, a variable, the previous directory: unknown
            elif ctx.cwd is None or target.startswith("/"):
                ctx.cwd = target
            else:
                ctx.cwd = _join(ctx.cwd, target)
            return _Plan("silent")
        for e in _edits_of(part, argv, ctx, output):
            if e not in edits:
                edits.append(e)
            ctx.edited.add(e)
        if any(op.lstrip("0123456789") in (">", ">>", ">|", "&>", "&>>") and
               not op.startswith("2") for op, _ in part.redirs):
            stdout_redirected = idx == n_parts - 1 or stdout_redirected
        stdin = stream if idx > 0 else None
        if part.heredoc is not None or part.herestring is not None or any(
                op.endswith("<") and op != "<<<" for op, _ in part.redirs):
            src = next((t for op, t in part.redirs if op in ("<", "0<")), None)
            stdin = _file_stream([ctx.path(src)]) if src else None
            if src:
                raw[ctx.path(src)] = src
        if not argv:
            stream = _Stream("none")
            continue
        if argv[0] == "echo" and n_parts == 1:
            echo = _echo_text(argv)
        if argv[0] in ("git",) and "-C" in argv:
            i = argv.index("-C")
            sub = _Ctx(ctx.path(argv[i + 1]) if i + 1 < len(argv) else ctx.cwd, ctx.edited,
                       ctx.scripts)
            stream = _stage(argv, stdin, sub, raw)
            plan_cwd = sub.cwd
        else:
            stream = _stage(argv, stdin, ctx, raw)
    if stdout_redirected:
        return _Plan("silent")
    if echo is not None:
        return _Plan("echo", echo=echo)
    if stream is None or stream.style == "none":
        return _Plan("other")
    return _Plan("view", stream, raw_files=raw, cwd=plan_cwd, after_edit=after_edit)


def read_shell(command: str, output: str, *, cwd: str | None = None,
               returncode: int | None = None, truncated: bool = False,
               scripts: dict[str, str] | None = None, printed: bool = False) -> ShellReading:
    """Views, edits and command kinds of one shell command, judged by its observation.

    ``output`` is what the agent saw (stdout and stderr as shown). Outputs truncated in the
    middle are understood: mini-swe-agent's
    ``<output_head>…</output_head><elided_chars>…</elided_chars><output_tail>…</output_tail>``,
    OpenHands' ``[... Observation truncated due to length ...]`` and Codex's ``[... omitted N of
    M lines ...]`` lines; so is Claude Code's ``... [N lines truncated] ...`` after a head. The
    head is read as printed; the tail where its lines carry their own line numbers, else it is
    kept as text to be placed from the source (see the module docstring). ``truncated=True``
    says the output stops early for another reason (a timeout, a length limit): its last
    printed line is the last one shown.

    ``scripts`` is the caller's memory of script files written by earlier commands of the same
    trajectory (heredoc redirections into a file); it is updated here, and a later
    ``python fix.py`` then counts the files ``fix.py`` opens for writing as edited.

    ``printed=True``: each line view whose lines were printed with their numbers known
    (``cat -n``, ``grep -n``, ``sed -n 'a,bp'``, ``head``) keeps them as its ``text``, so a
    caller that learns the file had been edited can keep them on its post-edit view, to be
    checked against the base file (``View.checkable``). Never raises.
    """
    try:
        return _read_shell(command, output or "", cwd, returncode, truncated, scripts, printed)
    except (RecursionError, ValueError, IndexError, KeyError, AttributeError, TypeError,
            AssertionError):
        return ShellReading(kinds=_safe_kinds(command))


def _safe_kinds(command: str) -> list[str]:
    try:
        return _dedupe([_kind(_strip_wrappers(a)) for a in split_commands(command)
                        if _strip_wrappers(a)])
    except Exception:
        return []


def _dedupe(items: list[str]) -> list[str]:
    seen: list[str] = []
    for it in items:
        if it and it not in seen:
            seen.append(it)
    return seen


def _read_shell(command: str, output: str, cwd: str | None, returncode: int | None,
                truncated: bool, scripts: dict[str, str] | None = None,
                printed: bool = False) -> ShellReading:
    subs: list[list[_Pipeline]] = []
    pipelines = _parse(command, subs)
    ctx = _Ctx(cwd, set(), scripts)
    edits: list[str] = []
    kinds: list[str] = []
    plans = _plans(pipelines, ctx, output, edits, kinds)
    for sub in subs:
        for s in _simples(sub):
            argv = _strip_wrappers(s.argv)
            if argv:
                kinds.append(_kind(argv))
    m = _TRUNC_RE.search(output)
    tail: list[str] | None = None
    in_line = True  # mini-swe-agent and OpenHands cut by characters, Codex by lines
    if m:
        head = _lines(m.group(1))
        tail = _lines(m.group(2))
        truncated = True
    elif (cut := _MIDDLE_CUT_RE.search(output)) is not None:  # the head and tail of a long output
        head = _lines(_TOTAL_LINES_RE.sub("", output[:cut.start()], count=1))
        tail = _lines(output[cut.end():])
        in_line = "lines ...]" not in cut.group(0)
        truncated = True
    elif (cut := _END_CUT_RE.search(output)) is not None:  # only the head of a long output
        head = _lines(output[:cut.start()])
        truncated = True
    else:
        head = _lines(output)
    _assign(plans, head, truncated, tail, in_line)
    ok = returncode in (0, None)
    views: list[View] = []
    seen: set[View] = set()
    for plan in plans:
        if plan.kind != "view":
            continue
        for v in _plan_views(plan, ok, printed) + _printed_diff_views(plan):
            if v not in seen and _DYNAMIC not in v.file:  # relative to an unknown directory
                seen.add(v)
                views.append(v)
    return ShellReading(views, edits, _dedupe(kinds))
