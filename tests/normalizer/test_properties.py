"""Hypothesis properties for every invariant of DESIGN.md's normalizer contract."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix import Label, LeakKind, Policy, normalize
from thinkfix.normalizer.grammar import grammar_for

from .conftest import batch_pair, stream
from .strategies import MODELS, NATIVE, POLICIES, SETTINGS, TEXTS, partitions


@SETTINGS
@given(text=TEXTS, policy=POLICIES, native=NATIVE)
def test_normalize_spans_tile_the_text(text: str, policy: Policy, native: str | None) -> None:
    r = normalize(text, policy=policy, native_reasoning=native)
    assert "".join(text[s.start : s.end] for s in r.spans) == text
    assert all(a.end == b.start for a, b in zip(r.spans, r.spans[1:]))
    assert not r.spans or (r.spans[0].start == 0 and r.spans[-1].end == len(text))
    removed = sum(s.end - s.start for s in r.spans if s.label is not Label.VISIBLE)
    assert removed == len(text) - len(r.visible)


@SETTINGS
@given(data=st.data(), text=TEXTS, policy=POLICIES, native=NATIVE)
def test_stream_any_partition_equals_batch(
    data: st.DataObject, text: str, policy: Policy, native: str | None
) -> None:
    chunks = data.draw(partitions(text))
    assert stream(chunks, policy=policy, native_reasoning=native) == batch_pair(
        text, policy, native
    )


@SETTINGS
@given(text=TEXTS, policy=POLICIES, start=st.booleans())
def test_stream_one_char_chunks_equal_batch(text: str, policy: Policy, start: bool) -> None:
    assert stream(list(text), policy=policy, start_in_reasoning=start) == batch_pair(
        text, policy, start_in_reasoning=start
    )


@SETTINGS
@given(text=TEXTS, policy=POLICIES)
def test_normalize_is_idempotent(text: str, policy: Policy) -> None:
    once = normalize(text, policy=policy)
    twice = normalize(once.visible, policy=policy)
    assert twice.visible == once.visible
    assert not twice.extracted
    assert all(not f.kind.changes_text for f in twice.findings)


STRUCTURAL = st.lists(
    st.tuples(
        st.sampled_from(["think", "thinking", "thought", "reasoning", "reflection"]),
        st.sampled_from(["plan", "a\nb", "x < y", ""]),
        st.sampled_from(["Answer", "ok\n", "", "done."]),
    ),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(blocks=STRUCTURAL, lead=st.sampled_from(["", "\n", "Intro", "Intro\n"]))
def test_normalize_leaves_no_delimiter_visible(
    blocks: list[tuple[str, str, str]], lead: str
) -> None:
    text = lead + "".join(f"<{t}>{body}</{t}>{answer}" for t, body, answer in blocks)
    visible = normalize(text).visible
    assert grammar_for(Policy()).prefilter.search(visible) is None


UNKNOWN = st.lists(
    st.sampled_from(
        [
            "<div>",
            "</div>",
            "<thinker>",
            "<thinks>",
            "<thinkpad>",
            "a < b > c",
            "<br/>",
            "<",
            ">",
            "x",
            " ",
            "\n",
            "<reasons>",
            "<Thoughtful>",
            "[THINKING]",
            "◁",
            "▷",
            "<|im_start|>",
            "答",
        ]
    ),
    max_size=30,
).map("".join)


@SETTINGS
@given(text=UNKNOWN)
def test_normalize_preserves_unknown_tags(text: str) -> None:
    r = normalize(text)
    assert r.visible == text
    assert not r.findings


@SETTINGS
@given(text=st.text(alphabet=st.characters(blacklist_characters="<[◁`~"), max_size=200))
def test_normalize_clean_text_is_unchanged(text: str) -> None:
    # `analysis...` too: detokenised Harmony is read only from a gpt-oss model
    r = normalize(text)
    assert r.visible == text and not r.findings and not r.changed


def _best_seconds(run: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of `repeat` runs: a loaded machine slows some runs, never speeds one up,
    so the minimum is what the code costs and the ratio tests below stay quiet under load."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def _seconds(text: str) -> float:
    return _best_seconds(lambda: normalize(text), repeat=2)


HOSTILE = ["<", "<think", "</think", "`", "<think ", "<|channel|>", "[THINK", "◁think"]


def test_normalize_hostile_input_is_linear() -> None:
    """Doubling a hostile input at most about doubles the time: no quadratic backtracking."""
    for unit in HOSTILE:
        small = unit * (1_000_000 // len(unit))
        t_small, t_large = _seconds(small), _seconds(small * 2)
        assert t_large < 3 * t_small + 0.05, (unit, t_small, t_large)


# Floods of whole tokens: every one is a decision (a finding, a span, or a rollback of a
# speculative block), so these are slower per character than the floods above, but linear.
TOKEN_FLOODS = [
    "a<think>",
    "a<think> <think> </think>",
    "<think>",
    "a</think>",
    "<think>x</think>a",
    "a<think><think>x</think>",
    "a[THINK]",
    "a\n<think>x",
    "a<think>`x`",
]


def test_normalize_token_floods_are_linear() -> None:
    """Unclosed mid-text openers once cost a rescan each (quadratic: 8 KB took seconds)."""
    for unit in TOKEN_FLOODS:
        small = unit * (12_000 // len(unit))
        t_small, t_large = _seconds(small), _seconds(small * 4)
        assert t_large < 8 * t_small + 0.1, (unit, t_small, t_large)  # quadratic would be 16x


@pytest.mark.parametrize("n", [3, 5000])
def test_normalize_unclosed_openers_stay_text_at_any_length(n: int) -> None:
    """Prose closes never close a mid-text block: every opener stays, as a notice, whether the
    openers are decided one rescan each (few) or after the rescan budget ran out (many)."""
    text = "a<think> <think> </think>" * n
    r = normalize(text)
    assert r.visible == text
    assert [f.kind for f in r.findings] == [LeakKind.UNCLOSED_INLINE] * n
    assert [text[f.start : f.end] for f in r.findings] == ["<think>"] * n


STREAM_FLOODS = [
    "`a",
    "a<think>`",
    "<th",
    "</",
    "<",
    "x</think>   ",
    "```\n" + "x" * 50,
    "a</think>",
    "~",
    "`",
]


@pytest.mark.parametrize("holdback", [None, 0])
def test_stream_floods_in_small_chunks_are_linear(holdback: int | None) -> None:
    """A decision that waits (a code span for its line end, an orphan close for what
    follows, a fence for its closing line, a run of backticks or tildes for its end) once
    rescanned everything after it per chunk."""
    for unit in STREAM_FLOODS:
        times = []
        for n in (6_000, 24_000):
            text = unit * (n // len(unit))
            chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
            times.append(_best_seconds(functools.partial(stream, chunks, holdback=holdback)))
        assert times[1] < 8 * times[0] + 0.1, (unit, times)  # quadratic would be 16x


def test_stream_unclosed_openers_flood_is_linear() -> None:
    unit = "a<think>"
    times = []
    for n in (20_000, 40_000):
        text = unit * (n // len(unit))
        chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
        assert stream(chunks) == (text, "")
        times.append(_best_seconds(functools.partial(stream, chunks)))
    assert times[1] < 3 * times[0] + 0.05, times


def test_normalize_hostile_10mb_line_is_fast() -> None:
    # About 0.2-0.8 s on this project's 2-core machine (bench/normalizer.py prints it);
    # the bound leaves room for a loaded CI host.
    for unit in ("<", "<think"):
        assert _seconds(unit * (10_000_000 // len(unit))) < 3.0, unit


def test_hypothesis_ci_profile_is_deterministic() -> None:
    """CI runs the properties on the same examples each time (tests/conftest.py)."""
    from hypothesis import settings

    profile = settings.get_profile("ci")
    assert profile.derandomize and profile.database is None


@SETTINGS
@given(
    data=st.data(),
    text=TEXTS,
    policy=POLICIES,
    start=st.booleans(),
    evidence=st.booleans(),
    native=NATIVE,
    model=MODELS,
)
def test_stream_any_partition_equals_batch_with_start_and_evidence(
    data: st.DataObject,
    text: str,
    policy: Policy,
    start: bool,
    evidence: bool,
    native: str | None,
    model: str | None,
) -> None:
    """`start_in_reasoning` (tool calls end the implicit block), `followed_by_tool_call`
    (rule 4's evidence from the message), the native reasoning (a second close is stray)
    and the model (detokenised Harmony) stream as they normalize, at every chunking."""
    chunks = data.draw(partitions(text))
    context = {"start_in_reasoning": start, "followed_by_tool_call": evidence, "model": model}
    r = normalize(text, policy=policy, native_reasoning=native, **context)  # type: ignore[arg-type]
    assert stream(chunks, policy=policy, native_reasoning=native, **context) == (
        r.visible,
        "\n\n".join(r.extracted),
    )


@SETTINGS
@given(text=TEXTS, policy=POLICIES, native=NATIVE, model=MODELS)
def test_normalize_is_idempotent_with_native_and_model(
    text: str, policy: Policy, native: str | None, model: str | None
) -> None:
    once = normalize(text, policy=policy, native_reasoning=native, model=model)
    twice = normalize(once.visible, policy=policy, native_reasoning=native, model=model)
    assert twice.visible == once.visible
    assert all(not f.kind.changes_text for f in twice.findings)


@SETTINGS
@given(text=TEXTS, policy=POLICIES, native=NATIVE, size=st.integers(min_value=1, max_value=40))
def test_normalize_in_chunks_shows_what_normalize_shows(
    text: str, policy: Policy, native: str | None, size: int
) -> None:
    """`thinkfix normalize --stream-chunk N`'s library side: any chunk size, the same
    visible text as the whole-string normalize, and the cleaned native reasoning first."""
    from thinkfix.normalizer.stream import normalize_in_chunks

    visible, thinking, _ = normalize_in_chunks(text, size, policy=policy, native_reasoning=native)
    whole = normalize(text, policy=policy, native_reasoning=native)
    assert visible == whole.visible
    if whole.native:
        assert thinking[0] == whole.native
