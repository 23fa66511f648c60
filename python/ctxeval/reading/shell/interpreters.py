"""Commands that run other code or print their own text.

``bash -c SCRIPT`` (also ``sh``, ``zsh``, ``dash``) is read as its inner commands, in a child
shell (:func:`_shell_c`), and so is ``bash FILE`` of a script an earlier command wrote from a
heredoc (:func:`_shell_file`); the pattern of a Python write (:data:`_PY_WRITE_RE`, applied by
:mod:`.editing` to ``python -c`` code, heredocs and scripts); the text ``echo`` prints
(:func:`_echo_text`), which marks where one command's output ends in the observation.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from .lexer import _DYNAMIC, _Pipeline, _Simple
from .pipeline import _strip_wrappers

_PY_WRITE_RE = re.compile(
    r"open\(\s*(['\"])([^'\"]+)\1\s*,\s*(?:mode\s*=\s*)?['\"][^'\"]*[wax+][^'\"]*['\"]"
    r"|Path\(\s*(['\"])([^'\"]+)\3\s*\)\s*\.write_(?:text|bytes)\(")


def _echo_text(argv: list[str]) -> str | None:
    if any(_DYNAMIC in a for a in argv):
        return None
    args = argv[1:]
    if args and args[0] in ("-n", "-e", "-E"):
        return None
    text = " ".join(args)
    return None if "$" in text or "`" in text else text


def _shell_file(pl: _Pipeline, scripts: dict[str, str] | None,
                path: Callable[[str], str]) -> str | None:
    """The text of a lone ``bash FILE [ARG...]`` (without redirections) whose ``FILE`` a
    command of the trajectory wrote from a heredoc (``scripts``, by path), else None."""
    if not scripts or len(pl.parts) != 1 or not isinstance(pl.parts[0], _Simple) \
            or pl.parts[0].redirs:
        return None
    argv = _strip_wrappers(pl.parts[0].argv)
    if len(argv) < 2 or posixpath.basename(argv[0]) not in ("bash", "sh", "zsh", "dash") \
            or argv[1].startswith("-") or _DYNAMIC in argv[1]:
        return None
    return scripts.get(path(argv[1]))


def _shell_c(pl: _Pipeline) -> str | None:
    """The script of a lone ``bash -c SCRIPT`` (without redirections), else None."""
    if len(pl.parts) != 1 or not isinstance(pl.parts[0], _Simple) or pl.parts[0].redirs:
        return None
    argv = _strip_wrappers(pl.parts[0].argv)
    if len(argv) < 3 or posixpath.basename(argv[0]) not in ("bash", "sh", "zsh", "dash"):
        return None
    for i, a in enumerate(argv[1:-1], start=1):
        if a.startswith("-") and not a.startswith("--") and "c" in a:
            script = argv[i + 1]
            return None if _DYNAMIC in script else script
        if not a.startswith("-"):
            return None
    return None
