"""Repair's line index (`lineindex.LineIndex`) gives every line's start as a full list would,
whatever the spacing at which it keeps them and however the file is cut into blocks, and holds
memory bounded by the file's size, not its number of lines (#22 item 10)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.repair import lineindex as lineindex_module
from thinkfix.engine.repair.lineindex import SPACING, LineIndex
from thinkfix.engine.repair.source import Source


def _starts(data: bytes) -> list[int]:
    """Every line's start, the obvious way."""
    if not data:
        return []
    return [0, *(i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data))]


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"\n", b"\r\n", b"x", b"{}", b"y" * 7]), max_size=120).map(
        b"".join
    ),
    spacing=st.integers(1, 20),
    block=st.integers(1, 40),
    order=st.randoms(use_true_random=False),
    windows=st.sampled_from([1, 2, 64]),
    whole=st.booleans(),
)
def test_the_index_is_every_line_start(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    spacing: int,
    block: int,
    order: object,
    windows: int,
    whole: bool,
) -> None:
    """Whatever the spacing, the block size, the order of the lookups, how many windows of
    skipped starts the index holds (`WINDOWS`: a lookup that finds none held reads one), and
    whether the survey kept the bytes (`Source.whole`: then nothing is read again)."""
    path = tmp_path_factory.mktemp("index") / "f.jsonl"
    path.write_bytes(data)
    expected = _starts(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lineindex_module, "BLOCK", block)
        mp.setattr(lineindex_module, "WINDOWS", windows)
        src = Source.open(str(path))
        if whole:
            src.whole = data
            mp.setattr(os, "pread", _no_read)  # nothing is read from the file again
        try:
            index = LineIndex.build(src, spacing)
            assert len(index) == len(expected)
            assert list(index) == expected  # in order
            picks = list(range(len(expected)))
            order.shuffle(picks)  # type: ignore[attr-defined]
            assert [index[i] for i in picks] == [expected[i] for i in picks]  # any order
            if expected:
                assert index[-1] == expected[-1]
            with pytest.raises(IndexError):
                index[len(expected)]
            assert len(index._windows) <= windows
        finally:
            src.close()


def test_a_file_of_long_lines_keeps_every_start_without_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(b"%d" % i + b"x" * SPACING + b"\n" for i in range(50)))
    src = Source.open(str(path))
    try:
        index = src.line_offsets()
        assert index.lines is None and len(index.starts) == 50  # the old array, as it was
    finally:
        src.close()


def test_the_index_of_a_million_empty_lines_holds_kilobytes(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"{}\n" + b"\n" * (1 << 20) + b"{}\n")
    src = Source.open(str(path))
    try:
        tracemalloc.start()
        index = src.line_offsets()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(index) == (1 << 20) + 2
        assert index[(1 << 20) + 1] == 3 + (1 << 20) and index[12345] == 3 + 12344
    finally:
        src.close()
    assert peak < 3 << 20, peak  # one block read, a few KB of index; 8 bytes a line was 8 MiB


def _no_read(fd: int, n: int, at: int) -> bytes:
    raise AssertionError(f"read again: {n} bytes at {at}")
