"""The one-line summaries both renderings share."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.reporters.transcript.view import (
    Gist,
    call_line,
    crop,
    header,
    result_line,
    short_time,
    thinking_label,
)

THIRTEEN = "First line\n" + "\n".join(f"more {i}" for i in range(12))


def test_view_gist_counts_the_hidden_lines() -> None:
    assert Gist.of(THIRTEEN) == Gist("First line", 12)
    assert Gist.of(THIRTEEN).line(80, "▸ thinking: ") == "▸ thinking: First line… (+12 lines)"


def test_view_gist_skips_blank_lines_and_squeezes_whitespace() -> None:
    assert Gist.of("\n\n  a\tb  \n\n c \n") == Gist("a b", 1)
    assert Gist.of("only").line(80, "> ") == "> only"
    assert Gist.of("one\ntwo").suffix() == " (+1 line)"


def test_view_gist_line_fits_the_width_and_keeps_the_count() -> None:
    line = Gist.of("x" * 200 + "\nsecond").line(40, "▸ thinking: ")
    assert cell_len(line) == 40 and line.endswith("… (+1 line)")


@pytest.mark.parametrize("width", [5, 10, 11, 12])
def test_view_crop_counts_terminal_cells(width: int) -> None:
    out = crop("好的，我将进行第82次思考", width)
    assert cell_len(out) <= width and out.endswith("…")


def test_view_thinking_labels() -> None:
    assert thinking_label(Part(PartKind.THINKING, "x")) == "thinking"
    assert (
        thinking_label(Part(PartKind.THINKING, "x", recovered=True))
        == "thinking (recovered from leaked text)"
    )
    assert thinking_label(Part(PartKind.THINKING, "", signed=True)) == "thinking (signed, empty)"
    assert (
        thinking_label(Part(PartKind.THINKING, "", signed=True, redacted=True))
        == "thinking (redacted)"
    )


def test_view_tool_lines() -> None:
    call = Part(PartKind.TOOL_CALL, 'command="ls -la"', name="Bash")
    assert call_line(call, 80) == '→ Bash(command="ls -la")'
    assert call_line(Part(PartKind.TOOL_CALL, "a\nb"), 80) == "→ tool(a b)"
    failed = Part(PartKind.TOOL_RESULT, "boom\ntrace\ntrace", name="Bash", error=True)
    assert result_line(failed, 80) == "⎿ ✗ Bash: boom… (+2 lines)"
    assert result_line(Part(PartKind.TOOL_RESULT, ""), 80) == "⎿ (no output)"


def test_view_header() -> None:
    turn = Turn(
        Role.ASSISTANT,
        (),
        "2026-02-11T09:14:06.940Z",
        "claude-opus-4-5",
        note="stop: max_tokens",
        lines=(4, 6),
    )
    assert (
        header(turn) == "assistant · claude-opus-4-5 · stop: max_tokens · 2026-02-11 09:14:06"
        " · lines 4-6"
    )
    assert header(Turn(Role.USER, (), lines=(0, 0), where="messages[1]")) == "user · messages[1]"
    assert (
        header(Turn(Role.USER, (), lines=(2, 2), where="request.messages[0]"))
        == "user · line 2 request.messages[0]"
    )


def test_view_short_time() -> None:
    assert short_time("2026-02-11T09:14:06.940Z") == "2026-02-11 09:14:06"
    assert short_time("yesterday") == "yesterday"
    assert short_time(None) is None
