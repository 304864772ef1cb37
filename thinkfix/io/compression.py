"""Transparent .gz/.zst reading and writing.

Reading trusts the magic bytes, not the name, so a renamed or suffix-less
compressed session is still read; writing follows the requested compression
(by default the one the target's name asks for), so a repaired `x.jsonl.zst`
stays zstd. The returned objects are ordinary binary file objects that
iterate by line, which is all the format readers need.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    import gzip

from thinkfix.io.regular import open_regular

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class Compression(str, Enum):
    """How a file's bytes are wrapped."""

    NONE = "none"
    GZIP = "gzip"
    ZSTD = "zstd"


def sniff(head: bytes) -> Compression:
    """Compression named by the first bytes of a file."""
    if head.startswith(GZIP_MAGIC):
        return Compression.GZIP
    if head.startswith(ZSTD_MAGIC):
        return Compression.ZSTD
    return Compression.NONE


def wrap_reader(raw: BinaryIO, compression: Compression | None = None) -> BinaryIO:
    """Decompressing view of an open binary stream (sniffed when `compression` is None)."""
    buffered: Any = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast(Any, raw))
    if compression is None:
        compression = sniff(buffered.peek(4)[:4])
    # gzip and zstandard load with the first compressed file: a plain session needs neither
    if compression is Compression.GZIP:
        import gzip

        return cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
    if compression is Compression.ZSTD:
        import zstandard

        from thinkfix.io.zstdframes import checked_reader

        return checked_reader(buffered, zstandard)
    return cast(BinaryIO, buffered)


def open_read(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a possibly compressed file for binary reading, decompressing transparently.

    Only regular files: a FIFO or device is refused (`regular.NotRegular`), never read.
    """
    return wrap_reader(open_regular(os.fspath(path)))


class _ZstdWriter(io.RawIOBase):
    """A writable stream that closes the zstd frame and the file on close."""

    def __init__(self, fileobj: BinaryIO, level: int) -> None:
        import zstandard

        self._file = fileobj
        self._writer = zstandard.ZstdCompressor(level=level).stream_writer(fileobj, closefd=False)

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self._writer.write(data)
        return len(data)

    def close(self) -> None:
        if not self.closed:
            import zstandard

            self._writer.flush(zstandard.FLUSH_FRAME)
            self._writer.close()  # type: ignore[no-untyped-call]
            self._file.close()
        super().close()


def wrap_writer(raw: BinaryIO, compression: Compression, level: int | None = None) -> BinaryIO:
    """Compressing view of an open binary stream; closing it closes `raw` too."""
    if compression is Compression.GZIP:
        # mtime=0 keeps the output deterministic: two repairs give the same bytes.
        return cast(BinaryIO, _owning_gzip()(raw, 9 if level is None else level))
    if compression is Compression.ZSTD:
        return cast(
            BinaryIO, io.BufferedWriter(cast(Any, _ZstdWriter(raw, 3 if level is None else level)))
        )
    return raw


@cache
def _owning_gzip() -> Callable[[BinaryIO, int], gzip.GzipFile]:
    """A GzipFile that also closes the file object it writes to (defined on first use:
    gzip loads with the first compressed output)."""
    import gzip

    class _OwningGzip(gzip.GzipFile):
        def __init__(self, raw: BinaryIO, level: int) -> None:
            super().__init__(fileobj=raw, mode="wb", compresslevel=level, mtime=0, filename="")
            self._owned = raw

        def close(self) -> None:
            try:
                super().close()
            finally:
                self._owned.close()

    return _OwningGzip


def compress(data: bytes, compression: Compression, level: int | None = None) -> bytes:
    """`data` wrapped in `compression`, in memory."""
    sink = io.BytesIO()
    keep = sink.close
    sink.close = lambda: None  # type: ignore[method-assign]
    with wrap_writer(sink, compression, level) as fp:
        fp.write(data)
    sink.close = keep  # type: ignore[method-assign]
    return sink.getvalue()
