"""A session file opened for repair: its decompressed bytes, read in blocks or by record.

Repair reads a file several times (to plan, to write, to verify) and never holds it whole: a
plain file where it lies, through its open descriptor (a rename cannot swap the bytes under a
repair); a .gz or .zst file decompressed once into an anonymous temporary file (gone with the
process), its size checked against the bomb limit as it grows. `FileRecords` gives the
planner the records by index (from a line index built in one pass) or in one pass."""

from __future__ import annotations

import io
import os
import stat
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, cached_property
from typing import Any, BinaryIO, cast

from thinkfix.engine.repair.lineindex import Indexed, LineIndex, SeenLines
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import EMPTY_CONTEXT, Record, record_limit, too_large
from thinkfix.io import compression, filestate, remote
from thinkfix.io.errors import ErrorKind
from thinkfix.io.regular import open_regular

BLOCK = filestate.BLOCK
#: A compressed file may decompress to this many times the record limit at most (1 GiB by
#: default), checked as it streams, so a gzip or zstd bomb is an error for its file.
DECOMPRESSED_RECORDS = 16
#: The permission bits of a repaired copy of a file read from a URL (fsspec has none).
URL_MODE = 0o644


class TooLarge(Exception):
    """An input past a size limit: an error for its file, with what happened."""


#: `os.preadv` where the platform has it (Linux, the BSDs, macOS 11+), else None.
_PREADV = getattr(os, "preadv", None)
#: A content kept whole from this size asks the C allocator to keep what is freed (`keep_freed`).
KEEP_FREED_FROM = 1 << 20
#: Whether this process may tune the C allocator (`keep_freed`): the command line's process
#: says so (`cli.repairing.run`); a program that calls the library keeps its allocator as it
#: set it, since the setting is the whole process's.
TUNE_ALLOCATOR = False


@cache
def keep_freed() -> None:
    """Ask glibc's malloc to serve blocks under 32 MB from its heap and to keep freed memory
    (until 256 MB of it lies free at the top) rather than give it back at once: the blocks
    of each file's bytes (the survey's `Source.whole`, the output written from it, the read
    back's) were otherwise mapped afresh, their pages zeroed and faulted in one by one
    (~25,000 page faults per 100 MB, #26 item 4). What is freed stays the process's, up to
    its peak. Once a process; nothing changes where the C library has no `mallopt`."""
    try:
        import ctypes  # loaded once a large file is read: a small session's start-up is spared

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD


class _Reader(io.RawIOBase):
    """A read-only stream over a descriptor by `pread`, with its own position (shareable)."""

    def __init__(self, fd: int, size: int, digest: Any = None) -> None:
        super().__init__()
        self.fd, self.size, self.at = fd, size, 0
        self.digest = digest  # a hash of every byte read, in order (or None)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self.at)
        if want <= 0:
            return 0
        if _PREADV is not None:  # straight into the caller's buffer: no copy, no allocation
            n: int = _PREADV(self.fd, [view[:want]], self.at)
        else:
            data = os.pread(self.fd, want, self.at)
            n = len(data)
            view[:n] = data
        if self.digest is not None:
            self.digest.update(view[:n])
        self.at += n
        return n


