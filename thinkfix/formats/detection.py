"""Shared evidence for `detect`: the head of a file parsed once, and name hints.

Every format's `detect` looks at the same head, so it is parsed once and
cached. Detection weighs field names and shapes; a file name only breaks ties.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from thinkfix.formats.base import parse_json
from thinkfix.formats.reader import is_pretty_opener

HEAD_BYTES = 65536
MAX_LINES = 200

# OpenClaw keeps soft-deleted and reset sessions as `<uuid>.jsonl.deleted.<ISO>` / `.reset.<ISO>`;
# claw-code rotates to `<stem>.rot-<ms>.jsonl`.
_ARCHIVE_SUFFIX = re.compile(r"\.(?:deleted|reset|bak)\.[^/\\]*$")
_COMPRESSED = re.compile(r"\.(?:gz|gzip|zst|zstd)$", re.IGNORECASE)


@dataclass(frozen=True)
class HeadSample:
    """The parsed head of a file."""

    values: tuple[Any, ...]  # every complete JSONL line that parsed, in order
    doc: Any  # the whole head as one JSON value when it is a complete document
    text: bytes  # the raw head
    pretty: bool  # the first line opens a pretty-printed document
    lines: int  # complete non-blank lines seen
    bad: int  # of which did not parse

    @property
    def objects(self) -> list[dict[str, Any]]:
        """Parsed JSONL objects, or the document's messages/items when it is a document."""
        if self.values:
            return [v for v in self.values if isinstance(v, dict)]
        if isinstance(self.doc, dict):
            return [self.doc]
        return []


@lru_cache(maxsize=32)
def sample(head: bytes) -> HeadSample:
    """Parse a head once for all formats."""
    first = head.split(b"\n", 1)[0]
    pretty = is_pretty_opener(first)
    doc = None
    values: list[Any] = []
    lines = bad = 0
    if pretty:
        doc, error = parse_json(head)
        if error is not None:
            doc = None
    else:
        pieces = head.split(b"\n")
        complete = pieces if len(pieces) == 1 else pieces[:-1]
        if len(pieces) > 1 and pieces[-1].strip():
            value, error = parse_json(pieces[-1])
            if error is None:
                complete = pieces
        for piece in complete[:MAX_LINES]:
            if not piece.strip():
                continue
            lines += 1
            value, error = parse_json(piece)
            if error is None:
                values.append(value)
            else:
                bad += 1
        if len(values) == 1 and len(complete) == 1:
            doc = values[0]
    return HeadSample(tuple(values), doc, head, pretty, lines, bad)


def base_name(path: str) -> str:
    """The file name without compression and archive suffixes (`a.jsonl.deleted.X.gz` -> `a.jsonl`)."""
    name = os.path.basename(path or "")
    name = _COMPRESSED.sub("", name)
    return _ARCHIVE_SUFFIX.sub("", name)


def extension(path: str) -> str:
    """`.jsonl` or `.json` (or whatever) of the real name, lower-case."""
    return os.path.splitext(base_name(path))[1].lower()


def passes(test: Any, o: Any) -> bool:
    """`test(o)`, where a test that raises on an object's odd field types means "no"."""
    try:
        return bool(test(o))
    except Exception:  # noqa: BLE001 - one odd line must not decide (or crash) detection
        return False


def share(objects: list[dict[str, Any]], test: Any) -> float:
    """Fraction of `objects` that pass `test` (0 when there are none)."""
    if not objects:
        return 0.0
    return sum(1 for o in objects if passes(test, o)) / len(objects)


def has_keys(text: bytes, *keys: str) -> bool:
    """Every `"key"` occurs in the raw bytes (evidence for a truncated document)."""
    return all(f'"{k}"'.encode() in text for k in keys)
