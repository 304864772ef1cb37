"""The incremental scanner shared by `normalize` and `StreamNormalizer`.

It turns text into raw spans (visible, thinking, delimiter) in order. Batch
normalization is this scanner fed the whole text at once; streaming feeds it
chunk by chunk. Decisions that need to see further ahead (rule 4's orphan
close, rule 5's mid-text opener that may never close, rule 6's nesting) are
made speculatively from a checkpoint and undone at `finish` if the text ends
without confirming them, so every chunking reaches the same spans.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from copy import copy
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache

from thinkfix.normalizer.grammar import (
    CONTEXT,
    DETOK_CLOSE,
    DETOK_OPEN,
    MAX_ATTRS,
    Kind,
    Token,
    grammar_for,
)
from thinkfix.normalizer.policy import OrphanClose, Policy
from thinkfix.normalizer.spans import Finding, Label, LeakKind
from thinkfix.normalizer.stages import WS_CHARS

_NON_WS = re.compile(r"[^\s\ufeff]")
_PROSE_BEFORE = " \t"
_TICKS = re.compile(r"`+")
_NEWLINE = re.compile("\n")
_RUN_GROUPS = {"ticks": re.compile("[^`]"), "tildes": re.compile("[^~]")}
_CODE_KINDS = frozenset({Kind.FENCE, Kind.TICKS, Kind.TEXT})
_CLOSING = frozenset({Kind.CLOSE, Kind.END, Kind.VISIBLE_HEADER})
_RESCAN_SLACK = 1 << 16


def _upd(st: _State, **changes: object) -> _State:
    for key, value in changes.items():
        setattr(st, key, value)
    return st


@lru_cache(maxsize=32)
def _fence_closer(fence: str) -> re.Pattern[str]:
    return re.compile(rf"\n[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?:\r?\n|\Z)")


@lru_cache(maxsize=32)
def _fence_closer_start(fence: str) -> re.Pattern[str]:
    """The beginning of a line that could still become the fence's closing line."""
    return re.compile(rf"[ ]{{0,3}}(?:{re.escape(fence[0])}+[ \t]*\r?)?")


class Mode(Enum):
    LEAD = "lead"  # nothing but whitespace seen yet
    OUT = "out"  # visible text
    IN = "in"  # inside a reasoning block
    DETOK = "detok"  # inside a detokenised harmony `analysis...assistantfinal` candidate


@dataclass(frozen=True)
class RawSpan:
    start: int
    end: int
    label: Label
    block: int | None = None


@dataclass(frozen=True)
class BlockFinding:
    """A finding, with the reasoning block it concerns (so dedupe can relabel it)."""

    finding: Finding
    block: int | None = None


@dataclass(slots=True)
class _State:
    """The scanner's mutable position in the grammar (copied into checkpoints)."""

    mode: Mode
    seg: int = 0  # start of the text not yet cut into a span
    first_delim: bool = False  # rule 4 looks only at the first delimiter
    window: int | None = 0  # start of the pre-delimiter window while it is open
    prose: int = 0  # prose openers awaiting their prose close
    depth: int = 0
    block: int = -1  # id of the current (or last) reasoning block
    opener: Token | None = None
    leading: bool = False
    content: bool = False  # the current block has non-blank reasoning
    fence: str | None = None  # the fence of the code block we are inside
    shown: bool = False  # non-blank visible text precedes the scan position
    visible_from: int = 0  # where the run of visible text before the scan position starts
    gap_line_start: bool = True  # the visible text before the last removal ended a line
    after_block: int = -1  # where the last removed reasoning block ended (answer wrappers)
    answer: str | None = None  # the closer of the unwrapped answer we are inside
    guard: int = 0  # tokens starting before this are text (an opener's attribute run may join)


@dataclass(frozen=True)
class _Checkpoint:
    """Where to come back to if the text ends before a speculation is confirmed."""

    state: _State
    pos: int
    spans: int
    findings: int
    override: str  # "literal": the token at pos is text; "close": it ends the block


