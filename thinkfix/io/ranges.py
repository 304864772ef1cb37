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

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (the rest of the range for -1), read straight from the file:
        no second copy through a buffer, so a piece of a large file reads as fast as a file."""
        want = self.end - self.pos if size < 0 else min(size, self.end - self.pos)
        if want <= 0:
            return b""
        data = self.raw.read(want)
        self.pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.end - self.pos)
        if want <= 0:
            return 0
        data = self.raw.read(want)
        n = len(data)
        buffer[:n] = data
        self.pos += n
        return n
