"""The tag grammar: which byte sequences are reasoning delimiters, compiled once per policy.

Every delimiter family becomes one alternative of a single compiled regex, so
finding the next candidate is one C-level search. Nothing here has nested
unbounded quantifiers: attribute text is capped, so hostile input such as a
10 MB run of `<think` cannot make a search backtrack quadratically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from thinkfix.normalizer.policy import ANSWER_WRAPPERS, PROSE_PAIRS, Policy

MAX_ATTRS = 256  # characters of attribute text allowed on an XML-style opener
CONTEXT = 8  # characters kept before the scan position for look-behind checks

HARMONY_CHANNELS = ("analysis", "final", "commentary")
HARMONY_MARKERS = ("<|start|>assistant", "<|end|>", "<|return|>", "<|call|>")
HARMONY_CLOSERS = ("<|end|>", "<|return|>", "<|call|>")
DETOK_OPEN = "analysis"
DETOK_CLOSE = "assistantfinal"


class Kind(Enum):
    OPEN = "open"
    CLOSE = "close"
    EMPTY = "empty"  # <think/>: an empty block in one token
    MARKER = "marker"  # removed wherever it stands, content around it kept
    VISIBLE_HEADER = "visible_header"  # harmony final/commentary: a marker outside a block, a close inside
    END = "end"  # harmony <|end|>-style: a close inside a block, a marker outside
    FENCE = "fence"
    TICKS = "ticks"


@dataclass(frozen=True)
class Token:
    kind: Kind
    start: int
    end: int
    tag: str  # canonical spelling for reports, e.g. "<think>", "</thinking>", "[THINK]"
    xml: bool = False  # XML-style names obey the prose rules; special tokens never do


_WS = r"[ \t\r\n]*"


@dataclass(frozen=True)
class _Literal:
    text: str
    kind: Kind
    tag: str


class Grammar:
    """The compiled delimiter grammar of one policy."""

    def __init__(self, policy: Policy) -> None:
        literals: list[_Literal] = []
        for family, opener, closer in policy.special_pairs:
            literals.append(_Literal(opener, Kind.OPEN, opener))
            literals.append(_Literal(closer, Kind.CLOSE, closer))
        if policy.special_pairs:
            literals.extend(_Literal(w, Kind.MARKER, w) for w in ANSWER_WRAPPERS)
        if policy.prose_delimiters:
            for opener, closer in PROSE_PAIRS:
                literals.append(_Literal(opener, Kind.OPEN, opener))
                literals.append(_Literal(closer, Kind.CLOSE, closer))
        if policy.harmony:
            for prefix in ("<|start|>assistant", ""):
                for channel in HARMONY_CHANNELS:
                    text = f"{prefix}<|channel|>{channel}<|message|>"
                    kind = Kind.OPEN if channel == "analysis" else Kind.VISIBLE_HEADER
                    literals.append(_Literal(text, kind, f"<|channel|>{channel}"))
            literals.extend(
                _Literal(m, Kind.END if m in HARMONY_CLOSERS else Kind.MARKER, m)
                for m in HARMONY_MARKERS
            )
        # Longest first, so a header wins over the bare `<|start|>assistant` marker.
        literals.sort(key=lambda lit: -len(lit.text))
        self.literals: dict[str, _Literal] = {lit.text: lit for lit in literals}
        self.harmony = policy.harmony
        self.tags = policy.tags

        delimiter_parts: list[str] = []
        if policy.tags:
            names = "|".join(re.escape(t) for t in policy.tags)
            delimiter_parts.append(
                rf"(?P<xml><{_WS}(?P<slash>/)?{_WS}(?P<name>(?i:{names}))"
                rf"(?:[ \t\r\n/][^<>]{{0,{MAX_ATTRS}}}?)?>)"
            )
        if literals:
            delimiter_parts.append(
                "(?P<lit>" + "|".join(re.escape(lit.text) for lit in literals) + ")"
            )
        code_parts = [r"(?P<fence>(?<=\n)[ ]{0,3}(?:`{3,}|~{3,}))", r"(?P<ticks>`+)"]
        never = r"(?!x)x"
        self.prefilter = re.compile("|".join(delimiter_parts) or never)
        parts = (code_parts if policy.protect_code else []) + delimiter_parts
        self.pattern = re.compile("|".join(parts) or never)
        self.max_token = max([len(lit.text) for lit in literals] + [MAX_ATTRS + 64])
        starts = {"<"} | {lit.text[0] for lit in literals}
        if policy.protect_code:
            starts |= {"`", "~", "\n"}
        self._partial_starts = re.compile("[" + "".join(re.escape(c) for c in sorted(starts)) + "]")
        self._xml_partial = re.compile(
            rf"<{_WS}(?:/{_WS})?(?P<name>[A-Za-z]*)(?P<rest>[^<>]*)\Z"
        )

    def token(self, m: re.Match[str], offset: int) -> Token:
        """The token a match of `pattern` stands for; `offset` maps window to text positions."""
        start, end = m.start() + offset, m.end() + offset
        group = m.lastgroup
        if group == "xml":
            name = m.group("name").lower()
            if m.group("slash"):
                return Token(Kind.CLOSE, start, end, f"</{name}>", xml=True)
            inner = m.group("xml")[1:-1].rstrip(" \t\r\n")
            if inner.endswith("/"):
                return Token(Kind.EMPTY, start, end, f"<{name}/>", xml=True)
            return Token(Kind.OPEN, start, end, f"<{name}>", xml=True)
        if group == "lit":
            lit = self.literals[m.group("lit")]
            return Token(lit.kind, start, end, lit.tag)
        if group == "fence":
            return Token(Kind.FENCE, start, end, m.group("fence").lstrip(" "))
        return Token(Kind.TICKS, start, end, m.group("ticks"))

    def partial_start(self, window: str, lo: int) -> int | None:
        """Where, at or after `lo`, an incomplete delimiter may begin at the end of `window`."""
        lo = max(lo, len(window) - self.max_token)
        for m in self._partial_starts.finditer(window, lo):
            if self._could_grow(window, m.start()):
                return m.start()
        return None

    def _could_grow(self, window: str, i: int) -> bool:
        tail = window[i:]
        first = tail[0]
        if first == "\n":
            return len(tail) <= 4 and tail[1:].strip(" ") == ""
        if first in "`~":
            return tail.strip(first) == ""
        if any(len(text) > len(tail) and text.startswith(tail) for text in self.literals):
            return True
        if first == "<" and self.tags:
            m = self._xml_partial.match(tail)
            if m is None:
                return False
            name, rest = m.group("name").lower(), m.group("rest")
            if not rest:
                return any(t.startswith(name) for t in self.tags)
            return name in self.tags and rest[0] in " \t\r\n/" and len(rest) <= MAX_ATTRS
        return False


@lru_cache(maxsize=64)
def grammar_for(policy: Policy) -> Grammar:
    """The compiled grammar of a policy (policies are frozen, so this caches well)."""
    return Grammar(policy)
