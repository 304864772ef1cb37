"""Byte-level reading of a record's message count and models, for the scan hot path.

A format's `quick_messages` answers, from a line's bytes alone, what `checked_messages` would
find in it, so scan can count a clean assistant line without parsing or walking it. These
helpers are the pieces every answer is built from. Each answers only when the bytes prove it
(for a line as its runtime writes it: compact JSON, no escaped ASCII letters, the same rule
the readers' markers rely on) and says "unsure" (None) otherwise, so the record is parsed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from thinkfix.formats.linestructs import LineStructs


def one_model(raw: bytes) -> tuple[str | None] | None:
    """`(model,)` from the record's only `"model":"..."`, `(None,)` when no `"model"` occurs at
    all, and None (unsure) for anything else: two model keys, a non-string or escaped value,
    or the word elsewhere."""
    at = raw.find(b'"model"')
    if at < 0:
        return (None,)
    if raw.rfind(b'"model"') != at or raw[at + 7 : at + 9] != b':"':
        return None
    at += 9
    end = raw.find(b'"', at)
    value = raw[at:end]
    if end < 0 or b"\\" in value:
        return None
    try:
        return (value.decode(),)
    except UnicodeDecodeError:
        return None


#: What JSON text never holds raw: a control character (escaped in a string; a line's own
#: terminator is not part of it). Over many lines at once, one `in` each finds them at
#: memory speed (memchr; an int, not a one-byte `bytes`, which `in` first tries as an int,
#: raising and formatting a TypeError each time), where a regex class costs ~10
#: instructions a byte; in one line, `translate` to this table and one `in` (`json_text`).
CONTROLS = range(0x20)
_CONTROL_MAP = bytes(1 if byte in CONTROLS else 0 for byte in range(256))
#: A backslash that starts no escape JSON has (`\\q`, a `\\u` without four hex digits), read
#: from the first backslash of a run, whose pairs are escaped backslashes (`\\\\q` is JSON).
#: A lone surrogate's escape is JSON: the stdlib reads it where orjson does not
#: (`records.parse_json`).
BAD_ESCAPE = rb'\\(?<!\\\\)(?:\\\\)*(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4}))'


@lru_cache(maxsize=1)
def bad_escape() -> re.Pattern[bytes]:
    """`BAD_ESCAPE` compiled, on first use (a scan that reads no line from its bytes never)."""
    return re.compile(BAD_ESCAPE)


def json_text(raw: bytes) -> bool:
    """Could a JSON parser read these bytes character by character: no raw control byte, no
    backslash that starts no escape? A line counted from its bytes must be JSON: one that
    is not is parsed, and reported (never silently clean). Its structure is what the
    patterns and the tokens that count it prove, not this."""
    return 1 not in raw.translate(_CONTROL_MAP) and bad_escape().search(raw) is None


def one_object(raw: bytes) -> bool:
    """Does the line look like one compact JSON object (no surrounding whitespace) in UTF-8,
    with no character a parser refuses (`json_text`)?

    The UTF-8 check is the one a parse would make that costs next to nothing here (an ASCII
    line passes at memory speed), so a line of broken text is still parsed and reported."""
    if raw[:1] != b"{" or raw[-1:] != b"}" or not json_text(raw):
        return False
    if raw.isascii():
        return True
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True


def once(raw: bytes, needle: bytes) -> int:
    """Where the needle occurs in the line if it occurs exactly once, else -1 (one pass: the
    forward search stops at the first occurrence, the backward one at the last)."""
    at = raw.find(needle)
    return at if at >= 0 and raw.rfind(needle) == at else -1


def nested_message_model(raw: bytes) -> tuple[str | None] | None:
    """`one_model` of an entry that wraps its message as its one `"message":{...}` object
    (Claude Code's and pi's lines); None (unsure) when that key is missing, repeated, or not
    an object."""
    at = once(raw, b'"message":')
    if at < 0 or raw[at + 10 : at + 11] != b"{":
        return None
    return one_model(raw)


# Where any of `trend.TIME_KEYS` may start (each begins `time` or `created`).
_TIME_KEY = re.compile(rb'"(?:time|created)')
# An ISO time in UTC as the runtimes write it (`2026-03-02T10:21:19.004Z`): its day is its
# date, so a caller may read the day from the first ten characters.
_UTC_TIME = re.compile(
    rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z"
)


def record_time(raw: bytes) -> str | None:
    """The ISO UTC `"timestamp"` that `trend.message_time` would read for every message of the
    record, from its bytes alone; None (unsure) for anything but the runtimes' own shape.

    It answers only when the line's one time key of any level (`trend.TIME_KEYS` all begin
    `time` or `created`) is a `"timestamp"` member of the record itself, so no message object
    has a stamp of its own: the record's last member, or one with no object before it
    (Claude Code writes it last, Codex first, pi among the first). An escape that could
    spell a key (`\\u00..`), a second time key (pi's message `timestamp` in ms, a tool's
    argument), an escaped or non-UTC value, or a key behind a nested object is unsure."""
    key = _TIME_KEY.search(raw)
    if key is None:
        return None
    at = key.start()
    end = raw.find(b'"', at + 13)
    if (
        raw[at : at + 13] != b'"timestamp":"'
        or end < 0
        or _TIME_KEY.search(raw, end) is not None
        or b"\\u00" in raw
        or _UTC_TIME.fullmatch(raw, at + 13, end) is None
    ):
        return None
    # A member of the record itself: its last (`,"timestamp":"…"}`), or one that no object
    # opens before (a key is nested only inside an object; a brace in a string before it
    # only makes this unsure). The quote before the key is not an escaped one.
    if raw[at - 1] not in b",{" or raw[0] != 123:
        return None
    last = end == len(raw) - 2 and raw[-1] == 125
    if not last and raw.find(b"{", 1, at) >= 0:
        return None
    return raw[at + 13 : end].decode()


# --- a whole assistant line, as its runtime writes it (the scan's block counter) ----------------

#: Words a key or a plain value of a canonical line's fixed parts may not start with: what the
#: block counter looks for in its free parts (`engine.scan.survey.TAIL_TOKENS`).
_NOT_A_TOKEN = rb'(?!assistant"|model"|time|created)'
#: A plain string: printable ASCII without escape or brace, and none of those words.
STRING = rb'"' + _NOT_A_TOKEN + rb'[^"\\{\x00-\x1f\x80-\xff]*"'
#: A plain member's value: a plain string or a literal.
PLAIN = rb"(?:" + STRING + rb"|null|true|false|-?[0-9]+)"
#: A plain member's key.
KEY = rb'"(?!type"|timestamp"|message"|model"|time|created|assistant")[A-Za-z_]+"'


#: Any run of bytes, newlines too, for a free part: the pattern is matched with its window
#: ending just past the line's newline (`Canonical`), which no free part can reach past,
#: since a fixed byte must follow each. `re` takes such a repeat to the window's end in one
#: step and backtracks from there; `[^\n]*` tests every byte on the way (14% of a Claude
#: Code line's match, 30% of a pi line's).
FREE = rb"(?s:.*)"


def tail(group: bytes, then: bytes) -> bytes:
    """A free part of the line (`FREE`) and the one fixed byte `then` after it, both in the
    named group (`engine.scan.survey` drops that byte). The byte belongs in the group: sre
    backtracks a repeat that a literal follows at once with a tight scan for that byte, but
    one that a group's end follows through its whole engine, byte by byte (pi's lines, whose
    model follows the content: 6.6 -> 4.1 µs a match)."""
    return rb"(?P<" + group + rb">" + FREE + then + b")"


def iso_stamp(group: bytes = b"date") -> bytes:
    """`"timestamp":"YYYY-MM-DDThh:mm:ss[.f]Z"` as `engine.scan.survey` reads it (years
    1971-2099), the date in the named group."""
    return (
        rb'"timestamp":"(?P<' + group + rb">(?:19[7-9][0-9]|20[0-9]{2})-[0-9]{2}-[0-9]{2})"
        rb'T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z"'
    )


def model_name(group: bytes = b"model") -> bytes:
    """A model name: a non-empty printable ASCII string without escapes, in the named group."""
    return rb'"(?P<' + group + rb">[\x20\x21\x23-\x5b\x5d-\x7e]+)" + b'"'


#: `"timestamp":<milliseconds>` as `engine.scan.survey` reads it, in a group named `ms`.
MS_STAMP = rb'"timestamp":(?P<ms>[1-9][0-9]{11,12})(?=[,}])'


class Canonical:
    """An assistant line as its runtime writes it, for the scan's block counter
    (`engine.scan.survey`). `source` matches such a line from the newline before it to just
    before the newline after it, searched in a window that ends just past that newline (a
    free part, `FREE`, stops at the window's end, not at a newline): fixed parts (keys and `PLAIN` values, ASCII, none spelling
    a token the counter looks for), the message's model in a group named `model…` (none for
    a format whose model is the context's), its time keys in groups named `date…` (an
    `iso_stamp`) and optionally `ms` (`MS_STAMP`), and free parts in groups named `tail…`
    (`tail`: each with the fixed byte after it).
    Its fixed parts hold exactly what the format's `quick_messages` needs to count the line
    as one message of that model, and `survey.record_day` to date it by those stamps, once
    the free parts hold no `bulk.TAIL_TOKENS` and are UTF-8 (tests/engine/test_bulk.py).
    Compiled on first use: a scan that never reaches the format pays nothing at start-up."""

    __slots__ = ("_pattern", "content", "source", "structs")

    def __init__(
        self, source: bytes, content: tuple[str, bool], structs: LineStructs | None = None
    ) -> None:
        self.source = source
        # the same lines decoded (`formats.linestructs`): the counter's faster proof
        self.structs = structs
        # Where the line's message object is, and whether its `content` may be a string: a
        # line counted from its bytes must also hold parts of the shapes its reader reads
        # (`io.jsoncheck.not_json`; `formats.values`: typed parts, texts that are strings).
        self.content = content
        self._pattern: re.Pattern[bytes] | None = None

    @property
    def pattern(self) -> re.Pattern[bytes]:
        if self._pattern is None:
            self._pattern = re.compile(self.source)
        return self._pattern
