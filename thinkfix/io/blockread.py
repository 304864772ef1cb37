"""Block reads that keep what they read before a failure.

A buffered `read(n)` that fails part-way drops every byte it had read in that call: a
compressed session with garbage after its last stream, or a stream cut short, lost up to a
whole block of the session (4 MiB) unscanned, its leaks unreported and its records
uncounted, though its error was loud (exit 2). `BlockReader.read` gathers a block from
`read1` calls, returns what it gathered before a failure, and raises the failure on the
next call, so the reader scans every byte that decoded before the error says so.
"""

from __future__ import annotations

from typing import BinaryIO


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
