"""`io.blockread.BlockReader`: every byte read before a failure is returned, then the failure."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix.io.blockread import BlockReader


class _Failing(io.RawIOBase):
    """`data` in chunks of the given sizes (cycled), then `OSError` (or the end, if `fail`
    is false)."""

    def __init__(self, data: bytes, chunks: list[int], fail: bool) -> None:
        self.data, self.chunks, self.fail, self.at, self.turn = data, chunks, fail, 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        if self.at >= len(self.data):
            if self.fail:
                raise OSError("Not a gzipped file (b'ju')")
            return 0
        n = min(len(buffer), self.chunks[self.turn % len(self.chunks)], len(self.data) - self.at)
        self.turn += 1
        buffer[:n] = self.data[self.at : self.at + n]
        self.at += n
        return n


@given(
    data=st.binary(max_size=300),
    chunks=st.lists(st.integers(1, 64), min_size=1, max_size=5),
    block=st.integers(1, 100),
    fail=st.booleans(),
    buffered=st.booleans(),
)
def test_every_byte_before_a_failure_is_read_then_the_failure_is_raised(
    data: bytes, chunks: list[int], block: int, fail: bool, buffered: bool
) -> None:
    raw = _Failing(data, chunks, fail)
    reader = BlockReader(io.BufferedReader(raw, 16) if buffered else raw)  # type: ignore[arg-type]
    got = b""
    while True:
        try:
            part = reader.read(block)
        except OSError:
            assert fail
            break
        if not part:
            assert not fail  # the end is never reported where a failure comes
            break
        assert len(part) <= block
        got += part
    assert got == data
    if fail:
        with pytest.raises(OSError):
            reader.read(block)  # and again: the failure is not forgotten
