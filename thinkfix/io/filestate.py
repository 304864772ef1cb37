"""What a file holds and whether it changed: stamps (size, mtime, inode), snapshots and hashes, the errors a refused write raises, and the temporary names a killed write leaves behind (`sweep_stale` removes those of processes that no longer exist)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from thinkfix.io.errors import ErrorKind
from thinkfix.io.regular import open_regular

TEMP_SUFFIX = ".thinkfix-tmp"

BLOCK = 1 << 20  # bytes read or written at a time by the streaming helpers


@lru_cache(maxsize=1)
def _host() -> str:
    """This machine's name as temporary file names carry it (socket loads on first use: a
    scan never writes)."""
    import socket

    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


_TEMP_NAME = re.compile(
    r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.[0-9a-f]+"
    + re.escape(TEMP_SUFFIX)
    + r"$"
)


class WriteError(Exception):
    """A write that did not happen; the target is untouched. `kind` is an `ErrorKind` value."""

    def __init__(self, message: str, kind: ErrorKind = ErrorKind.WRITE_FAILED) -> None:
        super().__init__(message)
        self.kind = kind


class FileChanged(WriteError):
    """The file changed after it was read (a live agent appending): skipped, never truncated."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorKind.CHANGED)


class VerifyError(WriteError):
    """The written copy did not prove to be what was meant; nothing was replaced."""


