"""Repair of session stores that are databases (OpenCode's `opencode.db`), and their undo.

A database is never rewritten as bytes: its rows change inside one transaction, taken
with `BEGIN IMMEDIATE` so that a runtime holding the write lock makes the repair refuse
(busy), never wait or race. Every row edit goes through `RowChanges`, which records the
whole row before and a hash of the row after; the manifest keeps that change set, and
`undo` puts back exactly those rows (deleting the parts the repair inserted), in one
`BEGIN IMMEDIATE` transaction held from its check to its last write, leaving every row the
runtime wrote since as it is. A row the repair wrote that changed since makes undo refuse
that store. Neither fires a trigger: one their writes would fire refuses the store,
unless it is the runtime's own (Crush's `updated_at` trigger, its text the same as in the
runtime's migrations), which is dropped and created again around the writes in the same
transaction; both prove with `total_changes()` that no row other than those planned
changed (a foreign key action, a trigger not seen), rolling back otherwise. Before the first write the store is also copied with
SQLite's online backup API into the run's backup folder, a copy kept for the user. Dry
runs apply the same row edits to an in-memory copy, so what they report is what a write
would do.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any

from thinkfix.formats import registry, sqlite_store, sqlite_undo
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.repairs import Placement, Repair
from thinkfix.formats.sqlite_store import RowChange, RowChanges, StoreInUse
from thinkfix.formats.sqlite_triggers import StoreChanged, TriggerFires, Triggers
from thinkfix.io import filestate
from thinkfix.io.errors import ErrorKind

#: How long a write waits for the runtime's lock: not at all (busy means "in use, refuse").
BUSY_TIMEOUT = 0.0


class StoreBusy(filestate.WriteError):
    """The runtime holds the store's write lock: nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: in use (another process holds its write lock, as OpenCode "
            "does while it runs); left as it is, try again when it is idle",
            ErrorKind.CHANGED,
        )


class StoreRefused(filestate.WriteError):
    """A write that would touch rows it did not plan (a trigger), or rows changed since:
    rolled back, nothing written."""


