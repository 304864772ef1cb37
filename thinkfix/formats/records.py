"""A stored session's records and the texts in them: each record keeps its original bytes and is parsed only when asked (`Record`), with the parse context a format carries between records (`Context`) and the limit past which a record is never parsed (`set_record_limit`, `too_large`); a `Site` is one assistant-visible text, located well enough to find it again."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # annotations only: a scan needs no transcript types
    from typing import NamedTuple

    from thinkfix.formats.turns import Path
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

_MISSING: Any = object()

#: Records longer than this are never parsed: reported as too large and copied through
#: untouched, so one huge line cannot cost many times its size in parsed objects. The
#: engine sets it per file from `--max-record-size` (`set_record_limit`).
#: Keys that hold a record's or message's time, most specific first (`engine.scan.trend` reads
#: them; `formats.linestructs` decodes them).
TIME_KEYS = (
    "timestamp",
    "timestamp_ms",
    "created_at",
    "createdAt",
    "created_at_ms",
    "created",
    "time",
)

DEFAULT_RECORD_LIMIT = 64 << 20
_limit = [DEFAULT_RECORD_LIMIT]
TOO_LARGE = "too large"  # how a too-large record's error begins


def set_record_limit(limit: int) -> None:
    """The largest record (in bytes) parsed from now on in this process (0: no limit)."""
    _limit[0] = limit


def record_limit() -> int:
    return _limit[0]


def too_large(size: int, limit: int) -> str:
    """The error of a record past the limit: what happened, and the knob that moves it."""
    return (
        f"{TOO_LARGE}: a record of {size:,} bytes is over the {limit:,}-byte limit "
        "(--max-record-size); not parsed, copied through untouched"
    )


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def parse_json(raw: bytes, *, last: bool = False) -> tuple[Any, str | None]:
    """Parse one record: (value, None) or (None, why it is not JSON).

    orjson first (the hot path); the stdlib parser is the fallback for valid
    JSON orjson refuses (lone surrogate escapes, a leading BOM, NaN written by
    Python). `last` says the bytes had no line terminator, which is how a
    truncated final line is told apart from plain garbage.
    """
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: invalid byte at offset {exc.start}"
    body = text.removeprefix("\ufeff")
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(body.rstrip()) or exc.msg.startswith("Unterminated string")
        if at_end and body.strip():
            return None, f"truncated: {exc.msg} at offset {exc.pos}" + (
                "" if last else " (line ends early)"
            )
        return None, f"not JSON: {exc.msg} at offset {exc.pos}"
    except RecursionError:
        return None, "not JSON: nested too deeply"


# Context and Site are NamedTuples, not frozen dataclasses: every scan loads them, and a
# dataclass costs ~1 ms of every start-up to define (#26 item 3); a site is also built
# for each text examined, which a NamedTuple does in a quarter of the time.


class Context(NamedTuple):
    """What a record needs from earlier records of its file (header, turn settings).

    Readers attach a snapshot to every record, so `sites(record)` stays a
    function of one record even for formats whose session id or model lives in
    a header line. `extra` holds format-specific facts.
    """

    session_id: str | None = None
    model: str | None = None
    extra: Mapping[str, Any] = _EMPTY


EMPTY_CONTEXT = Context()


class Record:
    """One unit of a file: a JSONL line, or the whole document of a `.json` file.

    `raw` is the original bytes without the line terminator (`eol`), so an
    untouched record is written back as `raw + eol`. `data` is parsed lazily on
    first access, so a caller can skip parsing records whose bytes cannot
    matter. `error` says why the record could not be parsed (not UTF-8, not
    JSON, truncated, or a JSON value of a shape the format does not know); such
    a record is passed through untouched.
    """

    __slots__ = (
        "_data",
        "_error",
        "_shapes",
        "ctx",
        "eol",
        "index",
        "inserted",
        "line",
        "raw",
        "touched",
        "walked",
    )

    def __init__(
        self,
        index: int,
        line: int,
        raw: bytes,
        eol: bytes = b"",
        ctx: Context = EMPTY_CONTEXT,
        shapes: tuple[type, ...] = (dict,),
        data: Any = _MISSING,
        error: str | None = None,
        touched: bool = False,
        inserted: bool = False,
    ) -> None:
        self.index = index
        self.line = line
        self.raw = raw
        self.eol = eol
        self.ctx = ctx
        self.touched = touched  # its bytes differ from what was read
        self.inserted = inserted  # added by apply (codex reasoning lines); implies touched
        self._shapes = shapes
        self._data = data
        self._error = error
        # (format, with texts, its messages): the last walk of this record's messages, which
        # a scan asks for twice (to count, then for the sites): `FormatBase.checked_messages`
        self.walked: tuple[object, bool, list[Any]] | None = None

    def _parse(self) -> None:
        limit = _limit[0]
        if limit and len(self.raw) > limit:
            self._data, self._error = None, too_large(len(self.raw), limit)
            return
        if not self.raw.strip():
            self._data, self._error = None, None
            return
        data, error = parse_json(self.raw, last=not self.eol)
        if error is None and self._shapes and not isinstance(data, self._shapes):
            error = f"unknown shape: a JSON {type(data).__name__} where this format has objects"
        self._data, self._error = data, error

    @property
    def data(self) -> Any:
        """The parsed JSON value (None for a blank or unparseable record)."""
        if self._data is _MISSING:
            self._parse()
        return self._data

    @property
    def error(self) -> str | None:
        """Why this record cannot be used, or None."""
        if self._data is _MISSING:
            self._parse()
        return self._error

    def moved(self, index: int, line: int) -> "Record":
        """The same record at another position (records were inserted before it)."""
        return Record(
            index,
            line,
            self.raw,
            self.eol,
            ctx=self.ctx,
            shapes=self._shapes,
            data=self._data,
            error=self._error,
            touched=self.touched,
            inserted=self.inserted,
        )

    def reject(self, reason: str) -> None:
        """Mark a record unusable because a field holds a value of a type its format does not
        expect: the format's code raised on it. Like a JSON value of an unknown shape, it is
        reported and copied through untouched, never an exception that ends a run."""
        if self._data is _MISSING:
            self._parse()
        if self._error is None:
            self._error = f"unknown shape: {reason}"

    @property
    def blank(self) -> bool:
        """A whitespace-only line: neither data nor an error (a record too large to keep has
        no bytes either, but it has its error)."""
        return not self.raw.strip() and self._error is None

    @property
    def obj(self) -> dict[str, Any] | None:
        """`data` when it is a JSON object and the record is sound, else None."""
        data = self.data
        return data if self._error is None and isinstance(data, dict) else None

    def __repr__(self) -> str:
        return f"Record(index={self.index}, line={self.line}, raw={self.raw[:60]!r}...)"


class Site(NamedTuple):
    """One assistant-visible text, located well enough to find it again.

    `path` is the machine form of `json_path` (keys and list indices from the
    record's root). `signed` marks text that carries a provider signature
    (a Gemini part with `thoughtSignature`): report it, never modify it.
    `message_index` is the message's position: the record index for JSONL
    formats, the index in the messages array for whole-document formats.
    `followed_by_tool_call` marks text with a tool call after it in the same message.
    """

    record_index: int
    line: int
    json_path: str
    text: str
    native_reasoning: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    message_index: int = 0
    model: str | None = None
    signed: bool = False
    path: "Path" = ()
    # a tool call follows the text in its message: rule 4's evidence, passed to `normalize`
    followed_by_tool_call: bool = False
