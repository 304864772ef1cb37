"""Hyperscan passes for the scan's byte checks (#26 item 1): the same answers as the pure
passes they stand for, from one compiled multi-pattern pass over the bytes.

Two passes of a scan's sparse reader search the same bytes for several things at once and
cost it most where Python pays per search (docs/performance.md, "Which path a user gets"):

- `needle_lines`: the lines of a block holding the format's assistant marker or naming a
  turn (`SparseReader._lines_with`: one regex search per line, ~3 µs);
- `piece_hits`: the pieces of joined text in which any of a set of patterns matches (the
  block counter's checks over the free parts of its lines: `survey.TAIL_TOKENS` and the
  delimiter test, `prefilter.delimiter_hits`: a `find` loop per token and anchor).

Each gives exactly the pure answer (tests/engine/test_native.py holds them to it with
hypothesis, and the JSON report byte for byte). hyperscan is an optional extra (`pip install
'thinkfix[fast]'`, wheels for Linux and macOS); without it, with `THINKFIX_PURE=1` in the
environment, or for a pattern hyperscan refuses, the pure passes run. Compiling the delimiter
grammar costs ~25 ms and importing hyperscan ~17 ms, which a small scan would not win back,
so a process starts using these passes once it has read `WARM_UP` bytes (`warm`).

The databases come from `io.multimatch` (one per pattern set and thread), which the secret
screen shares.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol

from thinkfix.formats.strangers import ASSISTANT, ESCAPED_LETTER
from thinkfix.io.multimatch import (
    PURE,
    SINGLEMATCH,
    SOM_LEFTMOST,
    database,
    hyperscan_module,
    literal,
)

#: The native passes run where hyperscan imports, unless `THINKFIX_PURE` is set (not "0"):
#: the switch the tests and the bench patch.
USE = not PURE
#: Bytes a process reads through the sparse reader before the native passes start. With the
#: databases in the cache folder (every run after a machine's first) importing hyperscan and
#: loading them costs what ~4 MB of scanning saves (a CLI scan of 8 MB of the dense bench
#: corpus: 1,010 M instructions pure, 958 M native); a first run compiles them (~40 ms).
WARM_UP = 6 << 20


class Lines(Protocol):
    """`SparseReader._lines_with`'s answer for buf[lo:hi]; `firsts`, where given, gets the
    first offset of each context marker the pass was built with (-1: absent)."""

    def __call__(
        self, buf: bytes, lo: int, hi: int, firsts: dict[bytes, int] | None = None
    ) -> dict[int, int]: ...


Hits = Callable[[bytes, list[int]], set[int]]

# `strangers._MODEL_VALUE` (`"model"` not followed by whitespace and a colon: a string
# value, not the key) without its lookahead: one character that is neither, or the end.
_MODEL_VALUE = rb'"model"[ \t\r\n]*(?:[^ \t\r\n:]|\z)'
_seen = 0  # bytes read so far in this process (`warm`)
_expected = 0  # the most a run of this process said it would read (`expect`)


def warm(size: int) -> bool:
    """Count `size` bytes read; True when the native passes are on and this process has read,
    or expects to read, `WARM_UP` bytes (then hyperscan is imported)."""
    global _seen
    _seen += size
    return USE and reach() >= WARM_UP and hyperscan_module() is not None


def expect(size: int) -> None:
    """A run is about to read `size` bytes in this process: what pays for itself within that
    many (the native passes from `WARM_UP`, the block counter from `survey.FROM_BYTES`) starts
    with its first byte, not once so much is read. The answers are the same either way."""
    global _expected
    _expected = max(_expected, size)


def reach() -> int:
    """The bytes this process has read through the sparse reader, or expects to read, if more."""
    return max(_seen, _expected)


#: `Lines`' key in `firsts` for the newlines that do not close an object and open the next:
#: where the first of them was found, or -1 (`io.jsoncheck.unread_not_objects`' `edges`).
EDGE = b"\n"


def needle_lines(marker: bytes, markers: tuple[bytes, ...] = ()) -> Lines | None:
    """`_needle_lines` of this thread, built once per marker (a file's reader asks for it)."""
    return _needle_lines(marker, markers, threading.get_ident())


@lru_cache(maxsize=32)
def _needle_lines(marker: bytes, markers: tuple[bytes, ...], thread: int) -> Lines | None:
    """`lines(buf, lo, hi, firsts) -> {start: end}`: `SparseReader._lines_with`'s answer (the
    lines of buf[lo:hi] holding `marker`, `"assistant"`, an escaped letter or `"model"` as a
    string value, in order; `end` the offset of the line's newline; `hi` just past a
    newline) from one pass,
    which also finds where each of the format's context `markers` first occurs (`firsts`;
    and under `EDGE`, whether a line may be no object, which the JSON check needs):
    the reader looked for each with `find`, and one absent from a block (Codex's
    `"reasoning"`, Claude Code's `"thinking"`: a `"` starts most candidates) cost a scan of it,
    ~6% of a dense scan. None where hyperscan is missing."""
    words = b"|".join(literal(w) for w in dict.fromkeys((marker, ASSISTANT)) if w)
    words += b"|" + ESCAPED_LETTER  # `SparseReader._lines_with`'s escaped letter
    # A word's line is reported once, at its newline; a model value with where it starts
    # (its whitespace may run past the newline); a context marker once, where it first ends;
    # a newline that does not close an object and open the next (`jsoncheck.EDGE`) once.
    patterns = (
        b"(?:" + words + rb")[^\n]*\n",
        _MODEL_VALUE,
        rb"[^}]\n|\n[^{]",
        *map(literal, markers),
    )
    flags = (0, SOM_LEFTMOST, SINGLEMATCH, *(SINGLEMATCH,) * len(markers))
    db = database(patterns, flags, thread)
    if db is None:
        return None
    lengths = [len(m) for m in markers]

    def lines(
        buf: bytes, lo: int, hi: int, firsts: dict[bytes, int] | None = None
    ) -> dict[int, int]:
        ends: list[int] = []
        values: list[int] = []
        first = [-1] * (len(markers) + 1)  # the edge's, then each marker's
        end, value = ends.append, values.append

        def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
            if pattern == 0:
                end(stop)
            elif pattern == 1:
                value(start)
            elif pattern == 2:
                first[0] = lo + stop
            else:  # a literal: its first match ends first (matches come in order of end)
                first[pattern - 2] = lo + stop - lengths[pattern - 3]

        # bytes, not a memoryview: hyperscan 0.7.23, the lowest version allowed, takes no other
        db.scan(buf[lo:hi], match_event_handler=on)
        if firsts is not None:
            firsts.update(zip((EDGE, *markers), first))
        rfind = buf.rfind
        out = {rfind(b"\n", lo, e) + 1 or lo: e for e in [lo + stop - 1 for stop in ends]}
        if values:  # rare: a line whose only needle is a model value
            find = buf.find
            for start in values:
                at = lo + start
                out.setdefault(rfind(b"\n", lo, at) + 1 or lo, find(b"\n", at, hi))
            out = dict(sorted(out.items()))
        return out

    return lines


def piece_hits(sources: tuple[bytes, ...], separator: bytes) -> Hits | None:
    """`_piece_hits` of this thread, built once per set of sources (a file's survey asks)."""
    return _piece_hits(sources, separator, threading.get_ident())


@lru_cache(maxsize=32)
def _piece_hits(sources: tuple[bytes, ...], separator: bytes, thread: int) -> Hits | None:
    """`hits(joined, starts) -> indices` of the pieces (joined by the one-byte `separator`,
    starting at `starts`) in which any of `sources` matches; none of them may match the
    separator, so a match lies inside one piece: the piece of its last byte. Each source is
    its own pattern: one alternation carrying `[^sep]*` to the piece's end (to report a piece
    once) cost hyperscan twice the time over the joined lines (18.8 ms against 9.6 ms on
    14 MB), for a few more reports. None where hyperscan is missing or refuses a source."""
    db = database(sources, (0,) * len(sources), thread)
    if db is None:
        return None

    def hits(joined: bytes, starts: list[int]) -> set[int]:
        out: set[int] = set()
        add = out.add

        def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
            add(bisect_right(starts, stop - 1) - 1)

        db.scan(joined, match_event_handler=on)
        return out

    return hits
