"""The row-level change set every database store shares: undo puts back exactly its rows."""

from __future__ import annotations

import sqlite3
from contextlib import closing

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.formats import sqlite_store
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


@given(
    st.dictionaries(st.sampled_from(KEYS), values),
    st.lists(edit, max_size=12),
    st.lists(edit, max_size=12),
)
def test_change_set_revert_restores_its_rows_and_keeps_every_later_write(
    start: dict[str, object],
    repair: list[tuple[str, str, object]],
    later: list[tuple[str, str, object]],
) -> None:
    """Whatever a repair changed (through `RowChanges`, its record as the manifest keeps it),
    and whatever the runtime wrote since to other rows, undo leaves the store as the
    original with only the later writes applied; a later write that changed a row the
    repair wrote makes undo refuse."""
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
                if sqlite_store.read_row(copy, "t", {"id": key}) != was:
                    assert sqlite_store.conflicts(copy, record)
        assert sqlite_store.conflicts(db, record) == []
        assert sqlite_store.revert(db, record) == len(record)
        assert _rows(db) == _rows(expected)
        assert sqlite_store.already_undone(db, record)
