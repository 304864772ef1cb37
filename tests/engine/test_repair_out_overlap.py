"""What `repair --out` waits for (#26 item 4): a hash still being taken on the hashing lane is
waited for only where it is needed (the survey's by the manifest entry, the written bytes'
after their read back), never as the survey ends or before the read back starts. The hashes
are the same."""

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


def test_the_survey_ends_without_waiting_for_its_hash(
    tmp_path: Path, held_lane: tuple[threading.Event, threading.Event]
) -> None:
    release, done = held_lane
    data = os.urandom(2 << 20) + b"\n"  # past `BESIDE`: hashed on the lane
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    source = Source.open(str(path))
    try:
        stream = source.survey_stream(hashed=True)
        assert stream.read(len(data)) == data and source.whole == data
        source.hashed_through(stream)
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
