"""Read a JSONL session yielding only the records a scan must parse, counting the rest.

Scanning is measured against the time to parse every line, so it cannot afford
to even split most lines out of the file. This reader takes big blocks and
jumps with `bytes.find` straight to the lines holding the format's assistant
marker (`FormatBase.assistant_marker`: an unescaped quoted role word, which no
JSON string can contain) or one of its context markers. Every other line is
counted and never becomes a `Record`, is never parsed and never validated: it
can hold no assistant text, so no leak. The last line is always yielded when it
has no newline (a session cut off mid-write), so a truncated record is reported.

It follows `formats.reader.iter_jsonl` exactly for the records it yields (same
index, line, raw, eol and context: the context hook sees the first line and
every marker line), so `sites()` cannot tell the difference. It belongs next
to `iter_jsonl` in the formats layer; until it moves there it relies only on
the public attributes of `FormatBase`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from thinkfix.formats.base import EMPTY_CONTEXT, Context, Record, SessionFormat
from thinkfix.formats.common import FormatBase
from thinkfix.formats.reader import is_pretty_opener

BLOCK = 1 << 22  # bytes read at a time; memory is this plus the largest record
_LONG_LINES = 512  # average line length above which a find loop counts lines faster than count


def supports(fmt: SessionFormat) -> bool:
    """Formats whose reading is FormatBase's JSONL reading (so skipping lines is exact)."""
    return isinstance(fmt, FormatBase) and type(fmt).read is FormatBase.read and bool(
        getattr(fmt, "assistant_marker", b""))


def is_document(fp: BinaryIO) -> bool:
    """Does the stream start a pretty-printed document (read whole, not by line)?"""
    peek = getattr(fp, "peek", None)
    head = peek(4096)[:4096] if peek is not None else b""
    newline = head.find(b"\n")
    return newline >= 0 and is_pretty_opener(head[:newline + 1])


def count_lines(buf: bytes, lo: int, hi: int) -> int:
    """Newlines in buf[lo:hi]: memchr hops for long lines, `bytes.count` for short ones."""
    if hi - lo < 4096:
        return buf.count(b"\n", lo, hi)
    sample = buf.count(b"\n", lo, lo + 4096)
    if sample * _LONG_LINES > 4096:
        return buf.count(b"\n", lo, hi)
    n, find = 0, buf.find
    p = find(b"\n", lo, hi)
    while p >= 0:
        n += 1
        p = find(b"\n", p + 1, hi)
    return n


class SparseReader:
    """Iterate the records worth parsing; `records` counts every line read so far (blank
    ones too, as `iter_jsonl` yields blank records)."""

    def __init__(self, fmt: FormatBase, fp: BinaryIO, block: int = BLOCK) -> None:
        self.fp = fp
        self.block = block
        self.records = 0
        self.wanted: bytes = fmt.assistant_marker
        hooked = type(fmt).update_context is not FormatBase.update_context
        self.hook = fmt.update_context if hooked else None
        self.markers: tuple[bytes, ...] = tuple(fmt.context_markers) if hooked else ()
        self.shapes = fmt.shapes
        self.ctx: Context = EMPTY_CONTEXT
        self.crlf = False

    def __iter__(self) -> Iterator[Record]:
        pending: list[bytes] = []
        read = self.fp.read
        while True:
            data = read(self.block)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line ends in this block: a record longer than a block
                pending.append(data)
                continue
            if pending:
                head = b"".join(pending)
                data, cut = head + data, cut + len(head)
            yield from self._block(data, cut)
            pending = [data[cut:]] if cut < len(data) else []
        tail = b"".join(pending)
        if tail:
            # A last line without a newline: truncated more often than not, so always parsed.
            index = self.records
            self.records += 1
            yield self._record(index, tail, b"")

    def _record(self, index: int, raw: bytes, eol: bytes) -> Record:
        record = Record(index, index + 1, raw, eol, self.ctx, self.shapes)
        if self.hook is not None and (index == 0 or any(m in raw for m in self.markers)):
            record.ctx, self.ctx = self.hook(record, self.ctx)
        return record

    def _block(self, buf: bytes, hi: int) -> Iterator[Record]:
        """The complete lines buf[:hi] (hi is just past a newline)."""
        lo = 0
        if self.records == 0:  # the first line always reaches the context hook
            lo = buf.index(b"\n") + 1
            self.crlf = buf[lo - 2:lo - 1] == b"\r"
            yield from self._lines(buf, 0, lo)
        if self.crlf:  # rare: read line by line so every terminator is kept exactly
            yield from self._lines(buf, lo, hi)
            return
        wanted = self._starts(buf, lo, hi, self.wanted)
        starts = wanted
        if self.markers:
            merged = dict.fromkeys(wanted, True)
            for marker in self.markers:
                for s in self._starts(buf, lo, hi, marker):
                    merged.setdefault(s, False)
            starts = sorted(merged)
            wanted_set = {s for s, w in merged.items() if w}
        else:
            wanted_set = None
        at, index = lo, self.records
        for start in starts:
            index += count_lines(buf, at, start)
            at = start
            record = self._record(index, buf[start:buf.find(b"\n", start)], b"\n")
            if wanted_set is None or start in wanted_set:
                yield record
        self.records = index + count_lines(buf, at, hi)

    @staticmethod
    def _starts(buf: bytes, lo: int, hi: int, needle: bytes) -> list[int]:
        """Start offsets of the lines in buf[lo:hi] containing `needle`, each once, in order."""
        out: list[int] = []
        find, rfind = buf.find, buf.rfind
        pos = find(needle, lo, hi)
        while pos >= 0:
            out.append(rfind(b"\n", lo, pos) + 1 or lo)
            pos = find(needle, find(b"\n", pos, hi), hi)
        return out

    def _lines(self, buf: bytes, lo: int, hi: int) -> Iterator[Record]:
        """Line by line, exactly as iter_jsonl: the first line, CRLF files."""
        wanted, markers = self.wanted, self.markers
        for line in buf[lo:hi].split(b"\n")[:-1]:
            index = self.records
            self.records += 1
            raw, eol = (line[:-1], b"\r\n") if line.endswith(b"\r") else (line, b"\n")
            if index == 0 or wanted in raw or any(m in raw for m in markers):
                record = self._record(index, raw, eol)
                if wanted in raw:
                    yield record
