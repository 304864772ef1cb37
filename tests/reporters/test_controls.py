"""Control characters are shown, never sent to the terminal (issue 14 #2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.controls import visible_controls, visible_name
from thinkfix.reporters.controls import visible_strings

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def test_escape_sequences_become_control_pictures() -> None:
    assert visible_controls("\x1b[2J") == "␛[2J"
    assert visible_controls("\x1b]0;title\x07") == "␛]0;title␇"
    assert visible_controls("a\x9bb\x7f") == "a\\x9bb␡"


def test_layout_stays_and_a_lone_carriage_return_is_shown() -> None:
    assert visible_controls("a\tb\nc") == "a\tb\nc"
    assert visible_controls("line\r\nnext") == "line\nnext"
    assert visible_controls("safe\rEVIL") == "safe␍EVIL"


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    shown = visible_controls(text)
    assert not RAW_CONTROL.search(shown)
    assert visible_controls(shown) == shown


@given(st.text(st.characters() | st.sampled_from("\t\n\x1b\x9b\u2028\u2029\u200b")))
def test_a_name_shows_every_control_and_separator_and_nothing_else(text: str) -> None:
    """Tested with `isprintable` instead of a regex (#26 item 3: start-up), the same answer."""
    shown = visible_name(text)
    assert not NAME_CONTROL.search(shown)
    if not NAME_CONTROL.search(text):
        assert shown == text  # a zero-width space or a soft hyphen is not a control
    assert visible_name(shown) == shown


@dataclass(frozen=True)
class _Inner:
    name: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class _Outer:
    inner: _Inner
    counts: dict[str, int]
    size: int


def test_every_string_in_nested_values_is_made_visible() -> None:
    value = _Outer(_Inner("\x1bx", ("\x07",)), {"m\x1b": 1}, 3)
    assert visible_strings(value) == _Outer(_Inner("␛x", ("␇",)), {"m␛": 1}, 3)
