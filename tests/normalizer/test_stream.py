"""The stream's fast lane: clean chunks pass at once, and its Delta cache never changes an answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix import Policy, StreamNormalizer
from thinkfix.normalizer import deltas
from thinkfix.normalizer.deltas import DeltaCache
from thinkfix.normalizer.grammar import grammar_for
from thinkfix.normalizer.spans import Delta

from .conftest import batch_pair, stream
from .strategies import POLICIES, SETTINGS, TEXTS, partitions

# a reasoning block streamed in words, so the thinking lane and its cache carry most chunks
REASONING = st.lists(st.sampled_from(["plan", " step", "\n", " ", "x  ", "答"]), max_size=30).map(
    lambda words: "<think>" + "".join(words) + "</think>\n\nAnswer"
)
CLEAN = st.text(
    alphabet=st.characters(blacklist_characters="<[◁`~", blacklist_categories=("Cs",)), max_size=120
)


def _deltas(chunks: list[str], **kwargs: object) -> list[Delta]:
    s = StreamNormalizer(**kwargs)  # type: ignore[arg-type]
    return [*map(s.feed, chunks), s.finish()]


@SETTINGS
@given(data=st.data(), body=CLEAN)
def test_stream_holdback_zero_releases_each_clean_chunk_at_once(
    data: st.DataObject, body: str
) -> None:
    text = "Z" + body  # a visible first character: no leading whitespace or Harmony word to wait on
    chunks = data.draw(partitions(text))
    deltas = _deltas(chunks, holdback=0)
    assert [d.visible for d in deltas[:-1]] == chunks
    assert deltas[-1] == Delta() and not any(d.thinking for d in deltas)


@SETTINGS
@given(
    data=st.data(),
    text=TEXTS | REASONING,
    policy=POLICIES,
    holdback=st.sampled_from([0, 3, 40, None]),
)
def test_stream_warm_delta_cache_gives_the_same_deltas(
    data: st.DataObject, text: str, policy: Policy, holdback: int
) -> None:
    chunks = data.draw(partitions(text))
    cache = DeltaCache()
    cold = _deltas(chunks, policy=policy, holdback=holdback, delta_cache=cache)
    warm = _deltas(chunks, policy=policy, holdback=holdback, delta_cache=cache)
    assert warm == cold


def test_stream_delta_cache_stays_bounded() -> None:
    cache = DeltaCache(limit=16)
    s = StreamNormalizer(holdback=0, delta_cache=cache)
    words = [f"w{n} " for n in range(100)]
    assert [s.feed(w).visible for w in words] == words
    assert 0 < len(cache.clean) <= 16


def test_stream_delta_cache_skips_long_chunks() -> None:
    cache = DeltaCache()
    s = StreamNormalizer(holdback=0, delta_cache=cache)
    long_chunk = "x" * (deltas.CHUNK_MAX + 1)
    assert s.feed("Start ").visible == "Start "
    assert s.feed(long_chunk).visible == long_chunk
    assert s.feed(" end").visible == " end"
    assert " end" in cache.clean and all(len(k) <= deltas.CHUNK_MAX for k in cache.clean)


def test_stream_delta_cache_is_per_candidate_set() -> None:
    """A chunk clean under one policy is not taken as clean under a policy that looks for more."""
    plain_policy, coded_policy = Policy(protect_code=False), Policy()
    plain = deltas.shared(grammar_for(plain_policy).start_chars).clean
    coded = deltas.shared(grammar_for(coded_policy).start_chars).clean
    assert plain is not coded
    plain.clear()
    coded.clear()
    for policy in (plain_policy, coded_policy):
        s = StreamNormalizer(policy, holdback=0)
        s.feed("Start ")
        assert (s.feed("`x`").visible + s.finish().visible) == "`x`"
    assert "`x`" in plain and "`x`" not in coded


def _run(chunks: list[str], **kwargs: object) -> tuple[list[Delta], tuple, tuple[str, ...]]:
    s = StreamNormalizer(**kwargs)  # type: ignore[arg-type]
    deltas = [*map(s.feed, chunks), s.finish()]
    return deltas, s.findings, s.segments


@SETTINGS
@given(data=st.data(), text=TEXTS, policy=POLICIES, holdback=st.sampled_from([0, 2, None]))
def test_stream_shortcuts_change_nothing(
    data: st.DataObject,
    text: str,
    policy: Policy,
    holdback: int,
) -> None:
    """The first-chunk, waiting-lane and finish shortcuts reach the state reading the text
    would: same deltas, findings (with offsets) and segments as the stream without them."""
    chunks = data.draw(partitions(data.draw(st.sampled_from(["Z", "", " "])) + text))
    fast = _run(chunks, policy=policy, holdback=holdback)
    slow = _run(chunks, policy=policy, holdback=holdback, shortcuts=False)
    assert fast == slow


def test_stream_feed_after_finish_raises_on_the_fast_lane() -> None:
    s = StreamNormalizer(holdback=0)
    assert s.feed("Answer ").visible == "Answer "
    assert s.finish() == Delta()
    with pytest.raises(RuntimeError, match="after finish"):
        s.feed("more")
    assert s.finish() == Delta()


def test_stream_thinking_lane_fills_its_cache_and_still_equals_batch() -> None:
    cache = DeltaCache()
    text = "<think>" + " step" * 40 + "\n\n" + " more" * 10 + "</think>\n\nAnswer"
    chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
    expected = batch_pair(text)
    assert stream(chunks, holdback=0, delta_cache=cache) == expected
    assert cache.think, "thinking chunks were cached"
    assert stream(chunks, holdback=0, delta_cache=cache) == expected  # warm


# Found by a hypothesis audit: each once streamed differently from `normalize`.
AUDIT_CASES = [
    ("x<think [THINK]yy</think>", False),  # look-back lost when the fast lane took a short run
    ("</think><think><think>", True),  # an empty reasoning piece started a separator
    (" </think> <think>", False),  # a leading close waiting for what follows lost its lead
    (" </think> 0", False),
    ("<think\n```\nx>", True),  # a code run at a chunk's end hid the unfinished opener before it
    ("<think>final<|message|></think>```\n</think>", False),  # a fast-lane gap moved a line start
]


@pytest.mark.parametrize("trim", [True, False])
@pytest.mark.parametrize(("text", "start_in_reasoning"), AUDIT_CASES)
def test_stream_audit_cases_equal_batch(text: str, start_in_reasoning: bool, trim: bool) -> None:
    policy = Policy(trim=trim)
    expected = batch_pair(text, policy, start_in_reasoning=start_in_reasoning)
    splits = [[text[:n], text[n:]] for n in range(len(text) + 1)]
    for chunks in [list(text), ["", *text, ""], *splits]:
        got = stream(chunks, policy=policy, start_in_reasoning=start_in_reasoning)
        assert got == expected, chunks


def test_stream_shortcuts_nested_close_cuts_at_the_token_not_the_scan_position() -> None:
    """Found by a review: inside a nested block, the span cut before a close's checkpoint
    ended where the previous scan had stopped, so the waiting lane (which joins held chunks)
    emitted `k` one delta later than the stream without shortcuts."""
    policy = Policy(trim=False, protect_code=False)
    for body in ("<think>" + "×" * 5, "< think >< think >"):
        chunks = ["Z<think>" + body + "n", "k", "></think><think>"]
        for holdback in (0, 2, None):
            fast = _run(chunks, policy=policy, holdback=holdback)
            slow = _run(chunks, policy=policy, holdback=holdback, shortcuts=False)
            assert fast == slow, (chunks, holdback)
