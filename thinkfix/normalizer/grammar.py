"""The tag grammar: which byte sequences are reasoning delimiters, compiled once per policy.

Every delimiter family becomes one alternative of a single compiled regex, so
finding the next candidate is one C-level search. Nothing here has nested
unbounded quantifiers: attribute text is capped, so hostile input such as a
10 MB run of `<think` cannot make a search backtrack quadratically.
"""

import re
import sys
from collections.abc import Callable
from enum import Enum
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from thinkfix.normalizer.policy import ANSWER_WRAPPERS, PROSE_PAIRS, Policy
from thinkfix.normalizer.probes import Probes

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

MAX_ATTRS = 256  # characters of attribute text allowed on an XML-style opener
CONTEXT = 8  # characters kept before the scan position for look-behind checks

HARMONY_CHANNELS = ("analysis", "final", "commentary")
HARMONY_MARKERS = ("<|start|>assistant", "<|end|>", "<|return|>", "<|call|>")
HARMONY_CLOSERS = ("<|end|>", "<|return|>", "<|call|>")
DETOK_OPEN = "analysis"
DETOK_CLOSE = "assistantfinal"
# Harmony's tool call: `<|channel|>commentary to=functions.x [<|constrain|>json]<|message|>`.
# The message is the call, not answer text (vLLM's `harmony_utils.parse_chat_output` puts
# every message before the final one in the reasoning); its end is a Harmony closer.
CALL_PREFIX = "<|channel|>commentary to="
_CALL_BODY = r"[^<>\n]{1,128}(?:<\|constrain\|>[^<>\n]{0,64})?"
_CALL_SOURCE = re.escape(CALL_PREFIX[1:]) + _CALL_BODY + re.escape("<|message|>")
CALL_TAG = "<|channel|>commentary"  # a call token's tag, whoever the recipient
_XML_TOKENS_KEPT = 1024


class Kind(Enum):
    OPEN = "open"
    CLOSE = "close"
    EMPTY = "empty"  # <think/>: an empty block in one token
    MARKER = "marker"  # removed wherever it stands, content around it kept
    VISIBLE_HEADER = (
        "visible_header"  # harmony final/commentary: a marker outside a block, a close inside
    )
    END = "end"  # harmony <|end|>-style: a close inside a block, a marker outside
    FENCE = "fence"
    TICKS = "ticks"
    TEXT = "text"  # a candidate that turned out to be plain text (a `~~` run mid-line)
    ANSWER_OPEN = "answer_open"  # unwrapped right after a reasoning block, else text
    ANSWER_CLOSE = "answer_close"  # removed when it closes an unwrapped answer, else text
    TOOL_CALL = "tool_call"  # ends an implicit reasoning block; text everywhere else
    CALL = (
        "call"  # Harmony's commentary to a recipient: ends a block, opens one that needs no close
    )

    # Members are singletons compared by identity; Enum's own `__hash__` is a Python call,
    # paid at every set lookup of a token's kind (several per token).
    __hash__ = object.__hash__


# In 3.11 a member read through its class costs ~130 ns (EnumType's `__getattr__` puts every
# attribute read of the class on the slow path); the scanner reads kinds per token, so it
# reads these instead.
OPEN, CLOSE, EMPTY, MARKER, END = Kind.OPEN, Kind.CLOSE, Kind.EMPTY, Kind.MARKER, Kind.END
FENCE, TICKS, TEXT, CALL = Kind.FENCE, Kind.TICKS, Kind.TEXT, Kind.CALL
VISIBLE_HEADER, TOOL_CALL = Kind.VISIBLE_HEADER, Kind.TOOL_CALL
ANSWER_OPEN, ANSWER_CLOSE = Kind.ANSWER_OPEN, Kind.ANSWER_CLOSE


# Token and _Literal are NamedTuples, not frozen dataclasses: as cheap to make per token, and
# defining them costs 0.1 ms instead of ~1 ms each of every start-up (#26 item 3).
class Token(NamedTuple):
    kind: Kind
    start: int
    end: int
    tag: str  # canonical spelling for reports, e.g. "<think>", "</thinking>", "[THINK]"
    xml: bool = False  # XML-style names obey the prose rules; special tokens never do


_WS = r"[ \t\r\n]*"
_NEVER = r"(?!x)x"  # a regex that matches nothing


