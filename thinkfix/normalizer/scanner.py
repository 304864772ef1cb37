"""The incremental scanner shared by `normalize` and `StreamNormalizer`.

It turns text into raw spans (visible, thinking, delimiter) in order. Batch
normalization is this scanner fed the whole text at once; streaming feeds it
chunk by chunk. Decisions that need to see further ahead (rule 4's orphan
close, rule 5's mid-text opener that may never close, rule 6's nesting) are
made speculatively from a checkpoint and undone at `finish` if the text ends
without confirming them, so every chunking reaches the same spans.

This module holds the scan loop (one unit per mode), the frontier of final spans and the end
of the text; the rules and the stream's shortcuts live below it (see `scan_state`).
"""

from __future__ import annotations

import re

from thinkfix.normalizer.grammar import (
    ANSWER_CLOSE,
    ANSWER_OPEN,
    CALL,
    CLOSE,
    CONTEXT,
    DETOK_CLOSE,
    DETOK_OPEN,
    EMPTY,
    END,
    MARKER,
    OPEN,
    VISIBLE_HEADER,
    Token,
    grammar_for,
)
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.normalizer.policy import Policy, harmony_model
from thinkfix.normalizer.scan_shortcuts import PlainChunks
from thinkfix.normalizer.scan_state import (
    CLOSING,
    DETOK,
    IN,
    INSIDE,
    LEAD,
    LITERAL,
    NON_WS,
    OUT,
    RUN_GROUPS,
    RawSpan,
    ScanState,
)

_RESCAN_SLACK = 1 << 16
#: Kinds that may start the text as delimiters (anything else there is visible text).
_LEAD_KINDS = frozenset(
    {
        OPEN,
        EMPTY,
        CLOSE,
        END,
        MARKER,
        VISIBLE_HEADER,
        ANSWER_OPEN,
        ANSWER_CLOSE,
        CALL,
    }
)


