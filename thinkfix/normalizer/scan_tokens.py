"""What a delimiter means where it stands: inside a reasoning block or outside one, at the
start of the text or after visible text, glued to an unfinished delimiter or on its own.

Each case decides and hands over to an action (`scan_actions`); a case that needs text not
yet fed leaves `pos` at the token and returns False.
"""

from __future__ import annotations

from thinkfix.normalizer.grammar import (
    ANSWER_CLOSE,
    ANSWER_OPEN,
    CALL,
    CLOSE,
    EMPTY,
    END,
    MARKER,
    MAX_ATTRS,
    OPEN,
    TEXT,
    TOOL_CALL,
    VISIBLE_HEADER,
    Token,
)
from thinkfix.normalizer.kinds import (
    DELIMITER,
    LeakKind,
)
from thinkfix.normalizer.scan_code import CodeRules
from thinkfix.normalizer.scan_state import (
    CODE_KINDS,
    IN,
    LITERAL,
    NON_WS,
    OUT,
    PROSE_BEFORE,
    RUN_GROUPS,
    Override,
)

#: Kinds that end the visible text before them and begin a new answer (or end one).
_MARKERS = frozenset({MARKER, VISIBLE_HEADER, END})


class TokenRules(CodeRules):
    """The grammar's rules per token; `w` is the scan window, whose first character is at `off`."""

    # What rollbacks decided: the token at an offset is text, or closes its block.
    _overrides: dict[int, Override]
    # Set once the end of the text is known and a mid-text opener came back unclosed:
    # openers after this offset cannot close either, so they are text without a rescan.
    _closes_end: int | None

    def _on_token(self, tok: Token, w: str, off: int, final: bool, *, lead: bool) -> bool:
        """Act on one token; False when more text is needed first (pos is left at the token)."""
        st = self.st
        kind = tok.kind
        if kind in CODE_KINDS:
            if st.mode is OUT and st.visible_from > 0:
                tok = self._after_removal_code(tok, w, off)
            elif st.mode is IN and st.marker_end >= 0:
                tok = self._after_marker_code(tok, w, off)
            if tok.kind is TEXT:
                self.pos = tok.end
                return True
            return self._skip_code(tok, w, off, final)
        override = self._overrides.get(tok.start) if self._overrides else None
        if override is LITERAL:
            self.pos = tok.end
            return True
        if kind is TOOL_CALL:
            # whoever opened the leading block, the template or the model (rule 3)
            if st.mode is IN and st.leading:
                self._end_at_tool_call(tok)
            else:
                self.pos = tok.end  # text, and no delimiter: rule 4 still waits for one
            return True
        if st.mode is IN:
            return self._in_block(tok, w, off, override)
        return self._outside(tok, w, off, final, lead)

    def _prose_mention(self, tok: Token, w: str, off: int) -> bool:
        """A tag after a space or tab (`use the <think> tag`) may be prose, not a delimiter."""
        return tok.xml and w[tok.start - off - 1] in PROSE_BEFORE

    # -- outside a block --------------------------------------------------------------------

    def _outside(self, tok: Token, w: str, off: int, final: bool, lead: bool) -> bool:
        joins = False if lead else self._after_unfinished(tok, w, off, final)
        if joins is None:
            self.pos = tok.start
            return False
        if joins:
            # text, but still the first delimiter: a close after it is stray, not an orphan
            self.st.first_delim, self.st.window = True, None
            self.pos = tok.end
            return True
        kind = tok.kind
        if kind is OPEN or kind is EMPTY:
            self._cut(tok.start)
            prose = not lead and self.st.shown and self._prose_mention(tok, w, off)
            if kind is OPEN:
                return self._outside_open(tok, prose, lead)
            if not prose:
                self._remove(tok, LeakKind.EMPTY_BLOCK)
            self.pos = tok.end
            return True
        if kind is CALL:
            self._cut(tok.start)
            self._open_block(tok, leading=True)  # a special token: never prose, needs no close
            return True
        if kind in _MARKERS:
            return self._outside_marker(tok)
        if kind is ANSWER_OPEN:
            return self._outside_answer_open(tok, w, off)
        if kind is ANSWER_CLOSE:
            return self._outside_answer_close(tok)
        return self._outside_close(tok, w, off, final, lead)

    def _outside_open(self, tok: Token, prose: bool, lead: bool) -> bool:
        st = self.st
        if prose:
            st.prose += 1
            self.pos = tok.end
            return True
        # an opener with nothing visible before it is as structural as a leading one
        leading = lead or not st.shown
        if not leading and self._closes_end is not None and tok.start >= self._closes_end:
            # what the rollback of its unclosed block would decide, without the rescan
            self._finding(LeakKind.UNCLOSED_INLINE, tok.tag, tok.start, tok.end)
            self.pos = tok.end
            return True
        self._open_block(tok, leading=leading)
        return True

    def _outside_marker(self, tok: Token) -> bool:
        """A marker or header ends the visible text before it; an answer may follow."""
        if tok.tag == self.st.answer:
            self._trim_before(tok)
        self._remove(tok, LeakKind.MARKER)
        self.st.answer = self.grammar.answer_closers.get(tok.tag)
        return True

    def _outside_answer_open(self, tok: Token, w: str, off: int) -> bool:
        if not self._right_after_block(tok, w, off):
            self.pos = tok.end  # anywhere else an answer wrapper is text
            return True
        self._remove(tok, LeakKind.MARKER)
        self.st.answer = self.grammar.answer_closers[tok.tag]
        return True

    def _outside_answer_close(self, tok: Token) -> bool:
        if tok.tag != self.st.answer:
            self.pos = tok.end
            return True
        self._trim_before(tok)
        self._remove(tok, LeakKind.MARKER)
        self.st.answer = None
        return True

    def _outside_close(self, tok: Token, w: str, off: int, final: bool, lead: bool) -> bool:
        """A close tag outside any block: a prose mention, a stray close, or rule 4's orphan."""
        st = self.st
        if tok.xml and st.prose:
            st.prose -= 1
            self.pos = tok.end
            return True
        nxt_i = tok.end - off
        if tok.xml and not lead and nxt_i >= len(w) and not final:
            self.pos = tok.start
            return False
        if (
            not lead
            and self._prose_mention(tok, w, off)
            and nxt_i < len(w)
            and w[nxt_i] in PROSE_BEFORE
        ):
            self.pos = tok.end
            return True  # `Use the </think> tag`: prose
        if (
            self.holdback is not None
            and st.window is not None
            and tok.start - st.window > self.holdback
        ):
            st.window = None
        splits = self._splits(tok, w, off, final)
        if splits is None:
            self.pos = tok.start
            self._await = (NON_WS, self.length)
            return False
        if splits:
            self._orphan_split(tok)
        else:
            self._remove(tok, LeakKind.STRAY_CLOSE)
        return True

    def _right_after_block(self, tok: Token, w: str, off: int) -> bool:
        """True when only whitespace stands between the last removed reasoning block and `tok`
        (looked at within `context` characters, so every chunking decides alike)."""
        st = self.st
        lo = st.after_block
        if lo < 0 or st.visible_from != lo or tok.start - lo > self.context:
            return False
        return not NON_WS.search(self._look_back(lo, tok.start, w, off))

    # -- inside a block ---------------------------------------------------------------------

    def _in_block(self, tok: Token, w: str, off: int, override: Override | None) -> bool:
        kind = tok.kind
        if kind is OPEN:
            self._in_block_open(tok, w, off)
            return True
        if kind is MARKER:
            self._pass_marker(tok)
            return True
        if kind in (EMPTY, ANSWER_OPEN, ANSWER_CLOSE):
            self.pos = tok.end
            return True
        if kind is CALL:
            # a new Harmony message: this block ends where the call's own block begins
            self._close_block(Token(CLOSE, tok.start, tok.start, tok.tag))
            self._open_block(tok, leading=True)
            return True
        # CLOSE, END or VISIBLE_HEADER: closes (a level of) the block
        st = self.st
        if tok.xml and st.prose and override is not Override.CLOSE:
            if st.leading:
                # rule 6: a leading block that never closes closes at its last close tag,
                # even one that balanced a prose mention (`<think>no <think> tags</think>A`)
                self._cut(tok.start)
                self._checkpoint(tok.start, Override.CLOSE)
            st.prose -= 1
            self.pos = tok.end
            return True
        if st.depth > 1 and override is not Override.CLOSE:
            # cut at the token, not at `pos`: where the last scan stopped depends on the
            # chunking, and the checkpoint's spans must not
            self._cut(tok.start)
            self._checkpoint(tok.start, Override.CLOSE)
            st.depth -= 1
            self.pos = tok.end
            return True
        self._close_block(tok)
        return True

    def _in_block_open(self, tok: Token, w: str, off: int) -> None:
        """An opener inside a block nests (rule 6), or is prose; the template's own opener
        repeated at the start of an implicit block is just removed."""
        self._cut(tok.start)
        st = self.st
        if (
            self.start_in_reasoning
            and st.leading
            and st.block == 0
            and not st.content
            and st.depth == 1
        ):
            self._add(tok.start, tok.end, DELIMITER)
            st.seg = tok.end
        elif self._prose_mention(tok, w, off):
            st.prose += 1
        else:
            st.depth += 1
        self.pos = tok.end

    # -- a token glued to an unfinished delimiter ---------------------------------------------

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
        before = self._look_back(lo, tok.start, w, off)
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
            self.st.guard = guard + off
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
            if tm.lastgroup in RUN_GROUPS:
                return "plain", stop  # code is never removed
            if not final and (tm.end() == len(w) or g.may_grow(tm, w)):
                return None
            tokens, j = True, tm.end()
            opens = opens or g.token(tm, 0).kind is OPEN
        if not final and limit == len(w) and limit - i <= MAX_ATTRS:
            return None
        return ("tokens", bound) if tokens else ("none", None)
