"""Repair of session stores that are databases (OpenCode's `opencode.db`), and their undo.

A database is never rewritten as bytes: its rows change inside one transaction, taken
with `BEGIN IMMEDIATE` so that a runtime holding the write lock makes the repair refuse
(busy), never wait or race. Before the first write the store is copied with SQLite's
online backup API into the run's backup folder; the manifest entry records that copy
and a digest of the rows before and after, and `undo` restores the copy with the same
API once the rows still match what the repair left. Dry runs apply the same row edits
to an in-memory copy, so what they report is what a write would do.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from typing import Any

from thinkfix.engine import fsio
from thinkfix.engine.report import ErrorKind
from thinkfix.formats.base import Placement, Repair, SessionFormat

#: How long a write waits for the runtime's lock: not at all (busy means "in use, refuse").
BUSY_TIMEOUT = 0.0


class StoreBusy(fsio.WriteError):
    """The runtime holds the store's write lock: nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: in use (another process holds its write lock, as OpenCode "
            "does while it runs); left as it is, try again when it is idle",
            ErrorKind.CHANGED,
        )


def _connect(path: str, *, read_only: bool = False, timeout: float = 5.0) -> sqlite3.Connection:
    target = "file:" + os.path.abspath(path).replace("?", "%3f").replace("#", "%23")
    if read_only:
        target += "?mode=ro"
    return sqlite3.connect(target, uri=True, timeout=timeout, isolation_level=None)


def digest(fmt: SessionFormat, path: str) -> str:
    """The format's digest of the store's session rows, read without writing."""
    with closing(_connect(path, read_only=True)) as db:
        return fmt.database_digest(db)


def rehearse(fmt: SessionFormat, path: str, repairs: list[Repair]) -> list[Placement]:
    """What the repairs would do, worked out on an in-memory copy (the file is only read)."""
    with (
        closing(_connect(path, read_only=True)) as src,
        closing(sqlite3.connect(":memory:")) as copy,
    ):
        src.backup(copy)
        copy.isolation_level = None
        copy.execute("BEGIN")
        placements = fmt.apply_database(copy, repairs)
        copy.execute("ROLLBACK")
    return placements


def copy_store(source: str, target: str) -> None:
    """A consistent copy of a live store (the online backup API), written to a new file."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    partial = target + ".thinkfix-tmp"
    with closing(_connect(source, read_only=True)) as src, closing(sqlite3.connect(partial)) as dst:
        src.backup(dst)
    os.replace(partial, target)


def apply(
    fmt: SessionFormat, path: str, repairs: list[Repair], *, backup: str | None, journal: Any = None
) -> tuple[list[Placement], str, str]:
    """Apply `repairs` to the store at `path` in one transaction: (placements, digest before,
    digest after). `backup` (when given) receives an online copy before the first write, and
    `journal(before, after, placements)` is called before the commit, so the manifest entry
    is durable before the store changes. StoreBusy when the runtime holds the lock."""
    with closing(_connect(path, timeout=BUSY_TIMEOUT)) as db:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(path) from None
            raise
        try:
            before = fmt.database_digest(db)
            if backup is not None:
                copy_store(path, backup)
            placements = fmt.apply_database(db, repairs)
            after = fmt.database_digest(db)
            if journal is not None:
                journal(before, after, placements)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    return placements, before, after


def restore(fmt: SessionFormat, entry: dict[str, Any]) -> None:
    """Put the backed-up store back, proven by its digest (undo of an in-place repair)."""
    target, before = entry["target"], entry["before"]
    backup = before.get("backup")
    if not backup or not os.path.exists(backup):
        raise fsio.WriteError(f"{target}: the backup of the store is missing; cannot undo")
    if digest(fmt, backup) != before["sha256"]:
        raise fsio.WriteError(f"{target}: the backup of the store was altered; cannot undo")
    with (
        closing(_connect(backup, read_only=True)) as src,
        closing(_connect(target, timeout=BUSY_TIMEOUT)) as dst,
    ):
        try:
            src.backup(dst)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(target) from None
            raise
    if digest(fmt, target) != before["sha256"]:
        raise fsio.VerifyError(f"{target}: the restored rows do not match those from before")


def entry(
    *,
    path: str,
    target: str,
    fmt: str,
    mode: int,
    before: str | None,
    after: str,
    backup: str | None,
    repairs: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The manifest entry of a repaired store: row digests, not file hashes (a live SQLite
    file's bytes move with every checkpoint; its rows are what the repair changed)."""
    return {
        "role": "database",
        "path": path,
        "source": target,
        "target": target,
        "link": None,
        "format": fmt,
        "before": None
        if before is None
        else {"sha256": before, "mode": oct(mode), "backup": backup},
        "after": {"sha256": after, "mode": oct(mode)},
        "repairs": list(repairs),
    }
