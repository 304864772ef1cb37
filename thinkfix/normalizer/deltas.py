"""The stream's Delta cache: a token stream repeats its vocabulary, and making a Delta costs
more than looking one up, so the Delta of a short plain chunk is made once.

A cache is valid for one set of candidate characters (a chunk plain under one policy may hold
a delimiter's first character under another): `shared(start_chars)` hands every
`StreamNormalizer` of a policy family the same one; a caller that wants its own (a test, a
benchmark of a cold start) passes a fresh `DeltaCache`.
"""

from __future__ import annotations

from functools import lru_cache

from thinkfix.normalizer.spans import Delta

#: Only chunks this short are cached: longer ones rarely repeat.
CHUNK_MAX = 32
#: Entries per table at most; a full table starts again empty.
LIMIT = 1 << 16


class DeltaCache:
    """Deltas by chunk: `clean` for visible text, `think` for reasoning inside a block (with
    the chunk's trailing blank, which waits in case the block ends right after it)."""

    __slots__ = ("clean", "limit", "think")

    def __init__(self, limit: int = LIMIT) -> None:
        self.clean: dict[str, Delta] = {}
        self.think: dict[str, tuple[Delta, str]] = {}
        self.limit = limit


@lru_cache(maxsize=64)
def shared(start_chars: str) -> DeltaCache:
    """The cache every stream with these candidate characters shares."""
    return DeltaCache()
