"""Fixtures that are database stores (#24): how the fixture-walking tests tell them and compare
them, and what every store fixture must satisfy whatever its runtime.

A store is read through the store layer, never as a stream, and compared by its rows and
schema (`support.content`), since SQLite rewrites its header and pages on every write: an
exact undo gives back every row, not every byte.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.engine.repair_helpers import copy_fixtures, copy_unit
from tests.formats.support import (
    FIXTURES,
    content,
    is_store,
    session_files,
    side_files,
    store_content,
    store_of,
    tree_content,
)
from thinkfix.engine.ledger import rows as store
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry

STORES = [p for p in session_files(FIXTURES) if is_store(p)]


def _id(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def _db(path: Path, *, wal: bool = False) -> Path:
    with closing(sqlite3.connect(path)) as db:
        if wal:
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (id TEXT PRIMARY KEY, data BLOB)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [("a", b"\x00\x01"), ("b", None)])
        db.commit()
    return path


def _sql(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as db:
        for sql in statements:
            db.execute(sql)
        db.commit()


def test_a_store_is_compared_by_rows_and_schema_not_bytes(tmp_path: Path) -> None:
    db = _db(tmp_path / "s.db")
    before, raw = content(db), db.read_bytes()
    # a change and its exact undo: the rows are back, SQLite's header is not
    _sql(db, "UPDATE t SET data = x'ff' WHERE id = 'a'")
    assert content(db) != before
    _sql(db, "UPDATE t SET data = x'0001' WHERE id = 'a'")
    assert db.read_bytes() != raw and content(db) == before
    # a row moved to another rowid, a new index, a new user_version: each is a difference
    for change in (
        "UPDATE t SET rowid = 9 WHERE id = 'b'",
        "CREATE INDEX t_data ON t(data)",
        "PRAGMA user_version = 3",
    ):
        copy = tmp_path / "copy.db"
        shutil.copyfile(db, copy)
        _sql(copy, change)
        assert content(copy) != before, change
    assert content(tmp_path / "s.db") == before
    (tmp_path / "plain.jsonl").write_bytes(b"{}\n")
    assert content(tmp_path / "plain.jsonl") == b"{}\n"


def test_a_stores_side_files_are_part_of_it_not_sessions_of_their_own(tmp_path: Path) -> None:
    db = _db(tmp_path / "s.db", wal=True)
    with closing(sqlite3.connect(db)) as keep:  # an open connection keeps the -wal
        keep.execute("PRAGMA wal_autocheckpoint=0")
        keep.execute("INSERT INTO t VALUES ('c', x'02')")
        keep.commit()
        wal = tmp_path / "s.db-wal"
        assert wal.stat().st_size > 0
        (tmp_path / "notes-wal").write_text("not a database's")
        assert store_of(wal) == db and store_of(tmp_path / "notes-wal") is None
        assert session_files(tmp_path) == [tmp_path / "notes-wal", db]
        # the newest row lives only in the -wal, and the store's content has it
        assert ("c", b"\x02") in [row[1:] for row in store_content(db)["tables"]["t"]]
        tree = tree_content(tmp_path)
        assert set(tree) == {"notes-wal", "s.db"} and tree["s.db"] == content(db)
        # copied with its side files (as copy_unit and copy_fixtures do), it reads the same
        dest = tmp_path.parent / "dest"
        dest.mkdir()
        assert wal in side_files(db)
        for part in [db, *side_files(db)]:
            shutil.copyfile(part, dest / part.name)
        assert content(dest / "s.db") == content(db)


def test_copy_fixtures_keeps_every_store_readable(tmp_path: Path) -> None:
    copied = copy_fixtures(tmp_path)
    for path in STORES:
        assert content(copied / path.relative_to(FIXTURES)) == content(path)


@pytest.mark.parametrize("source", STORES, ids=_id)
def test_store_fixture_scan_leaves_its_folder_as_it_was(tmp_path: Path, source: Path) -> None:
    """#24: reading a store (even one in WAL mode) creates no -shm and changes no byte."""
    work = copy_unit(source, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    report = scan([str(work)], ScanOptions(), jobs=1)
    assert not report.errors, report.errors
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("source", STORES, ids=_id)
def test_store_fixture_apply_with_no_repairs_changes_no_row(tmp_path: Path, source: Path) -> None:
    """A store's read-then-write identity: no repair, no row written (a store is never
    written back as bytes, so the byte round trip of other files does not apply)."""
    work = copy_unit(source, tmp_path)
    fmt = registry.detect_file(str(work))
    assert fmt.is_database(str(work))
    placements, changes = store.apply(fmt, str(work), [], backup=None)
    assert placements == [] and changes == []
    assert content(work) == content(source)
