"""Repair a store that is a database (OpenCode): rows change in one transaction, after an
online backup; never a byte rewrite. Dry runs rehearse on an in-memory copy."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any, BinaryIO

from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import rows as store
from thinkfix.engine.ledger.change import Change
from thinkfix.engine.repair.fixes import store_fixes
from thinkfix.engine.repair.model import (
    FileResult,
    FileStatus,
    Job,
    WriteMode,
    bad_record,
    describe,
    failed,
)
from thinkfix.engine.repair.plan import bad_records
from thinkfix.engine.repair.verify import find_repairs
from thinkfix.engine.report import InputError
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.repairs import Placement, Repair
from thinkfix.formats.sqlite_store import RowChange, StoreInUse
from thinkfix.io import filestate, remote, safewrite, urlwrite
from thinkfix.io.errors import ErrorKind
from thinkfix.io.regular import open_regular


def repair_store(job: Job, path: str, real: str, fmt: SessionFormat) -> FileResult:
    """A store that is a database (OpenCode): its rows change in one transaction, after an
    online backup; never a byte rewrite. Dry runs rehearse on an in-memory copy."""
    options = job.options
    try:
        with open_regular(real) as fp:
            records = list(fmt.read(fp))
    except StoreInUse as exc:  # its runtime holds it: nothing touched
        return failed(path, fmt.id, ErrorKind.CHANGED, str(exc), FileStatus.SKIPPED)
    except (sqlite3.Error, OSError) as exc:  # not a database it can read: nothing touched
        message = f"{path}: cannot repair: {describe(exc)}; left as it is"
        return failed(path, fmt.id, ErrorKind.UNREADABLE, message, FileStatus.ERROR)
    found = list(find_repairs(fmt, records, options.scan))
    bad = tuple(
        bad_record(path, r.line, r.error or "") for r in bad_records(fmt, records, options.scan)
    )
    fixing = store_fixes(fmt, path, records, options.fixes)  # --fix: row edits of its own
    fixed = fixing.fixed if fixing is not None else ()
    base = FileResult(path, fmt.id, FileStatus.CLEAN, (), bad, records=len(records), fixes=fixed)
    if not found and fixing is None:
        return base
    if fixing is not None:
        fmt = fixing.format  # the format, its `apply_database` also making the fixes' edits
    repairs = [Repair(site, result.visible, result.extracted) for site, result in found]
    keep = options.keep_texts

    def changes(placements: list[Placement]) -> tuple[Change, ...]:
        return tuple(
            Change(
                site,
                result.findings,
                site.text if keep else "",
                result.visible if keep and placement.applied else "",
                result.extracted,
                placement,
                tuple((s.start, s.end, s.label.value) for s in result.spans) if keep else (),
            )
            for (site, result), placement in zip(found, placements, strict=True)
        )

    created: str | None = None
    try:
        if not options.mode.writes:
            done = changes(store.rehearse(fmt, real, repairs))
            return replace(
                base,
                changes=done,
                status=FileStatus.WOULD_CHANGE
                if fixed or any(c.applied for c in done)
                else FileStatus.CLEAN,
            )
        in_place = options.mode is WriteMode.IN_PLACE
        target = real if in_place else job.output
        assert target is not None
        if not in_place and remote.is_url(target):
            placements, entry = _to_url(job, path, real, fmt, repairs, target, changes)
            done = changes(placements)
            return replace(
                base,
                changes=done,
                output=target,
                manifest_entries=(entry,),
                status=FileStatus.REPAIRED
                if fixed or any(c.applied for c in done)
                else FileStatus.CLEAN,
            )
        if not in_place:
            store.copy_store(real, target)
            created = target
        backup = (
            mf.backup_path(job.backup_dir, real)
            if in_place and options.backup and job.backup_dir is not None
            else None
        )
        mode = os.stat(real).st_mode & 0o777
        entries: list[dict[str, Any]] = []

        def journal(rows: list[RowChange], placements: list[Placement]) -> None:
            entries.append(
                store.entry(
                    path=path,
                    target=filestate.real_path(target),
                    fmt=fmt.id,
                    mode=mode,
                    in_place=in_place,
                    changes=rows,
                    backup=backup,
                    repairs=[mf.change_entry(c) for c in changes(placements)],
                )
                | ({"fixes": [f.to_dict() for f in fixed]} if fixed else {})
            )
            if job.journal_dir is not None:
                ledger_journal.journal(job.journal_dir, job.index, entries)

        placements, _ = store.apply(fmt, target, repairs, backup=backup, journal=journal)
    except (filestate.WriteError, sqlite3.Error, OSError) as exc:
        if created is not None:  # an --out copy the refused repair leaves no trace of
            with contextlib.suppress(OSError):
                os.unlink(created)
        busy = isinstance(exc, (store.StoreBusy, StoreInUse))
        status = FileStatus.SKIPPED if busy else FileStatus.FAILED
        ours = isinstance(exc, (filestate.WriteError, StoreInUse))
        kind = (
            exc.kind
            if isinstance(exc, filestate.WriteError)
            else ErrorKind.CHANGED
            if busy
            else ErrorKind.WRITE_FAILED
        )
        message = str(exc) if ours else f"{path}: cannot repair the store: {exc}; left as it is"
        return replace(base, status=status, errors=bad + (InputError(path, None, kind, message),))
    done = changes(placements)
    return replace(
        base,
        changes=done,
        output=target,
        manifest_entries=tuple(entries),
        status=FileStatus.REPAIRED if fixed or any(c.applied for c in done) else FileStatus.CLEAN,
    )


def _to_url(
    job: Job,
    path: str,
    real: str,
    fmt: SessionFormat,
    repairs: list[Repair],
    target: str,
    changes: Callable[[list[Placement]], tuple[Change, ...]],
) -> tuple[list[Placement], dict[str, Any]]:
    """An --out copy at a URL: SQLite needs a local file, so the copy is repaired in a private
    folder and then published at the URL like any repaired file (never over something there);
    its manifest entry is the object's hash, which undo checks before removing it."""
    folder = tempfile.mkdtemp(prefix="thinkfix-store-")
    try:
        local = os.path.join(folder, "store.db")
        store.copy_store(real, local)
        placements, rows = store.apply(fmt, local, repairs, backup=None)
        mode = os.stat(real).st_mode & 0o777
        entry = store.entry(
            path=path,
            target=target,
            fmt=fmt.id,
            mode=mode,
            in_place=False,
            changes=rows,
            backup=None,
            repairs=[mf.change_entry(c) for c in changes(placements)],
        )

        def journal(written: safewrite.Written) -> None:
            entry["after"] = {"sha256": written.sha256, "size": written.size, "mode": oct(mode)}
            if job.journal_dir is not None:
                ledger_journal.journal(job.journal_dir, job.index, [entry])

        def produce(out: BinaryIO) -> None:
            with open(local, "rb") as fp:
                shutil.copyfileobj(fp, out, filestate.BLOCK)

        urlwrite.atomic_write_stream(target, produce, before_publish=journal)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return placements, entry
