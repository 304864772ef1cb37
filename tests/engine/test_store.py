"""OpenCode's SQLite store: repaired row by row in one transaction, backed up, undone exactly."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from tests.formats import opencode_db
from thinkfix.engine.ledger import journal
from thinkfix.engine.ledger import restore as restore_mod
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry, sqlite_store, sqlite_triggers
from thinkfix.formats.opencode import OpenCode, id_before

LEAKY_TEXT = "prt_95e0f3d71005Pp3qQ4rR5sS6tT"


def _store(tmp_path: Path, messages: list = opencode_db.LEAKY) -> Path:  # type: ignore[type-arg]
    return opencode_db.build(tmp_path / "opencode.db", messages)


def _dump(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return list(db.iterdump())


def _parts(path: Path, message: str) -> list[tuple[str, str]]:
    """(id, type) of a message's parts in the order OpenCode reads them (MessageV2.parts)."""
    with closing(sqlite3.connect(path)) as db:
        return [
            (pid, data.split('"type":"')[1].split('"')[0])
            for pid, data in db.execute(
                "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message,)
            )
        ]


def test_store_repair_in_place_puts_a_reasoning_part_right_before_the_text(tmp_path: Path) -> None:
    db = _store(tmp_path)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    assert not scan([str(db)], jobs=1).findings
    parts = _parts(db, "msg_95e0f3d71002bP4sW8nY1eLmTg")
    assert [t for _, t in parts] == [
        "step-start",
        "reasoning",
        "reasoning",
        "text",
        "tool",
        "step-finish",
    ]
    new_id = parts[2][0]
    assert parts[1][0] < new_id < LEAKY_TEXT == parts[3][0]
    # the lone "</think>" part is dropped: its message still shows its other text
    assert [t for _, t in _parts(db, "msg_95e0f3e20003cQ5tX9oZ2fMnUh")] == ["text"]


def test_store_undo_restores_every_row_and_the_schema(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None and _dump(db) != before
    (entry,) = journal.load_manifest(result.manifest_path)["files"]
    assert entry["role"] == "database" and Path(entry["before"]["backup"]).exists()
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _dump(db) == before


def _runtime_writes(path: Path) -> None:
    """What OpenCode may write after a repair: a new session with a message and a part, a
    session renamed, three messages' `time_updated`, a user part edited, and a new table
    with its rows (a migration)."""
    with closing(sqlite3.connect(path)) as db:
        opencode_db_rows = opencode_db.rows(
            [
                (
                    "msg_95e0f4a00001aA1bB2cC3dD4eE",
                    "user",
                    {"agent": "build"},
                    [("prt_95e0f4a00002aA1bB2cC3dD4eE", {"type": "text", "text": "next"})],
                )
            ],
            session="ses_6a1f0c2b9000Z3p9QkR1mW4tYs",
        )
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, "
            "time_created, time_updated) SELECT 'ses_6a1f0c2b9000Z3p9QkR1mW4tYs', project_id, "
            "'new-one', directory, 'A new session', version, 1, 2 FROM session"
        )
        for table, values in opencode_db_rows:
            db.execute(f"INSERT INTO {table} VALUES ({', '.join('?' for _ in values)})", values)
        db.execute("UPDATE session SET title = 'Renamed' WHERE id = ?", (opencode_db.SESSION,))
        db.execute("UPDATE message SET time_updated = time_updated + 7")
        db.execute(
            'UPDATE part SET data = \'{"type":"text","text":"later"}\' '
            "WHERE id = 'prt_95e0f3d41002Aa1bB2cC3dD4eE'"
        )
        db.execute("CREATE TABLE todo (id text PRIMARY KEY, body text)")
        db.execute("INSERT INTO todo VALUES ('t1', 'ship it')")
        db.commit()


