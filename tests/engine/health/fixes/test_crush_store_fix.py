"""`repair --fix tool-pairs` on Crush's SQLite store (crush.db): the `tool` message Crush
itself writes on an interrupt (`internal/agent/agent.go`, `sessionAgent.Run`) is inserted
as a new row, the session's count kept in step, and undone exactly."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.engine.health.fixes.store_helpers import (
    assert_dry_run_writes_nothing,
    assert_fixed_once,
    assert_undo_keeps_what_was_written_since,
    fix,
    problems,
)
from tests.formats import crush_db
from thinkfix.engine.repair.model import FileStatus
from thinkfix.formats.crush import SESSION_TRIGGERS

T0 = crush_db.T0
SESSION = crush_db.SESSION
CALL = "call_7a6b5c4d3e2f1a0b9c8d7e6f"
ASSISTANT = "4fa0b9e6-7a5b-4c2d-9e4f-6b8a0c2d4e57"
OPEN: list[crush_db.Message] = [
    (
        "5ab1cae7-8b6c-4d3e-8f5a-7c9b1d3e5f68",
        "user",
        [crush_db.text("Run the tests."), crush_db.finish("stop", 0)],
    ),
    (
        ASSISTANT,
        "assistant",
        [
            crush_db.text("Running them."),
            crush_db.tool_call(CALL, "bash", {"command": "go test ./..."}),
            crush_db.finish("tool_use", T0 + 12),
        ],
    ),
]
COLUMNS = "id, session_id, role, parts, model, provider, is_summary_message, created_at, "
COLUMNS += "updated_at, finished_at"


def _copy(path: Path, to: Path) -> Path:
    """The store as it is now (its `updated_at` trigger stamps a build with the clock, so a
    second build may differ by a second)."""
    with closing(sqlite3.connect(path)) as src, closing(sqlite3.connect(to)) as dst:
        src.backup(dst)
    return to


def _messages(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as db:
        return list(db.execute(f"SELECT {COLUMNS} FROM messages ORDER BY created_at, rowid"))


def _count(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        (count,) = db.execute("SELECT message_count FROM sessions WHERE id = ?", (SESSION,))
    return int(count[0])


def test_crush_store_fix_inserts_crushs_own_cancelled_tool_message(tmp_path: Path) -> None:
    db = crush_db.build(tmp_path / "crush.db", OPEN)
    assert problems(db, "crush") == ["call-without-result"] and _count(db) == 2
    before = _messages(db)
    result = fix(db, tmp_path / "a")
    (file,) = result.files
    assert file.format == "crush" and file.status is FileStatus.REPAIRED
    assert [f.problem for f in file.fixes] == ["call-without-result"]
    *kept, added = _messages(db)
    assert kept == before
    # the row `messages.Create` writes for `sessionAgent.Run`'s cancelled result
    parts = (
        '[{"type":"tool_result","data":{"tool_call_id":"' + CALL + '","name":"bash",'
        '"content":"Error: user cancelled assistant tool calling","data":"","mime_type":"",'
        '"metadata":"","is_error":true}},{"type":"finish","data":{"reason":"stop","time":0}}]'
    )
    mid = str(uuid.uuid5(uuid.UUID("6c7a1f3e-2b4d-5e8f-9a0b-1c2d3e4f5a6b"), f"{SESSION}/{CALL}"))
    assert added == (mid, SESSION, "tool", parts, "", None, 0, T0 + 11, T0 + 11, None)
    assert json.loads(parts)[0]["data"]["is_error"] is True
    assert _count(db) == 3  # as Crush's insert trigger keeps it
    assert problems(db, "crush") == []
    assert_fixed_once(db, tmp_path / "b")


def test_crush_store_fix_dry_run_writes_nothing(tmp_path: Path) -> None:
    db = crush_db.build(tmp_path / "crush.db", OPEN)
    assert_dry_run_writes_nothing(db, tmp_path / "a")


def test_crush_store_fix_undo_deletes_the_row_and_keeps_what_crush_wrote_since(
    tmp_path: Path,
) -> None:
    db = crush_db.build(tmp_path / "crush.db", OPEN)
    expected = _copy(db, tmp_path / "expected.db")
    later = [("6bc2dbf8-9c7d-4e4f-8a6b-8d0c2e4f6a79", "user", [crush_db.text("next")])]
    # Crush goes on: a new session, its trigger firing
    rows = crush_db.rows(later, "7cd3ec09-ad8e-4f5a-9b7c-9e1d3f5a7b80")
    assert_undo_keeps_what_was_written_since(db, expected, tmp_path / "a", rows)
    assert problems(db, "crush") == ["call-without-result"]


def test_crush_session_triggers_are_the_migrations_text() -> None:
    """The count and `updated_at` triggers the fix keeps from firing are Crush's own, word
    for word (an altered one is a stranger and refuses the write)."""
    names = (
        "update_sessions_updated_at",
        "update_session_message_count_on_insert",
        "update_session_message_count_on_delete",
    )
    assert SESSION_TRIGGERS == tuple(crush_db.trigger_statement(n) for n in names)
