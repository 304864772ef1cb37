"""A grammar's first use compiles only what the text needs (#26 item 3).

`ends_unfinished` (is visible text glued to `<thi`, `<|chan` or `[THI`?) compiled one regex
of all ~540 literal prefixes, twice (with and without an XML opener's attributes): ~40 ms
of a process's first normalize, paid again by every `--jobs` worker. A literal's start is
now a set lookup; the answer must be the one the full regex gave, on every text.
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.spies import compiled_sources
from thinkfix.normalizer.grammar import Grammar, _trie, unfinished_arms
from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.stages import WS_CHARS

POLICIES = [DEFAULT, Policy(protect_code=False, harmony=False), Policy(tags=("think",))]


def _full_regex(grammar: Grammar, policy: Policy, *, attributes: bool) -> re.Pattern[str]:
    """The one regex `ends_unfinished` used before: literal prefixes, tags, code markers."""
    arms = [_trie(sorted(grammar._literal_prefixes))]
    arms += unfinished_arms(policy, attributes=attributes)
    return re.compile(f"(?:{'|'.join(arms)})\\Z")


def _old_ends_unfinished(grammar: Grammar, full: re.Pattern[str], text: str) -> bool:
    if not text:
        return False
    if text[-1] in "`~" and full.match(text, len(text) - 1):
        return True
    k = text.rfind("<")
    if k >= 0 and full.match(text, k):
        return True
    if grammar._ends_in_call(text):
        return True
    lo = max(0, len(text) - grammar.max_literal + 1)
    return any(full.match(text, m.start()) for m in grammar._partial_starts.finditer(text, lo))


PIECES = st.sampled_from(
    [
        "<",
        "</",
        " ",
        "\n",
        "think",
        "THI",
        "<|",
        "<|channel",
        "|>",
        "[THI",
        "[",
        "`",
        "~~",
        '<think a="x',
        "reason",
        ">",
        "<|start|>assistant",
        "◁",
        "◁think",
        "x",
        "<thought",
    ]
)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(PIECES | st.text(max_size=6), max_size=8), which=st.sampled_from(POLICIES))
def test_a_literal_start_looked_up_answers_as_the_full_regex(
    parts: list[str], which: Policy
) -> None:
    text = "".join(parts)
    grammar = Grammar(which)
    full = _full_regex(grammar, which, attributes=True)
    assert grammar.ends_unfinished(text) == _old_ends_unfinished(grammar, full, text)
    for lit in grammar._literal_prefixes:  # every literal's start, glued to text
        if len(lit) < 4:
            assert grammar.ends_unfinished(text + lit) == _old_ends_unfinished(
                grammar, full, text + lit
            )


def test_a_first_unfinished_check_compiles_no_regex_of_the_literal_prefixes() -> None:
    """On main the first `ends_unfinished` compiled a ~3,200-character trie of every
    literal prefix; now only the tag and code marker arms (a few hundred characters)."""
    grammar = Grammar(DEFAULT)
    with compiled_sources() as sources:
        assert grammar.ends_unfinished("text <thi")
        assert grammar.ends_unfinished("text <|chan")
        assert not grammar.ends_unfinished("text <b")
        assert grammar.ends_in_attributes_only('text <think a="x')
    assert sources
    assert max(map(len, sources)) < 1000


def test_the_written_out_blanks_are_every_blank_character() -> None:
    """`WS_CHARS` is written out (computing it cost ~3 ms of every first normalize): it must
    be exactly `str.isspace()`'s characters and the BOM, on this Python's Unicode tables."""
    blanks = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()} | {"\ufeff"}
    assert set(WS_CHARS) == blanks
    assert len(WS_CHARS) == len(blanks)
    assert all(re.fullmatch(r"[\s\ufeff]", c) for c in WS_CHARS)