@contextmanager
def _transaction(path: str) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` on the store, committed when the block ends, rolled back when it
    raises; StoreBusy when the runtime holds the write lock."""
    with closing(sqlite_store.connect(path, timeout=BUSY_TIMEOUT)) as db:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(path) from None
            raise
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise


def own_triggers(fmt: SessionFormat | None) -> tuple[str, ...]:
    """The CREATE TRIGGER statements of a runtime's own migrations, which its format lists
    (`own_triggers`, Crush's `updated_at` trigger) so that a write may keep them from
    firing; none for every other format."""
    found = getattr(fmt, "own_triggers", ())
    return tuple(s for s in found if isinstance(s, str))


def _guarded(
    path: str,
    db: sqlite3.Connection,
    write: Callable[[Triggers], int],
    fmt: SessionFormat | None,
) -> None:
    """Run `write` (the number of rows it meant to change) inside the caller's transaction,
    firing no trigger: the runtime's own are dropped and created again around it, any other
    it would fire refuses it before it runs. Kept only when no row other than those planned
    changed (total_changes(), the proof: a foreign key action, a trigger not seen):
    StoreRefused otherwise, for the caller to roll back."""
    triggers = Triggers(db, own_triggers(fmt))
    start = db.total_changes
    try:
        planned = write(triggers)
    except TriggerFires as exc:
        raise StoreRefused(
            f"{path}: has triggers that the rows a repair or undo writes would fire "
            f"({exc}); writing would change rows nobody planned; rolled back, left as it is",
            ErrorKind.WRITE_FAILED,
        ) from None
    triggers.restore()
    made = db.total_changes - start
    if made != planned:
        raise StoreRefused(
            f"{path}: {made} rows changed where {planned} were planned (a foreign key "
            "action or another rule of the store); rolled back, left as it is",
            ErrorKind.WRITE_FAILED,
        )


def _apply_checked(
    fmt: SessionFormat, path: str, db: sqlite3.Connection, repairs: list[Repair]
) -> tuple[list[Placement], list[RowChange]]:
    """The format's row edits, recorded, kept only as `_guarded` allows."""
    placements: list[Placement] = []
    changes: list[RowChange] = []

    def write(triggers: Triggers) -> int:
        recorder = RowChanges(db, triggers)
        placements.extend(fmt.apply_database(recorder, repairs))
        changes.extend(recorder.changes)
        return len(recorder.changes)

    _guarded(path, db, write, fmt)
    return placements, changes


def rehearse(fmt: SessionFormat, path: str, repairs: list[Repair]) -> list[Placement]:
    """What the repairs would do, worked out on an in-memory copy (the file is only read)."""
    with sqlite_store.snapshot(path) as src, closing(sqlite3.connect(":memory:")) as copy:
        src.backup(copy)
        copy.isolation_level = None
        copy.execute("BEGIN")
        try:
            placements, _ = _apply_checked(fmt, path, copy, repairs)
        finally:
            copy.execute("ROLLBACK")
    return placements


def copy_store(source: str, target: str) -> None:
    """A consistent copy of a live store (the online backup API), written to a new file,
    read without a trace."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    partial = target + ".thinkfix-tmp"
    with sqlite_store.snapshot(source) as src, closing(sqlite3.connect(partial)) as dst:
        src.backup(dst)
    os.replace(partial, target)


def _backup_locked(source: str, target: str) -> None:
    """The online copy made inside the repair's own transaction: a plain read-only connection
    (this process holds the write lock, so the store is read as SQLite shares it in-process;
    `snapshot` would open and close a descriptor of its own, dropping that lock)."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    partial = target + ".thinkfix-tmp"
    with (
        closing(sqlite_store.connect(source, mode="ro")) as src,
        closing(sqlite3.connect(partial)) as dst,
    ):
        src.backup(dst)
    os.replace(partial, target)


Journal = Callable[[list[RowChange], list[Placement]], None]


def apply(
    fmt: SessionFormat,
    path: str,
    repairs: list[Repair],
    *,
    backup: str | None,
    journal: Journal | None = None,
) -> tuple[list[Placement], list[RowChange]]:
    """Apply `repairs` to the store at `path` in one transaction: (placements, row changes).
    `backup` (when given) receives an online copy before the first write, and
    `journal(changes, placements)` is called before the commit, so the manifest entry is
    durable before the store changes. StoreBusy when the runtime holds the lock,
    StoreRefused (rolled back) when the store has triggers on what the repair writes or a
    row nobody planned changed."""
    with _transaction(path) as db:
        if backup is not None:
            _backup_locked(path, backup)
        placements, changes = _apply_checked(fmt, path, db, repairs)
        if journal is not None:
            journal(changes, placements)
    return placements, changes


# --- undo ------------------------------------------------------------------------------------

LEGACY = (
    "recorded by an older thinkfix, whose undo of a database restored the whole file "
    "(losing every row the runtime wrote since); this one puts back only the rows a repair "
    "changed, which that manifest does not list. Refused: the store is left as it is"
)


def rows(entry: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The entry's change set, None for an entry written before change sets were recorded."""
    found = entry.get("rows")
    return found if isinstance(found, list) else None


def state(entry: dict[str, Any]) -> tuple[str, str]:
    """Where the store stands against the entry's change set, read without a trace:
    ("after", ""), ("before", ""), ("changed", why) or ("failed", why)."""
    target, changes = entry["target"], rows(entry)
    if changes is None:
        backup = (entry.get("before") or {}).get("backup")
        where = f"; its backup is {backup}" if backup else ""
        return "failed", f"{target}: {LEGACY}{where}"
    try:
        with sqlite_store.snapshot(target) as db:
            stale = sqlite_undo.conflicts(db, changes)
            if not stale:
                return "after", ""
            if sqlite_undo.already_undone(db, changes):
                return "before", ""
    except StoreInUse as exc:
        return "failed", str(exc)
    except (sqlite3.Error, StoreChanged) as exc:
        return "failed", f"{target}: cannot read the store: {exc}"
    return "changed", _changed(target, stale)


def _changed(target: str, stale: list[str]) -> str:
    shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
    return (
        f"{target}: rows the repair wrote changed since ({shown}); putting them back "
        "would lose those changes, so this store is left as it is"
    )


def revert(entry: dict[str, Any]) -> None:
    """Put back exactly the rows the repair changed, in one transaction held from the check
    to the last write; every other row stays as it is now."""
    target, changes = entry["target"], rows(entry) or []
    fmt = registry.FORMATS.get(str(entry.get("format")))
    try:
        with _transaction(target) as db:
            stale = sqlite_undo.conflicts(db, changes)
            if stale:
                raise filestate.WriteError(_changed(target, stale), ErrorKind.CHANGED)
            _guarded(target, db, lambda triggers: sqlite_undo.revert(db, changes, triggers), fmt)
    except StoreChanged as exc:
        raise filestate.WriteError(
            f"{target}: cannot undo: {exc}", ErrorKind.WRITE_FAILED
        ) from None


def entry(
    *,
    path: str,
    target: str,
    fmt: str,
    mode: int,
    in_place: bool,
    changes: Sequence[RowChange],
    backup: str | None,
    repairs: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The manifest entry of a repaired store: its change set (`rows`: each changed row's
    table, key, whole row before and a hash of the row after) and digests of its two sides,
    not file hashes (a live SQLite file's bytes move with every checkpoint)."""
    changed = [c.to_json() for c in changes]
    return {
        "role": "database",
        "path": path,
        "source": target,
        "target": target,
        "link": None,
        "format": fmt,
        "before": {
            "sha256": sqlite_store.digest(changed, "before"),
            "mode": oct(mode),
            "backup": backup,
        }
        if in_place
        else None,
        "after": {"sha256": sqlite_store.digest(changed, "after"), "mode": oct(mode)},
        "rows": changed,
        "repairs": list(repairs),
    }
