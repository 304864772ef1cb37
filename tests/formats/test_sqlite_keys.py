"""`sqlite_keys.missing_parent`: the parent rows a row needs, by the store's own foreign keys
(review8, finding 7: undo must not put back a part under a message deleted since)."""

from __future__ import annotations

import sqlite3

import pytest

from thinkfix.formats.sqlite_keys import missing_parent


@pytest.fixture
def db() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.executescript(  # a table whose name holds quotes: the script in single quotes
        '''
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT);
        CREATE TABLE part (id TEXT PRIMARY KEY,
            message_id TEXT REFERENCES message(id) ON DELETE CASCADE);
        CREATE TABLE "odd ""name""" (k TEXT, v TEXT, PRIMARY KEY (k, v));
        CREATE TABLE bare (x TEXT);
        CREATE TABLE child (a TEXT, b TEXT, r INTEGER REFERENCES bare,
            FOREIGN KEY (a, b) REFERENCES "odd ""name""");
        INSERT INTO message VALUES ('m1', 's1');
        INSERT INTO "odd ""name""" VALUES ('k', 'v');
        INSERT INTO bare (rowid, x) VALUES (7, 'x');
        '''
    )
    return con


def test_a_part_is_put_back_only_under_its_message(db: sqlite3.Connection) -> None:
    assert missing_parent(db, "part", {"id": "p1", "message_id": "m1"}) is None
    assert (
        missing_parent(db, "part", {"id": "p1", "message_id": "gone"}) == 'message {"id": "gone"}'
    )
    assert missing_parent(db, "part", {"id": "p1", "message_id": None}) is None  # NULL: no parent
    assert missing_parent(db, "message", {"id": "m2", "session_id": "s"}) is None  # no key


def test_a_key_naming_no_column_refers_to_the_primary_key_or_the_rowid(
    db: sqlite3.Connection,
) -> None:
    """A composite key into a table whose name needs quoting, by its primary key; a key
    into a table that declares none, by its rowid."""
    assert missing_parent(db, "child", {"a": "k", "b": "v", "r": 7}) is None
    assert missing_parent(db, "child", {"a": "k", "b": "w", "r": 7}) == (
        'odd "name" {"k": "k", "v": "w"}'
    )
    assert missing_parent(db, "child", {"a": "k", "b": "v", "r": 8}) == 'bare {"rowid": 8}'
