"""Shared evidence for `detect`: the head of a file parsed once, and name hints.

Every format's `detect` looks at the same head, so it is parsed once and
cached. Detection weighs field names and shapes; a file name only breaks ties.

The head ends on whole records (`read_head`): a session whose first line is a
400 KB pasted log, or a chat export with one 100 KB conversation per line, is
judged on its parsed records like any other, not on a cut-off fragment. Only a
first record longer than `RECORD_CAP` leaves the formats with key patterns in
a partial record (`HeadSample.partial`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, BinaryIO, overload

from thinkfix.formats.reader import is_pretty_opener, opens_document, opens_split_document
from thinkfix.formats.records import parse_json

#: Detection reads at least this much (or the whole file when it is smaller)...
HEAD_BYTES = 65536
#: ...and then on until the head holds this many complete records...
MIN_RECORDS = 3
#: ...or this many bytes: the generous cap that keeps one absurd line from filling memory.
RECORD_CAP = 32 << 20
MAX_LINES = 200

# OpenClaw keeps soft-deleted and reset sessions as `<uuid>.jsonl.deleted.<ISO>` / `.reset.<ISO>`;
# claw-code rotates to `<stem>.rot-<ms>.jsonl`.
_ARCHIVE_SUFFIX = re.compile(r"\.(?:deleted|reset|bak)\.[^/\\]*$")
_COMPRESSED = re.compile(r"\.(?:gz|gzip|zst|zstd|bz2|xz)$", re.IGNORECASE)


class Parsed:
    """A head's complete JSONL lines, each parsed when a test first reaches it.

    Claude Code, first in the registry, is sure once it meets one conversation entry, which
    is most often the first or second line: a scan of many small sessions no longer parses
    each whole file once more to detect it. `values` and `objects` give the same items, in
    the same order, as parsing every line up front; a count (`lines`, `bad`, a `len`) parses
    them all. A head is cached and shared (`sample`), so its lines are parsed under a lock: two
    threads detecting files with the same head must not parse a line twice or skip one."""

    __slots__ = ("_at", "_lock", "_pieces", "bad", "lines", "objects", "values")

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces  # at most MAX_LINES complete lines
        self._at = 0
        self._lock = threading.Lock()
        self.values: list[Any] = []  # the lines parsed so far that parsed
        self.objects: list[dict[str, Any]] = []  # of which the objects
        self.lines = self.bad = 0  # non-blank lines parsed so far, and the bad ones

    def more(self) -> bool:
        """Parse on to the next line that parses; False when none is left."""
        with self._lock:
            return self._next()

    def _next(self) -> bool:
        # The cursor moves only once a line's value is in the lists: `done` is read without
        # the lock, and a reader that saw it move early took the lists one item short.
        pieces, at = self._pieces, self._at
        while at < len(pieces):
            piece = pieces[at]
            at += 1
            if not piece.strip():
                continue
            self.lines += 1
            value, error = parse_json(piece)
            if error is not None:
                self.bad += 1
                continue
            self.values.append(value)
            if isinstance(value, dict):
                self.objects.append(value)
            self._at = at
            return True
        self._at = at
        return False

    @property
    def done(self) -> bool:
        """Every line parsed, and its value in the lists (read without the lock)."""
        return self._at >= len(self._pieces)

    def all(self) -> Parsed:
        """Every line parsed."""
        while self.more():
            pass
        return self


class Lazy(Sequence[Any]):
    """`Parsed.values` or `Parsed.objects` as a sequence that parses only as far as it is read
    (iterating, indexing or slicing from the front, truth); `len` parses every line."""

    __slots__ = ("_items", "_parsed")

    def __init__(self, parsed: Parsed, items: list[Any]) -> None:
        self._parsed = parsed
        self._items = items

    def _reach(self, n: int) -> bool:
        """Parse until `n` items are known (or no line is left); are there `n`?"""
        items, more = self._items, self._parsed.more
        while len(items) < n:
            if not more():  # no line left, though another thread may have added the last
                return len(items) >= n
        return True

    def __iter__(self) -> Iterator[Any]:
        if self._parsed.done:  # every later test of a head: a plain list's iterator
            return iter(self._items)
        return self._parsing()

    def _parsing(self) -> Iterator[Any]:
        """The items known, a run at a time, then the next line parsed, and so on."""
        items, more, i = self._items, self._parsed.more, 0
        while True:
            n = len(items)
            if i < n:
                yield from items[i:n]
                i = n
            elif not more() and i >= len(items):  # another thread may have added the last
                return

    def __len__(self) -> int:
        self._parsed.all()
        return len(self._items)

    def __bool__(self) -> bool:
        return self._reach(1)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            front = (i.start or 0) >= 0 and i.stop is not None and i.stop >= 0
            if front and (i.step or 1) > 0:
                self._reach(i.stop)
            else:
                self._parsed.all()
        elif i >= 0:
            self._reach(i + 1)
        else:
            self._parsed.all()
        return self._items[i]


class HeadSample:
    """The parsed head of a file: its lines parsed as the formats' tests read them (a class
    with slots, not a frozen dataclass: defining one costs ~1 ms of every start-up)."""

    __slots__ = ("_parsed", "doc", "pretty", "text", "values")

    def __init__(self, parsed: Parsed, doc: Any, text: bytes, pretty: bool) -> None:
        self._parsed = parsed
        self.values = Lazy(parsed, parsed.values)  # every complete JSONL line that parsed
        self.doc = doc  # the whole head as one JSON value when it is a complete document
        self.text = text  # the raw head
        self.pretty = pretty  # the first line opens a pretty-printed document

    @property
    def lines(self) -> int:
        """Complete non-blank lines seen."""
        return self._parsed.all().lines

    @property
    def bad(self) -> int:
        """Complete non-blank lines that did not parse."""
        return self._parsed.all().bad

    @property
    def partial(self) -> bool:
        """The head ends inside its first record: only key patterns in the raw bytes are left.

        A pretty-printed document that did not parse, or JSONL with no complete line
        that parsed (one unterminated line longer than the head).
        """
        if self.pretty:
            return self.doc is None
        return not self.values and b"\n" not in self.text.rstrip()

    @property
    def objects(self) -> Sequence[dict[str, Any]]:
        """Parsed JSONL objects, or the document's messages/items when it is a document."""
        if self.values:
            return Lazy(self._parsed, self._parsed.objects)
        if isinstance(self.doc, dict):
            return [self.doc]
        return []


