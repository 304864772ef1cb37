"""Repair one file end to end: read, plan, prove and (in a writing mode) write it.

One file is one unit of work (`repair_file`), so `--jobs N` runs files in worker processes
(engine/repair/driver.py drives the run) and the result is the same whatever order they finish in.
A file is never held whole: it is opened as a `source.Source` (a compressed one decompressed
to a temporary file as it streams), planned in one streamed pass (`plan`), and, in a
writing mode, streamed to a temporary file, proven by reading it back and renamed into place
(`write`, `verify`). A read-only mode proves the new records alone. Memory is
bounded by the records that change (and the largest record), whatever the file's size;
documents (one JSON value) are the exception, read whole, and bounded by the record limit.
"""

from __future__ import annotations

import time
from dataclasses import replace

from thinkfix.engine.inputs.files import DISABLED, resolve
from thinkfix.engine.repair.model import (
    FileResult,
    FileStatus,
    Job,
    RepairOptions,
    WriteMode,
    bad_record,
    describe,
    failed,
)
from thinkfix.engine.repair.plan import plan_file
from thinkfix.engine.repair.source import DECOMPRESSED_RECORDS, Source
from thinkfix.engine.repair.verify import verify
from thinkfix.engine.report import InputError
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import sample
from thinkfix.formats.records import set_record_limit
from thinkfix.io import filestate, remote
from thinkfix.io.errors import ErrorKind


def repair_file(job: Job) -> FileResult:
    """Read, plan, prove and (in a writing mode) write one file. Never raises (but for an
    interrupt): an unexpected exception, a bug met on this file, is an error for this file
    alone, and the run goes on; whatever this file's write did is in the journal."""
    try:
        return _repair_file(job)
    except Exception as exc:  # noqa: BLE001 - one file's trouble must not end a run
        path = getattr(job.candidate, "path", "?")
        why = f"{path}: cannot repair: internal error ({type(exc).__name__}: {exc}); left as it is"
        return failed(path, None, ErrorKind.INTERNAL, why, FileStatus.ERROR)


def _repair_file(job: Job) -> FileResult:
    options = job.options
    set_record_limit(options.scan.max_record_size)
    found = resolve(job.candidate, options.scan.inputs)
    # Detection keeps its last few heads parsed (`detection.sample`, for the formats asking in
    # turn), and a head runs to the end of a file's first records: the largest record's bytes
    # and tree, held through the repair beside its copies (#22 item 9). Detection is done.
    sample.cache_clear()
    if found.skipped is None and found.error is None and options.scan.path_disabled(found.path):
        found = found._replace(skipped=DISABLED)
    if found.skipped is not None:
        return FileResult(found.path, None, FileStatus.CLEAN, skipped_reason=found.skipped)
    if found.error is not None or found.fmt is None:
        err = found.error or InputError(found.path, None, ErrorKind.UNKNOWN_FORMAT, "no format")
        return FileResult(found.path, None, FileStatus.ERROR, errors=(err,))
    path, fmt = found.path, found.fmt
    if options.mode is WriteMode.IN_PLACE and remote.is_url(found.real_path):
        return failed(
            path,
            fmt.id,
            ErrorKind.WRITE_FAILED,
            f"{path}: not repaired in place: a URL's filesystem has no atomic rename nor "
            "fsync to replace it safely; left as it is (write repaired copies with --out)",
            FileStatus.ERROR,
        )
    if fmt.is_database(found.real_path):
        # sqlite3 and the row ledger load only for a database (start-up, #26 item 3)
        from thinkfix.engine.repair.store import repair_store

        return repair_store(job, path, found.real_path, fmt)
    try:
        source = Source.open(found.real_path, options.scan.max_record_size * DECOMPRESSED_RECORDS)
    except filestate.WriteError as exc:
        return _write_failed(path, fmt, exc)
    except Exception as exc:  # noqa: BLE001 - a corrupt stream: this file only
        return _unreadable(path, fmt, exc)
    try:
        return _repair_source(job, path, fmt, source)
    finally:
        source.close()


