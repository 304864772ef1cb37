"""Repair leaked reasoning in session files: plan per file, prove, then write safely.

One file is one unit of work (`repair_file`), so `--jobs N` runs files in worker
processes and the result is the same whatever order they finish in. For each
file: read it whole (a stamped snapshot), let its format list the assistant
texts (`sites`; scan's byte prefilter and sparse reader skip what cannot leak),
normalize each, hand the changed ones to the format's `apply` (which decides
placement), and write the records (untouched ones as their original bytes). A
writing mode then backs the file up, journals its manifest entry, and replaces
it through `fsio.atomic_write`, which hands the bytes read back from disk to
`verify` (the planned bytes, untouched records byte-identical, every repaired
text clean on a re-scan) and re-checks that nobody appended to the file. A
read-only mode runs the same proof in memory.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from thinkfix.engine import fsio, sparse, store
from thinkfix.engine import manifest as mf
from thinkfix.engine.change import Change
from thinkfix.engine.inputs import DISABLED, STDIN, Candidate, InputFile, resolve, walk
from thinkfix.engine.lifeline import die_with_parent
from thinkfix.engine.prefilter import delimiter_test
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import ErrorKind, ExitCode, InputError
from thinkfix.engine.scan import ScanOptions, bad_kind
from thinkfix.formats import registry
from thinkfix.formats.base import (
    ApplyOptions,
    Placement,
    PlacementKind,
    Record,
    Repair,
    SessionFormat,
    Site,
    set_record_limit,
)
from thinkfix.io import compression
from thinkfix.io.regular import open_regular
from thinkfix.normalizer import Result, normalize

SIDECAR_SUFFIX = ".thinkfix.json"


class WriteMode(str, Enum):
    """What a repair run does with what it finds (built from the CLI flags in one place)."""

    CHECK = "check"  # exit 1 if anything would change; write nothing
    DIFF = "diff"  # a unified diff of the changed lines; write nothing
    DRY_RUN = "dry-run"  # say what would change; write nothing
    OUT = "out"  # write repaired copies under another folder; inputs untouched
    IN_PLACE = "in-place"  # replace the inputs, with a backup and an undo manifest

    @property
    def writes(self) -> bool:
        return self in (WriteMode.OUT, WriteMode.IN_PLACE)

    @classmethod
    def from_flags(cls, *, check: bool = False, diff: bool = False, dry_run: bool = False,
                   in_place: bool = False, out: str | None = None) -> WriteMode:
        """The mode the flags ask for; ValueError when they ask for none or for two writes.

        A read-only flag wins over a write target, so `--in-place --dry-run`
        previews an in-place run (as `black --check` does).
        """
        if in_place and out:
            raise ValueError("--in-place and --out exclude each other")
        if diff:
            return cls.DIFF
        if check:
            return cls.CHECK
        if dry_run:
            return cls.DRY_RUN
        if in_place:
            return cls.IN_PLACE
        if out:
            return cls.OUT
        raise ValueError("say where repaired files go: --out DIR or --in-place "
                         "(or preview with --check, --diff or --dry-run)")


@dataclass(frozen=True)
class RepairOptions:
    """Everything a repair run needs besides the paths."""

    mode: WriteMode = WriteMode.DRY_RUN
    # What counts as a leak: policy, kinds, inputs, opt-outs; the same value scan uses,
    # so a repaired tree scans clean under the same configuration.
    scan: ScanOptions = field(default_factory=ScanOptions)
    apply: ApplyOptions = field(default_factory=ApplyOptions)
    out_dir: str | None = None
    backup: bool = True
    run_dir: str | None = None  # where the manifest and backups go (default: see manifest)
    manifest_path: str | None = None
    jobs: int = 1
    unified_diff: bool = False  # build the unified diff text (WriteMode.DIFF sets it)
    keep_texts: bool = True  # carry before/after texts for the diff report
    # --in-place leaves alone a file modified less than this many seconds ago: a live agent
    # may be about to append (the CLI's default is ACTIVE_SECONDS; --include-active sets 0).
    active_seconds: float = 0.0
    # --in-place rewrites a symlink's target outside the named paths only when asked.
    follow_links: bool = False


#: The CLI's default quiet time before a session file is rewritten in place.
ACTIVE_SECONDS = 5.0


class FileStatus(str, Enum):
    """What happened to one input file."""

    CLEAN = "clean"  # nothing to repair
    WOULD_CHANGE = "would-change"  # a read-only mode found repairs
    REPAIRED = "repaired"  # written (in place or under --out)
    COPIED = "copied"  # --out: nothing to repair, copied as it is
    SKIPPED = "skipped"  # changed on disk while being repaired; left as it is
    FAILED = "failed"  # verification or the write failed; left as it is
    ERROR = "error"  # could not be read or has no known format


@dataclass(frozen=True)
class FileResult:
    """The outcome for one file: a mergeable value, so files can run anywhere in any order."""

    path: str
    format: str | None
    status: FileStatus
    changes: tuple[Change, ...] = ()
    errors: tuple[InputError, ...] = ()
    records: int = 0
    records_changed: int = 0
    records_inserted: int = 0
    output: str | None = None
    unified_diff: str = ""
    manifest_entries: tuple[dict[str, Any], ...] = ()
    skipped_reason: str | None = None  # not a session file (walked folders only)

    @property
    def changed(self) -> bool:
        return any(c.applied for c in self.changes)


@dataclass(frozen=True)
class RepairResult:
    """A whole run, sorted by path."""

    mode: WriteMode
    files: tuple[FileResult, ...]
    manifest_path: str | None = None
    backup_dir: str | None = None
    errors: tuple[InputError, ...] = ()  # run-level errors (the manifest could not be written)

    @property
    def all_errors(self) -> tuple[InputError, ...]:
        return tuple(sorted(self.errors + tuple(e for f in self.files for e in f.errors)))

    @property
    def changed_files(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.changed and f.status in (
            FileStatus.REPAIRED, FileStatus.WOULD_CHANGE))

    @property
    def changes(self) -> tuple[Change, ...]:
        return tuple(c for f in self.files for c in f.changes)

    def exit_code(self, *, fail_on_change: bool = False) -> ExitCode:
        """2 on any error; 1 when something changed (or would) and that should fail; else 0."""
        if self.all_errors:
            return ExitCode.ERROR
        if (fail_on_change or self.mode is WriteMode.CHECK) and self.changed_files:
            return ExitCode.FINDINGS
        return ExitCode.CLEAN


# --- planning --------------------------------------------------------------------------------


def wanted(result: Result, kinds: frozenset[str]) -> bool:
    """Does a normalized text need a repair: a text-changing finding of a selected kind."""
    return result.changed and any(f.kind.changes_text and f.kind.value in kinds
                                  for f in result.findings)


def find_repairs(fmt: SessionFormat, records: Iterable[Record],
                 options: ScanOptions) -> Iterator[tuple[Site, Result]]:
    """Every assistant text of `records` that the normalizer would change, as scan sees them.

    Byte tests first (scan's rule): a record without the format's assistant marker, or
    without anything that could be a delimiter, is never parsed.
    """
    may_leak = delimiter_test(options.policy) if options.prefilter else None
    may_assist = fmt.may_contain_assistant if options.prefilter else None
    policy, kinds = options.policy, options.kinds
    for record in records:
        raw = record.raw
        if may_assist is not None and not may_assist(raw):
            continue
        if may_leak is not None and not may_leak(raw):
            continue
        for site in fmt.sites(record):
            if options.model_disabled(site.model):
                continue
            result = normalize(site.text, native_reasoning=site.native_reasoning, policy=policy,
                               followed_by_tool_call=site.followed_by_tool_call)
            if wanted(result, kinds):
                yield site, result


def bad_records(fmt: SessionFormat, records: Iterable[Record],
                options: ScanOptions) -> Iterator[Record]:
    """Records that cannot be parsed, among those scan parses.

    Scan's rule: a line that looks like a complete object and has no assistant
    marker in its bytes holds no assistant text, so it is not parsed, and so not
    reported; it is copied through as it is either way.
    """
    may_assist = fmt.may_contain_assistant if options.prefilter else None
    for record in records:
        raw = record.raw
        if not raw and record.error is not None:
            yield record  # a line too long to keep (the sparse reader read past it)
            continue
        if not raw or raw.isspace():
            continue
        if (may_assist is not None and not may_assist(raw) and raw[:1] == b"{"
                and raw[-1:] == b"}" and record.eol):
            continue
        if record.error is not None:
            yield record


@dataclass
class FilePlan:
    """One file, read and repaired in memory, not yet written.

    `records` and `after` are the full record lists only when something changes;
    a file with nothing to repair is surveyed sparsely and never split into records.
    """

    path: str
    fmt: SessionFormat
    snapshot: fsio.Snapshot
    compression: compression.Compression
    content: bytes  # decompressed original
    records: list[Record]
    after: list[Record]
    changes: list[Change]
    new_content: bytes
    bad: tuple[Record, ...] = ()  # records that cannot be parsed (copied through)
    count: int = 0  # records in the original

    @property
    def new_data(self) -> bytes:
        """The bytes to put on disk (compressed as the original was)."""
        if self.compression is compression.Compression.NONE:
            return self.new_content
        if self.new_content == self.content:
            return self.snapshot.data
        return compression.compress(self.new_content, self.compression)

    @property
    def changed(self) -> bool:
        return self.new_content != self.content


#: Repair decompresses a file in memory; its decompressed size may be this many times the
#: record limit at most (1 GiB by default), checked as it streams, so a gzip or zstd bomb
#: is an error for its file instead of the memory cap.
DECOMPRESSED_RECORDS = 16


def decompress(data: bytes, kind: compression.Compression, limit: int = 0) -> bytes:
    """The decompressed bytes; past `limit` (0: none) a TooLarge error, read no further."""
    if kind is compression.Compression.NONE:
        return data
    out = io.BytesIO()
    with compression.wrap_reader(io.BytesIO(data), kind) as fp:
        while True:
            block = fp.read(1 << 20)
            if not block:
                return out.getvalue()
            out.write(block)
            if limit and out.tell() > limit:
                raise TooLarge(f"decompresses to more than {limit:,} bytes ({kind.value} "
                               f"file of {len(data):,} bytes; the limit is "
                               f"{DECOMPRESSED_RECORDS} x --max-record-size): a compression "
                               "bomb or a file too large to repair in memory")


class TooLarge(Exception):
    """An input past a size limit: an error for its file, with what happened."""


def describe(exc: BaseException) -> str:
    """An exception as a message that always says what happened (MemoryError has no text)."""
    if isinstance(exc, MemoryError):
        return "out of memory" + (f" ({exc})" if str(exc) else "")
    text = str(exc)
    return text if text and not isinstance(exc, (KeyError, TypeError, AttributeError)) else \
        f"{type(exc).__name__}: {text or 'no details'}"


def _named(content: bytes, path: str) -> io.BytesIO:
    """The file's bytes as a stream that knows the file's name, as an open file does
    (OpenCode's file store reads a part's role from the message file beside it)."""
    stream = io.BytesIO(content)
    stream.name = path
    return stream


def _survey(fmt: SessionFormat, content: bytes, path: str,
            options: ScanOptions) -> tuple[list[Record], int, list[Record] | None]:
    """The records a scan would parse, how many records there are, and all of them if read.

    JSONL files go through scan's sparse reader, which jumps to assistant lines and
    never builds the others; documents and other readers are read whole.
    """
    if options.prefilter and sparse.supports(fmt) and \
            not sparse.is_document(io.BufferedReader(io.BytesIO(content))):
        reader = sparse.SparseReader(fmt, io.BytesIO(content))
        surveyed = list(reader)
        return surveyed, reader.records, None
    records = list(fmt.read(_named(content, path)))
    return records, len(records), records


def plan_file(path: str, fmt: SessionFormat, snapshot: fsio.Snapshot,
              kind: compression.Compression, options: RepairOptions) -> FilePlan:
    """Repair one file in memory: what changes, where the reasoning goes, and the new bytes."""
    limit = options.scan.max_record_size
    content = decompress(snapshot.data, kind, limit * DECOMPRESSED_RECORDS)
    surveyed, count, records = _survey(fmt, content, snapshot.path, options.scan)
    found = list(find_repairs(fmt, surveyed, options.scan))
    # After the sites were asked for: a record whose fields the format rejected is bad too.
    bad = tuple(bad_records(fmt, surveyed, options.scan))
    if not found:
        return FilePlan(path, fmt, snapshot, kind, content, [], [], [], content, bad, count)
    if records is None:
        # Sites keep the record index, which the sparse reader numbers like the full one.
        records = list(fmt.read(_named(content, snapshot.path)))
    repairs = [Repair(site, result.visible, result.extracted) for site, result in found]
    after, placements = fmt.apply(records, repairs, options.apply)
    keep = options.keep_texts
    changes = [Change(site, result.findings, site.text if keep else "",
                      _written(result.visible, placement) if keep else "", result.extracted,
                      placement,
                      tuple((s.start, s.end, s.label.value) for s in result.spans) if keep else ())
               for (site, result), placement in zip(found, placements, strict=True)]
    new_content = _serialise(fmt, after) if any(r.touched for r in after) else content
    return FilePlan(path, fmt, snapshot, kind, content, records, after, changes, new_content,
                    bad, count)


def _written(visible: str, placement: Placement) -> str:
    """The visible text the file gets: the repaired one, or the archive placeholder."""
    return visible if placement.placeholder is None else placement.placeholder


def _serialise(fmt: SessionFormat, records: Sequence[Record]) -> bytes:
    out = io.BytesIO()
    fmt.write(records, out)
    return out.getvalue()


def verify(plan: FilePlan, new_content: bytes, options: ScanOptions) -> None:
    """Prove that `new_content` is the planned repair and nothing else (VerifyError otherwise).

    The bytes are exactly the planned ones; walking the records in step, every
    run of records the repair did not touch is byte-identical to the original at
    its offset (compared as whole runs, at C speed), originals are never dropped,
    and each touched or inserted record reads back as one record; no text of a
    touched record still needs repair, except those the format refused to change.
    """
    fmt, old, name = plan.fmt, plan.content, plan.path
    if new_content != plan.new_content:
        raise fsio.VerifyError(f"{name}: the new bytes are not the planned ones")
    originals = iter(plan.records)
    old_at = new_at = 0
    run: tuple[int, int, int] | None = None  # (old start, new start, length) of untouched bytes
    touched: list[bytes] = []

    def flush() -> None:
        # Slices, not memoryviews: bytes equality is one memcmp, a memoryview's is per item.
        if run is not None and old[run[0]:run[0] + run[2]] != \
                new_content[run[1]:run[1] + run[2]]:
            raise fsio.VerifyError(f"{name}: an untouched record changed near byte {run[0]}")

    for rec in plan.after:
        size = len(rec.raw) + len(rec.eol)
        if not rec.inserted:
            original = next(originals, None)
            if original is None:
                raise fsio.VerifyError(f"{name}: more records than were read")
            old_size = len(original.raw) + len(original.eol)
        else:
            old_size = 0
        if rec.touched or rec.inserted:
            flush()
            run = None
            touched.append(new_content[new_at:new_at + size])
        elif run is None:
            run = (old_at, new_at, size)
        else:
            run = (run[0], run[1], run[2] + size)
        if not rec.touched and not rec.inserted and old_size != size:
            raise fsio.VerifyError(f"{name}: untouched line {rec.line} changed size")
        old_at += old_size
        new_at += size
    flush()
    if next(originals, None) is not None:
        raise fsio.VerifyError(f"{name}: a record was dropped")
    if old_at != len(old) or new_at != len(new_content):
        raise fsio.VerifyError(f"{name}: the records do not cover the file exactly")
    reread: list[Record] = []
    for chunk in touched:
        got = list(fmt.read(_named(chunk, plan.snapshot.path)))
        if len(got) != 1 or got[0].raw + got[0].eol != chunk:
            raise fsio.VerifyError(f"{name}: a repaired record does not read back as one record")
        reread.append(got[0])
    refused = Counter(c.site.text for c in plan.changes if not c.applied)
    dirty = Counter(site.text for site, _ in find_repairs(fmt, reread, options))
    left = dirty - refused
    if left:
        raise fsio.VerifyError(f"{name}: {sum(left.values())} repaired text(s) still "
                               "leak on a re-scan")


# --- unified diff ----------------------------------------------------------------------------


Opcode = tuple[str, int, int, int, int]


def unified_diff(plan: FilePlan, label: str | None = None) -> str:
    """The changed lines of a file as a unified diff (no context: session lines are long)."""
    if not plan.changed:
        return ""
    name = (label or plan.path).replace(os.sep, "/").lstrip("/")  # `a/` + path, as git writes
    old_lines, new_lines = _lines(plan.content), _lines(plan.new_content)
    out = [f"--- a/{name}\n", f"+++ b/{name}\n"]
    for group in _hunks(plan, old_lines, new_lines):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag in ("replace", "delete"):
                out.extend(_emit("-", old_lines[a1:a2]))
            if tag in ("replace", "insert"):
                out.extend(_emit("+", new_lines[b1:b2]))
    return "".join(out)


def _hunks(plan: FilePlan, old_lines: list[str], new_lines: list[str]) -> list[list[Opcode]]:
    """Groups of adjacent changes.

    A JSONL file's records map one to one (plus inserted ones), so its changes
    come from the plan, in linear time; a one-record document is diffed by line.
    """
    if len(plan.records) <= 1:
        import difflib

        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        return list(matcher.get_grouped_opcodes(0))
    groups: list[list[Opcode]] = []
    i = j = 0  # line positions in old and new
    originals = iter(plan.records)
    for rec in plan.after:
        n_new = _count_lines(rec)
        code: Opcode | None = None
        if rec.inserted:
            code = ("insert", i, i, j, j + n_new)
        else:
            n_old = _count_lines(next(originals))
            if rec.touched:
                code = ("replace", i, i + n_old, j, j + n_new)
            i += n_old
        j += n_new
        if code is not None:
            last = groups[-1][-1] if groups else None
            if last is not None and last[2] == code[1] and last[4] == code[3]:
                groups[-1].append(code)
            else:
                groups.append([code])
    return groups


def _count_lines(record: Record) -> int:
    return (record.raw + record.eol).count(b"\n") + (0 if record.eol else 1)


def _lines(content: bytes) -> list[str]:
    """Lines split at `\\n` only (JSON strings may hold raw U+2028, which is no line end)."""
    parts = content.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return [line.decode("utf-8", "replace") for line in lines]


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def _emit(sign: str, lines: list[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield sign + line.removesuffix("\r\n").removesuffix("\n") + "\n"
        else:
            yield sign + line + "\n"
            yield "\\ No newline at end of file\n"


# --- one file, end to end --------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One file to repair, with everything a worker process needs to do it alone."""

    candidate: Candidate | InputFile
    index: int
    options: RepairOptions
    output: str | None  # --out: where the repaired copy goes
    backup_dir: str | None
    journal_dir: str | None
    roots: tuple[str, ...] = ()  # the named paths, symlinks resolved (see `_refuse_links`)


def repair_file(job: Job) -> FileResult:
    """Read, plan, prove and (in a writing mode) write one file. Never raises (but for an
    interrupt): an unexpected exception, a bug met on this file, is an error for this file
    alone, and the run goes on; whatever this file's write did is in the journal."""
    try:
        return _repair_file(job)
    except Exception as exc:  # noqa: BLE001 - one file's trouble must not end a run
        path = getattr(job.candidate, "path", "?")
        return FileResult(path, None, FileStatus.ERROR, errors=(InputError(
            path, None, ErrorKind.INTERNAL.value,
            f"{path}: cannot repair: internal error ({type(exc).__name__}: {exc}); "
            "left as it is"),))


def _repair_file(job: Job) -> FileResult:
    options = job.options
    set_record_limit(options.scan.max_record_size)
    found = resolve(job.candidate, options.scan.inputs)
    if found.skipped is None and found.error is None and options.scan.path_disabled(found.path):
        found = replace(found, skipped=DISABLED)
    if found.skipped is not None:
        return FileResult(found.path, None, FileStatus.CLEAN, skipped_reason=found.skipped)
    if found.error is not None or found.format is None:
        err = found.error or InputError(found.path, None, ErrorKind.UNKNOWN_FORMAT.value,
                                        "no format")
        return FileResult(found.path, None, FileStatus.ERROR, errors=(err,))
    path, fmt = found.path, registry.get(found.format)
    if fmt.is_database(found.real_path):
        return _repair_store(job, path, found.real_path, fmt)
    try:
        snapshot = fsio.read_snapshot(found.real_path)
        _refuse_active(path, snapshot, options)
        plan = plan_file(path, fmt, snapshot, compression.sniff(snapshot.data[:4]), options)
    except fsio.WriteError as exc:
        return _failed(path, fmt.id, exc.kind, str(exc), FileStatus.SKIPPED
                       if exc.kind is ErrorKind.CHANGED else FileStatus.ERROR)
    except Exception as exc:  # noqa: BLE001 - a corrupt stream or a format bug: this file only
        return _failed(path, fmt.id, ErrorKind.UNREADABLE,
                       f"{path}: cannot repair: {describe(exc)}; left as it is",
                       FileStatus.ERROR)
    bad = tuple(_bad_record(path, r) for r in plan.bad)
    base = FileResult(path, fmt.id, FileStatus.CLEAN, tuple(plan.changes), bad,
                      records=plan.count,
                      records_changed=sum(1 for r in plan.after if r.touched and not r.inserted),
                      records_inserted=sum(1 for r in plan.after if r.inserted))
    try:
        if plan.changed and not options.mode.writes:  # a write proves the bytes read back
            verify(plan, plan.new_content, options.scan)
    except fsio.WriteError as exc:
        return replace(base, status=FileStatus.FAILED,
                       errors=bad + (InputError(path, None, exc.kind.value, str(exc)),))
    if options.unified_diff:
        base = replace(base, unified_diff=unified_diff(plan))
    if not options.mode.writes:
        return replace(base, status=FileStatus.WOULD_CHANGE if plan.changed else FileStatus.CLEAN)
    if not plan.changed and options.mode is WriteMode.IN_PLACE:
        return base
    try:
        _refuse_links(path, snapshot, job)
        return _write(job, plan, base)
    except fsio.WriteError as exc:
        status = FileStatus.SKIPPED if exc.kind in (ErrorKind.CHANGED, ErrorKind.LINKED) \
            else FileStatus.FAILED
        return replace(base, status=status,
                       errors=bad + (InputError(path, None, exc.kind.value, str(exc)),))
    except OSError as exc:
        return replace(base, status=FileStatus.FAILED, errors=bad + (InputError(
            path, None, ErrorKind.WRITE_FAILED.value, f"{path}: {exc.strerror or exc}"),))


def _refuse_active(path: str, snapshot: fsio.Snapshot, options: RepairOptions) -> None:
    """FileChanged for a file written to moments ago, when it would be replaced in place."""
    if options.mode is not WriteMode.IN_PLACE or options.active_seconds <= 0:
        return
    age = time.time() - snapshot.stamp.mtime_ns / 1e9
    if age < options.active_seconds:
        raise fsio.FileChanged(
            f"{path}: modified {max(age, 0):.1f}s ago, so a live session may still be writing "
            "it; skipped, left as it is (--include-active repairs it anyway)")


def _repair_store(job: Job, path: str, real: str, fmt: SessionFormat) -> FileResult:
    """A store that is a database (OpenCode): its rows change in one transaction, after an
    online backup; never a byte rewrite. Dry runs rehearse on an in-memory copy."""
    options = job.options
    with open_regular(real) as fp:
        records = list(fmt.read(fp))
    found = list(find_repairs(fmt, records, options.scan))
    bad = tuple(_bad_record(path, r) for r in bad_records(fmt, records, options.scan))
    base = FileResult(path, fmt.id, FileStatus.CLEAN, (), bad, records=len(records))
    if not found:
        return base
    repairs = [Repair(site, result.visible, result.extracted) for site, result in found]
    keep = options.keep_texts

    def changes(placements: list[Placement]) -> tuple[Change, ...]:
        return tuple(Change(site, result.findings, site.text if keep else "",
                            result.visible if keep and placement.applied else "",
                            result.extracted, placement,
                            tuple((s.start, s.end, s.label.value) for s in result.spans)
                            if keep else ())
                     for (site, result), placement in zip(found, placements, strict=True))

    try:
        if not options.mode.writes:
            done = changes(store.rehearse(fmt, real, repairs))
            return replace(base, changes=done, status=FileStatus.WOULD_CHANGE
                           if any(c.applied for c in done) else FileStatus.CLEAN)
        in_place = options.mode is WriteMode.IN_PLACE
        target = real if in_place else job.output
        assert target is not None
        if not in_place:
            store.copy_store(real, target)
        backup = (mf.backup_path(job.backup_dir, real)
                  if in_place and options.backup and job.backup_dir is not None else None)
        mode = os.stat(real).st_mode & 0o777
        entries: list[dict[str, Any]] = []

        def journal(before: str, after: str, placements: list[Placement]) -> None:
            entries.append(store.entry(
                path=path, target=fsio.real_path(target), fmt=fmt.id, mode=mode,
                before=before if in_place else None, after=after, backup=backup,
                repairs=[mf.change_entry(c) for c in changes(placements)]))
            if job.journal_dir is not None:
                mf.journal(job.journal_dir, job.index, entries)

        placements, _, _ = store.apply(fmt, target, repairs, backup=backup, journal=journal)
    except (fsio.WriteError, sqlite3.Error, OSError) as exc:
        status = FileStatus.SKIPPED if isinstance(exc, store.StoreBusy) else FileStatus.FAILED
        kind = exc.kind if isinstance(exc, fsio.WriteError) else ErrorKind.WRITE_FAILED
        return replace(base, status=status, errors=bad + (InputError(
            path, None, kind.value, str(exc) if isinstance(exc, fsio.WriteError)
            else f"{path}: cannot repair the store: {exc}; left as it is"),))
    done = changes(placements)
    return replace(base, changes=done, output=target, manifest_entries=tuple(entries),
                   status=FileStatus.REPAIRED if any(c.applied for c in done)
                   else FileStatus.CLEAN)


def _refuse_links(path: str, snapshot: fsio.Snapshot, job: Job) -> None:
    """WriteError for an in-place rewrite that would split hard links or reach outside.

    A file with several hard links would split: the rename gives this name new bytes
    while the other names keep the old ones. A symlink found in a named folder whose
    target lies outside every named path would have that outside file rewritten
    (allowed with `--follow-links`; the link itself is always kept).
    """
    options = job.options
    if options.mode is not WriteMode.IN_PLACE:
        return
    links = os.stat(snapshot.path).st_nlink
    if links > 1:
        raise fsio.WriteError(
            f"{path}: has {links} hard links; replacing it would split them (the other names "
            "would keep the old bytes); skipped, left as it is", ErrorKind.LINKED)
    if options.follow_links or not job.roots or not os.path.islink(path):
        return
    if not any(_inside(snapshot.path, root) for root in job.roots):
        raise fsio.WriteError(
            f"{path}: a symlink to {snapshot.path}, outside the paths named; skipped, left as "
            "it is (--follow-links repairs link targets anywhere)", ErrorKind.LINKED)


def _failed(path: str, fmt: str, kind: ErrorKind, message: str, status: FileStatus) -> FileResult:
    return FileResult(path, fmt, status, errors=(InputError(path, None, kind.value, message),))


def _bad_record(path: str, record: Record) -> InputError:
    message = record.error or ""
    if not message.endswith("copied through untouched"):
        message += "; copied through untouched"
    return InputError(path, record.line, bad_kind(message).value, f"line {record.line}: {message}")


def _write(job: Job, plan: FilePlan, base: FileResult) -> FileResult:
    """Back up, journal the manifest entries, write the sidecar, then replace the file.

    The order matters: an entry is durable before the file it describes changes,
    and the session file is replaced last, so a failure at any step leaves it as it
    was (a sidecar written for it is put back, backups of it are removed).
    """
    options = job.options
    snapshot = plan.snapshot
    target = snapshot.path if options.mode is WriteMode.IN_PLACE else job.output
    assert target is not None
    data = plan.new_data
    made: list[str] = []  # backups made for this file, removed again if it is not replaced
    before = _existing(target)
    backup = _backup(job, before, made)
    entries = [mf.file_entry(
        path=plan.path, source=snapshot.path, target=fsio.real_path(target),
        link=os.path.abspath(plan.path) if os.path.islink(plan.path) else None,
        fmt=plan.fmt.id, compression=plan.compression.value, snapshot=snapshot,
        before=before, backup=backup, data=data, content=plan.content,
        new_content=plan.new_content, records=plan.records, after=plan.after,
        changes=plan.changes, same_source=options.mode is WriteMode.IN_PLACE)]
    sidecar = _sidecar(plan, target)
    side_before = None
    try:
        if sidecar is not None:
            side_before = _existing(sidecar[0])
            entries.append(mf.sidecar_entry(plan.path, fsio.real_path(sidecar[0]), side_before,
                                            _backup(job, side_before, made), sidecar[1]))
        if job.journal_dir is not None:
            mf.journal(job.journal_dir, job.index, entries)
        if sidecar is not None:
            fsio.atomic_write(sidecar[0], sidecar[1], mode=snapshot.mode, make_dirs=True)

        def check(written: bytes) -> None:
            verify(plan, decompress(written, plan.compression), options.scan)

        try:
            fsio.atomic_write(target, data, mode=snapshot.mode,
                              verify=check if plan.changed else None,
                              watch=(snapshot.path, snapshot.stamp), make_dirs=True)
        except BaseException:
            if sidecar is not None:
                _put_back(sidecar[0], side_before)
            raise
    except BaseException:
        for path in made:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if job.journal_dir is not None:
            mf.unjournal(job.journal_dir, job.index)
        raise
    status = FileStatus.REPAIRED if plan.changed else FileStatus.COPIED
    return replace(base, status=status, output=target, manifest_entries=tuple(entries))


def _backup(job: Job, snapshot: fsio.Snapshot | None, made: list[str]) -> str | None:
    """A verified copy of a file about to be replaced, under the run's backup folder."""
    if snapshot is None or not job.options.backup or job.backup_dir is None:
        return None
    path = mf.backup_path(job.backup_dir, snapshot.path)
    fsio.copy_verified(snapshot, path)
    made.append(path)
    return path


def _put_back(path: str, previous: fsio.Snapshot | None) -> None:
    """Undo a sidecar write whose session file could not be replaced."""
    with contextlib.suppress(OSError, fsio.WriteError):
        if previous is None:
            os.unlink(path)
        else:
            fsio.atomic_write(path, previous.data, mode=previous.mode)


def _existing(path: str) -> fsio.Snapshot | None:
    if not os.path.lexists(path):
        return None
    return fsio.read_snapshot(path)


def _sidecar(plan: FilePlan, target: str) -> tuple[str, bytes] | None:
    """`<file>.thinkfix.json` beside the written file, for reasoning its format has no place for."""
    placed = [c for c in plan.changes
              if c.applied and c.placement.kind is PlacementKind.SIDECAR and c.extracted]
    if not placed:
        return None
    path = target + SIDECAR_SUFFIX
    existing = _existing(path)
    return path, mf.sidecar_document(plan.fmt.id, os.path.basename(target), placed,
                                     existing.data if existing is not None else None)


# --- a whole run -----------------------------------------------------------------------------


def out_paths(paths: Sequence[str], out_dir: str) -> tuple[str, str]:
    """The folder inputs are mirrored from (their common ancestor) and the output root."""
    roots = [os.path.abspath(p) for p in paths]
    bases = [r if os.path.isdir(r) else os.path.dirname(r) for r in roots]
    return os.path.commonpath(bases) if bases else os.getcwd(), os.path.abspath(out_dir)


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:
        return False


def check_paths(paths: Sequence[str], options: RepairOptions) -> None:
    """ValueError for path combinations a writing mode must refuse."""
    if not options.mode.writes:
        return
    if STDIN in paths:
        raise ValueError("stdin ('-') can only be checked or diffed, not repaired")
    if options.mode is WriteMode.OUT:
        assert options.out_dir is not None
        base, out = out_paths(paths, options.out_dir)
        for p in paths:
            if _inside(os.path.abspath(p), out) or _inside(os.path.realpath(p), out):
                raise ValueError(f"--out {options.out_dir} must not be an input or hold one")
        if out == base:
            raise ValueError(f"--out {options.out_dir} is the input folder itself")


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def repair_paths(paths: Sequence[str], options: RepairOptions, *, tool_version: str = "",
                 progress: Progress = NULL_PROGRESS) -> RepairResult:
    """Repair every session file under `paths`; the library entry point behind the CLI."""
    check_paths(paths, options)
    run_dir = manifest_path = journal_dir = backup_dir = None
    if options.mode.writes:
        run_id = new_run_id()
        run_dir = options.run_dir or mf.default_run_dir(run_id)
        manifest_path = options.manifest_path or os.path.join(run_dir, mf.MANIFEST_NAME)
        journal_dir = manifest_path + mf.JOURNAL_SUFFIX
        backup_dir = os.path.join(run_dir, "backup") if options.backup else None
    roots = mf.run_roots(paths, options.out_dir)
    if journal_dir is not None:
        # Sealed before any file changes: undo follows only entries inside these roots.
        mf.start_journal(journal_dir, roots=roots, mode=options.mode.value,
                         backup_dir=backup_dir)
    base = out = None
    if options.mode is WriteMode.OUT:
        assert options.out_dir is not None
        base, out = out_paths(paths, options.out_dir)
    jobs: list[Job] = []
    named = tuple(os.path.realpath(p) for p in paths if p != STDIN)
    for n, item in enumerate(walk(paths, options.scan.inputs)):
        output = None
        if base is not None and out is not None:
            absolute = os.path.abspath(item.path)
            if _inside(absolute, out):
                continue  # an earlier run's output inside a walked folder
            output = os.path.join(out, os.path.relpath(absolute, base))
        jobs.append(Job(item, n, options, output, backup_dir, journal_dir, named))
    if options.mode is WriteMode.IN_PLACE:
        # Temporary files of a run that was killed go first, even from folders where this run
        # then finds nothing left to write (the killed run may have finished them).
        _sweep(jobs)
    results: list[FileResult] = []
    try:
        results, _ = _run(jobs, options.jobs, progress)
    finally:
        # Whatever stopped the run (an interrupt, a bug), every file already replaced is
        # journaled: the manifest is written for them before the exception goes on.
        errors, written = _finalise(results, options=options,
                                    manifest_path=manifest_path, journal_dir=journal_dir,
                                    run_dir=run_dir, backup_dir=backup_dir,
                                    tool_version=tool_version, roots=roots)
    files = tuple(sorted((r for r in results if r.skipped_reason is None),
                         key=lambda r: r.path))
    backups = backup_dir if backup_dir is not None and os.path.isdir(backup_dir) else None
    return RepairResult(options.mode, files, manifest_path if written else None, backups, errors)


def _finalise(results: Sequence[FileResult], *, options: RepairOptions,
              manifest_path: str | None, journal_dir: str | None, run_dir: str | None,
              backup_dir: str | None, tool_version: str, roots: Sequence[str] = (),
              ) -> tuple[tuple[InputError, ...], list[dict[str, Any]]]:
    """Turn the journal into the run's manifest (or remove it when nothing was replaced).

    Results may be missing (a worker died, the run was interrupted, a file met a bug
    after its rename), so the journal's entries of files that now hold the bytes the
    repair wrote count too.
    """
    errors: tuple[InputError, ...] = ()
    written = [e for r in results for e in r.manifest_entries]
    if journal_dir is not None:
        written += mf.recover_journal(journal_dir, {e["target"] for e in written})
    if manifest_path is not None and written:
        try:
            mf.write_manifest(manifest_path, mf.manifest_document(
                written, mode=options.mode.value, policy=options.scan.policy, apply=options.apply,
                backup_dir=backup_dir, tool_version=tool_version, roots=roots))
            if journal_dir is not None:
                mf.remove_journal(journal_dir)
        except (OSError, fsio.WriteError) as exc:
            errors = (InputError(manifest_path, None, ErrorKind.WRITE_FAILED.value,
                                 f"the undo manifest could not be written ({exc}); its entries "
                                 f"are kept in {journal_dir}"),)
    elif journal_dir is not None:
        mf.remove_journal(journal_dir)  # nothing was replaced: nothing to undo
        if run_dir is not None and options.run_dir is None:
            _remove_empty(run_dir)
    return errors, written


def _sweep(jobs: Sequence[Job]) -> None:
    """Remove dead processes' temporary files from every folder holding an input."""
    for folder in sorted({os.path.dirname(fsio.real_path(j.candidate.real_path))
                          for j in jobs if j.candidate.real_path != STDIN}):
        fsio.sweep_stale(folder)


def _remove_empty(folder: str) -> None:
    """Remove `folder` and its empty subfolders; anything left in it stays."""
    for root, _, _ in sorted(os.walk(folder), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(root)


def _run(jobs: list[Job], workers: int, progress: Progress = NULL_PROGRESS,
         ) -> tuple[list[FileResult], bool]:
    """Every job's result, and whether a worker died (the run was then redone here)."""
    progress.start(len(jobs), sum(_size(j) for j in jobs))
    try:
        if workers <= 1 or len(jobs) <= 1:
            return [_done(progress, j, repair_file(j)) for j in jobs], False
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(jobs)),
                                     initializer=die_with_parent,
                                     initargs=(os.getpid(),)) as pool:
                _never_wait_for_a_dead_reader(pool)
                results = pool.map(repair_file, jobs, chunksize=_chunk(len(jobs), workers))
                return [_done(progress, j, r) for j, r in zip(jobs, results)], False
        except BrokenProcessPool:
            # A worker died (killed, out of memory) mid-file. Which files it finished is
            # unknown, so every file is redone here: a repaired file is clean now and is left
            # alone. The pool has joined its workers by now, so their temporary files go too.
            if jobs[0].options.mode is WriteMode.IN_PLACE:
                _sweep(jobs)
            return [repair_file(j) for j in jobs], True
    finally:
        progress.finish()


def _never_wait_for_a_dead_reader(pool: ProcessPoolExecutor) -> None:
    """Let a broken pool shut down although a killed worker never read its last task.

    Before Python 3.12 (CPython gh-94777) the pool's feeder thread stays blocked writing
    to the dead worker's pipe, and shutting the broken pool down waits for that thread
    for ever: `repair --jobs N` hung after a worker was killed. Not waiting for the call
    queue's feeder is CPython's own fix; every task is sent before results are read, so
    nothing the run needs is in that queue when the pool breaks.
    """
    queue = getattr(pool, "_call_queue", None)
    if queue is not None:
        queue.cancel_join_thread()


def _size(job: Job) -> int:
    return max(0, getattr(job.candidate, "size", 0) or 0)


def _done(progress: Progress, job: Job, result: FileResult) -> FileResult:
    progress.advance(result.path, _size(job))
    return result


def _chunk(n: int, workers: int) -> int:
    return max(1, min(64, n // (workers * 8)))