def test_store_undo_puts_back_only_the_repaired_rows_and_keeps_what_came_since(
    tmp_path: Path,
) -> None:
    """#22 item 1: undo restored the whole file from its backup, losing a new session, a
    rename, a new table and message times written after the repair. It puts back exactly
    the repaired rows: the store equals the original with the later writes applied."""
    db = _store(tmp_path)
    expected = opencode_db.build(tmp_path / "expected.db", opencode_db.LEAKY)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None and _dump(db) != _dump(expected)
    _runtime_writes(db)
    _runtime_writes(expected)
    undone = restore_mod.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.CLEAN, undone
    assert [f.status for f in undone.files] == [restore_mod.UndoStatus.RESTORED]
    assert _dump(db) == _dump(expected)


def test_store_undo_refuses_when_a_row_it_wrote_changed_since(tmp_path: Path) -> None:
    db = _store(tmp_path)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            'UPDATE part SET data = \'{"type":"text","text":"edited"}\' WHERE id = ?',
            (LEAKY_TEXT,),
        )
        conn.commit()
    after_edit = _dump(db)
    assert result.manifest_path is not None
    undone = restore_mod.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.ERROR and "changed since" in str(undone)
    assert LEAKY_TEXT in str(undone)
    assert _dump(db) == after_edit


def test_store_undo_holds_the_write_lock_from_its_check_to_its_last_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#22 item 1: a row the runtime wrote between undo's check and its write was lost."""
    db = _store(tmp_path)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    checked = restore_mod._classify  # the check undo runs before it writes

    def check_then_runtime_writes(entry: dict[str, Any]) -> Any:
        verdict = checked(entry)
        _runtime_writes(db)
        return verdict

    monkeypatch.setattr(restore_mod, "_classify", check_then_runtime_writes)
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT body FROM todo").fetchall() == [("ship it",)]
        assert conn.execute("SELECT count(*) FROM session").fetchone() == (2,)


def test_store_old_manifest_without_rows_is_refused_clearly(tmp_path: Path) -> None:
    """A manifest from before change sets (whole-file restore) is refused, never followed."""
    db = _store(tmp_path)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    doc = journal.load_manifest(result.manifest_path)
    del doc["files"][0]["rows"]
    doc.pop("integrity", None)
    journal.write_manifest(result.manifest_path, doc)
    repaired = _dump(db)
    undone = restore_mod.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.ERROR and "older thinkfix" in str(undone)
    assert _dump(db) == repaired


_TRIGGER = (
    "CREATE TRIGGER spread AFTER UPDATE ON part BEGIN "
    'UPDATE part SET data = \'{"type":"text","text":"overwritten"}\' '
    "WHERE id != NEW.id AND data LIKE '%\"text\"%'; END"
)


def _plant(path: Path, sql: str = _TRIGGER) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute(sql)
        db.commit()


def test_store_with_a_trigger_on_what_repair_writes_is_refused_unchanged(tmp_path: Path) -> None:
    """#22 item 2: an AFTER UPDATE ON part trigger rewrote three other parts while repair
    reported success."""
    db = _store(tmp_path)
    _plant(db)
    before = _dump(db)
    for mode in (WriteMode.DRY_RUN, WriteMode.IN_PLACE):
        result = run([db], mode, tmp_path)
        (file,) = result.files
        assert file.status is FileStatus.FAILED and result.exit_code() is ExitCode.ERROR
        assert "spread ON part" in file.errors[0].message
        assert _dump(db) == before


