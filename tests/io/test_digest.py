"""`filestate.Digest`: a SHA-256 hashed beside the caller (#26 item 4). `--out` hashed every
byte twice in its own thread (the original as the survey reads it, the output as it is read
back): now one thread a process hashes each block while the caller goes on, and the hash is
the same whatever the blocks, their types, or what the caller does with its buffer after."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.spies import first_args
from thinkfix.engine.repair.source import Source
from thinkfix.io import filestate, safewrite
from thinkfix.io.filestate import Digest, Lane

_SHA256 = hashlib.sha256
_kinds = st.sampled_from([bytes, bytearray, memoryview])


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(st.tuples(st.binary(max_size=300), _kinds), max_size=12),
    beside=st.sampled_from([1, 7, 64, 1 << 16]),
)
def test_the_hash_is_hashlibs_whatever_the_blocks(
    chunks: list[tuple[bytes, type]], beside: int
) -> None:
    old = filestate.BESIDE
    filestate.BESIDE = beside  # small: most blocks go to the thread
    try:
        digest = Digest()
        for data, kind in chunks:
            digest.update(kind(data))
        assert digest.hexdigest() == hashlib.sha256(b"".join(d for d, _ in chunks)).hexdigest()
    finally:
        filestate.BESIDE = old


@settings(max_examples=30, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=200), min_size=1, max_size=8))
def test_a_buffer_reused_after_update_does_not_change_the_hash(blocks: list[bytes]) -> None:
    old = filestate.BESIDE
    filestate.BESIDE = 1
    try:
        digest, buffer = Digest(), bytearray(256)
        for block in blocks:
            buffer[: len(block)] = block
            digest.update(memoryview(buffer)[: len(block)])
            buffer[:] = b"\xff" * len(buffer)  # the caller reads its next block into it
        assert digest.hexdigest() == hashlib.sha256(b"".join(blocks)).hexdigest()
    finally:
        filestate.BESIDE = old


class _Recording:
    """hashlib.sha256 that notes the thread of each large update."""

    threads: ClassVar[list[int]] = []

    def __init__(self) -> None:
        self.inner = _SHA256()

    def update(self, data: Any) -> None:
        if len(data) >= 4096:
            _Recording.threads.append(threading.get_ident())
        self.inner.update(data)

    def hexdigest(self) -> str:
        return self.inner.hexdigest()


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    _Recording.threads = []
    monkeypatch.setattr(hashlib, "sha256", _Recording)
    return _Recording.threads


def test_the_surveys_hash_is_taken_beside_the_reader(tmp_path: Path, recording: list[int]) -> None:
    data = os.urandom(3 << 20) + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    source = Source.open(str(path))
    try:
        stream = source.stream(hashed=True)
        while stream.read(1 << 20):
            pass
        source.hashed_through(stream)
        assert source.content_sha256 == _SHA256(data).hexdigest()
    finally:
        source.close()
    # before: every block was hashed by the reading thread itself
    assert recording and threading.get_ident() not in recording


def test_the_read_back_of_bytes_copied_unseen_is_hashed_beside_the_compare(
    tmp_path: Path, recording: list[int]
) -> None:
    data = os.urandom(2 << 20)
    original = tmp_path / "orig"
    original.write_bytes(data)
    fd = os.open(original, os.O_RDONLY)
    try:

        def produce(out: Any) -> None:
            safewrite.copy_into(out, fd, 0, len(data), str(original))

        def read_back(fp: Any) -> None:  # in blocks, as `verify` compares them
            assert b"".join(iter(lambda: fp.read(1 << 20), b"")) == data

        written = safewrite.atomic_write_stream(
            str(tmp_path / "out"), produce, read_back=read_back, exact_read_back=True
        )
    finally:
        os.close(fd)
    assert written.sha256 == _SHA256(data).hexdigest()
    assert recording and threading.get_ident() not in recording


def test_where_no_thread_can_be_started_the_block_is_hashed_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(filestate, "HASHING", Lane())  # a lane whose thread is not started
    monkeypatch.setattr(threading.Thread, "start", refuse)
    data = os.urandom(1 << 18)
    digest = Digest()
    digest.update(data)
    digest.update(bytearray(data))
    assert digest.hexdigest() == hashlib.sha256(data + data).hexdigest()


def test_an_error_in_the_hashing_thread_reaches_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken(_Recording):
        def update(self, data: Any) -> None:
            if threading.current_thread() is not threading.main_thread():
                raise ValueError("broken hash")
            super().update(data)

    monkeypatch.setattr(hashlib, "sha256", Broken)
    digest = Digest()
    digest.update(bytes(1 << 17))
    with pytest.raises(ValueError, match="broken hash"):
        digest.hexdigest()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_hashes_with_a_thread_of_its_own() -> None:
    data = os.urandom(1 << 18)
    warm = Digest()
    warm.update(data)  # the parent's hashing thread runs
    assert warm.hexdigest() == _SHA256(data).hexdigest()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            digest = Digest()
            digest.update(data)
            os.write(write, digest.hexdigest().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fp:
        got = fp.read().decode()
    os.waitpid(pid, 0)
    assert got == _SHA256(data).hexdigest()


def test_the_blocks_of_many_digests_share_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filestate, "HASHING", Lane())
    started = first_args(monkeypatch, threading.Thread, "start")  # each thread started
    data = os.urandom(1 << 17)
    for _ in range(4):
        digest = Digest()
        digest.update(data)
        digest.update(data)
        assert digest.hexdigest() == _SHA256(data + data).hexdigest()
    assert len(started) == 1
