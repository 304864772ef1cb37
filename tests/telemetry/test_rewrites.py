"""A file rewritten in place (same inode) is read again, however its size and times were
left (#21 item 2): the part already scanned is verified whole before it is trusted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.telemetry import sessions
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.task import scan_file
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.engine.telemetry.watch import Watcher, counts

OPTIONS = ScanOptions()
OLD_NS = 1_600_000_000_000_000_000
WIDTH = 60
CLEAN_TEXT = "Here is the list".ljust(WIDTH, ".")
LEAK_TEXT = "<think>plan</think>Here is the list".ljust(WIDTH, ".")


def line(n: int, *, leak: bool) -> bytes:
    """A Claude Code line whose leaking and clean versions have the same length."""
    return sessions.claude_code(n, leak=leak, text=LEAK_TEXT if leak else CLEAN_TEXT)


def clean(start: int, count: int) -> bytes:
    return b"".join(line(i, leak=False) for i in range(start, start + count))


def overwrite_first_line(path: Path) -> None:
    """The first line replaced by a leaking one of the same length, in place."""
    with open(path, "r+b") as fp:
        fp.write(line(0, leak=True))


def file_result(path: Path) -> ScannedFile:
    """A full scan's result for one file."""
    (item,) = walk([str(path)], OPTIONS.inputs)
    return scan_file(item, OPTIONS)


def full_scan(path: Path) -> dict[str, object]:
    return scan([str(path)], OPTIONS, jobs=1).to_dict()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """40 clean records (about 24 KB), last modified long ago."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(clean(0, 40))
    os.utime(path, ns=(OLD_NS, OLD_NS))
    assert path.stat().st_size > 5 * 4096
    return path


def test_rewrite_in_place_that_grows_is_read_again(session: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state.json")
    first, _ = scan_incremental([str(session)], OPTIONS, state)
    assert first.exit_code() == 0
    ino = session.stat().st_ino
    overwrite_first_line(session)  # a change 24 KB before the old end ...
    with open(session, "ab") as fp:  # ... and the file grows
        fp.write(clean(40, 2))
    assert session.stat().st_ino == ino
    report, _ = scan_incremental([str(session)], OPTIONS, state)
    assert report.to_dict() == full_scan(session)
    assert report.exit_code() == 1


def test_same_size_rewrite_with_mtime_put_back_is_read_again(session: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state.json")
    scan_incremental([str(session)], OPTIONS, state)
    before = session.stat()
    overwrite_first_line(session)
    os.utime(session, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = session.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    report, _ = scan_incremental([str(session)], OPTIONS, state)
    assert report.to_dict() == full_scan(session)
    assert report.exit_code() == 1


def restore_mtime_until_ctime_moves(path: Path, mtime_ns: int, ctime_ns: int) -> None:
    """Put the mtime back; the status-change time is the kernel's, and moves on with its clock
    (repeated until it has: a coarse clock may still be in the tick of the last change)."""
    os.utime(path, ns=(mtime_ns, mtime_ns))
    while path.stat().st_ctime_ns == ctime_ns:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def test_settled_file_is_trusted_by_its_status_change_time(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once an entry is settled, an unchanged file is not read at all, and a same-size
    rewrite with its mtime put back is still caught: it moved the ctime, which no one can
    put back."""
    monkeypatch.setattr(incremental, "RACY_NS", 0)  # every entry settled once read
    state = str(tmp_path / "state.json")
    scan_incremental([str(session)], OPTIONS, state)
    report, stats = scan_incremental([str(session)], OPTIONS, state)
    assert (stats.unchanged, stats.bytes_read) == (1, 0)
    st = session.stat()
    overwrite_first_line(session)
    restore_mtime_until_ctime_moves(session, st.st_mtime_ns, st.st_ctime_ns)
    report, stats = scan_incremental([str(session)], OPTIONS, state)
    assert stats.full == 1
    assert report.to_dict() == full_scan(session) and report.exit_code() == 1


def test_status_change_alone_costs_a_hash_not_a_parse(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incremental, "RACY_NS", 0)
    state = str(tmp_path / "state.json")
    first, _ = scan_incremental([str(session)], OPTIONS, state)
    st = session.stat()
    os.chmod(session, 0o600)  # the ctime moves, the bytes do not
    restore_mtime_until_ctime_moves(session, st.st_mtime_ns, st.st_ctime_ns)
    report, stats = scan_incremental([str(session)], OPTIONS, state)
    assert (stats.unchanged, stats.bytes_parsed) == (1, 0)
    assert stats.bytes_read == st.st_size  # the committed part, hashed
    assert report.to_dict() == first.to_dict()


def test_appended_bytes_are_parsed_after_the_prefix_is_verified(
    session: Path, tmp_path: Path
) -> None:
    state = str(tmp_path / "state.json")
    scan_incremental([str(session)], OPTIONS, state)
    old = session.stat().st_size
    extra = b"".join(line(i, leak=i % 2 == 0) for i in range(40, 44))
    with open(session, "ab") as fp:
        fp.write(extra)
    report, stats = scan_incremental([str(session)], OPTIONS, state)
    assert stats.appended == 1
    assert stats.bytes_parsed == len(extra)
    assert stats.bytes_read == old + len(extra)
    assert report.to_dict() == full_scan(session)


def test_watch_counts_a_rewrite_in_place_that_grows(session: Path, tmp_path: Path) -> None:
    seen: list[int] = []
    w = Watcher(
        [str(session)], OPTIONS, str(tmp_path / "w.json"), on_finding=lambda f: seen.append(f.line)
    )
    w.run_pass()
    overwrite_first_line(session)
    with open(session, "ab") as fp:
        fp.write(clean(40, 2))
    w.run_pass()
    full = scan([str(session)], OPTIONS, jobs=1)
    assert seen == [1]
    assert counts(w.state.files.entries[str(session)].committed) == counts(file_result(session))
    assert sum(w.snapshot().leaking.values()) == full.summary.leaking_messages == 1


def test_watch_counts_a_same_size_rewrite_with_mtime_put_back(
    session: Path, tmp_path: Path
) -> None:
    w = Watcher([str(session)], OPTIONS, str(tmp_path / "w.json"))
    w.run_pass()
    st = session.stat()
    overwrite_first_line(session)
    os.utime(session, ns=(st.st_atime_ns, st.st_mtime_ns))
    w.run_pass()
    assert sum(w.snapshot().leaking.values()) == 1
