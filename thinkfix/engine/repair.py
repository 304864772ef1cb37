"""Repair leaked reasoning in session files: plan per file, prove, then write safely.

One file is one unit of work (`repair_file`), so `--jobs N` runs files in worker
processes and the result is the same whatever order they finish in. A file is
never held whole: it is opened as a `source.Source` (a compressed one
decompressed to a temporary file as it streams), planned in one streamed pass
(`repair_plan`: scan's byte prefilter and sparse reader skip what cannot leak,
the format drafts its edits against a lazy view of the records), and, in a
writing mode, streamed to a temporary file, proven by reading it back and
renamed into place (`repair_write`, `repair_verify`). A read-only mode proves
the new records alone. Memory is bounded by the records that change (and the
largest record), whatever the file's size; documents (one JSON value) are the
exception, read whole, and bounded by the record limit.

This module is the driver: one file end to end, and a whole run (the journal,
the manifest, the worker pool). The rooms it uses: `repair_model` (options and
results), `repair_plan`, `repair_verify`, `repair_diff` (`--diff`),
`repair_write` (the write transaction), `repair_store` (database stores), `repair_journal`
(the run's journal into its sealed manifest).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import replace

from thinkfix.engine import fsio, parallel
from thinkfix.engine import manifest as mf
from thinkfix.engine.inputs import DISABLED, STDIN, resolve, walk
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.repair_diff import unified_diff
from thinkfix.engine.repair_journal import finalise
from thinkfix.engine.repair_model import (
    ACTIVE_SECONDS,
    FileResult,
    FileStatus,
    Job,
    RepairOptions,
    RepairResult,
    WriteMode,
    bad_record,
    describe,
    failed,
)
from thinkfix.engine.repair_plan import FilePlan, bad_records, find_repairs, plan_file, wanted
from thinkfix.engine.repair_store import repair_store
from thinkfix.engine.repair_verify import verify
from thinkfix.engine.repair_write import SIDECAR_SUFFIX, inside, refuse_links, write
from thinkfix.engine.report import ErrorKind, InputError
from thinkfix.engine.source import DECOMPRESSED_RECORDS, Source, TooLarge
from thinkfix.formats.base import SessionFormat, set_record_limit
from thinkfix.io import remote

__all__ = [
    "ACTIVE_SECONDS",
    "DECOMPRESSED_RECORDS",
    "SIDECAR_SUFFIX",
    "FilePlan",
    "FileResult",
    "FileStatus",
    "Job",
    "RepairOptions",
    "RepairResult",
    "TooLarge",
    "WriteMode",
    "bad_records",
    "check_paths",
    "describe",
    "find_repairs",
    "new_run_id",
    "out_paths",
    "plan_file",
    "repair_file",
    "repair_paths",
    "unified_diff",
    "verify",
    "wanted",
]

_inside = inside


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
    if found.skipped is None and found.error is None and options.scan.path_disabled(found.path):
        found = replace(found, skipped=DISABLED)
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
        return repair_store(job, path, found.real_path, fmt)
    try:
        source = Source.open(found.real_path, options.scan.max_record_size * DECOMPRESSED_RECORDS)
    except fsio.WriteError as exc:
        return _write_failed(path, fmt, exc)
    except Exception as exc:  # noqa: BLE001 - a corrupt stream: this file only
        return _unreadable(path, fmt, exc)
    try:
        return _repair_source(job, path, fmt, source)
    finally:
        source.close()


def _write_failed(path: str, fmt: SessionFormat, exc: fsio.WriteError) -> FileResult:
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
    except fsio.WriteError as exc:
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
    )
    try:
        if plan.changed and not options.mode.writes:  # a write proves the bytes read back
            verify(plan, None, options.scan)
    except fsio.WriteError as exc:
        return replace(
            base,
            status=FileStatus.FAILED,
            errors=bad + (InputError(path, None, exc.kind, str(exc)),),
        )
    if options.unified_diff:
        base = replace(base, unified_diff=unified_diff(plan))
    if not options.mode.writes:
        return replace(base, status=FileStatus.WOULD_CHANGE if plan.changed else FileStatus.CLEAN)
    if not plan.changed and options.mode is WriteMode.IN_PLACE:
        return base
    try:
        refuse_links(path, source.path, job)
        return write(job, plan, base)
    except fsio.WriteError as exc:
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


def _refuse_active(path: str, stamp: fsio.Stamp, options: RepairOptions) -> None:
    """FileChanged for a file written to moments ago, when it would be replaced in place."""
    if options.mode is not WriteMode.IN_PLACE or options.active_seconds <= 0:
        return
    age = time.time() - stamp.mtime_ns / 1e9
    if age < options.active_seconds:
        raise fsio.FileChanged(
            f"{path}: modified {max(age, 0):.1f}s ago, so a live session may still be writing "
            "it; skipped, left as it is (--include-active repairs it anyway)"
        )


# --- a whole run -----------------------------------------------------------------------------


def out_paths(paths: Sequence[str], out_dir: str) -> tuple[str, str]:
    """The folder inputs are mirrored from (their common ancestor) and the output root; for
    URLs (io/remote.py), the longest common URL prefix and the output URL. ValueError for
    inputs that are not all local paths or all URLs of one scheme."""
    out = out_dir.rstrip("/") if remote.is_url(out_dir) else os.path.abspath(out_dir)
    if not any(remote.is_url(p) for p in paths):
        roots = [os.path.abspath(p) for p in paths]
        bases = [r if os.path.isdir(r) else os.path.dirname(r) for r in roots]
        return os.path.commonpath(bases) if bases else os.getcwd(), out
    if not all(remote.is_url(p) for p in paths):
        raise ValueError("--out: name the inputs all as local paths or all as URLs")
    try:
        folders = [
            p.rstrip("/") if remote.isdir(p) else p.rstrip("/").rsplit("/", 1)[0] for p in paths
        ]
    except (OSError, ImportError) as exc:  # no fsspec, no backend for the scheme
        raise ValueError(f"{paths[0]}: {exc}") from None
    parts = [folder.split("/") for folder in folders]
    common = parts[0]
    for other in parts[1:]:
        n = 0
        while n < min(len(common), len(other)) and common[n] == other[n]:
            n += 1
        common = common[:n]
    if not common or common[0] != parts[0][0]:
        raise ValueError("--out: the input URLs must share one scheme (s3://, gs://, file://…)")
    return "/".join(common), out


def output_path(path: str, base: str, out: str) -> str:
    """Where `--out` writes the repaired copy of the input `path` (`out_paths`' base, out)."""
    if remote.is_url(path):
        rel = path[len(base) :].lstrip("/").split("/")
    else:
        rel = os.path.relpath(os.path.abspath(path), base).split(os.sep)
    return "/".join([out, *rel]) if remote.is_url(out) else os.path.join(out, *rel)


def _within(path: str, folder: str) -> bool:
    """Is `path` `folder` or inside it, either spelt as a local path or a URL?"""
    (scheme, at), (where, root) = remote.location(path), remote.location(folder)
    return scheme == where and (at == root or at.startswith(root.rstrip("/") + "/"))


def check_paths(paths: Sequence[str], options: RepairOptions) -> None:
    """ValueError for path combinations a writing mode (or a cluster) must refuse."""
    if options.dask:
        for p in [*paths, options.out_dir or ""]:
            if remote.process_local(p):
                raise ValueError(
                    f"{p}: a memory:// filesystem lives in this process only; the cluster's "
                    "workers cannot read or write it (--dask)"
                )
    if not options.mode.writes:
        return
    if STDIN in paths:
        raise ValueError("stdin ('-') can only be checked or diffed, not repaired")
    if options.mode is WriteMode.OUT:
        assert options.out_dir is not None
        base, out = out_paths(paths, options.out_dir)
        if remote.is_url(out) or remote.is_url(base):
            try:
                held = any(_within(p, out) for p in paths)
                itself = remote.location(base) == remote.location(out)
            except (OSError, ImportError, ValueError) as exc:  # no fsspec, backend or scheme
                raise ValueError(f"--out {options.out_dir}: {exc}") from None
        else:
            held = any(
                _inside(os.path.abspath(p), out) or _inside(os.path.realpath(p), out) for p in paths
            )
            itself = out == base
        if held:
            raise ValueError(f"--out {options.out_dir} must not be an input or hold one")
        if itself:
            raise ValueError(f"--out {options.out_dir} is the input folder itself")


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def repair_paths(
    paths: Sequence[str],
    options: RepairOptions,
    *,
    tool_version: str = "",
    progress: Progress = NULL_PROGRESS,
) -> RepairResult:
    """Repair every session file under `paths`; the library entry point behind the CLI."""
    check_paths(paths, options)
    run_dir = manifest_path = journal_dir = backup_dir = None
    if options.mode.writes:
        run_id = new_run_id()
        run_dir = options.run_dir or mf.default_run_dir(run_id)
        manifest_path = options.manifest_path or os.path.join(run_dir, mf.MANIFEST_NAME)
        if not options.dask:  # a cluster's workers cannot reach this machine's run folder
            journal_dir = manifest_path + mf.JOURNAL_SUFFIX
            backup_dir = os.path.join(run_dir, "backup") if options.backup else None
    roots = mf.run_roots(paths, options.out_dir)
    if journal_dir is not None:
        # Sealed before any file changes: undo follows only entries inside these roots.
        mf.start_journal(journal_dir, roots=roots, mode=options.mode.value, backup_dir=backup_dir)
    base = out = None
    if options.mode is WriteMode.OUT:
        assert options.out_dir is not None
        base, out = out_paths(paths, options.out_dir)
    jobs: list[Job] = []
    named = tuple(os.path.realpath(p) for p in paths if p != STDIN)
    urls = base is not None and out is not None and (remote.is_url(base) or remote.is_url(out))
    for n, item in enumerate(walk(paths, options.scan.inputs)):
        output = None
        if base is not None and out is not None:
            if _within(item.path, out) if urls else _inside(os.path.abspath(item.path), out):
                continue  # an earlier run's output inside a walked folder
            output = output_path(item.path, base, out)
        jobs.append(
            Job(
                item,
                n,
                options,
                output,
                backup_dir,
                journal_dir,
                named,
                fresh_only=options.dask is not None,
            )
        )
    if options.mode is WriteMode.OUT and not any(_taken(j.output) for j in jobs):
        # Nothing there to replace: the run writes only where nothing is, so its journal
        # needs no sync (`manifest.journal`).
        jobs = [replace(j, fresh_only=True) for j in jobs]
    if options.mode is WriteMode.IN_PLACE:
        # Temporary files of a run that was killed go first, even from folders where this run
        # then finds nothing left to write (the killed run may have finished them).
        _sweep(jobs)
    results: list[FileResult] = []
    try:
        # A worker process would read and write its own, empty memory:// filesystem.
        local = any(remote.process_local(p) for p in [*paths, options.out_dir or ""])
        results, _ = _run(jobs, 1 if local else options.jobs, progress, options.dask)
    finally:
        # Whatever stopped the run (an interrupt, a bug), every file already replaced is
        # journaled: the manifest is written for them before the exception goes on.
        errors, written = finalise(
            results,
            options=options,
            manifest_path=manifest_path,
            journal_dir=journal_dir,
            run_dir=run_dir,
            backup_dir=backup_dir,
            tool_version=tool_version,
            roots=roots,
        )
    files = tuple(sorted((r for r in results if r.skipped_reason is None), key=lambda r: r.path))
    backups = backup_dir if backup_dir is not None and os.path.isdir(backup_dir) else None
    return RepairResult(options.mode, files, manifest_path if written else None, backups, errors)


def _taken(output: str | None) -> bool:
    """Is there something at an output path (or its sidecar's) that a write would replace?"""
    return output is not None and (
        os.path.lexists(output) or os.path.lexists(output + SIDECAR_SUFFIX)
    )


def _sweep(jobs: Sequence[Job]) -> None:
    """Remove dead processes' temporary files from every folder holding an input."""
    for folder in sorted(
        {
            os.path.dirname(fsio.real_path(j.candidate.real_path))
            for j in jobs
            if j.candidate.real_path != STDIN and not remote.is_url(j.candidate.real_path)
        }
    ):
        fsio.sweep_stale(folder)


def _run(
    jobs: list[Job],
    workers: int,
    progress: Progress = NULL_PROGRESS,
    dask: str | None = None,
) -> tuple[list[FileResult], bool]:
    """Every job's result, and whether a worker died (the run was then redone here)."""
    progress.start(len(jobs), sum(_size(j) for j in jobs))
    try:
        if dask:
            return _run_dask(jobs, dask, progress), False
        if workers <= 1 or len(jobs) <= 1:
            return [_done(progress, j, repair_file(j)) for j in jobs], False
        try:
            got: dict[int, FileResult] = {}
            for i, result in parallel.run(
                _repair_task,
                list(enumerate(jobs)),
                None,
                min(workers, len(jobs)),
                chunk=_chunk(len(jobs), workers),
            ):
                got[i] = _done(progress, jobs[i], result)
            return [got[i] for i in range(len(jobs))], False
        except parallel.BrokenProcessPool:
            # A worker died (killed, out of memory) mid-file. Which files it finished is
            # unknown, so every file is redone here: a repaired file is clean now and is left
            # alone. The pool has joined its workers by now, so their temporary files go too.
            if jobs[0].options.mode is WriteMode.IN_PLACE:
                _sweep(jobs)
            return [repair_file(j) for j in jobs], True
    finally:
        progress.finish()


def _run_dask(jobs: list[Job], address: str, progress: Progress) -> list[FileResult]:
    """Every job repaired on the Dask cluster at `address`, in job order whatever order they
    finish in. A task the cluster lost (its workers died) is an error for its file: its
    output, if one was published, is complete (written only where nothing was), so nothing
    is redone here."""
    from thinkfix.engine import distributed

    got: dict[int, FileResult] = {}
    for i, outcome in distributed.run_tasks(repair_file, jobs, address, [_size(j) for j in jobs]):
        result = outcome if isinstance(outcome, FileResult) else _lost(jobs[i], outcome)
        got[i] = _done(progress, jobs[i], result)
    return [got[i] for i in range(len(jobs))]


def _lost(job: Job, exc: BaseException) -> FileResult:
    path = getattr(job.candidate, "path", "?")
    why = (
        f"{path}: the cluster lost this file's task ({describe(exc)}); its input is as it "
        "was; an output it may have published is complete but not in the undo manifest"
    )
    return failed(path, None, ErrorKind.INTERNAL, why, FileStatus.FAILED)


def _repair_task(_: None, task: tuple[int, Job]) -> tuple[int, FileResult]:
    """A worker's unit (engine/parallel.py): one file, numbered so results keep job order."""
    return task[0], repair_file(task[1])


def _size(job: Job) -> int:
    return max(0, getattr(job.candidate, "size", 0) or 0)


def _done(progress: Progress, job: Job, result: FileResult) -> FileResult:
    progress.advance(result.path, _size(job))
    return result


def _chunk(n: int, workers: int) -> int:
    return max(1, min(64, n // (workers * 8)))
