"""Incremental scans: remember what each file held, and read only what was appended since.

Session files are append-only JSONL in the common case. The state keeps, per file, its
identity (device, inode, size, modification and status-change times), a hash of the whole
part already scanned, and the counts and findings of that part (`committed`): everything up
to the end of its last complete line, plus what a reader needs to go on from there (the line
count, the format's context after that line, the line-ending mode; engine/telemetry/state.py
writes it). The next run then

- reuses the counts of a file whose identity is unchanged, reading nothing: a write moves
  the status-change time (ctime), which, unlike the mtime, no one can put back;
- otherwise hashes the committed part again (a hash is ~30x cheaper than parsing,
  docs/performance.md) and, when it is the same, parses only the bytes after it, starting
  at the first line not yet committed: an append, or a file whose status alone changed;
- reads a file whole when it was replaced (another inode), truncated, rewritten anywhere
  in the part already scanned, or is not JSONL read line by line (whole-document `.json`,
  compressed files, `--parse-all`).

An unfinished last line (a record being written) is never committed: it is read again
with whatever follows it. The totals therefore equal a full scan's, which a property test
checks by appending, rewriting and truncating files at random between runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, BinaryIO

import orjson

from thinkfix._version import __version__
from thinkfix.engine.inputs.files import STDIN, Candidate, InputFile, resolve
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.parallel import pool as parallel
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import Report
from thinkfix.engine.scan import sparse
from thinkfix.engine.scan.one_file import _FileScan
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import build_report, require_sessions, with_display_paths
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.runner import POOL_MIN_BYTES, default_jobs
from thinkfix.engine.scan.task import rewritten, scan_file
from thinkfix.engine.telemetry.appended import (
    HashedRange,
    check_digest,
    context_from,
    context_json,
    last_line_end,
    merge,
    new_digest,
    prefix_digest,
    shrank,
)
from thinkfix.engine.telemetry.state import Entry, State, vouched
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import read_head
from thinkfix.formats.records import EMPTY_CONTEXT, Context, set_record_limit
from thinkfix.io.compression import Compression
from thinkfix.io.ranges import ByteRange
from thinkfix.normalizer.kinds import LeakKind

#: A file modified this close to the moment it was read may change again within the same
#: clock tick without its size or times changing ("racily clean", as git calls it): such an
#: entry is not trusted to be unchanged, and the committed part is hashed again.
RACY_NS = 2_000_000_000

FULL, APPENDED, UNCHANGED = "full", "appended", "unchanged"


def default_state_path(env: Mapping[str, str] | None = None) -> str:
    """`$XDG_STATE_HOME/thinkfix/scan-state.json` (XDG's default `~/.local/state`)."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME", "").strip()
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "thinkfix", "scan-state.json")


def options_key(options: ScanOptions) -> str:
    """A stable hash of everything that decides what a scan finds: state from other options
    is not reused."""
    return hashlib.sha256(orjson.dumps([__version__, _canon(options)])).hexdigest()[:24]


