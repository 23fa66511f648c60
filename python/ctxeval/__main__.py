"""``python -m ctxeval``: the same as the ``ctxeval`` command."""

from .cli import run

run()
