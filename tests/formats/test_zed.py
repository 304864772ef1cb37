"""Zed's agent thread store: read, scanned, repaired into a Thinking item and undone exactly."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import run
from tests.formats import zed_db
from tests.formats.support import content
from tests.processes import held
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry, sqlite_store
from thinkfix.formats.zed import Zed, decode_blob


def _store(tmp_path: Path, **kw: Any) -> Path:
    return zed_db.build(
        tmp_path / "threads.db", [(zed_db.THREAD, zed_db.LEAKY), (zed_db.OTHER, zed_db.CLEAN)], **kw
    )


def _dump(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return list(db.iterdump())


def _thread(path: Path, tid: str = zed_db.THREAD) -> Any:
    with closing(sqlite3.connect(path)) as db:
        return decode_blob(
            *db.execute("SELECT data_type, data FROM threads WHERE id = ?", (tid,)).fetchone()
        )


def test_zed_store_is_detected_by_its_table(tmp_path: Path) -> None:
    db = _store(tmp_path)
    assert registry.detect_file(str(db)).id == "zed"
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as con:
        con.execute("CREATE TABLE threads (id TEXT, body TEXT)")
    assert Zed().detect(other.read_bytes()[:100], str(other)) == 0.0


@pytest.mark.parametrize("plain", [False, True])
def test_zed_scan_counts_every_agent_message_and_finds_only_the_leak(
    tmp_path: Path, plain: bool
) -> None:
    db = _store(tmp_path, plain=plain)
    before = db.read_bytes()
    result = scan([str(db)], jobs=1)
    assert not result.errors and result.summary.assistant_messages == 3
    assert [f.json_path for f in result.findings] == ["thread.messages[1].Agent.content[1].Text"]
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "threads.db"
    ]


def test_zed_repair_puts_a_thinking_item_before_the_text_and_undo_restores_the_blob(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path)
    original = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    assert not scan([str(db)], jobs=1).findings
    content = _thread(db)["messages"][1]["Agent"]["content"]
    assert content[:3] == [
        {"Thinking": {"text": "Check the fixture first.", "signature": "c2ln"}},
        {"Thinking": {"text": "The rounding mode differs on CI.", "signature": None}},
        {"Text": "The total rounds half-even on CI."},
    ]
    assert _thread(db, zed_db.OTHER) == zed_db.CLEAN
    with closing(sqlite3.connect(db)) as con:
        assert con.execute(
            "SELECT data_type FROM threads WHERE id = ?", (zed_db.THREAD,)
        ).fetchone() == ("zstd",)
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _dump(db) == original


def test_zed_store_in_a_folder_is_found_by_a_folder_scan(tmp_path: Path) -> None:
    """DEFAULT_INCLUDE names threads.db: a folder scan (and --discover) reads it."""
    folder = tmp_path / "zed" / "threads"
    folder.mkdir(parents=True)
    _store(folder)
    (folder / "other.db").write_bytes((folder / "threads.db").read_bytes())  # not the name
    result = scan([str(tmp_path)], ScanOptions(), jobs=1)
    assert not result.errors
    assert [f.path for f in result.findings] == [str(folder / "threads.db")]


def test_zed_data_folders_follow_zeds_paths(tmp_path: Path) -> None:
    env = {"FLATPAK_XDG_DATA_HOME": "/flat", "XDG_DATA_HOME": "/xdg"}
    found = Zed().default_locations(env, tmp_path)
    assert found[:3] == [
        Path("/flat/zed/threads"),
        Path("/xdg/zed/threads"),
        tmp_path / ".local" / "share" / "zed" / "threads",
    ]
    assert (
        len(found) == 3
    )  # macOS's and Windows' folders on theirs (tests/formats/test_locations.py)


def test_zed_repair_out_writes_a_repaired_copy_and_leaves_the_store(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    db = _store(tmp_path / "in")
    before = db.read_bytes()
    result = run([db], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    out = tmp_path / "out" / "threads.db"
    assert db.read_bytes() == before
    assert not scan([str(out)], jobs=1).findings
    assert _thread(out, zed_db.OTHER) == zed_db.CLEAN
    got, want = content(out), content(db)
    assert got["schema"] == want["schema"] and got["tables"] != want["tables"]
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert not out.exists() and db.read_bytes() == before


def test_zed_repair_out_to_a_url_publishes_the_repaired_copy(tmp_path: Path) -> None:
    """SQLite writes only local files: the copy is repaired in a private folder, then
    published at the URL; undo removes it while it holds the bytes written."""
    pytest.importorskip("fsspec")
    src = tmp_path / "in"
    src.mkdir()
    db = _store(src)
    result = run([db], WriteMode.OUT, tmp_path, out_dir=(tmp_path / "out").as_uri())
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    out = tmp_path / "out" / "threads.db"
    assert not scan([str(out)], jobs=1).findings
    assert _thread(out)["messages"][1]["Agent"]["content"][1]["Thinking"]["signature"] is None
    assert not [p for p in tmp_path.rglob("*") if "thinkfix-store-" in str(p)]
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert not out.exists()


def test_zed_repair_refuses_a_store_with_a_trigger_on_threads(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TABLE log (n INTEGER)")
        con.execute(
            "CREATE TRIGGER t AFTER UPDATE ON threads BEGIN INSERT INTO log VALUES (1); END"
        )
        con.commit()
    before = content(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.FAILED]
    assert "triggers" in result.all_errors[0].message
    assert content(db) == before


#: Zed holding its store: an exclusive lock until stdin closes.
HOLD = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "db.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()"
)


def test_zed_store_locked_by_zed_is_in_use_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each read waits up to LOCK_WAIT for a lock to go (a commit's lasts milliseconds); this
    # holder keeps its lock to the end, so those waits (about ten) only cost time, as in goose's.
    monkeypatch.setattr(sqlite_store, "LOCK_WAIT", 0.0)
    db = _store(tmp_path)
    before = db.read_bytes()
    with held(HOLD, str(db), ready="held"):
        scanned = scan([str(db)], ScanOptions(), jobs=1)
        assert "in use" in " ".join(e.message for e in scanned.errors)
        result = run([db], WriteMode.IN_PLACE, tmp_path)
        assert [f.status for f in result.files] == [FileStatus.SKIPPED]
    assert db.read_bytes() == before
