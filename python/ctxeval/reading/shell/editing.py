"""Editing commands: which files a command modifies.

Redirections into a file, ``sed -i``/``perl -i``, ``tee``, ``cp``/``mv``/``install``, ``patch`` and
``git apply`` (the files of the diff), ``git restore``/``git checkout``, and Python code that
writes files (``python -c``, a heredoc, or a script the same command wrote).
"""

from __future__ import annotations

import posixpath
import re

from .interpreters import _PY_WRITE_RE
from .lexer import _DYNAMIC, _Simple
from .pipeline import _Ctx, _git_opt_values, _join, _split_opts

_DIFF_FILE_RE = re.compile(r"^(?:\+\+\+ (?:b/)?(\S+)|diff --git a/\S+ b/(\S+))", re.M)


def _edits_of(simple: _Simple, argv: list[str], ctx: _Ctx, output: str) -> list[str]:
    """Files one simple command modifies (as written, joined with the working directory).

    Targets named by an expansion (``> $OUT``) are unknown and left out.
    """
    return [e for e in _edit_targets(simple, argv, ctx, output) if _DYNAMIC not in e]


def _edit_targets(simple: _Simple, argv: list[str], ctx: _Ctx, output: str) -> list[str]:
    out: list[str] = []
    for op, target in simple.redirs:
        # any descriptor written to a file modifies it (2>err.log too); 2>&1 and /dev/null do not
        if ">" in op and not op.endswith("&") and target and target != "/dev/null" \
                and not target.startswith("&"):
            out.append(ctx.path(target))
            if ctx.scripts is not None and simple.heredoc is not None:
                prior = ctx.scripts.get(ctx.path(target), "") if op.endswith(">>") else ""
                ctx.scripts[ctx.path(target)] = prior + simple.heredoc.body
    if not argv:
        return out
    name = posixpath.basename(argv[0])
    args = argv[1:]
    if name == "sed" and any(a.startswith("-i") or a.startswith("--in-place") or
                             (re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z.]*", a) is not None)
                             for a in args):
        opts, rest = _split_opts([a for a in args if not a.startswith("-i")
                                  and not a.startswith("--in-place")],
                                 {"-e", "--expression", "-f", "--file"})
        if "-e" not in opts and "--expression" not in opts and "-f" not in opts and rest:
            rest = rest[1:]
        out.extend(ctx.path(f) for f in rest)
    elif name == "perl" and any(re.fullmatch(r"-\w*i\S*", a) for a in args):
        opts, rest = _split_opts(args, {"-e", "-E", "-M", "-I"})
        if "-e" not in opts and "-E" not in opts and rest:
            rest = rest[1:]
        out.extend(ctx.path(f) for f in rest)
    elif name == "tee":
        _, rest = _split_opts(args, set())
        out.extend(ctx.path(f) for f in rest if f != "/dev/null")
    elif name in ("cp", "mv", "install") and len(args) >= 2:
        _, rest = _split_opts(args, {"-t", "--target-directory", "-S", "--suffix"})
        if len(rest) >= 2:
            if name == "mv":  # the sources are gone from where they were
                out.extend(ctx.path(f) for f in rest[:-1])
            out.append(ctx.path(rest[-1]))
    elif name == "patch":
        opts, rest = _split_opts(args, {"-p", "-d", "-i", "-o", "-r", "-B", "-F", "-V", "-z",
                                        "--input", "--directory"})
        base = ctx.path(opts["-d"]) if "-d" in opts else ctx.cwd
        for m in re.finditer(r"^patching file '?([^'\n]+?)'?$", output, re.M):
            out.append(_join(base, m.group(1)))
        if not out and simple.heredoc is not None:
            out.extend(_join(base, a or b) for a, b in _DIFF_FILE_RE.findall(simple.heredoc.body))
    elif name == "git" and len(args) >= 1:
        sub_i = next((i for i, a in enumerate(args) if not a.startswith("-")
                      and a not in _git_opt_values(argv)), None)
        if sub_i is None:
            return out
        sub, rest = args[sub_i], args[sub_i + 1:]
        if sub == "apply" and simple.heredoc is not None and "--check" not in rest \
                and "--stat" not in rest:
            out.extend(ctx.path(a or b) for a, b in _DIFF_FILE_RE.findall(simple.heredoc.body))
        elif sub in ("checkout", "restore") and "--" in rest:
            out.extend(ctx.path(f) for f in rest[rest.index("--") + 1:])
        elif sub == "restore":
            out.extend(ctx.path(f) for f in rest if not f.startswith("-"))
        elif sub == "checkout":
            out.extend(ctx.path(f) for f in rest if not f.startswith("-")
                       and ("." in posixpath.basename(f) or "/" in f))
    elif re.fullmatch(r"python[\d.]*", name):
        opts, rest = _split_opts(args, {"-c", "-m", "-W", "-X"})
        code = opts.get("-c") or (simple.heredoc.body if simple.heredoc is not None else "")
        if not code and "-m" not in opts and rest and ctx.scripts:
            code = ctx.scripts.get(ctx.path(rest[0]), "")
        for m in _PY_WRITE_RE.finditer(code or ""):
            path = m.group(2) or m.group(4)
            out.append(ctx.path(path))
    return out
