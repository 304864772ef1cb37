"""What the normalizer keeps between calls to cut its fixed cost per text (#26 item 2) never
changes an answer: a value kept from an earlier text, or built once for a policy, gives what
building it afresh gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thinkfix import normalize
from thinkfix.normalizer.grammar import Grammar, Kind, grammar_for
from thinkfix.normalizer.kinds import Label
from thinkfix.normalizer.pipeline import Pipeline
from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.spans import Finding, Result, Span, new_result, spans_of
from thinkfix.normalizer.stages import Deduper

from .strategies import NATIVE, POLICIES, SETTINGS, TEXTS

_NAMES = st.sampled_from(["think", "THINK", "Thinking", "reason", "reflection", "thought"])
_BLANKS = st.text(" \t\r\n", max_size=3)
_ATTRS = st.text(st.characters(blacklist_characters="<>"), max_size=12)
XML_TAGS = st.builds(
    lambda ws1, slash, ws2, name, gap, attrs, tail: f"<{ws1}{slash}{ws2}{name}{gap}{attrs}{tail}>",
    _BLANKS,
    st.sampled_from(["", "/"]),
    _BLANKS,
    _NAMES,
    st.sampled_from(["", " ", "\n", "/"]),
    _ATTRS,
    st.sampled_from(["", "/", " / "]),
)


def _tokens(grammar: Grammar, text: str, offset: int) -> list[tuple[Kind, int, int, str, bool]]:
    return [tuple(grammar.token(m, offset)) for m in grammar.pattern.finditer(text)]  # type: ignore[misc]


@SETTINGS
@given(tags=st.lists(XML_TAGS, min_size=1, max_size=6), offset=st.integers(0, 99))
def test_grammar_token_equal_with_a_fresh_and_a_reused_tag_cache(
    tags: list[str], offset: int
) -> None:
    text = "x".join(tags)
    warm = grammar_for(DEFAULT)
    warm_tokens = _tokens(warm, text, offset)
    again = _tokens(warm, text, offset)  # every spelling now comes from the cache
    fresh = _tokens(Grammar(Policy()), text, offset)
    assert warm_tokens == again == fresh


def test_grammar_tag_cache_stays_bounded_and_right_after_it_is_cleared() -> None:
    grammar = Grammar(Policy())
    spellings = [f'<think a="{n}">' for n in range(3000)]
    for text in spellings:
        (m,) = grammar.pattern.finditer(text)
        assert tuple(grammar.token(m, 0)) == (Kind.OPEN, 0, len(text), "<think>", True)
    assert len(grammar._xml_tokens) <= 1024
    (m,) = grammar.pattern.finditer("</ Think>")
    assert grammar.token(m, 5) == (Kind.CLOSE, 5, 14, "</think>", True)


_ROWS = st.lists(
    st.tuples(
        st.integers(0, 50),
        st.integers(0, 50),
        st.sampled_from(Label),
        st.none() | st.integers(0, 3),
    ),
    max_size=6,
)


@SETTINGS
@given(rows=_ROWS)
def test_spans_of_equals_the_spans_the_dataclass_makes(
    rows: list[tuple[int, int, Label, int | None]],
) -> None:
    made = spans_of(rows)
    built = tuple(Span(*row) for row in rows)
    assert made == built
    assert [hash(s) for s in made] == [hash(s) for s in built]
    assert [repr(s) for s in made] == [repr(s) for s in built]
    assert [vars(s) for s in made] == [vars(s) for s in built]


@SETTINGS
@given(text=TEXTS, policy=POLICIES, native=NATIVE)
def test_new_result_equals_the_result_the_dataclass_makes(
    text: str, policy: Policy, native: str | None
) -> None:
    r = normalize(text, policy=policy, native_reasoning=native)
    built = Result(
        text, tuple(Span(s.start, s.end, s.label, s.block) for s in r.spans), r.findings, r.native
    )
    assert r == built
    for f in r.findings:  # each made by `new_finding`
        again = Finding(f.kind, f.tag, f.start, f.end)
        assert (f, hash(f), repr(f), vars(f), f.to_dict()) == (
            again,
            hash(again),
            repr(again),
            vars(again),
            again.to_dict(),
        )
    assert vars(new_result(text, built.spans, built.findings, built.native)) == vars(built)
    assert (r.visible, r.extracted, r.thinking, r.changed) == (
        built.visible,
        built.extracted,
        built.thinking,
        built.changed,
    )


@SETTINGS
@given(texts=st.lists(TEXTS, min_size=1, max_size=4), policy=POLICIES, native=NATIVE)
def test_shared_inactive_deduper_gives_what_a_fresh_one_gives(
    texts: list[str], policy: Policy, native: str | None
) -> None:
    for text in texts:  # each text after the first meets the deduper the others used
        shared = Pipeline(policy, native=native or "")
        fresh = Pipeline(policy, native=native or "")
        fresh.deduper = Deduper(policy, native or "")
        for pipeline in (shared, fresh):
            pipeline.keep(pipeline.finish(text))
        assert shared.result(text) == fresh.result(text)
    idle = Deduper.of(policy, "")
    assert not idle.active and not idle.held and not idle.duplicates


@SETTINGS
@given(text=TEXTS | TEXTS.map(str.upper), policy=POLICIES)
def test_probes_never_call_a_text_with_a_delimiter_clean(text: str, policy: Policy) -> None:
    grammar = grammar_for(policy)
    tokens = [grammar.token(m, 0) for m in grammar.prefilter.finditer(text)]
    if any(t.kind is not Kind.TOOL_CALL for t in tokens):  # a tool call alone is text
        assert grammar.probes.maybe_delimited(text)
    if "\u00e9" not in text:  # the same text not ASCII: the names are looked for unlowered first
        accented = text + "\u00e9"
        assert grammar.probes.maybe_delimited(accented) == grammar.probes.maybe_delimited(text)
