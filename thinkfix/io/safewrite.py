"""Safe writes: a file is replaced only by a complete, verified copy, or not at all.

`atomic_write` writes a temporary file in the target's own folder (so the final
`os.replace` is a rename on one filesystem), fsyncs it (in a thread, while it is
read back: the rename waits for both), reads it back and hands the bytes to the
caller's `verify`, checks that the watched
source still has the size, mtime and inode it had when it was read (a live
agent may be appending to it), and only then renames it over the target. The
file's permission bits are kept. On any failure the temporary file is removed
and the target is left as it was.

A final symlink is never followed by `atomic_write` (a report, a state file, a
metrics textfile, a manifest): the rename replaces the link itself, so a link
planted where thinkfix writes (a group-writable textfile-collector folder, a
checkout) cannot redirect the write onto its target. Repair, which rewrites a
session through a link named on purpose, asks for it (`follow_links=True`): the
target is replaced and the link kept."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

from thinkfix.io.filestate import (
    BLOCK,
    SYNCING,
    Digest,
    FileChanged,
    FileState,
    Snapshot,
    Stamp,
    VerifyError,
    WriteError,
    beside,
    check_unchanged,
    current_mode,
    default_mode,
    file_state,
    fsync_folder,
    keep_owner,
    real_path,
    sweep_stale,
    temp_name,
)
from thinkfix.io.outfile import Sink
from thinkfix.io.ranges import copy_range
from thinkfix.io.regular import open_regular

if TYPE_CHECKING:  # loaded only to replace the very file read (`livewriters.OldInode`)
    from thinkfix.io.livewriters import OldInode

_T = TypeVar("_T")


def _publish(temp: str, target: str) -> None:
    """The one step that changes what `target` names."""
    os.replace(temp, target)


@dataclass(frozen=True)
class Written:
    """A completed write: where, how many bytes, and their hash."""

    path: str
    size: int
    sha256: str


def atomic_write(
    target: str,
    data: bytes,
    *,
    mode: int | None = None,
    verify: Callable[[bytes], None] | None = None,
    watch: tuple[str, Stamp] | None = None,
    make_dirs: bool = False,
    durable: bool = True,
    follow_links: bool = False,
    sweep: bool = True,
) -> Written:
    """Replace `target` by `data`, or leave it untouched; a symlink at `target` is itself
    replaced unless `follow_links` (then its target is, and the link kept).

    `verify` gets the bytes read back from disk and raises (any exception) to
    refuse them. `watch` is a (path, stamp) that must still hold just before the
    rename. `mode` defaults to the target's current permission bits, else 0o644
    less the umask. Small files only (manifests, sidecars): `atomic_write_stream`
    writes session files without holding them.
    """

    def check(temp: str) -> None:
        if verify is not None:
            with open(temp, "rb") as fp:
                verify(fp.read())

    return atomic_write_stream(
        target,
        lambda fp: fp.write(data),
        mode=mode,
        verify=check if verify is not None else None,
        watch=watch,
        make_dirs=make_dirs,
        durable=durable,
        follow_links=follow_links,
        sweep=sweep,
    )


def copy_into(out: BinaryIO, fd: int, offset: int, count: int, name: str = "") -> None:
    """Write bytes [offset, offset + count) of descriptor `fd` to `out`, a stream `produce`
    was given: copied by the kernel (`ranges.copy_range`, never through this process) when
    `out` is `atomic_write_stream`'s own, whose read back must then hash and prove them
    (`exact_read_back` or `expected`); through a buffer otherwise. FileChanged if `fd` ends
    before `offset + count`."""
    if isinstance(out, Sink):
        out.flush()
        out.hash = None
        copied = copy_range(fd, out.fd, offset, count)
        out.size += copied
    else:
        copied = 0
        while copied < count:
            block = os.pread(fd, min(BLOCK, count - copied), offset + copied)
            if not block:
                break
            out.write(block)
            copied += len(block)
    if copied != count:
        raise FileChanged(f"{name}: shorter than when it was read; skipped, left as it is")


def hash_file(path: str) -> tuple[int, str]:
    """Size and sha256 of a file, read in blocks."""
    digest, size = Digest(), 0  # a block hashes while the next is read
    with open(path, "rb") as fp:
        while block := fp.read(BLOCK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


class _HashingReader(io.RawIOBase):
    """A read-only stream over a file that hashes (unless not `hashed`) and counts every byte
    read through it."""

    def __init__(self, fp: io.RawIOBase, hashed: bool = True) -> None:
        super().__init__()
        self.fp = fp
        self.size = 0
        self.hash = Digest()  # a block hashes while the caller compares it (#26 item 4)
        self.hashed = hashed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        # straight into the caller's buffer: no bytes object per read nor its copy (#26 item 4)
        view = memoryview(buffer).cast("B")
        n = self.fp.readinto(view) or 0
        if self.hashed:
            self.hash.update(view[:n])
        self.size += n
        return n

    def drain(self) -> tuple[int, str]:
        """Read what the reader left, then the size and hash of everything read."""
        while block := self.fp.read(BLOCK):
            if self.hashed:
                self.hash.update(block)
            self.size += len(block)
        return self.size, self.hash.hexdigest()


def atomic_write_stream(
    target: str,
    produce: Callable[[BinaryIO], object],
    *,
    mode: int | None = None,
    verify: Callable[[str], None] | None = None,
    read_back: Callable[[BinaryIO], None] | None = None,
    before_publish: Callable[[Written], None] | None = None,
    watch: tuple[str, Stamp] | None = None,
    make_dirs: bool = False,
    durable: bool = True,
    follow_links: bool = True,
    exact_read_back: bool = False,
    expected: tuple[int, str] | None = None,
    sync_folder: bool = True,
    sweep: bool = True,
) -> Written:
    """`atomic_write` for bytes that are never held whole: `produce` writes them to a stream.

    The temporary file is read back in blocks and must hash as it was written;
    `verify` then gets its path (to re-read it as it likes) and raises to refuse
    it. `read_back` proves the same in the same read: it gets the temporary file as
    a stream that hashes what it reads (the rest is read after it), so one read
    back from disk proves both the hash and what `read_back` checks. `before_publish`
    runs last before the rename (a journal entry must be durable before the file it
    describes changes), then the watch checks. `exact_read_back`: `read_back` compares every
    byte it reads, to the end, with the bytes `produce` was to write (known without the
    sink), so the read back is hashed only where the sink did not see every byte (`copy_into`),
    and its size checked. `expected`: the (size, sha256) the bytes must have (a copy of a file
    whose hash is known): the read back is hashed and must match it, with no other check; with
    an exact `read_back` too, the bytes it compares with are those `expected` hashes (a copy of
    a file whose bytes the caller holds), so the read back is not hashed at all (#26 item 4).
    Bytes copied in by the kernel (`copy_into`) need one of the two.

    `durable`: the bytes and the rename are synced to disk (the file, then its folder, unless
    not `sync_folder`: the caller syncs it, once for many files, `fsync_folder`) before this
    returns; the file's fsync runs beside its read back and `before_publish` (`_Syncing`),
    and the rename waits for it. Only a file whose loss in a power cut loses nothing (a journal
    entry of a file that was created, not replaced) is written with `durable=False`: a
    killed process leaves it whole all the same (the rename is atomic).

    `sweep`: dead processes' temporary files are removed from the folder first
    (`filestate.sweep_stale`); a caller writing many files into one folder sweeps it once
    itself (a listing per file made a run quadratic in the files of a folder).

    `follow_links` (repair's session files, undo): a symlink at `target` is resolved and its
    target replaced. Without it the link itself is replaced by the new file, which takes
    neither the mode nor the owner of whatever the link pointed at.
    """
    real = real_path(target) if follow_links else beside(target)
    folder = os.path.dirname(real)
    if make_dirs and folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise WriteError(f"{target}: cannot create {folder}: {exc.strerror or exc}") from exc
    if sweep:
        sweep_stale(folder)
    link = os.path.islink(real)  # only without follow_links: `real` is resolved otherwise
    if mode is None:
        mode = default_mode() if link else current_mode(real)
    temp = temp_name(real)
    fd, syncing, sink = -1, None, None
    # The replaced file's old inode, held across the rename of the very file read, until it
    # is handed to `release` or `settle`; and its second name, removed whatever stops this.
    old: OldInode | None = None
    keep: str | None = None
    try:
        try:
            fd = os.open(
                temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600
            )
        except OSError as exc:
            raise WriteError(
                f"{target}: cannot create a temporary file in {folder or '.'}: "
                f"{exc.strerror or exc}"
            ) from exc
        sink = Sink(fd)
        produce(cast(BinaryIO, sink))
        os.fchmod(fd, mode)
        if not link:
            keep_owner(fd, real)
        if durable:  # the bytes reach the disk while they are read back; the rename waits
            syncing = _Syncing(fd)
        # The sink's hash (None: bytes `copy_into` copied, which only the read back sees) is
        # still being taken on the hashing lane: waited for once the read back is done, which
        # it overlaps (the wait was ~0.7 ms a 1 MB file, #26 item 4).
        known: str | Digest | None = sink.hash
        if known is None and not (exact_read_back if read_back is not None else expected):
            raise VerifyError(f"{target}: bytes copied unseen need an exact read back")
        if read_back is not None:
            if exact_read_back and expected is not None:
                # every byte is compared with bytes whose hash is `expected`: not hashed again
                if sink.size != expected[0]:
                    raise VerifyError(f"{target}: the temporary file did not read back as written")
                known = expected[1]
            written = _verified(
                target,
                lambda: _read_back(
                    target, temp, read_back, real, sink.size, known, exact_read_back
                ),
            )
        else:
            size, digest = hash_file(temp)
            if (size, digest) != (expected or (sink.size, _hex(known))):
                raise VerifyError(f"{target}: the temporary file did not read back as written")
            written = Written(real, size, digest)
        if verify is not None:
            _verified(target, lambda: verify(temp))
        if before_publish is not None:
            before_publish(written)
        if syncing is not None:
            syncing.wait()
        # cleared before it is closed: an interrupt between the two leaks it rather than have
        # the `finally` close it again (another thread may hold that number by then)
        fd, closing = -1, fd
        os.close(closing)
        if watch is not None:
            check_unchanged(*watch)
            if real_path(watch[0]) == real:  # replacing the very file read: a live writer?
                from thinkfix.io.livewriters import OldInode

                old = OldInode.hold(target, real, watch[1])
                keep = old.keep
        _rename(target, temp, real)  # failing, `old` is let go as for any failure below
        if durable and sync_folder:
            fsync_folder(folder)
        if old is not None:
            held, old = old, None
            held.settle()
    except BaseException:
        _undo_names(temp, old, keep)
        raise
    finally:
        if sink is not None and sink.hash is not None:
            sink.hash.settle()  # a write refused before its hash was asked for: held no longer
        if syncing is not None:
            syncing.join()  # never close a descriptor an fsync is still using
        if fd >= 0:
            os.close(fd)
    return written


def _rename(target: str, temp: str, real: str) -> None:
    """The rename into place, or a WriteError."""
    try:
        _publish(temp, real)
    except OSError as exc:
        raise WriteError(f"{target}: cannot rename into place: {exc.strerror or exc}") from exc


def _undo_names(temp: str, old: OldInode | None, keep: str | None) -> None:
    """What a write that stopped (an error, Ctrl-C at any line) leaves of its own names: none.
    An old inode not yet handed on is let go (`release`) or, when the rename happened (its
    temporary name is gone), checked for a writer that raced it (`settle`: that writer's
    lines put back); then the second name is removed if it is still there. Both names are
    this write's own (its pid and a random token): nothing else is touched."""
    published = not os.path.lexists(temp)
    if not published:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    if old is not None:
        with contextlib.suppress(OSError, WriteError):  # what stopped the write goes on
            old.settle() if published else old.release()
    if keep is not None:
        with contextlib.suppress(OSError):
            os.unlink(keep)


class _Syncing:
    """The fsync of a temporary file, run beside its read back (#26 item 4: ~1.5 ms a 1 MB
    file here, as long as the read back) on the `SYNCING` lane; the rename waits for it
    (`wait`). Where no thread can be started the file is synced here and now."""

    def __init__(self, fd: int) -> None:
        import queue

        self.error: BaseException | None = None
        self.done: Any = queue.SimpleQueue()
        self.pending = SYNCING.submit(os.fsync, fd, self.done)
        if not self.pending:  # no thread to be had: synced here and now, as before
            try:
                os.fsync(fd)
            except OSError as exc:
                self.error = exc

    def join(self) -> None:
        """Return once the fsync is done, whatever it answered (its descriptor may close)."""
        if self.pending:
            self.pending = False
            self.error = self.done.get()

    def wait(self) -> None:
        """Return once the bytes are on disk; raise the fsync's error if it failed."""
        self.join()
        if self.error is not None:
            raise self.error


def _verified(target: str, check: Callable[[], _T]) -> _T:
    """Run a verification: anything it raises but a WriteError becomes a VerifyError."""
    try:
        return check()
    except WriteError:
        raise
    except Exception as exc:
        raise VerifyError(f"{target}: verification failed: {exc}") from exc


def _read_back(
    target: str,
    temp: str,
    check: Callable[[BinaryIO], None],
    real: str,
    size: int,
    known: str | Digest | None,
    exact: bool = False,
) -> Written:
    """One read of the temporary file: `check` reads it through a hashing stream, then the
    rest is read and everything read must be what was written (`size` bytes whose hash is
    `known`: a hash still being taken is waited for last); the write, with its hash. An
    `exact` check compared every byte itself: the stream then only counts them (a SHA-256
    pass is ~0.35x the cost of parsing the bytes with orjson, #26 item 4), unless the sink
    did not hash them all (`copy_into`, `known` None): then the hash of the bytes read is the
    write's."""
    hashed = not exact or known is None
    with open(temp, "rb", buffering=0) as fp:
        reader = _HashingReader(fp, hashed=hashed)
        check(cast(BinaryIO, io.BufferedReader(reader, BLOCK)))
        got, digest = reader.drain()
    want = digest if known is None else _hex(known)
    if (got, digest if hashed else want) != (size, want):
        raise VerifyError(f"{target}: the temporary file did not read back as written")
    return Written(real, got, want)


def _hex(known: str | Digest | None) -> str:
    """A hash given as it is, or as it is being taken (waited for)."""
    return known if isinstance(known, str) else "" if known is None else known.hexdigest()


def copy_verified(source: Snapshot | FileState, destination: str, *, sweep: bool = True) -> Written:
    """Write an exact copy of a file (a backup), proven by its hash on disk: the bytes are
    copied by the kernel (`copy_into`) and hashed once, as they are read back, against the
    state's hash (taken as the file was read to be repaired). `sweep` as for
    `atomic_write_stream`."""
    if isinstance(source, Snapshot):
        return atomic_write(destination, source.data, mode=source.mode, make_dirs=True, sweep=sweep)

    def produce(out: BinaryIO) -> None:
        with open_regular(source.path) as fp:
            copy_into(out, fp.fileno(), 0, source.size, source.path)

    try:
        return atomic_write_stream(
            destination,
            produce,
            mode=source.mode,
            make_dirs=True,
            follow_links=False,
            expected=(source.size, source.sha256),
            sweep=sweep,
        )
    except VerifyError:
        if Stamp.of(os.stat(source.path)) != source.stamp:
            raise FileChanged(
                f"{source.path}: changed while it was being backed up; skipped"
            ) from None
        raise


def remove_verified(path: str, expected_sha256: str) -> None:
    """Delete a file only if it still holds the bytes we wrote (undo of a created file)."""
    snap = file_state(path)
    if snap.sha256 != expected_sha256:
        raise FileChanged(f"{path}: changed since it was written; not removed")
    os.unlink(snap.path)
    fsync_folder(os.path.dirname(snap.path))


def write_output(target: str, data: bytes) -> None:
    """Write a report the user named: a regular file (or a new one) is replaced atomically,
    a symlink by a new file (never its target); anything else (/dev/null, a FIFO,
    /dev/stdout) is written straight into, since a rename would replace the device or pipe
    itself (`/dev/stdout` links to whatever stdout is, a file or a pipe)."""
    device = os.path.abspath(target).startswith(("/dev/", "/proc/"))
    if device or (os.path.exists(target) and not os.path.isfile(target)):
        try:
            with open(target, "wb") as fp:
                fp.write(data)
        except OSError as exc:
            raise WriteError(f"{target}: {exc.strerror or exc}") from exc
        return
    atomic_write(target, data, make_dirs=True)
