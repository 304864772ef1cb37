"""`watch` writes each leak as one whole line to a file or pipe (#27 item 1: rich cut every
line to 80 characters there, losing the size, the tag and the place)."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from thinkfix.cli.watch import _live_line
from thinkfix.engine.report import LeakFinding
from thinkfix.normalizer.kinds import LeakKind

NAMES = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=150)


def _finding(path: str, model: str, snippet: str) -> LeakFinding:
    return LeakFinding(
        path=path,
        line=7,
        json_path="message.content[0].text",
        format="claude-code",
        kind=LeakKind.DUPLICATE,
        tag="think",
        start=0,
        end=len(snippet),
        leaked_chars=1234,
        model=model,
        snippet=snippet,
    )


@given(path=NAMES, model=NAMES, snippet=NAMES)
def test_a_line_to_a_pipe_is_never_cut_or_wrapped(path: str, model: str, snippet: str) -> None:
    out = io.StringIO()
    console = Console(file=out, highlight=False, width=80)
    assert not console.is_terminal
    _live_line(console, _finding(path, model, snippet))
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert f"{path}:7" in text and "1234 chars" in text and snippet in text
    assert "…" not in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_line_to_a_terminal_fits_the_window() -> None:
    out = _Terminal()
    console = Console(file=out, highlight=False, width=80, color_system=None)
    _live_line(console, _finding("s" * 200 + ".jsonl", "minimax/minimax-m2.7", "x" * 200))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and len(lines[0]) == 80 and lines[0].endswith("…")


def test_color_forced_on_a_pipe_keeps_the_whole_line() -> None:
    out = io.StringIO()
    console = Console(file=out, highlight=False, width=80, force_terminal=True)
    _live_line(console, _finding("s" * 200 + ".jsonl", "minimax/minimax-m2.7", "x" * 200))
    text = out.getvalue()
    assert text.count("\n") == 1 and "\x1b[" in text and "x" * 200 in text and "…" not in text
