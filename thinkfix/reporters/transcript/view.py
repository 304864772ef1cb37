"""What the terminal and the delimited renderings share: the modes and the one-line summaries.

Both renderings show a turn header, a tool call and a tool result the same way; only
the styling (rich) or the delimiters (front-end contract) differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rich.cells import cell_len, set_cell_size

from thinkfix.formats.turns import Part, Turn

ELLIPSIS = "…"


class ThinkingView(str, Enum):
    """How thinking is shown."""

    COLLAPSED = "collapsed"  # its first line and a count of the hidden lines
    EXPANDED = "expanded"  # all of it
    HIDDEN = "hidden"  # not at all
    DELIMITED = "delimited"  # plain text between the front-end contract's delimiters


@dataclass(frozen=True)
class Gist:
    """A long text as one line: its first non-blank line and how many lines it hides."""

    first: str
    hidden: int

    @classmethod
    def of(cls, text: str) -> Gist:
        lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
        return cls(lines[0] if lines else "", max(len(lines) - 1, 0))

    def suffix(self) -> str:
        if not self.hidden:
            return ""
        return f" (+{self.hidden} line{'s' if self.hidden != 1 else ''})"

    def line(self, width: int, prefix: str = "") -> str:
        """`prefix`, the first line (cut to fit with an ellipsis) and the hidden-line count."""
        suffix = self.suffix()
        room = max(width - cell_len(prefix) - cell_len(suffix), 1)
        first = self.first
        if self.hidden and cell_len(first) < room:
            first += ELLIPSIS
        return prefix + crop(first, room) + suffix


def crop(text: str, width: int) -> str:
    """`text` cut to `width` terminal cells, ending in an ellipsis when cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(width - 1, 0)).rstrip() + ELLIPSIS


def short_time(timestamp: str | None) -> str | None:
    """`2026-02-11T09:14:02.118Z` as `2026-02-11 09:14:02`; other spellings as stored."""
    if not timestamp:
        return None
    if len(timestamp) >= 19 and timestamp[10] == "T":
        return f"{timestamp[:10]} {timestamp[11:19]}"
    return timestamp


def header_details(turn: Turn) -> list[str]:
    """What follows the role in a turn's header: model, note, time, where it is stored."""
    lines = turn.lines
    if lines[0] and lines[0] != lines[1]:
        place = f"lines {lines[0]}-{lines[1]}"
    else:
        place = f"line {lines[0]}" if lines[0] else ""
    place = f"{place} {turn.where}".strip()
    fields = [turn.model, turn.note, short_time(turn.timestamp), place]
    return [f for f in fields if f]


def header(turn: Turn) -> str:
    return " · ".join([turn.role.value, *header_details(turn)])


def thinking_label(part: Part) -> str:
    """`thinking`, with what a reader must know about it: recovered, redacted, signed."""
    notes = []
    if part.recovered:
        notes.append("recovered from leaked text")
    if part.redacted:
        notes.append("redacted")
    else:
        if part.signed:
            notes.append("signed")
        if not part.text.strip():
            notes.append("empty")  # Claude Code keeps only the signature since 2.1.69
    return "thinking" + (f" ({', '.join(notes)})" if notes else "")


def call_line(part: Part, width: int) -> str:
    """`→ Name(arguments)` on one line (arguments stored as raw text may hold newlines)."""
    args = " ".join(part.text.splitlines())
    return crop(f"→ {part.name or 'tool'}({args})", width)


def result_line(part: Part, width: int) -> str:
    """`⎿ name: first line… (+N lines)`, with ✗ for a failed call."""
    mark = "✗ " if part.error else ""
    name = f"{part.name}: " if part.name else ""
    gist = Gist.of(part.text)
    if not gist.first:
        return crop(f"⎿ {mark}{name}(no output)", width)
    return gist.line(width, f"⎿ {mark}{name}")
