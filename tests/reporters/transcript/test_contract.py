"""The `\\n\\n---\\n` / `\\n---\\n\\n` front-end contract, byte for byte."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.reporters.transcript.contract import (
    CLOSE,
    OPEN,
    DelimitedRenderer,
    Item,
    Kind,
    close,
    render_delimited,
    step,
)

T, A, P, U = Kind.THINKING, Kind.TEXT, Kind.PROGRESS, Kind.TURN


def items(*pairs: tuple[Kind, str]) -> list[Item]:
    return [Item(kind, text) for kind, text in pairs]


def test_delimited_constants_are_the_contract() -> None:
    assert OPEN == "\n\n---\n" and CLOSE == "\n---\n\n"


def test_delimited_single_turn() -> None:
    assert render_delimited(items((T, "Plan the answer."), (A, "The answer."))) == (
        "\n\n---\nPlan the answer.\n---\n\nThe answer."
    )


def test_delimited_leading_separator_is_never_lost_when_thinking_comes_first() -> None:
    out = render_delimited(items((T, "a"), (T, "b"), (A, "c")))
    assert out.startswith("\n\n---\n") and out == "\n\n---\nab\n---\n\nc"


def test_delimited_thinking_deltas_share_one_section() -> None:
    r = DelimitedRenderer()
    assert [r.thinking("Pl"), r.thinking("an"), r.text("Done")] == [
        "\n\n---\nPl",
        "an",
        "\n---\n\nDone",
    ]


def test_delimited_several_turns() -> None:
    out = render_delimited(
        items(
            (U, "## Turn 1\n"),
            (T, "think 1"),
            (A, "answer 1\n"),
            (U, "## Turn 2\n"),
            (T, "think 2"),
            (A, "answer 2"),
        )
    )
    assert out == (
        "## Turn 1\n\n\n---\nthink 1\n---\n\nanswer 1\n## Turn 2\n\n\n---\nthink 2\n---\n\nanswer 2"
    )


def test_delimited_turn_closes_an_open_section_even_without_a_header() -> None:
    out = render_delimited(items((T, "think 1"), (U, ""), (T, "think 2"), (A, "x")))
    assert out == "\n\n---\nthink 1\n---\n\n\n\n---\nthink 2\n---\n\nx"


def test_delimited_thinking_interleaved_with_progress_lines() -> None:
    out = render_delimited(
        items(
            (T, "Need the file."),
            (P, "- reading main.py\n"),
            (T, "Found it."),
            (P, "- editing main.py\n"),
            (A, "Fixed."),
        )
    )
    assert out == (
        "\n\n---\nNeed the file.\n---\n\n- reading main.py\n"
        "\n\n---\nFound it.\n---\n\n- editing main.py\nFixed."
    )


def test_delimited_stream_ending_inside_thinking_is_closed() -> None:
    assert render_delimited(items((A, "Let me think."), (T, "cut off mid"))) == (
        "Let me think.\n\n---\ncut off mid\n---\n\n"
    )
    r = DelimitedRenderer()
    assert r.thinking("x") + r.finish() == "\n\n---\nx\n---\n\n"
    assert r.finish() == ""


def test_delimited_empty_pieces_emit_nothing_and_keep_state() -> None:
    assert render_delimited(items((T, ""), (A, "x"))) == "x"
    assert render_delimited(items((T, "a"), (A, ""), (P, ""), (T, "b"))) == "\n\n---\nab\n---\n\n"
    assert render_delimited([]) == ""


def test_delimited_step_is_pure() -> None:
    assert step(False, Item(T, "a")) == (True, "\n\n---\na")
    assert step(True, Item(T, "b")) == (True, "b")
    assert step(True, Item(P, "p")) == (False, "\n---\n\np")
    assert step(False, Item(P, "p")) == (False, "p")
    assert close(True) == CLOSE and close(False) == ""


PIECES = st.lists(
    st.tuples(st.sampled_from(list(Kind)), st.text(alphabet="ab\n", max_size=3)), max_size=20
)


@given(PIECES)
def test_delimited_sections_always_balance_and_text_survives(pairs: list[tuple[Kind, str]]) -> None:
    r = DelimitedRenderer()
    opens = closes = 0
    outputs: list[str] = []
    for item in items(*pairs):
        was_open = r.is_open
        out = r.feed(item)
        outputs.append(out)
        if out == OPEN + item.text and not was_open and item.kind is T:
            opens += 1
        elif out == CLOSE + item.text and was_open and item.kind is not T:
            closes += 1
        else:
            assert out == item.text
    tail = r.finish()
    closes += tail == CLOSE
    assert opens == closes and not r.is_open
    assert "".join(outputs) + tail == render_delimited(items(*pairs))
