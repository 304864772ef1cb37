"""Scan one large JSONL session in byte ranges on several cores, with the report one pass gives.

A file much larger than a fair share of the work is cut into pieces at record boundaries
(a piece starts just after a newline), and each piece is scanned by itself. Two things
about a record depend on what came before it, and both are settled when the pieces merge,
in file order:

- Its place: a piece numbers its lines from its own start, and the merge adds the lines of
  the pieces before it (and recomputes the fingerprints of messages known only by their
  place, from the leaked text's hash the piece kept).
- The context its format carries across records (Codex's model and pending reasoning,
  Claude Code's thinking line, a header's session id). A piece starts from the context the
  file's first line and the lines just before the piece leave (replaying the format's
  context hook over a window), which is exact unless something that matters lies further
  back; the merge checks that every piece started from the context the piece before it
  ended with, and scans a piece again, in order, with the right one when it did not.

So the merged result is the one `scan_file` gives, whatever the pieces (tests/engine/
test_split.py proves it for every line format). Compressed files, documents and formats
not read line by line are not split.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, BinaryIO, cast

from thinkfix.engine.inputs.files import Candidate, InputFile, resolve
from thinkfix.engine.report import InputError
from thinkfix.engine.scan import sparse
from thinkfix.engine.scan.findings import fingerprint_of
from thinkfix.engine.scan.one_file import _FileScan
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.task import rewritten, scan_file
from thinkfix.formats.records import EMPTY_CONTEXT, Context, record_limit, set_record_limit
from thinkfix.io import remote
from thinkfix.io.compression import Compression
from thinkfix.io.errors import ErrorKind
from thinkfix.io.ranges import ByteRange
from thinkfix.io.regular import open_regular

#: The smallest piece worth a task of its own.
MIN_PIECE = 16 << 20
#: How far before a piece its starting context is looked for.
WINDOW = 256 << 10

#: Where a piece after the first numbers its lines from: far past any real line, so that in
#: the merge a line, or a message known by its line, is told from a message's place inside a
#: record (`Site.message_index` is either) and only the former moves.
BASE = 1 << 40

#: A context as it crosses processes (a mapping proxy does not pickle).
Portable = tuple[str | None, str | None, tuple[tuple[str, Any], ...]]


def portable(ctx: Context) -> Portable:
    return ctx.session_id, ctx.model, tuple(sorted(ctx.extra.items()))


def context(p: Portable) -> Context:
    return Context(p[0], p[1], MappingProxyType(dict(p[2])))


@dataclass(frozen=True)
class Piece:
    """Piece `index` of `count` of a file; exact bounds and context when already known (a
    piece scanned again in order)."""

    file: InputFile
    index: int
    count: int
    start: int = -1
    end: int = -1
    ctx: Portable | None = None
    #: (device, inode) of the file the plan cut: every piece opens the file by its name
    identity: tuple[int, int] | None = None

    @property
    def path(self) -> str:
        return self.file.path

    @property
    def size(self) -> int:
        return max(1, self.file.size // self.count)


@dataclass(frozen=True)
class PieceResult:
    piece: Piece
    result: ScannedFile
    start: int
    end: int
    ctx_in: Portable
    ctx_out: Portable
    positional: tuple[tuple[int, str, str], ...]
    failed: bool = False
    #: where the findings of texts that awaited evidence begin (judged at the piece's end;
    #: one pass judges them at the file's end, so the merge puts them after all others)
    deferred_from: int = -1


Task = Candidate | InputFile | Piece


def share(total: int, workers: int) -> int:
    """The piece size: a quarter of a worker's fair share, and never less than `MIN_PIECE`."""
    return max(MIN_PIECE, total // max(1, workers * 4))


def plan(items: Sequence[Candidate | InputFile], options: ScanOptions, workers: int) -> list[Task]:
    """The tasks: every file whole, except files over twice the piece size that can be
    split, which become their pieces (their format is detected here to know)."""
    piece = share(sum(max(0, getattr(i, "size", 0)) for i in items), workers)
    tasks: list[Task] = []
    for item in items:
        if max(0, getattr(item, "size", 0)) <= 2 * piece:
            tasks.append(item)
            continue
        file = resolve(item, options.inputs)
        count = -(-file.size // piece)
        if not splittable(file, options):
            tasks.append(file)
            continue
        try:
            st = os.stat(file.real_path)
        except OSError:
            tasks.append(file)  # gone since the walk: read whole, where that is an error
            continue
        identity = (st.st_dev, st.st_ino)
        tasks.extend(Piece(file, k, count, identity=identity) for k in range(count))
    return tasks


def splittable(file: InputFile, options: ScanOptions) -> bool:
    """A plain JSONL file the sparse reader reads (the only reader that starts mid-file)."""
    if (
        not file.ok
        or file.compression is not Compression.NONE
        or not options.prefilter
        or bool(options.checks)  # the health checks read a file whole, in order
        or options.path_disabled(file.path)
        or remote.is_url(file.real_path)
    ):
        return False
    if not sparse.supports(file.session_format()):
        return False
    try:
        with file.open() as fp:
            return not sparse.is_document(fp)
    except OSError:
        return False


def _line_start(fp: BinaryIO, offset: int) -> int:
    """The first record boundary at or after `offset` (just past a newline), or the end."""
    if offset <= 0:
        return 0
    fp.seek(offset - 1)
    pos = offset - 1
    while True:
        block = fp.read(1 << 16)
        if not block:
            return pos
        at = block.find(b"\n")
        if at >= 0:
            return pos + at + 1
        pos += len(block)


def _bounds(fp: BinaryIO, piece: Piece) -> tuple[int, int]:
    if piece.start >= 0:
        return piece.start, piece.end
    nominal = piece.file.size * piece.index // piece.count
    start = _line_start(fp, nominal)
    if piece.index == piece.count - 1:
        return start, -1  # the last piece reads to the end, however the file grew
    return start, max(start, _line_start(fp, piece.file.size * (piece.index + 1) // piece.count))


def _opening(fp: BinaryIO, piece: Piece, start: int) -> tuple[Context, bool]:
    """The context a piece starting at `start` begins with, and whether the file's lines end
    in CRLF (as its first line says): the first line and the window before `start`, replayed
    through the sparse reader (which keeps only the context)."""
    fmt = piece.file.session_format()
    fp.seek(0)
    limit = record_limit()
    first = fp.readline(limit + 2 if limit else -1)
    if not first.endswith(b"\n") or (limit and len(first) > limit + 1):
        return EMPTY_CONTEXT, False  # one oversized first line: the reader keeps no context
    lo = max(len(first), start - WINDOW)
    fp.seek(lo)
    window = fp.read(start - lo)
    if lo > len(first):
        window = window[window.find(b"\n") + 1 :] if b"\n" in window else b""
    reader = sparse.SparseReader(fmt, io.BufferedReader(io.BytesIO(first + window)))
    for _ in reader.blocks():
        pass
    return reader.ctx, reader.crlf


def scan_piece(piece: Piece, options: ScanOptions) -> PieceResult:
    """Scan one piece: lines numbered from `BASE` (0 for the first piece), its context in
    and out."""
    set_record_limit(options.max_record_size)
    file = piece.file
    scan = _FileScan(file, file.session_format(), options)
    with open_regular(file.real_path) as raw:
        start, end = _bounds(raw, piece)
        if piece.index == 0:
            ctx, crlf, first = EMPTY_CONTEXT, False, 0
        else:
            opened, crlf = _opening(raw, piece, start)
            ctx, first = (context(piece.ctx) if piece.ctx is not None else opened), BASE
        if end < 0:
            end = raw.seek(0, io.SEEK_END)
        scan.run(
            cast(BinaryIO, ByteRange(raw, start, end)),
            start=first,
            ctx=ctx,
            crlf=crlf,
            numbered=first == 0,
            origin=start,
        )
        changed = rewritten(file.path, raw, file.size)  # a piece past a new end reads nothing
        if changed is None:
            changed = _replaced(piece, raw)
        if changed is not None:
            scan.errors.append(changed)
    result = scan.result()._replace(size=file.size)
    after = scan.ctx_after if scan.ctx_after is not None else ctx
    return PieceResult(
        piece,
        result,
        start,
        end,
        portable(ctx),
        portable(after),
        tuple(scan.positional),
        # a text awaiting rule 4's evidence is judged by the whole file's records (`merge`)
        failed=scan.unsettled,
        deferred_from=len(result.findings) if scan.deferred_from is None else scan.deferred_from,
    )


def _replaced(piece: Piece, raw: BinaryIO) -> InputError | None:
    """An error for a piece that opened another file than the plan cut (a save by rename
    between two pieces' reads): the pieces would join two files, and a leak that moved
    between their halves would be read in neither (review10)."""
    st = os.fstat(raw.fileno())
    if piece.identity is None or (st.st_dev, st.st_ino) == piece.identity:
        return None
    return InputError(
        piece.path,
        None,
        ErrorKind.CHANGED,
        "changed while it was being read (replaced by another file of its name); scan it again",
    )


def scan_piece_safely(piece: Piece, options: ScanOptions) -> PieceResult:
    """`scan_piece`, where an unexpected failure marks the piece failed (its file is then
    scanned whole, where errors are values: `merge`)."""
    try:
        return scan_piece(piece, options)
    except Exception:  # noqa: BLE001 - one odd file must not end a run over thousands
        empty = ScannedFile(piece.path)
        return PieceResult(
            piece, empty, -1, -1, portable(EMPTY_CONTEXT), portable(EMPTY_CONTEXT), (), failed=True
        )


def merge(pieces: list[PieceResult], options: ScanOptions) -> ScannedFile:
    """One file's result from all its pieces: placed in order, each piece's context checked
    against the one before it ended with (and the piece scanned again from it if not)."""
    pieces = sorted(pieces, key=lambda p: p.piece.index)
    if any(p.failed for p in pieces):
        return scan_file(pieces[0].piece.file, options)
    placed: list[tuple[PieceResult, int]] = []
    lines = 0
    before: Portable | None = None
    for part in pieces:
        if before is not None and part.ctx_in != before:
            part = scan_piece(
                replace(part.piece, start=part.start, end=part.end, ctx=before), options
            )
        shift = lines - BASE if part.piece.index else 0
        placed.append((part, shift))
        lines += part.result.records
        before = part.ctx_out
    return _joined([(p.result, shift, p.positional, p.deferred_from) for p, shift in placed])


def _joined(
    parts: Iterable[tuple[ScannedFile, int, tuple[tuple[int, str, str], ...], int]],
) -> ScannedFile:
    first: ScannedFile | None = None
    records = assistant = leaking = 0
    findings: list[Any] = []
    deferred: list[Any] = []  # the texts that awaited evidence: last, in file order
    errors: list[Any] = []
    by_model: dict[str, list[int]] = {}
    by_day: dict[tuple[str, str], list[int]] = {}
    for result, shift, positional, deferred_from in parts:
        first = first or result
        records += result.records
        assistant += result.assistant_messages
        leaking += result.leaking_messages
        moved = (
            [
                f._replace(line=f.line + shift, message_index=f.message_index + shift)
                if f.message_index >= BASE
                else f._replace(line=f.line + shift)
                for f in result.findings
            ]
            if shift
            else list(result.findings)
        )
        for i, session, leaked_hash in positional if shift else ():
            f = result.findings[i]
            if f.message_index >= BASE:  # known by its line: the fingerprint moves with it
                moved[i] = moved[i]._replace(
                    fingerprint=fingerprint_of(
                        f.format, session, f"#{f.message_index + shift}", leaked_hash
                    ),
                )
        findings.extend(moved[:deferred_from])
        deferred.extend(moved[deferred_from:])
        errors.extend(
            e._replace(line=e.line + shift) if shift and e.line is not None else e
            for e in result.errors
        )
        for model, a, lk, n in result.by_model:
            tally = by_model.setdefault(model, [0, 0, 0])
            tally[0], tally[1], tally[2] = tally[0] + a, tally[1] + lk, tally[2] + n
        for day, model, a, lk, n in result.by_day:
            tally = by_day.setdefault((day, model), [0, 0, 0])
            tally[0], tally[1], tally[2] = tally[0] + a, tally[1] + lk, tally[2] + n
    assert first is not None
    return first._replace(
        records=records,
        assistant_messages=assistant,
        leaking_messages=leaking,
        findings=(*findings, *deferred),
        errors=tuple(errors),
        by_model=tuple(sorted((m, a, lk, n) for m, (a, lk, n) in by_model.items())),
        by_day=tuple(sorted((d, m, a, lk, n) for (d, m), (a, lk, n) in by_day.items())),
    )


class Merger:
    """Collects results as the pool returns them: a whole file's passes through, a piece
    waits for its file's other pieces and the file comes out merged."""

    def __init__(self, options: ScanOptions) -> None:
        self.options = options
        self.waiting: dict[str, list[PieceResult]] = {}

    def add(self, out: ScannedFile | PieceResult) -> Iterator[ScannedFile]:
        if isinstance(out, ScannedFile):
            yield out
            return
        parts = self.waiting.setdefault(out.piece.path, [])
        parts.append(out)
        if len(parts) == out.piece.count:
            del self.waiting[out.piece.path]
            yield merge(parts, self.options)


def key(task: Task) -> tuple[str, int]:
    """What identifies a task's result: its path, and its piece's index."""
    return (task.path, task.index) if isinstance(task, Piece) else (task.path, -1)


def result_key(out: ScannedFile | PieceResult) -> tuple[str, int]:
    return key(out.piece) if isinstance(out, PieceResult) else (out.path, -1)
