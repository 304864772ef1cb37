"""The temporary file a safe write fills (`safewrite.atomic_write_stream`): what goes into its
descriptor, hashed and counted as it goes (`Sink`, `write_pieces`)."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any, BinaryIO

from thinkfix.io.filestate import Digest


def _iov_max() -> int:
    """The most buffers one `os.writev` takes (POSIX's IOV_MAX is at least 16; Linux's 1024)."""
    try:
        return max(16, min(1024, os.sysconf("SC_IOV_MAX")))
    except (AttributeError, ValueError, OSError):
        return 16


_IOV_MAX = _iov_max()
#: `os.writev` where the platform has it (every POSIX system), else None: pieces are joined.
_WRITEV = getattr(os, "writev", None)


class Sink(io.RawIOBase):
    """A write-only view of a descriptor that hashes and counts what goes through it; closing
    it leaves the descriptor open (compressing writers close what they wrap). Bytes copied in
    by the kernel (`copy_into`) go by unseen: the hash is then dropped (None), and the read
    back hashes the file instead."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.size = 0
        self.hash: Digest | None = Digest()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self.hash is not None:
            self.hash.update(data if type(data) is bytes else view)  # bytes: hashed uncopied
        n = len(view)
        while view:
            view = view[os.write(self.fd, view) :]
        self.size += n
        return n

    def close(self) -> None:  # the descriptor belongs to atomic_write_stream
        self.flush()
        super().close()


def write_pieces(out: BinaryIO, pieces: Sequence[bytes | memoryview]) -> None:
    """Write `pieces` to `out` in order: to a `Sink` by `os.writev` (gathered by the kernel
    from where they lie) and hashed in one hand-off; to any other stream joined, in one write.
    Joining a repaired file's pieces (the original's untouched runs, the new records) was one
    more copy of the whole file, and a fresh block to fault in (#26 item 4)."""
    if not isinstance(out, Sink) or _WRITEV is None:
        out.write(b"".join(pieces))
        return
    out.flush()
    if out.hash is not None:
        out.hash.update_pieces(pieces)
    views = [memoryview(p).cast("B") for p in pieces if len(p)]
    at = 0  # the first view not yet written whole
    while at < len(views):
        n = _WRITEV(out.fd, views[at : at + _IOV_MAX])
        out.size += n
        while at < len(views) and n >= len(views[at]):
            n -= len(views[at])
            at += 1
        if n:  # a short write: the rest of this view next
            views[at] = views[at][n:]
