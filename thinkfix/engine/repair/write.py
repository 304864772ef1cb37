"""The write transaction of one repaired file: backup, journal, sidecar, then the rename.

The order matters: the backup is made first; the repaired bytes are streamed to a
temporary file beside the target (compressed as the original was) and proven by
reading them back (`verify`); only then is the manifest entry journaled
(durable before the file it describes changes), the sidecar written, and the
file renamed into place, after the live-writer checks in `io.safewrite`. A failure at any
step before the rename leaves the file as it was (a sidecar written for it is put back,
backups of it are removed, its journal entry dropped); one after it (Ctrl-C in the folder's
sync) leaves all of them, for the file was replaced and undo needs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import replace
from typing import Any, BinaryIO, cast

from thinkfix.engine.ledger import docwise
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.repair.model import FileResult, FileStatus, Job, WriteMode
from thinkfix.engine.repair.plan import Copy, FilePlan, New
from thinkfix.engine.repair.verify import planned, same_bytes, verify
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import PlacementKind
from thinkfix.io import compression, filestate, outfile, remote, safewrite, urlwrite
from thinkfix.io.errors import ErrorKind
from thinkfix.io.paths import inside

SIDECAR_SUFFIX = ".thinkfix.json"


class _Keep:
    """A stream whose close leaves the stream it wraps open (compressing writers close theirs)."""

    def __init__(self, fp: BinaryIO) -> None:
        self.fp = fp

    def write(self, data: bytes) -> int:
        return self.fp.write(data)

    def flush(self) -> None:
        self.fp.flush()

    def close(self) -> None:
        self.fp.flush()


def write(job: Job, plan: FilePlan, base: FileResult) -> FileResult:
    """Back up, write and prove the new bytes, journal, write the sidecar, replace the file."""
    options = job.options
    source = plan.source
    in_place = options.mode is WriteMode.IN_PLACE
    target = source.path if in_place else job.output
    assert target is not None
    made: list[str] = []  # backups made for this file, removed again if it is not replaced
    before = source.state() if in_place else _existing(target, job.fresh_only)
    backup = _backup(job, before, made)
    sidecar = _sidecar(plan, target, job.fresh_only)
    entries: list[dict[str, Any]] = []
    side: list[filestate.Snapshot | None] = []  # the sidecar's previous state, once it is written
    content = hashlib.sha256()

    def produce(out: BinaryIO) -> None:
        # Bytes the survey did not keep are copied by the kernel (`safewrite.copy_into`), never
        # through Python: the read back hashes them, as it reads them to prove them anyway.
        if not plan.changed:  # copied as it is, compressed or not
            safewrite.copy_into(out, source.fd, 0, source.stamp.size, plan.path)
            return
        if plan.compression is compression.Compression.NONE and source.whole is not None:
            # The survey kept the original (`Source.whole`, one reader's block at most): the new
            # content is written from it at once (`writev` of views of its untouched runs and
            # the new records' bytes), hashed as it is written (handed to the hashing lane
            # uncopied), so the read back only compares. A kernel copy per untouched run cost
            # more, and left every byte for the read back to hash (#26 item 4).
            outfile.write_pieces(out, [p for seg in plan.segments for p in planned(plan, seg)])
            return
        if plan.compression is compression.Compression.NONE:
            for seg in plan.segments:
                if isinstance(seg, New):
                    seg.write_to(out)
                else:
                    size = seg.end - seg.start
                    safewrite.copy_into(out, source.content_fd, seg.start, size, plan.path)
            return
        with compression.wrap_writer(cast(BinaryIO, _Keep(out)), plan.compression) as fp:
            for block in plan.blocks():
                content.update(block)
                fp.write(block)

    def proven(back: BinaryIO) -> None:
        with compression.wrap_reader(back, plan.compression) as fp:
            verify(plan, fp, options.scan)

    # A plain file the survey kept whole (`Source.whole`) and copied as it is: its copy is
    # compared with those bytes, whose hash the survey took, and not hashed again (#26 item 4).
    kept = source.whole if source.content_fd == source.fd and not plan.changed else None

    def copied(back: BinaryIO) -> None:
        same_bytes(back, cast(bytes, kept), plan.path)

    def check(temp: str) -> None:  # a URL's temporary file, read back from its filesystem
        proven(urlwrite.open_written(temp))

    def commit(written: safewrite.Written) -> None:
        before_sha = source.content_sha256
        after_sha = (
            written.sha256
            if plan.compression is compression.Compression.NONE
            else content.hexdigest()
        )
        entries.append(
            mf.file_entry(
                path=plan.path,
                source=source.path,
                target=written.path,  # where the write resolved `target` to (`_real`)
                link=os.path.abspath(plan.path) if os.path.islink(plan.path) else None,
                fmt=plan.fmt.id,
                compression=plan.compression.value,
                mode=source.mode,
                before=before,
                backup=backup,
                written=written,
                content_sha256=(before_sha, after_sha if plan.changed else before_sha),
                record_counts=(plan.count, plan.edits.after_count) if plan.planned else (0, 0),
                records=record_entries(plan),
                changes=plan.changes,
                same_source=in_place and plan.rebuildable,
            )
            | ({"fixes": [f.to_dict() for f in plan.fixed]} if plan.fixed else {})
        )
        if sidecar is not None:
            side_before = _existing_snapshot(sidecar[0], job.fresh_only)
            entries.append(
                mf.sidecar_entry(
                    plan.path,
                    _real(sidecar[0]),
                    side_before,
                    _backup(job, side_before, made),
                    sidecar[1],
                )
            )
        if job.journal_dir is not None:
            ledger_journal.journal(job.journal_dir, job.index, entries, durable=not job.fresh_only)
        if sidecar is not None:
            side.append(side_before)
            if remote.is_url(sidecar[0]):
                urlwrite.write_bytes(sidecar[0], sidecar[1])
            else:
                safewrite.atomic_write(sidecar[0], sidecar[1], mode=source.mode, make_dirs=True)

    published: list[bool] = []  # whether the file was replaced, once that is asked

    def replaced() -> bool:
        """Was the file replaced before the write stopped? Only once its entry is journaled
        can it be; then it holds the bytes its entry says the repair wrote."""
        if not published:
            published.append(bool(entries) and ledger_journal.holds_written(entries[0]))
        return published[0]

    try:
        try:
            # A file read from a URL was copied once before planning: nothing to watch.
            watch = None if remote.is_url(source.path) else (source.path, source.stamp)
            if remote.is_url(target):
                urlwrite.atomic_write_stream(
                    target,
                    produce,
                    verify=check if plan.changed else None,
                    before_publish=commit,
                    watch=watch,
                )
            else:
                # One read back proves the hash and the plan (`safewrite.atomic_write_stream`):
                # every byte of a repaired file is compared with the plan (`verify`) where it
                # is uncompressed; a copy's hash must be the one the survey took of the original
                # as it read it (`expected`: the original is not read again).
                safewrite.atomic_write_stream(
                    target,
                    produce,
                    mode=source.mode,
                    read_back=proven if plan.changed else copied if kept is not None else None,
                    before_publish=commit,
                    watch=watch,
                    make_dirs=True,
                    exact_read_back=plan.compression is compression.Compression.NONE,
                    expected=None if plan.changed else (source.stamp.size, source.sha256),
                    # a fresh output's folder is synced once for the run, before the manifest
                    # (`journal.finalise`): losing it in a crash loses no original's bytes
                    sync_folder=not (job.fresh_only and options.dask is None),
                    # the driver swept every folder written into, once (`driver._sweep`); a
                    # cluster's workers write where it cannot look
                    sweep=options.dask is not None,
                )
        except BaseException:
            if sidecar is not None and side and not replaced():
                _put_back(sidecar[0], side[0])
            raise
    except BaseException:
        if replaced():  # stopped after the rename (Ctrl-C in the folder's sync): undo needs all
            raise
        for path in made:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if job.journal_dir is not None and entries:
            ledger_journal.unjournal(job.journal_dir, job.index)
        raise
    status = FileStatus.REPAIRED if plan.changed else FileStatus.COPIED
    return replace(base, status=status, output=target, manifest_entries=tuple(entries))


def record_entries(plan: FilePlan) -> list[dict[str, Any]]:
    """The manifest's entries of the changed and inserted records, in file order."""
    out: list[dict[str, Any]] = []
    at = 0  # offset in the new content
    for seg in plan.segments:
        if isinstance(seg, Copy):
            at += seg.end - seg.start
            continue
        old, tree = None, None
        if seg.original is not None:
            start, end = plan.span(seg.original)
            old = (seg.original, _original(plan, seg.original, start, end), start)
            if plan.count == 1:  # a document (its runtime saves it whole), or one line
                tree = docwise.tree_changes(old[1].raw, seg.record.raw)
        out.append(mf.record_entry(seg.record, at, old, tree))
        at += seg.size
    return out


