"""Byte-level reading of a record's message count and models, for the scan hot path.

A format's `quick_messages` answers, from a line's bytes alone, what `checked_messages` would
find in it, so scan can count a clean assistant line without parsing or walking it. These
helpers are the pieces every answer is built from. Each answers only when the bytes prove it
(for a line as its runtime writes it: compact JSON, no escaped ASCII letters, the same rule
the readers' markers rely on) and says "unsure" (None) otherwise, so the record is parsed.
"""

from __future__ import annotations

import re


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


def one_object(raw: bytes) -> bool:
    """Does the line look like one compact JSON object (no surrounding whitespace) in UTF-8?

    The UTF-8 check is the one a parse would make that costs next to nothing here (an ASCII
    line passes at memory speed), so a line of broken text is still parsed and reported."""
    if raw[:1] != b"{" or raw[-1:] != b"}":
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
