"""Undo of a store keeps what the runtime wrote since in a repaired row's other columns.

Before, the change set recorded a hash of each repaired row as a whole: a runtime that
wrote any column of a repaired row since (Crush stamping a message's `updated_at`, as its
own trigger does on every update of the row) made undo refuse the whole store, "rows the
repair wrote changed since", though putting back the repaired column would have lost
nothing. Now each updated row's record names the columns the repair changed, with a hash
of the value it left in each: undo puts back those columns alone, and refuses only when one
of them changed since.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from tests.formats import crush_db
from tests.formats.crush_db import finish, reasoning, text, tool_call
from thinkfix.engine.ledger import integrity, journal, restore
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.formats import sqlite_undo
from thinkfix.formats.crush import go_json
from thinkfix.formats.sqlite_store import RowChanges, same_value, value_hash

KEYS = [f"k{n}" for n in range(6)]
values = st.one_of(st.none(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=4))


def _db(rows: dict[str, tuple[object, object]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (id text PRIMARY KEY, v, w)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(k, v, w) for k, (v, w) in rows.items()])
    return db


def _rows(db: sqlite3.Connection) -> list[tuple[object, ...]]:
    return sorted(db.execute("SELECT id, v, w FROM t"), key=repr)


@given(
    st.dictionaries(st.sampled_from(KEYS), st.tuples(values, values), min_size=1),
    st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=6),
    st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=6),
)
def test_undo_puts_back_the_repaired_column_and_keeps_the_runtimes_other_column(
    start: dict[str, tuple[object, object]],
    repair: list[tuple[str, object]],
    later: list[tuple[str, object]],
) -> None:
    """The repair writes `v` (through `RowChanges`, as a format's repair does); the runtime
    then writes `w` of any row. Undo leaves every row with its `v` from before the repair and
    its `w` as the runtime wrote it."""
    with closing(_db(start)) as db, closing(_db(start)) as expected:
        writer = RowChanges(db)
        for key, value in repair:
            if key in start:
                writer.update("t", {"id": key}, {"v": value})
        record = [c.to_json() for c in writer.changes]
        for key, value in later:
            for target in (db, expected):
                target.execute("UPDATE t SET w = ? WHERE id = ?", (value, key))
        assert sqlite_undo.conflicts(db, record) == []
        sqlite_undo.revert(db, record)
        assert _rows(db) == _rows(expected)
        assert sqlite_undo.already_undone(db, record)


@given(st.tuples(values, values), values, values)
def test_a_repaired_column_written_since_still_refuses(
    row: tuple[object, object], repaired: object, since: object
) -> None:
    """Undo refuses exactly when the column the repair changed holds another value (or
    type) since; an update that changed nothing leaves nothing to put back."""
    with closing(_db({"k0": row})) as db:
        writer = RowChanges(db)
        writer.update("t", {"id": "k0"}, {"v": repaired})
        record = [c.to_json() for c in writer.changes]
        db.execute("UPDATE t SET v = ? WHERE id = 'k0'", (since,))
        changed = not same_value(row[0], repaired)  # type: ignore[arg-type]
        moved = not same_value(since, repaired)  # type: ignore[arg-type]
        expected = ['t {"id": "k0"}'] if changed and moved else []
        assert sqlite_undo.conflicts(db, record) == expected


def test_a_record_without_repaired_columns_is_judged_whole() -> None:
    """A manifest written before the columns were recorded: any change to the row refuses."""
    with closing(_db({"k0": (1, 2)})) as db:
        writer = RowChanges(db)
        writer.update("t", {"id": "k0"}, {"v": 3})
        (record,) = [c.to_json() for c in writer.changes]
        assert record["repaired_columns"] == {"v": value_hash(3)}
        del record["repaired_columns"]
        db.execute("UPDATE t SET w = 9 WHERE id = 'k0'")
        assert sqlite_undo.conflicts(db, [record]) == ['t {"id": "k0"}']


# --- Crush: the runtime stamps the repaired message ------------------------------------------


def _store(tmp_path: Path) -> Path:
    folder = tmp_path / ".crush"
    folder.mkdir(parents=True)
    return crush_db.build(folder / "crush.db", crush_db.LEAKY)


def _message(path: Path, mid: str) -> dict[str, Any]:
    with closing(sqlite3.connect(path)) as db:
        db.row_factory = sqlite3.Row
        return dict(db.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone())


def test_crush_undo_keeps_the_updated_at_crush_stamped_since(tmp_path: Path) -> None:
    """Crush's `update_messages_updated_at` trigger stamps a message's `updated_at` on every
    update of its row (`internal/db/migrations`): after a repair, the runtime touching the
    message made undo refuse the store (failed before)."""
    store = _store(tmp_path)
    before = _message(store, crush_db.LEAKY_ID)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN and result.manifest_path is not None
    assert _message(store, crush_db.LEAKY_ID)["parts"] != before["parts"]
    with closing(sqlite3.connect(store)) as db:  # Crush's trigger stamps updated_at: now
        db.execute(
            "UPDATE messages SET finished_at = ? WHERE id = ?",
            (crush_db.T0 + 901, crush_db.LEAKY_ID),
        )
        db.commit()
    stamped = _message(store, crush_db.LEAKY_ID)
    assert stamped["updated_at"] != before["updated_at"]
    undone = restore.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.CLEAN, undone.errors
    assert _message(store, crush_db.LEAKY_ID) == {
        **before,
        "updated_at": stamped["updated_at"],  # undo fires no trigger: the stamp stays
        "finished_at": crush_db.T0 + 901,
    }


def test_crush_undo_refuses_when_crush_rewrote_the_repaired_parts(tmp_path: Path) -> None:
    store = _store(tmp_path)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    newer = [
        reasoning("Crush's own, since."),
        text("Rewritten since."),
        tool_call("c9", "ls", {"path": "."}),
        finish("end_turn"),
    ]
    with closing(sqlite3.connect(store)) as db:
        db.execute(
            "UPDATE messages SET parts = ? WHERE id = ?",
            (go_json(newer), crush_db.LEAKY_ID),
        )
        db.commit()
    kept = _message(store, crush_db.LEAKY_ID)
    undone = restore.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.ERROR
    assert _message(store, crush_db.LEAKY_ID) == kept


@pytest.mark.parametrize("bad", [{"parts": "not a hash"}, {"parts": 3}, ["parts"]])
def test_a_manifest_with_odd_repaired_columns_fails_its_check(tmp_path: Path, bad: object) -> None:
    store = _store(tmp_path)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    manifest = journal.load_manifest(result.manifest_path)
    (entry,) = manifest["files"]
    entry["rows"][0]["repaired_columns"] = bad
    with pytest.raises(integrity.IntegrityError, match="repaired_columns"):
        integrity.check_document(manifest, str(result.manifest_path))
