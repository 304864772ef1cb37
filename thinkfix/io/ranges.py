"""A byte range of an open file: as a stream of its own, or copied into another file by the
kernel (`copy_range`)."""

from __future__ import annotations

import errno
import io
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

#: `os.copy_file_range` (Linux 4.5+, FreeBSD 13+) and Linux's file-to-file `os.sendfile`, where
#: the platform has them: bytes copied inside the kernel, never through this process's memory.
_COPY_FILE_RANGE = getattr(os, "copy_file_range", None)
_SENDFILE = getattr(os, "sendfile", None) if sys.platform.startswith("linux") else None
#: What a kernel copy answers where it cannot copy between these two files (another
#: filesystem, an old kernel, a filesystem without it): the next way is tried.
_UNSUPPORTED = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF}
)
_CHUNK = 1 << 30  # the most asked of one kernel call (Linux copies at most ~2 GiB per call)
_BLOCK = 1 << 22  # the plain copy's block


def copy_range(src: int, dst: int, offset: int, count: int) -> int:
    """Append bytes [offset, offset + count) of descriptor `src` to `dst` at its position:
    by `copy_file_range`, else `sendfile`, else `pread` and `write` (a kernel that copies
    nothing where bytes remain, as some filesystems' do, falls through to the plain copy).
    Returns how many bytes were copied: fewer than `count` only when `src` ends sooner."""
    at, end = offset, offset + count
    if _COPY_FILE_RANGE is not None:
        at = _kernel(lambda at, n: _COPY_FILE_RANGE(src, dst, n, at), at, end)
    if _SENDFILE is not None and at < end:
        at = _kernel(lambda at, n: _SENDFILE(dst, src, at, n), at, end)
    while at < end:
        block = os.pread(src, min(_BLOCK, end - at), at)
        if not block:
            break
        view = memoryview(block)
        while view:
            view = view[os.write(dst, view) :]
        at += len(block)
    return at - offset


def _kernel(copy: Callable[[int, int], int], at: int, end: int) -> int:
    """Copy from `at` towards `end` by `copy(at, n)` (bytes copied); where it stopped: at a
    call that copied nothing, or one the kernel cannot make for these files."""
    try:
        while at < end:
            n = copy(at, min(end - at, _CHUNK))
            if n <= 0:
                break
            at += n
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise
    return at


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
