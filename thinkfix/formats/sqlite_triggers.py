"""Triggers: a repair's write fires none. A trigger the planned write would fire refuses the store, unless it is the runtime's own (its stored SQL the same as the runtime's migration), which is dropped and created again around the writes in the same transaction."""

from __future__ import annotations

import functools
import itertools
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass


class StoreChanged(Exception):
    """A row is not what a change set expects (changed since, or missing): nothing written."""


# --- triggers: a write fires none --------------------------------------------------------

_TOKEN = re.compile(
    r"""\s+|--[^\n]*|/\*.*?(?:\*/|\Z)
    |(?P<quoted>"(?:[^"]|"")*"|\[[^\]]*\]|`(?:[^`]|``)*`|'(?:[^']|'')*')
    |(?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    |(?P<mark>.)""",
    re.DOTALL | re.VERBOSE,
)
_EVENTS = ("insert", "update", "delete")


def _tokens(sql: str) -> Iterator[tuple[str, str]]:
    """(kind, text) of the SQL's tokens, comments and spaces left out; a word lower-cased,
    a quoted name unquoted (kind "name"), so that a quoted `"update"` is never a keyword."""
    for m in _TOKEN.finditer(sql):
        if m.group("word"):
            yield "word", m.group("word").lower()
        elif m.group("quoted"):
            q = m.group("quoted")
            kind = "string" if q[0] == "'" else "name"
            yield kind, q[1:-1].replace(q[0] * 2, q[0]) if q[0] != "[" else q[1:-1]
        elif m.group("mark"):
            yield "mark", m.group("mark")


#: The tokens a trigger's head (CREATE ... ON table) may take; a longer one is not read.
_HEAD_TOKENS = 4096


@dataclass(frozen=True)
class _Head:
    """When a CREATE TRIGGER statement fires, as its text says."""

    event: str | None  # insert, update or delete; None when the text is not one we read
    columns: frozenset[str] | None  # UPDATE OF these (lower case); None: any column
    table: str | None


def _head(sql: str) -> _Head:
    """Read a CREATE TRIGGER statement's head (up to `ON table`); anything else is unread."""
    toks = list(itertools.islice(_tokens(sql), _HEAD_TOKENS))
    unread = _Head(None, None, None)

    def at(i: int, *words: str) -> bool:
        return i < len(toks) and toks[i][0] == "word" and toks[i][1] in words

    def name(i: int) -> tuple[str | None, int]:
        """A possibly schema-qualified name at `i`: (its last part, the index after it)."""
        if i >= len(toks) or toks[i][0] not in ("word", "name"):
            return None, i
        if (
            i + 2 < len(toks)
            and toks[i + 1] == ("mark", ".")
            and toks[i + 2][0] in ("word", "name")
        ):
            return toks[i + 2][1], i + 3
        return toks[i][1], i + 1

    if not at(0, "create"):
        return unread
    i = 2 if at(1, "temp", "temporary") else 1
    if not at(i, "trigger"):
        return unread
    i += 1
    if at(i, "if") and at(i + 1, "not") and at(i + 2, "exists"):
        i += 3
    trigger, i = name(i)
    if trigger is None:
        return unread
    if at(i, "before", "after"):
        i += 1
    elif at(i, "instead") and at(i + 1, "of"):
        i += 2
    if not at(i, *_EVENTS):
        return unread
    event, columns = toks[i][1], None
    i += 1
    if event == "update" and at(i, "of"):
        found: set[str] = set()
        while True:
            column, i = name(i + 1)
            if column is None:
                return unread
            found.add(column.lower())
            if toks[i : i + 1] != [("mark", ",")]:
                break
        columns = frozenset(found)
    if not at(i, "on"):
        return unread
    table, _ = name(i + 1)
    return _Head(event, columns, table) if table is not None else unread


@dataclass(frozen=True)
class Trigger:
    """A trigger of the store and when it fires (read from its text)."""

    name: str
    table: str
    sql: str

    def fires(self, op: str, columns: Iterable[str] = ()) -> bool:
        """Would a write (`op` insert, update or delete; an update setting `columns`) fire it?
        Yes for a trigger whose text we cannot read; a WHEN clause is taken to hold."""
        head = _head(self.sql)
        if head.event is None:
            return True
        if head.event != op:
            return False
        return head.columns is None or bool(head.columns & {c.lower() for c in columns})

    def __str__(self) -> str:
        return f"{self.name} ON {self.table}"


def triggers_on(db: sqlite3.Connection, tables: Iterable[str]) -> list[Trigger]:
    """The triggers on these tables, in the order the store keeps them."""
    wanted = sorted({t.lower() for t in tables})
    if not wanted:
        return []
    marks = ", ".join("?" for _ in wanted)
    rows = db.execute(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' "
        f"AND lower(tbl_name) IN ({marks}) ORDER BY rowid",
        wanted,
    )
    return [Trigger(name, table, sql or "") for name, table, sql in rows]


@functools.lru_cache(maxsize=64)
def stored_sql(statement: str) -> str:
    """A CREATE TRIGGER statement as SQLite keeps it in `sqlite_master` (its own normalising:
    IF NOT EXISTS and leading space dropped, ...): made on a scratch database and read back."""
    table = _head(statement).table
    if table is None:
        raise ValueError(f"not a CREATE TRIGGER statement: {statement[:60]!r}")
    with closing(sqlite3.connect(":memory:")) as scratch:
        scratch.execute(f"CREATE TABLE {_quote_any(table)} (x)")
        scratch.execute(statement)
        (sql,) = scratch.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'").fetchone()
    return str(sql)


def _quote_any(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class TriggerFires(StoreChanged):
    """A write would fire triggers that are not the runtime's own: it was not made."""

    def __init__(self, fired: Sequence[Trigger]) -> None:
        self.fired = list(fired)
        super().__init__(", ".join(str(t) for t in fired))


class Triggers:
    """Keeps every write of a repair or its undo from firing a trigger. Before each write,
    the triggers it would fire (its table's, for its operation and, for an update, the
    columns it sets) are looked up: the runtime's own (`own`: the CREATE TRIGGER statements
    of its migrations, matched as SQLite stores them, so an altered one is not its own) are
    dropped until `restore` creates them again from their own text, in the same
    transaction; any other refuses the write before it runs (TriggerFires)."""

    def __init__(self, db: sqlite3.Connection, own: Iterable[str] = ()) -> None:
        self.db = db
        self.own = frozenset(stored_sql(s) for s in own)
        self.dropped: list[Trigger] = []

    def before(self, table: str, op: str, columns: Iterable[str] = ()) -> None:
        names = list(columns)
        fired = [t for t in triggers_on(self.db, [table]) if t.fires(op, names)]
        strangers = [t for t in fired if t.sql not in self.own]
        if strangers:
            raise TriggerFires(strangers)
        for trigger in fired:
            self.db.execute(f"DROP TRIGGER {_quote_any(trigger.name)}")
            self.dropped.append(trigger)

    def restore(self) -> None:
        """Create the dropped triggers again, in the order the store kept them."""
        for trigger in self.dropped:
            self.db.execute(trigger.sql)
        self.dropped.clear()
