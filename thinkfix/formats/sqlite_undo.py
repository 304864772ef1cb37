"""Undoing a store's change set: which rows a repair changed are no longer what it left,
and putting back exactly what it changed (`sqlite_store.RowChange.to_json` records them).

A row the runtime wrote since in columns the repair did not change is no conflict: undo
puts back the repaired columns alone, so the runtime's later writes to that row stay (a
Crush message's `updated_at`, an OpenCode row's `time_updated`). A row whose repaired
columns changed since, and a row the repair inserted or deleted that changed since, make
undo refuse: putting them back would lose the runtime's writes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from thinkfix.formats.sqlite_keys import missing_parent
from thinkfix.formats.sqlite_store import (
    Row,
    Value,
    decode,
    quote,
    read_row,
    row_hash,
    same_value,
    value_hash,
    where_key,
)
from thinkfix.formats.sqlite_triggers import StoreChanged, Triggers


def _planned(change: dict[str, Any]) -> tuple[str, dict[str, Value], dict[str, Value] | None]:
    """A manifest row record, checked as hostile: plain names, values of column types."""
    table = change.get("table")
    key, before = change.get("key"), change.get("before")
    if not isinstance(table, str) or not isinstance(key, dict) or not key:
        raise StoreChanged("a row record without its table and key")
    quote(table)
    if before is not None and not isinstance(before, dict):
        raise StoreChanged(f"{table}: a row record whose before is not a row")
    return table, _columns(key), None if before is None else _columns(before)


def _columns(values: dict[str, Any]) -> dict[str, Value]:
    for name in values:
        quote(name)
    return {k: decode(v) for k, v in values.items()}


def _by_row(changes: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The changes of each row, in order (a row changed twice is judged by its first before
    and its last after)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for change in changes:
        _planned(change)
        rows.setdefault(json.dumps([change["table"], change["key"]], sort_keys=True), []).append(
            change
        )
    return iter(rows.values())


def _repaired_columns(changes: Sequence[dict[str, Any]]) -> dict[str, str] | None:
    """The columns the repair's updates of one row changed, each with a hash of the value it
    left (a later change's wins); None when one of the changes inserted or deleted the row,
    or its record predates `repaired_columns` (the whole row is judged then)."""
    out: dict[str, str] = {}
    for change in changes:
        columns = change.get("repaired_columns")
        if change.get("before") is None or change.get("after_sha256") is None:
            return None
        if not isinstance(columns, dict):
            return None
        for name, digest in columns.items():
            quote(name)
            if not isinstance(digest, str):
                raise StoreChanged(f"{change['table']}: a column hash that is no hash")
        out.update(columns)
    return out


def _holds(row: Row, columns: Mapping[str, str]) -> bool:
    """Does `row` hold, in each of these columns, the value whose hash is given?"""
    now = dict(row)
    return all(k in now and value_hash(now[k]) == digest for k, digest in columns.items())


def conflicts(db: sqlite3.Connection, changes: Sequence[dict[str, Any]]) -> list[str]:
    """The rows (as `table key`) whose repaired columns are no longer what the repair left
    (the whole row, for a row it inserted or deleted), or that the repair deleted and whose
    parent row the runtime deleted since: undo refuses them. A row the runtime wrote since
    in other columns only is no conflict: undo puts back the repaired columns alone."""
    out = []
    for row_changes in _by_row(changes):
        change = row_changes[-1]
        table, key, before = _planned(change)
        name = f"{table} {json.dumps(change['key'], sort_keys=True)}"
        now = read_row(db, table, key)
        if row_hash(now) != change.get("after_sha256"):
            columns = _repaired_columns(row_changes)
            if columns is None or now is None or not _holds(now, columns):
                out.append(name)
        elif change.get("after_sha256") is None and before is not None:
            gone = missing_parent(db, table, before)
            if gone is not None:
                out.append(f"{name} (its {gone} was deleted since)")
    return out


def already_undone(db: sqlite3.Connection, changes: Sequence[dict[str, Any]]) -> bool:
    """Does every row already hold what it held before the repair (in the columns the
    repair changed, where it recorded them)?"""
    for row_changes in _by_row(changes):
        table, key, before = _planned(row_changes[0])
        now = read_row(db, table, key)
        if (now is None) != (before is None):
            return False
        if now is None or before is None:
            continue
        columns = _repaired_columns(row_changes)
        held = dict(now)
        wanted = before if columns is None else {k: before.get(k) for k in columns}
        if columns is None and held != before:
            return False
        if any(k not in held or not same_value(held[k], v) for k, v in wanted.items()):
            return False
    return True


def revert(
    db: sqlite3.Connection, changes: Sequence[dict[str, Any]], triggers: Triggers | None = None
) -> int:
    """Put every row back as it was before the repair, last change first, inside the caller's
    transaction, firing no trigger (`triggers`, restored at the end); the number of rows
    written. An update sets only the columns that differ, so a trigger `UPDATE OF` another
    column stays quiet. StoreChanged when a row is not what the repair left (nothing
    should be committed then)."""
    stale = conflicts(db, changes)
    if stale:
        raise StoreChanged(", ".join(stale))
    guard = triggers or Triggers(db)
    written = 0
    for change in reversed(changes):
        table, key, before = _planned(change)
        where, params = where_key(key)
        if before is None:
            guard.before(table, "delete")
            cursor = db.execute(f"DELETE FROM {quote(table)} WHERE {where}", params)
        elif change.get("after_sha256") is None:
            guard.before(table, "insert")
            cursor = _insert_back(db, table, before, change.get("rowid"))
        else:
            now = dict(read_row(db, table, key) or ())
            columns = _repaired_columns([change])
            put = before if columns is None else {k: before[k] for k in columns if k in before}
            differ = {k: v for k, v in put.items() if k not in now or not same_value(now[k], v)}
            if not differ:
                continue
            sets = ", ".join(f"{quote(k)} = ?" for k in differ)
            guard.before(table, "update", differ)
            cursor = db.execute(
                f"UPDATE {quote(table)} SET {sets} WHERE {where}", [*differ.values(), *params]
            )
        if cursor.rowcount != 1:
            raise StoreChanged(f"{table}: {cursor.rowcount} rows matched the key {key}")
        written += 1
    guard.restore()
    return written


def _insert_back(
    db: sqlite3.Connection, table: str, row: dict[str, Value], rowid: Any
) -> sqlite3.Cursor:
    """A deleted row inserted again, at its old rowid unless a newer row took it since."""
    names = ", ".join(quote(k) for k in row)
    marks = ", ".join("?" for _ in row)
    if isinstance(rowid, int) and not isinstance(rowid, bool):
        taken = db.execute(f"SELECT 1 FROM {quote(table)} WHERE rowid = ?", (rowid,)).fetchone()
        if taken is None:
            return db.execute(
                f"INSERT INTO {quote(table)} (rowid, {names}) VALUES (?, {marks})",
                [rowid, *row.values()],
            )
    return db.execute(f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", list(row.values()))
