"""A written file's fsync runs beside its read back, and the rename still waits for it (#26
item 4). `--out` of the dense corpus spent ~0.17 s of wall time per 100 MB in the outputs'
fsyncs (~1.5 ms a 1 MB file on this VM) and as long reading them back, one after the other;
now they overlap. What a crash may leave is unchanged: the rename comes only once the bytes
(and the mode) are on disk. Order of events, never time."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.spies import first_args
from thinkfix.io import safewrite
from thinkfix.io.filestate import Lane, VerifyError


def _events(monkeypatch: pytest.MonkeyPatch, read_back_seen: threading.Event) -> list[str]:
    """Record fsyncs and renames in order; an fsync of the temporary file waits (a while at
    most) for the read back to start, so it is seen only if the two overlap."""
    events: list[str] = []
    real_fsync, real_publish = os.fsync, safewrite._publish

    def fsync(fd: int) -> None:
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".a."):
            overlapped = read_back_seen.wait(timeout=5)
            events.append(f"fsync file, read back under way: {overlapped}")
        else:
            events.append("fsync folder")
        real_fsync(fd)
        events.append("fsync returned")

    def publish(temp: str, target: str) -> None:
        events.append("rename")
        real_publish(temp, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(safewrite, "_publish", publish)
    return events


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors by /proc")
def test_the_fsync_overlaps_the_read_back_and_the_rename_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = threading.Event()
    events = _events(monkeypatch, seen)

    def read_back(fp: BinaryIO) -> None:
        seen.set()
        assert fp.read() == b"new bytes"

    target = tmp_path / "a"
    target.write_bytes(b"old")
    written = safewrite.atomic_write_stream(
        str(target), lambda out: out.write(b"new bytes"), read_back=read_back, mode=0o640
    )
    assert target.read_bytes() == b"new bytes" and written.size == 9
    assert events[:3] == [
        "fsync file, read back under way: True",  # before: the fsync, then the read back
        "fsync returned",
        "rename",
    ], events
    assert events[3:] == ["fsync folder", "fsync returned"]
    assert os.stat(target).st_mode & 0o777 == 0o640


def test_a_failed_fsync_still_refuses_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fsync's error reaches the caller from its thread; the target is left as it was
    and no temporary file stays."""

    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    target = tmp_path / "a"
    target.write_bytes(b"old")
    with pytest.raises(OSError, match="Input/output error"):
        safewrite.atomic_write(str(target), b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_a_refused_read_back_waits_for_the_fsync_before_the_descriptor_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read back that refuses the bytes raises at once, but the descriptor the fsync is
    using is closed only once the fsync is done (a closed number may name another file)."""
    closing: list[str] = []
    release = threading.Event()
    real_fsync, real_close = os.fsync, os.close

    def slow_fsync(fd: int) -> None:
        release.wait(timeout=5)
        closing.append("fsync done")
        real_fsync(fd)

    def close(fd: int) -> None:
        closing.append("close")
        real_close(fd)

    def refuse(fp: BinaryIO) -> None:
        release.set()
        raise ValueError("not the planned bytes")

    monkeypatch.setattr(os, "fsync", slow_fsync)
    monkeypatch.setattr(os, "close", close)
    target = tmp_path / "a"
    with pytest.raises(VerifyError):
        safewrite.atomic_write_stream(str(target), lambda out: out.write(b"x"), read_back=refuse)
    assert closing[:2] == ["fsync done", "close"], closing
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_without_a_thread_to_be_had_the_file_is_synced_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process out of threads still writes: the fsync runs before the read back, as it did."""
    synced: list[int] = []
    real = os.fsync

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(safewrite, "SYNCING", Lane())  # a lane whose thread is not started
    monkeypatch.setattr(threading.Thread, "start", refuse)
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    target = tmp_path / "a"
    safewrite.atomic_write(str(target), b"new")
    assert target.read_bytes() == b"new" and len(synced) == 2  # the file, then its folder


def test_the_fsyncs_of_many_files_share_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread was started (and joined) per file written: ~0.1 ms of CPU and up to ~0.5 ms
    of wall time each, for a 1 MB file whose fsync takes ~1.5 ms (#26 item 4)."""
    monkeypatch.setattr(safewrite, "SYNCING", Lane())
    started = first_args(monkeypatch, threading.Thread, "start")  # each thread started
    for i in range(5):
        safewrite.atomic_write(str(tmp_path / f"f{i}"), b"bytes %d" % i)
    assert [(tmp_path / f"f{i}").read_bytes() for i in range(5)] == [
        b"bytes %d" % i for i in range(5)
    ]
    assert len(started) == 1
