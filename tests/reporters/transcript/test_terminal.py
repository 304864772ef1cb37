"""The rich rendering: collapsed by default, expanded, hidden; stored text never read as markup."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from thinkfix.engine.scan.transcript import Transcript, load
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.reporters.transcript.terminal import renderables
from thinkfix.reporters.transcript.view import ThinkingView

from .support import CASES, check_golden, data

THINKING = "Check the clock.\nIt is local time.\n\nUse UTC."


def show(
    transcript: Transcript, view: ThinkingView = ThinkingView.COLLAPSED, width: int = 100
) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    for item in renderables(transcript, view, width):
        console.print(item)
    return console.file.getvalue()  # type: ignore[attr-defined]


def one(*parts: Part) -> Transcript:
    return Transcript("s", "pi", (Turn(Role.ASSISTANT, parts, lines=(3, 3)),))


@pytest.mark.parametrize("name", sorted(CASES))
def test_terminal_collapsed_normalized_matches_golden(name: str) -> None:
    check_golden(f"{name}.txt", show(load(data(name), normalized=True)))


def test_terminal_collapsed_thinking_is_one_line_with_a_count() -> None:
    out = show(one(Part(PartKind.THINKING, THINKING), Part(PartKind.TEXT, "Done.")))
    assert out == "assistant · line 3\n▸ thinking: Check the clock.… (+2 lines)\nDone.\n"


def test_terminal_expanded_thinking_shows_every_line_set_in() -> None:
    out = show(one(Part(PartKind.THINKING, THINKING)), ThinkingView.EXPANDED)
    assert out == (
        "assistant · line 3\n▾ thinking\n  Check the clock.\n  It is local time.\n  \n  Use UTC.\n"
    )


def test_terminal_hidden_thinking_is_not_shown() -> None:
    out = show(
        one(Part(PartKind.THINKING, THINKING), Part(PartKind.TEXT, "Done.")), ThinkingView.HIDDEN
    )
    assert out == "assistant · line 3\nDone.\n"


def test_terminal_recovered_thinking_is_marked() -> None:
    out = show(one(Part(PartKind.THINKING, "Leaked plan.", recovered=True)))
    assert "▸ thinking (recovered from leaked text): Leaked plan." in out


def test_terminal_stored_brackets_are_not_markup() -> None:
    out = show(one(Part(PartKind.TEXT, "[bold]not bold[/bold] <think>kept</think>")))
    assert "[bold]not bold[/bold] <think>kept</think>" in out


def test_terminal_tool_results_sit_under_their_call() -> None:
    transcript = Transcript(
        "s",
        "pi",
        (
            Turn(Role.ASSISTANT, (Part(PartKind.TOOL_CALL, 'path="."', name="ls"),), lines=(1, 1)),
            Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, "a\nb", name="ls"),), lines=(2, 2)),
            Turn(Role.USER, (Part(PartKind.TEXT, "thanks"),), lines=(3, 3)),
        ),
    )
    assert show(transcript) == (
        'assistant · line 1\n→ ls(path=".")\n  ⎿ ls: a… (+1 line)\n\nuser · line 3\nthanks\n'
    )