def _write_failed(path: str, fmt: SessionFormat, exc: filestate.WriteError) -> FileResult:
    """The file changed under us (skipped: nothing touched) or could not be read or written."""
    status = FileStatus.SKIPPED if exc.kind is ErrorKind.CHANGED else FileStatus.ERROR
    return failed(path, fmt.id, exc.kind, str(exc), status)


def _unreadable(path: str, fmt: SessionFormat, exc: Exception) -> FileResult:
    """An unexpected failure on this file alone: reported, the file left as it is."""
    message = f"{path}: cannot repair: {describe(exc)}; left as it is"
    return failed(path, fmt.id, ErrorKind.UNREADABLE, message, FileStatus.ERROR)


def _repair_source(job: Job, path: str, fmt: SessionFormat, source: Source) -> FileResult:
    options = job.options
    try:
        _refuse_active(path, source.stamp, options)
        plan = plan_file(path, fmt, source, options)
        if options.fixes:  # the health checks load only for --fix (start-up, #26 item 3)
            from thinkfix.engine.repair.fixes import add_fixes

            add_fixes(plan, options.fixes)
    except filestate.WriteError as exc:
        return _write_failed(path, fmt, exc)
    except Exception as exc:  # noqa: BLE001 - a corrupt stream or a format bug: this file only
        return _unreadable(path, fmt, exc)
    bad = tuple(bad_record(path, line, error) for line, error in plan.bad)
    base = FileResult(
        path,
        fmt.id,
        FileStatus.CLEAN,
        tuple(plan.changes),
        bad,
        records=plan.count,
        records_changed=len(plan.edits.replaced),
        records_inserted=sum(len(v) for v in plan.edits.inserted.values()),
        fixes=plan.fixed,
    )
    try:
        if plan.changed and not options.mode.writes:  # a write proves the bytes read back
            verify(plan, None, options.scan)
    except filestate.WriteError as exc:
        return replace(
            base,
            status=FileStatus.FAILED,
            errors=bad + (InputError(path, None, exc.kind, str(exc)),),
        )
    if options.unified_diff:
        from thinkfix.engine.repair.diff import unified_diff  # --diff only

        base = replace(base, unified_diff=unified_diff(plan))
    if not options.mode.writes:
        return replace(base, status=FileStatus.WOULD_CHANGE if plan.changed else FileStatus.CLEAN)
    if not plan.changed and options.mode is WriteMode.IN_PLACE:
        return base
    from thinkfix.engine.repair.write import refuse_links, write  # a writing mode's only

    try:
        refuse_links(path, source.path, job)
        return write(job, plan, base)
    except filestate.WriteError as exc:
        status = (
            FileStatus.SKIPPED
            if exc.kind in (ErrorKind.CHANGED, ErrorKind.LINKED)
            else FileStatus.FAILED
        )
        return replace(
            base, status=status, errors=bad + (InputError(path, None, exc.kind, str(exc)),)
        )
    except OSError as exc:
        return replace(
            base,
            status=FileStatus.FAILED,
            errors=bad
            + (InputError(path, None, ErrorKind.WRITE_FAILED, f"{path}: {exc.strerror or exc}"),),
        )


def _refuse_active(path: str, stamp: filestate.Stamp, options: RepairOptions) -> None:
    """FileChanged for a file written to moments ago, when it would be replaced in place."""
    if options.mode is not WriteMode.IN_PLACE or options.active_seconds <= 0:
        return
    age = time.time() - stamp.mtime_ns / 1e9
    if age < options.active_seconds:
        raise filestate.FileChanged(
            f"{path}: modified {max(age, 0):.1f}s ago, so a live session may still be writing "
            "it; skipped, left as it is (--include-active repairs it anyway)"
        )
