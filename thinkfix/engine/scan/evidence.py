"""Rule 4's tool-call evidence from later records (#21 item 3).

A text whose first delimiter is an orphan close with nothing after it keeps its text
visible and loses only the delimiter (`stray_close`), unless a tool call follows it in its
message. Claude Code writes a message's tool_use on the record after its text, Codex its
`function_call` as an item of its own; such a format says so (`SessionFormat.calls_later`)
and finds the calls in one more pass (`calls_after`). Only a text that `awaits_call` needs
it, so a clean file is never read twice.

`calls_after_from` is that pass from any record boundary of a JSONL file (a piece of a
file scanned apart starts mid-file): for a format that pairs a text with a call by the
message's id (`SessionFormat.spread`), the texts it cannot pair wait to the file's end, so it
reads on only the lines that name a waiting message's id, found with `bytes.find` a block at
a time, and parses no other (the same assumption every marker makes: a runtime writes an
id's ASCII letters unescaped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from os.path import commonprefix
from typing import TYPE_CHECKING, BinaryIO

from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import EMPTY_CONTEXT, Record, Site
from thinkfix.normalizer.kinds import LeakKind

if TYPE_CHECKING:  # annotations only: a scan that normalizes no text loads no spans
    from thinkfix.normalizer.spans import Finding


def awaits_call(fmt: SessionFormat, site: Site, findings: Sequence[Finding]) -> bool:
    """Would a tool call on a later record change this text's findings? Only a close judged
    without evidence (`stray_close`) can split; its site's format must write calls apart."""
    return (
        fmt.calls_later
        and not site.followed_by_tool_call
        and any(f.kind is LeakKind.STRAY_CLOSE for f in findings)
    )


def followed(
    fmt: SessionFormat, records: Iterable[Record], sites: Iterable[Site]
) -> frozenset[int]:
    """The record indices of those `sites` whose message calls a tool on a later one of
    `records` (the whole file, in order): their texts have rule 4's evidence."""
    return fmt.calls_after(records, {s.record_index for s in sites})


def called(site: Site) -> Site:
    """The site with rule 4's evidence."""
    return site._replace(followed_by_tool_call=True)


#: An id a runtime cannot have escaped (letters, digits and `_.:-`): found by its bytes.
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")
_BLOCK = 1 << 22
#: The shortest prefix shared by the waiting ids that `_lines_naming` looks for instead of
#: each id (`"msg_`: one occurrence per message id on most lines).
_PREFIX = 4


def calls_after_from(
    fmt: SessionFormat, fp: BinaryIO, pending: Sequence[Record], first: int
) -> frozenset[int]:
    """`fmt.calls_after` over the records of `fp` (a JSONL stream from a record boundary, its
    first record numbered `first`) for the `pending` records (read already, in order): the
    indices of those whose message calls a tool later. The format's own pass over every
    record where it pairs otherwise (Codex: the next items, a short look-ahead)."""
    if not pending:
        return frozenset()
    # a message without an id never waits (`calls_after` pairs by id)
    ids = {m.message_id for r in pending for m in fmt.checked_messages(r)} - {None}
    plain = sorted(i for i in ids if i is not None and _PLAIN_ID.fullmatch(i))
    if (
        not (fmt.spread and fmt.line_records)
        or type(fmt).calls_after is not SessionFormat.calls_after
        or len(plain) != len(ids)
    ):
        found = fmt.calls_after(fmt.read_bare(fp), {r.index - first for r in pending})
        return frozenset(i + first for i in found)
    needles = tuple(f'"{i}"'.encode() for i in plain)
    return fmt.calls_after(_naming(fp, pending, first, needles, fmt), {r.index for r in pending})


def _naming(
    fp: BinaryIO,
    pending: Sequence[Record],
    first: int,
    needles: tuple[bytes, ...],
    fmt: SessionFormat,
) -> Iterator[Record]:
    """The `pending` records and, in file order among them, every later line holding one of
    `needles` (numbered from `first`): the only records `calls_after` can pair a waiting text
    with, since the message of every waiting text has one of those ids."""
    given = {r.index: r for r in pending}
    line = first  # the number of the line at buf[0]
    tail = b""
    while True:
        data = fp.read(_BLOCK)
        buf = tail + data if tail else data
        if not buf:
            break
        hi = buf.rfind(b"\n") + 1 if data else len(buf)
        if hi == 0:  # no line ends in this block yet
            tail = buf
            continue
        starts = _lines_naming(buf, hi, needles)
        at, n = 0, line
        for start in sorted(starts):
            n += buf.count(b"\n", at, start)
            at = start
            while given and min(given) < n:
                yield given.pop(min(given))
            if n in given:
                yield given.pop(n)
                continue
            end = buf.find(b"\n", start, hi)
            end = hi if end < 0 else end
            raw, eol = buf[start:end], buf[end : end + 1]
            if raw.endswith(b"\r"):
                raw, eol = raw[:-1], b"\r\n"
            yield Record(n, n + 1, raw, eol, EMPTY_CONTEXT, fmt.shapes)
        line += buf.count(b"\n", 0, hi)
        while given and min(given) < line:
            yield given.pop(min(given))
        tail = buf[hi:]
        if not data:
            break
    yield from (given[i] for i in sorted(given))


def _lines_naming(buf: bytes, hi: int, needles: tuple[bytes, ...]) -> set[int]:
    """The starts of the lines of buf[:hi] holding one of `needles` (quoted plain ids).

    Ids share a prefix (Claude Code's `"msg_`): each occurrence of it is read once and the
    quoted id there looked up, one pass over the block however many ids wait. A search per
    id cost a pass each: a 213 MB session waiting on a few hundred ids spent 4 of its 5 s
    here (16 cores, bench/jobs.py's one-file row). Ids with no common prefix of a few bytes
    are searched for one by one."""
    starts: set[int] = set()
    if not needles:
        return starts
    first, last = min(needles), max(needles)  # their common prefix is every needle's
    prefix = first[: len(commonprefix((first, last)))]
    if len(prefix) < _PREFIX and len(needles) > 1:
        for needle in needles:
            at = buf.find(needle, 0, hi)
            while at >= 0:
                starts.add(buf.rfind(b"\n", 0, at) + 1)
                end = buf.find(b"\n", at, hi)
                at = buf.find(needle, end, hi) if end >= 0 else -1
        return starts
    wanted = frozenset(needles)
    find, rfind = buf.find, buf.rfind
    at = find(prefix, 0, hi)
    while at >= 0:
        # a plain id holds no quote: the next one closes it, or this is no needle
        close = find(b'"', at + 1, hi)
        if close < 0:
            break
        if buf[at : close + 1] in wanted:
            starts.add(rfind(b"\n", 0, at) + 1)
        at = find(prefix, at + 1, hi)
    return starts
