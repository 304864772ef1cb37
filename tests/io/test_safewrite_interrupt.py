"""An interrupt (Ctrl-C) at any line of an atomic write: what it leaves is the interrupt.

`atomic_write_stream` closes its temporary file's descriptor before the rename and again in
its `finally` when it is still open. Cleared after the close, a descriptor closed by the first
and interrupted before it was cleared was closed twice: the interrupt became a "Bad file
descriptor" error, or closed a descriptor another thread (the fsync lane, a digest) had just
been given the same number (found by journal5's any-line test, #26 item 4 review)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.engine.repair_helpers import temp_files
from tests.engine.test_journal_interrupt import interrupted_at
from thinkfix.io import livewriters, safewrite
from thinkfix.io.filestate import Stamp


def _write(target: Path) -> None:
    safewrite.atomic_write_stream(str(target), lambda fp: fp.write(b'{"a":1}\n'))


@pytest.mark.parametrize("line", range(1, 120))
def test_an_interrupt_at_any_line_of_an_atomic_write_is_the_interrupt(
    line: int, tmp_path: Path
) -> None:
    target = tmp_path / "session.jsonl"
    target.write_bytes(b"old\n")
    with contextlib.suppress(KeyboardInterrupt), interrupted_at(line, {safewrite.__file__}):
        _write(target)  # anything else raised (a second close's EBADF) fails the test
    assert target.read_bytes() in (b"old\n", b'{"a":1}\n')  # whole, one or the other


# --- the live writer's second name (#26 item 4 review, left open by journal5) ----------------
#
# Replacing the very file read (`watch` names it) holds its old inode under a second name
# (`livewriters.OldInode`: `.NAME.<host>.<pid>.<token>.thinkfix-tmp`), to put back what a
# live writer appended across the rename. An interrupt after the hold left that name (and an
# interrupt after the rename skipped the check for such a writer) until a later run in that
# folder swept it.

OLD, NEW = b'{"a":0}\n', b'{"a":1}\n'


def _write_over_the_file_read(target: Path) -> None:
    stamp = Stamp.of(os.stat(target))
    safewrite.atomic_write_stream(str(target), lambda fp: fp.write(NEW), watch=(str(target), stamp))


def _lines_of_a_watched_write(tmp_path: Path) -> int:
    target = tmp_path / "count.jsonl"
    target.write_bytes(OLD)
    with interrupted_at(0, {safewrite.__file__}) as seen:
        _write_over_the_file_read(target)
    target.unlink()
    return seen[0]


def _session_at(tmp_path: Path, line: int) -> Path:
    """A folder of its own for the run interrupted at `line`, holding a session of `OLD`."""
    folder = tmp_path / f"at-{line}"
    folder.mkdir()
    target = folder / "session.jsonl"
    target.write_bytes(OLD)
    return target


def test_an_interrupt_at_any_line_of_a_watched_write_leaves_no_second_name(
    tmp_path: Path,
) -> None:
    """Every line of `atomic_write_stream` replacing the file it read: the target holds its
    old bytes exactly or the new ones, and no temporary name of the write is left. Failed
    first at the lines between the hold and the end of the write."""
    lines = _lines_of_a_watched_write(tmp_path)
    assert lines > 60  # the hold, the rename and the settle were traced
    left: dict[int, list[str]] = {}
    for line in range(1, lines + 1):
        target = _session_at(tmp_path, line)
        folder = target.parent
        with contextlib.suppress(KeyboardInterrupt), interrupted_at(line, {safewrite.__file__}):
            _write_over_the_file_read(target)
        assert target.read_bytes() in (OLD, NEW)
        if temp_files(folder):
            left[line] = temp_files(folder)
    assert left == {}


def test_an_interrupt_just_after_the_rename_still_puts_back_a_live_writers_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer appends to the old inode as it is renamed over, and Ctrl-C lands as the
    rename returns: the writer's line is kept (the second name put back, as without the
    interrupt) and no temporary name is left. Failed first: the file held the new bytes,
    the writer's line only in the second name."""
    target = tmp_path / "session.jsonl"
    target.write_bytes(OLD)
    writer = os.open(target, os.O_WRONLY | os.O_APPEND)
    real_publish = safewrite._publish

    def raced(temp: str, into: str) -> None:
        os.write(writer, b'{"late":1}\n')
        os.utime(writer, ns=(1, 1))  # mtime moves whatever the clock's resolution
        real_publish(temp, into)
        raise KeyboardInterrupt

    monkeypatch.setattr(safewrite, "_publish", raced)
    try:
        with pytest.raises(KeyboardInterrupt):
            _write_over_the_file_read(target)
    finally:
        os.close(writer)
    assert target.read_bytes() == OLD + b'{"late":1}\n'
    assert temp_files(tmp_path) == []


def test_a_failed_rename_over_the_file_read_leaves_it_and_no_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename refused (EXDEV, EPERM): a WriteError, the file as it was, its old inode
    let go once (a second close could close a descriptor another thread was given)."""
    target = tmp_path / "session.jsonl"
    target.write_bytes(OLD)
    released: list[livewriters.OldInode] = []
    real_release = livewriters.OldInode.release

    def refuse(temp: str, into: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    def release(self: livewriters.OldInode) -> None:
        released.append(self)
        real_release(self)

    monkeypatch.setattr(safewrite, "_publish", refuse)
    monkeypatch.setattr(livewriters.OldInode, "release", release)
    with pytest.raises(safewrite.WriteError, match="cannot rename into place"):
        _write_over_the_file_read(target)
    assert target.read_bytes() == OLD
    assert temp_files(tmp_path) == []
    assert len(released) == 1


def test_an_interrupt_at_any_line_of_the_hold_on_the_old_inode_leaves_no_name_or_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`OldInode.hold` links the file read to a second name before the write holds it: an
    interrupt after the link, before the hold returned, left that name (and its descriptor)
    with nobody to remove them. Every line of the hold is interrupted in turn (the scan of
    /proc for live writers, thousands of lines of its own, answered "none"). Failed first
    at the three lines after the link."""
    monkeypatch.setattr(livewriters, "open_writers", lambda real: [])
    target = tmp_path / "count.jsonl"
    target.write_bytes(OLD)
    with interrupted_at(0, {livewriters.__file__}) as seen:
        livewriters.OldInode.hold(str(target), str(target), Stamp.of(os.stat(target))).release()
    lines = seen[0]
    assert lines > 5
    fds = set(os.listdir("/proc/self/fd"))
    left: dict[int, list[str]] = {}
    for line in range(1, lines + 1):
        target = _session_at(tmp_path, line)
        folder = target.parent
        stamp = Stamp.of(os.stat(target))
        held = None
        with contextlib.suppress(KeyboardInterrupt), interrupted_at(line, {livewriters.__file__}):
            held = livewriters.OldInode.hold(str(target), str(target), stamp)
        if held is not None:  # not interrupted: the caller's to let go of
            held.release()
        if temp_files(folder):
            left[line] = temp_files(folder)
        assert set(os.listdir("/proc/self/fd")) == fds, f"a descriptor left at line {line}"
        assert target.read_bytes() == OLD
    assert left == {}
