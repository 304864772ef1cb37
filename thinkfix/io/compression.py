"""Transparent .gz/.zst/.bz2/.xz reading and writing.

Reading trusts the magic bytes, not the name, so a renamed or suffix-less
compressed session is still read; writing follows the requested compression
(by default the one the target's name asks for), so a repaired `x.jsonl.zst`
stays zstd. The returned objects are ordinary binary file objects that
iterate by line, which is all the format readers need. Whatever is not a whole
stream (cut short, damaged, followed by bytes that are no stream) raises
`OSError` or `EOFError` for its file: never a shorter file read as a whole one.
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
#: "BZh" and the block size, 1 to 9 (hundreds of kB).
BZIP2_MAGICS = tuple(b"BZh" + bytes([digit]) for digit in b"123456789")
#: The first 4 of the xz stream header's 6 magic bytes (FD 37 7A 58 5A 00): what callers
#: sniff (4 bytes) holds; 0xFD starts no UTF-8 text, so no plain session begins so.
XZ_MAGIC = b"\xfd7zX"


class Compression(str, Enum):
    """How a file's bytes are wrapped."""

    NONE = "none"
    GZIP = "gzip"
    ZSTD = "zstd"
    BZIP2 = "bzip2"
    XZ = "xz"


def sniff(head: bytes) -> Compression:
    """Compression named by the first bytes of a file."""
    if head.startswith(GZIP_MAGIC):
        return Compression.GZIP
    if head.startswith(ZSTD_MAGIC):
        return Compression.ZSTD
    if head.startswith(BZIP2_MAGICS):
        return Compression.BZIP2
    if head.startswith(XZ_MAGIC):
        return Compression.XZ
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
    if compression in (Compression.BZIP2, Compression.XZ):
        return cast(BinaryIO, io.BufferedReader(_Streams(buffered, compression)))
    return cast(BinaryIO, buffered)


class StreamError(OSError):
    """Bytes of a bz2 or xz file that are no stream: damaged, or garbage after the last one."""


#: Compressed bytes read at a time from a bz2 or xz file (as `_compression.BUFFER_SIZE`).
_RAW_BLOCK = 8192
#: The most memory an xz stream may ask of liblzma to decode (its dictionary, mostly): `xz
#: -9e` needs 65 MiB; a hostile header may ask 4 GiB.
XZ_MEMLIMIT = 256 << 20