def _original(plan: FilePlan, index: int, start: int, end: int) -> Record:
    if not plan.lines:
        return plan.originals[index]
    line = plan.source.read(start, end)
    eol = b"\r\n" if line.endswith(b"\r\n") else b"\n" if line.endswith(b"\n") else b""
    return Record(index, index + 1, line[: len(line) - len(eol)], eol)


def _backup(
    job: Job, state: filestate.Snapshot | filestate.FileState | None, made: list[str]
) -> str | None:
    """A verified copy of a file about to be replaced, under the run's backup folder."""
    if state is None or not job.options.backup or job.backup_dir is None:
        return None
    path = mf.backup_path(job.backup_dir, state.path)
    # the driver swept the backup's folder as the run started (`driver._sweep`)
    safewrite.copy_verified(state, path, sweep=False)
    made.append(path)
    return path


def _put_back(path: str, previous: filestate.Snapshot | None) -> None:
    """Undo a sidecar write whose session file could not be replaced."""
    if remote.is_url(path):  # a URL sidecar is only ever created (`_fresh`)
        with contextlib.suppress(Exception):
            urlwrite.remove(path)
        return
    with contextlib.suppress(OSError, filestate.WriteError):
        if previous is None:
            os.unlink(path)
        else:
            safewrite.atomic_write(path, previous.data, mode=previous.mode)


