"""Session stores that are SQLite databases: read without a trace, changed row by row.

What every runtime whose sessions live in SQLite shares (OpenCode today; Crush, Goose, Zed,
Kilo CLI and Cursor keep theirs the same way), so each of their format modules only says
which rows hold a session and how a repair changes them:

- `snapshot(path)`: a read-only connection that leaves the store's folder exactly as it was
  (no `-shm` or `-wal` created, no byte or mtime changed) and still reads the newest rows,
  which live only in `-wal` while the runtime runs. `StoreInUse` when another process holds
  the store exclusively locked.
- `RowChanges`: the row edits of one repair, each with the whole row before and a hash of
  the row after (and of each column it changed), which is what `undo` puts back (and
  checks) row by row (`sqlite_undo`), leaving every row, and every column, the runtime
  wrote since as it is.
- `Triggers`: keeps every write of a repair or its undo from firing a trigger: the
  runtime's own triggers (matched against its migrations' text) are dropped and created
  again in the same transaction, any other trigger the write would fire refuses it.

How the read stays traceless (measured with SQLite 3.40 on Linux: tests/formats/test_opencode.py):
a plain `mode=ro` connection to a WAL store creates `-shm` (and an empty `-wal` when there
was none) and writes read marks into an existing `-shm`. So: with no `-wal` (or an empty one)
and no hot `-journal`, the file alone holds every row and is opened `immutable=1` (no locks,
no side files), its size, mtime and inode compared before and after the read; with a `-wal`
and its `-shm`, `readonly_shm=1` maps the `-shm` read-only (SQLite rebuilds the index in heap
memory when no runtime holds it, and obeys a live runtime's locks); a `-wal` without its `-shm`,
or a hot `-journal`, is copied with the database into a private temporary folder and read
there. Locks are probed with `F_GETLK`, which takes none.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any

from thinkfix.formats.sqlite_triggers import Triggers
from thinkfix.io.storedtext import stored_text

MAGIC = b"SQLite format 3\x00"
#: How long a read waits for an exclusive lock to go (a commit holds one for milliseconds).
LOCK_WAIT = 1.0
#: How many times a read whose files changed under it is tried again.
READ_TRIES = 3

Value = str | int | float | bytes | None
Row = tuple[tuple[str, Value], ...]  # (column, value) in the table's column order

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# SQLite's lock bytes (os_unix.c): PENDING, RESERVED, then the SHARED range.
_PENDING, _SHARED_FIRST, _SHARED_SIZE = 0x40000000, 0x40000002, 510
from thinkfix.formats.sqlite_triggers import StoreChanged


class StoreInUse(OSError):
    """Another process holds the store locked (or kept changing it): nothing was read."""

    def __init__(self, path: str, why: str = "") -> None:
        super().__init__(
            f"{path}: in use ({why or 'another process holds it exclusively locked'}); "
            "left as it is, try again when its runtime is idle"
        )


# --- reading without a trace -------------------------------------------------------------


def connect(path: str, *, timeout: float = 5.0, **params: str) -> sqlite3.Connection:
    """A connection to the file at `path` (URI parameters as keywords), in autocommit mode,
    whose text values that are not UTF-8 raise `NotText` (`io.storedtext.stored_text`)."""
    quoted = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    uri = f"file:{quoted}?" + "&".join(f"{k}={v}" for k, v in params.items())
    db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    db.text_factory = stored_text
    return db


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _stamp(path: str) -> tuple[tuple[int, int, int] | None, ...]:
    """Size, mtime and inode of the database and its side files: what a writer moves."""
    out: list[tuple[int, int, int] | None] = []
    for name in (path, path + "-wal", path + "-journal"):
        try:
            st = os.stat(name)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


def _flock_layout() -> str | None:
    if sys.platform.startswith("linux"):
        return "hhqqi4x"  # l_type, l_whence, l_start, l_len, l_pid
    if sys.platform == "darwin" or "bsd" in sys.platform:
        return "qqihh"  # l_start, l_len, l_pid, l_type, l_whence
    return None


def exclusive_holder(path: str) -> bool:
    """Does another process hold the write lock readers need (SQLite's EXCLUSIVE, or
    PENDING on its way there)? Asked with F_GETLK, which takes no lock; False where the
    platform cannot ask (SQLite's own busy error then says it)."""
    layout = _flock_layout()
    if layout is None:
        return False
    import fcntl

    wanted = {"l_type": fcntl.F_RDLCK, "l_whence": os.SEEK_SET}
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        for start, length in ((_PENDING, 1), (_SHARED_FIRST, _SHARED_SIZE)):
            fields = dict(wanted, l_start=start, l_len=length, l_pid=0)
            order = (
                ("l_type", "l_whence", "l_start", "l_len", "l_pid")
                if layout.startswith("hh")
                else ("l_start", "l_len", "l_pid", "l_type", "l_whence")
            )
            packed = struct.pack(layout, *(fields[k] for k in order))
            answer = struct.unpack(layout, fcntl.fcntl(fd, fcntl.F_GETLK, packed))
            if answer[order.index("l_type")] == fcntl.F_WRLCK:
                return True
        return False
    except OSError:
        return False
    finally:
        os.close(fd)


def _wait_unlocked(path: str) -> None:
    deadline = time.monotonic() + LOCK_WAIT
    while exclusive_holder(path):
        if time.monotonic() >= deadline:
            raise StoreInUse(path)
        time.sleep(0.05)


class StoreSchema(sqlite3.OperationalError, ValueError):
    """The store lacks a table or column its format reads: a build of the runtime thinkfix
    does not know migrated it, or another program's database took the store's name (a
    ValueError too, so a scan says it in words, as it says a file it cannot parse)."""


@contextmanager
def snapshot(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the store at `path` that leaves its folder untouched and sees
    its newest committed rows. StoreInUse when it is exclusively locked, or kept changing
    under every try; StoreSchema when a read names a table or column the store lacks. Must
    not be called while this process holds a write transaction on the store: closing any
    descriptor of a file drops the process's POSIX locks on it."""
    try:
        with _snapshot(path) as db:
            yield db
    except StoreSchema:
        raise
    except sqlite3.OperationalError as exc:
        if str(exc).startswith(("no such table", "no such column")):
            raise StoreSchema(
                f"not the store's schema thinkfix reads ({exc}): a build of the runtime it "
                "does not know, or another program's database of that name"
            ) from None
        raise


@contextmanager
def _snapshot(path: str) -> Iterator[sqlite3.Connection]:
    _wait_unlocked(path)
    if _size(path + "-wal") > 0:
        if os.path.exists(path + "-shm"):
            with _busy_is_in_use(path), closing(connect(path, mode="ro", readonly_shm="1")) as db:
                yield db
            return
        with _private_copy(path) as copy, closing(connect(copy, mode="ro")) as db:
            yield db
        return
    if _size(path + "-journal") > 0:  # a hot journal is rolled back on open: a write
        with _private_copy(path) as copy, closing(connect(copy)) as db:
            yield db
        return
    before = _stamp(path)
    with _busy_is_in_use(path), closing(connect(path, mode="ro", immutable="1")) as db:
        yield db
    if _stamp(path) != before:
        raise StoreInUse(path, "it changed while it was read; read it again")


@contextmanager
def _busy_is_in_use(path: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreInUse(path) from None
        raise


@contextmanager
def _private_copy(path: str) -> Iterator[str]:
    """The database and its side files copied into a private folder, untorn (their sizes,
    mtimes and inodes the same before and after the copy), removed afterwards."""
    folder = tempfile.mkdtemp(prefix="thinkfix-store-")
    try:
        copy = os.path.join(folder, "store.db")
        for _ in range(READ_TRIES):
            before = _stamp(path)
            for suffix in ("", "-wal", "-journal"):
                if os.path.exists(path + suffix):
                    shutil.copyfile(path + suffix, copy + suffix)
            if _stamp(path) == before:
                break
            _wait_unlocked(path)
        else:
            raise StoreInUse(path, "it kept changing while it was copied to be read")
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def is_database(path: str) -> bool:
    """Does the file at `path` start with SQLite's magic bytes?"""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


# --- row changes and their undo ------------------------------------------------------------


def quote(name: str) -> str:
    """An identifier as SQL, refused unless it is a plain name (a manifest names tables)."""
    if not _IDENTIFIER.match(name):
        raise StoreChanged(f"{name!r} is not a plain SQL name")
    return f'"{name}"'


def where_key(key: Mapping[str, Value]) -> tuple[str, list[Value]]:
    return " AND ".join(f"{quote(k)} IS ?" for k in key), list(key.values())


def read_row(db: sqlite3.Connection, table: str, key: Mapping[str, Value]) -> Row | None:
    """The whole row of `table` with this key, or None; StoreChanged when several match."""
    where, params = where_key(key)
    cursor = db.execute(f"SELECT * FROM {quote(table)} WHERE {where}", params)
    rows = cursor.fetchmany(2)
    if len(rows) > 1:
        raise StoreChanged(f"{table}: several rows have the key {dict(key)}")
    if not rows:
        return None
    return tuple((d[0], v) for d, v in zip(cursor.description, rows[0], strict=True))


def encode(value: Value) -> Any:
    """A column value as JSON: bytes as base64 and a non-finite real tagged, the rest as is."""
    if isinstance(value, bytes):
        return {"blob": base64.b64encode(value).decode("ascii")}
    if isinstance(value, float) and not math.isfinite(value):  # no JSON number for these
        return {"real": repr(value)}
    return value


def decode(value: Any) -> Value:
    if isinstance(value, dict) and isinstance(value.get("blob"), str):
        return base64.b64decode(value["blob"], validate=True)
    if isinstance(value, dict) and isinstance(value.get("real"), str):
        return float(value["real"])
    if value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value
    raise StoreChanged(f"{value!r} is not a column value")


def row_hash(row: Row | None) -> str | None:
    """A hash of a whole row (columns and values), None for no row."""
    if row is None:
        return None
    canon = json.dumps([[k, encode(v)] for k, v in row], ensure_ascii=True, sort_keys=True)
    return hashlib.sha256(canon.encode("ascii")).hexdigest()


def value_hash(value: Value) -> str:
    """A hash of one column value, its type kept (1 and 1.0 are two values to SQLite)."""
    canon = json.dumps(encode(value), ensure_ascii=True, sort_keys=True)
    return hashlib.sha256(canon.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class RowChange:
    """One row a repair inserted (`before` None), updated, or deleted (`after` None)."""

    table: str
    key: tuple[tuple[str, Value], ...]
    before: Row | None
    after: Row | None
    rowid: int | None = None  # a deleted row's rowid, so undo puts it back where it was

    def to_json(self) -> dict[str, Any]:
        """The manifest's record: the whole row before (undo writes it back), a hash of the
        row after (undo proves the row is still what the repair left) and, for an update, a
        hash of each column's value the repair changed (`repaired_columns`: a row the runtime
        wrote since in other columns only is still undone, those columns kept)."""
        out: dict[str, Any] = {
            "table": self.table,
            "key": {k: encode(v) for k, v in self.key},
            "before": None if self.before is None else {k: encode(v) for k, v in self.before},
            "after_sha256": row_hash(self.after),
            "rowid": self.rowid,
        }
        if self.before is not None and self.after is not None:
            was = dict(self.before)
            out["repaired_columns"] = {
                k: value_hash(v) for k, v in self.after if k not in was or not same_value(was[k], v)
            }
        return out


class RowChanges:
    """A store's connection, through which a repair makes its row edits: each is recorded
    with the whole row before and after, must touch exactly one row, and fires no trigger
    (`triggers`: the caller restores the runtime's own triggers it kept from firing)."""

    def __init__(self, db: sqlite3.Connection, triggers: Triggers | None = None) -> None:
        self.db = db
        self.triggers = triggers or Triggers(db)
        self.changes: list[RowChange] = []

    def execute(self, sql: str, params: Sequence[Value] = ()) -> sqlite3.Cursor:
        """A read (a SELECT); writes go through insert, update and delete."""
        return self.db.execute(sql, params)

    @property
    def tables(self) -> list[str]:
        return sorted({c.table for c in self.changes})

    def insert(self, table: str, row: Mapping[str, Value], key: Sequence[str]) -> None:
        names = ", ".join(quote(k) for k in row)
        marks = ", ".join("?" for _ in row)
        self.triggers.before(table, "insert")
        self.db.execute(
            f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", list(row.values())
        )
        self._record(table, {k: row[k] for k in key}, None)

    def update(self, table: str, key: Mapping[str, Value], values: Mapping[str, Value]) -> None:
        before = self._existing(table, key)
        where, params = where_key(key)
        sets = ", ".join(f"{quote(k)} = ?" for k in values)
        self.triggers.before(table, "update", values)
        self.db.execute(
            f"UPDATE {quote(table)} SET {sets} WHERE {where}", [*values.values(), *params]
        )
        self._record(table, dict(key), before)

    def delete(self, table: str, key: Mapping[str, Value]) -> None:
        before = self._existing(table, key)
        where, params = where_key(key)
        try:
            found = self.db.execute(f"SELECT rowid FROM {quote(table)} WHERE {where}", params)
            rowid = found.fetchone()[0]
        except sqlite3.OperationalError:  # a WITHOUT ROWID table
            rowid = None
        self.triggers.before(table, "delete")
        self.db.execute(f"DELETE FROM {quote(table)} WHERE {where}", params)
        self._record(table, dict(key), before, rowid)

    def _existing(self, table: str, key: Mapping[str, Value]) -> Row:
        row = read_row(self.db, table, key)
        if row is None:
            raise StoreChanged(f"{table}: no row has the key {dict(key)}")
        return row

    def _record(
        self, table: str, key: Mapping[str, Value], before: Row | None, rowid: int | None = None
    ) -> None:
        after = read_row(self.db, table, key)
        self.changes.append(RowChange(table, tuple(key.items()), before, after, rowid))


def digest(changes: Iterable[dict[str, Any]], side: str) -> str:
    """A hash over a change set's rows before (`side` "before") or after, in order."""
    h = hashlib.sha256()
    for c in changes:
        value = c["before"] if side == "before" else c["after_sha256"]
        h.update(json.dumps([c["table"], c["key"], value], sort_keys=True).encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def same_value(a: Value, b: Value) -> bool:
    """The same column value to SQLite: of one type (1 and 1.0 are not) and equal."""
    return type(a) is type(b) and encode(a) == encode(b)