class Source:
    """One input file's decompressed bytes (`size` of them), readable any number of times."""

    def __init__(
        self,
        path: str,
        fd: int,
        stamp: filestate.Stamp,
        mode: int,
        kind: compression.Compression,
        content_fd: int,
        size: int,
    ) -> None:
        self.path = path  # the real path
        self.fd = fd  # the file as opened
        self.stamp = stamp
        self.mode = mode
        self.compression = kind
        self.content_fd = content_fd  # the decompressed bytes (`fd` itself for a plain file)
        self.size = size
        self._read_hash: filestate.Digest | None = None  # taken as the survey read it
        # the content, where the survey read it in one block (`survey_stream`): what is read
        # again (line index, style, records, the read back's compare) is taken from it
        self.whole: bytes | None = None

    @classmethod
    def open(cls, path: str, limit: int = 0) -> Source:
        """Open `path` (symlinks resolved); a compressed file is decompressed to a temporary
        file, at most `limit` bytes (0: no limit), else TooLarge."""
        if remote.is_url(path):
            real, fd, mode = path, _fetch(path), URL_MODE
        else:
            real = filestate.real_path(path)
            try:
                fp = open_regular(real)
            except OSError as exc:
                raise filestate.WriteError(
                    f"cannot read: {exc.strerror or exc}", ErrorKind.UNREADABLE
                ) from exc
            fd = os.dup(fp.fileno())
            fp.close()
            mode = None
        try:
            st = os.fstat(fd)
            stamp = filestate.Stamp.of(st)
            mode = stat.S_IMODE(st.st_mode) if mode is None else mode
            kind = compression.sniff(os.pread(fd, 4, 0))
            if kind is compression.Compression.NONE:
                return cls(real, fd, stamp, mode, kind, fd, stamp.size)
            content, size = _decompress(fd, stamp.size, kind, limit)
            source = cls(real, fd, stamp, mode, kind, content, size)
            source.check()
            return source
        except BaseException:
            os.close(fd)
            raise

    def close(self) -> None:
        """Close the file, once the survey's hash is taken (`Digest.settle`), asked for or not:
        the bytes it hashes are held until then, one file's at most."""
        if self._read_hash is not None:
            self._read_hash.settle()
        if self.content_fd != self.fd:
            os.close(self.content_fd)
        os.close(self.fd)

    def check(self) -> None:
        """FileChanged unless the file still has the stamp it had when opened."""
        now = filestate.Stamp.of(os.fstat(self.fd))
        if now != self.stamp:
            raise filestate.FileChanged(
                f"{self.path}: changed since it was read "
                f"({self.stamp.describe_change(now)}); skipped, left as it is"
            )

    def stream(self, *, hashed: bool = False, start: int = 0, buffer: int = BLOCK) -> BinaryIO:
        """The decompressed bytes from `start` (a small `buffer` to peek: a peek fills it). A
        `hashed` stream (from the start) read to its end gives `content_sha256`."""
        reader = _Reader(self.content_fd, self.size, _sha256() if hashed else None)
        reader.at = start if not hashed else 0
        return cast(BinaryIO, io.BufferedReader(reader, buffer))

    def survey_stream(self, *, hashed: bool = False) -> Survey:
        """The content from the start, for a reader that asks for blocks (`read(n)`) alone:
        scan's sparse reader, the survey (`hashed`: as `stream`)."""
        return Survey(self, _sha256() if hashed else None)

    def hashed_through(self, stream: BinaryIO | Survey) -> None:
        """Keep the hash of a `stream(hashed=True)` that was read to its end: `content_sha256`
        (and, for a plain file, `sha256`) then need no read of their own."""
        raw = stream if isinstance(stream, Survey) else getattr(stream, "raw", None)
        if isinstance(raw, (_Reader, Survey)) and raw.digest is not None and raw.at == self.size:
            # waited for when asked for (the manifest entry, after the write and its read back),
            # not as the survey ends: ~0.3 ms a 1 MB file of a `--out` (#26 item 4)
            self._read_hash = raw.digest

    @property
    def read_digest(self) -> str | None:
        """The content's hash, taken as the survey read it (`hashed_through`), or None."""
        return None if self._read_hash is None else self._read_hash.hexdigest()

    def raw_stream(self) -> BinaryIO:
        """The file's own bytes (compressed, if it is) from the start."""
        return cast(BinaryIO, io.BufferedReader(_Reader(self.fd, self.stamp.size), BLOCK))

    def read(self, start: int, end: int) -> bytes:
        if self.whole is not None:  # the survey's bytes (the whole range: the object itself)
            return self.whole[start:end]
        return os.pread(self.content_fd, end - start, start) if end > start else b""

    def blocks(self, start: int, end: int) -> Iterator[bytes]:
        """The decompressed bytes start..end, a block at a time."""
        while start < end:
            block = self.read(start, min(end, start + BLOCK))
            if not block:
                raise filestate.FileChanged(f"{self.path}: shorter than when it was read; skipped")
            start += len(block)
            yield block

    @cached_property
    def sha256(self) -> str:
        """The hash of the file's own bytes, read in blocks (then the stamp is checked)."""
        if self.read_digest is not None and self.content_fd == self.fd:
            self.check()
            return self.read_digest
        digest = _sha256()
        at = 0
        while at < self.stamp.size:
            block = os.pread(self.fd, min(BLOCK, self.stamp.size - at), at)
            if not block:
                break
            digest.update(block)
            at += len(block)
        self.check()
        return digest.hexdigest()

    @cached_property
    def content_sha256(self) -> str:
        """The hash of the decompressed bytes (the file's own, for a plain file)."""
        if self.content_fd == self.fd:
            return self.sha256
        if self.read_digest is not None:
            return self.read_digest
        digest = _sha256()
        for block in self.blocks(0, self.size):
            digest.update(block)
        return digest.hexdigest()

    def state(self) -> filestate.FileState:
        return filestate.FileState(self.path, self.stamp, self.mode, self.stamp.size, self.sha256)

    def line_offsets(self, seen: dict[int, int] | None = None, total: int = 0) -> Sequence[int]:
        """Where each line starts (a JSONL record is a line, blank ones included): from the
        starts of the `total` lines' records the sparse reader saw (`seen`), stepping to the
        others, or a line index of the whole file."""
        return LineIndex.build(self) if seen is None else SeenLines(self, seen, total)


