"""What `repair --out` waits for (#26 item 4): a hash still being taken on the hashing lane is
waited for only where it is needed (the survey's by the manifest entry, the written bytes'
after their read back), never as the survey ends or before the read back starts; and each is
settled before its file's source closes or its write ends, asked for or not, so no more than
one file's bytes wait for the lane. The hashes are the same."""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from thinkfix.engine.repair.source import Source
from thinkfix.io import filestate, safewrite

#: How long a held lane waits for its release at most: the old code, which waited for the
#: held lane, goes on after it (and fails the test) instead of hanging.
HOLD_S = 5.0


@pytest.fixture
def held_lane() -> Iterator[tuple[threading.Event, threading.Event]]:
    """The hashing lane held by a job until `release` is set (or HOLD_S pass): each block
    handed to it meanwhile waits behind it; `done` is set once the job ends."""
    release, done = threading.Event(), threading.Event()

    def hold(_: object) -> None:
        release.wait(HOLD_S)
        done.set()

    assert filestate.HASHING.submit(hold, None, queue.SimpleQueue())
    try:
        yield release, done
    finally:
        release.set()
        done.wait(HOLD_S)


def _surveyed(folder: Path, data: bytes) -> Source:
    """A session of `data`, opened and surveyed with its hash taken (`hashed_through`)."""
    path = folder / "s.jsonl"
    path.write_bytes(data)
    source = Source.open(str(path))
    stream = source.survey_stream(hashed=True)
    assert stream.read(len(data)) == data
    source.hashed_through(stream)
    return source


def test_the_survey_ends_without_waiting_for_its_hash(
    tmp_path: Path, held_lane: tuple[threading.Event, threading.Event]
) -> None:
    release, done = held_lane
    data = os.urandom(2 << 20) + b"\n"  # past `BESIDE`: hashed on the lane
    source = _surveyed(tmp_path, data)
    try:
        assert source.whole == data
        # before: `hashed_through` waited for the block's hash, behind the held lane
        assert not done.is_set()
        release.set()
        want = hashlib.sha256(data).hexdigest()
        assert source.read_digest == want
        assert source.content_sha256 == source.sha256 == want
    finally:
        source.close()


def test_the_read_back_starts_while_the_written_bytes_still_hash(
    tmp_path: Path, held_lane: tuple[threading.Event, threading.Event]
) -> None:
    release, done = held_lane
    data = os.urandom(2 << 20)
    seen: list[bool] = []

    def read_back(fp: BinaryIO) -> None:
        seen.append(done.is_set())
        release.set()
        assert fp.read() == data

    written = safewrite.atomic_write_stream(
        str(tmp_path / "out.jsonl"),
        lambda out: out.write(data),
        read_back=read_back,
        exact_read_back=True,
    )
    # before: the written bytes' hash was waited for (behind the held lane) first
    assert seen == [False]
    assert written.size == len(data)
    assert written.sha256 == hashlib.sha256(data).hexdigest()
    assert (tmp_path / "out.jsonl").read_bytes() == data


def test_a_hash_that_fails_on_the_lane_still_refuses_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The written bytes' hash, waited for after the read back: what it raised is raised
    there, and nothing is published."""
    data = os.urandom(1 << 20)

    class Failing:
        def update(self, block: object) -> None:
            raise MemoryError("no memory for the hash")

        def hexdigest(self) -> str:
            return "0" * 64

    real = filestate.Digest.__init__

    def init(self: filestate.Digest) -> None:
        real(self)
        self._hash = Failing()

    monkeypatch.setattr(filestate.Digest, "__init__", init)
    target = tmp_path / "out.jsonl"
    with pytest.raises((MemoryError, filestate.VerifyError)):
        safewrite.atomic_write_stream(
            str(target),
            lambda out: out.write(data),
            read_back=lambda fp: None,
            exact_read_back=True,
        )
    assert not target.exists() and os.listdir(tmp_path) == []


def _release_soon(release: threading.Event) -> None:
    """Let the held lane go in a moment, from another thread (a wait for it then ends)."""
    timer = threading.Timer(0.2, release.set)
    timer.daemon = True
    timer.start()


def test_a_source_closes_once_its_hash_is_taken_asked_for_or_not(
    tmp_path: Path, held_lane: tuple[threading.Event, threading.Event]
) -> None:
    """No hash is left pending, its bytes held, when the next file starts: memory stays one
    file's however far the hashing lane falls behind."""
    release, done = held_lane
    source = _surveyed(tmp_path, os.urandom(1 << 20) + b"\n")
    try:
        assert not done.is_set()
        _release_soon(release)
    finally:
        source.close()
    # before: close returned at once, the block still queued behind the held lane
    assert done.is_set()


def test_a_refused_write_settles_the_hash_of_its_bytes(
    tmp_path: Path, held_lane: tuple[threading.Event, threading.Event]
) -> None:
    release, done = held_lane
    data = os.urandom(1 << 20)

    def refuse(fp: BinaryIO) -> None:
        _release_soon(release)
        raise ValueError("not the planned bytes")

    with pytest.raises(filestate.VerifyError, match="not the planned bytes"):
        safewrite.atomic_write_stream(
            str(tmp_path / "out.jsonl"),
            lambda out: out.write(data),
            read_back=refuse,
            exact_read_back=True,
        )
    # before: the refused write returned with its bytes still queued behind the held lane
    assert done.is_set()
    assert os.listdir(tmp_path) == []
