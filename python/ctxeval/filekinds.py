"""What a path on disk is when it is not a regular file or a directory.

Inputs are read more than once (a format is told from a file's first bytes, then the file is
read), outputs are checked before they are written over, and a FIFO with no process at its
other end blocks an ``open`` or a ``read`` for ever. So every reader and writer of the package
asks here first, and a FIFO, a device or a socket is named for what it is instead of being
opened.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["special_kind", "special_problem"]

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device"))


def special_kind(path: str | Path) -> str | None:
    """"a FIFO (named pipe)", "a character device", "a socket" or "a block device" when
    ``path`` (followed through links) is one; None for a file, a directory or nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


def special_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as an input (None when it can be tried): the message for a
    FIFO, a device or a socket."""
    kind = special_kind(path)
    if kind is None:
        return None
    return (f"is {kind}, not a file: inputs are read more than once (the format is told "
            "from the first bytes); write it to a file first")
