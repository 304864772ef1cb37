"""Prove a repaired file is the planned repair and nothing else, reading it back in blocks.

What is proven: the bytes read back are exactly the planned ones, every run of
original bytes the repair did not touch is byte-identical to the original at its
offset (compared block by block against the original file, at C speed), the
records tile the file (none dropped), each changed or inserted record reads back
as one record of its format, and no text of a changed record still needs a
repair, except those the format refused to change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from thinkfix.engine.repair.plan import Copy, FilePlan, New, RepairFinder, wanted
from thinkfix.engine.repair.source import named_stream
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record, Site
from thinkfix.io import filestate
from thinkfix.normalizer.spans import Result


def _read(fp: BinaryIO, n: int) -> bytes:
    """Exactly `n` bytes, or fewer at the end of the stream."""
    parts, got = [], 0
    while got < n:
        block = fp.read(n - got)
        if not block:
            break
        parts.append(block)
        got += len(block)
    return b"".join(parts)


def same_bytes(written: BinaryIO, data: bytes, name: str) -> None:
    """VerifyError unless `written` (a copy, read back) is exactly `data`, compared a block at a
    time where it lies (`startswith` at an offset: no slice copied)."""
    at = 0
    while at < len(data):
        block = _read(written, min(filestate.BLOCK, len(data) - at))
        if not block or not data.startswith(block, at):
            raise filestate.VerifyError(f"{name}: the temporary file did not read back as written")
        at += len(block)
    if written.read(1):
        raise filestate.VerifyError(f"{name}: the temporary file did not read back as written")


def verify(plan: FilePlan, written: BinaryIO | None, options: ScanOptions) -> None:
    """VerifyError unless `written` (the repaired content, decompressed, read back from disk;
    None in a read-only mode, where only the new records are re-read) is the planned repair."""
    fmt, name = plan.fmt, plan.path
    if not plan.covers:
        raise filestate.VerifyError(f"{name}: the records do not cover the file exactly")
    if written is not None:
        for seg in plan.segments:
            if isinstance(seg, Copy):
                at = seg.start
                for block in plan.source.blocks(seg.start, seg.end):
                    if _read(written, len(block)) != block:
                        raise filestate.VerifyError(
                            f"{name}: an untouched record changed near byte {at}"
                        )
                    at += len(block)
            elif not seg.same(_read(written, seg.size)):
                raise filestate.VerifyError(f"{name}: the new bytes are not the planned ones")
        if written.read(1):
            raise filestate.VerifyError(
                f"{name}: the new bytes are not the planned ones (more than planned)"
            )
    refused = Counter(c.site.text for c in plan.changes if not c.applied)
    dirty = Counter(site.text for site, _ in find_repairs(fmt, _reread(plan), options))
    left = dirty - refused
    if left:
        raise filestate.VerifyError(
            f"{name}: {sum(left.values())} repaired text(s) still leak on a re-scan"
        )


def find_repairs(
    fmt: SessionFormat, records: Iterable[Record], options: ScanOptions
) -> Iterator[tuple[Site, Result]]:
    """Every assistant text of `records` that the normalizer would change (`RepairFinder`),
    each record judged alone (`plan_file` adds rule 4's evidence from later records)."""
    finder = RepairFinder(fmt, options)
    for record in records:
        yield from (hit for hit in finder(record) if wanted(hit[1], options.kinds))


def _reread(plan: FilePlan) -> Iterator[Record]:
    """Each new record read back by its format, one at a time (each may be as large as the
    largest record, #22 item 9); VerifyError unless it reads back as itself, one record."""
    for seg in plan.segments:
        if not isinstance(seg, New) or not seg.size:  # a record a fix cut reads as nothing
            continue
        got = list(plan.fmt.read(named_stream(seg.data, plan.source.path)))
        if len(got) != 1 or got[0].raw != seg.record.raw or got[0].eol != seg.record.eol:
            raise filestate.VerifyError(
                f"{plan.path}: a repaired record does not read back as one record"
            )
        if seg.record.index not in plan.fix_only:  # no leak was looked for in a fix's record
            yield got.pop()
