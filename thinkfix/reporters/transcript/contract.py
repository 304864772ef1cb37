"""The thinking-delimiter contract of OpenAI/Anthropic-compatible front ends (seed 002).

Front ends that can only stream text set reasoning off with `\\n\\n---\\n` before a
thinking section and `\\n---\\n\\n` after it. The contract is a boolean state machine:
emitting thinking opens the section if it is closed; emitting anything else (answer
text, a progress line, a new turn) closes it if it is open; the end of the stream closes
it. Written once here, because two copies of an open/close closure are how the leading
separator got lost in the first place. Every output is a pure function of the state and
the item, so a caller can stream it piece by piece or render a whole transcript.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

OPEN = "\n\n---\n"
CLOSE = "\n---\n\n"


class Kind(str, Enum):
    """What an emitted piece is; only THINKING goes inside the delimiters."""

    THINKING = "thinking"
    TEXT = "text"  # answer text
    PROGRESS = "progress"  # progress or status lines, tool activity
    TURN = "turn"  # a turn boundary, with its header text if any


@dataclass(frozen=True)
class Item:
    kind: Kind
    text: str = ""


def step(is_open: bool, item: Item) -> tuple[bool, str]:
    """One transition: the new open state and the exact text to emit for `item`.

    Empty thinking, answer or progress text emits nothing and leaves the state alone
    (an empty delta must not produce an empty section); a turn always closes.
    """
    if item.kind is Kind.THINKING:
        if not item.text:
            return is_open, ""
        return True, item.text if is_open else OPEN + item.text
    if not item.text and item.kind is not Kind.TURN:
        return is_open, ""
    return False, (CLOSE if is_open else "") + item.text


def close(is_open: bool) -> str:
    """What the end of the stream emits: the closing delimiter if a section is open."""
    return CLOSE if is_open else ""


def render_delimited(items: Iterable[Item]) -> str:
    """A whole transcript's pieces rendered, every open section closed at the end."""
    is_open = False
    out: list[str] = []
    for item in items:
        is_open, text = step(is_open, item)
        out.append(text)
    out.append(close(is_open))
    return "".join(out)


class DelimitedRenderer:
    """The same state machine for a live stream: `feed` each piece, `finish` at the end."""

    def __init__(self) -> None:
        self.is_open = False

    def feed(self, item: Item) -> str:
        self.is_open, text = step(self.is_open, item)
        return text

    def thinking(self, text: str) -> str:
        return self.feed(Item(Kind.THINKING, text))

    def text(self, text: str) -> str:
        return self.feed(Item(Kind.TEXT, text))

    def progress(self, text: str) -> str:
        return self.feed(Item(Kind.PROGRESS, text))

    def turn(self, header: str = "") -> str:
        return self.feed(Item(Kind.TURN, header))

    def finish(self) -> str:
        text = close(self.is_open)
        self.is_open = False
        return text
