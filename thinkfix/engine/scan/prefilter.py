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
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache

from thinkfix.normalizer.grammar import DETOK_OPEN, Kind, grammar_for
from thinkfix.normalizer.policy import Policy

RawTest = Callable[[bytes], bool]

# Characters a JSON encoder may escape even though it need not.
_ESCAPABLE = frozenset("\"\\/<>&'")
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
        return (
            rb"(?:"
            + re.escape(char.encode())
            + rb"|\\"
            + re.escape(char.encode())
            + rb"|\\u(?i:"
            + f"{ord(char):04x}".encode()
            + rb"))"
        )
    if ord(char) < 128:
        return re.escape(char.encode())
    code = f"{ord(char):04x}"
    return rb"(?:" + re.escape(char.encode()) + rb"|\\u(?i:" + code.encode() + rb"))"


def _verbatim(ch: str) -> bool:
    """Whether no encoder escapes `ch`: where it is in a string, it is in the bytes."""
    return ord(ch) < 128 and ch not in _ESCAPABLE and ch.isprintable()


def _safe_run(text: str) -> str:
    """The longest piece of `text` no encoder escapes: it appears verbatim in the bytes."""
    best, run = "", ""
    for ch in text:
        if _verbatim(ch):
            run += ch
            best = max(best, run, key=len)
        else:
            run = ""
    return best


#: A piece of a check: a regex, or a literal's text, spelled as JSON may write it when the
#: check is first needed.
_Piece = bytes | str


class _Check:
    """An anchor's regex, spelled and compiled the first time its anchor is found: most anchors
    (`[THINK]`, `◁`, Harmony's markers) occur in no clean session, and spelling every literal
    in every way an encoder may write it (~350 characters) and compiling the checks cost a
    few ms of each start-up (#13, #26 item 3)."""

    __slots__ = ("_around", "_pattern", "_pieces", "_source")

    def __init__(self, pieces: list[_Piece], around: tuple[bytes, bytes] = (b"", b"")) -> None:
        self._pieces = pieces  # the alternatives
        self._around = around  # what stands before and after them
        self._source: bytes | None = None
        self._pattern: re.Pattern[bytes] | None = None

    @property
    def source(self) -> bytes:
        if self._source is None:
            spelled = (p if isinstance(p, bytes) else _spelled(p) for p in self._pieces)
            head, tail = self._around
            self._source = head + b"|".join(dict.fromkeys(spelled)) + tail
        return self._source

    @property
    def pattern(self) -> re.Pattern[bytes]:
        if self._pattern is None:
            self._pattern = re.compile(self.source)
        return self._pattern


def _spelled(text: str) -> bytes:
    """Regex for `text` as it may appear inside a JSON string."""
    return b"".join(_encoded(c) for c in text)


@lru_cache(maxsize=16)
def _compile(policy: Policy) -> tuple[tuple[bytes, _Check | None], ...]:
    grammar = grammar_for(policy)
    stages: dict[bytes, tuple[list[_Piece], tuple[bytes, bytes]] | None] = {}

    def add(anchor: bytes, check: _Piece | None, around: tuple[bytes, bytes] = (b"", b"")) -> None:
        if check is None:
            stages[anchor] = None
        elif anchor not in stages:
            stages[anchor] = ([check], around)
        elif (stage := stages[anchor]) is not None:
            stage[0].append(check)

    # What may follow `<`, one factored regex per anchor: a literal whose second character
    # is written verbatim (`<|channel|>`, `<seed:think>`) is anchored on both, so the `<` of
    # a clean session's code compiles only the check of the tag names and the `</...`
    # literals (3.4 M instructions, where one check of them all cost 9.9 M: #26 item 3,
    # start-up). A record still matches where `<` and one alternative follow, as before.
    after_lt: dict[bytes, list[_Piece]] = {b"<": []}
    if policy.tags:
        names = b"|".join(re.escape(t.encode()) for t in sorted(policy.tags, key=len))
        after_lt[b"<"].append(_RAW_WS + _SLASH + b"?" + _RAW_WS + b"(?i:" + names + b")")
    escapes = [_ASCII_ESCAPE]
    for text, literal in grammar.literals.items():
        if literal.kind is Kind.TOOL_CALL:
            continue  # never a finding on its own: it only ends a template-opened block
        first = text[0]
        if ord(first) >= 128:
            add(first.encode(), None)
            escapes.append(f"(?i:{ord(first):04x})".encode())
        elif first == "<":
            lead = "<" + text[1] if len(text) > 1 and _verbatim(text[1]) else "<"
            after_lt.setdefault(lead.encode(), []).append(text[1:12])
        else:
            run = _safe_run(text)
            add(run.encode() if run else first.encode(), None if run else text)
    for anchor, follows in after_lt.items():
        for follow in follows:
            add(anchor, follow, (b"<(?:", b")"))
    add(b"\\u", rb"\\u(?:" + b"|".join(dict.fromkeys(escapes)) + rb")")
    if policy.harmony:
        add(DETOK_OPEN.encode(), _LEADING_SPACE + re.escape(DETOK_OPEN.encode()))
    # An anchor that contains another check-free anchor adds nothing (`[THINK]` vs `THINK]`).
    free = [a for a, stage in stages.items() if stage is None]
    return tuple(
        (anchor, None if stage is None else _Check(*stage))
        for anchor, stage in stages.items()
        if not any(other != anchor and other in anchor for other in free)
    )


