"""`--thinking delimited`: the front-end contract, byte for byte, over whole transcripts."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.scan.transcript import Transcript
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.reporters.transcript.contract import CLOSE, OPEN
from thinkfix.reporters.transcript.delimited import render


def t(*turns: Turn) -> Transcript:
    return Transcript("s.jsonl", "claude-code", turns)


def think(text: str) -> Part:
    return Part(PartKind.THINKING, text)


def say(text: str) -> Part:
    return Part(PartKind.TEXT, text)


def user(text: str) -> Turn:
    return Turn(Role.USER, (say(text),))


def assistant(*parts: Part) -> Turn:
    return Turn(Role.ASSISTANT, parts)


CALL = Part(PartKind.TOOL_CALL, 'path="."', name="ls", call_id="c1")
RESULT = Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, "a.txt\nb.txt", name="ls", call_id="c1"),))


def test_delimited_single_turn_with_thinking() -> None:
    out = render(t(assistant(think("Plan the answer."), say("The answer."))))
    assert out == "### assistant\n\n---\nPlan the answer.\n---\n\nThe answer.\n"


def test_delimited_several_turns() -> None:
    out = render(
        t(
            user("Q1"),
            assistant(think("T1"), say("A1")),
            user("Q2"),
            assistant(think("T2"), say("A2")),
        )
    )
    assert out == (
        "### user\n\nQ1\n\n"
        "### assistant\n\n---\nT1\n---\n\nA1\n\n"
        "### user\n\nQ2\n\n"
        "### assistant\n\n---\nT2\n---\n\nA2\n"
    )


def test_delimited_thinking_interleaved_with_tool_progress() -> None:
    out = render(
        t(
            assistant(think("Look first."), CALL),
            RESULT,
            assistant(think("Two files."), CALL, think("Still two."), say("Two files.")),
        )
    )
    assert out == (
        "### assistant\n\n---\nLook first.\n---\n\n"
        '→ ls(path=".")\n\n'
        "⎿ ls: a.txt… (+1 line)\n\n"
        "### assistant\n\n---\nTwo files.\n---\n\n"
        '→ ls(path=".")\n\n---\nStill two.\n---\n\n'
        "Two files.\n"
    )


def test_delimited_session_ending_inside_thinking() -> None:
    out = render(t(user("Q"), assistant(think("The answer is cut"))))
    assert out == "### user\n\nQ\n\n### assistant\n\n---\nThe answer is cut\n---\n\n"


def test_delimited_consecutive_thinking_shares_one_section() -> None:
    # Native thinking and thinking recovered from the text, one after the other.
    recovered = Part(PartKind.THINKING, "\nRecovered.\n", recovered=True)
    out = render(t(assistant(think("Native."), recovered, say("Answer."))))
    assert out == "### assistant\n\n---\nNative.\n\nRecovered.\n---\n\nAnswer.\n"


def test_delimited_empty_thinking_opens_no_section() -> None:
    signed_empty = Part(PartKind.THINKING, "", signed=True)
    assert render(t(assistant(signed_empty, say("Hi.")))) == "### assistant\n\nHi.\n"


def test_delimited_header_carries_model_time_and_place() -> None:
    turn = Turn(Role.ASSISTANT, (say("Hi."),), "2026-04-01T08:00:03.000Z", "glm-4.6", lines=(4, 6))
    assert render(t(turn)) == "### assistant · glm-4.6 · 2026-04-01 08:00:03 · lines 4-6\n\nHi.\n"


# --- the contract holds for any transcript -------------------------------------------------

SECTION = re.compile(re.escape(OPEN) + "(.*?)" + re.escape(CLOSE), re.DOTALL)
word = st.text("abc xyz.", min_size=1, max_size=8).map(str.strip).filter(bool)
parts = st.one_of(
    word.map(lambda w: Part(PartKind.THINKING, f"THINK {w}")),
    word.map(lambda w: Part(PartKind.TEXT, f"SAY {w}")),
    word.map(lambda w: Part(PartKind.TOOL_CALL, w, name="run")),
)
turns = st.lists(
    st.builds(
        Turn, st.sampled_from([Role.USER, Role.ASSISTANT]), st.lists(parts, max_size=5).map(tuple)
    ),
    max_size=6,
)


@given(turns)
def test_delimited_every_thinking_run_is_one_closed_section(turns: list[Turn]) -> None:
    out = render(t(*turns))
    sections = SECTION.findall(out)
    runs = 0
    previous = None
    for turn in turns:
        previous = None  # a turn header closes any section
        for part in turn.parts:
            runs += part.kind is PartKind.THINKING and previous is not PartKind.THINKING
            previous = part.kind
    assert len(sections) == runs == out.count(OPEN) == out.count(CLOSE)
    assert all("SAY" not in s and "run(" not in s for s in sections)
    assert "THINK" not in SECTION.sub("", out)
