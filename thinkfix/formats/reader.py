"""Streaming record readers shared by the formats: JSONL lines and whole documents."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from thinkfix.formats.base import EMPTY_CONTEXT, Context, Record

#: Called for records whose bytes match a format's context markers (and the first
#: record); returns the context for this record and the one for the records after it.
ContextHook = Callable[[Record, Context], tuple[Context, Context]]

_BOM = b"\xef\xbb\xbf"


def iter_jsonl(lines: Iterable[bytes], *, shapes: tuple[type, ...] = (dict,),
               hook: ContextHook | None = None,
               markers: tuple[bytes, ...] = ()) -> Iterator[Record]:
    """One Record per line, in order; the file object's own line iteration does the splitting.

    Only lines containing one of the literal `markers` (and the first line) are
    parsed here, to update the context; every other line stays unparsed until
    someone asks. (Literal `in` checks: several times faster than one regex.)
    """
    ctx = EMPTY_CONTEXT
    lf, crlf, none = b"\n", b"\r\n", b""
    for index, line in enumerate(lines):
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


def is_pretty_opener(first_line: bytes) -> bool:
    """True when a file's first line opens a pretty-printed document (`{` or `[` alone)."""
    stripped = first_line.strip()
    if stripped.startswith(_BOM):
        stripped = stripped[len(_BOM):].strip()
    return stripped in (b"{", b"[")


def read_auto(fp: BinaryIO, *, shapes: tuple[type, ...] = (dict,),
              doc_shapes: tuple[type, ...] = (dict, list), hook: ContextHook | None = None,
              markers: tuple[bytes, ...] = ()) -> Iterator[Record]:
    """JSONL, unless the first line opens a pretty-printed document.

    A compact one-line document is the same thing as a one-line JSONL file, so
    only pretty-printed documents need whole-file reading.
    """
    first = fp.readline()
    if not first:
        return
    if is_pretty_opener(first):
        yield Record(0, 1, first + fp.read(), b"", shapes=doc_shapes)
        return
    yield from iter_jsonl(itertools.chain((first,), fp), shapes=shapes, hook=hook,
                          markers=markers)