def _atomic(pattern: str, name: str) -> str:
    """`(?>pattern)`, which never gives back what it matched (so a long run of blanks or a tag
    name is not retried at every length). Python 3.10's `re` has no atomic groups; there the
    equivalent is a look-ahead that captures, then a back-reference that consumes the capture.
    """
    if sys.version_info >= (3, 11):
        return f"(?>{pattern})"
    return f"(?=(?P<{name}>{pattern}))(?P={name})"


#: `Token(kind, start, end, tag, xml)` without the Python-level `__new__` of a NamedTuple (a
#: frame per token): all five fields in order.
_new_token = tuple.__new__


class _Literal(NamedTuple):
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
        self.answer_closers: dict[str, str] = {}
        if policy.special_pairs:
            literals.extend(_Literal(w, Kind.MARKER, w) for w in ANSWER_WRAPPERS)
            self.answer_closers[ANSWER_WRAPPERS[0]] = ANSWER_WRAPPERS[1]  # for rule 7's trim
        for opener, closer in policy.answer_pairs:
            self.answer_closers[opener] = closer
            literals.append(_Literal(opener, Kind.ANSWER_OPEN, opener))
            literals.append(_Literal(closer, Kind.ANSWER_CLOSE, closer))
        literals.extend(_Literal(t, Kind.TOOL_CALL, t) for t in policy.tool_calls)
        if policy.prose_delimiters:
            for opener, closer in PROSE_PAIRS:
                literals.append(_Literal(opener, Kind.OPEN, opener))
                literals.append(_Literal(closer, Kind.CLOSE, closer))
        if policy.harmony:
            # with or without its role: sglang's GptOssDetector tests write `<|start|><|channel|>`
            for prefix in ("<|start|>assistant", "<|start|>", ""):
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
        self._policy = policy
        self.max_token = max([len(lit.text) for lit in literals] + [MAX_ATTRS + 64])
        starts = {"<"} | {lit.text[0] for lit in literals}
        if policy.protect_code:
            starts |= {"`", "~"}
        self._start_chars = tuple(sorted(starts))
        self.start_chars = "".join(self._start_chars)  # what `candidate` looks for
        self._call = policy.harmony
        self.max_literal = max((len(lit) for lit in self.literals), default=1)

    # What follows is built on first use and then kept on the instance (a cached property is
    # a plain attribute after its first read): the regexes' sources and compiling them cost
    # ~20 ms, most of a pre-commit hook's scan of a clean session (#13 start-up), and the
    # scan's byte prefilter reads only `literals` (#26 item 3).

    @cached_property
    def _partial_starts(self) -> re.Pattern[str]:
        """Any start character. Built where text is normalized, not where the scan's prefilter
        reads the literals: a non-Latin-1 start (`◁`) makes a class of 64K code points, ~2 M
        instructions to compile (#26 item 3)."""
        return re.compile("[" + "".join(re.escape(c) for c in self._start_chars) + "]")

    @cached_property
    def find_candidate(self) -> Callable[[str], re.Match[str] | None]:
        """The first start character in a short text: one C call."""
        return self._partial_starts.search

    @cached_property
    def prefix_literals(self) -> frozenset[str]:
        """Literals that begin a longer literal: a match of one may still grow."""
        return frozenset(
            a for a in self.literals if any(b != a and b.startswith(a) for b in self.literals)
        )

    @cached_property
    def _literal_prefixes(self) -> frozenset[str]:
        partials = [*self.literals, CALL_PREFIX + "x"] if self.harmony else self.literals
        return frozenset(lit[:n] for lit in partials for n in range(1, len(lit)))

    @cached_property
    def _sources(self) -> tuple[str, str]:
        """The sources of `prefilter` and `pattern`. Each starts with a one-character class,
        then dispatches on that character with a look-behind. Starting with a plain class
        lets the regex engine skip clean text at C speed; the look-aheads make a run of `<`
        cost one test per character."""
        policy = self._policy
        branches: dict[str, list[str]] = {}
        if policy.tags:
            names = _trie(sorted(policy.tags))
            firsts = "".join(sorted({c for t in policy.tags for c in (t[0].lower(), t[0].upper())}))
            branches.setdefault("<", []).append(
                rf"(?P<xml>(?=[ \t\r\n/{re.escape(firsts)}]){_atomic(_WS, '_ws1')}(?P<slash>/)?"
                rf"{_atomic(_WS, '_ws2')}(?P<name>{_atomic(f'(?ai:{names})', '_tag')})"
                rf"(?=[ \t\r\n/>])(?:[ \t\r\n/][^<>]{{0,{MAX_ATTRS}}}?)?>)"
            )
        if policy.harmony:
            branches.setdefault("<", []).append(f"(?P<call>{_CALL_SOURCE})")
        by_first: dict[str, list[str]] = {}
        for text in self.literals:  # longest first, as the literals were sorted
            by_first.setdefault(text[0], []).append(text[1:])
        for n, (first, rests) in enumerate(sorted(by_first.items())):
            branches.setdefault(first, []).append(f"(?P<lit{n}>{_trie(rests)})")
        prefilter = _dispatch(branches) if branches else _NEVER
        if policy.protect_code:
            branches.setdefault("`", []).append(r"(?P<ticks>`*)")
            branches.setdefault("~", []).append(r"(?P<tildes>~~+)")
        return prefilter, _dispatch(branches) if branches else _NEVER

    @cached_property
    def prefilter(self) -> re.Pattern[str]:
        """Any delimiter (no code markers): a clean text has no match."""
        return re.compile(self._sources[0])

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Any delimiter or, with code protected, code marker run: the scanner's tokens."""
        return re.compile(self._sources[1])

    @cached_property
    def _longest_prefix(self) -> int:
        return max(map(len, self._literal_prefixes), default=0)

    @cached_property
    def unfinished(self) -> re.Pattern[str]:
        """The tag and code marker arms of an unfinished delimiter; a literal's start is
        looked up in `_literal_prefixes` (`_ends_here`): a regex of all ~540 prefixes cost
        ~20 ms to compile, twice, in a process's first normalize (#26 item 3)."""
        return _unfinished_pattern(self._policy)

    @cached_property
    def _unfinished_other(self) -> re.Pattern[str]:
        """`unfinished`, less an XML opener's attribute run."""
        return _unfinished_pattern(self._policy, attributes=False)

    def _ends_here(self, text: str, i: int, pattern: re.Pattern[str]) -> bool:
        """True when `text[i:]` is an unfinished delimiter: a literal's start, or what
        `pattern` (`unfinished` or `_unfinished_other`) matches up to the end."""
        if len(text) - i <= self._longest_prefix and text[i:] in self._literal_prefixes:
            return True
        return pattern.match(text, i) is not None

    @cached_property
    def _in_attributes(self) -> re.Pattern[str]:
        """An XML opener's attribute run alone."""
        tags = self._policy.tags
        return re.compile(
            rf"<{_WS}(?:/{_WS})?(?ai:{_trie(sorted(tags))})[ \t\r\n/][^<>]{{0,{MAX_ATTRS}}}\Z"
            if tags
            else _NEVER
        )

    @cached_property
    def attr_stop(self) -> re.Pattern[str]:
        """What ends (`>`) or cuts (`<`) an attribute run, or may start a delimiter that a
        removal could splice into it."""
        return re.compile("[<>" + "".join(re.escape(c) for c in self._start_chars) + "]")

    @cached_property
    def _call_partial(self) -> re.Pattern[str]:
        """A Harmony call header past its `to=`, not finished yet."""
        tail = _trie(
            sorted({t[:n] for t in ("<|constrain|>", "<|message|>") for n in range(len(t))})
        )
        return re.compile(
            re.escape(CALL_PREFIX) + r"[^<>\n]{0,128}(?:<\|constrain\|>[^<>\n]{0,64})?"
            rf"(?:{tail})?"
        )

    @cached_property
    def _xml_partial(self) -> re.Pattern[str]:
        return re.compile(rf"<{_WS}(?:/{_WS})?(?P<name>[A-Za-z]*)(?P<rest>[^<>]*)\Z")

    def token(self, m: re.Match[str], offset: int) -> Token:
        """The token a match of `pattern` stands for; `offset` maps window to text positions."""
        start, end = m.span()
        group = m.lastgroup
        if group == "xml":
            found = m.group()
            meaning = self._xml_tokens.get(found)
            if meaning is None:
                meaning = self._xml_meaning(m)
            return _new_token(Token, (meaning[0], start + offset, end + offset, meaning[1], True))
        if group == "call":
            return _new_token(Token, (CALL, start + offset, end + offset, CALL_TAG, False))
        if group is not None and group.startswith("lit"):
            lit = self.literals[m.group()]
            return _new_token(Token, (lit.kind, start + offset, end + offset, lit.tag, False))
        run = m.group()
        if len(run) >= 3 and _at_line_start(m.string, start):
            kind = FENCE
        else:
            kind = TICKS if group == "ticks" else TEXT
        return _new_token(Token, (kind, start + offset, end + offset, run, False))

    @cached_property
    def probes(self) -> Probes:
        """The clean-text check's substring tests (a tool call alone is text: `normalize`
        without an implicit block ignores it)."""
        texts = [t for t, lit in self.literals.items() if lit.kind is not TOOL_CALL]
        return Probes(self.tags, [*texts, CALL_PREFIX] if self.harmony else texts)

    @cached_property
    def _xml_tokens(self) -> dict[str, tuple[Kind, str]]:
        """An XML tag's kind and canonical tag by its text: the few spellings a text uses
        recur at every block, and reading one costs five group reads and two string copies."""
        return {}

    def _xml_meaning(self, m: re.Match[str]) -> tuple[Kind, str]:
        name = m.group("name").lower()
        if m.group("slash"):
            meaning = (CLOSE, f"</{name}>")
        elif m.group("xml")[1:-1].rstrip(" \t\r\n").endswith("/"):
            meaning = (EMPTY, f"<{name}/>")
        else:
            meaning = (OPEN, f"<{name}>")
        cache = self._xml_tokens
        if len(cache) >= _XML_TOKENS_KEPT:
            cache.clear()  # a hostile text of many attribute spellings keeps memory bounded
        cache[m.group()] = meaning
        return meaning

    def may_grow(self, m: re.Match[str], window: str) -> bool:
        """True when the match is a literal that the rest of the window may still extend."""
        lit = m.group() if m.lastgroup and m.lastgroup.startswith("lit") else None
        if lit is None or lit not in self.prefix_literals:
            return False
        tail = window[m.start() : m.start() + self.max_token]
        return any(len(text) > len(tail) and text.startswith(tail) for text in self.literals)

    def has_candidate(self, text: str) -> bool:
        """True when a delimiter or code marker could start somewhere in `text`."""
        return self._partial_starts.search(text) is not None

    def candidate(self, text: str) -> bool:
        """`has_candidate` tuned for the stream's fast lane: a regex for short chunks,
        substring tests (memchr speed) for long ones."""
        if len(text) < 64:
            return self._partial_starts.search(text) is not None
        return any(c in text for c in self._start_chars)

    def partial_start(self, window: str, lo: int) -> int | None:
        """Where, at or after `lo`, an incomplete delimiter may begin at the end of `window`."""
        n = len(window)
        lo = max(lo, n - self.max_token)
        # Only three kinds of place can start one, so a run of `<` is not tried one by one:
        # the last `<` (a tag has no other `<` in it), the last run of a code marker, and
        # the last few characters (the longest literal).
        candidates = set()
        last_lt = window.rfind("<", lo) if "<" in self._start_chars else -1
        if last_lt >= 0:
            candidates.add(last_lt)
        if n and window[-1] in "`~" and window[-1] in self._start_chars:
            tail = window[lo:]
            candidates.add(lo + len(tail.rstrip(window[-1])))
        for m in self._partial_starts.finditer(window, max(lo, n - self.max_literal + 1)):
            candidates.add(m.start())
        if self._call:
            call = window.rfind(CALL_PREFIX, lo)
            if call >= 0:
                candidates.add(call)
        for i in sorted(candidates):
            if self._could_grow(window, i):
                return i
        return None

    def ends_unfinished(self, text: str) -> bool:
        """True when `text` ends in an unfinished delimiter (or, with code protected, a code
        marker): tried only where one can start, as `partial_start` does."""
        if not text:
            return False
        pattern = self.unfinished
        if text[-1] in "`~" and self._ends_here(text, len(text) - 1, pattern):
            return True
        k = text.rfind("<")
        if k >= 0 and self._ends_here(text, k, pattern):
            return True
        if self._ends_in_call(text):
            return True
        return any(
            self._ends_here(text, m.start(), pattern)
            for m in self._partial_starts.finditer(text, max(0, len(text) - self.max_literal + 1))
        )

    def ends_in_attributes_only(self, text: str) -> bool:
        """True when the only unfinished delimiter `text` ends in is an XML opener's
        attribute run (`<think and then`), which only a later `>` can finish."""
        k = text.rfind("<")
        if k < 0 or self._in_attributes.match(text, k) is None:
            return False
        pattern = self._unfinished_other
        if text[-1] in "`~" and self._ends_here(text, len(text) - 1, pattern):
            return False
        if self._ends_here(text, k, pattern):
            return False
        if self._ends_in_call(text):
            return False
        return not any(
            self._ends_here(text, m.start(), pattern)
            for m in self._partial_starts.finditer(text, max(0, len(text) - self.max_literal + 1))
        )

    def _ends_in_call(self, text: str) -> bool:
        """True when `text` ends in an unfinished Harmony call header."""
        if not self._call:
            return False
        call = text.rfind(CALL_PREFIX, max(0, len(text) - self.max_token))
        return call >= 0 and self._call_partial.fullmatch(text, call) is not None

    def _could_grow(self, window: str, i: int) -> bool:
        tail = window[i:]
        first = tail[0]
        if first in "`~":
            return tail.strip(first) == ""
        if tail in self._literal_prefixes:
            return True
        if self._call and tail.startswith(CALL_PREFIX):
            return self._call_partial.fullmatch(tail) is not None
        if first == "<" and self.tags:
            m = self._xml_partial.match(tail)
            if m is None:
                return False
            name, rest = m.group("name").lower(), m.group("rest")
            if not rest:
                return any(t.startswith(name) for t in self.tags)
            return name in self.tags and rest[0] in " \t\r\n/" and len(rest) <= MAX_ATTRS
        return False


