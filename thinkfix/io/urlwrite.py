"""Safe writes to an fsspec URL (`repair --out s3://…`): a complete, verified copy, or nothing.

`safewrite` replaces local files; this is its counterpart for a filesystem named by a URL,
where there may be no rename, no fsync and no permission bits. The same promise holds: the
bytes are written to a temporary name beside the target, read back and hashed, handed to
the caller's `verify` (the same check a local write gets), and only then moved to the final
name; the final object is read back once more and must hash as written. Nothing is ever
overwritten: a target that exists (before the write, or by the time of the move) refuses
the write, since an object store cannot replace atomically nor keep a backup the run could
undo from. On `file://` the temporary file is fsynced and linked into place (a link fails
where a name exists, so even a racing writer's file is never replaced).

A run killed between writing and moving leaves its temporary object (named
`.<name>.<host>.<pid>.<token>.thinkfix-tmp`, never a session file name, so no walk reads
it); on `file://` the next write into that folder sweeps it (`filestate.sweep_stale`), but a
remote filesystem cannot tell whether that process is alive, so there it is left for a
person to remove.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable
from typing import Any, BinaryIO, cast

from thinkfix.io import filestate, remote, safewrite


class _Sink:
    """A write-only stream that hashes and counts what goes through it to `fp`."""

    def __init__(self, fp: BinaryIO) -> None:
        self.fp = fp
        self.size = 0
        self.hash = hashlib.sha256()

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self.hash.update(view)
        self.fp.write(view)
        self.size += len(view)
        return len(view)

    def flush(self) -> None:
        self.fp.flush()

    def close(self) -> None:  # the file belongs to atomic_write_stream
        self.fp.flush()


def _hash(fs: Any, path: str) -> tuple[int, str]:
    """Size and sha256 of the object at `path`, read in blocks."""
    digest, size = hashlib.sha256(), 0
    with fs.open(path, "rb") as fp:
        while block := fp.read(filestate.BLOCK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def exists(url: str) -> bool:
    """Is anything at `url`? (WriteError when the filesystem cannot say.)"""
    try:
        fs, path = remote.filesystem(url)
        return bool(fs.exists(path))
    except (OSError, ValueError, ImportError) as exc:
        raise filestate.WriteError(f"{url}: cannot reach: {_why(exc)}") from exc


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(
        exc
    ).__name__


def refuse_existing(url: str) -> None:
    """WriteError when anything is at `url`: a URL output is never overwritten."""
    if exists(url):
        raise _exists(url)


def _refuse_existing(fs: Any, path: str, target: str) -> None:
    if fs.exists(path):
        raise _exists(target)


def _exists(target: str) -> filestate.WriteError:
    return filestate.WriteError(
        f"{target}: already exists; not overwritten (a URL output is only written where "
        "nothing is: an object store cannot replace it atomically nor keep a backup to undo "
        "from; choose an empty --out)"
    )


def atomic_write_stream(
    target: str,
    produce: Callable[[BinaryIO], object],
    *,
    verify: Callable[[str], None] | None = None,
    before_publish: Callable[[safewrite.Written], None] | None = None,
    watch: tuple[str, filestate.Stamp] | None = None,
) -> safewrite.Written:
    """`safewrite.atomic_write_stream` for the URL `target`, which must not exist yet.

    `verify` gets the temporary object's URL (open it with `open_written`);
    `before_publish` runs last before the move; `watch` is a local (path, stamp) that must
    still hold just before it. Raises `filestate.WriteError` (nothing at `target`) on failure.
    """
    try:
        fs, path = remote.filesystem(target)
    except (OSError, ValueError, ImportError) as exc:
        raise filestate.WriteError(f"{target}: cannot reach: {_why(exc)}") from exc
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    temp = filestate.temp_name(path)
    local = remote.is_local(fs)
    published = False
    try:
        try:
            _refuse_existing(fs, path, target)
            if folder:
                fs.makedirs(folder, exist_ok=True)
            if local and folder:  # here a dead process can be told: its temporaries go
                filestate.sweep_stale(folder)
            with fs.open(temp, "wb") as fp:
                sink = _Sink(fp)
                produce(cast(BinaryIO, sink))
            if local:
                _fsync(temp)
            got = _hash(fs, temp)
        except filestate.WriteError:
            raise
        except (OSError, ValueError) as exc:
            raise filestate.WriteError(f"{target}: cannot write: {_why(exc)}") from exc
        written = safewrite.Written(target, sink.size, sink.hash.hexdigest())
        if got != (written.size, written.sha256):
            raise filestate.VerifyError(
                f"{target}: the temporary object did not read back as written"
            )
        if verify is not None:
            try:
                verify(fs.unstrip_protocol(temp))
            except filestate.WriteError:
                raise
            except Exception as exc:
                raise filestate.VerifyError(f"{target}: verification failed: {exc}") from exc
        if before_publish is not None:
            before_publish(written)
        if watch is not None:
            filestate.check_unchanged(*watch)
        try:
            _refuse_existing(fs, path, target)
            published = True  # from here on, what is at `path` may be ours
            _move(fs, temp, path, local)
            if local and folder:
                _fsync_dir(folder)
            final = _hash(fs, path)
        except filestate.WriteError:
            published = False  # someone else's object: never removed
            raise
        except (OSError, ValueError) as exc:
            raise filestate.WriteError(f"{target}: cannot move into place: {_why(exc)}") from exc
        if final != got:
            raise filestate.VerifyError(
                f"{target}: the object did not read back as written after the move"
            )
    except BaseException:
        with contextlib.suppress(Exception):
            if fs.exists(temp):
                fs.rm_file(temp)
        if published:  # our move ran (or may have): what it left is not a verified copy
            with contextlib.suppress(Exception):
                fs.rm_file(path)
        raise
    return written


def _move(fs: Any, temp: str, path: str, local: bool) -> None:
    """Give `temp` the name `path`: on a local disk a link (which refuses an existing name)
    then the temporary name's removal; elsewhere a copy and a removal of those two paths
    (fsspec's `mv` and `rm` read `*`, `?` and `[x]` in a name as a glob)."""
    if not local:
        fs.cp_file(temp, path)
        fs.rm_file(temp)
        return
    try:
        os.link(temp, path)
    except FileExistsError as exc:
        raise filestate.WriteError(
            f"{path}: appeared while it was being written; not overwritten"
        ) from exc
    except OSError:  # a filesystem without hard links: the name was free a moment ago
        os.rename(temp, path)
        return
    os.unlink(temp)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        _fsync(folder)


def open_written(path: str) -> BinaryIO:
    """A written file (a local path or a URL), open for reading in binary."""
    return remote.open_url(path) if remote.is_url(path) else open(path, "rb")


def write_bytes(target: str, data: bytes) -> safewrite.Written:
    """`atomic_write_stream` of small bytes (a sidecar)."""
    return atomic_write_stream(target, lambda fp: fp.write(data))


def remove(url: str) -> None:
    """Remove the object at `url` (a write this run made and must take back)."""
    fs, path = remote.filesystem(url)
    fs.rm_file(path)  # never `rm`, which reads a name's `*`, `?` or `[x]` as a glob


def sha256(url: str) -> str | None:
    """The sha256 of the object at `url`, read in blocks; None when nothing is there
    (WriteError when the filesystem cannot be read)."""
    try:
        fs, path = remote.filesystem(url)
        if not fs.exists(path):
            return None
        return _hash(fs, path)[1]
    except (OSError, ValueError, ImportError) as exc:
        raise filestate.WriteError(f"{url}: cannot read: {_why(exc)}") from exc


def remove_verified(url: str, expected_sha256: str) -> None:
    """`safewrite.remove_verified` for a URL: remove the object only if it still holds the bytes
    the repair wrote (undo of an output it created)."""
    if sha256(url) != expected_sha256:
        raise filestate.FileChanged(f"{url}: changed since it was written; not removed")
    try:
        remove(url)
    except (OSError, ValueError) as exc:
        raise filestate.WriteError(f"{url}: cannot remove: {_why(exc)}") from exc