class Scanner:
    """Raw spans of a text fed in pieces; `text_at` reads back what was fed."""

    def __init__(self, policy: Policy, *, start_in_reasoning: bool = False,
                 holdback: int | None = None, followed_by_tool_call: bool = False) -> None:
        self.policy = policy
        self.grammar = grammar_for(policy)
        # text kept before the scan position (the scan window itself starts CONTEXT
        # before it): enough to read back the longest unfinished delimiter
        self.context = max(CONTEXT, self.grammar.max_token)
        self.holdback = holdback
        self.start_in_reasoning = start_in_reasoning
        # rule 4's evidence from outside the text: a tool call follows it in its message
        self.followed_by_tool_call = followed_by_tool_call
        # inside an unwrapped answer, where the trailing run of whitespace starts (it is
        # trimmed if the answer's closer follows it), and how far the text was read for it
        self._ws_start = 0
        self._ws_read = 0
        self.spans: list[RawSpan] = []
        self.findings: list[BlockFinding] = []
        self.pos = 0
        self.length = 0
        self._chunks: list[str] = []
        self._starts: list[int] = []  # absolute offset of each chunk
        self._chunk_base = 0  # absolute offset of the first chunk kept
        self._dropped = 0  # chunks released from the front (kept as a count: no list shifting)
        self._ck: _Checkpoint | None = None
        self._overrides: dict[int, str] = {}
        # Set once the end of the text is known and a mid-text opener came back unclosed:
        # openers after this offset cannot close either, so they are text without a rescan.
        self._closes_end: int | None = None
        self._rescanned = 0  # characters scanned again after rollbacks (bounded: see _end_of_text)
        # A decision that waits for a character class (a line end, a non-blank): until new
        # text holds one, feeding more changes nothing, so the scan is not repeated.
        self._await: tuple[re.Pattern[str], int] | None = None
        # the line of the last inline code span: its start, end, and backtick runs by length
        self._line_ticks: tuple[int, int, dict[int, list[int]]] | None = None
        if start_in_reasoning:
            self.st = _State(Mode.IN, depth=1, block=0, leading=True, first_delim=True,
                             window=None, opener=Token(Kind.OPEN, 0, 0, "<think>", xml=True))
        else:
            self.st = _State(Mode.LEAD)

    # -- text storage -------------------------------------------------------------------

    def feed(self, chunk: str) -> None:
        if chunk:
            self._chunks.append(chunk)
            self._starts.append(self.length)
            self.length += len(chunk)

    def text_at(self, start: int, end: int) -> str:
        """The fed text between two absolute offsets (both at or after the released point)."""
        if start >= end:
            return ""
        i = max(bisect_right(self._starts, start, lo=self._dropped) - 1, self._dropped)
        first = self._chunks[i]
        base = self._starts[i]
        if end <= base + len(first):
            return first[start - base : end - base]
        out = [first[start - base :]]
        chunks = self._chunks
        base += len(first)
        for j in range(i + 1, len(chunks)):  # by index: a slice would copy the whole tail
            chunk = chunks[j]
            if end <= base + len(chunk):
                out.append(chunk[: end - base])
                break
            out.append(chunk)
            base += len(chunk)
        return "".join(out)

    def release(self, upto: int) -> None:
        """Forget text before `upto`; the caller has taken what it needs from it."""
        upto = min(upto, self.pos - self.context, self.st.seg, self._ck.pos if self._ck else upto,
                   self.spans[0].start if self.spans else upto,
                   self.st.window if self.st.window is not None else upto)
        chunks, starts = self._chunks, self._starts
        n = self._dropped
        while n < len(chunks) - 1 and starts[n + 1] <= upto:
            chunks[n] = ""
            n += 1
        self._dropped = n
        self._chunk_base = starts[n] if starts else 0
        if n > 1024 and n * 2 > len(chunks):  # compact now and then
            del chunks[:n], starts[:n]
            self._dropped = 0

    def skip_plain(self, chunk: str) -> Label | None:
        """Take a chunk with no candidate character without scanning it.

        Returns the label it gets, or None when the scanner must look at it.
        """
        st = self.st
        if (st.mode not in (Mode.OUT, Mode.IN) or st.fence is not None or self.pos != self.length
                or st.answer is not None or self.grammar.has_candidate(chunk)):
            return None
        self.feed(chunk)
        self.pos = self.length
        if st.mode is Mode.IN:
            if not st.content and _NON_WS.search(chunk):
                _upd(self.st, content=True)
            return Label.THINKING
        if not st.shown and _NON_WS.search(chunk):
            _upd(self.st, shown=True)
        return Label.VISIBLE

    def absorb_emitted(self, length: int, tail: str) -> None:
        """Account for `length` characters the caller emitted itself; `tail` ends them."""
        if len(tail) == length < self.context and self.length > self._chunk_base:
            # a short run: keep the text before it too, for the look-back at the next token
            keep = max(self._chunk_base, self.length - (self.context - length))
            tail = self.text_at(keep, self.length) + tail
        start = self.length + length - len(tail)
        self._chunks[:] = [tail]  # nothing before it is needed: the scanner was settled
        self._starts[:] = [start]
        self._dropped, self._chunk_base = 0, start
        self.length += length
        self.pos = self.length
        self.st.seg = self.length

    def lead_is_visible(self, chunk: str) -> bool:
        """True when text starting with `chunk` starts with visible text: no candidate
        character, no leading whitespace, and no detokenised Harmony header."""
        return (_NON_WS.match(chunk) is not None and not self.grammar.has_candidate(chunk)
                and not (self.policy.harmony and chunk[0] == DETOK_OPEN[0]))

    def open_visible(self) -> None:
        """The state after reading a first chunk that `lead_is_visible`, with holdback 0."""
        _upd(self.st, mode=Mode.OUT, shown=True, window=None)

    def plain_mode(self) -> Mode | None:
        """OUT or IN when a chunk with no candidate character may bypass the scan entirely."""
        st = self.st
        if (st.mode in (Mode.OUT, Mode.IN) and st.fence is None and self.pos == self.length
                and self._ck is None and st.window is None and not self.spans and st.answer is None):
            return st.mode
        return None

    def pass_through(self) -> None:
        """The caller emitted everything fed so far itself: start the next segment here."""
        _upd(self.st, seg=self.length)

    def waits_on_plain(self) -> bool:
        """True when a chunk with no candidate character would be taken and held, unread."""
        st = self.st
        return (st.mode in (Mode.OUT, Mode.IN) and st.fence is None and self.pos == self.length
                and not self.settled())

    def settled(self) -> bool:
        """True when nothing fed so far waits on what comes next."""
        return self._ck is None and self.st.window is None and not self.spans

    # -- the frontier ---------------------------------------------------------------------

    def frontier(self) -> int:
        """Spans ending at or before this offset are final."""
        limit = self.pos
        st = self.st
        if self._ck is not None:
            ck = self._ck
            limit = min(limit, ck.pos if ck.state.window is None else min(ck.pos, ck.state.window))
        if st.window is not None:
            limit = min(limit, st.window)
        return limit

    def take(self) -> list[RawSpan]:
        """Pop the spans that can no longer change."""
        limit = self.frontier()
        n = 0
        for span in self.spans:
            if span.end > limit:
                break
            n += 1
        if self._ck is not None:
            n = min(n, self._ck.spans)
        if n == 0:
            return []  # the common case while a window is open: copy nothing
        out, self.spans = self.spans[:n], self.spans[n:]
        if self._ck is not None:
            self._ck = replace(self._ck, spans=self._ck.spans - n)
        return out

    # -- scanning -------------------------------------------------------------------------

    def run(self, final: bool = False) -> None:
        """Scan as far as the fed text allows; with `final`, to the end, settling everything."""
        while True:
            self._scan(final)
            if not final:
                self._cut(self._cut_point())
                self._close_window_past_holdback()
                return
            if not self._end_of_text():
                return

    def _window(self) -> tuple[str, int]:
        """The text from a little before `pos` to the end, and the offset of its first char."""
        start = max(self.pos - CONTEXT, self._chunk_base)
        text = self.text_at(start, self.length)
        if start == 0:
            return "\n" + text, -1  # a virtual line start before the text
        return text, start

    def _scan(self, final: bool) -> None:
        if self._await is not None:
            pattern, since = self._await
            if not final and pattern.search(self.text_at(since, self.length)) is None:
                self._await = (pattern, self.length)
                return
            self._await = None
        w, off = self._window()
        g = self.grammar
        end = len(w)
        while True:
            i = self.pos - off
            st = self.st
            if st.mode is Mode.LEAD:
                m = _NON_WS.search(w, i)
                if m is None:
                    self.pos = off + end
                    return
                j = m.start()
                self.pos = off + j
                if self.policy.harmony and self._overrides.get(self.pos) != "literal":
                    tail = w[j : j + len(DETOK_OPEN)]
                    if tail == DETOK_OPEN:
                        self._start_detok(Token(Kind.OPEN, off + j, off + j + len(tail), DETOK_OPEN))
                        continue
                    if not final and DETOK_OPEN.startswith(tail) and j + len(tail) == end:
                        return
                tm = g.pattern.match(w, j)
                if tm is None and not final and g.partial_start(w, j) == j:
                    return
                if tm is not None and not final and (tm.end() == end or g.may_grow(tm, w)):
                    self._await_run(tm, end)
                    return
                tok = g.token(tm, off) if tm is not None else None
                if tok is not None and tok.kind in (Kind.OPEN, Kind.EMPTY, Kind.CLOSE, Kind.END,
                                                     Kind.MARKER, Kind.VISIBLE_HEADER,
                                                     Kind.ANSWER_OPEN, Kind.ANSWER_CLOSE):
                    _upd(self.st, mode=Mode.OUT)
                    if not self._on_token(tok, w, off, final, lead=True):
                        if self.pos == tok.start:
                            _upd(self.st, mode=Mode.LEAD)  # it waits, still the first thing
                        return
                    continue
                _upd(self.st, mode=Mode.OUT)
                continue
            if st.mode is Mode.DETOK:
                k = w.find(DETOK_CLOSE, i)
                if k < 0:
                    keep = len(DETOK_CLOSE) - 1
                    self.pos = off + max(i, end - keep)
                    return
                self._end_detok(Token(Kind.CLOSE, off + k, off + k + len(DETOK_CLOSE), DETOK_CLOSE))
                continue
            if st.fence is not None:
                if not self._in_fence(st.fence, w, off, i, final):
                    return
                continue
            m = g.pattern.search(w, i)
            if m is not None and not final and m.start() > i and "<" not in m.group():
                # a delimiter begun before the match may still finish around it
                # (`<think\n` + "```\n" + `x>` is one opener): wait at its start. A match
                # with a `<` cannot sit inside an unfinished tag's attributes.
                partial = g.partial_start(w, i)
                if partial is not None and partial < m.start():
                    self.pos = off + partial
                    return
            if m is None or (not final and (m.end() == end or g.may_grow(m, w))):
                stop = m.start() if m is not None else None
                if not final:
                    # an unfinished delimiter may start before the match (`<think\n` + "`")
                    partial = g.partial_start(w, i)
                    if partial is not None and (stop is None or partial < stop):
                        stop = partial
                    elif m is not None:
                        self._await_run(m, end)
                self.pos = off + (stop if stop is not None else end)
                return
            tok = g.token(m, off)
            if not self._on_token(tok, w, off, final, lead=False):
                return

    def _await_run(self, m: re.Match[str], end: int) -> None:
        """A code-marker run that reaches the end of the text: nothing changes until it ends."""
        if m.end() == end and m.lastgroup in _RUN_GROUPS:
            self._await = (_RUN_GROUPS[m.lastgroup], self.length)

    # -- token handling ---------------------------------------------------------------------

    def _on_token(self, tok: Token, w: str, off: int, final: bool, *, lead: bool) -> bool:
        """Act on one token; False when more text is needed first (pos is left at the token)."""
        if tok.kind in _CODE_KINDS and self.st.visible_from > 0 and self.st.mode is Mode.OUT:
            tok = self._after_removal_code(tok, w, off)
        if tok.kind in (Kind.FENCE, Kind.TICKS):
            return self._skip_code(tok, w, off, final)
        if tok.kind is Kind.TEXT:
            self.pos = tok.end
            return True
        override = self._overrides.get(tok.start)
        if override == "literal":
            self.pos = tok.end
            return True
        if tok.kind is Kind.TOOL_CALL:
            if self.st.mode is Mode.IN and self.start_in_reasoning and self.st.block == 0:
                self._end_at_tool_call(tok)
            else:
                self.pos = tok.end  # text, and no delimiter: rule 4 still waits for one
            return True
        if self.st.mode is Mode.IN:
            return self._in_block(tok, w, off, final, override)
        return self._outside(tok, w, off, final, lead)

    def _after_removal_code(self, tok: Token, w: str, off: int) -> Token:
        """A code marker that follows removed text: whether it starts a line is judged on the
        visible text, which is what normalizing the result again will read."""
        st = self.st
        lo = st.visible_from
        if lo > tok.start:
            return tok
        gap = w[lo - off : tok.start - off] if lo - off >= 0 else self.text_at(lo, tok.start)
        if gap.strip():
            return tok
        if not st.shown and self.policy.trim:
            line_start = True  # nothing visible before: blanks here are trimmed away
        elif len(gap) > 3 or gap.strip(" "):
            return tok  # a newline or enough text in between: the original line rules
        else:
            line_start = st.gap_line_start
        if line_start and len(tok.tag) >= 3:
            kind = Kind.FENCE
        else:
            kind = Kind.TICKS if tok.tag[0] == "`" else Kind.TEXT
        return tok if kind is tok.kind else Token(kind, tok.start, tok.end, tok.tag)

    def _after_unfinished(self, tok: Token, w: str, off: int, final: bool) -> bool | None:
        """True when visible text ending in an unfinished delimiter (`<thi`) runs into `tok`
        and could join what follows; None while the text that decides has not arrived.

        Such a token is text: were it removed, the visible text around it would join
        into a new delimiter (`<thi` + `<think></think>` + `nk>`), and normalizing the
        result again would change it. An opener's attribute run is the exception that
        can be decided: it joins only a `>` that comes before any `<` (an attribute run
        holding `<` is no opener), so in `start with <think and then close with </think>`
        the close is a delimiter, not the end of an opener.
        """
        if tok.start < self.st.guard:
            return True
        lo = max(self.st.visible_from, tok.start - self.context, self._chunk_base, 0)
        if lo >= tok.start:
            return False
        # the scan window keeps only a few characters before the scan position; the
        # scanner keeps `context` of them, read back only here, at a token
        before = w[lo - off : tok.start - off] if lo - off >= 0 else self.text_at(lo, tok.start)
        g = self.grammar
        if not g.ends_unfinished(before):
            return False
        if not g.ends_in_attributes_only(before):
            return True
        found = self._attribute_stop(tok.end - off, w, final)
        if found is None:
            return None
        verdict, guard = found
        if verdict == "none":
            return False  # nothing can end the run within its bound: removing joins nothing
        if guard is not None:
            # This token stays text because of what follows it, up to `guard`; were a
            # delimiter before there removed later (or a block opened that hides what
            # decided), normalizing the result again would read a different text after
            # this token. Those delimiters are text too, so the next pass decides the same.
            _upd(self.st, guard=guard + off)
        return True

    def _attribute_stop(self, i: int, w: str, final: bool) -> tuple[str, int | None] | None:
        """What follows window index `i` within an attribute run's bound: "plain" when a
        character that stays (a `>`, a `<` of no delimiter, a code marker) may end or cut
        it, "tokens" when only delimiters do, "none" when nothing does; None while the
        text that decides has not arrived. With it, the window index before which every
        token must stay text for the decision to hold in the next pass (None: no need).

        For "plain" that is the deciding character when an opener stands before it: the
        block it would open could hide that character (`<think </think><think><</think>`),
        and the next pass would find nothing after the close. Closes and markers between
        go alone, so the same character decides again."""
        g = self.grammar
        bound = i + MAX_ATTRS + 1
        limit = min(len(w), bound)
        j, tokens, opens = i, False, False
        while True:
            m = g.attr_stop.search(w, j, limit)
            if m is None:
                break
            k = m.start()
            stop = k if opens else None
            if w[k] == ">":
                return "plain", stop
            tm = g.pattern.match(w, k)
            if tm is None:
                if not final and g.partial_start(w, k) == k:
                    return None
                return "plain", stop
            if tm.lastgroup in _RUN_GROUPS:
                return "plain", stop  # code is never removed
            if not final and (tm.end() == len(w) or g.may_grow(tm, w)):
                return None
            tokens, j = True, tm.end()
            opens = opens or g.token(tm, 0).kind is Kind.OPEN
        if not final and limit == len(w) and limit - i <= MAX_ATTRS:
            return None
        return ("tokens", bound) if tokens else ("none", None)

    def _prev_char(self, pos: int, w: str, off: int) -> str:
        return w[pos - off - 1]

    def _outside(self, tok: Token, w: str, off: int, final: bool, lead: bool) -> bool:
        joins = False if lead else self._after_unfinished(tok, w, off, final)
        if joins is None:
            self.pos = tok.start
            return False
        if joins:
            # text, but still the first delimiter: a close after it is stray, not an orphan
            _upd(self.st, first_delim=True, window=None)
            self.pos = tok.end
            return True
        st = self.st
        kind = tok.kind
        if kind in (Kind.OPEN, Kind.EMPTY):
            self._cut(tok.start)
        prose = (tok.xml and not lead and self.st.shown
                 and self._prev_char(tok.start, w, off) in _PROSE_BEFORE)
        st = self.st
        if kind is Kind.OPEN:
            if prose:
                _upd(self.st, prose=st.prose + 1)
                self.pos = tok.end
                return True
            # an opener with nothing visible before it is as structural as a leading one
            leading = lead or not self.st.shown
            if not leading and self._closes_end is not None and tok.start >= self._closes_end:
                # what the rollback of its unclosed block would decide, without the rescan
                self._finding(LeakKind.UNCLOSED_INLINE, tok.tag, tok.start, tok.end)
                self.pos = tok.end
                return True
            self._open_block(tok, leading=leading)
            return True
        if kind is Kind.EMPTY:
            if not prose:
                self._remove(tok, LeakKind.EMPTY_BLOCK)
            self.pos = tok.end
            return True
        if kind in (Kind.MARKER, Kind.VISIBLE_HEADER, Kind.END):
            if tok.tag == st.answer:
                self._trim_before(tok)
            self._remove(tok, LeakKind.MARKER)
            _upd(self.st, answer=self.grammar.answer_closers.get(tok.tag))
            return True
        if kind is Kind.ANSWER_OPEN:
            if not self._right_after_block(tok, w, off):
                self.pos = tok.end  # anywhere else an answer wrapper is text
                return True
            self._remove(tok, LeakKind.MARKER)
            _upd(self.st, answer=self.grammar.answer_closers[tok.tag])
            return True
        if kind is Kind.ANSWER_CLOSE:
            if tok.tag != st.answer:
                self.pos = tok.end
                return True
            self._trim_before(tok)
            self._remove(tok, LeakKind.MARKER)
            _upd(self.st, answer=None)
            return True
        # a close tag outside any block
        if tok.xml and st.prose:
            _upd(self.st, prose=st.prose - 1)
            self.pos = tok.end
            return True
        nxt_i = tok.end - off
        if tok.xml and not lead and nxt_i >= len(w) and not final:
            self.pos = tok.start
            return False
        if (tok.xml and not lead and self._prev_char(tok.start, w, off) in _PROSE_BEFORE
                and nxt_i < len(w) and w[nxt_i] in _PROSE_BEFORE):
            self.pos = tok.end
            return True  # `Use the </think> tag`: prose
        if self.holdback is not None and st.window is not None and tok.start - st.window > self.holdback:
            st = _upd(self.st, window=None)
        if st.first_delim or st.window is None or self.policy.orphan_close is OrphanClose.STRIP:
            self._remove(tok, LeakKind.STRAY_CLOSE)
            return True
        if self.policy.orphan_close is OrphanClose.AUTO:
            m = _NON_WS.search(w, nxt_i)
            if m is None and not final:
                self.pos = tok.start
                self._await = (_NON_WS, self.length)
                return False
            follows = m is not None or self.followed_by_tool_call
        else:
            follows = True
        if not follows:
            self._remove(tok, LeakKind.STRAY_CLOSE)
            return True
        self._orphan_split(tok)
        return True

    def _in_block(self, tok: Token, w: str, off: int, final: bool, override: str | None) -> bool:
        st = self.st
        kind = tok.kind
        if kind is Kind.OPEN:
            self._cut(tok.start)
            st = self.st
            if self.start_in_reasoning and st.leading and st.block == 0 and not st.content and st.depth == 1:
                self._add(tok.start, tok.end, Label.DELIMITER)
                _upd(self.st, seg=tok.end)
                self.pos = tok.end
                return True
            if tok.xml and self._prev_char(tok.start, w, off) in _PROSE_BEFORE:
                _upd(self.st, prose=st.prose + 1)
            else:
                _upd(self.st, depth=st.depth + 1)
            self.pos = tok.end
            return True
        if kind in (Kind.EMPTY, Kind.MARKER, Kind.ANSWER_OPEN, Kind.ANSWER_CLOSE):
            self.pos = tok.end
            return True
        # CLOSE, END or VISIBLE_HEADER: closes (a level of) the block
        if tok.xml and st.prose and override != "close":
            if st.leading:
                # rule 6: a leading block that never closes closes at its last close tag,
                # even one that balanced a prose mention (`<think>no <think> tags</think>A`)
                self._cut(tok.start)
                self._ck = _Checkpoint(copy(self.st), tok.start, len(self.spans), len(self.findings),
                                       "close")
            _upd(self.st, prose=st.prose - 1)
            self.pos = tok.end
            return True
        if st.depth > 1 and override != "close":
            # cut at the token, not at `pos`: where the last scan stopped depends on the
            # chunking, and the checkpoint's spans must not
            self._cut(tok.start)
            self._ck = _Checkpoint(copy(self.st), tok.start, len(self.spans), len(self.findings), "close")
            _upd(self.st, depth=self.st.depth - 1)
            self.pos = tok.end
            return True
        self._close_block(tok)
        return True

    # -- actions ------------------------------------------------------------------------------

    def _add(self, start: int, end: int, label: Label, block: int | None = None) -> None:
        if end > start:
            self.spans.append(RawSpan(start, end, label, block))
            if label is not Label.VISIBLE:
                st = self.st
                if start != st.visible_from and st.mode not in (Mode.IN, Mode.DETOK):
                    # a new run of removed text begins here, after visible text
                    st.gap_line_start = start == 0 or self.text_at(start - 1, start) == "\n"
                st.visible_from = end

    def _cut(self, upto: int | None = None) -> None:
        """Turn the open segment, up to `upto` (default: pos), into a span of the current label."""
        st = self.st
        upto = self.pos if upto is None else upto
        if upto <= st.seg:
            return
        if st.mode in (Mode.IN, Mode.DETOK):
            self._add(st.seg, upto, Label.THINKING, st.block)
            if not st.content and _NON_WS.search(self.text_at(st.seg, upto)):
                _upd(self.st, seg=upto, content=True)
                return
        else:
            self._add(st.seg, upto, Label.VISIBLE)
            if not st.shown and _NON_WS.search(self.text_at(st.seg, upto)):
                _upd(self.st, seg=upto, shown=True)
                return
        _upd(self.st, seg=upto)

    def _finding(self, kind: LeakKind, tag: str, start: int, end: int, block: int | None = None) -> None:
        self.findings.append(BlockFinding(Finding(kind, tag, start, end), block))

    def _remove(self, tok: Token, kind: LeakKind) -> None:
        """A delimiter that goes on its own; the text around it stays where it is."""
        self._cut(tok.start)
        self._add(tok.start, tok.end, Label.DELIMITER)
        self._finding(kind, tok.tag, tok.start, tok.end)
        _upd(self.st, seg=tok.end, first_delim=True, window=None, mode=self._after_removal())
        self.pos = tok.end

    def _after_removal(self) -> Mode:
        """With nothing visible yet, the text after a removed delimiter is leading text again."""
        return Mode.OUT if self.st.shown else Mode.LEAD

    def _open_block(self, tok: Token, *, leading: bool) -> None:
        if not leading:
            self._ck = _Checkpoint(copy(self.st), tok.start, len(self.spans), len(self.findings), "literal")
        self._cut(tok.start)
        self._add(tok.start, tok.end, Label.DELIMITER)
        st = self.st
        _upd(self.st, mode=Mode.IN, seg=tok.end, first_delim=True, window=None, depth=1,
                          block=st.block + 1, opener=tok, leading=leading, content=False, prose=0)
        self.pos = tok.end

    def _close_block(self, tok: Token) -> None:
        self._cut(tok.start)
        st = self.st
        self._add(tok.start, tok.end, Label.DELIMITER)
        opener = st.opener
        start = opener.start if opener is not None else 0
        kind = LeakKind.BLOCK if st.content else LeakKind.EMPTY_BLOCK
        tag = opener.tag if opener is not None and opener.end > opener.start else tok.tag
        self._finding(kind, tag, start, tok.end, st.block)
        _upd(self.st, mode=self._after_removal(), seg=tok.end, depth=0, prose=0, opener=None,
             after_block=tok.end)
        self._ck = None
        self.pos = tok.end

    def _end_at_tool_call(self, tok: Token) -> None:
        """Rule 3: a tool call ends the implicit, template-opened block; it stays visible."""
        self._cut(tok.start)
        st = self.st
        if st.content or tok.start > 0:
            kind = LeakKind.UNCLOSED if st.content else LeakKind.EMPTY_BLOCK
            self._finding(kind, st.opener.tag if st.opener else "", 0, tok.start, st.block)
        _upd(self.st, mode=self._after_removal(), seg=tok.start, depth=0, prose=0, opener=None,
             first_delim=True, window=None)
        self._ck = None
        self.pos = tok.end

    def _right_after_block(self, tok: Token, w: str, off: int) -> bool:
        """True when only whitespace stands between the last removed reasoning block and `tok`
        (looked at within `context` characters, so every chunking decides alike)."""
        st = self.st
        lo = st.after_block
        if lo < 0 or st.visible_from != lo or tok.start - lo > self.context:
            return False
        gap = w[lo - off : tok.start - off] if lo - off >= 0 else self.text_at(lo, tok.start)
        return not _NON_WS.search(gap)

    def _trim_before(self, tok: Token) -> None:
        """Rule 7 inside an unwrapped answer: the whitespace before its closer is trimmed."""
        if not self.policy.trim:
            return
        start = self._trailing_ws_start(tok.start)
        if start < tok.start:
            self._cut(start)
            self._add(start, tok.start, Label.TRIMMED)
            _upd(self.st, seg=tok.start)

    def _trailing_ws_start(self, end: int) -> int:
        """Where the run of whitespace ending at `end` starts (not before the open segment),
        read incrementally so a long answer is read once."""
        st = self.st
        if self._ws_read < st.seg or self._ws_start < st.seg or self._ws_read > end:
            self._ws_start = self._ws_read = st.seg
        text = self.text_at(self._ws_read, end)
        body = len(text.rstrip(WS_CHARS))
        if body:
            self._ws_start = self._ws_read + body
        self._ws_read = end
        return self._ws_start

    def _cut_point(self) -> int:
        """Where the cut at the end of a scan may go: to `pos`, except that inside an
        unwrapped answer trailing whitespace waits (its closer may follow, rule 7)."""
        st = self.st
        if st.answer is None or not self.policy.trim or st.mode is not Mode.OUT:
            return self.pos
        return self._trailing_ws_start(self.pos)

    def _orphan_split(self, tok: Token) -> None:
        """Rule 4: everything before the first, glued close tag was reasoning."""
        st = self.st
        self._cut(tok.start)
        block = st.block + 1
        window = st.window or 0
        content = False
        for n, span in enumerate(self.spans):
            if span.start >= window:
                self.spans[n] = RawSpan(span.start, span.end, Label.THINKING, block)
                content = content or bool(_NON_WS.search(self.text_at(span.start, span.end)))
        self._add(tok.start, tok.end, Label.DELIMITER)
        kind = LeakKind.ORPHAN_CLOSE if content else LeakKind.STRAY_CLOSE
        self._finding(kind, tok.tag, window if content else tok.start, tok.end, block)
        # a prose opener in the text that became reasoning no longer awaits its close
        _upd(self.st, seg=tok.end, first_delim=True, window=None, block=block, shown=False,
             mode=Mode.LEAD, prose=0, after_block=tok.end)
        self.pos = tok.end

    def _start_detok(self, tok: Token) -> None:
        self._ck = _Checkpoint(copy(self.st), tok.start, len(self.spans), len(self.findings), "literal")
        self._cut(tok.start)
        self._add(tok.start, tok.end, Label.DELIMITER)
        st = self.st
        _upd(self.st, mode=Mode.DETOK, seg=tok.end, first_delim=True, window=None,
                          block=st.block + 1, opener=Token(Kind.OPEN, tok.start, tok.end, "harmony"),
                          leading=True, content=False)
        self.pos = tok.end

    def _end_detok(self, tok: Token) -> None:
        self._close_block(tok)

    def _skip_code(self, tok: Token, w: str, off: int, final: bool) -> bool:
        """Rule 2: a fenced block or inline code span is literal text."""
        if tok.kind is Kind.FENCE:
            _upd(self.st, fence=tok.tag)
            self.pos = tok.end
            return True
        line = self._code_line(w, off, tok, final)
        if line is None:
            self.pos = tok.start  # the line's end decides, and it is not here yet
            self._await = (_NEWLINE, self.length)
            return False
        ends = line[2].get(tok.end - tok.start, ())
        i = bisect_left(ends, tok.end + tok.end - tok.start)
        self.pos = ends[i] if i < len(ends) else tok.end
        return True

    def _in_fence(self, fence: str, w: str, off: int, i: int, final: bool) -> bool:
        """Skip to the end of the fenced block; False when its end is not in the text yet."""
        closer = _fence_closer(fence)
        eol = w.find("\n", i)
        m = closer.search(w, eol) if eol >= 0 else None
        if m is not None and (m.group().endswith("\n") or final):
            self.pos = m.end() + off
            _upd(self.st, fence=None)
            return True
        if final:
            self.pos = len(w) + off
            _upd(self.st, fence=None)
            return True
        last_nl = w.rfind("\n", i)
        if last_nl >= 0 and _fence_closer_start(fence).fullmatch(w, last_nl + 1) is not None:
            self.pos = last_nl + off  # a closing line may be arriving: look at it again
        else:
            self.pos = len(w) + off  # this line cannot close the fence: go on from its end
        return False

    def _code_line(self, w: str, off: int, tok: Token, final: bool,
                   ) -> tuple[int, int, dict[int, list[int]]] | None:
        """The line holding `tok`, with the ends of its backtick runs by run length.

        Read once per line, so a long line of many code spans stays linear; None while
        the line's end has not arrived.
        """
        cached = self._line_ticks
        if cached is not None and cached[0] <= tok.start and tok.end <= cached[1]:
            return cached
        eol = w.find("\n", tok.end - off)
        if eol < 0 and not final:
            return None
        line_end = eol if eol >= 0 else len(w)
        line_start = w.rfind("\n", 0, tok.start - off) + 1
        runs: dict[int, list[int]] = {}
        for m in _TICKS.finditer(w, line_start, line_end):
            runs.setdefault(m.end() - m.start(), []).append(m.end() + off)
        self._line_ticks = (line_start + off, line_end + off, runs)
        return self._line_ticks

    # -- holdback and the end of the text ----------------------------------------------------

    def _end_of_last_close(self, start: int) -> int:
        """Where the last token that could close a block ends, at or after `start`."""
        text = self.text_at(start, self.length)
        last = 0
        for m in self.grammar.pattern.finditer(text):
            if m.lastgroup != "ticks" and m.lastgroup != "tildes" and \
                    self.grammar.token(m, start).kind in _CLOSING:
                last = m.end()
        return start + last

    def _close_window_past_holdback(self) -> None:
        st = self.st
        if self.holdback is not None and st.window is not None and self.pos - st.window > self.holdback:
            _upd(self.st, window=None)

    def _end_of_text(self) -> bool:
        """Settle what the end of the text decides; False if a rollback needs another scan."""
        st = self.st
        if st.mode in (Mode.IN, Mode.DETOK):
            ck = self._ck
            if ck is not None:
                self.st, self.pos = ck.state, ck.pos
                del self.spans[ck.spans :]
                del self.findings[ck.findings :]
                self._overrides[ck.pos] = ck.override
                self._ck = None
                if ck.override == "literal" and st.mode is Mode.IN:
                    self._finding(LeakKind.UNCLOSED_INLINE, st.opener.tag if st.opener else "",
                                  ck.pos, st.opener.end if st.opener else ck.pos)
                    if self._closes_end is None:
                        self._closes_end = self._end_of_last_close(ck.pos)
                self._rescanned += self.length - ck.pos
                if self._rescanned > 4 * self.length + _RESCAN_SLACK:
                    # a hostile text of nested, half-closed openers: keep the work linear;
                    # every later mid-text opener stays text
                    self._closes_end = min(self._closes_end or ck.pos, ck.pos)
                return True
            self.pos = self.length
            self._cut()
            opener = st.opener
            start = opener.start if opener is not None else 0
            tag = opener.tag if opener is not None else ""
            kind = LeakKind.UNCLOSED if self.st.content else LeakKind.EMPTY_BLOCK
            self._finding(kind, tag, start, self.length, st.block)
            _upd(self.st, mode=Mode.OUT, seg=self.length)
            return False
        self.pos = self.length
        self._cut()
        _upd(self.st, window=None)
        return False
