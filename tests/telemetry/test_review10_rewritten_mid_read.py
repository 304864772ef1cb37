"""A session rewritten shorter while `scan --incremental` reads it (review10). A full scan
says so (`task.rewritten`: `changed while it was being read`, exit 2; review8's finding 5),
but the incremental reader reads its own byte ranges and never compared sizes: a file
compacted after its first block was read counted as that block, clean, exit 0, with the
leak at its old end unread; and a file rewritten while its partial last line was read kept
the counts of the bytes the rewrite took away."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.telemetry import sessions
from tests.telemetry.test_cli_incremental import OLD_NS
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.io.errors import ErrorKind

OPTIONS = ScanOptions()


def _rewrite_on_first_read(
    monkeypatch: pytest.MonkeyPatch, name: str, path: Path, data: bytes
) -> list[int]:
    """Make `incremental.<name>` (a byte range class) rewrite `path` in place to `data` (the
    same inode, truncated and written) just after its first read hands out bytes."""
    base = getattr(incremental, name)
    done: list[int] = []

    class Rewriting(base):  # type: ignore[valid-type,misc]
        def readinto(self, buffer: Any) -> int:
            n: int = super().readinto(buffer)
            if n and not done:
                with open(path, "r+b") as fp:
                    fp.truncate(0)
                    fp.write(data)
                done.append(n)
            return n

    monkeypatch.setattr(incremental, name, Rewriting)
    return done


def _line(n: int, size: int = 512) -> bytes:
    """A clean Claude Code line of exactly `size` bytes: 128 of them fill a 64 KB block, so
    a block read ends on a line's end, as a rewrite's timing may have it."""
    short = sessions.claude_code(n, leak=False, text="")
    return sessions.claude_code(n, leak=False, text="x" * (size - len(short)))


def test_a_file_compacted_after_its_first_block_is_changed_not_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    clean = b"".join(_line(i) for i in range(3 * 128))
    path.write_bytes(clean + sessions.claude_code(999, leak=True))
    assert len(_line(0)) == 512
    done = _rewrite_on_first_read(monkeypatch, "HashedRange", path, clean[:700])

    report, _ = scan_incremental([str(path)], OPTIONS, str(tmp_path / "state.json"))

    assert done
    (error,) = report.errors
    assert error.kind is ErrorKind.CHANGED
    assert "changed while it was being read" in error.message
    assert report.exit_code() == ExitCode.ERROR


def test_a_file_rewritten_while_its_last_line_is_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(sessions.claude_code(i, leak=False) for i in range(20)))
    os.utime(path, ns=(OLD_NS, OLD_NS))
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    with open(path, "ab") as fp:  # a record being written: the tail is read, not committed
        fp.write(sessions.claude_code(20, leak=False)[:50])
    compacted = sessions.claude_code(0, leak=True)
    done = _rewrite_on_first_read(monkeypatch, "ByteRange", path, compacted)

    report, stats = scan_incremental([str(path)], OPTIONS, state)

    assert done
    assert stats.full == 1  # not "appended": the committed part it proved is gone
    assert report.summary.leaking_messages == 1  # what the file holds now
    assert report.exit_code() == ExitCode.FINDINGS
