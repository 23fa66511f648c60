"""Errors and problem reports that name the file, line and field they are about.

A run over thousands of instances must never die on one bad record, so most bad input is
recorded as a :class:`Problem` and the run goes on; the exceptions below are raised where a
whole input cannot be used, and always say where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass


def _where(path: str | None, line: int | None, field: str | None) -> str:
    parts = []
    if path:
        parts.append(f"{path}:{line}" if line is not None else path)
    elif line is not None:
        parts.append(f"line {line}")
    if field:
        parts.append(f"field {field!r}")
    return ", ".join(parts)


#: Characters of a value quoted in a message (an error row quotes what it is about, never a
#: whole field: a 200 MB ``base_commit`` once made a 200 MB results file).
EXCERPT = 120


def excerpt(text: object, limit: int = EXCERPT) -> str:
    """``text`` as it is when short, else its first ``limit`` characters and its length."""
    s = str(text)
    if len(s) <= limit:
        return s
    return f"{s[:limit]}… ({len(s):,} characters in all)"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with one item of the input, reported and skipped rather than fatal."""

    kind: str
    message: str
    path: str | None = None
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = _where(self.path, self.line, self.field)
        return f"{where}: {self.message}" if where else self.message

    def to_json(self) -> dict:
        out: dict = {"kind": self.kind, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        if self.field is not None:
            out["field"] = self.field
        return out


class CtxevalError(Exception):
    """Base of every error ctxeval raises on purpose; carries where the bad input is."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        kind: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        if kind is not None:
            self.kind = kind
        where = _where(path, line, field)
        super().__init__(f"{where}: {message}" if where else message)

    def to_problem(self) -> Problem:
        return Problem(self.kind, self.message, self.path, self.line, self.field)


class InputError(CtxevalError):
    """A file that cannot be read as the format it claims to be."""

    kind = "bad_input"


class GoldError(InputError):
    """Gold annotations that cannot be loaded."""

    kind = "bad_gold"


class AdapterError(InputError):
    """An agent output that its adapter cannot read (truncated, wrong format, ...)."""

    kind = "bad_trajectory"


class RepoError(CtxevalError):
    """A repository or commit that cannot be found or read."""

    kind = "missing_repo"


class PatchError(InputError):
    """A unified diff that cannot be parsed; the message names the failing hunk."""

    kind = "bad_patch"


class InstanceError(CtxevalError):
    """One instance cannot be scored (its row says why, with this kind); the run goes on.

    Raised while preparing an instance, e.g. ``no_context_extracted`` under the contextbench
    preset, where the reference writes an error row instead of scores.
    """

    kind = "instance_error"
