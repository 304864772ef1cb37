"""Goose (#24 item 3): the SQLite store sessions.db and the legacy sessions/<id>.jsonl."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from tests.formats import goose_db
from tests.formats.support import FIXTURES, REPO
from tests.processes import held, run_python
from thinkfix.engine.ledger import journal, restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry, sqlite_store
from thinkfix.formats.goose import Goose, apply_database
from thinkfix.formats.goose_items import is_store_path
from thinkfix.formats.records import Site
from thinkfix.formats.repairs import Repair
from thinkfix.formats.sqlite_store import RowChanges

LEGACY = FIXTURES / "goose" / "sessions" / "20250310_091530.jsonl"
LEAKING_ROWS = {"2", "4", "5"}


def _store(tmp_path: Path, **kw: Any) -> Path:
    folder = tmp_path / "goose" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    return goose_db.build(folder / "sessions.db", **kw)


def _content(path: Path, row: int) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(path)) as db:
        (raw,) = db.execute("SELECT content_json FROM messages WHERE id = ?", (row,)).fetchone()
    value: list[dict[str, Any]] = json.loads(raw)
    return value


def _rows(path: Path) -> dict[str, list[Any]]:
    """Every table's rows (what undo must give back) and the schema."""
    with closing(sqlite3.connect(path)) as db:
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        out = {n: sorted(db.execute(f'SELECT rowid, * FROM "{n}"').fetchall()) for n in names}
        out["schema"] = sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
    return out


def _drop_triggers(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            db.execute(f'DROP TRIGGER "{name}"')
        db.commit()


# --- the store: reading ------------------------------------------------------------------------


def test_goose_store_is_detected_by_its_tables_never_by_its_name(tmp_path: Path) -> None:
    db = _store(tmp_path)
    assert registry.detect_or_raise(db.read_bytes()[:65536], str(db)).id == "goose"
    renamed = tmp_path / "copy.sqlite"
    renamed.write_bytes(db.read_bytes())
    assert registry.detect_or_raise(renamed.read_bytes()[:65536], str(renamed)).id == "goose"
    other = tmp_path / "other" / "sessions.db"  # another program's store of the same name
    other.parent.mkdir()
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, data TEXT)")
        conn.execute("CREATE TABLE messages (id INTEGER, session_id TEXT, body TEXT)")
        conn.commit()
    assert registry.detect(other.read_bytes()[:65536], str(other)) is None


def test_goose_store_scan_reads_every_message_in_goose_order(tmp_path: Path) -> None:
    db = _store(tmp_path)
    report = scan([str(db)], jobs=1)
    assert not report.errors
    assert report.summary.assistant_messages == 4
    assert [(f.message_id, f.json_path, f.kind) for f in report.findings] == [
        ("2", "content[0].text", "block"),
        ("4", "content[1].text", "orphan_close"),
        ("5", "content[0].text", "block"),
    ]
    assert {f.model for f in report.findings} == {"qwen3:32b"}
    assert {f.session_id for f in report.findings} == {"20260409_1"}


def test_goose_store_a_tool_request_after_the_text_is_rule_4_evidence(tmp_path: Path) -> None:
    db = _store(tmp_path)
    (site,) = [
        s
        for r in Goose().read(open(db, "rb"))  # noqa: SIM115 - the records are read at once
        for s in Goose().sites(r)
        if s.message_id == "2"
    ]
    assert site.followed_by_tool_call and site.native_reasoning is None


def test_goose_store_scan_leaves_the_folder_as_it_was_and_reads_rows_only_in_the_wal(
    tmp_path: Path,
) -> None:
    """Goose keeps its store in WAL mode; a Goose that died left its newest rows in `-wal`."""
    db = _store(tmp_path, sessions=[goose_db.CLEAN], wal=True)
    script = (
        "import sqlite3, sys, os\n"
        "from tests.formats import goose_db\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "db.execute(\"INSERT INTO sessions (id, working_dir) VALUES ('20260409_1', '/w')\")\n"
        "goose_db.insert_messages(db, goose_db.LEAKY)\n"
        "db.execute('COMMIT')\n"
        "os._exit(0)\n"
    )
    run_python(script, str(db), env=dict(os.environ, PYTHONPATH=str(REPO)))
    folder = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in db.parent.iterdir()}
    assert "sessions.db-wal" in folder
    report = scan([str(db)], jobs=1)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in db.parent.iterdir()} == folder
    assert not report.errors and report.summary.assistant_messages == 4
    assert len(report.findings) == 3


