"""`scan --incremental --since/--until` over a session whose messages have no time of their
own (review10): such a message is judged by its file's modification time, which every append
moves. The committed part was judged by the old time and reused: a session written before
`--since` and appended to since (so a full scan now counts every message, its leaks too)
stayed "No leaked reasoning", exit 0; and one appended past `--until` kept findings a full
scan no longer reports."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.formats.support import FIXTURES
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry.incremental import scan_incremental

CHAT = FIXTURES / "openai-chat" / "openrouter-chat.jsonl"  # no message has a time of its own
JUNE_2025 = datetime(2025, 6, 1, tzinfo=timezone.utc).timestamp()
NEW_YEAR = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("window", "written"),
    [
        (ScanOptions(since=NEW_YEAR), JUNE_2025),  # before the window, appended inside it
        (ScanOptions(until=NEW_YEAR), JUNE_2025),  # inside the window, appended past it
    ],
    ids=["since", "until"],
)
def test_an_append_moves_the_time_of_every_undated_message(
    tmp_path: Path, window: ScanOptions, written: float
) -> None:
    session = tmp_path / "c.jsonl"
    shutil.copyfile(CHAT, session)
    os.utime(session, (written, written))
    state = str(tmp_path / "state.json")
    first, _ = scan_incremental([str(session)], window, state)
    assert first.to_dict() == scan([str(session)], window, jobs=1).to_dict()

    with open(session, "ab") as fp:  # the mtime is now: 2026 or later
        fp.write(b'{"role":"user","content":"thanks"}\n')
    report, _ = scan_incremental([str(session)], window, state)

    full = scan([str(session)], window, jobs=1)
    assert report.to_dict() == full.to_dict()
    assert report.exit_code() == full.exit_code()