def _unfinished_pattern(policy: Policy, *, attributes: bool = True) -> re.Pattern[str]:
    """Text ending in the start of an XML delimiter that is not finished (`<thi`, `</ th`,
    `<think a="x`) or, with code protected, in a code marker character (a literal's start,
    `<|channel|>` or `[THI`, is `Grammar._ends_here`'s set lookup)."""
    arms = unfinished_arms(policy, attributes=attributes)
    return re.compile(f"(?:{'|'.join(arms)})\\Z" if arms else r"(?!x)x")


def unfinished_arms(policy: Policy, *, attributes: bool = True) -> list[str]:
    """`_unfinished_pattern`'s alternatives: an unfinished tag, with attributes begun, and
    the code marker characters."""
    arms = []
    if policy.tags:
        names = sorted(policy.tags)
        partial_names = sorted({t[:n] for t in names for n in range(len(t) + 1)})
        arms.append(rf"<{_WS}(?:/{_WS})?(?ai:{_trie(partial_names)})")
        if attributes:
            arms.append(rf"<{_WS}(?:/{_WS})?(?ai:{_trie(names)})[ \t\r\n/][^<>]{{0,{MAX_ATTRS}}}")
    if policy.protect_code:
        arms.append("[`~]")  # a removal here could join two runs into a new code marker
    return arms


