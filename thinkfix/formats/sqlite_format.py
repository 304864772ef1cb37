"""The format side of a SQLite session store: claiming a file, and saying it is a database.

Every format whose sessions can live in SQLite (OpenCode, Crush, Goose, Zed, Cursor) claims a
store by its tables, or by its path when the runtime holds it locked, and changes it row by
row instead of rewriting it from records (`sqlite_store` holds the reading and the rows)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from thinkfix.formats.common import place_elsewhere
from thinkfix.formats.records import Site
from thinkfix.formats.repairs import Placement, PlacementKind
from thinkfix.formats.sqlite_store import MAGIC, StoreInUse, is_database, quote, snapshot

if TYPE_CHECKING:
    from thinkfix.formats.planner import Draft, Plan


def store_confidence(
    head: bytes, path: str, tables: Mapping[str, set[str]], claimed: Callable[[str], bool]
) -> float | None:
    """How sure a store format is that the file at `path` is its store, from its tables; None
    when `head` is not SQLite's (the format may read the file as records). A store locked by its
    runtime, or one SQLite cannot read (cut short, its pages overwritten), has no tables to
    show, so there the format's own claim on the path decides, and reading the file later says
    "in use" or what is wrong with it rather than the file going unread as no session
    (review10: a damaged `crush.db` beside a clean session was skipped, exit 0)."""
    if not head.startswith(MAGIC):
        return None
    if not path or not os.path.isfile(path):
        return 0.0
    try:
        return 0.95 if has_tables(path, tables) else 0.0
    except (StoreInUse, StoreDamaged):
        return 0.95 if claimed(path) else 0.0


class StoreDamaged(Exception):
    """SQLite cannot read the file as a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`)."""


def has_tables(path: str, tables: Mapping[str, Iterable[str]]) -> bool:
    """Does the SQLite file at `path` have these tables with (at least) these columns?
    StoreInUse when it cannot be read now, StoreDamaged when SQLite cannot read it as a
    database at all; False when it lacks them (or cannot be opened: no store there)."""
    try:
        with snapshot(path) as db:
            for table, columns in tables.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({quote(table)})")}
                if not set(columns) <= have:
                    return False
        return True
    except sqlite3.OperationalError:
        return False
    except sqlite3.DatabaseError as exc:  # malformed, not a database: never an empty store
        raise StoreDamaged(str(exc)) from None
    except sqlite3.Error:
        return False


def refuse_emptied(site: Site, what: str = "") -> Placement:
    """A repair refused because the message would show nothing: its text is all reasoning and
    it has no other visible item; `what` says what the empty one would break."""
    reason = "refused: the text is all reasoning and nothing visible would remain"
    return Placement(
        site,
        PlacementKind.REFUSED,
        "not repaired",
        applied=False,
        reason=f"{reason} ({what})" if what else reason,
    )


class DatabaseStore:
    """Mixed in before `FormatBase` by a format whose sessions can be rows of a SQLite store:
    such a file is changed row by row in the caller's transaction (the format's
    `apply_database`), never rewritten from its records."""

    def is_database(self, path: str) -> bool:
        return is_database(path)


class StoreOnly(DatabaseStore):
    """Mixed in, instead of `DatabaseStore`, by a format whose sessions are changed in their
    store alone (Cursor, OpenCode, Zed): a record read from a plain file (an export, OpenCode's
    file store) keeps its reasoning in the repair manifest, and no byte of a record proves it
    free of an assistant message (the role sits in a nested object, or in another file)."""

    #: Why a record read from a file keeps its reasoning in the manifest (its placement says).
    manifest_only: str

    def may_contain_assistant(self, raw: bytes) -> bool:
        return True

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        place_elsewhere(
            draft, PlacementKind.MANIFEST, f"repair manifest only ({self.manifest_only})"
        )
