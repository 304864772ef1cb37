"""The grammar's regexes compile on first use (#13 start-up).

Compiling them all costs ~20 ms, most of what a pre-commit hook's scan of a clean session
spends after its imports; the byte prefilter needs only the literal table. A lazily built
regex must be the very one an eager build gives.
"""

from __future__ import annotations

from thinkfix.normalizer.grammar import Grammar
from thinkfix.normalizer.policy import DEFAULT, Policy

_LAZY = (
    "prefilter",
    "pattern",
    "unfinished",
    "_unfinished_other",
    "_in_attributes",
    "attr_stop",
    "_xml_partial",
)


def test_building_a_grammar_compiles_none_of_its_delimiter_regexes() -> None:
    grammar = Grammar(DEFAULT)
    assert grammar.literals  # the literal table, which the byte prefilter reads, is built
    assert not set(_LAZY) & set(vars(grammar))


def test_a_regex_is_compiled_once_and_kept() -> None:
    grammar = Grammar(Policy(protect_code=True))
    assert grammar.ends_unfinished("text <thi")
    first = grammar.unfinished
    assert "unfinished" in vars(grammar)
    assert grammar.unfinished is first
    assert [m.group() for m in grammar.pattern.finditer("a <think>b</think> ```")] == [
        "<think>",
        "</think>",
        "```",
    ]
