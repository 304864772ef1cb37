"""Byte-level tests on raw records, so scan parses only the lines that can matter.

Parsing every line is the floor a scan is measured against; a line that cannot
hold a delimiter and cannot hold an assistant message needs no parsing at all.
Both tests here are necessary conditions checked at C speed (`bytes in`,
compiled regexes): a False answer is a proof, a True one only a maybe.

The delimiter test reads JSON-encoded bytes, so it accepts every way a
serializer may spell a delimiter: `\\/` for `/`, `\\n`/`\\t` for whitespace
inside a tag, `\\uXXXX` for non-ASCII (`◁`), and any `\\u00XX` escape of printable
ASCII (Go and HTML-safe encoders write `<` as `\\u003c`), which always counts as a
maybe. A doubly escaped `\\\\u003c` contains `\\u003c` and so counts too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from thinkfix.normalizer.grammar import DETOK_OPEN, grammar_for
from thinkfix.normalizer.policy import Policy

RawTest = Callable[[bytes], bool]

# Characters a JSON encoder may escape even though it need not.
_ESCAPABLE = frozenset('"\\/<>&\'')
# Whitespace inside a tag, as raw JSON bytes (control characters are always escaped in JSON).
_RAW_WS = rb"(?:[ \t\r\n]|\\[trn])*"
_SLASH = rb"(?:/|\\/)"
# A `\uXXXX` escape of printable ASCII, or of a non-ASCII character a literal starts with.
_ASCII_ESCAPE = rb"00[2-7][0-9a-fA-F]"
# What may stand before the detokenised Harmony `analysis` at the start of a string.
_LEADING_SPACE = rb'"(?:[ \t\r\n\x80-\xff]|\\[trnbf]|\\u[0-9a-fA-F]{4})*'

def _encoded(char: str) -> bytes:
    """Regex for one character as it may appear inside a JSON string."""
    if char == "/":
        return _SLASH
    if char in _ESCAPABLE:
        return (rb"(?:" + re.escape(char.encode()) + rb"|\\" + re.escape(char.encode())
                + rb"|\\u(?i:" + f"{ord(char):04x}".encode() + rb"))")
    if ord(char) < 128:
        return re.escape(char.encode())
    code = f"{ord(char):04x}"
    return rb"(?:" + re.escape(char.encode()) + rb"|\\u(?i:" + code.encode() + rb"))"


def _safe_run(text: str) -> str:
    """The longest piece of `text` no encoder escapes: it appears verbatim in the bytes."""
    best, run = "", ""
    for ch in text:
        if ord(ch) < 128 and ch not in _ESCAPABLE and ch.isprintable():
            run += ch
            best = max(best, run, key=len)
        else:
            run = ""
    return best


@lru_cache(maxsize=16)
def _compile(policy: Policy) -> tuple[tuple[bytes, re.Pattern[bytes] | None], ...]:
    grammar = grammar_for(policy)
    stages: dict[bytes, list[bytes] | None] = {}

    def add(anchor: bytes, check: bytes | None) -> None:
        if check is None:
            stages[anchor] = None
        elif stages.get(anchor, []) is not None:
            stages.setdefault(anchor, []).append(check)  # type: ignore[union-attr]

    after_lt: list[bytes] = []  # what may follow `<`, one factored regex
    if policy.tags:
        names = b"|".join(re.escape(t.encode()) for t in sorted(policy.tags, key=len))
        after_lt.append(_RAW_WS + _SLASH + b"?" + _RAW_WS + b"(?i:" + names + b")")
    escapes = [_ASCII_ESCAPE]
    for text in grammar.literals:
        first = text[0]
        if ord(first) >= 128:
            add(first.encode(), None)
            escapes.append(f"(?i:{ord(first):04x})".encode())
        elif first == "<":
            after_lt.append(b"".join(_encoded(c) for c in text[1:12]))
        else:
            run = _safe_run(text)
            add(run.encode() if run else first.encode(), None if run else
                b"".join(_encoded(c) for c in text))
    if after_lt:
        add(b"<", b"<(?:" + b"|".join(dict.fromkeys(after_lt)) + b")")
    add(b"\\u", rb"\\u(?:" + b"|".join(dict.fromkeys(escapes)) + rb")")
    if policy.harmony:
        add(DETOK_OPEN.encode(), _LEADING_SPACE + re.escape(DETOK_OPEN.encode()))
    return tuple((anchor, None if checks is None else re.compile(b"|".join(checks)))
                 for anchor, checks in stages.items())


def delimiter_test(policy: Policy) -> RawTest:
    """`test(raw) -> bool`: False only when no delimiter can occur in any string of `raw`."""
    stages = _compile(policy)

    def may_contain(raw: bytes) -> bool:
        for anchor, check in stages:
            if anchor in raw and (check is None or check.search(raw) is not None):
                return True
        return False

    return may_contain
