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
from collections.abc import Callable, Iterator
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    import gzip

from thinkfix.io.blockread import Pieces
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
    # zstandard loads with the first zstd file: a plain session needs none
    if compression is Compression.ZSTD:
        import zstandard

        from thinkfix.io.zstdframes import checked_reader

        return checked_reader(buffered, zstandard)
    if compression in (Compression.GZIP, Compression.BZIP2, Compression.XZ):
        return cast(BinaryIO, io.BufferedReader(_Streams(buffered, compression)))
    return cast(BinaryIO, buffered)


class StreamError(OSError):
    """Bytes of a compressed file that are no stream: damaged, or garbage after the last one."""


#: Compressed bytes read at a time from a gzip, bz2 or xz file (as `_compression.BUFFER_SIZE`).
_RAW_BLOCK = 8192
#: The most memory an xz stream may ask of liblzma to decode (its dictionary, mostly): `xz
#: -9e` needs 65 MiB; a hostile header may ask 4 GiB.
XZ_MEMLIMIT = 256 << 20


class _Streams(Pieces):
    """The decoded bytes of one or more concatenated gzip, bz2 or xz streams (gzip members,
    pbzip2 and `xz -T` write several). The stdlib's `BZ2File` and `LZMAFile` stop without a
    word at bytes after a stream that start no stream, so `whole.jsonl.bz2` with garbage
    appended read as clean: here those bytes raise `StreamError`, and input that ends inside
    a stream `EOFError`. Between and after xz streams, null bytes in fours are stream padding
    (the xz format's); after a gzip member, any null bytes (as `GzipFile` and `gzip -d` read
    them). A decode that fails keeps nothing it decoded (a bz2 block before the damaged one,
    the text before a flipped byte): where the file can seek, `_salvage` decodes again to
    the failure, and those bytes are read before the error is raised (`GzipFile` lost them
    too, so gzip is decoded here as well, with zlib)."""

    def __init__(self, raw: BinaryIO, kind: Compression) -> None:
        super().__init__()
        self._raw = raw
        self._kind = kind
        self._decoder = self._new()
        self._padding = 0  # xz null bytes since the last stream ended
        self._at = _position(raw)  # where the next raw read begins (None: it cannot seek)
        self._start = self._at  # where the current stream begins
        self._block = self._at  # where the last raw read began
        self._done = 0  # bytes of the current stream decoded and returned

    def _new(self) -> Any:
        if self._kind is Compression.GZIP:
            return _Gzip()
        if self._kind is Compression.BZIP2:
            import bz2

            return bz2.BZ2Decompressor()
        import lzma

        return lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=XZ_MEMLIMIT)

    @property
    def name(self) -> Any:
        """The file's name, as `GzipFile` gives it: a reader may look beside the file
        (OpenCode's parts read their message's file)."""
        return self._raw.name

    def _read(self) -> bytes:
        """The next raw block, its offset kept (where the file can seek)."""
        block = self._raw.read(_RAW_BLOCK)
        if self._at is not None:
            self._block = self._at
            self._at += len(block)
        return block

    def _piece(self, want: int) -> bytes | None:
        """Up to `want` decoded bytes (b"" when a step decoded none), or None at the end of
        the last stream."""
        decoder = self._decoder
        if decoder.eof:
            rest = decoder.unused_data or self._read()
            if self._kind is Compression.XZ:
                rest = self._padded(rest)
            elif self._kind is Compression.GZIP:
                rest = self._zeros(rest)
            if not rest:
                if self._padding % 4:
                    raise StreamError(
                        f"xz stream padding of {self._padding} null bytes, not a multiple of 4"
                    )
                return None
            if not _may_start(rest, _STREAM_MAGIC[self._kind]):  # said as such, not "cut short"
                if self._kind is Compression.GZIP:  # as `GzipFile` says it
                    raise StreamError(f"Not a gzipped file ({(rest + self._read())[:2]!r})")
                raise StreamError(
                    f"bytes after the last {self._kind.value} stream that start no stream "
                    "(trailing garbage?)"
                )
            self._decoder = decoder = self._new()
            if self._at is not None:  # the stream's bytes, read or not, start at `rest`
                self._start = self._block = self._at - len(rest)
            self._done = 0
            return self._decode(rest, want, after=True)
        if decoder.needs_input:
            block = self._read()
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
            rest = self._read()
        stripped = rest.lstrip(b"\0")
        self._padding += len(rest) - len(stripped)
        if stripped and self._padding % 4:
            raise StreamError(
                f"xz stream padding of {self._padding} null bytes, not a multiple of 4"
            )
        if stripped:
            self._padding = 0
        return stripped

    def _zeros(self, rest: bytes) -> bytes:
        """`rest` past the null bytes that begin it, reading on (after a gzip member)."""
        while rest and not rest.strip(b"\0"):
            rest = self._read()
        return rest.lstrip(b"\0")

    def _decode(self, block: bytes, want: int, *, after: bool) -> bytes:
        try:
            data: bytes = self._decoder.decompress(block, want)
        except Exception as exc:  # bz2 raises OSError, lzma LZMAError, zlib its error: damage
            kind = self._kind.value
            error = StreamError(
                f"bytes after the last {kind} stream that start no stream (trailing garbage?): "
                f"{exc}"
                if after
                else f"damaged {kind} data: {exc}"
            )
            error.__cause__ = exc
            saved = self._salvage()
            if not saved:
                raise error from exc
            self._then = error  # raised by the next read, after the bytes saved
            return saved
        self._done += len(data)
        return data

    def _salvage(self) -> bytes:
        """The bytes of the current stream that decode after those returned and before the
        failure (at most `_SALVAGE`): decoded again from the stream's start, in blocks to
        where the failed call's input began, then a byte at a time (a byte's output is all a
        failing call then loses). Nothing where the file cannot seek (a pipe)."""
        if self._start is None or self._block is None:
            return b""
        raw, decoder, skip = self._raw, self._new(), self._done
        saved = bytearray()
        try:
            raw.seek(self._start)
            left = self._block - self._start
            while left > 0:
                block = raw.read(min(left, _RAW_BLOCK))
                left -= len(block)
                for data in _outputs(decoder, block):
                    skip -= len(data)
            while len(saved) < _SALVAGE and not decoder.eof:
                byte = raw.read(1)
                if not byte:
                    break
                for data in _outputs(decoder, byte):
                    cut = max(0, min(skip, len(data)))
                    skip -= cut
                    saved += data[cut:]
        except Exception:  # noqa: BLE001 - the failure found again: what came before is saved
            return bytes(saved[:_SALVAGE])
        return b""  # no failure this time: trust neither decoding

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def _position(raw: BinaryIO) -> int | None:
    """Where `raw` stands, if it can seek back there (a pipe cannot)."""
    try:
        return raw.tell() if raw.seekable() else None
    except OSError:
        return None


