"""ctxeval: score how coding agents find context."""

from ._core import __version__

__all__ = ["__version__"]