def _real(path: str) -> str:
    """Where a written file lies, as the manifest records it: a URL as it is."""
    return path if remote.is_url(path) else filestate.real_path(path)


def _fresh(path: str, fresh_only: bool) -> bool:
    """Is nothing at `path`? WriteError when something is and must not be replaced: a URL
    (no atomic replace, no backup to undo from) or, with `fresh_only`, any output."""
    if remote.is_url(path):
        urlwrite.refuse_existing(path)
        return True
    if not os.path.lexists(path):
        return True
    if fresh_only:
        raise filestate.WriteError(
            f"{path}: already exists; not overwritten (this run writes only where nothing is: "
            "a run on a cluster keeps no backups, and a run into an --out folder that held none "
            "of its outputs does not sync its undo journal; choose an empty --out)"
        )
    return False


def _existing(path: str, fresh_only: bool = False) -> filestate.FileState | None:
    if _fresh(path, fresh_only):
        return None
    return filestate.file_state(path)


def _existing_snapshot(path: str, fresh_only: bool = False) -> filestate.Snapshot | None:
    if _fresh(path, fresh_only):
        return None
    return filestate.read_snapshot(path)


def _sidecar(plan: FilePlan, target: str, fresh_only: bool = False) -> tuple[str, bytes] | None:
    """`<file>.thinkfix.json` beside the written file, for reasoning its format has no place for."""
    placed = [
        c
        for c in plan.changes
        if c.applied and c.placement.kind is PlacementKind.SIDECAR and c.extracted
    ]
    if not placed:
        return None
    path = target + SIDECAR_SUFFIX
    if not remote.is_url(path) and os.path.islink(path):
        # read through, it would copy another file's entries into this one; and the manifest
        # would name the link's target, which undo refuses as outside the run
        raise filestate.WriteError(
            f"{path}: the sidecar's name is a symbolic link; a sidecar is never read or "
            "written through one (remove the link to repair this file); left as it is",
            ErrorKind.LINKED,
        )
    existing = _existing_snapshot(path, fresh_only)
    return path, mf.sidecar_document(
        plan.fmt.id,
        os.path.basename(target),
        placed,
        existing.data if existing is not None else None,
    )


def refuse_links(path: str, source_path: str, job: Job) -> None:
    """WriteError for a rewrite that would split hard links or reach outside.

    In place, a file with several hard links would split: the rename gives this name new
    bytes while the other names keep the old ones. A symlink found in a named folder whose
    target lies outside every named path would have that outside file rewritten in place,
    or copied into `--out` (a checkout's link to a session of the user's, published with
    the output folder); allowed with `--follow-links`, and the link itself is always kept.
    """
    options = job.options
    if options.mode is WriteMode.IN_PLACE:
        links = os.stat(source_path).st_nlink
        if links > 1:
            raise filestate.WriteError(
                f"{path}: has {links} hard links; replacing it would split them (the other "
                "names would keep the old bytes); skipped, left as it is",
                ErrorKind.LINKED,
            )
    elif options.mode is not WriteMode.OUT:
        return
    if options.follow_links or not job.roots or not os.path.islink(path):
        return
    if not any(inside(source_path, root) for root in job.roots):
        done = "left as it is" if options.mode is WriteMode.IN_PLACE else "not copied"
        raise filestate.WriteError(
            f"{path}: a symlink to {source_path}, outside the paths named; skipped, {done} "
            "(--follow-links repairs link targets anywhere)",
            ErrorKind.LINKED,
        )
