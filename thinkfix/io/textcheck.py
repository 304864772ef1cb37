"""Which lines of a buffer are not UTF-8: the one check a line nobody parses still needs.

A scan jumps to the lines that can hold an assistant message and never reads the rest
(`engine.scan.sparse`). A file whose bytes are not UTF-8 is not JSON, so not a session
thinkfix has read: a parse of every line says `not UTF-8` for it, and the fast path must
too, or a corrupt byte (in a role word, say) hides a leak and the file counts clean (never
silently clean: review8, finding 8). One decode of a whole block is the cheapest exact
test CPython has (~0.45 ms a MB of non-ASCII text, memory speed for ASCII; hyperscan with
the invalid sequences as patterns was no faster); only a block that fails is looked at line
by line.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat


def not_utf8_lines(buf: bytes, lo: int, hi: int) -> dict[int, int]:
    """{start: end} of the lines in buf[lo:hi] whose bytes are not UTF-8, in order (`end` is
    where the line's newline is, or `hi`); empty, after one decode, for almost every block.
    `lo` starts a line. A newline is ASCII, so every invalid sequence lies inside one line."""
    out: dict[int, int] = {}
    if buf.isascii():
        return out
    view = memoryview(buf)
    while lo < hi:
        try:
            str(view[lo:hi], "utf-8")
        except UnicodeDecodeError as exc:
            at = lo + exc.start
            start = buf.rfind(b"\n", lo, at) + 1 or lo
            end = buf.find(b"\n", at, hi)
            end = hi if end < 0 else end
            out[start] = end
            lo = end + 1
        else:
            break
    return out


def gaps(lo: int, hi: int, read: dict[int, int]) -> tuple[list[int], list[int]]:
    """Where the bytes of buf[lo:hi] outside the lines `read` ({start: offset of its
    newline}, in order) start and end: what a sparse reader never parses."""
    return [lo, *map((1).__add__, read.values())], [*read, hi]


def unread_not_utf8(buf: bytes, lo: int, hi: int, read: dict[int, int]) -> dict[int, int]:
    """`not_utf8_lines` of the bytes of buf[lo:hi] outside the lines `read` ({start: offset
    of its newline}, in order): those a reader parses or checks as it counts them, which
    it need not decode twice (a third of a dense session's bytes). One decode per gap, in
    C iterators: no Python frame per line."""
    if buf.isascii():
        return {}
    starts, ends = gaps(lo, hi, read)
    view = memoryview(buf)
    try:
        deque(map(str, map(view.__getitem__, map(slice, starts, ends)), repeat("utf-8")), 0)
    except UnicodeDecodeError:
        out: dict[int, int] = {}
        for start, end in zip(starts, ends):  # rare (a damaged file): which lines
            out.update(not_utf8_lines(buf, start, end))
        return out
    return {}
