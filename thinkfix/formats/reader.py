"""Streaming record readers shared by the formats: JSONL lines and whole documents."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from thinkfix.formats.records import (
    EMPTY_CONTEXT,
    Context,
    Record,
    parse_json,
    record_limit,
    too_large,
)

#: Called for records whose bytes match a format's context markers (and the first
#: record); returns the context for this record and the one for the records after it.
ContextHook = Callable[[Record, Context], tuple[Context, Context]]

_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20


class Oversized:
    """A line past the record limit, read past without being kept: its size and terminator."""

    __slots__ = ("eol", "size")

    def __init__(self, size: int, eol: bytes) -> None:
        self.size, self.eol = size, eol


def bounded_lines(fp: BinaryIO, limit: int | None = None) -> Iterator[bytes | Oversized]:
    """`fp`'s lines, none of them held past `limit` bytes (default: the record limit; 0: no
    limit): a longer line is read past a block at a time and comes as an `Oversized`, so one
    huge line (or /dev/zero) costs a block of memory, not its size."""
    limit = record_limit() if limit is None else limit
    if not limit:
        yield from fp
        return
    readline = fp.readline
    while True:
        line = readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        size, last = len(line), line
        while not last.endswith(b"\n"):
            last = readline(_BLOCK)
            if not last:
                break
            size += len(last)
        eol = b"\r\n" if last.endswith(b"\r\n") else b"\n" if last.endswith(b"\n") else b""
        yield Oversized(size - len(eol), eol)


def iter_jsonl(
    lines: Iterable[bytes | Oversized],
    *,
    shapes: tuple[type, ...] = (dict,),
    hook: ContextHook | None = None,
    markers: tuple[bytes, ...] = (),
) -> Iterator[Record]:
    """One Record per line, in order; the file object's own line iteration does the splitting.

    Only lines containing one of the literal `markers` (and the first line) are
    parsed here, to update the context; every other line stays unparsed until
    someone asks. (Literal `in` checks: several times faster than one regex.)
    """
    ctx = EMPTY_CONTEXT
    lf, crlf, none = b"\n", b"\r\n", b""
    for index, line in enumerate(lines):
        if isinstance(line, Oversized):  # past the limit: reported, never parsed or kept
            yield Record(
                index,
                index + 1,
                b"",
                line.eol,
                ctx,
                shapes,
                data=None,
                error=too_large(line.size, record_limit()),
            )
            continue
        # a line's content and its terminator (`\n`, `\r\n`, or none on a last line)
        if line.endswith(lf):
            if line.endswith(crlf):
                raw, eol = line[:-2], crlf
            else:
                raw, eol = line[:-1], lf
        else:
            raw, eol = line, none
        record = Record(index, index + 1, raw, eol, ctx, shapes)
        if hook is not None:
            if index == 0:
                record.ctx, ctx = hook(record, ctx)
            else:
                for marker in markers:
                    if marker in raw:
                        record.ctx, ctx = hook(record, ctx)
                        break
        yield record


def read_document(
    fp: BinaryIO, *, shapes: tuple[type, ...] = (dict, list), head: bytes = b""
) -> Iterator[Record]:
    """The whole file as one record (pretty-printed `.json` sessions); `head` is what was
    already read of it. Past the record limit it is read past, not kept, and reported."""
    limit = record_limit()
    raw = head + fp.read(limit + 1 - len(head) if limit else -1)
    if limit and len(raw) > limit:
        size = len(raw)
        while block := fp.read(_BLOCK):
            size += len(block)
        yield Record(0, 1, b"", b"", shapes=shapes, data=None, error=too_large(size, limit))
    elif raw:
        yield Record(0, 1, raw, b"", shapes=shapes)


def _stripped(first_line: bytes) -> bytes:
    stripped = first_line.strip()
    if stripped.startswith(_BOM):
        stripped = stripped[len(_BOM) :].strip()
    return stripped


def is_pretty_opener(first_line: bytes) -> bool:
    """True when a file's first line opens a pretty-printed document (`{` or `[` alone)."""
    return _stripped(first_line) in (b"{", b"[")


def opens_split_document(first_line: bytes) -> bool:
    """True when a complete first line begins a JSON object or array but is no JSON value by
    itself: a document split across lines without the usual indentation (`{"messages": [
    {...},` then ` {...}]}`), which `json.load` reads whole. Or a JSONL file whose first line
    is broken: a reader tries the whole document and falls back to lines (`read_auto`)."""
    stripped = _stripped(first_line)
    if stripped[:1] not in (b"{", b"[") or stripped in (b"{", b"["):
        return False
    return parse_json(stripped)[1] is not None


def opens_document(first_line: bytes) -> bool:
    """The first line opens a document read whole: pretty-printed, or split across lines."""
    return is_pretty_opener(first_line) or opens_split_document(first_line)


def read_auto(
    fp: BinaryIO,
    *,
    shapes: tuple[type, ...] = (dict,),
    doc_shapes: tuple[type, ...] = (dict, list),
    hook: ContextHook | None = None,
    markers: tuple[bytes, ...] = (),
) -> Iterator[Record]:
    """JSONL, unless the first line opens a pretty-printed document.

    A compact one-line document is the same thing as a one-line JSONL file, so
    only pretty-printed documents need whole-file reading.
    """
    lines = bounded_lines(fp)
    first = next(lines, None)
    if first is None:
        return
    if isinstance(first, bytes) and is_pretty_opener(first):
        yield from read_document(fp, shapes=doc_shapes, head=first)
        return
    if isinstance(first, bytes) and opens_split_document(first):
        # One document split across lines, when the whole parses; else JSONL whose first
        # line is broken, read by line from the bytes already read (each error on its line).
        whole = list(read_document(fp, shapes=doc_shapes, head=first))
        record = whole[0] if whole else None
        if record is None or not record.raw or record.error is None:
            yield from whole
            return
        lines = bounded_lines(io.BytesIO(record.raw))
        yield from iter_jsonl(lines, shapes=shapes, hook=hook, markers=markers)
        return
    yield from iter_jsonl(
        itertools.chain((first,), lines), shapes=shapes, hook=hook, markers=markers
    )


def in_batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    """`size` records at a time; a read that fails part-way gives the records it read before
    the failure as a last batch, then raises, so a caller scans them (a `.jsonl.xz` with
    garbage after its stream lost up to a batch of records, their leaks unreported)."""
    batch: list[Record] = []
    try:
        for record in records:
            batch.append(record)
            if len(batch) == size:
                yield batch
                batch = []
    except Exception:
        if batch:
            yield batch
        raise
    if batch:
        yield batch