@dataclass(frozen=True)
class Stamp:
    """What identifies one state of a file without reading it."""

    size: int
    mtime_ns: int
    ino: int
    dev: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)

    def describe_change(self, now: Stamp) -> str:
        if (now.ino, now.dev) != (self.ino, self.dev):
            return "it was replaced by another file"
        if now.size > self.size:
            return f"it grew from {self.size} to {now.size} bytes (a live session is appending)"
        if now.size != self.size:
            return f"its size changed from {self.size} to {now.size} bytes"
        return "its modification time changed"


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes as read, with the stamp they belong to and their hash."""

    path: str  # the real path (symlinks resolved)
    data: bytes
    stamp: Stamp
    mode: int  # permission bits

    @cached_property
    def sha256(self) -> str:
        return sha256(self.data)


def sha256(data: bytes) -> str:
    import hashlib  # loaded where a hash is taken: a dry run takes none

    return hashlib.sha256(data).hexdigest()


#: Bytes given to a `Digest` at once below this are hashed where they are given: a hand-off
#: to the hashing thread costs about what hashing ~16 KB does.
BESIDE = 1 << 16


class Lane:
    """One thread a process that runs the jobs given to it one at a time, in order, each
    answered on its own queue (`submit`): a thread per job cost ~0.1 ms of CPU and up to
    ~0.5 ms of wall time to start and join, per block hashed or file synced (#26 item 4).
    A forked child starts a thread of its own on first use."""

    __slots__ = ("_given", "_jobs", "_pid", "_ran")

    def __init__(self) -> None:
        self._jobs: Any = None
        self._pid = 0
        # Jobs given (written by the submitting thread only) and run (by the lane's thread
        # only): one writer each, so `idle` needs no lock.
        self._given = 0
        self._ran = [0]

    def submit(self, job: Callable[[Any], object], arg: Any, done: Any) -> bool:
        """Run `job(arg)` on the lane's thread, then put None (or what it raised) on `done`;
        False, having run nothing, where no thread can be started."""
        if self._jobs is None or self._pid != os.getpid():
            import queue
            import threading

            jobs: Any = queue.SimpleQueue()
            ran = [0]
            try:
                threading.Thread(target=_run_lane, args=(jobs, ran), daemon=True).start()
            except RuntimeError:
                return False
            self._jobs, self._pid, self._given, self._ran = jobs, os.getpid(), 0, ran
        self._given += 1
        self._jobs.put((job, arg, done))
        return True

    def threads(self) -> int:
        """This process's threads of this lane: 1 once started, else 0."""
        return int(self._jobs is not None and self._pid == os.getpid())

    def idle(self) -> bool:
        """No job given is waiting or running: the lane's thread (if any) waits on its
        queue, holding nothing a forked child could need."""
        return self._given == self._ran[0] or not self.threads()


def _run_lane(jobs: Any, ran: list[int]) -> None:
    while True:
        job, arg, done = jobs.get()
        try:
            job(arg)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            ran[0] += 1
            done.put(exc)
        else:
            ran[0] += 1
            done.put(None)


#: The lanes of this process: SHA-256 blocks (`Digest`), and output fsyncs (`safewrite`).
HASHING = Lane()
SYNCING = Lane()


class Digest:
    """The SHA-256 of bytes given in order (`update`), hashed beside the caller on the
    `HASHING` lane (#26 item 4). hashlib lets go of the GIL while it hashes a large buffer,
    so the survey parses a block, or the read back compares it, while the block hashes (a
    pass at ~1.3 GB/s: ~0.08 s of each 100 MB read, twice in a `--out`). The hash is the
    same: `update` waits until the block before is hashed, so the blocks are hashed one at a
    time, in order; each is hashed from bytes of its own (a copy, unless it is `bytes` or a
    view of `bytes` already), never from a buffer the caller may reuse. Memory: one block. Where no thread
    can be started, a block is hashed in place."""

    __slots__ = ("_done", "_error", "_hash", "_pending")

    def __init__(self) -> None:
        import hashlib  # loaded where a hash is taken: a dry run takes none

        self._hash = hashlib.sha256()
        self._done: Any = None  # the lane answers here when a block is hashed
        self._pending = False
        self._error: BaseException | None = None  # what the lane raised, raised when asked

    def update(self, data: bytes | bytearray | memoryview) -> None:
        self.update_pieces((data,))

    def update_pieces(self, pieces: Sequence[bytes | bytearray | memoryview]) -> None:
        """`update` with each piece in turn, handed to the lane at once: one hand-off for a
        file written in pieces (`outfile.write_pieces`), where a hand-off each would wait for
        the piece before. A piece that is not `bytes` or a view of `bytes` is copied first."""
        self._wait()
        if sum(len(p) for p in pieces) < BESIDE:
            for piece in pieces:
                self._hash.update(piece)
            return
        held = tuple(p if _immutable(p) else bytes(p) for p in pieces)
        if self._done is None:
            import queue

            self._done = queue.SimpleQueue()
        self._pending = HASHING.submit(_hash_all(self._hash), held, self._done)
        if not self._pending:  # no thread to be had: hashed here and now
            for piece in held:
                self._hash.update(piece)

    def settle(self) -> None:
        """Return once the last block given is hashed, raising nothing (what the lane raised
        is raised by `hexdigest`): a hash nobody asks for is still waited for before its
        caller moves on, so no more than one is ever pending and its bytes held (#26 item 4)."""
        if self._pending:
            self._pending = False
            self._error = self._done.get()

    def _wait(self) -> None:
        self.settle()
        if self._error is not None:
            raise self._error

    def hexdigest(self) -> str:
        """The hash of every byte given, once the last block is hashed."""
        self._wait()
        return str(self._hash.hexdigest())


def _immutable(piece: bytes | bytearray | memoryview) -> bool:
    """Is `piece` bytes, or a view of bytes (which no one can change while it hashes)?"""
    return type(piece) is bytes or (isinstance(piece, memoryview) and type(piece.obj) is bytes)


def _hash_all(digest: Any) -> Callable[[tuple[bytes | memoryview, ...]], None]:
    def run(pieces: tuple[bytes | memoryview, ...]) -> None:
        for piece in pieces:
            digest.update(piece)

    return run


def real_path(path: str) -> str:
    """Where a (possibly symlinked) path really is: the file a repair must replace."""
    return os.path.realpath(path)


def read_snapshot(path: str) -> Snapshot:
    """Read a whole file, proving nothing was appended while it was read.

    The stamp comes from the open descriptor before reading; a second fstat
    after reading must agree, else the bytes may be a torn mix (FileChanged).
    """
    real = real_path(path)
    try:
        with open_regular(real) as fp:
            before = Stamp.of(os.fstat(fp.fileno()))
            data = fp.read()
            st = os.fstat(fp.fileno())
    except OSError as exc:
        raise WriteError(f"cannot read: {exc.strerror or exc}", ErrorKind.UNREADABLE) from exc
    after = Stamp.of(st)
    if after != before or len(data) != after.size:
        raise FileChanged(f"{path}: changed while it was being read; skipped")
    return Snapshot(real, data, after, stat.S_IMODE(st.st_mode))


@dataclass(frozen=True)
class FileState:
    """A file's identity and hash, read in blocks (a `Snapshot` without the bytes)."""

    path: str  # the real path (symlinks resolved)
    stamp: Stamp
    mode: int  # permission bits
    size: int
    sha256: str

    def read(self) -> bytes:
        """The whole file, proven to be the state's bytes (for the rare caller that must embed
        them)."""
        snap = read_snapshot(self.path)
        if snap.sha256 != self.sha256:
            raise FileChanged(f"{self.path}: changed since it was read; skipped")
        return snap.data


def file_state(path: str) -> FileState:
    """A file's state, hashed in blocks, proving nothing was appended while it was read."""
    real = real_path(path)
    digest = Digest()  # a block hashes while the next is read
    try:
        with open_regular(real) as fp:
            before = Stamp.of(os.fstat(fp.fileno()))
            while block := fp.read(BLOCK):
                digest.update(block)
            st = os.fstat(fp.fileno())
    except OSError as exc:
        raise WriteError(f"cannot read: {exc.strerror or exc}", ErrorKind.UNREADABLE) from exc
    after = Stamp.of(st)
    if after != before:
        raise FileChanged(f"{path}: changed while it was being read; skipped")
    return FileState(real, after, stat.S_IMODE(st.st_mode), after.size, digest.hexdigest())


def check_unchanged(path: str, expected: Stamp) -> None:
    """FileChanged unless `path` still has the stamp it had when it was read."""
    try:
        now = Stamp.of(os.stat(path))
    except FileNotFoundError as exc:
        raise FileChanged(f"{path}: removed since it was read; skipped") from exc
    if now != expected:
        raise FileChanged(
            f"{path}: changed since it was read ({expected.describe_change(now)}); "
            "skipped, left as it is"
        )


def temp_name(target: str) -> str:
    """A temporary name beside `target` that names this host and process (see `sweep_stale`)."""
    folder, name = os.path.split(target)
    import secrets  # a writing run's only use

    token = secrets.token_hex(4)
    return os.path.join(folder, f".{name}.{_host()}.{os.getpid()}.{token}{TEMP_SUFFIX}")


def alive(pid: int) -> bool:
    """Is process `pid` running (a zombie counts as dead: it will never act again)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed worker whose parent died too stays a zombie wherever nobody reaps orphans
    # (a container's init): it answers signals, but it will never finish its write.
    try:
        with open(f"/proc/{pid}/stat", "rb") as fp:
            stat_line = fp.read()
        return stat_line[stat_line.rindex(b")") + 2 :][:1] not in (b"Z", b"X")
    except (OSError, ValueError):
        return True


def sweep_stale(folder: str) -> list[str]:
    """Remove temporary files left in `folder` by thinkfix processes of this host that died."""
    removed: list[str] = []
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return removed
    for name in names:
        m = _TEMP_NAME.match(name)
        if m is None or m["host"] != _host() or alive(int(m["pid"])):
            continue
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            os.unlink(path)
            removed.append(path)
    return removed


def beside(target: str) -> str:
    """`target` with its folders resolved and its last component kept as named: what a
    rename replaces when a final symlink must not be followed."""
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(real_path(folder), name)


def current_mode(path: str) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return default_mode()


def default_mode() -> int:
    """A new file's mode: 0o644 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o644 & ~umask


def keep_owner(fd: int, path: str) -> None:
    # Only root can give a file away; for everyone else the new file is theirs, as before.
    try:
        st = os.stat(path)
    except OSError:
        return
    if hasattr(os, "fchown") and (st.st_uid != os.geteuid() or st.st_gid != os.getegid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EACCES):
                raise


def fsync_folder(folder: str) -> None:
    """Make the folder's entries durable (a rename is durable only once they are); some
    filesystems refuse, which is fine."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