def _canon(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__] + [
            [f.name, _canon(getattr(value, f.name))] for f in dataclasses.fields(value)
        ]
    if isinstance(value, Enum):
        return _canon(value.value)
    if isinstance(value, (set, frozenset)):
        return sorted((_canon(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    if isinstance(value, Mapping):
        return sorted([str(k), _canon(v)] for k, v in value.items())
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    pattern = getattr(value, "pattern", None)
    return repr(pattern) if pattern is not None else repr(value)


@dataclass
class Increment:
    """One file's outcome: its total result, what to remember, and how much was read."""

    result: ScannedFile
    entry: Entry | None
    mode: str = FULL
    bytes_read: int = 0  # parsed or hashed
    bytes_parsed: int = 0

    @property
    def path(self) -> str:
        return self.result.path

    @property
    def size(self) -> int:
        return self.result.size


def _part(
    file: InputFile,
    options: ScanOptions,
    fp: BinaryIO,
    start: int,
    end: int,
    lines: int,
    ctx: Context,
    crlf: bool,
    digest: Any = None,
) -> tuple[_FileScan, int, Context, bool]:
    """Scan bytes [start, end) as lines `lines`..., with the context the lines before left:
    the scan, the line count after it, the context after it, and whether every byte of the
    range was read (not when the file shrank meanwhile). With `digest`, the bytes are
    hashed into it as they are read."""
    scan = _FileScan(file, file.session_format(), options)
    raw = ByteRange(fp, start, end) if digest is None else HashedRange(fp, start, end, digest)
    scan.run(io.BufferedReader(raw, buffer_size=1 << 16), start=lines, ctx=ctx, crlf=crlf)
    if scan.ctx_after is None:
        # the reader took the range for one JSON document split across lines (#21 item 3):
        # no line to go on from, so the file is read whole
        raise _NotLines
    return scan, lines + scan.records, scan.ctx_after, raw.pos == end


class _NotLines(Exception):
    """A range the line reader did not read by line."""


def _resumable(file: InputFile, options: ScanOptions) -> bool:
    return (
        options.prefilter
        and file.compression is Compression.NONE
        and sparse.supports(file.session_format())
    )


def _stat_entry(
    options: str, st: os.stat_result, fmt: str | None, result: ScannedFile, **resume: Any
) -> Entry:
    """What to remember of a file read as `st` says: whole, or (`resume`) up to an offset."""
    return Entry(
        options,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        fmt,
        result,
        **(resume or {"offset": st.st_size}),
    )


def scan_increment(
    item: Candidate | InputFile, entry: Entry | None, options: ScanOptions, key: str | None = None
) -> Increment:
    """Scan one file, reusing `entry` (what an earlier run committed) where it still holds."""
    # as `scan_file` does first: the parts read here (`_full`, `_resume`) keep the run's
    # `--max-record-size`, not whatever the process last set (review8, finding 4)
    set_record_limit(options.max_record_size)
    key = key or options_key(options)
    path = item.real_path
    if item.path == STDIN or (isinstance(item, InputFile) and item.error is not None):
        return Increment(scan_file(item, options), None)
    # Taken before the stat: any change from here on moves the ctime past what is kept.
    now = time.time_ns()
    try:
        st = os.stat(path)
    except OSError:
        return Increment(scan_file(item, options), None)
    if entry is not None and (
        entry.options != key
        or (entry.dev, entry.ino) != (st.st_dev, st.st_ino)
        or entry.committed.path != item.path
    ):
        entry = None
    trusted = entry is not None and vouched(entry, st, path)
    if entry is not None and trusted and (not entry.resumable or entry.offset == st.st_size):
        return Increment(entry.committed, entry, UNCHANGED)
    try:
        done = None
        if entry is not None and entry.resumable and st.st_size >= entry.size:
            try:
                done = _resume(item, entry, st, options, key, trusted)
            except _NotLines:
                done = None
        if done is None:
            try:
                done = _full(item, st, options, key)
            except _NotLines:
                result = scan_file(item, options)
                done = Increment(
                    result,
                    _stat_entry(key, st, result.format, result),
                    FULL,
                    st.st_size,
                    st.st_size,
                )
    except OSError:
        # Deleted (or made unreadable) between the walk and the read: reported as a full
        # scan reports it (an unreadable input, never clean), and nothing remembered (#22).
        return Increment(scan_file(item, options), None)
    if done.entry is not None:
        done.entry.settled = max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS < now
    return done


def _detection_reads_past(path: str, size: int) -> bool:
    """Detection of the file as it is now reads past `size`: its verdict may have changed.

    Detection reads whole records (a head of a few records, however long), so a file
    whose first records were still being written was judged on less than it is now.
    """
    with open(path, "rb") as fp:
        return len(read_head(fp, cap=size + 1)) > size


def _resume(
    item: Candidate | InputFile,
    entry: Entry,
    st: os.stat_result,
    options: ScanOptions,
    key: str,
    trusted: bool,
) -> Increment | None:
    """Go on from the committed part of `entry` once it is proven the same (hashed again,
    unless `trusted` by its stat), or None: read the file whole."""
    if entry.offset == 0:
        # no complete line committed yet: nothing to go on from, and a first line that opens
        # a document is read as one (scan.one_file), which is no line reader's resume
        return None
    if (options.since, options.until) != (None, None) and st.st_mtime_ns != entry.mtime_ns:
        # a message with no time of its own is judged by its file's, which the append moved:
        # the committed part may now fall inside the window or outside it (review10)
        return None
    if (
        st.st_size > entry.size
        and _detection_reads_past(item.real_path, entry.size)
        and resolve(item, options.inputs).format != entry.format
    ):
        return None  # detection saw less than a full head last time, and now decides otherwise
    # The state file names the format by its id: this is where it becomes the object again.
    fmt = None if entry.format is None else registry.get(entry.format)
    if st.st_size > entry.size and fmt is not None and _may_await_call(fmt, entry, options):
        return None  # a text already read may get rule 4's evidence from a line added since
    file = InputFile(item.path, item.real_path, fmt=fmt, size=st.st_size, explicit=item.explicit)
    with open(item.real_path, "rb") as fp:
        digest, hashed = None, 0
        if not trusted:
            digest, hashed = prefix_digest(fp, entry.offset)
            if hashed != entry.offset or check_digest(digest) != entry.check:
                return None  # rewritten (or cut) somewhere in the part already scanned
        end = st.st_size
        cut = last_line_end(fp, entry.offset, end)
        ctx = context_from(entry.ctx)
        committed, check, ctx_json = entry.committed, entry.check, entry.ctx
        lines, crlf = entry.lines, entry.crlf
        parsed = 0
        if cut > entry.offset:
            if digest is None:
                return None  # trusted as unchanged, yet it holds more lines: read it whole
            scan, lines, ctx, whole = _part(
                file, options, fp, entry.offset, cut, lines, ctx, crlf, digest
            )
            if not whole or any(e.line is None for e in scan.errors):
                return None
            ctx_json = context_json(ctx)
            if ctx_json is None:
                return None
            committed = merge(committed, scan.result(), size=cut)
            crlf = scan.crlf_after
            check = check_digest(digest)
            parsed += cut - entry.offset
        total = committed
        if end > cut:
            tail, _, _, _ = _part(file, options, fp, cut, end, lines, ctx, crlf)
            total = merge(committed, tail.result(), size=end)
            parsed += end - cut
        if shrank(fp, end):
            return None  # rewritten shorter since its stat: what was proven is gone
    new = _stat_entry(
        key,
        st,
        entry.format,
        committed,
        offset=cut,
        check=check,
        resumable=True,
        lines=lines,
        ctx=ctx_json,
        crlf=crlf,
    )
    mode = UNCHANGED if st.st_size == entry.size else APPENDED
    return Increment(total._replace(size=st.st_size), new, mode, hashed + parsed, parsed)


def _may_await_call(fmt: SessionFormat, entry: Entry, options: ScanOptions) -> bool:
    """Could a line appended after the committed part give a text in it rule 4's evidence
    (`engine/evidence`: its tool call on a later record)? Only a text judged without it, a
    `stray_close`, can change; when such findings are not reported, any text might."""
    if not fmt.calls_later:
        return False
    stray = LeakKind.STRAY_CLOSE
    return stray.value not in options.kinds or any(
        f.kind == stray for f in entry.committed.findings
    )


def _full(
    item: Candidate | InputFile, st: os.stat_result, options: ScanOptions, key: str
) -> Increment:
    size = st.st_size
    file = resolve(item, options.inputs)
    if not file.ok or options.path_disabled(file.path) or not _resumable(file, options):
        result = scan_file(file, options)
        keep = not any(e.line is None for e in result.errors)
        return Increment(
            result, _stat_entry(key, st, result.format, result) if keep else None, FULL, size, size
        )
    with open(file.real_path, "rb") as fp:
        opened = os.fstat(fp.fileno()).st_size
        if sparse.is_document(io.BufferedReader(ByteRange(fp, 0, size))):
            result = scan_file(file, options)
            return Increment(result, _stat_entry(key, st, result.format, result), FULL, size, size)
        cut = last_line_end(fp, 0, size)
        digest = new_digest()
        scan, lines, ctx, whole = _part(file, options, fp, 0, cut, 0, EMPTY_CONTEXT, False, digest)
        committed = scan.result()._replace(size=cut)
        ctx_json = context_json(ctx)
        total = committed
        if size > cut:
            tail, _, _, _ = _part(file, options, fp, cut, size, lines, ctx, scan.crlf_after)
            total = merge(total, tail.result(), size=size)
        # as a full scan says it (`task.rewritten`): what was read may join two versions
        changed = rewritten(file.path, fp, opened)
    total = total._replace(size=size)
    if changed is not None:
        total = total._replace(errors=(*total.errors, changed))
    if not whole or any(e.line is None for e in total.errors):
        return Increment(total, None, FULL, size, size)
    if ctx_json is None:  # cannot go on mid-file: remember it as a whole file
        return Increment(total, _stat_entry(key, st, total.format, total), FULL, size, size)
    entry = _stat_entry(
        key,
        st,
        file.format,
        committed,
        offset=cut,
        check=check_digest(digest),
        resumable=True,
        lines=lines,
        ctx=ctx_json,
        crlf=scan.crlf_after,
    )
    return Increment(total, entry, FULL, size, size)


# --- a run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """What an incremental run read, for the note on stderr."""

    full: int = 0
    appended: int = 0
    unchanged: int = 0
    bytes_read: int = 0  # parsed or hashed
    bytes_parsed: int = 0
    note: str | None = None  # why the state file there was not reused


def _work(
    job: tuple[ScanOptions, str],
    task: tuple[Candidate | InputFile, Entry | None],
) -> Increment:
    return scan_increment(task[0], task[1], *job)


def _stale_bytes(item: Candidate | InputFile, entry: Entry | None) -> int:
    """What a file may cost to read: nothing when its size is what the state remembers."""
    size = max(0, getattr(item, "size", 0))
    return size if entry is None or entry.size != size else 0


def _increments(
    items: list[Candidate | InputFile],
    state: State,
    options: ScanOptions,
    progress: Progress,
    jobs: int | None,
) -> Iterator[Increment]:
    """Each file's increment, in worker processes (as `scan.scan_files` does) when more than
    `POOL_MIN_BYTES` may need reading, or `jobs` asks for them; in this process otherwise."""
    key = options_key(options)
    work = [(item, state.entries.get(item.path)) for item in items]
    stale = sum(_stale_bytes(item, entry) for item, entry in work)
    workers = min(jobs or default_jobs(), len(work))
    if not jobs and stale < POOL_MIN_BYTES:
        workers = 1
    progress.start(len(items), sum(max(0, getattr(i, "size", 0)) for i in items))
    try:
        if workers <= 1:
            for item, entry in work:
                inc = scan_increment(item, entry, options, key)
                progress.advance(inc.path, inc.size)
                yield inc
            return
        # The files to read first, largest first, so the pool's tail stays short.
        work.sort(key=lambda job: -_stale_bytes(*job))
        incs = parallel.run_or_here(
            _work,
            work,
            (options, key),
            workers,
            chunk=4,
            key=lambda job: job[0].path,
            result_key=lambda inc: inc.path,
        )
        for inc in incs:
            progress.advance(inc.path, inc.size)
            yield inc
    finally:
        progress.finish()


def scan_incremental(
    paths: Iterable[str],
    options: ScanOptions,
    state_path: str,
    *,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
    stdin: BinaryIO | None = None,
) -> tuple[Report, Stats]:
    """Like `scan.scan`, reading only what changed since the run that saved `state_path`."""
    state = State.load(state_path)
    paths = list(paths)
    items = list(walk(paths, options.inputs, stdin=stdin))
    results: list[ScannedFile] = []
    counts = {FULL: 0, APPENDED: 0, UNCHANGED: 0}
    read = parsed = 0
    for inc in _increments(items, state, options, progress, jobs):
        results.append(inc.result)
        counts[inc.mode] += 1
        read += inc.bytes_read
        parsed += inc.bytes_parsed
        if inc.entry is not None:
            state.entries[inc.path] = inc.entry
        else:
            state.entries.pop(inc.path, None)
    state.save(state_path)
    report = with_display_paths(
        require_sessions(build_report(results, __version__), paths, options)
    )
    stats = Stats(counts[FULL], counts[APPENDED], counts[UNCHANGED], read, parsed, state.note)
    return report, stats