class _Streams(io.RawIOBase):
    """The decoded bytes of one or more concatenated bz2 or xz streams (pbzip2 and `xz -T`
    write several). The stdlib's `BZ2File` and `LZMAFile` stop without a word at bytes after
    a stream that start no stream, so `whole.jsonl.bz2` with garbage appended read as clean:
    here those bytes raise `StreamError`, and input that ends inside a stream `EOFError`.
    Between and after xz streams, null bytes in fours are stream padding (the xz format's)."""

    def __init__(self, raw: BinaryIO, kind: Compression) -> None:
        self._raw = raw
        self._kind = kind
        self._decoder = self._new()
        self._padding = 0  # xz null bytes since the last stream ended

    def _new(self) -> Any:
        if self._kind is Compression.BZIP2:
            import bz2

            return bz2.BZ2Decompressor()
        import lzma

        return lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=XZ_MEMLIMIT)

    def readable(self) -> bool:
        return True

    @property
    def name(self) -> Any:
        """The file's name, as `GzipFile` gives it: a reader may look beside the file
        (OpenCode's parts read their message's file)."""
        return self._raw.name

    def readinto(self, buffer: Any) -> int:
        want = len(buffer)
        while want:
            data = self._decoded(want)
            if data is None:
                return 0
            if data:
                buffer[: len(data)] = data
                return len(data)
        return 0

    def _decoded(self, want: int) -> bytes | None:
        """Up to `want` decoded bytes (b"" when a step decoded none), or None at the end of
        the last stream."""
        decoder = self._decoder
        if decoder.eof:
            rest = decoder.unused_data or self._raw.read(_RAW_BLOCK)
            if self._kind is Compression.XZ:
                rest = self._padded(rest)
            if not rest:
                if self._padding % 4:
                    raise StreamError(
                        f"xz stream padding of {self._padding} null bytes, not a multiple of 4"
                    )
                return None
            if not _may_start(rest, _STREAM_MAGIC[self._kind]):  # said as such, not "cut short"
                raise StreamError(
                    f"bytes after the last {self._kind.value} stream that start no stream "
                    "(trailing garbage?)"
                )
            self._decoder = decoder = self._new()
            return self._decode(rest, want, after=True)
        if decoder.needs_input:
            block = self._raw.read(_RAW_BLOCK)
            if not block:
                raise EOFError(
                    f"compressed file ended inside its {self._kind.value} stream (cut short?)"
                )
        else:
            block = b""
        return self._decode(block, want, after=False)

    def _padded(self, rest: bytes) -> bytes:
        """`rest` past the xz stream padding (counted) that begins it, reading on."""
        while rest and not rest.strip(b"\0"):
            self._padding += len(rest)
            rest = self._raw.read(_RAW_BLOCK)
        stripped = rest.lstrip(b"\0")
        self._padding += len(rest) - len(stripped)
        if stripped and self._padding % 4:
            raise StreamError(
                f"xz stream padding of {self._padding} null bytes, not a multiple of 4"
            )
        if stripped:
            self._padding = 0
        return stripped

    def _decode(self, block: bytes, want: int, *, after: bool) -> bytes:
        try:
            data: bytes = self._decoder.decompress(block, want)
        except Exception as exc:  # bz2 raises OSError, lzma its LZMAError: either is damage
            kind = self._kind.value
            raise StreamError(
                f"bytes after the last {kind} stream that start no stream (trailing garbage?): "
                f"{exc}"
                if after
                else f"damaged {kind} data: {exc}"
            ) from exc
        return data

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_read(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a possibly compressed file for binary reading, decompressing transparently.

    Only regular files: a FIFO or device is refused (`regular.NotRegular`), never read.
    """
    return wrap_reader(open_regular(os.fspath(path)))


#: What a bz2 or xz stream begins with (bz2's block size digit follows its magic).
_STREAM_MAGIC = {Compression.BZIP2: b"BZh", Compression.XZ: b"\xfd7zXZ\x00"}


def _may_start(rest: bytes, magic: bytes) -> bool:
    """Could `rest` begin a stream: it starts with the magic, or is the start of the magic
    (a stream cut short there, which the decoder then says)?"""
    head = rest[: len(magic)]
    return magic.startswith(head)


class _Owning(io.RawIOBase):
    """A writable stream over the compressing file `inner` that closes `raw` after it: bz2's
    and lzma's files, and zstd's writer here, leave a file object they were given open."""

    def __init__(self, inner: Any, raw: BinaryIO) -> None:
        self._inner = inner
        self._file = raw

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self._inner.write(data)
        return len(data)

    def _finish(self) -> None:
        """What the format needs written before `inner` closes."""

    def close(self) -> None:
        if not self.closed:
            try:
                self._finish()
                self._inner.close()
            finally:
                self._file.close()
        super().close()


class _ZstdWriter(_Owning):
    """zstd's stream writer, its frame ended on close."""

    def __init__(self, fileobj: BinaryIO, level: int) -> None:
        import zstandard

        writer = zstandard.ZstdCompressor(level=level).stream_writer(fileobj, closefd=False)
        super().__init__(writer, fileobj)

    def _finish(self) -> None:
        import zstandard

        self._inner.flush(zstandard.FLUSH_FRAME)


def _stdlib_writer(raw: BinaryIO, compression: Compression, level: int | None) -> _Owning:
    """bz2 (level 9 by default, as `bzip2`) or xz (preset 6, as `xz`): neither writes a
    time or a name, so two repairs give the same bytes."""
    if compression is Compression.BZIP2:
        import bz2

        return _Owning(bz2.BZ2File(raw, "wb", compresslevel=9 if level is None else level), raw)
    import lzma

    return _Owning(
        lzma.LZMAFile(raw, "wb", format=lzma.FORMAT_XZ, preset=6 if level is None else level), raw
    )


def wrap_writer(raw: BinaryIO, compression: Compression, level: int | None = None) -> BinaryIO:
    """Compressing view of an open binary stream; closing it closes `raw` too."""
    if compression is Compression.GZIP:
        # mtime=0 keeps the output deterministic: two repairs give the same bytes.
        return cast(BinaryIO, _owning_gzip()(raw, 9 if level is None else level))
    if compression is Compression.ZSTD:
        return cast(
            BinaryIO, io.BufferedWriter(cast(Any, _ZstdWriter(raw, 3 if level is None else level)))
        )
    if compression in (Compression.BZIP2, Compression.XZ):
        return cast(BinaryIO, io.BufferedWriter(cast(Any, _stdlib_writer(raw, compression, level))))
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
