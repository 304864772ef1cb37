"""The grammar compiles on Python 3.10, whose `re` has no atomic groups or possessive
quantifiers (issue 14 #3: every file failed with "multiple repeat at position 54" there)."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix.normalizer import grammar
from thinkfix.normalizer.policy import DEFAULT


def _fallback(pattern: str, name: str) -> str:
    return f"(?=(?P<{name}>{pattern}))(?P={name})"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="compares with native atomic groups")
@given(st.text(alphabet=" \t\r\n<>/thinkTHINKg", max_size=30))
def test_the_310_spelling_matches_exactly_what_an_atomic_group_matches(text: str) -> None:
    body = r"[ \t\r\n]*"
    names = "(?i:think(?:ing)?)"
    native = re.compile(f"<(?>{body})/?(?>{body})(?P<n>(?>{names}))>")
    portable = re.compile(
        f"<{_fallback(body, 'a')}/?{_fallback(body, 'b')}(?P<n>{_fallback(names, 'c')})>"
    )
    found = [(m.span(), m.group("n")) for m in native.finditer(text)]
    assert found == [(m.span(), m.group("n")) for m in portable.finditer(text)]


def test_no_310_only_syntax_reaches_the_regex_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar.sys, "version_info", (3, 10, 13))
    atomic = grammar._atomic(r"[ \t]*", "w")
    assert "(?>" not in atomic and "*+" not in atomic
    assert re.fullmatch(atomic, " \t ")


def test_the_whole_grammar_in_its_310_spelling_finds_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar.sys, "version_info", (3, 10, 13))
    compiled = grammar.Grammar(DEFAULT)
    assert "(?>" not in compiled.pattern.pattern
    found = [m.group() for m in compiled.pattern.finditer("a < / THINK >b</think>c")]
    assert found == ["< / THINK >", "</think>"]
