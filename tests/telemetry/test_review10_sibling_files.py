"""A session file whose reading depends on another file (review10): an OpenCode file-store
part is read with the role and model of its message file, beside it in `storage/message/`.
A part read before its message file was there is an error ("its role … is unknown"); the
state kept that result, and while the part's own stat stayed the same every later
`scan --incremental` repeated the stale error and `watch` never counted the part, though a
full scan now reads it (here: a leak)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.formats.support import FIXTURES
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.engine.telemetry.watch import Watcher

OPTIONS = ScanOptions()
MESSAGE = "message/ses_6a1f0c2b8ffeZ3p9QkR1mW4tYs/msg_95e0f3d71002bP4sW8nY1eLmTg.json"


@pytest.fixture
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OpenCode's file store of the fixtures, the leaking part's message file not yet
    written (held aside as `msg.json`); every entry settled once read."""
    monkeypatch.setattr(incremental, "RACY_NS", -(10**18))
    root = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", root)
    (root / MESSAGE).rename(tmp_path / "msg.json")
    return root


def test_a_part_read_before_its_message_file_is_read_again(storage: Path) -> None:
    state = str(storage.parent / "state.json")
    first, _ = scan_incremental([str(storage)], OPTIONS, state)
    assert any("its role (user or assistant) is unknown" in e.message for e in first.errors)

    (storage.parent / "msg.json").rename(storage / MESSAGE)
    report, _ = scan_incremental([str(storage)], OPTIONS, state)

    full = scan([str(storage)], OPTIONS, jobs=1)
    assert full.findings and not full.errors
    assert report.to_dict() == full.to_dict()


def test_watch_counts_a_part_once_its_message_file_is_there(storage: Path) -> None:
    watcher = Watcher([str(storage)], OPTIONS, str(storage.parent / "state.json"))
    watcher.run_pass(announce=False)
    assert sum(watcher.snapshot().leaking.values()) == 0

    (storage.parent / "msg.json").rename(storage / MESSAGE)

    assert watcher.run_pass() == 1
    assert sum(watcher.snapshot().leaking.values()) == 1
