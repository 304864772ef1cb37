"""Open only regular files: a FIFO, socket or device named as a session is refused.

Opening a FIFO for reading waits for a writer and reading a device may never
end, so `scan` and `repair` hung on one named on the command line. Readers open
through `open_regular`, which never blocks on the open and checks the file type
before a byte is read.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words, for messages."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class NotRegular(OSError):
    """A path names a FIFO, socket or device: reading it could block forever or never end."""


def open_regular(path: str) -> BinaryIO:
    """Open a regular file for reading; `NotRegular` (an OSError) for anything else.

    The open itself must not block: opening a FIFO for reading waits for a writer,
    so it is opened non-blocking, checked, and only then read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            raise NotRegular(
                errno.EINVAL,
                f"{kind_of(mode)}, not a regular file; only regular "
                "files (and stdin, as '-') are read",
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        # through open() with the checked descriptor, so the file's `name` is its path, as
        # for any opened file (a reader may look beside it: OpenCode's file store does)
        return open(path, "rb", opener=lambda _path, _flags: fd)
    except BaseException:
        os.close(fd)
        raise