class Scanner(PlainChunks):
    """Raw spans of a text fed in pieces; `text_at` reads back what was fed."""

    def __init__(
        self,
        policy: Policy,
        *,
        start_in_reasoning: bool = False,
        holdback: int | None = None,
        followed_by_tool_call: bool = False,
        model: str | None = None,
    ) -> None:
        self.policy = policy
        self.grammar = grammar_for(policy)
        # text kept before the scan position (the scan window itself starts CONTEXT
        # before it): enough to read back the longest unfinished delimiter
        self.context = max(CONTEXT, self.grammar.max_token)
        self.holdback = holdback
        self.start_in_reasoning = start_in_reasoning
        # rule 4's evidence from outside the text: a tool call follows it in its message
        self.followed_by_tool_call = followed_by_tool_call
        self.detok = policy.harmony and harmony_model(model)
        self._ws_start = self._ws_read = 0
        self.spans = []
        self.findings = []
        self.pos = 0
        self._init_text()
        self._ck = None
        self._overrides = {}
        self._closes_end = None
        self._rescanned = 0  # characters scanned again after rollbacks (bounded: see _end_of_text)
        self._await = None
        self._line_ticks = None
        if start_in_reasoning:
            self.st = ScanState(
                IN,
                depth=1,
                block=0,
                leading=True,
                first_delim=True,
                window=None,
                opener=Token(OPEN, 0, 0, "<think>", xml=True),
            )
        else:
            self.st = ScanState(LEAD)

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
        spans = self.spans
        if spans and spans[-1].end <= limit:
            n = len(spans)  # they end in order: all of them (the end of a batch text)
        else:
            n = 0
            for span in spans:
                if span.end > limit:
                    break
                n += 1
        ck = self._ck
        if ck is not None:
            n = min(n, ck.spans)
        if n == 0:
            return []  # the common case while a window is open: copy nothing
        out, self.spans = self.spans[:n], self.spans[n:]
        if ck is not None:
            self._ck = ck._replace(spans=ck.spans - n)
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
        """Read tokens until the text runs out or a decision needs text not fed yet."""
        if self._await is not None:
            pattern, since = self._await
            if not final and pattern.search(self.text_at(since, self.length)) is None:
                self._await = (pattern, self.length)
                return
            self._await = None
        w, off = self._window()
        while True:
            st = self.st
            if st.mode is LEAD:
                going = self._scan_lead(w, off, final)
            elif st.mode is DETOK:
                going = self._scan_detok(w, off)
            elif st.fence is not None:
                going = self._in_fence(st.fence, w, off, self.pos - off, final)
            else:
                going = self._scan_text(w, off, final)
            if not going:
                return

    def _scan_lead(self, w: str, off: int, final: bool) -> bool:
        """Nothing but whitespace so far: the first non-blank decides what the text starts with."""
        m = NON_WS.search(w, self.pos - off)
        if m is None:
            self.pos = off + len(w)
            return False
        j = m.start()
        self.pos = off + j
        g = self.grammar
        if self.detok and self._overrides.get(self.pos) is not LITERAL:
            tail = w[j : j + len(DETOK_OPEN)]
            if tail == DETOK_OPEN:
                self._start_detok(Token(OPEN, off + j, off + j + len(tail), DETOK_OPEN))
                return True
            if not final and DETOK_OPEN.startswith(tail) and j + len(tail) == len(w):
                return False
        tm = g.pattern.match(w, j)
        if tm is None and not final and g.partial_start(w, j) == j:
            return False
        if tm is not None and not final and (tm.end() == len(w) or g.may_grow(tm, w)):
            self._await_run(tm, len(w))
            return False
        tok = g.token(tm, off) if tm is not None else None
        self.st.mode = OUT
        if (
            tok is not None
            and tok.kind in _LEAD_KINDS
            and not self._on_token(tok, w, off, final, lead=True)
        ):
            if self.pos == tok.start:
                self.st.mode = LEAD  # it waits, still the first thing
            return False
        return True

    def _scan_detok(self, w: str, off: int) -> bool:
        """Inside a detokenised Harmony analysis: only its `assistantfinal` ends it."""
        i = self.pos - off
        k = w.find(DETOK_CLOSE, i)
        if k < 0:
            keep = len(DETOK_CLOSE) - 1
            self.pos = off + max(i, len(w) - keep)
            return False
        self._close_block(Token(CLOSE, off + k, off + k + len(DETOK_CLOSE), DETOK_CLOSE))
        return True

    def _scan_text(self, w: str, off: int, final: bool) -> bool:
        """Visible text or a block's reasoning: on to the next token, unless it may still grow."""
        i = self.pos - off
        end = len(w)
        g = self.grammar
        m = g.pattern.search(w, i)
        if m is not None and not final and m.start() > i and "<" not in m.group():
            # a delimiter begun before the match may still finish around it
            # (`<think\n` + "```\n" + `x>` is one opener): wait at its start. A match
            # with a `<` cannot sit inside an unfinished tag's attributes.
            partial = g.partial_start(w, i)
            if partial is not None and partial < m.start():
                self.pos = off + partial
                return False
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
            return False
        return self._on_token(g.token(m, off), w, off, final, lead=False)

    def _await_run(self, m: re.Match[str], end: int) -> None:
        """A code-marker run that reaches the end of the text: nothing changes until it ends."""
        if m.end() == end and m.lastgroup in RUN_GROUPS:
            self._await = (RUN_GROUPS[m.lastgroup], self.length)

    # -- holdback and the end of the text ----------------------------------------------------

    def _end_of_last_close(self, start: int) -> int:
        """Where the last token that could close a block ends, at or after `start`."""
        text = self.text_at(start, self.length)
        last = 0
        for m in self.grammar.pattern.finditer(text):
            if m.lastgroup not in RUN_GROUPS and self.grammar.token(m, start).kind in CLOSING:
                last = m.end()
        return start + last

    def _close_window_past_holdback(self) -> None:
        st = self.st
        if (
            self.holdback is not None
            and st.window is not None
            and self.pos - st.window > self.holdback
        ):
            st.window = None

    def _end_of_text(self) -> bool:
        """Settle what the end of the text decides; False if a rollback needs another scan."""
        st = self.st
        if st.mode in INSIDE:
            if self._ck is not None:
                self._roll_back(st)
                return True
            self.pos = self.length
            self._cut()
            opener = st.opener
            start = opener.start if opener is not None else 0
            tag = opener.tag if opener is not None else ""
            kind = LeakKind.UNCLOSED if st.content else LeakKind.EMPTY_BLOCK
            self._finding(kind, tag, start, self.length, st.block)
            st.mode, st.seg = OUT, self.length
            return False
        self.pos = self.length
        self._cut()
        st.window = None
        return False

    def _roll_back(self, st: ScanState) -> None:
        """The text ended inside a speculative block: back to its checkpoint, where the token
        now means what the checkpoint says (text, or the block's close)."""
        ck = self._ck
        assert ck is not None
        self.st, self.pos = ck.state, ck.pos
        del self.spans[ck.spans :]
        del self.findings[ck.findings :]
        self._overrides[ck.pos] = ck.override
        self._ck = None
        if ck.override is LITERAL and st.mode is IN:
            self._finding(
                LeakKind.UNCLOSED_INLINE,
                st.opener.tag if st.opener else "",
                ck.pos,
                st.opener.end if st.opener else ck.pos,
            )
            if self._closes_end is None:
                self._closes_end = self._end_of_last_close(ck.pos)
        self._rescanned += self.length - ck.pos
        if self._rescanned > 4 * self.length + _RESCAN_SLACK:
            # a hostile text of nested, half-closed openers: keep the work linear;
            # every later mid-text opener stays text
            self._closes_end = min(self._closes_end or ck.pos, ck.pos)
