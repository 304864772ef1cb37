"""A transcript as plain text under the front-end thinking contract (seed 002).

Thinking goes between `\\n\\n---\\n` and `\\n---\\n\\n`; the open/close decisions are
`rendering.delimited`'s state machine, fed one piece at a time. This module only
decides the pieces and the blank lines between them, so the delimiters are never
written anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterator

from thinkfix.engine.scan.transcript import Transcript
from thinkfix.formats.turns import PartKind, Role, Turn
from thinkfix.reporters.transcript.contract import DelimitedRenderer, Item, Kind
from thinkfix.reporters.transcript.view import call_line, header, result_line

BREAK = "\n\n"


def pieces(turns: tuple[Turn, ...], width: int) -> Iterator[Item]:
    """Each turn's header, texts, thinking and tool lines, without separators."""
    for turn in turns:
        if turn.role is not Role.TOOL:
            yield Item(Kind.TURN, f"### {header(turn)}")
        for part in turn.parts:
            if part.kind is PartKind.TEXT:
                yield Item(Kind.TEXT, part.text.strip("\r\n"))
            elif part.kind is PartKind.THINKING:
                yield Item(Kind.THINKING, part.text.strip())
            elif part.kind is PartKind.TOOL_CALL:
                yield Item(Kind.PROGRESS, call_line(part, width))
            else:
                yield Item(Kind.PROGRESS, result_line(part, width))


def render(transcript: Transcript, width: int = 100) -> str:
    """The whole transcript; ends with one newline, or with the closing delimiter.

    Pieces are a blank line apart. Next to a delimiter the delimiter's own newlines
    are that blank line: an opening one starts with it, a closing one ends with it,
    and thinking pieces of one open section are a blank line apart inside it.
    """
    renderer = DelimitedRenderer()
    out: list[str] = []
    for item in pieces(transcript.turns, width):
        if not item.text and item.kind is not Kind.TURN:
            continue
        if item.kind is Kind.THINKING:
            sep = BREAK if renderer.is_open else ""
        else:
            sep = "" if not out or renderer.is_open else BREAK
        out.append(renderer.feed(Item(item.kind, sep + item.text)))
    out.append(renderer.finish())
    text = "".join(out)
    return text if not text or text.endswith("\n") else text + "\n"
