"""Byte-level reading of a record's message count and models, for the scan hot path.

A format's `quick_messages` answers, from a line's bytes alone, what `checked_messages` would
find in it, so scan can count a clean assistant line without parsing or walking it. These
helpers are the pieces every answer is built from. Each answers only when the bytes prove it
(for a line as its runtime writes it: compact JSON, no escaped ASCII letters, the same rule
the readers' markers rely on) and says "unsure" (None) otherwise, so the record is parsed.
"""

from __future__ import annotations


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
