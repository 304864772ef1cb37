"""A SQLite store written in WAL mode while `scan --incremental` (or `watch`) remembers it
(review10). A runtime in WAL mode (OpenCode, Crush, Goose) writes only its `-wal` until a
checkpoint (1,000 pages, or its last connection closing), so the store's own file keeps its
size, mtime and ctime while new messages arrive. The state trusted that stat: once the
entry was settled, the store was "unchanged", read not at all, and a leak written since was
never seen (exit 0 where a full scan exits 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.formats import opencode_db
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.engine.telemetry.watch import Watcher

OPTIONS = ScanOptions()
USERS = [m for m in opencode_db.LEAKY if m[1] == "user"][:1]


@pytest.mark.parametrize("end", ["crash", "hold"])
def test_rows_written_to_the_wal_since_the_last_run_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str
) -> None:
    monkeypatch.setattr(incremental, "RACY_NS", -(10**18))  # every entry settled once read
    store = tmp_path / "opencode.db"
    opencode_db.build(store, USERS, wal=True)
    state = str(tmp_path / "state.json")
    first, _ = scan_incremental([str(store)], OPTIONS, state)
    assert first.exit_code() == ExitCode.CLEAN
    before = store.stat()

    with opencode_db.runtime(store, opencode_db.LEAKY[1:], end=end):
        after = store.stat()
        assert (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (
            before.st_size,
            before.st_mtime_ns,
            before.st_ctime_ns,
        )  # the new rows live in the -wal alone
        report, stats = scan_incremental([str(store)], OPTIONS, state)
        full = scan([str(store)], OPTIONS, jobs=1)

    assert full.exit_code() == ExitCode.FINDINGS
    assert stats.unchanged == 0
    assert report.to_dict() == full.to_dict()


def test_a_store_without_a_wal_is_still_reused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incremental, "RACY_NS", -(10**18))
    store = tmp_path / "opencode.db"
    opencode_db.build(store, opencode_db.LEAKY, wal=True)
    state = str(tmp_path / "state.json")
    scan_incremental([str(store)], OPTIONS, state)
    report, stats = scan_incremental([str(store)], OPTIONS, state)
    assert (stats.unchanged, stats.bytes_read) == (1, 0)
    assert report.exit_code() == ExitCode.FINDINGS


def test_watch_reads_rows_written_to_the_wal_since_its_last_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incremental, "RACY_NS", -(10**18))
    store = tmp_path / "opencode.db"
    opencode_db.build(store, USERS, wal=True)
    found: list[int] = []
    watcher = Watcher([str(tmp_path)], OPTIONS, str(tmp_path / "state.json"))
    watcher.on_finding = lambda f: found.append(f.line)
    watcher.run_pass(announce=False)
    assert sum(watcher.snapshot().leaking.values()) == 0

    with opencode_db.runtime(store, opencode_db.LEAKY[1:], end="hold"):
        new = watcher.run_pass()

    assert new == 2
    assert sum(watcher.snapshot().leaking.values()) == 2
