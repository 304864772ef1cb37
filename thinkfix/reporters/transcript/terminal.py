"""A transcript as rich renderables: headers, texts, tool lines, and thinking as asked.

Every stored string goes into a `Text` object, never through rich's markup parser, so
brackets and tags in a session are shown exactly as they were stored.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

from thinkfix.engine.scan.transcript import Transcript
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.reporters.transcript.view import (
    Gist,
    ThinkingView,
    call_line,
    header_details,
    result_line,
    thinking_label,
)

ROLE_STYLES = {
    Role.USER: "bold green",
    Role.ASSISTANT: "bold blue",
    Role.SYSTEM: "bold yellow",
    Role.TOOL: "bold cyan",
}
THINKING_STYLE = "italic bright_black"
RECOVERED_STYLE = "italic magenta"
INDENT = 2  # expanded thinking is set in, so it reads as apart from the answer


class Indented:
    """A text set in by INDENT cells, wrapped lines too, without padding lines with spaces
    (rich's Padding fills each line to the width, which piped output would keep)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        inner = options.update_width(max(options.max_width - INDENT, 1))
        for line in console.render_lines(self.text, inner, pad=False):
            yield Segment(" " * INDENT)
            yield from line
            yield Segment.line()


def renderables(transcript: Transcript, view: ThinkingView, width: int) -> Iterator[RenderableType]:
    """The transcript, turn by turn; tool results sit under the call they answer."""
    first = True
    for turn in transcript.turns:
        if turn.role is Role.TOOL:  # no header: results read as the answer to the call above
            for part in turn.parts:
                yield from _part(part, view, width)
            continue
        if not first:
            yield Text()
        first = False
        yield _header(turn)
        previous: Part | None = None
        for part in turn.parts:
            if previous is not None and previous.kind is part.kind is PartKind.TEXT:
                yield Text()  # two texts of one message are two paragraphs
            yield from _part(part, view, width)
            previous = part


def _header(turn: Turn) -> Text:
    text = Text()
    text.append(turn.role.value, style=ROLE_STYLES[turn.role])
    details = header_details(turn)
    if details:
        text.append(" · " + " · ".join(details), style="dim")
    return text


def _part(part: Part, view: ThinkingView, width: int) -> Iterator[RenderableType]:
    if part.kind is PartKind.TEXT:
        yield Text(part.text.strip("\r\n"))
    elif part.kind is PartKind.THINKING:
        yield from _thinking(part, view, width)
    elif part.kind is PartKind.TOOL_CALL:
        yield Text(call_line(part, width), style="cyan", no_wrap=True)
    else:
        yield Text(
            "  " + result_line(part, width - 2), style="red" if part.error else "cyan", no_wrap=True
        )


def _thinking(part: Part, view: ThinkingView, width: int) -> Iterator[RenderableType]:
    if view is ThinkingView.HIDDEN:
        return
    style = RECOVERED_STYLE if part.recovered else THINKING_STYLE
    label = thinking_label(part)
    text = part.text.strip()
    if not text:
        yield Text(f"▸ {label}", style=style, no_wrap=True)
    elif view is ThinkingView.EXPANDED:
        yield Text(f"▾ {label}", style=style, no_wrap=True)
        yield Indented(Text(text, style=style))
    else:
        yield Text(Gist.of(text).line(width, f"▸ {label}: "), style=style, no_wrap=True)