def test_goose_store_locked_exclusively_is_in_use_where_goose_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "LOCK_WAIT", 0.0)
    db = _store(tmp_path, wal=True)
    holder = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA locking_mode = EXCLUSIVE')\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    with held(holder, str(db)):
        report = scan([str(db)], jobs=1)
    (error,) = report.errors
    assert "in use" in error.message and "not a known session format" not in error.message
    assert is_store_path(str(db)) and not is_store_path(str(tmp_path / "sessions.db"))


def test_goose_store_of_an_older_schema_is_read(tmp_path: Path) -> None:
    """A 1.10 store (schema v5: no message_id column, no model_config_json, no triggers)."""
    db = tmp_path / "sessions.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '',"
            " working_dir TEXT NOT NULL);"
            "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL"
            " REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL,"
            " created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
            " tokens INTEGER, metadata_json TEXT);"
        )
        conn.execute("INSERT INTO sessions (id, working_dir) VALUES ('20251020_1', '/w')")
        for _, sid, role, content, created, meta in goose_db.rows(goose_db.LEAKY):
            conn.execute(
                "INSERT INTO messages (session_id, role, content_json, created_timestamp,"
                " metadata_json) VALUES (?, ?, ?, ?, ?)",
                ("20251020_1", role, content, created, meta),
            )
        conn.commit()
    report = scan([str(db)], jobs=1)
    assert not report.errors and report.summary.assistant_messages == 3
    assert {f.message_id for f in report.findings} == LEAKING_ROWS