def _at_line_start(text: str, i: int) -> bool:
    """True when only up to three spaces stand between a newline and position i."""
    j = i
    while j > 0 and text[j - 1] == " " and i - j < 3:
        j -= 1
    return j == 0 or text[j - 1] == "\n"


def _trie(words: list[str]) -> str:
    """A regex for a set of literal words with common prefixes factored (longest first)."""
    groups: dict[str, list[str]] = {}
    ends = False
    for word in words:
        if word:
            groups.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    branches = [re.escape(first) + _trie(rest) for first, rest in sorted(groups.items())]
    if not branches:
        return ""
    alternation = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{alternation})?" if ends else alternation


def _dispatch(branches: dict[str, list[str]]) -> str:
    """`[firsts](?:(?<=a)rest-of-a|(?<=b)rest-of-b...)`: see Grammar.__init__."""
    firsts = "".join(re.escape(c) for c in sorted(branches))
    order = sorted(branches, key=lambda c: (c != "<", c))  # `<` is by far the commonest
    arms = [f"(?<={re.escape(c)})(?:{'|'.join(branches[c])})" for c in order]
    return f"[{firsts}](?:{'|'.join(arms)})"


def grammar_for(policy: Policy) -> Grammar:
    """The compiled grammar of a policy, kept on the (frozen) policy itself."""
    grammar = policy.__dict__.get("_grammar")
    if grammar is None:
        grammar = policy.__dict__["_grammar"] = _compiled(policy)
    return grammar


@lru_cache(maxsize=64)
def _compiled(policy: Policy) -> Grammar:
    return Grammar(policy)
