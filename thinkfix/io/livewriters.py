"""Who has a session file open for writing: a live agent repair must not race.

An agent that keeps its session open (Codex holds one `O_APPEND` descriptor)
writes into the file's inode, so after repair's rename its next lines go into
the old, unlinked inode and are lost. No runtime takes an advisory lock on its
session file (FORMATS.md documents none), so the only sure sign is the open
descriptor itself: on Linux, `/proc/<pid>/fd` names every open file and
`/proc/<pid>/fdinfo` its flags. A file open for writing by any process this
user can see is left alone. Elsewhere (no /proc) the stamp checks around the
rename are what remains.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_PROC = "/proc"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR


@dataclass(frozen=True)
class Writer:
    """One process holding the file open for writing."""

    pid: int
    name: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.name})" if self.name else f"pid {self.pid}"


def supported() -> bool:
    """Whether open descriptors can be seen here (Linux /proc)."""
    return os.path.isdir(os.path.join(_PROC, "self", "fd"))


def open_writers(path: str) -> list[Writer]:
    """Processes other than this one holding `path`'s inode open for writing (best effort:
    processes of other users cannot be seen, and none are found where /proc is missing)."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    if not supported():
        return []
    me = os.getpid()
    found: list[Writer] = []
    try:
        pids = [int(p) for p in os.listdir(_PROC) if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == me:
            continue
        fd_dir = os.path.join(_PROC, str(pid), "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                fst = os.stat(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if (fst.st_ino, fst.st_dev) != (st.st_ino, st.st_dev):
                continue
            if _writable(pid, fd):
                found.append(Writer(pid, _name(pid)))
                break
    return found


def _writable(pid: int, fd: str) -> bool:
    try:
        with open(os.path.join(_PROC, str(pid), "fdinfo", fd)) as fp:
            for line in fp:
                if line.startswith("flags:"):
                    return bool(int(line.split()[1], 8) & _WRITE_FLAGS)
    except (OSError, ValueError, IndexError):
        pass
    return True  # cannot tell: assume it may write


def _name(pid: int) -> str:
    try:
        with open(os.path.join(_PROC, str(pid), "comm")) as fp:
            return fp.read().strip()
    except OSError:
        return ""
