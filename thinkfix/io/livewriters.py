"""Who has a session file open for writing: a live agent repair must not race.

An agent that keeps its session open (Codex holds one `O_APPEND` descriptor)
writes into the file's inode, so after repair's rename its next lines go into
the old, unlinked inode and are lost. No runtime takes an advisory lock on its
session file (FORMATS.md documents none), so the only sure sign is the open
descriptor itself: on Linux, `/proc/<pid>/fd` names every open file and
`/proc/<pid>/fdinfo` its flags. A file open for writing by any process this
user can see is left alone. Elsewhere (no /proc) the stamp checks around the
rename are what remains; and a writer that raced the rename is caught after it
(`OldInode`, which `safewrite` holds across the rename of the very file read).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from thinkfix.io.filestate import FileChanged, Stamp, fsync_folder, temp_name

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


def _linked(real: str, name: str) -> bool:
    """Link `real` to `name`; False where the filesystem has no hard links."""
    try:
        os.link(real, name)
    except OSError:
        return False
    return True


class OldInode:
    """The replaced file's inode, held across the rename to catch a writer that raced it.

    Before the rename: a process holding the file open for writing (a live agent)
    is refused outright, the old inode is kept open, and a second name (a hard
    link, swept like a temporary file if this process dies) keeps it reachable.
    After the rename: if the old inode grew or its mtime moved, a writer appended
    between the last check and the rename; the second name is renamed back, so the
    file is exactly what that writer wrote to (every line kept) and the repair is
    reported as not done. Where no hard link can be made, the appended bytes are
    copied onto the end of the new file instead.
    """

    def __init__(self, target: str, real: str, stamp: Stamp, fd: int, keep: str | None) -> None:
        self.target, self.real, self.stamp, self.fd, self.keep = target, real, stamp, fd, keep

    @classmethod
    def hold(cls, target: str, real: str, stamp: Stamp) -> OldInode:
        writers = open_writers(real)
        if writers:
            raise FileChanged(
                f"{target}: held open for writing by "
                f"{', '.join(str(w) for w in writers)} (a live session); "
                "skipped, left as it is"
            )
        # Until the caller holds what this returns, the descriptor and the second name are
        # this call's to let go of, whatever stops it (Ctrl-C between two lines included).
        fd, name = -1, None
        try:
            try:
                fd = os.open(real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise FileChanged(
                    f"{target}: cannot hold it open ({exc.strerror or exc}); skipped"
                ) from exc
            if Stamp.of(os.fstat(fd)) != stamp:  # it changed just now, before the hold
                raise FileChanged(f"{target}: changed since it was read; skipped, left as it is")
            held = cls(target, real, stamp, fd, None)
            name = temp_name(real)
            # no hard links here: the tail is copied instead (see settle)
            held.keep = name if _linked(real, name) else None
            return held
        except BaseException:  # (no nested `try` line above: a traced interrupt there skipped it)
            if name is not None:  # this process's pid and a random token: no other's name
                with contextlib.suppress(OSError):
                    os.unlink(name)
            if fd >= 0:
                os.close(fd)
            raise

    def release(self) -> None:
        if self.keep is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.keep)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def settle(self) -> None:
        """After the rename: FileChanged (with the file put back) if a writer raced it."""
        try:
            now = Stamp.of(os.fstat(self.fd))
            if (now.size, now.mtime_ns) == (self.stamp.size, self.stamp.mtime_ns):
                return
            if self.keep is not None:
                os.replace(self.keep, self.real)
                self.keep = None
                fsync_folder(os.path.dirname(self.real))
                raise FileChanged(
                    f"{self.target}: a live writer appended to it while it was being replaced "
                    f"({self.stamp.describe_change(now)}); put back as that writer left it, "
                    "every line kept; not repaired"
                )
            # No second name to put back: the appended bytes go onto the end of the new file,
            # so no line is lost; its hash then differs from the manifest's, so undo refuses
            # it rather than drop those lines, and the backup stays.
            tail = os.pread(self.fd, max(0, now.size - self.stamp.size), self.stamp.size)
            with open(self.real, "ab") as fp:
                fp.write(tail)
                fp.flush()
                os.fsync(fp.fileno())
        finally:
            self.release()
