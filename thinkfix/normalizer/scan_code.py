"""Rule 2: code is literal text. A fenced block or an inline code span is skipped whole, and a
code marker right after removed text is judged on the visible text around it."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from thinkfix.normalizer.grammar import (
    CLOSE,
    END,
    FENCE,
    TEXT,
    TICKS,
    Token,
)
from thinkfix.normalizer.scan_actions import Actions
from thinkfix.normalizer.scan_state import (
    IN,
    NEWLINE,
    RUN_GROUPS,
)

_TICKS = re.compile(r"`+")
#: Tags that end a fence when glued to its closing run, inside a reasoning block.
_FENCE_CLOSERS = frozenset({CLOSE, END})


@lru_cache(maxsize=32)
def _fence_closer(fence: str) -> re.Pattern[str]:
    return re.compile(rf"\n[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?:\r?\n|\Z)")


@lru_cache(maxsize=32)
def _fence_run(fence: str) -> re.Pattern[str]:
    """A line that starts with a run long enough to close the fence."""
    c = re.escape(fence[0])
    return re.compile(rf"\n[ ]{{0,3}}{c}{{{len(fence)},}}(?!{c})")


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
            # up to three spaces of indentation, as a fence line allows (`_at_line_start`)
            line_start = st.gap_indent is not None and st.gap_indent + len(gap) <= 3
        if line_start and len(tok.tag) >= 3:
            kind = FENCE
        else:
            kind = TICKS if tok.tag[0] == "`" else TEXT
        return tok if kind is tok.kind else Token(kind, tok.start, tok.end, tok.tag)

    def _pass_marker(self, tok: Token) -> None:
        """A special token inside a block is reasoning, but were the block text, the visible
        text would drop it (a marker is invisible): note where, for `_after_marker_code`."""
        st = self.st
        if st.marker_end != tok.start and not self._trimmed_gap(st.marker_end, tok.start):
            st.marker_indent = self._indent_before(tok.start)  # as `_add` sets gap_indent
        st.marker_end = self.pos = tok.end

    def _after_marker_code(self, tok: Token, w: str, off: int) -> Token:
        """A code marker right after a special token inside a block: whether it starts a line
        is judged without the token, as it is outside a block (`_after_removal_code`), so a
        block the end of the text turns back into text reads its code as it did inside."""
        st = self.st
        gap = tok.start - st.marker_end
        if gap < 0 or gap > 3 or self._look_back(st.marker_end, tok.start, w, off).strip(" "):
            return tok  # a newline or text in between: the original line rules
        if st.marker_indent is not None and st.marker_indent + gap <= 3 and len(tok.tag) >= 3:
            kind = FENCE
        else:
            kind = TICKS if tok.tag[0] == "`" else TEXT
        return tok if kind is tok.kind else Token(kind, tok.start, tok.end, tok.tag)

    def _skip_code(self, tok: Token, w: str, off: int, final: bool) -> bool:
        """A fence opens a code block; an inline span skips to its matching run (False while
        the line that decides has not arrived)."""
        if tok.kind is FENCE:
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
        """Skip to the end of the fenced block; False when its end is not in the text yet.

        Inside a reasoning block a fence also ends at a closing run glued to a close tag
        (```` ```</think>Answer ````): models close their code and their reasoning on one
        line, and reading that line as code would hide the answer in the reasoning."""
        eol = w.find("\n", i)
        for m in _fence_run(fence).finditer(w, eol) if eol >= 0 else ():
            end = self._fence_end(fence, m, w, off, final)
            if end is None:
                self.pos = m.start() + off  # the line that decides is still arriving
                return False
            if end >= 0:
                self.pos = end + off
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

    def _fence_end(self, fence: str, m: re.Match[str], w: str, off: int, final: bool) -> int | None:
        """Where the code ends if the closing run `m` ends the fence: -1 when it does not,
        None while the text that decides has not arrived.

        Inside a reasoning block, a run glued to a tag that closes the block ends the fence
        too: the tag takes the run out of the visible text. Outside one, the tag stays
        code: whether it would go (rule 4) depends on what came before it, which a second
        normalization of the result no longer sees, so it could not decide alike."""
        line = _fence_closer(fence).match(w, m.start())
        if line is not None:
            return line.end() if line.group().endswith("\n") or final else None
        if self.st.mode is not IN:
            return -1
        j, g = m.end(), self.grammar
        tm = g.pattern.match(w, j)
        if tm is None:
            return None if not final and g.partial_start(w, j) == j else -1
        if tm.lastgroup in RUN_GROUPS:
            return -1
        if not final and (tm.end() == len(w) or g.may_grow(tm, w)):
            return None
        return j if g.token(tm, off).kind in _FENCE_CLOSERS else -1

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
