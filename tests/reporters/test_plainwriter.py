"""The plain writer draws a text report byte for byte as rich does, or declines (#13 start-up).

A scan whose text report goes to a pipe (a pre-commit hook, a CI log) is written without
importing rich; these tests hold it to rich's own output wherever it answers, on generated
documents (wrapping paragraphs, grids of every justification, the summary panel, values
that are too wide, wide or control characters) and on the reporters' hand-made reports.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from tests.reporters.cases import clean_report, empty_report, full_report, unread_report
from thinkfix.engine.report import Report
from thinkfix.reporters import plainwriter, richwriter
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.layout import Column, Document, Grid, Panel, Paragraph, Table
from thinkfix.reporters.registry import REPORTERS
from thinkfix.reporters.text import TextReporter


def _rich(document: Document, width: int) -> str:
    """What the text reporter makes of rich's drawing without colour."""
    text = richwriter.draw(document, RenderOptions(width=width))
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def test_every_character_the_writer_counts_as_one_cell_is_one_cell_for_rich() -> None:
    one_cell = re.compile(f"[{plainwriter.ONE_CELL}]")
    chars = [chr(c) for c in range(0x2600) if one_cell.match(chr(c)) and chr(c).isprintable()]
    assert "◁" in chars and "▷" in chars and "␛" in chars and "é" in chars
    assert [c for c in chars if cell_len(c) != 1] == []


# Words of one-cell characters (what the plain writer draws), and odd ones: wide, combining,
# tab, newline, anything (which it must decline, or draw as rich does).
_PLAIN_WORDS = st.one_of(
    st.text(st.sampled_from("abcdefxyz0123456789-_./:%\"'\\<>|[]"), min_size=1, max_size=12),
    st.sampled_from(["◁think▷", "<think>", "</think>", "(unknown)", "é", "␛[2J", "\u00a0"]),
)
_ODD_WORDS = st.one_of(
    _PLAIN_WORDS, st.sampled_from(["漢字", "a\tb", "\u25fd", "e\u0301", "\n"]), st.text(max_size=3)
)
_STYLE = st.sampled_from(["", "bold", "dim", "bold red"])


def _documents(words: st.SearchStrategy[str]) -> st.SearchStrategy[Document]:
    """Documents of paragraphs (one or more blanks between words, so they wrap), grids of
    every justification and panels, from `words`."""
    text = st.lists(st.tuples(words, st.sampled_from([" "] * 6 + ["  "])), max_size=30).map(
        lambda parts: "".join(word + blank for word, blank in parts).rstrip(" ")
    )
    cell = st.one_of(words, st.just(""), text.map(lambda t: t[:30]))

    @st.composite
    def grid(draw: st.DrawFn, indent: int | None = None) -> Grid:
        n = draw(st.integers(1, 6))
        columns = [
            Column(
                draw(st.sampled_from(["left", "right"])),
                no_wrap=draw(st.booleans()),
                overflow=draw(st.sampled_from(["fold", "ellipsis"])),
                style=draw(_STYLE),
            )
            for _ in range(n)
        ]
        pad = draw(st.sampled_from([0, 2, 4])) if indent is None else indent
        table = Grid(columns, indent=pad)
        for _ in range(draw(st.integers(1, 5))):
            table.add_row(*((draw(cell), draw(_STYLE)) for _ in range(n)), style=draw(_STYLE))
        return table

    block = st.one_of(
        st.builds(Paragraph, text, _STYLE),
        st.builds(Paragraph, st.just("")),
        grid(),
        st.builds(Panel, grid(indent=0), st.sampled_from(["thinkfix scan", "x"])),
    )
    return st.lists(st.lists(block, min_size=1, max_size=3), min_size=1, max_size=3)


def _same_or_declined(document: Document, width: int) -> bool:
    """True when the plain writer drew the document (as rich does); False when it declined."""
    try:
        plain = plainwriter.draw(document, width)
    except plainwriter.NotPlain:
        return False
    assert plain == _rich(document, width)
    return True


@settings(max_examples=300, deadline=None)
@given(_documents(_PLAIN_WORDS), st.integers(8, 160))
def test_the_plain_writer_draws_what_rich_draws(document: Document, width: int) -> None:
    _same_or_declined(document, width)


@settings(max_examples=200, deadline=None)
@given(_documents(_ODD_WORDS), st.integers(8, 160))
def test_with_odd_characters_the_plain_writer_declines_or_draws_what_rich_draws(
    document: Document, width: int
) -> None:
    _same_or_declined(document, width)


@pytest.mark.parametrize("width", [20, 40, 72, 120, 200])
@pytest.mark.parametrize("build", [full_report, clean_report, empty_report, unread_report])
@pytest.mark.parametrize("show_baselined", [False, True])
def test_the_reporters_cases_come_out_the_same_whichever_writer_draws_them(
    build: object, width: int, show_baselined: bool
) -> None:
    report: Report = visible_strings(build())  # type: ignore[operator]
    options = RenderOptions(width=width, show_baselined=show_baselined)
    document = TextReporter().layout(report, options)
    _same_or_declined(document, width)  # declined: a value to wrap or fold, rich's


def test_a_report_to_a_pipe_is_drawn_plain_and_statistics_by_rich(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The usual reports take the plain path (so the test above is not vacuous); the
    statistics tables, and colour, go to rich."""
    reporter = REPORTERS[OutputFormat.TEXT]
    for build in (full_report, clean_report, empty_report):
        report = visible_strings(build())
        plainwriter.draw(reporter.layout(report, RenderOptions()), 120)  # no NotPlain
    with pytest.raises(plainwriter.NotPlain):
        plainwriter.draw([[Table("By kind", (("kind", "left"),))]], 120)

    def refuse(document: Document, options: RenderOptions) -> str:
        raise AssertionError("rich drew a report the plain writer can draw")

    monkeypatch.setattr(richwriter, "draw", refuse)
    assert reporter.render(full_report(), RenderOptions()).endswith("sidecar).\n")
    with pytest.raises(AssertionError, match="rich drew"):
        reporter.render(full_report(), RenderOptions(color=True))
