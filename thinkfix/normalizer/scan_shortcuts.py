"""The shortcuts a stream takes: a chunk with no candidate character needs no scan when the
scanner's state already says what it is (visible text, or reasoning inside a block)."""

from __future__ import annotations

from thinkfix.normalizer.grammar import DETOK_OPEN
from thinkfix.normalizer.kinds import (
    THINKING,
    VISIBLE,
    Label,
)
from thinkfix.normalizer.scan_state import (
    IN,
    NON_WS,
    OUT,
    Mode,
)
from thinkfix.normalizer.scan_tokens import TokenRules


class PlainChunks(TokenRules):
    """Questions `Pipeline` asks before feeding a plain chunk, and the states it may set."""

    def skip_plain(self, chunk: str) -> Label | None:
        """Take a chunk with no candidate character without scanning it.

        Returns the label it gets, or None when the scanner must look at it.
        """
        st = self.st
        if (
            st.mode not in (OUT, IN)
            or st.fence is not None
            or self.pos != self.length
            or st.answer is not None
            or self.grammar.has_candidate(chunk)
        ):
            return None
        self.feed(chunk)
        self.pos = self.length
        if st.mode is IN:
            if not st.content and NON_WS.search(chunk):
                st.content = True
            return THINKING
        if not st.shown and NON_WS.search(chunk):
            st.shown = True
        return VISIBLE

    def lead_is_visible(self, chunk: str) -> bool:
        """True when text starting with `chunk` starts with visible text: no candidate
        character, no leading whitespace, and no detokenised Harmony header."""
        return (
            NON_WS.match(chunk) is not None
            and not self.grammar.has_candidate(chunk)
            and not (self.detok and chunk[0] == DETOK_OPEN[0])
        )

    def open_visible(self) -> None:
        """The state after reading a first chunk that `lead_is_visible`, with holdback 0."""
        st = self.st
        st.mode, st.shown, st.window = OUT, True, None

    def plain_mode(self) -> Mode | None:
        """OUT or IN when a chunk with no candidate character may bypass the scan entirely."""
        st = self.st
        if (
            st.mode in (OUT, IN)
            and st.fence is None
            and self.pos == self.length
            and self._ck is None
            and st.window is None
            and not self.spans
            and st.answer is None
        ):
            return st.mode
        return None

    def pass_through(self) -> None:
        """The caller emitted everything fed so far itself: start the next segment here."""
        self.st.seg = self.length

    def waits_on_plain(self) -> bool:
        """True when a chunk with no candidate character would be taken and held, unread."""
        st = self.st
        return (
            st.mode in (OUT, IN)
            and st.fence is None
            and self.pos == self.length
            and not self.settled()
        )

    def settled(self) -> bool:
        """True when nothing fed so far waits on what comes next."""
        return self._ck is None and self.st.window is None and not self.spans