class Survey:
    """The survey's stream (`Source.survey_stream`): each block read by `pread` into bytes
    of its own, hashed as they are (no copy: `filestate.Digest`); a content read in one block
    is kept as `Source.whole`, so the line index, the style sniff and the records the planner
    asks for are not read from the file again (#26 item 4). Memory: one block (the sparse
    reader's, 4 MB), held while the file is planned."""

    def __init__(self, source: Source, digest: Any) -> None:
        self.source, self.digest, self.at = source, digest, 0

    def read(self, n: int = -1) -> bytes:
        source = self.source
        want = source.size - self.at if n < 0 else min(n, source.size - self.at)
        if want <= 0:
            return b""
        if want >= KEEP_FREED_FROM and TUNE_ALLOCATOR:
            keep_freed()
        data = os.pread(source.content_fd, want, self.at)
        if self.at == 0 and len(data) == source.size:
            source.whole = data
        if self.digest is not None:
            self.digest.update(data)
        self.at += len(data)
        return data


def named_stream(content: bytes, path: str) -> io.BytesIO:
    """The bytes as a stream that knows the file's name (OpenCode reads a part's role beside)."""
    stream = io.BytesIO(content)
    stream.name = path
    return stream


def _fetch(url: str) -> int:
    """A file named by an fsspec URL, copied once as it streams into an anonymous temporary
    file (gone with the process): the bytes planned, verified and written are the ones read,
    whatever happens to the object meanwhile. Its descriptor, or WriteError."""
    try:
        import tempfile

        with remote.open_url(url) as fp, tempfile.TemporaryFile() as out:
            while block := fp.read(BLOCK):
                out.write(block)
            out.flush()
            return os.dup(out.fileno())
    except (OSError, ValueError, ImportError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise filestate.WriteError(
            f"cannot read: {why or type(exc).__name__}", ErrorKind.UNREADABLE
        ) from exc


def _decompress(
    fd: int, raw_size: int, kind: compression.Compression, limit: int
) -> tuple[int, int]:
    """A temporary file holding the decompressed bytes, and their size."""
    import tempfile

    with (
        tempfile.TemporaryFile() as out,
        compression.wrap_reader(io.BufferedReader(_Reader(fd, raw_size)), kind) as fp,
    ):
        size = 0
        while block := fp.read(BLOCK):
            out.write(block)
            size += len(block)
            if limit and size > limit:
                raise TooLarge(
                    f"decompresses to more than {limit:,} bytes ({kind.value} file of "
                    f"{raw_size:,} bytes; the limit is {DECOMPRESSED_RECORDS} x "
                    "--max-record-size): a compression bomb or a file too large to repair"
                )
        out.flush()
        return os.dup(out.fileno()), size


def _sha256() -> filestate.Digest:
    """A hash of the bytes read, taken beside the reader (`filestate.Digest`, #26 item 4)."""
    return filestate.Digest()


def record_span(offsets: Sequence[int], index: int, size: int) -> tuple[int, int]:
    """Where record `index` starts and ends in a file of `size` bytes whose records start at
    `offsets`: the next one's start, or the end of the file."""
    end = offsets[index + 1] if index + 1 < len(offsets) else size
    return offsets[index], end


class FileRecords(Indexed[Record]):
    """A line-record file's records by index (read from disk on demand) or in one pass.
    `known` holds records already read (with their context), returned as they are; a record
    past the record limit comes back empty, with its error, never read."""

    def __init__(
        self,
        source: Source,
        fmt: SessionFormat,
        offsets: Sequence[int],
        known: Mapping[int, Record],
    ) -> None:
        self.source, self.fmt, self.offsets, self.known = source, fmt, offsets, known

    def __len__(self) -> int:
        return len(self.offsets)

    def span(self, index: int) -> tuple[int, int]:
        """Record `index`'s bytes in the decompressed file, its terminator included."""
        return record_span(self.offsets, index, self.source.size)

    def _item(self, index: int) -> Record:
        known = self.known.get(index)
        if known is not None:
            return known
        start, end = self.span(index)
        limit = record_limit()
        if limit and end - start > limit + 2:
            return Record(
                index,
                index + 1,
                b"",
                b"\n",
                EMPTY_CONTEXT,
                self.fmt.shapes,
                data=None,
                error=too_large(end - start, limit),
            )
        return self._record(index, self.source.read(start, end))

    def __iter__(self) -> Iterator[Record]:
        """Every record in order, read a block at a time and cut at the line index; like those
        read by index they carry no context (a format's file-wide facts look at bytes and
        data), except the known ones, returned as they are."""
        size, limit = self.source.size, record_limit()
        buf, at = b"", 0  # buf holds the decompressed bytes at..at+len(buf)
        for index in range(len(self.offsets)):
            known = self.known.get(index)
            if known is not None:
                yield known
                continue
            start, end = self.span(index)
            if limit and end - start > limit + 2:
                yield self[index]  # too large: never read
                continue
            if end > at + len(buf) or start < at:
                at = start
                buf = self.source.read(start, max(end, min(size, start + BLOCK)))
            yield self._record(index, buf[start - at : end - at])

    def raws(self) -> Iterator[bytes]:
        """Every line's bytes (terminators included) in file order, whole lines to a chunk, as
        `__iter__` reads them but making no records (a file-wide byte test: the escape style,
        at C speed). A line past the record limit is left out (it is never read)."""
        size, limit = self.source.size, record_limit()
        offsets, count = self.offsets, len(self.offsets)
        if isinstance(offsets, SeenLines) and offsets.full is None:
            for at, cut, block in self._cuts(offsets):  # no line index: cut at newlines
                if block is not None:
                    yield block[:cut] if cut < len(block) else block
                elif not (limit and cut - at > limit + 2):
                    yield self.source.read(at, cut)
            return
        at = 0
        while at < count:
            start = offsets[at]
            block_end = min(size, start + BLOCK)
            # lines at..last-1 end inside the block
            last = count if block_end >= size else max(at, bisect_right(offsets, block_end, at) - 1)
            if last == at:  # one line longer than a block
                end = offsets[at + 1] if at + 1 < count else size
                if not (limit and end - start > limit + 2):
                    yield self.source.read(start, end)
                at += 1
                continue
            yield self.source.read(start, offsets[last] if last < count else size)
            at = last

    def containing(self, needle: bytes) -> Iterator[Record]:
        """The records whose bytes hold `needle`, in order, found a block at a time by
        `bytes.find`: a file-wide fact only such lines hold costs a search, not every record."""
        offsets, count = self.offsets, len(self.offsets)
        if isinstance(offsets, SeenLines) and offsets.full is None:
            # no line index: a hit's line is counted from the nearest line the survey saw
            for at, cut, block in self._cuts(offsets):
                if block is None:  # one line longer than a block: read by index (or never)
                    line, _ = offsets.line_at(at)
                    record = self[line]
                    if needle in record.raw:
                        yield record
                    continue
                pos = block.find(needle, 0, cut)
                while pos >= 0:
                    line, start = offsets.line_at(at + pos)
                    stop = block.find(b"\n", pos, cut) + 1 or cut
                    known = self.known.get(line)
                    yield (
                        known if known is not None else self._record(line, block[start - at : stop])
                    )
                    pos = block.find(needle, stop, cut)
            return
        size, at = self.source.size, 0
        while at < count:
            start = offsets[at]
            block_end = min(size, start + BLOCK)
            last = count if block_end >= size else max(at, bisect_right(offsets, block_end, at) - 1)
            if last == at:  # one line longer than a block: read by index (or never, if too long)
                record = self[at]
                if needle in record.raw:
                    yield record
                at += 1
                continue
            buf = self.source.read(start, offsets[last] if last < count else size)
            find, pos = buf.find, buf.find(needle)
            while pos >= 0:
                index = bisect_right(offsets, start + pos, at, last) - 1
                lo = offsets[index] - start
                hi = (offsets[index + 1] if index + 1 < count else size) - start
                known = self.known.get(index)
                yield known if known is not None else self._record(index, buf[lo:hi])
                pos = find(needle, hi)
            at = last

    def _cuts(self, offsets: SeenLines) -> Iterator[tuple[int, int, bytes | None]]:
        """The file a block of whole lines at a time, cut at its last newline, with no line
        index: (start, end of the lines in `block`, block); a line longer than a block comes
        as (its start, its end, None), unread."""
        size, at = self.source.size, 0
        while at < size:
            block = self.source.read(at, min(size, at + BLOCK))
            if not block:
                raise filestate.FileChanged(f"{self.source.path}: shorter than when it was read")
            cut = len(block) if at + len(block) >= size else block.rfind(b"\n") + 1
            if cut == 0:
                stop = offsets.line_end(at)
                yield at, stop, None
                at = stop
                continue
            yield at, cut, block
            at += cut

    def _record(self, index: int, line: bytes) -> Record:
        if line.endswith(b"\r\n"):
            raw, eol = line[:-2], b"\r\n"
        elif line.endswith(b"\n"):
            raw, eol = line[:-1], b"\n"
        else:
            raw, eol = line, b""
        return Record(index, index + 1, raw, eol, EMPTY_CONTEXT, self.fmt.shapes)
