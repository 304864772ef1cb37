"""`outfile.write_pieces` (#26 item 4): a file's pieces are gathered by the kernel from where
they lie (`os.writev`), never joined first, and hashed and counted as one write of their join;
short writes and more pieces than one `writev` takes go on where they stopped."""

from __future__ import annotations

import hashlib
import io
import os
import queue
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES, run
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.repair.source import Source
from thinkfix.io import filestate, outfile

PI = next(p for p in sorted((FIXTURES / "pi").iterdir()) if p.suffix == ".jsonl")


def _short(limit: int) -> Any:
    """`os.writev` that writes at most `limit` bytes a call (a short write, as a signal or a
    full pipe may leave one)."""

    def writev(fd: int, buffers: Sequence[memoryview]) -> int:
        left, cut = limit, []
        for b in buffers:
            if left <= 0:
                break
            cut.append(b[:left])
            left -= len(cut[-1])
        return os.writev(fd, cut)

    return writev


def _as_given(parts: list[bytes], kinds: list[int]) -> list[Any]:
    """The parts as bytes, views of bytes, bytearrays and views of bytearrays."""
    made: list[Any] = []
    for part, kind in zip(parts, kinds + [0] * len(parts), strict=False):
        made.append(
            [part, memoryview(part), bytearray(part), memoryview(bytearray(part))][kind % 4]
        )
    return made


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.binary(max_size=40), max_size=30),
    kinds=st.lists(st.integers(0, 3), max_size=30),
    limit=st.integers(1, 64),
    most=st.integers(1, 5),
    big=st.booleans(),
)
def test_the_pieces_are_written_counted_and_hashed_as_their_join(
    tmp_path_factory: pytest.TempPathFactory,
    parts: list[bytes],
    kinds: list[int],
    limit: int,
    most: int,
    big: bool,
) -> None:
    if big:  # past `BESIDE`: hashed on the lane
        parts = [*parts, os.urandom(filestate.BESIDE)]
    path = tmp_path_factory.mktemp("pieces") / "out"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        sink = outfile.Sink(fd)
        sink.write(b"head")  # after a plain write, in order
        with (
            mock.patch.object(outfile, "_WRITEV", _short(limit)),
            mock.patch.object(outfile, "_IOV_MAX", most),
        ):
            outfile.write_pieces(sink, _as_given(parts, kinds))
        want = b"head" + b"".join(parts)
        assert sink.size == len(want)
        assert sink.hash is not None and sink.hash.hexdigest() == hashlib.sha256(want).hexdigest()
    finally:
        os.close(fd)
    assert path.read_bytes() == want


def test_a_view_of_a_buffer_is_hashed_as_it_was_when_written(tmp_path: Path) -> None:
    """A bytearray may change once `write_pieces` returns: its bytes are copied for the lane."""
    data = bytearray(os.urandom(1 << 17))
    before = bytes(data)
    release = threading.Event()
    assert filestate.HASHING.submit(lambda _: release.wait(5), None, queue.SimpleQueue())
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        sink = outfile.Sink(fd)
        outfile.write_pieces(sink, [b"x" * 70000, memoryview(data)])
        data[:] = bytes(len(data))  # while its hash still waits behind the held lane
        release.set()
        assert sink.hash is not None
        assert sink.hash.hexdigest() == hashlib.sha256(b"x" * 70000 + before).hexdigest()
    finally:
        release.set()
        os.close(fd)


def test_a_stream_of_another_kind_gets_the_pieces_joined() -> None:
    out = io.BytesIO()
    outfile.write_pieces(out, [b"ab", memoryview(b"cd"), bytearray(b"e")])
    assert out.getvalue() == b"abcde"


def _names(fd: int, name: str) -> bool:
    """Is descriptor `fd` open on a file (a temporary one beside it, too) named after `name`?"""
    return name in os.readlink(f"/proc/self/fd/{fd}")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors by /proc")
def test_a_repaired_file_the_survey_kept_is_written_in_one_gathered_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    shutil.copyfile(PI, work)
    gathered: list[int] = []
    real = outfile._WRITEV
    assert real is not None

    def writev(fd: int, buffers: Sequence[Any]) -> int:
        if _names(fd, PI.name):
            gathered.append(len(buffers))
        return real(fd, buffers)

    monkeypatch.setattr(outfile, "_WRITEV", writev)
    joins: list[int] = []
    real_write = outfile.Sink.write

    def write(self: outfile.Sink, data: Any) -> int:
        if _names(self.fd, PI.name):  # not the journal's nor the manifest's writes
            joins.append(len(data))
        return real_write(self, data)

    monkeypatch.setattr(outfile.Sink, "write", write)
    (file,) = run([work], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out")).files
    assert file.status is FileStatus.REPAIRED and file.output is not None
    # before: the pieces were joined into one bytes object, then written
    assert joins == [] and len(gathered) == 1 and gathered[0] > 1
    # the same bytes and hashes as a repair whose survey kept nothing (runs kernel-copied)
    monkeypatch.setattr(Source, "survey_stream", lambda self, hashed=False: self.stream())
    (other,) = run([work], WriteMode.OUT, tmp_path / "o", out_dir=str(tmp_path / "o2")).files
    assert other.output is not None
    assert Path(other.output).read_bytes() == Path(file.output).read_bytes()
    after = [
        e["after"]
        for e in (*file.manifest_entries, *other.manifest_entries)
        if e.get("role") == "session"
    ]
    assert len(after) == 2 and after[0] == after[1]
