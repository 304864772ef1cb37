"""Property (review10): any one byte changed anywhere in what an incremental scan already read,
the file's size and mtime put back as they were, whether or not its entry is settled (read
unread on an unchanged stat), and with or without lines appended since, gives the report and
exit code a full scan gives. The ctime a write moves and the hash of the committed part are
what catch it (#21 item 2); this holds them to every position and every byte value."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.telemetry.test_rewrites import clean, full_scan, line, restore_mtime_until_ctime_moves
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental

OPTIONS = ScanOptions()
SESSION = clean(0, 6) + line(6, leak=False)[:30]  # a partial last line: a record being written


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    at=st.integers(0, len(SESSION) - 31),
    byte=st.integers(0, 255),
    settled=st.booleans(),
    appended=st.booleans(),
)
def test_any_byte_changed_in_the_scanned_part_is_seen(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    at: int,
    byte: int,
    settled: bool,
    appended: bool,
) -> None:
    if SESSION[at] == byte:
        byte ^= 0xFF
    folder = tmp_path_factory.mktemp("prefix")
    path = folder / "s.jsonl"
    path.write_bytes(SESSION)
    state = str(folder / "state.json")
    with monkeypatch.context() as m:
        if settled:
            m.setattr(incremental, "RACY_NS", -(10**18))  # every entry settled once read
        scan_incremental([str(path)], OPTIONS, state)
    before = path.stat()
    with open(path, "r+b") as fp:
        fp.seek(at)
        fp.write(bytes([byte]))
    if appended:
        with open(path, "ab") as fp:
            fp.write(line(6, leak=True)[30:] + line(7, leak=False))
    else:
        restore_mtime_until_ctime_moves(path, before.st_mtime_ns, before.st_ctime_ns)
        assert path.stat().st_size == before.st_size

    report, _ = scan_incremental([str(path)], OPTIONS, state)

    assert report.to_dict() == full_scan(path)
    os.remove(path)