def read_head(
    fp: BinaryIO, *, minimum: int = HEAD_BYTES, records: int = MIN_RECORDS, cap: int = RECORD_CAP
) -> bytes:
    """The start of a stream, ending on whole records: what `detect` is given.

    The first `minimum` bytes, or more when they hold fewer than `records` complete
    non-blank lines: then up to the end of the `records`-th one. A pretty-printed
    document is one record, read to its end. Never more than `cap` bytes, and the
    same bytes however the stream splits its reads (a pipe, a decompressor).
    """
    chunks: list[bytes] = []
    size = complete = 0
    boundary = -1  # where the `records`-th complete line ends
    pending = False  # the current unterminated line has non-blank bytes
    pretty: bool | None = None
    want = minimum
    while size < cap:
        chunk = fp.read(min(want, cap - size))
        if not chunk:
            break
        offset = size
        chunks.append(chunk)
        size += len(chunk)
        if pretty is None:
            first = b"".join(chunks).split(b"\n", 1)
            if len(first) == 2 or size >= minimum:
                # a first line cut off by the read is never judged a split document
                pretty = (opens_document if len(first) == 2 else is_pretty_opener)(first[0])
        if pretty:
            want = max(minimum, min(size, 8 << 20))  # to the end: double, up to 8 MiB a read
            continue
        if boundary < 0:
            start = 0
            while (nl := chunk.find(b"\n", start)) >= 0:
                if pending or chunk[start:nl].strip():
                    complete += 1
                    if complete == records:
                        boundary = offset + nl + 1
                        break
                pending = False
                start = nl + 1
            else:
                pending = pending or bool(chunk[start:].strip())
        if size >= minimum and boundary >= 0:
            return b"".join(chunks)[: max(minimum, boundary)]
        want = max(minimum, min(size, 8 << 20))
    return b"".join(chunks)