def test_store_rows_changed_beyond_the_plan_roll_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backstop behind the trigger check: total_changes() against the planned rows."""
    db = _store(tmp_path)
    _plant(db)
    before = _dump(db)
    monkeypatch.setattr(sqlite_triggers, "triggers_on", lambda db, tables: [])
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.FAILED and "were planned" in file.errors[0].message
    assert _dump(db) == before


def test_store_undo_refuses_a_trigger_planted_since(tmp_path: Path) -> None:
    db = _store(tmp_path)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    _plant(db)
    repaired = _dump(db)
    undone = restore_mod.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.ERROR and "spread ON part" in str(undone)
    assert _dump(db) == repaired


def test_store_held_by_a_writer_is_left_alone_and_said_so(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = _dump(db)
    with closing(sqlite3.connect(db, isolation_level=None)) as runtime:
        runtime.execute("BEGIN IMMEDIATE")  # what OpenCode holds while it writes
        result = run([db], WriteMode.IN_PLACE, tmp_path)
        runtime.execute("ROLLBACK")
    (file,) = result.files
    assert file.status is FileStatus.SKIPPED and result.exit_code() is ExitCode.ERROR
    assert "in use" in file.errors[0].message
    assert _dump(db) == before


def test_store_dry_run_and_out_leave_the_store_untouched(tmp_path: Path) -> None:
    db = _store(tmp_path)
    original = db.read_bytes()
    dry = run([db], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in dry.files] == [FileStatus.WOULD_CHANGE]
    assert sum(c.applied for c in dry.changes) == 2
    out = run([db], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    copy = tmp_path / "out" / "opencode.db"
    assert out.exit_code() is ExitCode.CLEAN and copy.exists()
    assert db.read_bytes() == original and sorted(p.name for p in tmp_path.glob("opencode*")) == [
        "opencode.db"
    ]
    assert not scan([str(copy)], jobs=1).findings
    assert out.manifest_path is not None
    assert restore_mod.undo(out.manifest_path).exit_code() is ExitCode.CLEAN and not copy.exists()


def test_store_all_reasoning_message_is_refused_and_unchanged(tmp_path: Path) -> None:
    only = [
        opencode_db.LEAKY[0],
        (
            "msg_95e0f3e20003cQ5tX9oZ2fMnUh",
            "assistant",
            opencode_db.ASSISTANT,
            [
                (
                    "prt_95e0f3e20004Ee5fF6gG7hH8iI",
                    {"type": "text", "text": "<think>all of it</think>"},
                )
            ],
        ),
    ]
    db = _store(tmp_path, only)
    before = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    (change,) = result.changes
    assert not change.applied and "nothing visible would remain" in (change.placement.reason or "")
    assert _dump(db) == before


@given(
    st.integers(1, 2**40),
    st.text(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=14, max_size=14
    ),
    st.booleans(),
)
def test_store_new_part_id_sorts_between_its_neighbours(
    stamp: int, tail: str, has_previous: bool
) -> None:
    text_id = f"prt_{stamp:012x}{tail}"
    previous = f"prt_{stamp - 1:012x}{tail}" if has_previous else None
    new = id_before(text_id, previous)
    if new is not None:
        assert new < text_id and (previous is None or new > previous)
    else:
        assert previous is not None  # only a neighbour right before can leave no room


def test_a_file_that_claims_to_be_a_database_but_is_not_is_unreadable_not_a_bug(
    tmp_path: Path,
) -> None:
    """Found by the fuzzer: SQLite's magic bytes in front of JSON, read as OpenCode. Repair
    called it an internal error; like scan, it is an input that cannot be read, left as it
    is."""
    from thinkfix.engine.inputs.files import InputOptions
    from thinkfix.engine.scan.options import ScanOptions
    from thinkfix.io.errors import ErrorKind

    bad = tmp_path / "opencode.db"
    data = b'SQLite format 3\x00:":[f1c-2d7e5b0a3c68",\n  "projectHash": "9d2c"}\n'
    bad.write_bytes(data)
    scan_options = ScanOptions(inputs=InputOptions(format="opencode"))
    for mode in (WriteMode.CHECK, WriteMode.IN_PLACE):
        result = run([bad], mode, tmp_path, scan=scan_options)
        (file,) = result.files
        assert file.status is FileStatus.ERROR and result.exit_code() is ExitCode.ERROR
        assert [e.kind for e in file.errors] == [ErrorKind.UNREADABLE], file.errors
        assert "internal error" not in file.errors[0].message
        assert bad.read_bytes() == data


def test_store_two_leaking_text_parts_of_one_message_are_both_repaired(tmp_path: Path) -> None:
    """#22 item 3: the first repair inserts a reasoning part, which used to shift the second
    text part's index, so it was skipped ("the part's text changed") and still leaked."""
    message = "msg_95e0f3f00001aA1bB2cC3dD4eE"
    two = [
        opencode_db.LEAKY[0],
        (
            message,
            "assistant",
            opencode_db.ASSISTANT,
            [
                ("prt_95e0f3f00002Aa1bB2cC3dD4eE", {"type": "text", "text": "<think>a</think>A"}),
                ("prt_95e0f3f00003Aa1bB2cC3dD4eE", {"type": "step-start"}),
                ("prt_95e0f3f00004Aa1bB2cC3dD4eE", {"type": "text", "text": "<think>b</think>B"}),
            ],
        ),
    ]
    db = _store(tmp_path, two)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert [c.applied for c in result.changes] == [True, True], [
        c.placement.reason for c in result.changes
    ]
    assert not scan([str(db)], jobs=1).findings
    assert [t for _, t in _parts(db, message)] == [
        "reasoning",
        "text",
        "step-start",
        "reasoning",
        "text",
    ]


