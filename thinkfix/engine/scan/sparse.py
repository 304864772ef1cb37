"""Read a JSONL session yielding only the records a scan must parse, counting the rest.

Scanning is measured against the time to parse every line, so it cannot afford
to even split most lines out of the file. This reader takes big blocks and
jumps with `bytes.find` straight to the lines holding the format's assistant
marker (`SessionFormat.assistant_marker`: an unescaped quoted role word, which no
JSON string can contain) or one of its context markers. Every other line is
counted and never becomes a `Record` and is never parsed: it can hold no assistant
text, so no leak. Only its bytes are checked, with the whole block's, to be UTF-8
(`io.textcheck`): a line that is not is no JSON, and is parsed so its error is reported. The last line is always yielded when it
has no newline (a session cut off mid-write), so a truncated record is reported.

It follows `formats.reader.iter_jsonl` exactly for the records it yields (same
index, line, raw, eol and context: the context hook sees the first line and
every marker line), so `sites()` cannot tell the difference. It relies only on
the `SessionFormat` contract (`line_records`, `assistant_marker`, `context_markers`,
`context_hook`, `shapes`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter, itemgetter
from typing import BinaryIO

from orjson import JSONDecodeError, loads

from thinkfix.engine.scan import native
from thinkfix.engine.scan.survey import Key, Surveyor
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.reader import opens_document
from thinkfix.formats.records import EMPTY_CONTEXT, Context, Record, record_limit, too_large
from thinkfix.formats.strangers import ESCAPED, escapes_a_letter, names_turn, turn_needles
from thinkfix.io.blockread import BlockReader
from thinkfix.io.jsoncheck import not_json, not_objects, unread_not_objects
from thinkfix.io.textcheck import not_utf8_lines, unread_not_utf8

Candidates = Callable[[Sequence[bytes]], set[int]]
Quick = Callable[[bytes, Context], bool]
# The block counter's sink: counts accepted lines' keys, a key without a model taking the
# context's (the only part of the context it reads).
Bulk = Callable[[list[Key], Context], None]
Places = list[tuple[int, Context]]  # (from where in a block, the context the lines there have)

BLOCK = 1 << 22  # bytes read at a time; memory is this plus the largest record
_LONG_LINES = 512  # average line length above which a find loop counts lines faster than count


def _no_markers(ctx: Context) -> tuple[bytes, ...]:
    return ()


def supports(fmt: SessionFormat) -> bool:
    """Formats read line by line by the shared JSONL reader, with an assistant marker to jump
    to (so skipping every other line is exact)."""
    return fmt.line_records and bool(fmt.assistant_marker)


def is_document(fp: BinaryIO) -> bool:
    """Does the stream start a document (pretty-printed, or split across lines: read whole by
    the format, not by line here)? A JSONL file whose first line is broken answers yes too: the
    format's reader then reads it by line (`formats.reader.read_auto`); so does a short peek
    with no newline (it ended with a decoder's stream: a `.gz` whose first member is `{`)."""
    peek = getattr(fp, "peek", None)
    head = peek(4096)[:4096] if peek is not None else b""
    newline = head.find(b"\n")
    return opens_document(head[: newline + 1]) if newline >= 0 else 0 < len(head) < 4096


def count_lines(buf: bytes, lo: int, hi: int, long_lines: bool) -> int:
    """Newlines in buf[lo:hi]: memchr hops when lines are long, `bytes.count` otherwise
    (count scans every byte; a find loop pays per line but skips at memchr speed)."""
    if not long_lines or hi - lo < 4096:
        return buf.count(b"\n", lo, hi)
    n, find = 0, buf.find
    p = find(b"\n", lo, hi)
    while p >= 0:
        n += 1
        p = find(b"\n", p + 1, hi)
    return n


class SparseReader:
    """The records worth parsing, block by block; `records` counts every line read so far
    (blank ones too, as `iter_jsonl` yields blank records).

    Records come parsed (with orjson, as `Record` would) when their bytes are sound JSON
    of the format's shapes; others parse lazily and carry their error as usual.
    """

    def __init__(
        self,
        fmt: SessionFormat,
        fp: BinaryIO,
        block: int = BLOCK,
        *,
        start: int = 0,
        ctx: Context = EMPTY_CONTEXT,
        crlf: bool = False,
        candidates: Candidates | None = None,
        quick: Quick | None = None,
        surveyor: Surveyor | None = None,
        bulk: Bulk | None = None,
        offsets: bool = False,
        content: tuple[str, bool] | None = None,
    ) -> None:
        # `start`, `ctx` and `crlf` resume a file mid-way (an incremental scan): `fp` then
        # begins at line `start`, and the context is what the lines before it left.
        self.fp = fp
        self.block = block
        self.records = start
        self.wanted: bytes = fmt.assistant_marker
        # The lines to parse: the marker's, and those that may name a turn in a shape the
        # format does not know (`formats.strangers`), so its guard sees them.
        self.needles = turn_needles(self.wanted)
        self.hook = fmt.context_hook
        self.shapes = fmt.shapes
        self.ctx: Context = ctx
        self.crlf = crlf
        self.markers_for = fmt.context_markers_for if self.hook else _no_markers
        self.markers: tuple[bytes, ...] = self.markers_for(ctx)
        # every marker `markers_for` may give (a subset of these, `SessionFormat`'s contract)
        self.all_markers: tuple[bytes, ...] = fmt.context_markers if self.hook else ()
        self.keeps = fmt.keeps_context
        # The scan's fast path: a batch delimiter test, and a counter that takes a clean
        # wanted line from its bytes (True: counted; False: parse it as usual).
        self.candidates = candidates
        self.quick = quick
        # where a line `quick` counts holds its message, whose parts must be of the shapes its
        # reader reads (`io.jsoncheck`, `Canonical.content`; the scan's, not repair's)
        self.content = content
        # The block counter (`survey.Surveyor`): the canonical clean lines of a block, counted by key.
        self.surveyor = surveyor if quick is not None and bulk is not None else None
        self.bulk = bulk
        # `_lines_with` in one hyperscan pass, once the process is warm (`native.warm`).
        self.native_lines: native.Lines | None = None
        # index -> where in the stream the line of each record yielded starts, when
        # asked (`offsets`): repair finds its records without a line index of the file.
        self.offsets: dict[int, int] | None = {} if offsets else None
        self.source = BlockReader(fp)  # a failed read keeps the bytes read before it
        self.read_total = 0  # bytes read from `fp`
        self.base = 0  # where in the stream the block `_block` is given starts

    def __iter__(self) -> Iterator[Record]:
        for block in self.blocks():
            yield from block

    def blocks(self) -> Iterator[list[Record]]:
        """Lists of records, one per block read (memory: a block and its wanted records)."""
        pending: list[bytes] = []
        held = 0  # bytes in `pending`
        limit = record_limit()
        read = self._read
        carry: bytes | None = None  # what followed an oversized line, read but not yet used
        while True:
            data, carry = (carry, None) if carry else (read(self.block), None)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line ends in this block: a record longer than a block
                pending.append(data)
                held += len(data)
                if limit and held > limit:
                    # Past the limit: read on to the line's end without keeping it, so an
                    # endless line (/dev/zero, a single-line bomb) holds memory at a block.
                    yield [self._oversized(held)]
                    pending, held = [], 0
                    carry = self._skip_line(read)
                    if carry is None:
                        return
                continue
            if pending:
                head = b"".join(pending)
                data, cut = head + data, cut + len(head)
            self.base = self.read_total - len(data)
            yield self._block(data, cut)
            pending = [data[cut:]] if cut < len(data) else []
            held = len(data) - cut
        tail = b"".join(pending)
        if tail:
            # A last line without a newline: truncated more often than not, so always parsed.
            index = self.records
            self.records += 1
            self._at(index, self.read_total - len(tail))
            yield [self._record(index, tail, b"", self._marked(tail))]

    def _read(self, n: int) -> bytes:
        data = self.source.read(n)
        self.read_total += len(data)
        return data

    def _at(self, index: int, offset: int) -> None:
        if self.offsets is not None:
            self.offsets[index] = offset

    def _oversized(self, size: int) -> Record:
        """A record past the limit, not kept: its error says so (it counts as one line)."""
        index = self.records
        self.records += 1
        return Record(
            index,
            index + 1,
            b"",
            b"\n",
            self.ctx,
            self.shapes,
            data=None,
            error=too_large(size, record_limit()).replace(
                f"a record of {size:,}", f"a record of more than {size:,}"
            ),
        )

    def _skip_line(self, read: object) -> bytes | None:
        """Read past the rest of an oversized line; the bytes after its newline, or None at
        the end of the stream (the oversized line was the last)."""
        while True:
            data = read(self.block)  # type: ignore[operator]
            if not data:
                return None
            end = data.find(b"\n")
            if end >= 0:
                return bytes(data[end + 1 :])

    def _record(self, index: int, raw: bytes, eol: bytes, marked: bool = False) -> Record:
        """The record parsed; the context hook sees it when it is the first or `marked`."""
        record = None
        limit = record_limit()
        if not (limit and len(raw) > limit):
            try:
                data = loads(raw)
            except JSONDecodeError:
                pass
            else:
                if isinstance(data, self.shapes):
                    record = Record(index, index + 1, raw, eol, self.ctx, self.shapes, data)
        if record is None:
            record = Record(index, index + 1, raw, eol, self.ctx, self.shapes)
        if self.hook is not None and (index == 0 or marked):
            record.ctx, self.ctx = self.hook(record, self.ctx)
            self.markers = self.markers_for(self.ctx)
        return record

    def _marked(self, raw: bytes) -> bool:
        for marker in self.markers:
            if marker in raw:
                return True
        return False

    def _block(self, buf: bytes, hi: int) -> list[Record]:
        """The wanted records among the complete lines buf[:hi] (hi is just past a newline).

        One pass in file order over the lines holding the assistant marker or a context marker
        that matters now (`context_markers_for` the carried context, so the set changes as the
        context does). A clean wanted line the `quick` counter takes is counted, not parsed."""
        out: list[Record] = []
        lo = 0
        if self.records == 0:  # the first line always reaches the context hook
            lo = buf.index(b"\n") + 1
            self.crlf = buf[lo - 2 : lo - 1] == b"\r"
            out.extend(self._lines(buf, 0, lo, not_utf8_lines(buf, 0, lo)))
        if self.crlf:  # rare: read line by line so every terminator is kept exactly
            out.extend(self._lines(buf, lo, hi, not_utf8_lines(buf, lo, hi)))
            return out
        first = self.records  # the index of the line at lo
        fast = native.warm(hi - lo)  # the same answers from hyperscan passes (`native`)
        if fast and self.native_lines is None:
            self.native_lines = native.needle_lines(self.wanted, self.all_markers)
            self.native_lines = self.native_lines or self._lines_with
        # where each context marker first occurs, where the native pass found it on its way
        firsts: dict[bytes, int] = {}
        wanted = (self.native_lines if fast else self._lines_with)(buf, lo, hi, firsts)  # type: ignore[misc]
        # Lines that are not UTF-8, wherever they are, are parsed, so each is reported as a
        # parse of every line reports it (`io.textcheck`); their block is read line by line
        # (rare). The wanted lines are checked where they are read: a parse, the survey's and
        # `quick_messages`' UTF-8 checks before a line is counted from its bytes.
        broken = unread_not_utf8(buf, lo, hi, wanted)
        if broken:
            out.extend(self._lines(buf, lo, hi, broken))
            return out
        starts: list[int] = []
        ends: list[int] = []
        keys: list[Key] = []
        read = wanted  # every other line is only checked (`_unread_errors`)
        if self.surveyor is not None:  # the canonical clean lines, counted by the block
            block = self.surveyor.block(buf, wanted, fast)
            if len(block.starts) * 2 < len(wanted):
                # Not the runtime's canonical lines (another version, another writer): a
                # match tried on every line would cost more than it saves, for the whole file.
                self.surveyor = None
            wanted, starts, ends, keys = block.rest, block.starts, block.ends, block.keys
        clean = self._clean(buf, wanted)
        bulk, k, accepted = self.bulk, 0, len(starts)
        # Accepted lines' keys not yet counted: counted in one go when the context's model
        # changes (all `bulk` reads of the context) and at the block's end, not once per run
        # of them between other lines.
        pending: list[Key] = []
        long_lines = buf.count(b"\n", lo, lo + 65536) * _LONG_LINES < min(65536, hi - lo)
        find, rfind = buf.find, buf.rfind
        # Next occurrence of each marker that matters, from the end of the last line handled.
        markers = self.markers
        # The native pass is trusted for absence only (hyperscan reports a SINGLEMATCH pattern
        # that matched; that its one report is the earliest is behaviour, not documented): a
        # present marker's `find` stops at its first occurrence.
        nxt = {m: -1 if firsts.get(m) == -1 else find(m, lo, hi) for m in markers}
        lines = iter(wanted.items())
        line = next(lines, None)
        at, index, quick, ctx = lo, self.records, self.quick, self.ctx
        contexts = [(lo, ctx)]  # (from where, the context): the unread lines' records take theirs
        offsets, base = self.offsets, self.base  # where records start, when asked
        hit = min((p for p in nxt.values() if p >= 0), default=-1)
        while True:
            row = None
            if k < accepted:
                # The accepted lines before the next line or marker are counted in one go; one
                # that holds the marker is read as a marked line instead.
                limit = line[0] if line is not None else hi
                if 0 <= hit < limit:
                    limit = hit
                j = bisect_right(starts, limit, k)
                held = j > k and 0 <= hit < ends[j - 1]
                if j - held > k:
                    pending += keys[k : j - held]
                k = j
                if held:
                    row = starts[j - 1], ends[j - 1]
            if row is not None:
                (start, end), is_wanted = row, True
            elif line is not None and (hit < 0 or hit >= line[0]):
                (start, end), is_wanted = line, True
                line = next(lines, None)
            elif hit >= 0:
                start, end = rfind(b"\n", lo, hit) + 1 or lo, find(b"\n", hit, hi)
                is_wanted = False
            else:
                break
            marked = 0 <= hit < end
            raw, eol = (
                (buf[start : end - 1], b"\r\n") if buf[end - 1] == 13 else (buf[start:end], b"\n")
            )
            if not marked and quick is not None and start in clean and quick(raw, ctx):
                continue  # a wanted line counted from its bytes: its index is not needed
            index += (
                count_lines(buf, at, start, long_lines)
                if long_lines
                else buf.count(b"\n", at, start)
            )
            at = start
            if not marked:  # a wanted line
                if offsets is not None:
                    offsets[index] = base + start
                out.append(self._record(index, raw, eol))
                continue
            if is_wanted:
                if offsets is not None:
                    offsets[index] = base + start
                out.append(self._record(index, raw, eol, True))
            elif not self.keeps(raw, ctx):  # else proven to leave the context: not parsed
                record = self._record(index, raw, eol, True)
                if record.error is not None:  # parsed, and refused: reported, as by a parse
                    if offsets is not None:
                        offsets[index] = base + start
                    out.append(record)
            # The context may have changed, and with it the markers that matter.
            if pending and self.ctx.model != ctx.model:  # counted with the model read under
                bulk(pending, ctx)  # type: ignore[misc]
                pending = []
            if self.ctx is not ctx:
                contexts.append((end, self.ctx))
            ctx, markers, old = self.ctx, self.markers, nxt
            nxt = {}
            for m in markers:
                p = old.get(m, end)
                nxt[m] = find(m, end, hi) if 0 <= p < end or m not in old else p
            hit = min((p for p in nxt.values() if p >= 0), default=-1)
        if pending:
            bulk(pending, ctx)  # type: ignore[misc]
        self.records = index + count_lines(buf, at, hi, long_lines)
        unread = self.records - first - len(read)
        edges = None if native.EDGE not in firsts else firsts[native.EDGE] >= 0
        bad = unread_not_objects(buf, lo, hi, read, unread, native.reach(), edges)
        return self._unread_errors(buf, lo, first, bad, out, contexts) if bad else out

    def _unread_errors(
        self, buf: bytes, lo: int, first: int, bad: list[int], out: list[Record], contexts: Places
    ) -> list[Record]:
        """`out` and, in line order, the records of the unread lines starting at `bad` (those
        `io.jsoncheck` cannot vouch are each one JSON object) whose parse fails: a line that
        is not JSON holds no assistant text, but its runtime cannot read it either, and a
        parse of every line reports it (never silently clean). Rare: a damaged file."""
        seen = {record.index for record in out}
        at, index, added = lo, first, False
        for start in bad:
            index += buf.count(b"\n", at, start)
            at = start
            end = buf.index(b"\n", start)
            raw, eol = (
                (buf[start : end - 1], b"\r\n") if buf[end - 1] == 13 else (buf[start:end], b"\n")
            )
            if index in seen or not raw or raw.isspace():  # read already; blank (no record)
                continue
            # not the first line: no context hook; the context the lines before it left
            record = self._record(index, raw, eol)
            record.ctx = contexts[bisect_right(contexts, start, key=itemgetter(0)) - 1][1]
            if record.error is not None:
                self._at(index, self.base + start)
                out.append(record)
                added = True
        if added:
            out.sort(key=attrgetter("index"))
        return out

    def _clean(self, buf: bytes, wanted: dict[int, int]) -> set[int]:
        """Starts of the wanted lines the delimiter test proves clean (none without `quick`),
        complete, within the record limit, and JSON (`io.jsoncheck`: a line `quick` counts
        from its bytes must be one a parse reads)."""
        if self.quick is None or self.candidates is None or not wanted:
            return set()
        limit = record_limit()
        starts = [s for s, e in wanted.items() if not (limit and e - s > limit)]
        lines = [buf[s : wanted[s]] for s in starts]
        leaky = self.candidates(lines)
        # a line with an escaped letter may spell a word `quick` counts: parsed
        kept = [i for i in range(len(starts)) if i not in leaky and not escapes_a_letter(lines[i])]
        broken = not_json([lines[i] for i in kept], native.reach(), self.content)
        return {starts[i] for j, i in enumerate(kept) if j not in broken}

    def _lines_with(
        self, buf: bytes, lo: int, hi: int, firsts: dict[bytes, int] | None = None
    ) -> dict[int, int]:
        """{start: end} of the lines in buf[lo:hi] holding the format's marker or naming a turn
        (`turn_needles`), in order (end is the offset of the line's newline). One regex pass
        finds both: a second `find` pass for the turn words cost a scan of a clean Claude Code
        file 30%, the alternation about 5% (docs/performance.md); the lines with an escaped
        letter (`strangers.ESCAPED`) in a search of their own. `firsts` is left as it is:
        the context markers are found with `find` (`native.needle_lines` fills it)."""
        out: dict[int, int] = {}
        find, rfind, search = buf.find, buf.rfind, self.needles.search
        hit = search(buf, lo, hi)
        while hit is not None:
            pos = hit.start()
            end = find(b"\n", pos, hi)
            out[rfind(b"\n", lo, pos) + 1 or lo] = end
            hit = search(buf, end, hi)
        escaped = ESCAPED.search(buf, lo, hi)  # ~0.5 ns a byte; a match is rare
        if escaped is not None:  # the lines with an escaped letter too, in file order
            for m in ESCAPED.finditer(buf, escaped.start(), hi):
                pos = m.start()
                out.setdefault(rfind(b"\n", lo, pos) + 1 or lo, find(b"\n", pos, hi))
            out = dict(sorted(out.items()))
        return out

    def _lines(
        self, buf: bytes, lo: int, hi: int, broken: dict[int, int] | None = None
    ) -> list[Record]:
        """Line by line, exactly as iter_jsonl: the first line, CRLF files, and a block with
        lines that are not UTF-8 (`broken`, by start). A line parsed (the first, a marked one,
        a broken one) whose parse fails is yielded, so its error is reported."""
        wanted, out, at = self.wanted, [], lo
        # lines that may not be one JSON object: parsed, so an error is reported
        unsure = set(not_objects(buf, lo, hi, native.reach()))
        for line in buf[lo:hi].split(b"\n")[:-1]:
            start, at = at, at + len(line) + 1
            index = self.records
            self.records += 1
            raw, eol = (line[:-1], b"\r\n") if line.endswith(b"\r") else (line, b"\n")
            marked = self._marked(raw)
            keep = wanted in raw or names_turn(raw)
            if (
                index == 0
                or keep
                or marked
                or (broken and start in broken)
                or (start in unsure and raw and not raw.isspace())
            ):
                record = self._record(index, raw, eol, marked)
                if keep or record.error is not None:
                    self._at(index, self.base + start)
                    out.append(record)
        return out


def skippable(fmt: SessionFormat, record: Record) -> bool:
    """Scan's rule for a record it need not parse: it cannot hold an assistant message nor
    name a turn of another shape (`formats.strangers`), it is not an unterminated last line
    (which may be a truncated record), and it is UTF-8 and one JSON value (else parsed, its
    error reported as a parse of every line reports it: checked here, UTF-8 on its own, as
    `not_json`'s msgspec check does not read a string's bytes), and an object (`{...}`: a
    line of another shape is parsed, which says whether the format reads it)."""
    raw = record.raw
    return (
        bool(record.eol)
        and raw[:1] == b"{"
        and raw[-1:] == b"}"
        and not fmt.may_contain_assistant(raw)
        and not names_turn(raw)
        and not not_json((raw,))
        and not not_utf8_lines(raw, 0, len(raw))
    )
