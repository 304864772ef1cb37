"""`size`: bytes by record type, the records and files over a size, and the bytes stored
more than once.

A session grows by records nobody reads back (Claude Code's `progress` lines, images
inlined again on every turn, redundant signatures); bytes per record type say which. A
record over `HealthOptions.record_bytes` (the largest few of a file) and a file over
`file_bytes` are findings; the table by type is `FileHealth.bytes_by_type`. Inlined images
(base64, in whatever shape the runtime stores them: `stored_blobs`) are counted per file and
image format, an image stored again is a finding of its own (how many times, the bytes
wasted), and so are thinking signatures stored again.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from thinkfix.engine.health.model import DEFAULT_HEALTH, HealthOptions
from thinkfix.engine.health.where import Where
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats.records import TOO_LARGE, Record

_SIZE = re.compile(r"of ([\d,]+) bytes")
UNREADABLE = "(unreadable)"

# --- what a record stores inline: images and thinking signatures ---

#: The keys an image's media type is stored under: Anthropic's `source.media_type` (Claude
#: Code, claw-code, the API logs), pi's and MCP's `mimeType` (pi, Goose), Gemini's
#: `inlineData.mimeType`, OpenCode's `mime`.
_MIME_KEYS = ("media_type", "mimeType", "mime_type", "mediaType", "mime")
#: An image as a data URL: Codex's `input_image.image_url`, OpenAI chat's `image_url.url`,
#: OpenCode's file part `url`.
_DATA_URL = re.compile(r"data:image/([\w.+-]+);base64,")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
#: Where each runtime keeps a thinking block's signature: the key, and the block `type` it
#: counts in (None: any). Anthropic `thinking.signature` and `redacted_thinking.data`, pi
#: `thinkingSignature`, Codex `encrypted_content` (reasoning items, and the items of a
#: `compacted` record's `replacement_history`), Gemini `thoughtSignature`.
_SIGNATURE_KEYS: dict[str, str | None] = {
    "signature": "thinking",
    "data": "redacted_thinking",
    "thinkingSignature": "thinking",
    "encrypted_content": None,  # also on a compacted history's messages
    "thoughtSignature": None,
}
#: Shorter is a marker, not a signature (pi stores `thinkingSignature: "reasoning_content"`,
#: the field an OpenAI-compatible provider sent the reasoning in).
SIGNATURE_MIN = 32
#: A record holds none of them unless its bytes hold one of these (every image form names an
#: `image/...` type; the signature keys end so), so most records are never walked.
_MARKERS = (b"image/", b'ignature"', b'encrypted_content"', b"redacted_thinking")


@dataclass(frozen=True)
class Blob:
    """An image or a signature stored in a record: where, what (an image's format: `png`),
    and the stored text (base64)."""

    kind: str  # "image" or "signature"
    path: str
    format: str
    data: str


def _image(node: dict[str, Any]) -> tuple[str, str] | None:
    """(format, base64) when `node` is an image's data beside its `image/...` media type:
    `data` beside one of `_MIME_KEYS`, or Claude Code's Read result `toolUseResult.file`
    (`base64` beside `type`), which holds the image its `tool_result` already holds."""
    for field, keys in (("data", _MIME_KEYS), ("base64", ("type",))):
        data = node.get(field)
        if not isinstance(data, str) or not data:
            continue
        for key in keys:
            mime = node.get(key)
            if isinstance(mime, str) and mime[:6].lower() == "image/":
                return mime[6:].lower() or "image", data
    return None


def stored_blobs(data: Any) -> Iterator[Blob]:
    """Each inlined image and each thinking signature in a record's JSON, in document order.

    Walked with a stack of its own, not recursion: a record nested deeper than Python's
    recursion limit is still JSON a runtime wrote."""
    # (value, its path, the `type` of the object holding it, its key there)
    stack: list[tuple[Any, str, Any, Any]] = [(data, "", None, None)]
    while stack:
        value, at, kind, key = stack.pop()
        if isinstance(value, str):
            if key in _SIGNATURE_KEYS and len(value) >= SIGNATURE_MIN:
                block = _SIGNATURE_KEYS[key]
                if block is None or kind == block:
                    yield Blob("signature", at, "", value)
            elif value.startswith("data:image/"):
                m = _DATA_URL.match(value)
                if m is not None and _BASE64.fullmatch(value, m.end()):
                    yield Blob("image", at, m.group(1).lower(), value[m.end() :])
        elif isinstance(value, list):
            stack.extend(
                (item, f"{at}[{i}]", None, None)
                for i, item in reversed(list(enumerate(value)))
                if isinstance(item, (str, dict, list))
            )
        elif isinstance(value, dict):
            image = _image(value)
            if image is not None:
                yield Blob("image", at, *image)
                continue
            here = value.get("type")
            stack.extend(
                (item, f"{at}.{k}" if at else str(k), here, k)
                for k, item in reversed(list(value.items()))
                if isinstance(item, (str, dict, list))
            )


@dataclass
class _Stored:
    """One distinct image or signature of a file: how often, how big, first where."""

    times: int
    size: int
    format: str
    line: int
    again: HealthFinding | None = None  # the finding made at its second sighting


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


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SizeCheck:
    """The `size` visitor: totals per type, a heap of the largest records, and each image
    and signature seen (by a hash of its text)."""

    def __init__(self, where: Where, options: HealthOptions = DEFAULT_HEALTH) -> None:
        self.where = where
        self.options = options
        self.types: dict[str, list[int]] = {}
        self.total = 0
        self.largest: list[tuple[int, int, HealthFinding]] = []
        self.images: dict[str, _Stored] = {}
        self.signatures: dict[str, _Stored] = {}
        self.first_image: HealthFinding | None = None
        self.first_repeat: HealthFinding | None = None  # the first signature stored again

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
        if kind != UNREADABLE and any(m in record.raw for m in _MARKERS):
            for blob in stored_blobs(record.data):
                self._stored(record, blob)
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

    def _stored(self, record: Record, blob: Blob) -> None:
        """Count one image or signature; a finding where the first image is and where each
        image (or the first signature) is stored again."""
        seen = self.images if blob.kind == "image" else self.signatures
        digest = _digest(blob.data)
        known = seen.get(digest)
        if known is None:
            seen[digest] = _Stored(1, len(blob.data), blob.format, record.line)
            if blob.kind == "image" and self.first_image is None:
                self.first_image = self.where.finding(
                    record, Problem.INLINED_IMAGES, "", json_path=blob.path, content=b""
                )
            return
        known.times += 1
        if blob.kind == "image" and known.again is None:
            known.again = self.where.finding(
                record,
                Problem.REPEATED_IMAGE,
                "",
                json_path=blob.path,
                detail=digest[:16],
                content=digest.encode(),
            )
        elif blob.kind == "signature" and self.first_repeat is None:
            self.first_repeat = self.where.finding(
                record, Problem.REPEATED_SIGNATURE, "", json_path=blob.path, content=b""
            )

    def bytes_by_type(self) -> tuple[tuple[str, int, int], ...]:
        """(type, records, bytes), the most bytes first."""
        return tuple(
            sorted(((k, n, b) for k, (n, b) in self.types.items()), key=lambda t: (-t[2], t[0]))
        )

    def _stored_findings(self) -> Iterator[HealthFinding]:
        """The image and signature findings, their words written now the counts are known."""
        if self.first_image is not None:
            per: dict[str, list[int]] = {}
            for s in self.images.values():
                row = per.setdefault(s.format, [0, 0])
                row[0] += s.times
                row[1] += s.times * s.size
            total = sum(b for _, b in per.values())
            each = "; ".join(
                f"{fmt} {n}: {b:,}" for fmt, (n, b) in sorted(per.items(), key=lambda kv: -kv[1][1])
            )
            count = sum(n for n, _ in per.values())
            yield replace(
                self.first_image,
                message=f"{count} image{'s' * (count != 1)} inlined as base64, {total:,} "
                f"bytes ({each})",
                detail=",".join(sorted(per)),
                size=total,
            )
        for s in self.images.values():
            if s.again is not None:
                wasted = (s.times - 1) * s.size
                yield replace(
                    s.again,
                    message=f"the same {s.format} image ({s.size:,} bytes of base64) stored "
                    f"{s.times} times (first on line {s.line}): {wasted:,} bytes wasted",
                    size=wasted,
                )
        if self.first_repeat is not None:
            again = [s for s in self.signatures.values() if s.times > 1]
            copies = sum(s.times - 1 for s in again)
            wasted = sum((s.times - 1) * s.size for s in again)
            most = max(s.times for s in again)
            yield replace(
                self.first_repeat,
                message=f"{copies} extra cop{'y' if copies == 1 else 'ies'} of "
                f"{len(again)} thinking signature{'s' * (len(again) != 1)} (one stored {most} "
                f"times): {wasted:,} bytes redundant",
                size=wasted,
            )

    def finish(self) -> Iterator[HealthFinding]:
        yield from (f for _, _, f in sorted(self.largest, key=lambda t: (-t[0], -t[1])))
        yield from self._stored_findings()
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
