"""Plan a file's repair in one streamed pass: find what leaks, let the format draft the edits.

Pass one reads the file with scan's reader (`sparse.SparseReader`, its block survey
`CleanLines`) and keeps the records holding a repair and where its records start. The format
plans against a lazy view of the file (`source.FileRecords`: any record by index, read from
disk, or all in one pass) and answers with the records that change (`Edits`), laid over the
original bytes as `segments`: runs copied and new records, all the writer, the verifier and
the manifest need. Memory: the records that change, plus a line index. Documents and formats
with their own reader are read whole (bounded by the record limit)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from operator import add
from typing import BinaryIO, cast

from thinkfix.engine.health.fixes.model import Fixed
from thinkfix.engine.ledger.change import Change
from thinkfix.engine.repair.model import RepairOptions
from thinkfix.engine.repair.source import FileRecords, Source, named_stream, record_span
from thinkfix.engine.scan import evidence, native, sparse
from thinkfix.engine.scan.evidence import awaits_call
from thinkfix.engine.scan.findings import TOO_MANY, CappedFindings, capped_findings, may_pass
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import (
    SEPARATOR,
    delimiter_candidates,
    delimiter_hits,
    delimiter_sources,
    delimiter_test,
)
from thinkfix.engine.scan.sparse import skippable
from thinkfix.engine.scan.survey import Block, Key, Surveyor
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.quick import one_object
from thinkfix.formats.records import Context, Record, Site, record_limit
from thinkfix.formats.repairs import Edits, Placement, Repair
from thinkfix.io import compression, filestate
from thinkfix.io.jsoncheck import not_json
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.policy import Policy
from thinkfix.normalizer.spans import Finding, Result


def wanted(result: Result, kinds: frozenset[str]) -> bool:
    """Does a normalized text need a repair: a text-changing finding of a selected kind."""
    return result.changed and repairable(result.findings, kinds)


def repairable(findings: Sequence[Finding], kinds: frozenset[str]) -> bool:
    """Is one of `findings` a text-changing finding of a selected kind?"""
    return any(f.kind.changes_text and f.kind.value in kinds for f in findings)


class RepairFinder:
    """The texts of one record that the normalizer would change, as scan sees them; its byte
    tests are built once per file, so a file can be searched a record at a time. Byte tests
    first (scan's rule): a record without the format's assistant marker, or without anything
    that could be a delimiter, is never parsed."""

    def __init__(self, fmt: SessionFormat, options: ScanOptions) -> None:
        self.fmt, self.options = fmt, options
        self.may_leak = delimiter_test(options.policy) if options.prefilter else None
        self.may_assist = fmt.may_contain_assistant if options.prefilter else None
        # (line, error) of the records left as they are: a message past the findings cap
        self.capped: list[tuple[int, str]] = []

    def __call__(self, record: Record) -> list[tuple[Site, Result]]:
        raw = record.raw
        if self.may_assist is not None and not self.may_assist(raw):
            return []
        if self.may_leak is not None and not self.may_leak(raw):
            return []
        options = self.options
        out = []
        for site in self.fmt.sites(record):
            if options.model_disabled(site.model):
                continue
            streamed = self._streamed(site)
            if streamed is not None and streamed.capped:
                return []  # the record is copied through as it is, and reported
            if streamed is not None and not (
                repairable(streamed.findings, options.kinds)
                or awaits_call(self.fmt, site, streamed.findings)
            ):
                continue  # its findings, all streamed, need no repair: not normalized again
            result = self.result(site)
            if wanted(result, options.kinds) or awaits_call(self.fmt, site, result.findings):
                out.append((site, result))
        return out

    def result(self, site: Site) -> Result:
        """The site's text normalized as scan normalizes it."""
        return normalize(
            site.text,
            native_reasoning=site.native_reasoning,
            policy=self.options.policy,
            followed_by_tool_call=site.followed_by_tool_call,
            model=site.model,
        )

    def settled(
        self,
        found: list[tuple[Site, Result]],
        records: Sequence[Record],
        stream: Callable[[int], BinaryIO] | None = None,
    ) -> list[tuple[Site, Result]]:
        """`found` with rule 4's evidence: a text that awaited it (`evidence.awaits_call`) is
        normalized again when its message calls a tool on a later record (one more pass over
        `records`, or the scan's from the first waiting text of a line file's `stream`,
        `evidence.calls_after_from`, #26 item 4); then the texts that need a repair are kept."""
        fmt, kinds = self.fmt, self.options.kinds
        waiting = [site for site, result in found if awaits_call(fmt, site, result.findings)]
        calls: frozenset[int] = frozenset()
        if waiting and stream is not None:
            indices = sorted({site.record_index for site in waiting})
            pending = [records[i] for i in indices]
            calls = evidence.calls_after_from(fmt, stream(indices[0]), pending, indices[0])
        elif waiting:
            calls = evidence.followed(fmt, records, waiting)
        out = []
        for site, result in found:
            if site.record_index in calls and not site.followed_by_tool_call:
                site = evidence.called(site)
                result = self.result(site)
            if wanted(result, kinds):
                out.append((site, result))
        return out

    def _streamed(self, site: Site) -> CappedFindings | None:
        """The findings of a text that may hold more than scan reports, streamed (None for
        others: normalized whole); past the cap, the error is noted. Scan's `max-findings`
        bounds repair too (normalizing such a text whole keeps a span, a piece, a token and a
        finding per block: a line of `</think><think>` took ~100x its size). Under the cap
        they are all of `normalize`'s (`StreamNormalizer`'s contract: #26 item 4)."""
        options = self.options
        cap = options.max_findings
        if not may_pass(site.text, options.policy, cap):
            return None
        capped = capped_findings(
            site.text,
            site.native_reasoning,
            options.policy,
            cap,
            followed_by_tool_call=site.followed_by_tool_call,
            model=site.model,
        )
        if capped.capped:
            error = (
                f"{TOO_MANY} in one message: more than {cap} at {site.json_path}; not repaired "
                "(the max-findings setting raises the cap)"
            )
            self.capped.append((site.line, error))
        return capped


def bad_records(
    fmt: SessionFormat, records: Iterable[Record], options: ScanOptions
) -> Iterator[Record]:
    """Records that cannot be parsed, among those scan parses. Scan's rule (`skippable`): a
    line with no assistant marker in its bytes holds no assistant text, so it is not parsed.
    Repair adds one condition: the line must also look like a whole object, so a line that is
    plainly not JSON is reported before the file is rewritten around it (copied through as
    it is either way)."""
    for record in records:
        raw = record.raw
        if not raw and record.error is not None:
            yield record  # a line too long to keep (the sparse reader read past it)
            continue
        if not raw or raw.isspace():
            continue
        if options.prefilter and skippable(fmt, record) and raw[:1] == b"{" and raw[-1:] == b"}":
            continue
        if record.error is not None:
            yield record


@dataclass(frozen=True)
class Copy:
    """Original bytes start..end (decompressed), copied through unchanged."""

    start: int
    end: int


@dataclass(frozen=True)
class New:
    """A record the repair writes: a changed one (`original` is its index) or an inserted one.
    Its bytes are the record's `raw` then its `eol`, written and compared in those two
    pieces: a record may be tens of megabytes, and joining them was one more copy of it."""

    record: Record
    original: int | None

    @property
    def size(self) -> int:
        return len(self.record.raw) + len(self.record.eol)

    @property
    def data(self) -> bytes:
        """The record's bytes joined (a copy: for a diff's text)."""
        return self.record.raw + self.record.eol

    def pieces(self) -> tuple[bytes, ...]:
        """The record's bytes, as written: `raw`, then `eol` when it has one."""
        raw, eol = self.record.raw, self.record.eol
        return (raw, eol) if eol else (raw,)

    def write_to(self, out: BinaryIO) -> None:
        """Write the record's bytes to `out`: `raw`, then `eol`, never joined."""
        out.write(self.record.raw)
        if self.record.eol:
            out.write(self.record.eol)

    def same(self, data: bytes) -> bool:
        """Are `data` exactly this record's bytes?"""
        raw, eol = self.record.raw, self.record.eol
        return len(data) == self.size and data.startswith(raw) and data.endswith(eol)


Segment = Copy | New


@dataclass
class FilePlan:
    """One file's repair, planned but not written: the edits and where they go."""

    path: str
    fmt: SessionFormat
    source: Source
    originals: Sequence[Record]  # lazy (`FileRecords`) for line files; a list for documents
    offsets: Sequence[int]  # where each original record starts
    edits: Edits
    changes: list[Change] = field(default_factory=list)
    bad: tuple[tuple[int, str], ...] = ()  # (line, error) of records that cannot be used
    count: int = 0  # records in the original
    covers: bool = True  # the records tile the file exactly
    lines: bool = True  # one record per line (so a record's line is its index + 1)
    fixed: tuple[Fixed, ...] = ()  # what `--fix` repaired (engine/repair/fixes.py)
    fix_only: frozenset[int] = frozenset()  # new indices of records only fixes made
    rebuildable: bool = True  # undo can rebuild the original from the new records

    @property
    def compression(self) -> compression.Compression:
        return self.source.compression

    @property
    def planned(self) -> bool:
        """Did anything need a repair (even one the format then refused) or a fix?"""
        return bool(self.changes or self.fixed)

    def span(self, index: int) -> tuple[int, int]:
        return record_span(self.offsets, index, self.source.size)

    @cached_property
    def segments(self) -> list[Segment]:
        """The repaired file as runs of original bytes and new records, in order."""
        out: list[Segment] = []
        pos, edits = 0, self.edits
        for i in sorted(set(edits.inserted) | set(edits.replaced)):
            start, end = self.span(i) if i < len(self.offsets) else (self.source.size,) * 2
            if start > pos:
                out.append(Copy(pos, start))
            pos = max(pos, start)
            out.extend(New(r, None) for r in edits.inserted.get(i, ()))
            new = edits.replaced.get(i)
            if new is not None:
                out.append(New(new, i))
                pos = end
        if pos < self.source.size:
            out.append(Copy(pos, self.source.size))
        return out

    @cached_property
    def changed(self) -> bool:
        """Do the repaired bytes differ from the original ones?"""
        read, span = self.source.read, self.span
        return any(
            isinstance(seg, New)
            and (seg.original is None or not seg.same(read(*span(seg.original))))
            for seg in self.segments
        )

    def blocks(self) -> Iterator[bytes]:
        """The repaired (decompressed) bytes, a block or a record at a time."""
        for seg in self.segments:
            if isinstance(seg, Copy):
                yield from self.source.blocks(seg.start, seg.end)
            else:
                yield from seg.pieces()

    @property
    def content(self) -> bytes:
        """The whole original (decompressed): for documents' diffs and tests only."""
        return self.source.read(0, self.source.size)

    @property
    def new_content(self) -> bytes:
        """The whole repaired content: for documents' diffs and tests only."""
        return b"".join(self.blocks()) if self.changed else self.content

    @cached_property
    def new_sha256(self) -> str:
        import hashlib

        digest = hashlib.sha256()
        for block in self.blocks():
            digest.update(block)
        return digest.hexdigest()


def plan_file(path: str, fmt: SessionFormat, source: Source, options: RepairOptions) -> FilePlan:
    """Plan one file's repair: what changes, where the reasoning goes (see the module doc)."""
    scan = options.scan
    known: dict[int, Record] = {}
    found: list[tuple[Site, Result]] = []
    bad: list[tuple[int, str]] = []

    finder = RepairFinder(fmt, scan)
    seen: dict[int, int] | None = None  # where the sparse reader's records start

    def survey(records: Iterable[Record]) -> int:
        n = 0
        for record in records:
            n += 1
            hits = finder(record)
            if hits:
                known[record.index] = record
                found.extend(hits)
            elif seen is not None:  # the start of a record holding a repair is kept, no other
                seen.pop(record.index, None)  # (memory: as `known`, not one entry a line)
            # After the sites were asked for: a record whose fields the format rejected is bad.
            bad.extend((r.line, r.error or "") for r in bad_records(fmt, (record,), scan))
        return n

    # A writing mode needs the content's hash: taken as the survey reads, not in a read of its own.
    hashed = options.mode.writes
    # peeked at apart: a peek at `stream` fills 4 MB to copy each block out of (#26 item 4)
    lines = fmt.line_records and not sparse.is_document(source.stream(buffer=4096))
    fast = lines and scan.prefilter and sparse.supports(fmt)  # read by `Survey`: see there
    stream = source.survey_stream(hashed=hashed) if fast else source.stream(hashed=hashed)
    records: list[Record] | None = None
    if fast:
        reader = sparse.SparseReader(
            fmt,
            cast(BinaryIO, stream),
            candidates=delimiter_candidates(scan.policy),
            quick=_sound,
            surveyor=CleanLines(scan.policy),
            bulk=_uncounted,
            offsets=True,
        )
        seen = reader.offsets
        survey(reader)
        count = reader.records
    elif lines:
        count = survey(fmt.read(cast(BinaryIO, stream)))
    else:
        records = list(fmt.read(named_stream(stream.read(), source.path)))
        count = survey(records)
    bad.extend(finder.capped)
    source.check()
    if hashed:
        source.hashed_through(stream)
    empty = Edits(count, {}, {})
    if records is not None:
        offsets: Sequence[int] = [0, *accumulate(len(r.raw) + len(r.eol) for r in records)][:-1]
        covers = sum(len(r.raw) + len(r.eol) for r in records) == source.size
        originals: Sequence[Record] = records
    else:
        offsets, covers, originals = [], True, []
    plan = FilePlan(
        path, fmt, source, originals, offsets, empty, [], tuple(bad), count, covers, lines
    )
    if not found:
        return plan
    if records is None:
        plan.offsets = source.line_offsets(seen, count)
        if len(plan.offsets) != count:
            raise filestate.FileChanged(f"{path}: changed while it was being read; skipped")
        plan.originals = FileRecords(source, fmt, plan.offsets, known)
    reread = None if records is not None else lambda i: source.stream(start=plan.offsets[i])
    found = finder.settled(found, plan.originals, reread)  # a line file read from record i
    if not found:
        return plan
    repairs = [Repair(site, result.visible, result.extracted) for site, result in found]
    plan.edits, placements = fmt.edits(plan.originals, repairs, options.apply)
    if records is None:  # a line file: what is left is written and proven from bytes
        plan.edits = _unparsed(plan.edits, fmt)
        plan.originals = FileRecords(source, fmt, plan.offsets, {})
    keep = options.keep_texts
    plan.changes = [
        Change(
            site,
            result.findings,
            site.text if keep else "",
            _written(result.visible, placement) if keep else "",
            result.extracted,
            placement,
            tuple((s.start, s.end, s.label.value) for s in result.spans) if keep else (),
        )
        for (site, result), placement in zip(found, placements, strict=True)
    ]
    return plan


def _unparsed(edits: Edits, fmt: SessionFormat) -> Edits:
    """The same edits with their records' parsed trees let go, and no original record held
    (#22 item 9: each is the record's size again). The plan is written from the new records'
    bytes and proven by reading those back; a tree asked for later is parsed again."""

    def bare(r: Record) -> Record:
        return Record(
            r.index, r.line, r.raw, r.eol, r.ctx, fmt.shapes, touched=r.touched, inserted=r.inserted
        )

    inserted = {i: [bare(r) for r in rs] for i, rs in edits.inserted.items()}
    return Edits(edits.count, {i: bare(r) for i, r in edits.replaced.items()}, inserted)


class CleanLines(Surveyor):
    """The sparse reader's block survey for repair: the wanted lines `_sound` takes among
    those the delimiter test proves clean, found for a whole block at once. Scan's block
    counter matches each line to count it by model and day; repair counts nothing, so the
    byte tests run over the block's wanted lines joined (the delimiter test in one hyperscan
    pass where the reader runs the native passes, UTF-8 in one decode), and the reader goes
    line by line only through the rest (leaks, context markers, not one compact object)."""

    __slots__ = ()

    def __init__(self, policy: Policy) -> None:  # no canonical pattern: nothing is counted
        self.hits = delimiter_hits(policy)
        self.sources = delimiter_sources(policy)
        self.limit = record_limit()
        self._native = None
        self._tried = False

    def block(self, buf: bytes, wanted: dict[int, int], fast: bool = False) -> Block:
        """`Surveyor.block` for repair: the clean lines `_sound` takes, with no key."""
        limit = self.limit
        spans = [
            (s, e)
            for s, e in wanted.items()
            if buf[s] == 0x7B and buf[e - 1] == 0x7D and not (limit and e - s > limit)
        ]
        if not spans:
            return Block([], [], [], wanted)
        view = memoryview(buf)  # the lines joined from views: one copy of their bytes, not two
        pieces = [view[s:e] for s, e in spans]
        joined = SEPARATOR.join(pieces)
        offsets = list(map(add, accumulate(map(len, pieces), initial=0), range(len(pieces))))
        hits = self._checks() if fast else None
        bad = (hits or self.hits)(joined, offsets)
        if not joined.isascii():
            try:
                joined.decode()  # every piece is UTF-8 when the whole is (cut at ASCII bytes)
            except UnicodeDecodeError:
                bad.update(i for i, piece in enumerate(pieces) if not one_object(bytes(piece)))
        # one JSON value each, as the scan checks (`io.jsoncheck`): a line whose structure
        # alone is broken is parsed and reported, not copied through
        bad.update(not_json(pieces, native.reach()))
        starts = [s for i, (s, _) in enumerate(spans) if i not in bad]
        kept = set(starts)
        return Block(
            starts,
            [e for i, (_, e) in enumerate(spans) if i not in bad],
            [_NO_KEY] * len(starts),
            {s: e for s, e in wanted.items() if s not in kept},
        )

    def _checks(self) -> native.Hits | None:
        """The delimiter test in one native pass, compiled on first use (None where
        hyperscan is missing or refuses it: the pure test runs)."""
        if not self._tried:
            self._tried = True
            self._native = native.piece_hits(self.sources, SEPARATOR)
        return self._native


_NO_KEY: Key = (None, "")


def _uncounted(keys: list[Key], ctx: Context) -> None:
    """The reader's sink for the lines `CleanLines` accepted: repair counts none."""


def _sound(raw: bytes, ctx: Context) -> bool:
    """The sparse reader's test for a line its delimiter test proved clean: one compact object
    in UTF-8 (`quick.one_object`) is copied through unparsed; anything else is parsed, so a
    line that is plainly not JSON is still reported."""
    return one_object(raw)


def _written(visible: str, placement: Placement) -> str:
    """The visible text the file gets: the repaired one, or the archive placeholder."""
    return visible if placement.placeholder is None else placement.placeholder