@lru_cache(maxsize=4)  # heads may be megabytes; every format asks about the same one in a row
def sample(head: bytes) -> HeadSample:
    """Parse a head once for all formats."""
    end = head.find(b"\n")  # not `partition`: that copies the rest (a bomb's 32 MB)
    first, newline = (head, False) if end < 0 else (head[:end], True)
    pretty = is_pretty_opener(first)
    doc = None
    parsed = Parsed([])
    if not pretty and newline and opens_split_document(first):
        # a document split across lines is a document when it parses whole; else JSONL
        doc, error = parse_json(head)
        pretty = error is None
        if not pretty:
            doc = None
    if pretty:
        if doc is None:
            doc, error = parse_json(head)
            if error is not None:
                doc = None
    else:
        # Only the first MAX_LINES lines are looked at: never a list of every line (32 MB of
        # empty lines, a newline bomb's head, made a list of 32 million).
        cut = -1
        for _ in range(MAX_LINES):
            cut = head.find(b"\n", cut + 1)
            if cut < 0:
                break
        pieces = head.split(b"\n") if cut < 0 else head[:cut].split(b"\n")
        complete = pieces if len(pieces) == 1 else pieces[:-1]
        if cut >= 0:
            complete = pieces  # MAX_LINES complete lines; the rest is never looked at
        elif len(pieces) > 1 and pieces[-1].strip():
            _, error = parse_json(pieces[-1])
            if error is None:
                complete = pieces
        parsed = Parsed(complete[:MAX_LINES])  # parsed as the formats read them
        if len(complete) == 1 and parsed.more():
            doc = parsed.values[0]
    return HeadSample(parsed, doc, head, pretty)


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


def share(objects: Sequence[dict[str, Any]], test: Any) -> float:
    """Fraction of `objects` that pass `test` (0 when there are none)."""
    if not objects:
        return 0.0
    return sum(1 for o in objects if passes(test, o)) / len(objects)


def has_keys(text: bytes, *keys: str) -> bool:
    """Every `"key"` occurs in the raw bytes (evidence for a truncated document)."""
    return all(f'"{k}"'.encode() in text for k in keys)


#: thinkfix's own documents, by the key that tells them apart (all carry `tool: thinkfix`).
_OWN_KINDS = (
    ("reasoning", "repair sidecar"),
    ("files", "repair manifest"),
    ("summary", "report"),
    ("findings", "baseline"),
)
_SIDECAR_SUFFIX = ".thinkfix.json"


def own_document(head: bytes, path: str = "") -> str | None:
    """What a file thinkfix itself wrote is (`repair sidecar`, `baseline`, ...), else None.

    A folder that was repaired or scanned holds sidecars, a baseline and reports
    beside the sessions: they are ours, not unknown sessions. A sidecar too long to
    parse whole is still known by its name.
    """
    s = sample(head)
    for o in s.objects[:1]:
        tool = o.get("tool")
        name = tool.get("name") if isinstance(tool, dict) else tool
        if name == "thinkfix":
            return next((kind for key, kind in _OWN_KINDS if key in o), "file")
        if _sarif_driver(o) == "thinkfix":
            return "report"
    if s.partial and base_name(path).endswith(_SIDECAR_SUFFIX) and has_keys(head, "source"):
        return "repair sidecar"
    return None


def _sarif_driver(o: dict[str, Any]) -> Any:
    """The tool name of a SARIF log (`runs[0].tool.driver.name`), else None."""
    runs = o.get("runs")
    run = runs[0] if isinstance(runs, list) and runs and isinstance(runs[0], dict) else {}
    tool = run.get("tool")
    driver = tool.get("driver") if isinstance(tool, dict) else None
    return driver.get("name") if isinstance(driver, dict) else None
