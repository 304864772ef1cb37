"""Hypothesis properties for every invariant of DESIGN.md's normalizer contract."""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable

import pytest
from hypothesis import example, given
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
# Found by this property (thirteenth session): after a tool call ended an empty block inside an
# answer wrapper, the stream let the blank before the wrapper's closer go, which rule 7 trims.
@example(text="</think><response><think><tool_call> </response>", policy=Policy(), start=False)
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


def _operations(run: Callable[[], object]) -> int:
    """The Python lines and calls `run` executes: a count, not a time, so a loaded machine cannot
    change it (the wall-clock doubling checks live in bench/linearity.py). A rescan per token,
    the quadratic these tests guard against, multiplies this count as it multiplies the time."""
    run()  # first use compiles the grammar's patterns and fills caches: not the input's cost
    run()
    count = 0

    def tracer(frame: object, event: str, arg: object) -> object:
        nonlocal count
        count += 1
        return tracer

    gc.collect()
    gc.disable()  # a collection may run finalizers' Python code inside the traced call
    sys.settrace(tracer)  # type: ignore[arg-type]
    try:
        run()
    finally:
        sys.settrace(None)
        gc.enable()
    return count


def _grows_linearly(make: Callable[[int], Callable[[], object]], small: int, factor: int) -> None:
    """`factor` times the input costs at most twice `factor` times the operations (a quadratic
    cost would be factor squared), plus a constant for the fixed work of one call."""
    few, many = _operations(make(small)), _operations(make(small * factor))
    assert many <= 2 * factor * few + 200, (small, few, many)


HOSTILE = ["<", "<think", "</think", "`", "<think ", "<|channel|>", "[THINK", "◁think"]


@pytest.mark.parametrize("unit", HOSTILE)
def test_normalize_hostile_input_is_linear(unit: str) -> None:
    """Doubling a hostile input at most about doubles the work: no rescan per character."""
    _grows_linearly(lambda n: functools.partial(normalize, unit * (n // len(unit))), 20_000, 2)


def test_operation_counts_do_not_depend_on_the_machine() -> None:
    """The count is the same on every run, which is what lets these tests pass on a loaded CI
    host where the timing ratios they replaced once failed (0.040 s against 0.769 s)."""
    text = "a<think> <think> </think>" * 200
    assert len({_operations(functools.partial(normalize, text)) for _ in range(3)}) == 1


# Floods of whole tokens: every one is a decision (a finding, a span, or a rollback of a
# speculative block), so these cost more per character than the floods above, but linear.
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


@pytest.mark.parametrize("unit", TOKEN_FLOODS)
def test_normalize_token_floods_are_linear(unit: str) -> None:
    """Unclosed mid-text openers once cost a rescan each (quadratic: 8 KB took seconds)."""
    _grows_linearly(lambda n: functools.partial(normalize, unit * (n // len(unit))), 2_000, 4)


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


def _chunked_stream(unit: str, size: int, every: int, **kwargs: object) -> Callable[[], object]:
    text = unit * (size // len(unit))
    chunks = [text[i : i + every] for i in range(0, len(text), every)]
    return functools.partial(stream, chunks, **kwargs)


@pytest.mark.parametrize("holdback", [None, 0])
@pytest.mark.parametrize("unit", STREAM_FLOODS)
def test_stream_floods_in_small_chunks_are_linear(unit: str, holdback: int | None) -> None:
    """A decision that waits (a code span for its line end, an orphan close for what
    follows, a fence for its closing line, a run of backticks or tildes for its end) once
    rescanned everything after it per chunk."""
    _grows_linearly(lambda n: _chunked_stream(unit, n, 5, holdback=holdback), 1_500, 4)


def test_stream_unclosed_openers_flood_is_linear() -> None:
    unit = "a<think>"
    text = unit * (4_000 // len(unit))
    assert stream([text[i : i + 7] for i in range(0, len(text), 7)]) == (text, "")
    _grows_linearly(lambda n: _chunked_stream(unit, n, 7), 2_000, 2)


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
