"""A store's foreign keys, read from SQLite itself: the parent rows a row needs.

Undo puts back the rows a repair deleted. A row whose parent the runtime deleted since (a
part whose message the user deleted) must stay deleted, as the runtime's own cascade would
have left it (review8, finding 7: OpenCode's `part.message_id` references `message.id` ON
DELETE CASCADE). The keys are the store's declared ones (`PRAGMA foreign_key_list`), so any
runtime that declares them is covered without a list of its tables here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping


def identifier(name: str) -> str:
    """A name the store's own schema gives (a table, a column), as an SQL identifier: any
    name SQLite allows, its quotes doubled. (A manifest's names are refused unless plain:
    `sqlite_store.quote`; these come from the store being undone.)"""
    return '"' + name.replace('"', '""') + '"'


def missing_parent(db: sqlite3.Connection, table: str, row: Mapping[str, object]) -> str | None:
    """The parent a row would be put back under, by the table's foreign keys, where it is no
    longer there (`parent {"id": ...}`), else None. Undo must not bring back a part whose
    message the user deleted since: the runtime's own cascade would never leave one (review8,
    finding 7: OpenCode's `part.message_id` references `message.id` ON DELETE CASCADE)."""
    keys: dict[int, list[tuple[str, str, str | None]]] = {}
    for fk in db.execute(f"PRAGMA foreign_key_list({identifier(table)})"):
        keys.setdefault(fk[0], []).append((fk[2], fk[3], fk[4]))
    for columns in keys.values():
        parent = columns[0][0]
        values = [row.get(source) for _, source, _ in columns]
        if any(v is None for v in values):
            continue  # a NULL key constrains nothing
        named = [target for _, _, target in columns if target]
        targets = named if len(named) == len(columns) else _primary_key(db, parent, len(columns))
        where = " AND ".join(f"{identifier(t) if t != 'rowid' else t} = ?" for t in targets)
        query = f"SELECT 1 FROM {identifier(parent)} WHERE {where} LIMIT 1"
        if db.execute(query, values).fetchone():
            continue
        return f"{parent} {json.dumps(dict(zip(targets, values, strict=True)), sort_keys=True)}"
    return None


def _primary_key(db: sqlite3.Connection, table: str, n: int) -> list[str]:
    """The columns a foreign key that names none refers to: the parent's primary key (its
    rowid where it declares none)."""
    info = db.execute(f"PRAGMA table_info({identifier(table)})").fetchall()
    pk = [name for _, name, _, _, _, position in sorted(info, key=lambda c: c[5]) if position]
    return pk if len(pk) == n else ["rowid"] * n
