"""The row-level change set every database store shares: undo puts back exactly its rows."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.formats import crush_db
from thinkfix.formats import sqlite_store, sqlite_triggers, sqlite_undo
from thinkfix.formats.sqlite_store import RowChanges

KEYS = [f"k{n}" for n in range(8)]
values = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(max_size=16),
)
edit = st.tuples(st.sampled_from(["insert", "update", "delete"]), st.sampled_from(KEYS), values)


def _db(rows: dict[str, object]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (id text PRIMARY KEY, v)")
    db.executemany("INSERT INTO t VALUES (?, ?)", rows.items())
    return db


def _apply(
    db: sqlite3.Connection, edits: list[tuple[str, str, object]], record: bool
) -> tuple[set[str], RowChanges]:
    """Apply the edits that make sense for the rows there (through RowChanges when `record`,
    as a repair writes; plain SQL otherwise, as the runtime does): the keys they touched."""
    writer = RowChanges(db)
    touched = set()
    for op, key, value in edits:
        exists = db.execute("SELECT 1 FROM t WHERE id = ?", (key,)).fetchone() is not None
        if op == "insert" and not exists:
            if record:
                writer.insert("t", {"id": key, "v": value}, key=("id",))
            else:
                db.execute("INSERT INTO t VALUES (?, ?)", (key, value))
        elif op == "update" and exists:
            if record:
                writer.update("t", {"id": key}, {"v": value})
            else:
                db.execute("UPDATE t SET v = ? WHERE id = ?", (value, key))
        elif op == "delete" and exists:
            if record:
                writer.delete("t", {"id": key})
            else:
                db.execute("DELETE FROM t WHERE id = ?", (key,))
        else:
            continue
        touched.add(key)
    return touched, writer


def _rows(db: sqlite3.Connection) -> list[tuple[object, ...]]:
    return sorted(db.execute("SELECT id, v FROM t"), key=repr)


def _moved(record: list[dict[str, object]], key: str, was: object, now: object) -> bool:
    """Did a later write change what the repair left in row `key`: the whole row where the
    repair inserted or deleted it (or the write deleted it), else a column the repair's
    updates changed (`repaired_columns`; a column they left alone is the runtime's)."""
    changes = [c for c in record if c["key"] == {"id": key}]
    if now is None or any(c["before"] is None or c["after_sha256"] is None for c in changes):
        return now != was
    repaired = {k for c in changes for k in c["repaired_columns"]}  # type: ignore[attr-defined]
    before, after = dict(was), dict(now)  # type: ignore[call-overload]
    return any(not sqlite_store.same_value(before[k], after[k]) for k in repaired)


@given(
    st.dictionaries(st.sampled_from(KEYS), values),
    st.lists(edit, max_size=12),
    st.lists(edit, max_size=12),
)
# An update that left the value as it was changed no column; a later write of that row is the
# runtime's alone, and undo keeps it (the property used to call it a conflict: a random draw)
@example(
    start={"k0": None, "k1": None}, repair=[("update", "k1", None)], later=[("update", "k1", 0)]
)
def test_change_set_revert_restores_its_rows_and_keeps_every_later_write(
    start: dict[str, object],
    repair: list[tuple[str, str, object]],
    later: list[tuple[str, str, object]],
) -> None:
    """Whatever a repair changed (through `RowChanges`, its record as the manifest keeps it),
    and whatever the runtime wrote since to other rows, undo leaves the store as the
    original with only the later writes applied; a later write that changed what the repair
    wrote in a row makes undo refuse."""
    with closing(_db(start)) as db, closing(_db(start)) as expected:
        touched, writer = _apply(db, repair, record=True)
        record = [c.to_json() for c in writer.changes]
        others = [e for e in later if e[1] not in touched]
        _apply(db, others, record=False)
        _apply(expected, others, record=False)
        clash = [e for e in later if e[1] in touched][:1]
        if clash:
            with closing(sqlite3.connect(":memory:", isolation_level=None)) as copy:
                db.backup(copy)
                key = clash[0][1]
                was = sqlite_store.read_row(copy, "t", {"id": key})
                _apply(copy, clash, record=False)
                now = sqlite_store.read_row(copy, "t", {"id": key})
                assert bool(sqlite_undo.conflicts(copy, record)) == _moved(record, key, was, now)
        assert sqlite_undo.conflicts(db, record) == []
        made = db.total_changes
        written = sqlite_undo.revert(db, record)  # what undo counts total_changes() against
        assert written == db.total_changes - made <= len(record)
        assert _rows(db) == _rows(expected)
        assert sqlite_undo.already_undone(db, record)


# --- triggers: a write fires none (#22 item 2, #24) ------------------------------------------

COLUMNS = ["a", "b", "c"]


def _trigger_sql(timing: str, event: str, of: list[str], style: int) -> str:
    """A CREATE TRIGGER statement on `t` in one of several spellings SQLite accepts."""
    name = ['"update""log"', "[t-log]", "main.tlog", "`x`"][style % 4]
    head = f"CREATE TRIGGER {'IF NOT EXISTS ' if style & 1 else ''}{name}"
    if of:
        columns = ", ".join(f'"{c}"' if style & 2 else c.upper() for c in of)
        event = f"{event} /* which columns */ OF {columns}"
    return (
        f"{head} {timing} {event}\n-- fires on\n ON {'main.' if style & 4 else ''}t "
        "FOR EACH ROW BEGIN INSERT INTO log VALUES ('on t'); END"
    )


@given(
    st.sampled_from(["", "BEFORE", "AFTER"]),
    st.sampled_from(["INSERT", "UPDATE", "DELETE"]),
    st.lists(st.sampled_from(COLUMNS), unique=True, max_size=3),
    st.integers(0, 7),
    st.sampled_from(["insert", "update", "delete"]),
    st.lists(st.sampled_from(COLUMNS), unique=True, min_size=1, max_size=3),
)
def test_trigger_fires_exactly_when_sqlite_fires_it(
    timing: str, event: str, of: list[str], style: int, op: str, written: list[str]
) -> None:
    """What `Trigger.fires` reads from a trigger's text is what SQLite does with it: fired
    by the same writes (an UPDATE OF trigger only when the update sets one of its columns)."""
    of = of if event == "UPDATE" else []
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as db:
        db.execute("CREATE TABLE t (id PRIMARY KEY, a, b, c)")
        db.execute("CREATE TABLE log (what)")
        db.execute("INSERT INTO t VALUES (1, 1, 1, 1)")
        db.execute(_trigger_sql(timing, event, of, style))
        (trigger,) = sqlite_triggers.triggers_on(db, ["T"])
        if op == "insert":
            db.execute("INSERT INTO t (id) VALUES (2)")
        elif op == "update":
            db.execute(f"UPDATE t SET {', '.join(f'{c} = 2' for c in written)} WHERE id = 1")
        else:
            db.execute("DELETE FROM t WHERE id = 1")
        fired = db.execute("SELECT count(*) FROM log").fetchone()[0] > 0
        assert trigger.fires(op, [c.upper() for c in written]) is fired


def test_a_trigger_whose_text_is_not_read_fires_on_every_write() -> None:
    odd = sqlite_triggers.Trigger("odd", "t", "CREATE TRIGGER odd AFTER UPSERT ON t BEGIN END")
    assert all(odd.fires(op, ["a"]) for op in ("insert", "update", "delete"))


def _crush_store(path: Path) -> Path:
    return crush_db.build(
        path,
        [
            ("m-user", "user", [{"type": "text", "data": {"text": "hi"}}]),
            ("m-bot", "assistant", [{"type": "text", "data": {"text": "<think>x</think>hi"}}]),
        ],
    )


def _schema(db: sqlite3.Connection) -> list[tuple[str, str]]:
    return sorted(db.execute("SELECT name, sql FROM sqlite_master WHERE sql NOT NULL"))


UPDATED_AT = "update_messages_updated_at"


def test_crush_own_updated_at_trigger_is_kept_from_firing_and_kept(tmp_path: Path) -> None:
    """Crush's migrations ship `AFTER UPDATE ON messages` (updated_at) and count triggers on
    insert and delete: a repair's update of `parts` fires none of them (updated_at and the
    session's message_count stay), the trigger is there again, same text, after the write."""
    with closing(sqlite3.connect(_crush_store(tmp_path / "crush.db"), isolation_level=None)) as db:
        schema, sessions = _schema(db), list(db.execute("SELECT * FROM sessions"))
        before = dict(sqlite_store.read_row(db, "messages", {"id": "m-bot"}) or ())
        db.execute("BEGIN IMMEDIATE")
        triggers = sqlite_triggers.Triggers(db, [crush_db.trigger_statement(UPDATED_AT)])
        made = db.total_changes
        RowChanges(db, triggers).update("messages", {"id": "m-bot"}, {"parts": "[]"})
        assert [t.name for t in triggers.dropped] == [UPDATED_AT]
        triggers.restore()
        db.execute("COMMIT")
        assert db.total_changes - made == 1
        after = dict(sqlite_store.read_row(db, "messages", {"id": "m-bot"}) or ())
        assert after == {**before, "parts": "[]"}
        assert list(db.execute("SELECT * FROM sessions")) == sessions
        assert _schema(db) == schema
        db.execute("UPDATE messages SET parts = '[1]' WHERE id = 'm-user'")  # as Crush does
        stamped = db.execute("SELECT updated_at FROM messages WHERE id = 'm-user'").fetchone()
        assert stamped[0] != before["updated_at"], "the trigger Crush relies on still fires"


def test_an_altered_runtime_trigger_is_not_its_own(tmp_path: Path) -> None:
    """Only a trigger whose text is the migration's is dropped and made again: one changed
    since (same name, other body) is a stranger, and the write is refused before it runs."""
    with closing(sqlite3.connect(_crush_store(tmp_path / "crush.db"), isolation_level=None)) as db:
        own = crush_db.trigger_statement(UPDATED_AT)
        db.execute(f"DROP TRIGGER {UPDATED_AT}")
        db.execute(own.replace("WHERE id = new.id", "WHERE id != new.id"))
        triggers = sqlite_triggers.Triggers(db, [own])
        with pytest.raises(sqlite_triggers.TriggerFires, match=f"{UPDATED_AT} ON messages"):
            RowChanges(db, triggers).update("messages", {"id": "m-bot"}, {"parts": "[]"})
        assert db.execute("SELECT parts FROM messages WHERE id = 'm-bot'").fetchone()[0] != "[]"


def test_stored_sql_is_the_text_a_migration_leaves_in_the_schema(tmp_path: Path) -> None:
    with closing(sqlite3.connect(_crush_store(tmp_path / "crush.db"))) as db:
        for name in (UPDATED_AT, "update_session_message_count_on_insert"):
            (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
            assert sqlite_triggers.stored_sql(crush_db.trigger_statement(name)) == sql
