"""What the scanner does once a token's meaning is known: cut the text before it into a span,
record a finding, open, close or split a reasoning block, and set a checkpoint to come back to
when a decision is speculative."""

from __future__ import annotations

from copy import copy

from thinkfix.normalizer.grammar import (
    OPEN,
    Token,
)
from thinkfix.normalizer.kinds import (
    DELIMITER,
    THINKING,
    TRIMMED,
    VISIBLE,
    Label,
    LeakKind,
)
from thinkfix.normalizer.policy import OrphanClose
from thinkfix.normalizer.scan_state import (
    DETOK,
    IN,
    INSIDE,
    LEAD,
    LITERAL,
    NON_WS,
    OUT,
    BlockFinding,
    Checkpoint,
    Mode,
    Override,
    RawSpan,
    new_block_finding,
    new_raw_span,
)
from thinkfix.normalizer.scan_text import ChunkText
from thinkfix.normalizer.spans import new_finding
from thinkfix.normalizer.stages import WS_CHARS

_GAP_LOOK = 4096  # a blank gap longer than this between removed runs is taken as kept


class Actions(ChunkText):
    """Spans, findings and block boundaries; each action leaves `pos` after its token."""

    # inside an unwrapped answer, where the trailing run of whitespace starts (it is
    # trimmed if the answer's closer follows it), and how far the text was read for it
    _ws_start: int
    _ws_read: int

    def _checkpoint(self, pos: int, override: Override) -> None:
        """Remember this state: if the text ends unconfirmed, the token at `pos` is
        `override` and the scan goes on from there."""
        self._ck = Checkpoint(copy(self.st), pos, len(self.spans), len(self.findings), override)

    def _add(self, start: int, end: int, label: Label, block: int | None = None) -> None:
        """A span from `start` to `end`, merged into the last one when it continues it (a
        text of many prose mentions held a span per mention until its end: ~5x the text);
        never into one from before the checkpoint, which a roll back keeps."""
        if end <= start:
            return
        spans, ck = self.spans, self._ck
        if spans:
            last_start, last_end, last_label, last_block = spans[-1]
            if (
                last_end == start
                and last_label is label
                and last_block == block
                and (ck is None or len(spans) > ck.spans)
            ):
                spans[-1] = new_raw_span(RawSpan, (last_start, end, label, block))
            else:
                spans.append(new_raw_span(RawSpan, (start, end, label, block)))
        else:
            spans.append(new_raw_span(RawSpan, (start, end, label, block)))
        if label is not VISIBLE:
            st = self.st
            if (
                start != st.visible_from
                and st.mode not in INSIDE
                and not self._trimmed_gap(st.visible_from, start)
            ):
                # a new run of removed text begins here, after visible text
                st.gap_indent = self._indent_before(start)
            st.visible_from = end

    def _indent_before(self, i: int) -> int | None:
        """How many spaces (at most three) stand between the start of its line and offset
        `i`; None when other text does."""
        lo = max(i - 4, self._chunk_base)
        before = self.text_at(lo, i)
        body = before.rstrip(" ")
        indent = len(before) - len(body)
        if indent > 3 or (body and not body.endswith("\n")) or (not body and lo > 0):
            return None
        return indent

    def _trimmed_gap(self, lo: int, hi: int) -> bool:
        """True when the visible text between two removed runs is blank and rule 7 trims it:
        then what decides whether a code marker after them starts a line is the visible text
        before the first run, as normalizing the result again will read it."""
        if not self.policy.trim or hi - lo > _GAP_LOOK or lo < self._chunk_base:
            return False
        return not self.text_at(lo, hi).strip(WS_CHARS)

    def _cut(self, upto: int | None = None) -> None:
        """Turn the open segment, up to `upto` (default: pos), into a span of the current label."""
        st = self.st
        upto = self.pos if upto is None else upto
        if upto <= st.seg:
            return
        if st.mode in INSIDE:
            self._add(st.seg, upto, THINKING, st.block)
            if not st.content and NON_WS.search(self.text_at(st.seg, upto)):
                st.content = True
        else:
            self._add(st.seg, upto, VISIBLE)
            if not st.shown and NON_WS.search(self.text_at(st.seg, upto)):
                st.shown = True
        st.seg = upto

    def _finding(
        self, kind: LeakKind, tag: str, start: int, end: int, block: int | None = None
    ) -> None:
        self.findings.append(
            new_block_finding(BlockFinding, (new_finding(kind, tag, start, end), block))
        )

    def _remove(self, tok: Token, kind: LeakKind) -> None:
        """A delimiter that goes on its own; the text around it stays where it is."""
        self._cut(tok.start)
        self._add(tok.start, tok.end, DELIMITER)
        self._finding(kind, tok.tag, tok.start, tok.end)
        st = self.st
        st.seg, st.first_delim, st.window, st.mode = tok.end, True, None, self._after_removal()
        self.pos = tok.end

    def _after_removal(self) -> Mode:
        """With nothing visible yet, the text after a removed delimiter is leading text again."""
        return OUT if self.st.shown else LEAD

    def _enter_block(self, tok: Token, opener: Token, mode: Mode, *, leading: bool) -> None:
        """The opener `tok` is removed and a new reasoning block starts after it."""
        self._cut(tok.start)
        self._add(tok.start, tok.end, DELIMITER)
        st = self.st
        st.mode, st.seg, st.first_delim, st.window = mode, tok.end, True, None
        st.block += 1
        st.opener, st.leading, st.content = opener, leading, False
        self.pos = tok.end

    def _open_block(self, tok: Token, *, leading: bool) -> None:
        if not leading:
            self._checkpoint(tok.start, LITERAL)
        self._enter_block(tok, tok, IN, leading=leading)
        self.st.depth, self.st.prose = 1, 0

    def _start_detok(self, tok: Token) -> None:
        """A detokenised Harmony `analysis` header: reasoning, if its `assistantfinal` comes."""
        self._checkpoint(tok.start, LITERAL)
        self._enter_block(tok, Token(OPEN, tok.start, tok.end, "harmony"), DETOK, leading=True)

    def _close_block(self, tok: Token) -> None:
        self._cut(tok.start)
        st = self.st
        self._add(tok.start, tok.end, DELIMITER)
        opener = st.opener
        start = opener.start if opener is not None else 0
        kind = LeakKind.BLOCK if st.content else LeakKind.EMPTY_BLOCK
        tag = opener.tag if opener is not None and opener.end > opener.start else tok.tag
        self._finding(kind, tag, start, tok.end, st.block)
        st.mode, st.seg, st.depth, st.prose = self._after_removal(), tok.end, 0, 0
        st.opener, st.after_block = None, tok.end
        self._ck = None
        self.pos = tok.end

    def _end_at_tool_call(self, tok: Token) -> None:
        """Rule 3: a tool call ends the leading block, template- or model-opened; it stays
        visible."""
        self._cut(tok.start)
        st = self.st
        opener = st.opener
        start = opener.start if opener is not None else 0
        if st.content or tok.start > start:
            kind = LeakKind.UNCLOSED if st.content else LeakKind.EMPTY_BLOCK
            self._finding(kind, opener.tag if opener else "", start, tok.start, st.block)
        st.mode, st.seg, st.depth, st.prose = self._after_removal(), tok.start, 0, 0
        st.opener, st.first_delim, st.window = None, True, None
        self._ck = None
        self.pos = tok.end

    def _splits(self, tok: Token, w: str, off: int, final: bool) -> bool | None:
        """Rule 4: True when a close outside any block (not prose) is an orphan whose text
        before it is reasoning, False when it is stray; None while what follows it decides
        and has not arrived."""
        st = self.st
        if st.first_delim or st.window is None or self.policy.orphan_close is OrphanClose.STRIP:
            return False
        if self.holdback is not None and tok.start - st.window > self.holdback:
            return False
        if self.policy.orphan_close is OrphanClose.SPLIT:
            return True
        m = NON_WS.search(w, tok.end - off)
        if m is None and not final:
            return None
        return m is not None or self.followed_by_tool_call

    def _orphan_split(self, tok: Token) -> None:
        """Rule 4: everything before the first, glued close tag was reasoning."""
        st = self.st
        self._cut(tok.start)
        block = st.block + 1
        window = st.window or 0
        content = False
        for n, span in enumerate(self.spans):
            if span.start >= window:
                self.spans[n] = new_raw_span(RawSpan, (span.start, span.end, THINKING, block))
                content = content or bool(NON_WS.search(self.text_at(span.start, span.end)))
        self._add(tok.start, tok.end, DELIMITER)
        kind = LeakKind.ORPHAN_CLOSE if content else LeakKind.STRAY_CLOSE
        self._finding(kind, tok.tag, window if content else tok.start, tok.end, block)
        st.seg, st.first_delim, st.window, st.block = tok.end, True, None, block
        st.shown, st.mode, st.after_block = False, LEAD, tok.end
        st.prose = 0  # a prose opener in the text that became reasoning awaits no close
        # whether a code marker after the removed run starts a line is judged on what stays
        # visible before it, as normalizing the result again will read it
        st.gap_indent = self._indent_before(window)
        self.pos = tok.end

    # -- rule 7 inside an unwrapped answer ------------------------------------------------------

    def _trim_before(self, tok: Token) -> None:
        """The whitespace before an unwrapped answer's closer is trimmed."""
        if not self.policy.trim:
            return
        start = self._trailing_ws_start(tok.start)
        if start < tok.start:
            self._cut(start)
            self._add(start, tok.start, TRIMMED)
            self.st.seg = tok.start

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
        unwrapped answer trailing whitespace waits (its closer may follow, rule 7), also while
        the scanner is back at a leading blank (a tool call that ended an empty block)."""
        st = self.st
        if st.answer is None or not self.policy.trim or st.mode not in (OUT, LEAD):
            return self.pos
        return self._trailing_ws_start(self.pos)
