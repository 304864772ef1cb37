"""An interrupt (Ctrl-C) at any line of an atomic write: what it leaves is the interrupt.

`atomic_write_stream` closes its temporary file's descriptor before the rename and again in
its `finally` when it is still open. Cleared after the close, a descriptor closed by the first
and interrupted before it was cleared was closed twice: the interrupt became a "Bad file
descriptor" error, or closed a descriptor another thread (the fsync lane, a digest) had just
been given the same number (found by journal5's any-line test, #26 item 4 review)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.engine.test_journal_interrupt import interrupted_at
from thinkfix.io import safewrite


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
