"""What an incremental scan reads of a file that grew: the hashed prefix that proves the old bytes are the same (`prefix_digest`), the last complete line (`last_line_end`), the parse context carried across the cut, and a file's old and new results merged (`merge`)."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from typing import Any, BinaryIO

import orjson

from thinkfix.engine.scan.result import ScannedFile
from thinkfix.formats.records import EMPTY_CONTEXT, Context
from thinkfix.io.ranges import ByteRange

# --- per-file results -------------------------------------------------------------------

HASH_BLOCK = 1 << 20


def merge(a: ScannedFile, b: ScannedFile, *, size: int) -> ScannedFile:
    """The result of a file read as part `a` then part `b`."""
    models: dict[str, list[int]] = {}
    for m, x, y, z in a.by_model + b.by_model:
        t = models.setdefault(m, [0, 0, 0])
        t[0] += x
        t[1] += y
        t[2] += z
    days: dict[tuple[str, str], list[int]] = {}
    for day, m, x, y, z in a.by_day + b.by_day:
        t = days.setdefault((day, m), [0, 0, 0])
        t[0] += x
        t[1] += y
        t[2] += z
    return ScannedFile(
        path=b.path,
        format=b.format or a.format,
        size=size,
        records=a.records + b.records,
        assistant_messages=a.assistant_messages + b.assistant_messages,
        leaking_messages=a.leaking_messages + b.leaking_messages,
        findings=a.findings + b.findings,
        errors=a.errors + b.errors,
        by_model=tuple(sorted((m, t[0], t[1], t[2]) for m, t in models.items())),
        skipped=b.skipped,
        by_day=tuple(sorted((d, m, t[0], t[1], t[2]) for (d, m), t in days.items())),
    )


# --- reading a byte range ------------------------------------------------------------------


def new_digest() -> Any:
    # SHA-1 as a checksum, not a seal: ~0.8 GB/s here, and no accidental collision known.
    return hashlib.sha1(usedforsecurity=False)


def check_digest(digest: Any) -> str:
    """A digest as the state writes it (base64: 27 characters for SHA-1's 20 bytes)."""
    return base64.b64encode(digest.digest()).decode().rstrip("=")


def prefix_digest(fp: BinaryIO, end: int) -> tuple[Any, int]:
    """The running hash of bytes [0, end) and how many there were (fewer: the file shrank)."""
    digest = new_digest()
    fp.seek(0)
    done = 0
    while done < end:
        block = fp.read(min(HASH_BLOCK, end - done))
        if not block:
            break
        digest.update(block)
        done += len(block)
    return digest, done


class HashedRange(ByteRange):
    """A byte range that hashes what it hands out: the check is of the bytes parsed, even
    when the file changes while it is read."""

    def __init__(self, raw: BinaryIO, start: int, end: int, digest: Any) -> None:
        super().__init__(raw, start, end)
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        self.digest.update(data)
        return data

    def readinto(self, buffer: Any) -> int:
        n = super().readinto(buffer)
        self.digest.update(memoryview(buffer)[:n])
        return n


def last_line_end(fp: BinaryIO, start: int, end: int) -> int:
    """The offset just past the last newline in [start, end), or `start` when there is none."""
    pos = end
    while pos > start:
        lo = max(start, pos - (1 << 16))
        fp.seek(lo)
        block = fp.read(pos - lo)
        i = block.rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        pos = lo
    return start


def context_json(ctx: Context) -> dict[str, Any] | None:
    """The context as JSON, or None when it does not survive the trip (then no resuming)."""
    data = {"session_id": ctx.session_id, "model": ctx.model, "extra": dict(ctx.extra)}
    try:
        back = orjson.loads(orjson.dumps(data))
    except (TypeError, orjson.JSONEncodeError):
        return None
    return back if back == data else None


def context_from(data: Mapping[str, Any] | None) -> Context:
    if not data:
        return EMPTY_CONTEXT
    return Context(data.get("session_id"), data.get("model"), dict(data.get("extra") or {}))


def shrank(fp: BinaryIO, size: int) -> bool:
    """Is the open file shorter than `size` now (rewritten while it was read)?"""
    return os.fstat(fp.fileno()).st_size < size
