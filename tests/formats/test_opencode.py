"""OpenCode: the SQLite store (built with OpenCode's schema) and the older file store."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from tests.formats import opencode_db
from tests.formats.support import FIXTURES
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry, sqlite_store
from thinkfix.formats.opencode import OpenCode

STORE = FIXTURES / "opencode" / "storage"
LEAKY_PART = (
    STORE / "part" / "msg_95e0f3d71002bP4sW8nY1eLmTg" / "prt_95e0f3d71005Pp3qQ4rR5sS6tT.json"
)


def test_opencode_database_is_detected_by_its_tables(tmp_path: Path) -> None:
    db = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    head = db.read_bytes()[:65536]
    assert registry.detect_or_raise(head, str(db)).id == "opencode"
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE part (id text, data text)")
    assert registry.detect(other.read_bytes()[:65536], str(other)) is None


def test_opencode_database_scan_reads_messages_with_their_parts_in_id_order(tmp_path: Path) -> None:
    db = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    report = scan([str(db)], jobs=1)
    assert not report.errors
    assert report.summary.assistant_messages == 2
    assert [(f.json_path, f.kind) for f in report.findings] == [
        ("parts[2].text", "block"),
        ("parts[0].text", "stray_close"),
    ]
    assert {f.message_id for f in report.findings} == {
        "msg_95e0f3d71002bP4sW8nY1eLmTg",
        "msg_95e0f3e20003cQ5tX9oZ2fMnUh",
    }
    assert {f.model for f in report.findings} == {"MiniMax-M2"}


def test_opencode_database_is_never_written_by_scan(tmp_path: Path) -> None:
    db = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY)
    before = db.read_bytes()
    scan([str(db)], jobs=1)
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "opencode.db"
    ]


def test_opencode_file_store_part_takes_role_and_reasoning_from_beside_it() -> None:
    fmt = OpenCode()
    with open(LEAKY_PART, "rb") as fp:
        (record,) = fmt.read(fp)
    (site,) = fmt.sites(record)
    assert site.model == "MiniMax-M2"
    assert site.native_reasoning == (
        "Floating point: the prices are summed as floats. Use integer cents."
    )


def test_opencode_part_without_its_message_file_is_an_error_not_clean(tmp_path: Path) -> None:
    lone = tmp_path / LEAKY_PART.name
    shutil.copy(LEAKY_PART, lone)
    report = scan([str(lone)], jobs=1)
    assert report.errors and "role (user or assistant) is unknown" in report.errors[0].message
    assert report.summary.assistant_messages == 0


def test_opencode_user_parts_are_not_leaks() -> None:
    report = scan([str(STORE)], jobs=1)
    assert [Path(f.path).name for f in report.findings] == [LEAKY_PART.name]
    assert report.summary.assistant_messages == 2


def test_opencode_a_tool_part_after_the_text_is_rule_4_evidence(tmp_path: Path) -> None:
    # OpenCode stores a call as a `tool` part after the text part of the same message: the
    # text before a trailing `</think>` was reasoning (DESIGN.md rule 4), as in every format
    # that keeps its calls in the message.
    text = "Check the cart module before editing.\n</think>\n"
    tool = {
        "type": "tool",
        "callID": "call_7",
        "tool": "read",
        "state": {"status": "completed", "input": {"filePath": "cart.ts"}, "output": "..."},
    }
    messages = [
        (
            "msg_95e0f3d71002bP4sW8nY1eLmTg",
            "assistant",
            opencode_db.ASSISTANT,
            [
                ("prt_95e0f3d71005Pp3qQ4rR5sS6tT", {"type": "text", "text": text}),
                ("prt_95e0f3d71006Uu7vV8wW9xX0yY", tool),
            ],
        )
    ]
    with_tool = scan([str(opencode_db.build(tmp_path / "a.db", messages))], jobs=1)
    assert [(f.json_path, f.kind) for f in with_tool.findings] == [
        ("parts[0].text", "orphan_close")
    ]
    messages[0][3].pop()  # the same text with no call after it: only the delimiter goes
    alone = scan([str(opencode_db.build(tmp_path / "b.db", messages))], jobs=1)
    assert [(f.json_path, f.kind) for f in alone.findings] == [("parts[0].text", "stray_close")]


LEAKING_IDS = {"msg_95e0f3d71002bP4sW8nY1eLmTg", "msg_95e0f3e20003cQ5tX9oZ2fMnUh"}


def _folder(path: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of a folder: its bytes and mtime (what a reader must leave as they were)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(path.iterdir())}


@pytest.mark.parametrize("state", ["closed", "crashed", "wal-without-shm", "running"])
def test_opencode_scan_leaves_the_store_folder_as_it_was_and_reads_the_wal(
    tmp_path: Path, state: str
) -> None:
    """#24: a plain read-only connection to a WAL store created `-shm` (and `-wal`) beside it
    or wrote into the runtime's `-shm`. The newest rows live only in `-wal`: still read."""
    db = tmp_path / "opencode.db"
    held: AbstractContextManager[None] = nullcontext()
    if state == "closed":
        opencode_db.build(db, opencode_db.LEAKY, wal=True)
    else:
        opencode_db.build(db, opencode_db.LEAKY[:1], wal=True)
        held = opencode_db.runtime(
            db, opencode_db.LEAKY[1:], end="hold" if state == "running" else "crash"
        )
    with held:
        if state == "wal-without-shm":
            (tmp_path / "opencode.db-shm").unlink()
        before = _folder(tmp_path)
        assert ("opencode.db-wal" in before) is (state != "closed")
        report = scan([str(db)], jobs=1)
        assert _folder(tmp_path) == before
    assert not report.errors, report.errors
    assert {f.message_id for f in report.findings} == LEAKING_IDS


def test_opencode_store_locked_exclusively_is_in_use_not_an_unknown_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#24: a runtime holding the store in EXCLUSIVE locking mode made detection fail, so the
    store was "not a known session format"; it is in use, exit 2, and left as it is."""
    monkeypatch.setattr(sqlite_store, "LOCK_WAIT", 0.0)
    db = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY[:1], wal=True)
    with opencode_db.runtime(db, opencode_db.LEAKY[1:], exclusive=True):
        before = _folder(tmp_path)
        report = scan([str(db)], jobs=1)
        assert _folder(tmp_path) == before
    (error,) = report.errors
    assert "in use" in error.message and "not a known session format" not in error.message
    assert report.exit_code() is ExitCode.ERROR
