"""Bytes copied by the kernel (#26 item 4): `ranges.copy_range` writes exactly the bytes a
plain read and write would, by each way it has (`copy_file_range`, `sendfile`, the plain
copy), and `safewrite` publishes bytes it did not see only once a read back has hashed and
proven them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkfix.io import filestate, ranges, safewrite

WAYS = ["copy_file_range", "sendfile", "plain"]


def _only(monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """Leave `copy_range` only `way` (the plain copy is always there, last)."""
    if way != "copy_file_range":
        monkeypatch.setattr(ranges, "_COPY_FILE_RANGE", None)
    if way != "sendfile":
        monkeypatch.setattr(ranges, "_SENDFILE", None)


@pytest.mark.parametrize("way", WAYS)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=3000),
    cuts=st.lists(st.tuples(st.integers(0, 3100), st.integers(0, 3100)), max_size=6),
    small=st.booleans(),
)
def test_copied_ranges_are_the_bytes_a_plain_copy_writes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    way: str,
    data: bytes,
    cuts: list[tuple[int, int]],
    small: bool,
) -> None:
    with monkeypatch.context() as mp:
        _only(mp, way)
        if small:  # many calls of each way, and the plain copy's blocks, on small files
            mp.setattr(ranges, "_CHUNK", 7)
            mp.setattr(ranges, "_BLOCK", 5)
        src, dst = tmp_path / "src", tmp_path / "dst"
        src.write_bytes(data)
        want = bytearray()
        with open(src, "rb") as i, open(dst, "wb", buffering=0) as o:
            o.write(b"head")  # appended at the position, after what is there
            for offset, count in cuts:
                copied = ranges.copy_range(i.fileno(), o.fileno(), offset, count)
                expected = data[offset : offset + count]
                assert copied == len(expected)  # fewer only where the source ends
                want += expected
        assert dst.read_bytes() == b"head" + want


class _Unseen:
    """`produce` for atomic_write_stream: some bytes written, a range of `src` copied in."""

    def __init__(self, src: Path, offset: int, count: int) -> None:
        self.src, self.offset, self.count = src, offset, count

    def __call__(self, out: BinaryIO) -> None:
        out.write(b"new:")
        with open(self.src, "rb") as fp:
            safewrite.copy_into(out, fp.fileno(), self.offset, self.count, str(self.src))


def test_bytes_copied_unseen_are_hashed_by_the_exact_read_back(tmp_path: Path) -> None:
    src, target = tmp_path / "src", tmp_path / "t"
    src.write_bytes(b"0123456789")
    planned = b"new:2345"

    def same(fp: BinaryIO) -> None:
        assert fp.read() == planned

    written = safewrite.atomic_write_stream(
        str(target), _Unseen(src, 2, 4), read_back=same, exact_read_back=True
    )
    assert target.read_bytes() == planned
    assert (written.size, written.sha256) == safewrite.hash_file(str(target))


def test_bytes_copied_unseen_without_a_proof_are_refused(tmp_path: Path) -> None:
    """Neither an exact read back nor an expected hash: nothing would prove the copied bytes
    (the sink's hash does not cover them), so nothing is published."""
    src, target = tmp_path / "src", tmp_path / "t"
    src.write_bytes(b"0123456789")
    target.write_bytes(b"old")
    for read_back in (None, lambda fp: None):
        with pytest.raises(filestate.VerifyError, match="copied unseen"):
            safewrite.atomic_write_stream(str(target), _Unseen(src, 0, 4), read_back=read_back)
    assert target.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["src", "t"]


def test_a_copy_is_published_only_with_the_hash_it_was_expected_to_have(tmp_path: Path) -> None:
    src, target = tmp_path / "src", tmp_path / "t"
    src.write_bytes(b"0123456789")
    size, digest = safewrite.hash_file(str(src))

    def whole(out: BinaryIO) -> None:
        with open(src, "rb") as fp:
            safewrite.copy_into(out, fp.fileno(), 0, size)

    written = safewrite.atomic_write_stream(str(target), whole, expected=(size, digest))
    assert target.read_bytes() == src.read_bytes() and written.sha256 == digest
    target.unlink()
    with pytest.raises(filestate.VerifyError, match="did not read back as written"):
        safewrite.atomic_write_stream(str(target), whole, expected=(size, "0" * 64))
    assert not target.exists() and sorted(os.listdir(tmp_path)) == ["src"]


def test_a_source_shorter_than_its_range_is_a_changed_file(tmp_path: Path) -> None:
    src, target = tmp_path / "src", tmp_path / "t"
    src.write_bytes(b"0123")
    with pytest.raises(filestate.FileChanged, match="shorter than when it was read"):
        safewrite.atomic_write_stream(
            str(target), _Unseen(src, 2, 4), read_back=lambda fp: None, exact_read_back=True
        )
    assert not target.exists()
