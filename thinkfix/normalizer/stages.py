"""The stages after the scanner: whitespace trimming (rule 7) and native dedupe (rule 9).

Each stage takes final spans in order, with their text, and may hold a few
back (a run of whitespace whose fate depends on what follows). Batch and
streaming run the very same stages, which is what keeps them equal.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from thinkfix.normalizer.kinds import DUPLICATE, THINKING, TRIMMED, VISIBLE, Label
from thinkfix.normalizer.policy import DEFAULT, NativeMode, Policy
from thinkfix.normalizer.spans import squash_whitespace

_NON_WS = re.compile(r"[^\s\ufeff]")
#: Every character `_NON_WS` treats as blank, for C-speed rstrip: each `str.isspace()`
#: character (none is above U+3000) and the BOM. Written out: finding them by testing the
#: 12,289 characters below U+3001 cost ~3 ms of a process's first normalize (#26 item 3).
WS_CHARS = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class Piece(NamedTuple):
    """A final span with its text (a NamedTuple: ~8 are made per text normalized, and a
    frozen dataclass's `__init__` cost ~1.5 µs each)."""

    start: int
    end: int
    label: Label
    block: int | None
    text: str

    def split(self, at: int) -> tuple[Piece, Piece]:
        """Two pieces at `at` characters into this one."""
        start, end, label, block, text = self
        cut = start + at
        return (
            new_piece(Piece, (start, cut, label, block, text[:at])),
            new_piece(Piece, (cut, end, label, block, text[at:])),
        )

    def relabel(self, label: Label) -> Piece:
        start, end, _, block, text = self
        return new_piece(Piece, (start, end, label, block, text))


#: `Piece(start, end, label, block, text)` from its five fields in order, without the
#: NamedTuple's Python-level `__new__` (a frame per piece, several pieces per text).
new_piece = tuple.__new__


class Trimmer:
    """Rule 7: trim reasoning; drop blank lines and blank segments next to removed blocks."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._vis_state = "start"  # "start" | "after_removed" | "content"
        self._vis_pending: list[Piece] = []
        self._visible_out = False
        self._at_line_start = True  # the visible text so far is empty or ends with a newline
        self._block: int | None = None
        self._think_started = False
        self._think_pending: list[Piece] = []
        # False while the three fields above are as `_end_thinking` leaves them (it need not run)
        self._thinking = False

    def push(self, pieces: list[Piece]) -> list[Piece]:
        if not self.enabled:
            return pieces
        out: list[Piece] = []
        for piece in pieces:
            label = piece.label
            if label is VISIBLE:
                self._visible(piece, out)
                continue
            # removed text: blanks held before it were next to a removed block
            if self._vis_pending:
                out.extend([p.relabel(TRIMMED) for p in self._vis_pending])
                self._vis_pending = []
            self._vis_state = "after_removed"
            if label is THINKING:
                self._reasoning(piece, out)
            else:
                if self._thinking:
                    self._end_thinking(out)
                out.append(piece)
        return out

    def finish(self) -> list[Piece]:
        if not self._vis_pending and not self._think_pending:
            return []
        label = VISIBLE if self._vis_state == "start" else TRIMMED
        out = [p.relabel(label) for p in self._vis_pending]
        out.extend([p.relabel(TRIMMED) for p in self._think_pending])
        self._vis_pending, self._think_pending = [], []
        return sorted(out, key=_start)

    def saw_visible(self, tail: str) -> None:
        """Visible text that bypassed the stage (the stream's fast lane) ended with `tail`."""
        if tail:
            self._visible_out = True
            self._at_line_start = tail.endswith("\n")

    def open_visible(self) -> None:
        """Visible content starts the text (the stream's first chunk took the fast lane)."""
        self._vis_state = "content"

    def visible_flowing(self) -> bool:
        """True when visible text would pass through untouched."""
        return self._vis_state == "content" and not self._think_pending

    def thinking_flowing(self, block: int) -> bool:
        """True when reasoning of `block` not ending in whitespace would pass through untouched."""
        return (
            self._think_started
            and self._block == block
            and not self._think_pending
            and not self._vis_pending
        )

    def _visible(self, piece: Piece, out: list[Piece]) -> None:
        if self._thinking:
            self._end_thinking(out)
        if self._vis_state == "content":
            self._emit_visible(piece, out)
            return
        m = _NON_WS.search(piece.text)
        if m is None:
            self._vis_pending.append(piece)
            return
        pending = self._vis_pending
        if m.start():
            lead, piece = piece.split(m.start())
            pending.append(lead)
        self._vis_pending = []
        if pending:
            if self._vis_state == "start" or not self._at_line_start:
                out.extend(pending)  # mid-line, the whitespace separates words or paragraphs
            else:
                out.extend(self._drop_blank_lines(pending))
        self._vis_state = "content"
        self._emit_visible(piece, out)

    def _emit_visible(self, piece: Piece, out: list[Piece]) -> None:
        out.append(piece)
        if piece.text:
            self._visible_out = True
            self._at_line_start = piece.text.endswith("\n")

    def _drop_blank_lines(self, pending: list[Piece]) -> list[Piece]:
        """Leading whitespace after a removed block: drop through its last newline."""
        text = "".join(p.text for p in pending)
        cut = text.rfind("\n") + 1
        if cut == 0 and not self._visible_out:
            cut = len(text)
        result: list[Piece] = []
        for p in pending:
            if cut >= len(p.text):
                result.append(p.relabel(TRIMMED))
            elif cut > 0:
                head, tail = p.split(cut)
                result.extend((head.relabel(TRIMMED), tail))
            else:
                result.append(p)
            cut -= len(p.text)
        return result

    def _reasoning(self, piece: Piece, out: list[Piece]) -> None:
        """A piece of a reasoning block: its leading and trailing blanks are trimmed."""
        if piece.block != self._block:
            if self._thinking:
                self._end_thinking(out)
            self._block = piece.block
        self._thinking = True
        text = piece.text
        if not self._think_started:
            m = _NON_WS.search(text)
            if m is None:
                out.append(piece.relabel(TRIMMED))
                return
            if m.start():
                lead, piece = piece.split(m.start())
                out.append(lead.relabel(TRIMMED))
                text = piece.text
            self._think_started = True
        body = len(text.rstrip(WS_CHARS))
        tail = None
        if body < len(text):
            piece, tail = piece.split(body)
        if body:
            if self._think_pending:
                out.extend(self._think_pending)
                self._think_pending = []
            out.append(piece)
        if tail is not None:
            self._think_pending.append(tail)

    def _end_thinking(self, out: list[Piece]) -> None:
        if self._think_pending:
            out.extend([p.relabel(TRIMMED) for p in self._think_pending])
            self._think_pending = []
        self._think_started = False
        self._block = None
        self._thinking = False


def _start(piece: Piece) -> int:
    return piece.start


class Deduper:
    """Rule 9: drop extracted reasoning the native field already holds."""

    def __init__(self, policy: Policy, native: str) -> None:
        self.mode = policy.native
        self.native = squash_whitespace(native) if native else ""
        self.active = bool(self.native) and self.mode is not NativeMode.MERGE
        self._held: list[Piece] = []
        self.duplicates: set[int] = set()

    @staticmethod
    def of(policy: Policy, native: str) -> Deduper:
        """The deduper of a text with native reasoning `native`. Without any, the one shared
        inactive deduper: it holds nothing and changes nothing, so texts can share it."""
        return Deduper(policy, native) if native else _INACTIVE

    def push(self, pieces: list[Piece]) -> list[Piece]:
        if not self.active:
            return pieces
        out: list[Piece] = []
        for piece in pieces:
            if piece.label is THINKING:
                if self._held and self._held[0].block != piece.block:
                    out.extend(self._decide())
                self._held.append(piece)
            elif piece.label is TRIMMED and self._held:
                self._held.append(piece)  # trimmed edges inside the block wait with it
            else:
                out.extend(self._decide())
                out.append(piece)
        return out

    @property
    def held(self) -> bool:
        return bool(self._held)

    def finish(self) -> list[Piece]:
        return self._decide()

    def _decide(self) -> list[Piece]:
        held, self._held = self._held, []
        if not held:
            return []
        thinking = [p for p in held if p.label is THINKING]
        segment = squash_whitespace("".join(p.text for p in thinking))
        duplicate = self.mode is NativeMode.NATIVE_ONLY or (segment and segment in self.native)
        if not duplicate:
            return held
        self.duplicates.add(thinking[0].block)  # type: ignore[arg-type]
        return [p.relabel(DUPLICATE) if p.label is THINKING else p for p in held]


_INACTIVE = Deduper(DEFAULT, "")