#: The most bytes `_Streams._salvage` keeps from a failed decode (a bomb's before its damage).
_SALVAGE = 1 << 24


def _outputs(decoder: Any, data: bytes) -> Iterator[bytes]:
    """What `data` decodes to, `_RAW_BLOCK * 8` bytes at a time (a bz2 or xz decoder holds
    the input it has not used until it is asked again)."""
    yield decoder.decompress(data, _RAW_BLOCK * 8)
    while not decoder.needs_input and not decoder.eof:
        yield decoder.decompress(b"", _RAW_BLOCK * 8)


def open_read(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a possibly compressed file for binary reading, decompressing transparently.

    Only regular files: a FIFO or device is refused (`regular.NotRegular`), never read.
    """
    return wrap_reader(open_regular(os.fspath(path)))


#: What a stream begins with (bz2's block size digit follows its magic).
_STREAM_MAGIC = {
    Compression.GZIP: GZIP_MAGIC,
    Compression.BZIP2: b"BZh",
    Compression.XZ: b"\xfd7zXZ\x00",
}


class _Gzip:
    """zlib's decoder of one gzip member (its header, CRC and length checked) with the bz2
    and lzma decompressors' interface: zlib hands back the input a capped call did not use
    (`unconsumed_tail`), which they keep and take again themselves."""

    __slots__ = ("_capped", "_zlib")

    def __init__(self) -> None:
        import zlib

        self._zlib = zlib.decompressobj(31)  # 16 + 15: the gzip wrapper, a 32 KiB window
        self._capped = False  # the last call stopped at its limit: output may be pending

    @property
    def eof(self) -> bool:
        return bool(self._zlib.eof)

    @property
    def unused_data(self) -> bytes:
        return bytes(self._zlib.unused_data)

    @property
    def needs_input(self) -> bool:
        return not self._zlib.unconsumed_tail and not self._capped

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        tail = self._zlib.unconsumed_tail
        out: bytes = self._zlib.decompress(tail + data if tail else data, max(max_length, 0))
        self._capped = 0 < max_length == len(out) and not self._zlib.eof
        return out


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