def test_store_locked_exclusively_is_left_alone_as_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#24: repair of a store its runtime holds in EXCLUSIVE locking mode: in use, exit 2."""
    monkeypatch.setattr(sqlite_store, "LOCK_WAIT", 0.0)
    db = opencode_db.build(tmp_path / "opencode.db", opencode_db.LEAKY[:1], wal=True)
    with opencode_db.runtime(db, opencode_db.LEAKY[1:], exclusive=True):
        result = run([db], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.SKIPPED and result.exit_code() is ExitCode.ERROR
    assert "in use" in file.errors[0].message
    assert not scan([str(db)], jobs=1).errors


_QUIET = (  # fired by no write of a repair or undo of OpenCode's store
    (
        "CREATE TRIGGER stamp AFTER UPDATE OF time_created ON part BEGIN "
        "UPDATE session SET time_updated = 0; END"
    ),
    "CREATE TRIGGER renamed AFTER UPDATE ON session BEGIN UPDATE part SET data = '{}'; END",
)


def test_store_triggers_the_repair_does_not_fire_do_not_block_it(tmp_path: Path) -> None:
    """#24: only a trigger the planned write would fire refuses the store. A repair of
    OpenCode inserts, updates (`data` only) and deletes parts: `AFTER UPDATE OF time_created
    ON part` and a trigger on a table it never writes stay quiet, in the repair and its undo."""
    db = _store(tmp_path)
    for sql in _QUIET:
        _plant(db, sql)
    before = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED], result.all_errors
    assert not scan([str(db)], jobs=1).findings
    assert result.manifest_path is not None
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _dump(db) == before


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TRIGGER spread AFTER UPDATE OF time_created, data ON part BEGIN SELECT 1; END",
        "CREATE TRIGGER spread BEFORE INSERT ON part BEGIN SELECT 1; END",
        "CREATE TRIGGER spread AFTER DELETE ON part BEGIN SELECT 1; END",
    ],
)
def test_store_a_trigger_the_planned_write_fires_refuses_it(tmp_path: Path, sql: str) -> None:
    """`UPDATE OF` a column the repair sets, an insert trigger where it inserts a reasoning
    part, a delete trigger where it drops an emptied text part: refused, the store as it was."""
    db = _store(tmp_path)
    _plant(db, sql)
    before = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.FAILED and "spread ON part" in file.errors[0].message
    assert _dump(db) == before


_OWN = (
    "CREATE TRIGGER IF NOT EXISTS touch\nAFTER UPDATE ON part\nBEGIN\n"
    "UPDATE part SET time_updated = 0 WHERE id = new.id;\nEND;"
)


def test_store_a_runtimes_own_trigger_is_kept_from_firing_in_repair_and_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trigger the format names as its runtime's own (the migration's text) does not
    refuse the store: it is dropped and made again around the writes, in the same
    transaction, so it fires on none of them (total_changes() is the plan's) and is there
    afterwards; undo does the same and gives back every row."""
    fmt = OpenCode()
    fmt.own_triggers = (_OWN,)  # type: ignore[attr-defined]
    monkeypatch.setitem(registry.FORMATS, "opencode", fmt)
    db = _store(tmp_path)
    _plant(db, _OWN)
    before = _dump(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED], result.all_errors
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM part WHERE time_updated = 0").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'touch'").fetchone()
    assert result.manifest_path is not None
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert sorted(_dump(db)) == sorted(before)  # the trigger made again is listed last
