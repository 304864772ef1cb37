"""Block reads that keep what they read before a failure.

A buffered `read(n)` that fails part-way drops every byte it had read in that call: a
compressed session with garbage after its last stream, or a stream cut short, lost up to a
whole block of the session (4 MiB) unscanned, its leaks unreported and its records
uncounted, though its error was loud (exit 2). `BlockReader.read` gathers a block from
`read1` calls, returns what it gathered before a failure, and raises the failure on the
next call, so the reader scans every byte that decoded before the error says so.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO


class BlockReader:
    """`read(n)` of a binary stream that defers a failure past the bytes read before it."""

    __slots__ = ("_failed", "_read1")

    def __init__(self, fp: BinaryIO) -> None:
        # `read1`: at most one read of the stream underneath, so a failure costs no bytes
        self._read1 = getattr(fp, "read1", None) or fp.read
        self._failed: BaseException | None = None

    def read(self, n: int) -> bytes:
        """Up to `n` bytes (fewer only at the end of the stream, or before a failure, which
        the next call raises); b"" at the end."""
        if self._failed is not None:
            raise self._failed
        parts: list[bytes] = []
        got = 0
        while got < n:
            try:
                data = self._read1(n - got)
            except Exception as exc:  # raised by the next call, as it was
                if not parts:
                    raise
                self._failed = exc
                break
            if not data:
                break
            parts.append(data)
            got += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)


class Decoded(io.RawIOBase):
    """A raw stream decoded a step at a time (`_into`) that keeps the bytes decoded before a
    failure: `readinto` fills its buffer from as many steps as fit, returns what it holds
    when one fails, and raises the failure on the next read. Every decoder the project's
    readers use keeps nothing of a call that fails, so a failed read lost all it had
    decoded in that call."""

    def __init__(self) -> None:
        self._failed: BaseException | None = None

    def readable(self) -> bool:
        return True

    def _into(self, view: memoryview) -> int | None:
        """Decodes a step into `view`: how many bytes (0 when the step decoded none); None
        at the end."""
        raise NotImplementedError

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        got = 0
        while got < len(view):
            if self._failed is not None:
                if got:
                    break
                raise self._failed
            try:
                n = self._into(view[got:])
            except Exception as exc:  # raised by the next read, after what decoded
                self._failed = exc
                if got:
                    break
                raise
            if n is None:
                break
            got += n
        return got


class Pieces(Decoded):
    """A `Decoded` stream whose decoder returns its output (`_piece`), held until read; a
    subclass may return bytes it saved from a failed decode with `_then` set to the
    failure, which is raised once they are read."""

    def __init__(self) -> None:
        super().__init__()
        self._output = memoryview(b"")  # decoded, not yet returned
        self._then: BaseException | None = None

    def _piece(self, want: int) -> bytes | None:
        """The next decoded bytes (b"" when a step decoded none; best at most `want`); None
        at the end."""
        raise NotImplementedError

    def _into(self, view: memoryview) -> int | None:
        if not self._output:
            if self._then is not None:
                raise self._then
            piece = self._piece(len(view))
            if piece is None:
                return None
            self._output = memoryview(piece)
        n = min(len(self._output), len(view))
        view[:n] = self._output[:n]
        self._output = self._output[n:]
        return n
