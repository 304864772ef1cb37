"""`io.compression`: the bytes a failed decode call had decoded are read before its error
where the file can seek back (decoded again), and a pipe still gets its error."""

from __future__ import annotations

import io
import lzma

import pytest

from thinkfix.io.compression import StreamError, wrap_reader

TEXT = b"".join(b"line %d of the session, some words to compress\n" % i for i in range(40000))


class _Pipe(io.RawIOBase):
    """`data` as a pipe gives it: no seeking back."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        return self._data.readinto(buffer)


def _flipped() -> tuple[bytes, bytes]:
    """TEXT as xz with a byte flipped two thirds in; what a decoder fed a byte at a time
    gives before its error."""
    packed = lzma.compress(TEXT, lzma.FORMAT_XZ)
    at = len(packed) * 2 // 3
    bad = packed[:at] + bytes([packed[at] ^ 0x55]) + packed[at + 1 :]
    decoder, out = lzma.LZMADecompressor(lzma.FORMAT_XZ), bytearray()
    with pytest.raises(lzma.LZMAError):
        for i in range(len(bad)):
            out += decoder.decompress(bad[i : i + 1])
    return bad, bytes(out)


def _read(fp: io.BufferedIOBase) -> tuple[bytes, BaseException]:
    parts = []
    while True:
        try:
            data = fp.read1(1 << 22)
        except (OSError, EOFError) as exc:
            return b"".join(parts), exc
        assert data, "the damaged file read to its end"
        parts.append(data)


def test_a_seekable_file_reads_every_byte_before_the_damage() -> None:
    bad, before = _flipped()
    data, error = _read(wrap_reader(io.BytesIO(bad)))  # type: ignore[arg-type]
    assert isinstance(error, StreamError) and "damaged xz data" in str(error)
    assert data == before
    assert len(before) > len(TEXT) // 2  # not vacuous: the damage is far in


def test_a_pipe_gets_its_error_without_a_second_decode() -> None:
    bad, before = _flipped()
    data, error = _read(wrap_reader(io.BufferedReader(_Pipe(bad))))  # type: ignore[arg-type]
    assert isinstance(error, StreamError)
    assert before.startswith(data)  # what the failed call decoded is lost here (open)
