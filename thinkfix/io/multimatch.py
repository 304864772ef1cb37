"""Many byte patterns found in one native pass: hyperscan, where the `fast` extra installed it.

Two jobs search the same bytes for many things at once and pay in Python per search: the
scan's byte passes (`engine.scan.native`: assistant lines, delimiters) and the secret screen
(`engine.secrets.rules`: which of ~260 rule keywords a text holds, one `in` each, ~150 µs a
snippet). Both get their databases here, compiled once per pattern set and thread (a
database's scratch space serves one scan at a time). Every caller keeps a pure path with the
same answer for where hyperscan is missing, refuses a pattern, or `THINKFIX_PURE` is set.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

#: `THINKFIX_PURE` set (not "0"): every caller takes its pure path (the tests' and the bench's
#: switch; each caller reads it through its own module constant so a test can patch one).
PURE = os.environ.get("THINKFIX_PURE", "") not in ("", "0")
SINGLEMATCH = 8  # HS_FLAG_SINGLEMATCH: a pattern is reported once per scan
SOM_LEFTMOST = 256  # HS_FLAG_SOM_LEFTMOST: a match's start is reported too

Present = Callable[[bytes], set[int]]


def hyperscan_module() -> Any:
    """The hyperscan module, or None where it is not installed (imported on first use)."""
    try:
        import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    return hyperscan


@lru_cache(maxsize=64)
def literal(word: bytes) -> bytes:
    """A pattern matching exactly `word` (every byte but ASCII letters and digits as `\\xHH`)."""
    return b"".join(bytes([c]) if chr(c).isalnum() and c < 128 else b"\\x%02x" % c for c in word)


@lru_cache(maxsize=32)
def database(patterns: tuple[bytes, ...], flags: tuple[int, ...], thread: int) -> Any:
    """The block-mode database of `patterns` (ids their indices), or None where hyperscan is
    missing or refuses one of them. One per thread (its scratch serves one scan at a time)."""
    hs = hyperscan_module()
    if hs is None:
        return None
    db = hs.Database(mode=hs.HS_MODE_BLOCK)
    try:
        db.compile(
            expressions=list(patterns),
            ids=list(range(len(patterns))),
            elements=len(patterns),
            flags=list(flags),
        )
    except Exception:  # noqa: BLE001 - hyperscan's compile error: the pure pass runs
        return None
    return db


def present(words: tuple[bytes, ...]) -> Present | None:
    """`indices(text)`: the indices of the `words` that occur in `text`, from one pass (each
    word a literal, reported once). None where hyperscan is missing or refuses them."""
    return _present(words, threading.get_ident())


@lru_cache(maxsize=8)
def _present(words: tuple[bytes, ...], thread: int) -> Present | None:
    db = database(tuple(map(literal, words)), (SINGLEMATCH,) * len(words), thread)
    if db is None:
        return None

    def indices(text: bytes) -> set[int]:
        out: set[int] = set()
        if text:
            add = out.add

            def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
                add(pattern)

            db.scan(text, match_event_handler=on)
        return out

    return indices
