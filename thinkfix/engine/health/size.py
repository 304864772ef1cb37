"""`size`: bytes by record type, and the records and files over a size.

A session grows by records nobody reads back (Claude Code's `progress` lines, images
inlined again on every turn, redundant signatures); bytes per record type say which. A
record over `HealthOptions.record_bytes` (the largest few of a file) and a file over
`file_bytes` are findings; the table by type is `FileHealth.bytes_by_type`.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from typing import Any

from thinkfix.engine.health.model import DEFAULT_HEALTH, HealthOptions
from thinkfix.engine.health.where import Where
from thinkfix.engine.report import HealthFinding, Problem
from thinkfix.formats.records import TOO_LARGE, Record

_SIZE = re.compile(r"of ([\d,]+) bytes")
UNREADABLE = "(unreadable)"


def record_type(data: Any) -> str:
    """A record's type as its runtime names it: `type` (with a payload's own `type`, as
    Codex nests them: `response_item/function_call`), else the message's `role`."""
    if not isinstance(data, dict):
        return "document" if isinstance(data, list) else "other"
    kind = data.get("type")
    if isinstance(kind, str):
        payload = data.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        return f"{kind}/{sub}" if isinstance(sub, str) else kind
    message = data.get("message")
    role = data.get("role") or (message.get("role") if isinstance(message, dict) else None)
    return role if isinstance(role, str) else "other"


def record_size(record: Record) -> int:
    """The record's bytes, its line end included (a record too large to keep: its error's)."""
    error = record.error
    if error is not None and error.startswith(TOO_LARGE):
        m = _SIZE.search(error)
        if m:
            return int(m.group(1).replace(",", "")) + len(record.eol)
    return len(record.raw) + len(record.eol)


class SizeCheck:
    """The `size` visitor: totals per type, and a heap of the largest records."""

    def __init__(self, where: Where, options: HealthOptions = DEFAULT_HEALTH) -> None:
        self.where = where
        self.options = options
        self.types: dict[str, list[int]] = {}
        self.total = 0
        self.largest: list[tuple[int, int, HealthFinding]] = []

    def feed(self, record: Record, offset: int) -> None:
        size = record_size(record)
        kind = (
            UNREADABLE
            if record.error is not None and record.data is None
            else (record_type(record.data))
        )
        row = self.types.setdefault(kind, [0, 0])
        row[0] += 1
        row[1] += size
        self.total += size
        if size > self.options.record_bytes and self.options.largest > 0:
            finding = self.where.finding(
                record,
                Problem.LARGE_RECORD,
                f"a {kind} record of {size:,} bytes (over {self.options.record_bytes:,})",
                detail=kind,
                offset=offset,
                size=size,
            )
            item = (size, -record.index, finding)
            if len(self.largest) < self.options.largest:
                heapq.heappush(self.largest, item)
            else:
                heapq.heappushpop(self.largest, item)

    def bytes_by_type(self) -> tuple[tuple[str, int, int], ...]:
        """(type, records, bytes), the most bytes first."""
        return tuple(
            sorted(((k, n, b) for k, (n, b) in self.types.items()), key=lambda t: (-t[2], t[0]))
        )

    def finish(self) -> Iterator[HealthFinding]:
        yield from (f for _, _, f in sorted(self.largest, key=lambda t: (-t[0], -t[1])))
        if self.total > self.options.file_bytes:
            top = ", ".join(f"{k} {b:,}" for k, _, b in self.bytes_by_type()[:3])
            first = Record(0, 1, b"")
            yield self.where.finding(
                first,
                Problem.LARGE_FILE,
                f"{self.total:,} bytes (over {self.options.file_bytes:,}); most in: {top}",
                detail=self.bytes_by_type()[0][0] if self.types else "",
                content=b"",
                size=self.total,
            )