def delimiter_test(policy: Policy) -> RawTest:
    """`test(raw) -> bool`: False only when no delimiter can occur in any string of `raw`."""
    stages = _compile(policy)

    def may_contain(raw: bytes) -> bool:
        for anchor, check in stages:
            if anchor in raw and (check is None or check.pattern.search(raw) is not None):
                return True
        return False

    return may_contain


#: Joins records for the batch test: a raw control byte never occurs in JSON text, and no
#: check pattern matches it, so nothing can match across two records.
SEPARATOR = b"\x00"


def delimiter_hits(policy: Policy) -> Callable[[bytes, list[int]], set[int]]:
    """`hits(joined, starts) -> indices` of the records, joined by `SEPARATOR` and starting
    at `starts`, that may contain a delimiter (`delimiter_candidates` on records already
    joined: the block counter joins its lines once for all its checks)."""
    stages = _compile(policy)
    # The anchors `<` and a second character (`<|`, `<s`: the literals', #26 item 3) are found
    # together: one regex pass names those present, where a `not in` test of each cost a
    # scan of the text apiece (the pure delimiter test over the dense corpus's assistant
    # lines: 0.150 s with one `<` anchor, 0.374 s with seven, 0.16 s so).
    pairs = [a for a, _ in stages if len(a) == 2 and a[:1] == b"<"]
    follows = b"<([" + re.escape(b"".join(a[1:] for a in pairs)) + b"])"  # compiled if asked

    def hits_in(joined: bytes, starts: list[int]) -> set[int]:
        hits: set[int] = set()
        count = len(starts)
        present: set[bytes] | None = None  # the `<X` anchors in `joined`, once asked
        for anchor, check in stages:
            if anchor in pairs:
                if present is None:
                    present = {b"<" + x for x in set(re.findall(follows, joined))}
                if anchor not in present:
                    continue
            # A non-ASCII anchor's last byte is a UTF-8 continuation byte: rare in mostly
            # ASCII text and found at memchr speed, so it rules the anchor out cheaply.
            elif anchor[-1] >= 0x80 and anchor[-1:] not in joined or anchor not in joined:
                continue
            if check is None:
                find, pos = joined.find, joined.find(anchor)
                while pos >= 0:
                    i = bisect_right(starts, pos) - 1
                    hits.add(i)
                    pos = find(anchor, starts[i + 1] if i + 1 < count else len(joined))
            else:
                for m in check.pattern.finditer(joined):
                    hits.add(bisect_right(starts, m.start()) - 1)
            if len(hits) == count:
                break
        return hits

    return hits_in


def delimiter_sources(policy: Policy) -> tuple[bytes, ...]:
    """The delimiter test as regex sources, one per anchor (its check, or the anchor itself):
    a record may contain a delimiter exactly where one of them matches in it. For a matcher
    that runs them all in one pass (`native.piece_hits`, the block counter's native checks);
    none matches `SEPARATOR`."""
    return tuple(
        re.escape(anchor) if check is None else check.source for anchor, check in _compile(policy)
    )


def delimiter_candidates(policy: Policy) -> Callable[[Sequence[bytes]], set[int]]:
    """`test(raws) -> indices` of the records that may contain a delimiter.

    The same answer as `delimiter_test` record by record, computed on the records joined
    into one buffer: each anchor is one C-level search over all of them instead of one
    call per record, which is what costs when most records hold no anchor at all.
    """
    hits_in = delimiter_hits(policy)

    def candidates(raws: Sequence[bytes]) -> set[int]:
        if not raws:
            return set()
        starts: list[int] = []
        at = 0
        for raw in raws:
            starts.append(at)
            at += len(raw) + 1
        return hits_in(SEPARATOR.join(raws), starts)

    return candidates
