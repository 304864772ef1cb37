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


class _ReadBack:
    """The bytes read back, compared with what was planned a piece at a time (`same`).

    Read a block at a time (`read(BLOCK)` of the read back's stream, whose buffer is a block:
    straight from the file into the block's bytes) and compared with the planned pieces where
    they lie (`startswith` at an offset: memcmp, nothing sliced or joined). The read back
    compared each run of the original with a slice of it, one more copy of every byte, and
    read a new record's bytes apart (#26 item 4)."""

    def __init__(self, written: BinaryIO) -> None:
        self.written = written
        self.block = b""
        self.pos = 0  # bytes of `block` compared

    def same(self, piece: bytes | memoryview) -> int:
        """How many of `piece`'s bytes the next bytes read back equal, before the first that
        differs or the end of the file (all of them: `len(piece)`)."""
        view, done = memoryview(piece), 0
        while view:
            if self.pos == len(self.block):
                self.block, self.pos = self.written.read(filestate.BLOCK), 0
                if not self.block:
                    break
            n = min(len(view), len(self.block) - self.pos)
            if not self.block.startswith(view[:n], self.pos):
                break
            self.pos, done, view = self.pos + n, done + n, view[n:]
        return done

    def more(self) -> bool:
        """Is anything left to read back?"""
        return self.pos < len(self.block) or bool(self.written.read(1))


def same_bytes(written: BinaryIO, data: bytes, name: str) -> None:
    """VerifyError unless `written` (a copy, read back) is exactly `data` (`_ReadBack`)."""
    back = _ReadBack(written)
    if back.same(data) < len(data) or back.more():
        raise filestate.VerifyError(f"{name}: the temporary file did not read back as written")


def verify(plan: FilePlan, written: BinaryIO | None, options: ScanOptions) -> None:
    """VerifyError unless `written` (the repaired content, decompressed, read back from disk;
    None in a read-only mode, where only the new records are re-read) is the planned repair."""
    fmt, name = plan.fmt, plan.path
    if not plan.covers:
        raise filestate.VerifyError(f"{name}: the records do not cover the file exactly")
    if written is not None:
        back = _ReadBack(written)
        for seg in plan.segments:
            done = 0  # bytes of `seg` read back as planned
            for piece in planned(plan, seg):
                n = back.same(piece)
                done += n
                if n < len(piece):
                    if isinstance(seg, New):
                        raise filestate.VerifyError(
                            f"{name}: the new bytes are not the planned ones"
                        )
                    raise filestate.VerifyError(
                        f"{name}: an untouched record changed near byte {seg.start + done}"
                    )
        if back.more():
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


def planned(plan: FilePlan, seg: Copy | New) -> Iterator[bytes | memoryview]:
    """A segment's planned bytes in pieces: a view of the original's bytes the survey kept
    (`Source.whole`), else its blocks read again; a new record's own pieces."""
    if isinstance(seg, New):
        yield from seg.pieces()
    elif plan.source.whole is not None:
        yield memoryview(plan.source.whole)[seg.start : seg.end]
    else:
        yield from plan.source.blocks(seg.start, seg.end)


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