def test_goose_store_row_with_broken_content_json_is_a_bad_record_not_a_crash(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE messages SET content_json = '{not json' WHERE id = 7")
        conn.commit()
    report = scan([str(db)], jobs=1)
    assert len(report.errors) == 1 and "content_json" in report.errors[0].message
    assert len(report.findings) == 3


# --- the store: repair and undo ----------------------------------------------------------------


def test_goose_store_repair_puts_an_unsigned_thinking_item_before_the_text(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path)
    _drop_triggers(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED], result.all_errors
    assert _content(db, 2)[:2] == [
        {
            "type": "thinking",
            "thinking": "Prices are summed as floats; 0.1 + 0.2 drifts.",
            "signature": "",
        },
        {"type": "text", "text": "The prices are floats. I will switch them to integer cents."},
    ]
    assert _content(db, 2)[2]["type"] == "toolRequest"
    # the leaked reasoning equals the native thinking item: the text is cut, nothing added
    assert [c["type"] for c in _content(db, 4)] == ["thinking", "text"]
    # all reasoning, nothing else in the message: refused and left as it is
    assert _content(db, 5) == goose_db.LEAKY[3][4][1]
    findings = scan([str(db)], jobs=1).findings
    assert [f.message_id for f in findings] == ["5"]


def test_goose_store_repair_writes_only_content_json_of_the_leaking_rows(tmp_path: Path) -> None:
    db = _store(tmp_path)
    _drop_triggers(db)
    before = _rows(db)
    run([db], WriteMode.IN_PLACE, tmp_path)
    after = _rows(db)
    assert after["sessions"] == before["sessions"] and after["schema"] == before["schema"]
    changed = [(b, a) for b, a in zip(before["messages"], after["messages"], strict=True) if b != a]
    assert [b[0] for b, _ in changed] == [2, 4]
    for b, a in changed:
        assert b[:5] == a[:5] and b[6:] == a[6:]  # only content_json (after rowid, 5) moved


def test_goose_store_undo_restores_every_row_and_the_schema(tmp_path: Path) -> None:
    db = _store(tmp_path)
    _drop_triggers(db)
    before = _rows(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None and _rows(db) != before
    (entry,) = journal.load_manifest(result.manifest_path)["files"]
    assert entry["role"] == "database" and [r["table"] for r in entry["rows"]] == ["messages"] * 2
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _rows(db) == before


def test_goose_store_out_and_dry_run_leave_the_store_untouched(tmp_path: Path) -> None:
    db = _store(tmp_path)
    _drop_triggers(db)
    before = db.read_bytes()
    dry = run([db], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in dry.files] == [FileStatus.WOULD_CHANGE]
    out = run([db], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    assert [f.status for f in out.files] == [FileStatus.REPAIRED], out.all_errors
    assert db.read_bytes() == before
    (copy,) = (tmp_path / "out").rglob("sessions.db")
    assert [c["type"] for c in _content(copy, 2)] == ["thinking", "text", "toolRequest"]


def test_goose_store_repair_fires_no_counter_trigger(tmp_path: Path) -> None:
    """#24: Goose 1.x stores carry three counter triggers on `messages`. The repair writes
    only `content_json`, which none of them fires on (INSERT, DELETE, UPDATE OF metadata_json,
    created_timestamp), so the store is repaired with them in place and nothing else moves."""
    db = _store(tmp_path)
    before = _rows(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED], result.all_errors
    after = _rows(db)
    assert after["sessions"] == before["sessions"] and after["schema"] == before["schema"]
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN  # type: ignore[arg-type]
    assert _rows(db) == before


def _site(row: int, index: int, text: str) -> Site:
    return Site(
        record_index=0,
        line=1,
        json_path=f"content[{index}].text",
        text=text,
        native_reasoning=None,
        session_id="s",
        message_id=str(row),
        message_index=0,
        model=None,
        path=("content", index, "text"),
    )


@settings(max_examples=40, deadline=None)
@given(
    before=st.lists(st.sampled_from(["tool", "text", "thinking"]), max_size=3),
    visible=st.text(min_size=1).filter(str.strip),
    thinking=st.lists(st.text().filter(str.strip), min_size=1, max_size=2),
    tail=st.text(),
)
def test_goose_apply_puts_the_thinking_item_right_before_the_text_and_keeps_the_rest(
    before: list[str], visible: str, thinking: list[str], tail: str
) -> None:
    items = {
        "tool": goose_db.call("c", "shell", {"command": tail}),
        "text": goose_db.text(tail),
        "thinking": goose_db.thinking(tail, "sig"),
    }
    content = [items[k] for k in before] + [goose_db.text("leak " + tail)]
    at = len(before)
    with closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content_json TEXT)")
        db.execute("INSERT INTO messages VALUES (1, ?)", (goose_db.js(content),))
        changes = RowChanges(db)
        repair = Repair(_site(1, at, "leak " + tail), visible, tuple(thinking))
        (placement,) = apply_database(changes, [repair])
        (raw,) = db.execute("SELECT content_json FROM messages").fetchone()
    after = json.loads(raw)
    assert placement.applied and len(changes.changes) == 1
    assert after[:at] == content[:at]
    assert after[at] == {"type": "thinking", "thinking": "\n\n".join(thinking), "signature": ""}
    assert after[at + 1] == {"type": "text", "text": visible}
    assert raw.startswith(goose_db.js(content[:at])[:-1])  # the items before kept byte for byte


def test_goose_apply_skips_a_text_that_changed_since_it_was_read() -> None:
    content = [goose_db.text("now different")]
    with closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content_json TEXT)")
        db.execute("INSERT INTO messages VALUES (1, ?)", (goose_db.js(content),))
        changes = RowChanges(db)
        (placement,) = apply_database(
            changes, [Repair(_site(1, 0, "<think>a</think>b"), "b", ("a",))]
        )
    assert not placement.applied and not changes.changes


# --- the legacy JSONL ---------------------------------------------------------------------------


def test_goose_legacy_jsonl_is_detected_and_read() -> None:
    head = LEGACY.read_bytes()[:65536]
    assert registry.detect_or_raise(head, str(LEGACY)).id == "goose"
    report = scan([str(LEGACY)], jobs=1)
    assert not report.errors
    assert report.summary.assistant_messages == 3
    assert [(f.line, f.json_path, f.kind) for f in report.findings] == [
        (3, "content[0].text", "block"),
        (5, "content[0].text", "orphan_close"),
    ]


def test_goose_legacy_repair_splices_a_thinking_item_and_keeps_every_other_byte(
    tmp_path: Path,
) -> None:
    copy = tmp_path / LEGACY.name
    copy.write_bytes(LEGACY.read_bytes())
    result = run([copy], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED], result.all_errors
    old, new = LEGACY.read_bytes().split(b"\n"), copy.read_bytes().split(b"\n")
    assert [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == [2, 4]
    line = json.loads(new[2])
    assert line["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants the failing test fixed; read it first.",
        "signature": "",
    }
    assert line["content"][1]["type"] == "text" and "<think>" not in line["content"][1]["text"]
    assert not scan([str(copy)], jobs=1).findings
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN  # type: ignore[arg-type]
    assert copy.read_bytes() == LEGACY.read_bytes()
