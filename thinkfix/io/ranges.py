"""A byte range of an open file as a stream of its own."""

from __future__ import annotations

import io
from typing import Any, BinaryIO


class ByteRange(io.RawIOBase):
    """Bytes [start, end) of an open file, as a stream that ends at `end` (an incremental scan
    reads what was appended; a split scan reads one piece of a large file)."""

    def __init__(self, raw: BinaryIO, start: int, end: int) -> None:
        self.raw = raw
        self.pos = start
        self.end = end
        raw.seek(start)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.end - self.pos)
        if want <= 0:
            return 0
        data = self.raw.read(want)
        n = len(data)
        buffer[:n] = data
        self.pos += n
        return n
