"""Rule 2: code is literal text. A fenced block or an inline code span is skipped whole, and a
code marker right after removed text is judged on the visible text around it."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from thinkfix.normalizer.grammar import Kind, Token
from thinkfix.normalizer.scan_actions import Actions
from thinkfix.normalizer.scan_state import NEWLINE

_TICKS = re.compile(r"`+")


@lru_cache(maxsize=32)
def _fence_closer(fence: str) -> re.Pattern[str]:
    return re.compile(rf"\n[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?:\r?\n|\Z)")


@lru_cache(maxsize=32)
def _fence_closer_start(fence: str) -> re.Pattern[str]:
    """The beginning of a line that could still become the fence's closing line."""
    return re.compile(rf"[ ]{{0,3}}(?:{re.escape(fence[0])}+[ \t]*\r?)?")


class CodeRules(Actions):
    """Fences and backtick spans; `w` is the scan window, whose first character is at `off`."""

    # the line of the last inline code span: its start, end, and backtick runs by length
    _line_ticks: tuple[int, int, dict[int, list[int]]] | None

    def _after_removal_code(self, tok: Token, w: str, off: int) -> Token:
        """A code marker that follows removed text: whether it starts a line is judged on the
        visible text, which is what normalizing the result again will read."""
        st = self.st
        lo = st.visible_from
        if lo > tok.start:
            return tok
        gap = self._look_back(lo, tok.start, w, off)
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

    def _skip_code(self, tok: Token, w: str, off: int, final: bool) -> bool:
        """A fence opens a code block; an inline span skips to its matching run (False while
        the line that decides has not arrived)."""
        if tok.kind is Kind.FENCE:
            self.st.fence = tok.tag
            self.pos = tok.end
            return True
        line = self._code_line(w, off, tok, final)
        if line is None:
            self.pos = tok.start  # the line's end decides, and it is not here yet
            self._await = (NEWLINE, self.length)
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
            self.st.fence = None
            return True
        if final:
            self.pos = len(w) + off
            self.st.fence = None
            return True
        last_nl = w.rfind("\n", i)
        if last_nl >= 0 and _fence_closer_start(fence).fullmatch(w, last_nl + 1) is not None:
            self.pos = last_nl + off  # a closing line may be arriving: look at it again
        else:
            self.pos = len(w) + off  # this line cannot close the fence: go on from its end
        return False

    def _code_line(
        self,
        w: str,
        off: int,
        tok: Token,
        final: bool,
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
